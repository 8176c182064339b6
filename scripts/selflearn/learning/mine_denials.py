"""Miner ``denials``: what the user or a guard keeps refusing, and what it keeps allowing.

Per subject, what was refused: the command family (shell) or tool with the
options it ran with (``git push --force`` is not ``git push``), it counts refusals:
``permission_denied`` events, tool failures showing that the user rejected the
call, and tool failures showing that a hook or policy blocked it (the failures
miner ignores both on purpose). Not every refusal bans the call: one whose user said
something that does not name what was refused corrected what the call would do, and one
whose same call then passes in the same session (a hook's one-time reminder, a "not yet")
stops counting. It also counts approvals: a
``permission_request`` followed, in the same session, by that call's success
(same ``tool_use_id`` when both carry one, else the next call of the same tool
and family). A lesson names the target too (the operands every refusal shared),
and only approvals of that target weigh against it (``DENIAL_WEIGHT``); a subject
approved ``MIN_APPROVALS`` times and never denied gets a low-key ``approved``
lesson. Constants are documented in references/LEARNING.md. Must not import cli.
"""

import re
from typing import Dict, List, Optional, Tuple

from . import fingerprint
from .mine_base import BLOCKED, MIN_SESSIONS, REJECTED, Run, Setup, confidence, cut, user_words
from .mine_clusters import Clusters, finding, refusal, seen_lines, session_of
from ..observation import commands

KIND = "denials"
AGG_VERSION = 4             # 2: subjects are a family with its options, targets kept;
                            # 3: refusals standing per session (a pass of the same call lifts one)
                            # 4: the tool kind kept (an edit refused on different files)

REVIEWED = ("edit", "write")  # tool kinds whose refusals judge the change, not the tool
DENIAL_WEIGHT = 3           # one denial outweighs this many approvals: a family denied in
                            # MIN_SESSIONS sessions is a "don't" lesson unless approvals exceed
                            # DENIAL_WEIGHT x denials (then it is mixed: no lesson either way)
MIN_APPROVALS = 3           # approvals (in MIN_SESSIONS sessions, no denial) for an approved lesson
APPROVED_CONFIDENCE = 0.5   # an approved lesson's confidence never exceeds this: it is low-key
MAX_REASONS_KEPT = 5        # distinct reasons remembered per family, the first ones seen
MAX_ASKED = 20              # permission requests waiting for their call, and refusals that a
                            # pass of the same call may lift, per session
MAX_PENDING_SESSIONS = 500  # sessions with requests or refusals waiting; the least recent dropped
MAX_CLUSTERS = 5000         # subjects remembered; the least recent not yet lessons dropped
MAX_TARGET_WORDS = 6        # operands kept of a command (its target)
MAX_FORMS = 10              # distinct targets of approvals kept per subject; approvals of
                            # any other target weigh against every denial of the subject
CUT_FAMILY, CUT_REASON, CUT_ARGS, CUT_WORD = 60, 120, 120, 60  # characters shown of each
OTHER = "\n"                # the approvals of targets past MAX_FORMS
_WORD = re.compile(r"""(?:[^\s'"]+|'[^']*'?|"[^"]*"?)+""")  # a shell word, quotes and all
_RAW_MARKERS = tuple(m.encode("utf-8") for m in REJECTED + BLOCKED)
_HOW = {"denied": "denied at the permission prompt", "rejected": "rejected by the user",
        "blocked": "blocked by a hook or policy"}


def family_of(obs: dict) -> str:
    """What was refused or allowed: the shell family (``git push``), else the tool."""
    return cut(fingerprint.command_word(obs), CUT_FAMILY)


