"""``feedback``: the store as a page a person can read and edit, ``<store>/feedback.md``.

Owns reading that page back (a lesson line deleted from the marked section is a
rejection, a line added there without an id is a human lesson, a candidate's line
moved into it is an acceptance) and regenerating it. What was listed last time is
recorded in the page itself (``<!-- rendered: ids -->``): when that record is gone
there is nothing to compare against, so no lesson is rejected or accepted by id.
The page is a person's channel, but the agent can write files too: when the hooks saw
the agent write the page (``agent_wrote``) since it was generated, nothing on it is read
back; the page is regenerated and its new lines are dropped, with a warning.
Changes go through ``update`` and ``record``; the page is replaced atomically and
only when its text changes. Must not import cli.
"""

import os
import re
from typing import Dict, Iterable, List, NamedTuple, Optional

from . import advice
from ..learning import fingerprint, lifecycle
from ..storage import model, record, redact, screen, store, update
from ..storage.errors import UsageError
from ..storage.memory import Memory
from ..storage.text import clean_line, document
from .report import recent_observations

FILE = "feedback.md"                               # the page, in the store folder
BEGIN = "<!-- self-learning:lessons:begin -->"     # first line of the editable section
END = "<!-- self-learning:lessons:end -->"         # last line of the editable section
RENDERED = "<!-- rendered:"                        # hidden record of the ids listed last time
SEEN = "<!-- observed until:"                      # ... and the newest observation then read
DEFAULT_DAYS = 7        # days of recent outcomes shown
MAX_DAYS = 31           # --days above this is refused (the page is for reading)
LINES_PER_DAY = 50      # outcomes shown per day, newest first
ARGS_CHARS = 100        # an outcome's args are cut to this many characters
CONTEXT_CHARS = 160     # ... and its context line (cause line, reason) to this many
TITLE_CHARS = 200       # a lesson's title is cut to this many characters (and a new one's)
MIN_HUMAN_CHARS = 15    # a new lesson line shorter than this is refused (warning, kept)
MAX_LESSONS = 200       # lessons listed in the editable section, oldest first
MAX_CANDIDATES = 20     # mined candidates listed (read-only), most confident first
OBS_FIELDS = ("ts", "event", "tool", "tool_kind", "outcome", "args", "file", "error",
              "reason")  # shown, and read for the agent's writes of the page
NOTE_REMOVED = "removed from feedback.md"
NOTE_ADDED = "added in feedback.md"
_ITEM = re.compile(r"^[-*+]\s+(.*)$")
_ID = re.compile(r"^\[([A-Za-z0-9_.:-]+)\]")


class Section(NamedTuple):
    """The editable section as a person left it."""
    rendered: Optional[List[str]]  # ids listed last time; None when the record is gone
    ids: List[str]                 # ids on lesson lines now, in order
    new: List[str]                 # text of lesson lines without an id
    seen: str = ""                 # ts of the newest observation when generated ("" unknown)


def path(memory: Memory) -> str:
    return os.path.join(memory.root, FILE)


def parse(text: str) -> Optional[Section]:
    """The marked section of a feedback page, or None when its markers are gone."""
    lines = [line.strip() for line in text.splitlines()]
    if BEGIN not in lines or END not in lines[lines.index(BEGIN):]:
        return None
    start = lines.index(BEGIN)
    rendered, ids, new, seen = None, [], [], ""
    for line in lines[start + 1:lines.index(END, start)]:
        if line.startswith(RENDERED) and line.endswith("-->"):
            rendered = line[len(RENDERED):-3].split()
            continue
        if line.startswith(SEEN) and line.endswith("-->"):
            seen = line[len(SEEN):-3].strip()
            continue
        item = _ITEM.match(line)
        body = item.group(1).strip() if item else ""
        known = _ID.match(body)
        if known:
            ids.append(known.group(1))
        elif body:
            new.append(body)
    return Section(rendered, ids, new, seen)


