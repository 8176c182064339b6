"""Miner ``denials``: what the user or a guard keeps refusing, and what it keeps allowing.

Per command family (shell) or tool (anything else), it counts refusals:
``permission_denied`` events, tool failures showing that the user rejected the
call, and tool failures showing that a hook or policy blocked it (the failures
miner ignores the user's rejections on purpose). It also counts approvals: a
``permission_request`` followed, in the same session, by that call's success
(same ``tool_use_id`` when both carry one, else the next call of the same tool
and family). Denials outweigh approvals (``DENIAL_WEIGHT``); a family approved
``MIN_APPROVALS`` times and never denied gets a low-key ``approved`` lesson.
Constants are documented in references/LEARNING.md. Must not import cli.
"""

from typing import Dict, List, Optional

from . import fingerprint
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut
from .mine_clusters import BLOCKED, REJECTED, Clusters, finding, refusal, seen_lines, session_of

KIND = "denials"

DENIAL_WEIGHT = 3           # one denial outweighs this many approvals: a family denied in
                            # MIN_SESSIONS sessions is a "don't" lesson unless approvals exceed
                            # DENIAL_WEIGHT x denials (then it is mixed: no lesson either way)
MIN_APPROVALS = 3           # approvals (in MIN_SESSIONS sessions, no denial) for an approved lesson
APPROVED_CONFIDENCE = 0.5   # an approved lesson's confidence never exceeds this: it is low-key
MAX_REASONS_KEPT = 5        # distinct reasons remembered per family, the first ones seen
MAX_ASKED = 20              # permission requests waiting for their call, per session
MAX_PENDING_SESSIONS = 500  # sessions with requests waiting; the least recent are dropped
MAX_CLUSTERS = 5000         # families remembered; the least recent not yet lessons dropped
CUT_FAMILY, CUT_REASON, CUT_ARGS = 60, 120, 120  # characters shown of each
_RAW_MARKERS = tuple(m.encode("utf-8") for m in REJECTED + BLOCKED)
_HOW = {"denied": "denied at the permission prompt", "rejected": "rejected by the user",
        "blocked": "blocked by a hook or policy"}


def family_of(obs: dict) -> str:
    """What was refused or allowed: the shell family (``git push``), else the tool."""
    return cut(fingerprint.command_word(obs), CUT_FAMILY)


def _digest(verdict: str, family: str) -> str:
    return fingerprint.digest(f"{verdict}|{family}")


def _reason(obs: dict, how: str) -> str:
    if how == "denied":
        return str(obs.get("reason") or "denied")
    return fingerprint.key_line(str(obs.get("error") or "")) or _HOW[how]


def miner(agg: dict, setup: Setup) -> Run:
    """Refusals and approvals per family; ``agg["asked"]``: requests awaiting their call."""
    clusters = Clusters(agg, MAX_CLUSTERS, MIN_SESSIONS)
    asked: Dict[str, list] = agg.setdefault("asked", {})
    waiting = {sid.encode("utf-8") for sid in asked}

    def wants(raw: bytes) -> bool:
        if b"permission_" in raw:
            return True
        failure = b"tool_failure" in raw
        if failure and any(m in raw.lower() for m in _RAW_MARKERS):
            return True
        if not waiting or not (failure or b"tool_success" in raw):
            return False
        sid = session_of(raw)
        return sid is None or sid in waiting

    def feed(obs: dict) -> None:
        event, sid = obs.get("event"), str(obs.get("session_id") or "")
        if event == "permission_request":
            _ask(sid, obs)
            return
        how = refusal(obs)
        request = _answer(sid, obs) if sid in asked and (how or event in (
            "tool_success", "tool_failure")) else None
        if how:
            _deny(how, obs)
        elif event == "tool_success" and request is not None:
            clusters.hit(_digest("approved", family_of(obs)), obs,
                         lambda: {"family": family_of(obs), "tool": obs.get("tool") or "?"})

    def _ask(sid: str, obs: dict) -> None:
        entries = asked.pop(sid, [])
        entries.append([str(obs.get("tool_use_id") or ""), obs.get("tool") or "", family_of(obs)])
        asked[sid] = entries[-MAX_ASKED:]  # re-inserted last: least recent session first
        waiting.add(sid.encode("utf-8"))
        while len(asked) > MAX_PENDING_SESSIONS:
            oldest = next(iter(asked))
            del asked[oldest]
            waiting.discard(oldest.encode("utf-8"))

    def _answer(sid: str, obs: dict) -> Optional[list]:
        """Take the request this call answers out of the waiting ones."""
        entries, use_id = asked[sid], str(obs.get("tool_use_id") or "")
        tool, family = obs.get("tool") or "", family_of(obs)
        for i, (req_id, req_tool, req_family) in enumerate(entries):
            if (use_id and req_id and use_id == req_id) or \
                    ((not use_id or not req_id) and (req_tool, req_family) == (tool, family)):
                del entries[i]
                if not entries:
                    del asked[sid]
                    waiting.discard(sid.encode("utf-8"))
                return [req_id, req_tool, req_family]
        return None

    def _deny(how: str, obs: dict) -> None:
        family = family_of(obs)
        c = clusters.hit(_digest("denied", family), obs, lambda: {
            "family": family, "tool": obs.get("tool") or "?", "how": {}, "reasons": {},
            "example": cut(obs.get("args"), CUT_ARGS)})
        c["how"][how] = c["how"].get(how, 0) + 1
        raw = _reason(obs, how)
        norm = fingerprint.normalize(raw)[:CUT_REASON]
        if norm in c["reasons"]:
            c["reasons"][norm][0] += 1
        elif len(c["reasons"]) < MAX_REASONS_KEPT:
            c["reasons"][norm] = [1, cut(raw, CUT_REASON)]

    def lessons() -> List[dict]:
        families = sorted({clusters.items[d]["family"] for d in clusters.changed
                           if d in clusters.items})
        out = []
        for family in families:
            denied = clusters.items.get(_digest("denied", family))
            approved = clusters.items.get(_digest("approved", family))
            lesson = _verdict(family, denied, approved)
            if lesson is not None:
                out.append(lesson)
        return out

    return Run(wants, feed, lessons)


