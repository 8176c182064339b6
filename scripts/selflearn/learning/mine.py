"""``mine``: learn candidate lessons from observations.jsonl, incrementally.

Owns: reading only the observations appended since the last run (checkpoint
``<store>/mine_state.json``: byte offset, inode and first bytes of the file,
plus each miner's aggregates), the registry of miners (``MINERS``: one
``mine_<kind>`` module each, see ``mine_base``), and turning their findings
into aha cards (``origin: mined``, ``status: candidate``, a ``confidence``, an
explicit ``key``) written by ``record.record``, so mining again reinforces a
card instead of copying it. Findings that carry a ``proposal`` instead of a
``card`` go to the proposals inbox (``proposals.offer``).
Invariants: each line is parsed at most once per run; cards are written
before the checkpoint; ``--dry-run`` and ``--since`` never write the
checkpoint. A long read reports progress through the ``progress`` callable
the CLI passes on a terminal. Must not import cli.
"""

import os
import time
from typing import Callable, Dict, List, Optional

from ..storage import config, cursors, fastjson, model, record, store
from . import stream
from . import mine_bypass, mine_denials, mine_failures, mine_preferences, mine_sequences
from ..storage.errors import SelfLearningError, UsageError
from .mine_base import STATE_FILE, Setup

# what a reinforcing version of a mined card may update (title, when_to_use, status stay)
GROWING = ("evidence", "solution_steps", "gotchas", "observations", "first_seen", "last_seen",
           "trigger")

# --- registry: --kind name -> module with KIND, miner(agg, setup) -> Run, recurs(obs) --------
MINERS = {m.KIND: m for m in (mine_failures, mine_bypass, mine_denials, mine_preferences,
                              mine_sequences)}


PROGRESS_EVERY = 1.0  # seconds: the first report after a second of reading, then one a second
PROGRESS_LINES = 512  # lines between clock checks

Progress = Optional[Callable[[str], None]]


# --- reading, checkpoint, writing ------------------------------------------------------------

def check_args(kinds: Optional[List[str]], since: Optional[str]):
    """The miners to run and the --since bound (ISO), or a one-line UsageError."""
    names = [k.strip() for v in kinds or [] for k in v.split(",") if k.strip()] or list(MINERS)
    unknown = [k for k in names if k not in MINERS]
    if unknown:
        raise UsageError(f"mine: unknown --kind {unknown[0]!r} (known: {', '.join(MINERS)})")
    since_iso = ""
    if since:
        stamp = model.parse_ts(since)
        if not stamp:
            raise UsageError(f"mine: --since {since!r} is not an ISO date; use e.g. "
                             "2025-01-31 or 2025-01-31T12:00:00Z")
        since_iso = model.iso(stamp)
    return list(dict.fromkeys(names)), since_iso


def _why_full(cp: Optional[dict], st, fh) -> Optional[str]:
    """Why a kind's checkpoint cannot be continued, or None when it can."""
    if not cp:
        return "no checkpoint yet"
    if cp.get("inode") != st.st_ino:
        return "observations.jsonl was replaced (new inode)"
    if cp.get("offset", 0) > st.st_size:
        return "observations.jsonl shrank below the checkpoint"
    if cp.get("head") != cursors.head(fh, cp.get("offset", 0)):
        return "observations.jsonl was rewritten (its first bytes changed)"
    return None