def agent_wrote(observations: List[dict], target: str, since: str) -> str:
    """What the hooks saw the agent write the page with after ``since`` (a write or edit tool
    on it, a shell command naming it), as ``"<tool> at <ts>"``, or "". The page may sit under
    another absolute path in the agent's view: its ``<user>/feedback.md`` tail is compared."""
    tail = "/".join(target.replace(os.sep, "/").split("/")[-2:])
    for obs in reversed(observations):
        kind, ts = obs.get("tool_kind"), str(obs.get("ts") or "")
        named = obs.get("file") if kind in ("edit", "write") else \
            obs.get("args") if kind == "shell" else ""
        if ts > since and tail in str(named or ""):
            return f"{obs.get('tool') or kind} at {ts}"
    return ""


def listed(card: dict) -> bool:
    """Cards a person can unlearn here: accepted ones, and proposed ones not mined."""
    status = card.get("status", "proposed")
    return status == "accepted" or (status == "proposed" and card.get("origin") != "mined")


def plan(section: Section, cards: Dict[str, dict]) -> dict:
    """What the edited section asks for; pure."""
    out: dict = {"rejected": [], "accepted": [], "human": [], "refused": [], "unknown": [],
                 "flagged": []}
    if section.rendered is not None:
        now = set(section.ids)
        out["rejected"] = [i for i in dict.fromkeys(section.rendered) if i not in now
                           and i in cards and cards[i].get("status") != "rejected"]
        before = set(section.rendered)
        out["accepted"] = [i for i in dict.fromkeys(section.ids) if i not in before
                           and i in cards and cards[i].get("status") != "accepted"]
    out["flagged"] = [i for i in out["accepted"] if screen.blocked(cards[i])]
    out["accepted"] = [i for i in out["accepted"] if i not in out["flagged"]]
    out["unknown"] = [i for i in dict.fromkeys(section.ids) if i not in cards]
    for text in dict.fromkeys(section.new):
        text = redact.redact_text(" ".join(text.split()))
        out["human" if len(text) >= MIN_HUMAN_CHARS else "refused"].append(text)
    return out


def _apply(memory: Memory, todo: dict) -> List[dict]:
    """Write the status changes and human cards; returns the new cards' report."""
    created: List[dict] = []
    if todo["human"]:
        payload = {"aha_cards": [{"title": t[:TITLE_CHARS], "tags": ["feedback"], "status":
                                  "proposed" if screen.text_findings(t) else "accepted"}
                                 for t in todo["human"]]}
        created = record.record(memory, payload, source="human")["aha_cards"]
        known = memory.folded("cards")
        todo["accepted"] += [c["id"] for c in created if c["action"] != "created"
                             and known[c["id"]].get("status") != "accepted"
                             and c["id"] not in todo["accepted"]]
    changes = [(i, "rejected", NOTE_REMOVED) for i in todo["rejected"]] + \
        [(i, "accepted", NOTE_ADDED) for i in todo["accepted"]]
    for rid, status, note in changes:
        update.set_status(memory, "card", rid, status, note=note)
    memory.append("signals", [model.complete("signal", {
        "kind": "aha_status", "aha_id": rid, "source": "feedback",
        "context": f"{status}: {note}"}) for rid, status, note in changes])
    return created


