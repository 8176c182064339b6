"""Normalize one coding-agent hook payload into one flat observation.

Owns ``normalize`` (one payload -> one observation dict, or None) and the names of events and
agents. The work is done by the rooms next to it: ``dialects`` (which agent, its event
names and payload shapes), ``toolcall`` (a tool call's kind, args and result), ``fields``
(``Obs``: redaction, cuts, hashes, the error head) and ``commands`` (shell command lines).
Pure: no I/O, no clock; the ``hook`` command owns stdin, the kill switch and the locked
append. Import invariant: on the hook path, so this module and those four import only each
other at module level (``redact`` when a payload is normalized); ``json``, ``re``,
``hashlib``, ``argparse``, ``typing`` and ``datetime`` are never imported.
"""

from .commands import RUNNERS, command_family, refine_family, segments  # noqa: F401 (API)
from .dialects import DIALECTS, OUTCOMES, SKIPPED, detect_agent, put_shared
from .fields import Obs, as_dict, as_str  # noqa: F401 (API)
from .toolcall import tool_kind  # noqa: F401 (API)

EVENTS = ("session_start", "session_end", "prompt", "pre_tool", "tool_success",
          "tool_failure", "permission_request", "permission_denied", "notification",
          "stop", "subagent_start", "subagent_stop", "compact", "stop_failure", "other")
AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")


def normalize(payload: dict, agent: str, event: str = ""):
    """One observation from one hook payload, or None when it carries nothing worth storing.

    ``agent`` is one of ``AGENTS`` or ``auto``; ``event`` optionally names the
    hook event when the payload does not (Copilot's camelCase payloads).
    """
    from ..storage import redact
    p = as_dict(payload)
    if agent not in DIALECTS:
        agent = detect_agent(p)
    name = as_str(p.get("hook_event_name")) or event
    if name in SKIPPED or not (name or agent == "copilot"):
        return None
    obs = Obs(agent, redact.redact_text)
    obs.put("session_id", as_str(p.get("session_id")))
    kind = obs["event"] = DIALECTS[agent](p, obs, name)
    get = lambda camel, snake: p.get(camel, p.get(snake))  # noqa: E731
    put_shared(obs, p, kind, name, get)
    obs.put("cwd", as_str(p.get("cwd")), 300)
    obs.put("permission_mode", as_str(p.get("permission_mode")))
    obs.put("model", as_str(p.get("model")), 120)
    if kind in OUTCOMES:
        obs.setdefault("outcome", OUTCOMES[kind])
    return dict(obs)
