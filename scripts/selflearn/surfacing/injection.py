"""Advice injected by a hook: on session start the workspace advice, on a prompt the advice
for its text minus what this session was already shown (``shown``). Only what was actually
printed is logged there, and nothing else is written while a hook runs. Must not import cli.
"""

from typing import Optional, Set

from . import shown

EVENTS = ("session_start", "prompt", "advice")


def called(store_dir: str, agent: str) -> Set[str]:
    """The lessons the trigger table brings to ``agent`` at the call or the failure they
    concern: said there, at the moment they matter, and not at every session start or
    prompt, where they are noise in each session that never makes that call. A lesson an
    agent has no channel for at its moment (Gemini CLI before a call; Cursor, Copilot), and
    one a person accepted (a fact of the repository, ``accepted`` in the table), stay with
    the advice."""
    from .jit import SHAPES, table
    out = set()
    for line in table(store_dir).split(b"\n"):
        at = line.find(b'"id": "')
        moment = "pre_tool" if b'"at": "call"' in line else "tool_failure"
        if at >= 0 and (agent, moment) in SHAPES and b'"accepted": true' not in line:
            out.add(line[at + 7:line.find(b'"', at + 7)].decode("utf-8", "replace"))
    return out


def inject(obs: dict, repo_root: str, store_dir: str) -> str:
    """What the hook prints for one observation ("" when nothing), logged when printed."""
    from . import advice
    from ..storage.memory import Memory
    event, agent = obs.get("event", ""), obs.get("agent", "")
    shape = advice.HOOK_SHAPES.get((agent, event))
    if shape is None:
        return ""
    conf = advice.settings(repo_root)
    query: Optional[str] = obs.get("prompt") if event == "prompt" else None
    if not conf["inject"] or (event == "prompt" and not query):
        return ""
    memory = Memory(store_dir, tolerant=True)  # a damaged or newer line never silences advice
    session = str(obs.get("session_id") or "")
    seen = shown.in_session(memory.path("surfacings"), session) if event == "prompt" else set()
    seen = set(seen) | called(store_dir, agent)  # (said at its call: surfacing.jit)
    data = advice.advise(memory, repo_root, query, conf["budget"], seen, shape)
    if data["output"]:
        shown.append(memory.path("surfacings"), session, agent, event,
                     [i["id"] for i in data["items"]], data["chars"])
    return data["output"]
