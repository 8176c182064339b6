"""Miner ``edits``: the agent writes X, then corrects it to Y, in several sessions.

Within one session and one file, an edit corrects an earlier one when its
``edit_old`` holds what the earlier edit wrote (its ``edit_new``), or undoes it
when its ``edit_new`` is what the earlier edit replaced (its ``edit_old``). The
correction is reduced to the tokens that changed (whitespace-blind, with one
token of context for a pure insertion or deletion), so the same fix clusters
across files and sessions while different fixes stay apart; a change seen in
``MIN_SESSIONS`` sessions becomes the lesson "write Y directly". One session's edits are one
piece of evidence however many files they touch: a refactoring done there (``Query(`` ->
``QueryContext(ctx,`` in twelve calls) is one decision, not a habit of the project.
Constants are documented in references/LEARNING.md. Must not import cli.
"""

import re
from difflib import SequenceMatcher
from typing import Dict, List, Optional, Tuple

from . import fingerprint
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut
from .mine_clusters import Clusters, finding, seen_lines

KIND = "edits"

MIN_WRITTEN = 4             # non-blank characters the shorter of an earlier edit_new and a
                            # later edit_old needs to count as held by the other (less: chance)
MAX_CHANGE_TOKENS = 24      # a correction changing more tokens (both sides) is a rewrite: skipped
MAX_EDITS_KEPT = 20         # earlier edits remembered per file and session, most recent last
MAX_FILES_KEPT = 50         # files remembered per session; the least recently edited dropped
MAX_OPEN_SESSIONS = 200     # sessions whose edits are remembered; the least recent dropped
MAX_CLUSTERS = 5000         # corrections remembered; the least recent not yet lessons dropped
TRIGGER = "edit"            # card trigger: the tool kind whose use puts the lesson at stake
CONVENTION_MAX_TOKENS = 8   # a convention is a small substitution (both sides, in tokens)
CONVENTION_CONFIDENCE = 0.3  # a convention's confidence is this + 0.1 per session (0.4 at
                             # MIN_SESSIONS), never above a self-correction's of as many
CUT_TITLE, CUT_EXAMPLE = 60, 160  # characters of X / Y in a title, of an edit in evidence
_TOKEN = re.compile(r"\w+|[^\w\s]")  # words and single punctuation marks


def _clean(text) -> str:
    """An edit side as the hook stored it, without its truncation mark."""
    return str(text or "").rstrip("\u2026").strip()