def feedback(memory: Memory, days: int = DEFAULT_DAYS, dry_run: bool = False,
             user: str = "") -> dict:
    """Read the page back, apply what a person changed, regenerate it."""
    if not 1 <= days <= MAX_DAYS:
        raise UsageError(f"feedback: --days must be between 1 and {MAX_DAYS}, got {days}")
    target = path(memory)
    try:
        raw = store.read_bytes(target)  # a FIFO or folder is an error, never a hang
        current: Optional[str] = None if raw is None else raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"feedback: cannot read {target} ({exc}); move it away and run "
                         "`feedback` again") from None
    section = parse(current) if current is not None else None
    observations = list(recent_observations(memory, first_day(days), OBS_FIELDS))
    by_agent = agent_wrote(observations, target, section.seen or first_day(days)) \
        if section else ""
    if by_agent:  # none of it is a person's word: regenerated, its new lines dropped
        dropped, section = section.new, None
    cards = memory.folded("cards")
    todo = plan(section, cards) if section else plan(Section(None, [], []), cards)
    created: List[dict] = []
    changed = bool(todo["rejected"] or todo["accepted"] or todo["human"])
    if changed and not dry_run:
        created = _apply(memory, todo)
        cards = memory.folded("cards")
    text = render(cards, advice.evidence_signals(memory), observations, days,
                  todo["refused"], user)
    write = text != current
    if write and not dry_run:
        store.atomic_write(target, text)  # ``render`` returns a ``document``
    return {"path": target, "dry_run": dry_run, "days": days,
            "section_found": section is not None,
            "rendered_record": bool(section and section.rendered is not None),
            "rejected": [_brief(cards, i) for i in todo["rejected"]],
            "accepted": [_brief(cards, i) for i in todo["accepted"]],
            "created": created if not dry_run else [{"id": None, "title": t, "action": "create"}
                                                    for t in todo["human"]],
            "refused": todo["refused"], "unknown": todo["unknown"],
            "changed": changed, "file": ("would write" if dry_run else "written") if write
            else "unchanged",
            "agent_wrote": by_agent,
            "warnings": ([f"feedback: the agent wrote {target} since it was generated "
                          f"({by_agent}); nothing on it was read back, {len(dropped)} new "
                          "line(s) dropped: add your own lessons again"] if by_agent else [])
            + [f"feedback: lesson line {t!r} is shorter than {MIN_HUMAN_CHARS} "
                         "characters; not learned (make it specific)" for t in todo["refused"]]
            + [f"feedback: no card with id {i!r}; line ignored" for i in todo["unknown"]]
            + [f"feedback: card {i} is held by the safety screen ({'; '.join(screen.blocked(cards[i]))});"
               f" not accepted here; after reading it run `aha-status --id {i} --status accepted "
               "--accept-flagged`" for i in todo["flagged"]]
            + [f"feedback: lesson line {t[:60]!r} is held by the safety screen; it waits in "
               "`review` as proposed" for t in todo["human"] if screen.text_findings(t)]}


def _brief(cards: Dict[str, dict], rid: str) -> dict:
    return {"id": rid, "title": cards.get(rid, {}).get("title", "")}


# --- the page ---------------------------------------------------------------------------------

def render(cards: Dict[str, dict], signals: List[dict], observations: Iterable[dict], days: int,
           kept: List[str] = (), user: str = "") -> str:
    """The whole page: how to edit, the editable lessons, candidates, recent outcomes."""
    lessons = sorted((c for c in cards.values() if listed(c)),
                     key=lambda c: (c.get("_first_ts") or c.get("ts", ""), c["id"]))
    shown = lessons[-MAX_LESSONS:]
    observations = list(observations)
    seen = max((str(o.get("ts") or "") for o in observations), default="")
    lines = [f"# Feedback{': ' + user if user else ''}", "",
             "Regenerated by `python3 scripts/self_learning.py feedback`; only the lessons "
             "section below is read back.", "",
             "- **Unlearn** a lesson: delete its line in *Learned preferences*, then run "
             "`feedback`; the lesson is marked rejected.",
             f"- **Teach** one: add a line `- what to do, and when` ({MIN_HUMAN_CHARS} characters "
             "or more) in that section, then run `feedback`; it becomes an accepted human lesson.",
             "- **Accept** a candidate: move its line from *Candidates* into that section.",
             "- Keep the `<!-- … -->` lines: they mark the section and record what was listed.",
             "", "## Learned preferences", "", BEGIN,
             " ".join([RENDERED] + [c["id"] for c in shown] + ["-->"])]
    lines += [f"{SEEN} {seen} -->"] if seen else []
    lines += [f"- [{c['id']}] {clean_line(c.get('title'), TITLE_CHARS)}" for c in shown]
    lines += [f"- {text}" for text in kept]
    lines.append(END)
    if len(lessons) > len(shown):
        lines += ["", f"({len(lessons) - len(shown)} older lessons not listed; see `list`)"]
    lines += ["", "## Candidates", "", "Mined, not yet trusted; listed here only.", ""]
    lines += _candidates(cards, signals) or ["- none"]
    lines += ["", f"## Recent outcomes (last {days} days, UTC)", ""]
    lines += _outcomes(observations, days) or ["- none"]
    return document("\n".join(lines) + "\n")