def subject(obs: dict) -> Tuple[str, List[str], List[str]]:
    """``(family, options, operands)`` of a call: what was refused or allowed. The options
    are sorted (an option's quoted value dropped); the operands are the other words, but
    neither quoted text (a commit message) nor redirections; a tool's operand is its args."""
    family = family_of(obs)
    args = str(obs.get("args") or "")
    if obs.get("tool_kind") != "shell":
        return family, [], [cut(args, CUT_ARGS)] if args else []
    parts = commands.segments(args)
    segment = next((p for p in parts if commands.command_family(p) == family), args)
    words, redirected = [], False
    for w in _after(segment, family.split()):
        if not redirected and not re.search(r"[<>]", w):
            words.append(w)
        redirected = bool(re.fullmatch(r"\d*[<>]{1,2}", w))  # `> file`: the file goes too
    options = sorted({w.split("=", 1)[0] if re.search("['\"]", w) else w
                      for w in words if w.startswith("-") and w.strip("-")})
    operands = [cut(w, CUT_WORD) for w in words if not w.startswith("-")
                and not re.search("['\"]", w)]
    return family, [cut(o, CUT_WORD) for o in options], operands[:MAX_TARGET_WORDS]


def _after(segment: str, family: List[str]) -> List[str]:
    """The words of ``segment`` after its program, the family's other words left out; inside
    a quoted command (``bash -lc '…'``) when the program is only there."""
    words = _WORD.findall(segment)
    at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == family[0]), None)
    if at is None:
        inner = next((w.strip("'\"") for w in words if w[:1] in "'\"" and family[0] in w), "")
        return _after(inner, family) if inner.strip() else []
    rest = words[at + 1:]
    for word in family[1:]:
        if word in rest:
            rest.remove(word)
    return rest


def _key(verdict: str, family: str, options: List[str]) -> Tuple[str, str]:
    """``(fingerprint text, digest)`` of a subject. The family is case-blind (a subject
    without options keeps the key its family had when families were the subjects); an
    option is not (``-D`` is not ``-d``)."""
    text = f"{verdict}|{' '.join([family] + options)}"
    folded = f"{verdict}|{family}".lower() + "".join(f" {o}" for o in options)
    return text, fingerprint.digest(folded, fold_case=False)


def _reason(obs: dict, how: str) -> str:
    if how == "denied":
        return str(obs.get("reason") or "denied")
    return fingerprint.key_line(str(obs.get("error") or "")) or _HOW[how]