def change(old: str, new: str) -> Optional[Tuple[str, str, str]]:
    """``(key, X, Y)``: the tokens ``old`` -> ``new`` changed, or None (no or too big a change)."""
    a, b = list(_TOKEN.finditer(old)), list(_TOKEN.finditer(new))
    ta, tb = [m.group() for m in a], [m.group() for m in b]
    ops = [op for op in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    if not ops or not ta:
        return None
    i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    if i1 == i2 or j1 == j2:  # pure insertion or deletion: keep one token of context,
        left = i1 > 0         # a word rather than a punctuation mark, the left one first
        if left and i2 < len(ta) and not ta[i1 - 1][0].isalnum() and ta[i2][0].isalnum():
            left = False
        if left:
            i1, j1 = i1 - 1, j1 - 1
        else:
            i2, j2 = i2 + 1, j2 + 1
    if (i2 - i1) + (j2 - j1) > MAX_CHANGE_TOKENS:
        return None
    x = old[a[i1].start():a[i2 - 1].end()] if i2 > i1 else ""
    y = new[b[j1].start():b[j2 - 1].end()] if j2 > j1 else ""
    return " ".join(ta[i1:i2]) + " -> " + " ".join(tb[j1:j2]), x, y


def _tokens(text: str) -> str:
    return " ".join(_TOKEN.findall(text))


def _overlaps(written: str, old: str) -> bool:
    """The later edit replaces text the earlier one wrote: one holds the other."""
    short, long = sorted((_tokens(written), _tokens(old)), key=len)
    return len(short.replace(" ", "")) >= MIN_WRITTEN and short in long


def correction(earlier: List[list], old: str, new: str) -> Optional[Tuple[str, str, str, str]]:
    """``(how, key, X, Y)`` when edit ``old -> new`` corrects or undoes one of ``earlier``
    (``[old, new]`` pairs of the same file and session, most recent last), else None."""
    found = change(old, new)
    if found is None:
        return None
    key, x, y = found
    written = _tokens(x)
    for e_old, e_new in reversed(earlier):
        if e_old and _tokens(new) == _tokens(e_old):
            return "undo", key, x, y
        if _overlaps(e_new, old) and written in _tokens(e_new):
            return "correction", key, x, y
    return None


def miner(agg: dict, setup: Setup) -> Run:
    """Edits remembered per session and file (``agg["recent"]``); corrections clustered."""
    clusters = Clusters(agg, MAX_CLUSTERS, MIN_SESSIONS)
    recent: Dict[str, Dict[str, list]] = agg.setdefault("recent", {})

    def wants(raw: bytes) -> bool:
        return b"edit_new" in raw and b"tool_success" in raw

    def feed(obs: dict) -> None:
        if obs.get("event") != "tool_success" or "edit_new" not in obs:
            return
        sid, path = str(obs.get("session_id") or ""), str(obs.get("file") or obs.get("args") or "")
        old, new = _clean(obs.get("edit_old")), _clean(obs.get("edit_new"))
        files = recent.pop(sid, {})
        recent[sid] = files  # re-inserted last: least recent session first
        earlier = files.pop(path, [])
        files[path] = earlier
        found = correction(earlier, old, new)
        if found is not None:
            _count(found, path, old, new, obs)
        else:
            _convention(path, old, new, obs)
        earlier.append([old, new])
        del earlier[:-MAX_EDITS_KEPT]
        while len(files) > MAX_FILES_KEPT:
            del files[next(iter(files))]
        while len(recent) > MAX_OPEN_SESSIONS:
            del recent[next(iter(recent))]

    def _count(found, path, old, new, obs) -> None:
        how, key, x, y = found
        c = _hit(key, x, y, path, old, new, obs, {})
        c["undo"] += how == "undo"

    def _convention(path, old, new, obs) -> None:
        sub = substitution(old, new)
        if sub is not None:
            _hit("convention|" + sub[0], *sub[1:], path, old, new, obs, {"convention": True})

    def _hit(key, x, y, path, old, new, obs, fields) -> dict:
        return clusters.hit(fingerprint.digest(key, fold_case=False), obs, lambda: dict(
            fields, change=key.split("|")[-1], x=cut(x, CUT_TITLE), y=cut(y, CUT_TITLE),
            example=[cut(path, CUT_EXAMPLE), cut(old, CUT_EXAMPLE), cut(new, CUT_EXAMPLE)],
            undo=0))

    def lessons() -> List[dict]:
        return [(_convention_lesson if c.get("convention") else _lesson)(d, c)
                for d, c in ((d, clusters.items[d]) for d in sorted(clusters.changed))
                if clusters.sessions(d) >= MIN_SESSIONS]

    return Run(wants, feed, lessons)


def _lesson(digest: str, c: dict) -> dict:
    """The card for one correction seen in several sessions."""
    x, y, n = c["x"], c["y"], len(c["sessions"])
    path, old, new = c["example"]
    what = f"`{x}`" if x else "nothing"
    card = {
        "title": f"Write `{y}` directly, not {what}" if y else f"Don't write `{x}`",
        "when_to_use": f"editing code where you would write `{x or y}`",
        "problem": f"an edit wrote {what} and a later edit of the same file changed it to "
                   f"`{y}` ({c['count']} time(s) in {n} session(s)"
                   + (f"; {c['undo']} of them undid the earlier edit)" if c["undo"] else ")"),
        "solution_steps": [f"write `{y}` in the first edit instead of {what}" if y else
                           f"leave `{x}` out of the first edit"],
        "evidence": [f"example ({path}): `{old}` -> `{new}`"] + seen_lines(c),
        "tags": ["mined", "edit", "correction"] + (["undo"] if c["undo"] else []),
        "trigger": TRIGGER,
    }
    return finding(KIND, digest, c["change"], c, card)


def substitution(old: str, new: str) -> Optional[Tuple[str, str, str]]:
    """``(key, X, Y)`` when an edit replaces a few tokens X by Y, both naming something (a
    word of 2+ letters on each side, 3+ on one: ``bash -lc`` -> ``sh -c``), neither only
    adding words around the other's: a candidate convention; else None."""
    found = change(old, new)
    if found is None:
        return None
    key, x, y = found
    sides = key.split(" -> ")
    if len(sides) != 2 or not x or not y or \
            len(sides[0].split()) + len(sides[1].split()) > CONVENTION_MAX_TOKENS:
        return None
    words = [[t for t in side.split() if len(t) >= 2 and t[0].isalpha()] for side in sides]
    if not all(words) or max(len(t) for side in words for t in side) < 3:
        return None
    if any((side.count('"') % 2) or (side.count("'") % 2) or (side.count("`") % 2)
           for side in (x, y)):
        return None  # cut through a string: not a unit of meaning
    a, b = (set(side.lower().split()) for side in sides)
    if a <= b or b <= a:
        return None  # an insertion or deletion around a kept word is not a substitution
    return key, x, y


def _convention_lesson(digest: str, c: dict) -> dict:
    """The card for a substitution made in several files or sessions."""
    x, y, n = c["x"], c["y"], len(c["sessions"])
    path, old, new = c["example"]
    card = {
        "title": f"Write `{y}`, not `{x}` (convention)",
        "when_to_use": f"editing code where you would write `{x}`",
        "problem": f"edits replaced `{x}` with `{y}` {c['count']} time(s) in {n} sessions",
        "solution_steps": [f"write `{y}` where `{x}` would go"],
        "evidence": [f"example ({path}): `{old}` -> `{new}`"] + seen_lines(c),
        "tags": ["mined", "edit", "convention"], "trigger": TRIGGER,
        "confidence": round(min(confidence(n), CONVENTION_CONFIDENCE + 0.1 * (n - 1)), 3),
    }
    return finding(KIND, digest, "convention|" + c["change"], c, card)


def recurs(obs: dict) -> Optional[str]:
    """The digest of the change an edit makes (None for anything else). The change alone
    decides: whether it corrects an earlier edit needs the session, which ``recurs`` lacks."""
    if obs.get("event") != "tool_success" or "edit_new" not in obs:
        return None
    found = change(_clean(obs.get("edit_old")), _clean(obs.get("edit_new")))
    return fingerprint.digest(found[0], fold_case=False) if found else None