def _candidates(cards: Dict[str, dict], signals: List[dict]) -> List[str]:
    now, ev = model.now(), lifecycle.evidence(signals)
    rows = [(lifecycle.confidence(c, ev.get(c["id"]), now), c) for c in cards.values()
            if c.get("status") == "candidate"]
    rows.sort(key=lambda r: (-r[0], r[1]["id"]))
    return [f"- [{c['id']}] {clean_line(c.get('title'), TITLE_CHARS)} (confidence {conf})"
            for conf, c in rows[:MAX_CANDIDATES]]


def first_day(days: int) -> str:
    """The UTC date the last ``days`` days start on."""
    return model.iso(model.now() - (days - 1) * lifecycle.DAY)[:10]


def _outcomes(observations: Iterable[dict], days: int) -> List[str]:
    """Per day, newest first: ``- HH:MM | tool | outcome | args``, capped per day."""
    first = first_day(days)
    by_day: Dict[str, List[dict]] = {}
    for obs in observations:
        ts = str(obs.get("ts") or "")
        if obs.get("outcome") and ts[:10] >= first:
            by_day.setdefault(ts[:10], []).append(obs)
    lines: List[str] = []
    for day in sorted(by_day, reverse=True):
        rows = sorted(by_day[day], key=lambda o: str(o.get("ts")), reverse=True)
        lines += [f"### {day}", ""]
        lines += [_outcome(o) for o in rows[:LINES_PER_DAY]]
        if len(rows) > LINES_PER_DAY:
            lines.append(f"- … {len(rows) - LINES_PER_DAY} earlier outcomes not shown")
        lines.append("")
    return lines[:-1]


def _outcome(obs: dict) -> str:
    """``- HH:MM | tool | outcome | args``, then a context line: what the error said (its
    cause line) or why the call was refused. A failure of the model's service has no tool:
    it shows as ``provider``, with its reason in place of args."""
    provider = obs.get("event") == "stop_failure"
    what = obs.get("reason") if provider else obs.get("args") or obs.get("file")
    parts = [str(obs.get("ts"))[11:16], clean_line("provider" if provider else
                                                    obs.get("tool") or "-", 40),
             clean_line(obs.get("outcome"), 20), clean_line(what, ARGS_CHARS)]
    error = "" if obs.get("outcome") == "denial" else str(obs.get("error") or "")
    if error:
        context = fingerprint.key_line(error)
    else:
        context = "" if provider else obs.get("reason")
    context = clean_line(context if context != what else "", CONTEXT_CHARS)
    return "- " + " | ".join(parts if parts[-1] else parts[:-1]) + (
        f"\n  {context}" if context else "")


def render_lines(data: dict) -> List[str]:
    """Text for people: what changed, and where the page is."""
    verb = "would " if data["dry_run"] else ""
    lines = [f"{verb}reject {c['id']}: {c['title']} ({NOTE_REMOVED})" for c in data["rejected"]]
    lines += [f"{verb}accept {c['id']}: {c['title']} ({NOTE_ADDED})" for c in data["accepted"]]
    lines += [f"{c['action']} human lesson{' ' + c['id'] if c['id'] else ''}: {c['title']}"
              for c in data["created"]]
    if data["file"] == "unchanged":
        lines.append(f"{data['path']}: unchanged")
    else:
        lines.append(f"{data['path']}: {data['file']} (edit its lessons section, then run "
                     "`feedback` again)")
    return lines