def miner(agg: dict, setup: Setup) -> Run:
    """Refusals and approvals per subject; ``agg["asked"]``: requests awaiting their call,
    ``agg["held"]``: per session, the refusals a pass of the same call would lift."""
    agg["version"] = AGG_VERSION
    clusters = Clusters(agg, MAX_CLUSTERS, MIN_SESSIONS)
    asked: Dict[str, list] = agg.setdefault("asked", {})
    held: Dict[str, list] = agg.setdefault("held", {})

    def wants(raw: bytes) -> bool:
        if b"permission_" in raw:
            return True
        failure = b"tool_failure" in raw
        if failure and any(m in raw.lower() for m in _RAW_MARKERS):
            return True
        if not (asked or held) or not (failure or b"tool_success" in raw):
            return False
        raw_sid = session_of(raw)
        sid = raw_sid.decode("utf-8", "replace") if raw_sid is not None else None
        return sid is None or sid in asked or sid in held

    def feed(obs: dict) -> None:
        event, sid = obs.get("event"), str(obs.get("session_id") or "")
        if event == "permission_request":
            _keep(asked, sid, [str(obs.get("tool_use_id") or ""), obs.get("tool") or "",
                               family_of(obs)])
            return
        how = refusal(obs)
        request = _answer(sid, obs) if sid in asked and (how or event in (
            "tool_success", "tool_failure")) else None
        if how:
            _deny(how, sid, obs)
        elif event == "tool_success":
            if request is not None:
                _approve(obs)
            if sid in held:
                _lift(sid, obs)

    def _answer(sid: str, obs: dict) -> Optional[list]:
        """Take the request this call answers out of the waiting ones."""
        use_id, tool, family = str(obs.get("tool_use_id") or ""), obs.get("tool") or "", \
            family_of(obs)
        return _take(asked, sid, lambda req_id, req_tool, req_family: (
            use_id and req_id and use_id == req_id) or ((not use_id or not req_id) and (
                req_tool, req_family) == (tool, family)))

    def _hit(verdict: str, obs: dict, fields: dict) -> Tuple[dict, List[str], str]:
        family, options, operands = subject(obs)
        digest = _key(verdict, family, options)[1]
        return clusters.hit(digest, obs, lambda: dict(
            fields, family=family, options=options, tool=obs.get("tool") or "?",
            kind=obs.get("tool_kind") or "other")), \
            operands, digest

    def _approve(obs: dict) -> None:
        c, operands, _ = _hit("approved", obs, {"forms": {}})
        form = "\n".join(operands)
        form = form if form in c["forms"] or len(c["forms"]) < MAX_FORMS else OTHER
        c["forms"][form] = c["forms"].get(form, 0) + 1

    def _deny(how: str, sid: str, obs: dict) -> None:
        words = user_words(obs)
        if words and not said_of(words, family_of(obs)):
            return  # the user asked for something else: a correction of the call, no ban
        c, operands, digest = _hit("denied", obs, {
            "how": {}, "reasons": {}, "target": None, "standing": {},
            "example": cut(obs.get("args"), CUT_ARGS)})
        c["target"] = [w for w in (operands if c["target"] is None else c["target"])
                       if w in operands]
        c["how"][how] = c["how"].get(how, 0) + 1
        c["standing"][sid] = c["standing"].get(sid, 0) + 1
        _keep(held, sid, [digest, operands])
        raw = _reason(obs, how)
        norm = fingerprint.normalize(raw)[:CUT_REASON]
        if norm in c["reasons"]:
            c["reasons"][norm][0] += 1
        elif len(c["reasons"]) < MAX_REASONS_KEPT:
            c["reasons"][norm] = [1, cut(raw, CUT_REASON)]

    def _lift(sid: str, obs: dict) -> None:
        """The same call (subject and target) passing later in the session lifts its refusal:
        a hook that reminds once, a "not yet" of the user; neither bans the call."""
        family, options, operands = subject(obs)
        digest = _key("denied", family, options)[1]
        if _take(held, sid, lambda d, target: d == digest and set(target) <= set(operands)):
            standing = clusters.items.get(digest, {}).get("standing", {})
            if standing.get(sid):
                standing[sid] -= 1
                if not standing[sid]:
                    del standing[sid]
                clusters.changed.add(digest)

    def lessons() -> List[dict]:
        subjects = sorted({(c["family"], tuple(c["options"])) for d, c in clusters.items.items()
                           if d in clusters.changed})
        out = []
        for family, options in subjects:
            denied = clusters.items.get(_key("denied", family, list(options))[1])
            approved = clusters.items.get(_key("approved", family, list(options))[1])
            lesson = _verdict(denied, approved)
            if lesson is not None:
                out.append(lesson)
        return out

    return Run(wants, feed, lessons)


def _keep(table: Dict[str, list], sid: str, entry: list) -> None:
    """Add ``entry`` to a session's waiting ones (the last ``MAX_ASKED``), that session
    re-inserted last: the least recent are dropped past ``MAX_PENDING_SESSIONS``."""
    entries = table.pop(sid, [])
    entries.append(entry)
    table[sid] = entries[-MAX_ASKED:]
    while len(table) > MAX_PENDING_SESSIONS:
        del table[next(iter(table))]


def _take(table: Dict[str, list], sid: str, fits) -> Optional[list]:
    """Take the first of a session's waiting entries that ``fits(*entry)`` out of them."""
    entries = table.get(sid, [])
    for i, entry in enumerate(entries):
        if fits(*entry):
            del entries[i]
            if not entries:
                del table[sid]
            return entry
    return None


def said_of(words: str, family: str) -> bool:
    """Whether the user's words name what was refused: its program, subcommand or tool."""
    said = set(re.findall(r"[\w./-]+", words.lower()))
    return any(w.lower() in said for w in family.split())


def stale(agg: dict, setup: Setup) -> Optional[str]:
    """Aggregates counted per family (before subjects had options) are mined again."""
    if agg.get("version") != AGG_VERSION:
        return f"denials: aggregates of an older format (v{agg.get('version', 1)})"
    return None