def mine(memory, kinds: Optional[List[str]] = None, since: Optional[str] = None,
         dry_run: bool = False, repo_root: str = "", progress: Progress = None) -> dict:
    """Feed new observations to the miners, then write (or, dry, list) their lessons."""
    names, since_iso = check_args(kinds, since)
    setup = Setup(repo_root, config.load(repo_root) if repo_root else {})
    path, state_path = memory.path("observations"), memory.path(STATE_FILE)
    data = {"kinds": names, "dry_run": dry_run, "since": since_iso or None,
            "observations": path, "state": state_path, "full": False, "full_reason": None,
            "observations_read": 0, "parsed": 0, "from_offset": 0, "checkpoint": None,
            "clusters": {}, "lessons": [], "proposals": [], "unchanged": 0, "warnings": [],
            "checkpoint_written": False}
    if not os.path.exists(path):
        data["message"] = (f"no observations yet at {path}; install hooks (`install-hooks`) "
                           "or backfill them (`ingest-transcripts`)")
        return data
    redo = "mine every observation again (mined cards are reinforced, not duplicated)"
    with cursors.exclusive(memory.root, enabled=not dry_run):
        state = {"v": 1, "kinds": {}} if since_iso else \
            cursors.load(state_path, "kinds", "mine", redo)
        with open(path, "rb") as fh:
            found, checkpoint = _scan(fh, names, state, since_iso, data, setup, progress)
        data["lessons"] = _write(memory, [f for f in found if "card" in f], dry_run, data)
        from . import proposals
        data["proposals"] = proposals.offer(
            memory, [f for f in found if "proposal" in f], dry_run, setup)
        if not dry_run and not since_iso and checkpoint != state["kinds"]:
            state["kinds"] = checkpoint
            store.atomic_write(state_path, fastjson.dumps(state) + "\n")
            data["checkpoint_written"] = True
    return data


def _scan(fh, names: List[str], state: dict, since_iso: str, data: dict, setup: Setup,
          progress: Progress = None):
    """Read from the lowest checkpoint on; each kind sees only the lines past its own.

    Returns the lessons found and the new checkpoint per kind (aggregates included).
    """
    st = os.fstat(fh.fileno())
    runs = []
    for name in names:
        cp = state["kinds"].get(name)
        why = "--since reads the whole file" if since_iso else _why_full(cp, st, fh)
        stale = getattr(MINERS[name], "stale", None)  # e.g. its config changed
        why = why or (stale(cp["agg"], setup) if stale and cp else None)
        if why and cp is not None:
            data["full"], data["full_reason"] = True, why
        cp = cp if not why else {"offset": 0, "line": 0, "agg": {}}
        runs.append((cp["offset"], cp["line"], name, cp["agg"]))
    pos, line = min((off, ln) for off, ln, _, _ in runs)
    data["from_offset"] = pos
    miners = [(off, MINERS[name].miner(agg, setup)) for off, _, name, agg in runs]
    active = [run for off, run in miners if off <= pos]
    later = sorted(((off, run) for off, run in miners if off > pos), key=lambda x: x[0])
    fh.seek(pos)
    parsed = 0
    report = _reporter(progress, pos, st.st_size)
    lines = stream.Stream(fh, data["warnings"], line, whole_lines=True)
    for raw in lines:
        while later and lines.at >= later[0][0]:
            active.append(later.pop(0)[1])
        if report is not None and not lines.read % PROGRESS_LINES:
            report(lines.pos)
        for run in active:
            if run.wants(raw):
                break
        else:
            continue
        obs = lines.parse(raw)
        if obs is None or (since_iso and str(obs.get("ts", "")) < since_iso):
            continue
        parsed += 1
        for run in active:
            run.feed(obs)
    pos, line, read = lines.pos, lines.line, lines.read
    data["observations_read"], data["parsed"] = read, parsed
    data["checkpoint"] = {"offset": pos, "inode": st.st_ino, "line": line}
    head = cursors.head(fh, pos)
    found = [lesson for _, run in miners for lesson in run.lessons()]
    checkpoint = {name: {"inode": st.st_ino, "offset": pos, "line": line, "head": head,
                         "agg": agg} for _, _, name, agg in runs}
    for name, agg in ((n, a) for _, _, n, a in runs):
        data["clusters"][name] = len(agg.get("clusters", {}))
    return found, checkpoint


def _reporter(progress: Progress, start: int, size: int):
    """``report(pos)``, saying how far the read is at most once per ``PROGRESS_EVERY``."""
    if progress is None or size <= start:
        return None
    due = [time.monotonic() + PROGRESS_EVERY]

    def report(pos: int) -> None:
        now = time.monotonic()
        if now >= due[0]:
            due[0] = now + PROGRESS_EVERY
            progress(f"mine: read {(pos - start) / 1e6:.1f} of {(size - start) / 1e6:.1f} MB "
                     f"of observations ({100 * (pos - start) // (size - start)}%)")
    return report