def _verdict(family: str, denied: Optional[dict], approved: Optional[dict]) -> Optional[dict]:
    """The lesson the counts of one family support: denied, approved, or none (mixed, too few)."""
    denials = denied["count"] if denied else 0
    approvals = approved["count"] if approved else 0
    if denied and len(denied["sessions"]) >= MIN_SESSIONS and approvals <= DENIAL_WEIGHT * denials:
        return _denied(family, denied, approvals)
    if approved and not denials and approvals >= MIN_APPROVALS \
            and len(approved["sessions"]) >= MIN_SESSIONS:
        return _approved(family, approved)
    return None


def _denied(family: str, c: dict, approvals: int) -> dict:
    n = len(c["sessions"])
    reasons = sorted(c["reasons"].values(), key=lambda r: -r[0])
    how = ", ".join(f"{_HOW[h]} {k}x" for h, k in sorted(c["how"].items()))
    card = {
        "title": f"Don't propose `{family}` here: denied {c['count']} time(s)",
        "when_to_use": f"about to run `{family}` ({c['tool']})",
        "problem": f"`{family}` was refused {c['count']} time(s) in {n} sessions ({how}); "
                   f"reason: {reasons[0][1]}",
        "solution_steps": [f"don't propose `{family}`; ask the user first or reach the goal "
                           "another way"],
        "evidence": [f"example: `{c['example']}`"]
                    + [f"reason ({k}x): {text}" for k, text in reasons]
                    + seen_lines(c, "denied"),
        "gotchas": [f"it was also approved {approvals} time(s): one denial outweighs "
                    f"{DENIAL_WEIGHT} approvals"] if approvals else [],
        "tags": ["mined", "denial"] + sorted(c["how"]), "trigger": family,
    }
    return finding(KIND, _digest("denied", family), f"denied|{family}", c, card)


def _approved(family: str, c: dict) -> dict:
    n = len(c["sessions"])
    card = {
        "title": f"`{family}` is approved here ({c['count']} approvals, no denial)",
        "when_to_use": f"about to run `{family}` ({c['tool']}) and unsure whether to ask",
        "problem": f"`{family}` needed permission {c['count']} time(s) in {n} sessions and the "
                   "user approved it every time",
        "solution_steps": [f"`{family}` is safe to propose when the task needs it"],
        "evidence": seen_lines(c, "approved"),
        "confidence": min(APPROVED_CONFIDENCE, confidence(n)),
        "tags": ["mined", "approved"], "trigger": family,
    }
    return finding(KIND, _digest("approved", family), f"approved|{family}", c, card)


def recurs(obs: dict) -> Optional[str]:
    """The digest of the denied lesson a refusal adds to (None for anything else)."""
    return _digest("denied", family_of(obs)) if refusal(obs) else None