def _against(denied: dict, approved: Optional[dict]) -> int:
    """Approvals of the denied subject's target (of any target past MAX_FORMS)."""
    forms = approved["forms"] if approved else {}
    want = set(denied["target"])
    return sum(n for form, n in forms.items() if form == OTHER or want <= set(form.split("\n")))


def _common(forms: Dict[str, int]) -> List[str]:
    """The operands every approval shared (none once targets went past MAX_FORMS)."""
    targets = [form.split("\n") if form else [] for form in forms]
    if OTHER in forms or not targets:
        return []
    return [w for w in targets[0] if all(w in t for t in targets[1:])]


def _verdict(denied: Optional[dict], approved: Optional[dict]) -> Optional[dict]:
    """The lesson the counts of one subject support: denied (by the refusals still
    standing), approved, or none (mixed, too few)."""
    approvals = _against(denied, approved) if denied else 0
    standing = denied["standing"] if denied else {}
    if denied and denied.get("kind") in REVIEWED and not denied["target"]:
        standing = {}  # edits refused on different files: each change was judged, not the tool
    if len(standing) >= MIN_SESSIONS and approvals <= DENIAL_WEIGHT * sum(standing.values()):
        return _denied(denied, approvals)
    if approved and not denied and approved["count"] >= MIN_APPROVALS \
            and len(approved["sessions"]) >= MIN_SESSIONS:
        return _approved(approved)
    return None


def _shown(c: dict, target: List[str]) -> str:
    """The subject as a lesson names it: family, options, target."""
    return " ".join([c["family"]] + c["options"] + target)


def _denied(c: dict, approvals: int) -> dict:
    n, count, what = len(c["standing"]), sum(c["standing"].values()), _shown(c, c["target"])
    reasons = sorted(c["reasons"].values(), key=lambda r: -r[0])
    how = ", ".join(f"{_HOW[h]} {k}x" for h, k in sorted(c["how"].items()))
    lifted = f"; {c['count'] - count} more passed when made again" if c["count"] > count else ""
    card = {
        "title": f"Don't propose `{what}` here: denied {count} time(s)",
        "when_to_use": f"about to run `{what}` ({c['tool']})",
        "problem": f"`{what}` was refused {count} time(s) in {n} sessions ({how}{lifted}); "
                   f"reason: {reasons[0][1]}",
        "solution_steps": [f"don't propose `{what}`; ask the user first or reach the goal "
                           "another way"],
        "evidence": [f"example: `{c['example']}`"]
                    + [f"reason ({k}x): {text}" for k, text in reasons]
                    + seen_lines(c, "denied"),
        "gotchas": [f"it was also approved {approvals} time(s): one denial outweighs "
                    f"{DENIAL_WEIGHT} approvals"] if approvals else [],
        "tags": ["mined", "denial"] + sorted(c["how"]), "trigger": c["family"],
    }
    text, digest = _key("denied", c["family"], c["options"])
    return finding(KIND, digest, text, c, card, n)


def _approved(c: dict) -> dict:
    n, what = len(c["sessions"]), _shown(c, _common(c["forms"]))
    card = {
        "title": f"`{what}` is approved here ({c['count']} approvals, no denial)",
        "when_to_use": f"about to run `{what}` ({c['tool']}) and unsure whether to ask",
        "problem": f"`{what}` needed permission {c['count']} time(s) in {n} sessions and the "
                   "user approved it every time",
        "solution_steps": [f"`{what}` is safe to propose when the task needs it"],
        "evidence": seen_lines(c, "approved"),
        "confidence": min(APPROVED_CONFIDENCE, confidence(n)),
        "tags": ["mined", "approved"], "trigger": c["family"],
    }
    text, digest = _key("approved", c["family"], c["options"])
    return finding(KIND, digest, text, c, card)


def recurs(obs: dict) -> Optional[str]:
    """The digest of the denied lesson a refusal adds to (None for anything else)."""
    if not refusal(obs):
        return None
    family, options, _ = subject(obs)
    return _key("denied", family, options)[1]