def _write(memory, found: List[dict], dry_run: bool, data: dict) -> List[dict]:
    """Create or reinforce one card per lesson through ``record.record``; report each.

    A card a person rejected, deprecated or retired is left alone. An existing card
    gets a version only when its evidence, steps or confidence would grow; its
    title, when_to_use and status stay as they are.
    """
    by_key = {record.dedup_key(c): c for c in memory.folded("cards").values() if c.get("key")}
    items, report = [], []
    for lesson in found:
        card, existing = lesson["card"], by_key.get(record.dedup_key(lesson["card"]))
        entry = {"id": None, "title": card["title"], "action": "created", "kind": lesson["kind"],
                 "key": card["key"], "fingerprint": lesson["fingerprint"],
                 "sessions": lesson["sessions"], "occurrences": lesson["occurrences"],
                 "confidence": card["confidence"]}
        if existing is not None:
            entry.update(id=existing["id"], title=existing["title"], action="reinforced")
            if existing.get("status") in model.HIDDEN_STATUSES:
                entry["action"] = f"skipped ({existing['status']})"
                report.append(entry)
                continue
            old = existing.get("confidence")
            conf = max(card["confidence"], old if isinstance(old, (int, float)) else 0.0)
            grows = [k for k in GROWING if k in card and (
                set(card[k]) - set(existing.get(k) or []) if isinstance(card[k], list)
                else card[k] != existing.get(k))]
            if not grows and conf == old:
                data["unchanged"] += 1
                continue
            card = {"id": existing["id"], "title": existing["title"], "key": card["key"],
                    "confidence": conf, "problem": card["problem"],
                    **{k: card[k] for k in GROWING if k in card}}
            entry["confidence"] = conf
        problems = model.check("card", card, f"mine: lesson {entry['key']}")
        if problems:  # pragma: no cover - lessons are built valid; this guards future miners
            raise SelfLearningError("\n".join(problems) + "\nmine: nothing was written")
        entry["card"] = card
        items.append(card)
        report.append(entry)
    if dry_run or not items:
        return report
    written = iter(record.record(memory, {"aha_cards": items}, source="mined")["aha_cards"])
    observed = []
    for entry in report:
        if entry["action"] in ("created", "reinforced"):
            entry["id"] = next(written)["id"]
        if entry["action"] == "reinforced":
            observed.append(model.complete("signal", {
                "kind": "aha_observed", "aha_id": entry["id"], "source": "miner",
                "context": f"mined {entry['kind']}: {entry['sessions']} sessions"}))
    memory.append("signals", observed)
    return report


def render(data: dict) -> List[str]:
    """Text lines for people: what was read, each lesson, where the checkpoint is."""
    if data.get("message"):
        return [data["message"]]
    lines = []
    if data["full"]:
        lines.append(f"full re-mine: {data['full_reason']}")
    cp = data["checkpoint"]
    lines.append(f"read {data['observations_read']} new observation(s) from byte "
                 f"{data['from_offset']} to {cp['offset']} ({', '.join(data['kinds'])}"
                 + (f", since {data['since']}" if data["since"] else "") + ")")
    for e in data["lessons"]:
        lines.append(f"{e['action']} {e['id'] or '(new card)'}: {e['title']} "
                     f"({e['sessions']} sessions, confidence {e['confidence']})")
    for e in data.get("proposals", []):
        lines.append(f"{e['action']} {e.get('kind', '?')} proposal {e.get('id') or '(new)'}: "
                     f"{e.get('title', '')}")
        if e.get("warning"):
            lines.append(f"  warning: {e['warning']}")
    if not data["lessons"]:
        lines.append("no new or reinforced lessons")
    if data["unchanged"]:
        lines.append(f"{data['unchanged']} lesson(s) already up to date")
    if data["dry_run"]:
        lines.append("dry run: nothing written")
    elif data["checkpoint_written"]:
        lines.append(f"checkpoint: byte {cp['offset']} in {data['state']}")
    return lines
