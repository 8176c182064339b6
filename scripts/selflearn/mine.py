"""``mine``: learn candidate lessons from observations.jsonl, incrementally.

Owns: reading only the observations appended since the last run (checkpoint
``<store>/mine_state.json``: byte offset, inode and first bytes of the file,
plus each miner's aggregates), the registry of miners (``MINERS``), and
turning their findings into aha cards (``origin: mined``, ``status:
candidate``, a ``confidence``, an explicit ``key``) written by
``record.record``, so mining again reinforces a card instead of copying it.
Invariants: each line is parsed at most once per run; cards are written
before the checkpoint; ``--dry-run`` and ``--since`` never write the
checkpoint. Must not import cli.
"""

import os
from typing import Callable, Dict, List, NamedTuple, Optional

from . import cursors, fastjson, fingerprint, model, record, store
from .errors import SelfLearningError, UsageError

STATE_FILE = "mine_state.json"
_SID = b'"session_id": "'  # how fastjson (hooks, transcripts) writes the key

# --- tuning: every constant of the miners, documented in references/LEARNING.md ------------
MIN_SESSIONS = 2            # a failure becomes a lesson once seen in this many distinct sessions
FIX_WINDOW = 5              # a fix must come within this many tool events of the same session
CONFIDENCE_START = 0.4      # confidence of a lesson seen in exactly MIN_SESSIONS sessions
CONFIDENCE_CAP = 0.9        # confidence never reaches 1: a mined lesson stays a candidate
CONFIDENCE_KEEP = 0.5       # each session past MIN_SESSIONS keeps this share of the gap to CAP
FIX_BONUS = 0.05            # added when the log shows a succeeding variant (still capped)
MAX_EVIDENCE_SESSIONS = 5   # sessions cited in evidence; later ones only raise the count
MAX_FIXES = 2               # succeeding variants named in solution_steps, most frequent first
MAX_FIXES_KEPT = 10         # distinct variants remembered per failure
MAX_CLUSTERS = 5000         # failures remembered; beyond it, the least recent ones not yet a
                            # lesson are dropped (bounds the checkpoint, so every run's cost)
MAX_PENDING_SESSIONS = 1000  # sessions waiting for a fix; the least recent are dropped
CUT_TITLE, CUT_ARGS, CUT_ERROR = 80, 120, 160  # characters of head, command, error shown
# Failures that teach nothing about the project: the user or the agent stopped the tool,
# or the agent's own read-before-edit protocol (it recovers by reading the file).
IGNORED_EXIT_CODES = (130, 137, 143)  # SIGINT, SIGKILL, SIGTERM: interrupted, not failed
IGNORED_ERRORS = (
    "interrupted by user", "request interrupted", "user doesn't want to proceed",
    "user declined", "rejected by user", "keyboardinterrupt", "operation was aborted",
    "has not been read yet", "modified since read",
)


class Run(NamedTuple):
    """One miner over one run: ``wants(raw line) -> bool`` (a fast byte test; False
    skips the line unparsed), ``feed(obs)`` once per parsed observation in file
    order, ``lessons()`` the lessons whose evidence changed in this run."""
    wants: Callable[[bytes], bool]
    feed: Callable[[dict], None]
    lessons: Callable[[], List[dict]]


def confidence(sessions: int, has_fix: bool = False) -> float:
    """START at MIN_SESSIONS; each further session keeps KEEP of the gap to CAP; + FIX_BONUS."""
    extra = max(0, sessions - MIN_SESSIONS)
    value = CONFIDENCE_START + (CONFIDENCE_CAP - CONFIDENCE_START) * (1 - CONFIDENCE_KEEP ** extra)
    return round(min(CONFIDENCE_CAP, value + (FIX_BONUS if has_fix else 0.0)), 3)


def ignored(obs: dict) -> bool:
    """Interrupted or protocol failures: kept in the log, never a lesson."""
    if obs.get("interrupted") is True or obs.get("exit_code") in IGNORED_EXIT_CODES:
        return True
    error = str(obs.get("error") or "").lower()
    return any(marker in error for marker in IGNORED_ERRORS)


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text or "").replace("`", "'").split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


# --- miner: repeated failures ---------------------------------------------------------------

def _resembles(failed_family: str, family: str, args: str) -> bool:
    """Same family, same program, or the failed program named in the command
    (``pytest`` → ``python3 -m pytest``, ``bash -lc 'npm test'`` → ``sh -c 'npm test'``)."""
    program = failed_family.split()[0]
    return family == failed_family or family.split()[0] == program or \
        program in args.replace("'", " ").replace('"', " ").split()


def failures(agg: dict) -> Run:
    """Tool failures clustered by fingerprint; a cluster in MIN_SESSIONS sessions is a lesson.

    ``agg`` (saved in the checkpoint) holds ``clusters`` by digest and ``pending``:
    per session, the shell failures still waiting for a succeeding variant.
    """
    clusters: Dict[str, dict] = agg.setdefault("clusters", {})
    pending: Dict[str, list] = agg.setdefault("pending", {})
    sessions: Dict[str, set] = {}  # cluster -> its sessions as a set, built when first needed
    waiting = {sid.encode("utf-8") for sid in pending}  # as they appear in a line
    changed: set = set()

    def wants(raw: bytes) -> bool:
        if b"tool_failure" in raw:
            return True
        if not waiting or b"tool_success" not in raw:
            return False
        # a success matters only while its session waits for a fix; the session id is
        # read without parsing, as every writer here spells it (else: parse to be sure)
        start = raw.find(_SID)
        if start < 0:
            return True
        start += len(_SID)
        sid = raw[start:raw.find(b'"', start)]
        return sid in waiting or b"\\" in sid

    def feed(obs: dict) -> None:
        event = obs.get("event")
        if event != "tool_failure" and event != "tool_success":
            return
        sid = str(obs.get("session_id") or "")
        if sid in pending:
            _advance(sid, obs)
        if event == "tool_failure" and not ignored(obs):
            _failure(sid, obs)

    def _advance(sid: str, obs: dict) -> None:
        left = []
        ok = obs.get("event") == "tool_success" and obs.get("tool_kind") == "shell"
        args = str(obs.get("args") or "")
        family = str(obs.get("family") or "")
        for fp, failed, norm, fam, remaining in pending[sid]:
            cluster = clusters.get(fp)
            if ok and cluster is not None and family and _resembles(fam, family, args):
                variant = fingerprint.normalize_args(args)
                if variant == norm:
                    cluster["retries"] = cluster.get("retries", 0) + 1
                else:
                    _fix(fp, cluster, variant, args, failed, family == fam, sid, obs)
                continue
            if remaining > 1:
                left.append([fp, failed, norm, fam, remaining - 1])
        if left:
            pending[sid] = left
        else:
            del pending[sid]
            waiting.discard(sid.encode("utf-8"))

    def _fix(fp, cluster, variant, args, failed, same_family, sid, obs) -> None:
        fixes = cluster.setdefault("fixes", {})
        fix = fixes.get(variant)
        if fix is None:
            if len(fixes) >= MAX_FIXES_KEPT:
                return
            fix = fixes[variant] = {"args": _cut(args, CUT_ARGS), "failed": _cut(failed, CUT_ARGS),
                                    "same_family": same_family, "count": 0,
                                    "seen": [obs.get("id", "?"), sid, obs.get("ts", "?")]}
            changed.add(fp)
        fix["count"] += 1

    def _failure(sid: str, obs: dict) -> None:
        text, fp, raw = fingerprint.of_failure(obs)
        cluster = clusters.get(fp)
        if cluster is None:
            if len(clusters) >= MAX_CLUSTERS:
                _prune()
            cluster = clusters[fp] = {
                "fingerprint": text, "tool": obs.get("tool") or "?",
                "kind": obs.get("tool_kind") or "other", "family": obs.get("family") or "",
                "example": {"args": _cut(obs.get("args"), CUT_ARGS),
                            "error": _cut(raw, CUT_ERROR)},
                "count": 0, "sessions": [], "seen": []}
        cluster["count"] += 1
        cluster["last"] = obs.get("ts", "")
        known = sessions.get(fp)
        if known is None:
            known = sessions[fp] = set(cluster["sessions"])
        if sid not in known:
            known.add(sid)
            cluster["sessions"].append(sid)
            if len(cluster["seen"]) < MAX_EVIDENCE_SESSIONS:
                cluster["seen"].append([obs.get("id", "?"), sid, obs.get("ts", "?")])
            changed.add(fp)
        if obs.get("tool_kind") == "shell" and obs.get("family"):
            args = str(obs.get("args") or "")
            entries = [p for p in pending.pop(sid, []) if p[0] != fp]
            entries.append([fp, _cut(args, CUT_ARGS), fingerprint.normalize_args(args),
                            obs["family"], FIX_WINDOW])
            pending[sid] = entries  # re-inserted last: the dict stays least-recent first
            waiting.add(sid.encode("utf-8"))
            while len(pending) > MAX_PENDING_SESSIONS:
                oldest = next(iter(pending))
                del pending[oldest]
                waiting.discard(oldest.encode("utf-8"))

    def _prune() -> None:
        """Forget the least recent failures not yet lessons, down to 90% of MAX_CLUSTERS."""
        young = sorted((c.get("last", ""), fp) for fp, c in clusters.items()
                       if len(c["sessions"]) < MIN_SESSIONS)
        for _, fp in young[:max(1, len(clusters) - MAX_CLUSTERS * 9 // 10)]:
            del clusters[fp]
            sessions.pop(fp, None)
            changed.discard(fp)

    def lessons() -> List[dict]:
        return [_lesson(fp, clusters[fp]) for fp in sorted(changed)
                if fp in clusters and len(clusters[fp]["sessions"]) >= MIN_SESSIONS]

    return Run(wants, feed, lessons)


def _lesson(fp: str, c: dict) -> dict:
    """The card for one failure cluster."""
    label, head = fingerprint.command_word(c), fingerprint.head_of(c["fingerprint"])
    n = len(c["sessions"])
    fixes = sorted(c.get("fixes", {}).values(), key=lambda f: -f["count"])[:MAX_FIXES]
    steps = [f"use `{f['args']}` instead of `{f['failed']}`" if f["same_family"] else
             f"`{f['args']}` succeeded next, after `{f['failed']}` failed" for f in fixes]
    evidence = [f"example ({label}): `{c['example']['args']}` failed with: {c['example']['error']}"]
    evidence += [f"seen {ts} in session {sid} ({oid})" for oid, sid, ts in c["seen"]]
    evidence += [f"fix seen {f['seen'][2]} in session {f['seen'][1]} ({f['seen'][0]}): "
                 f"`{f['args']}`" for f in fixes]
    card = {
        "title": f"`{label}` fails with `{_cut(head, CUT_TITLE)}`",
        "when_to_use": f"`{label}` ({c['tool']}) fails with: {head}",
        "problem": f"`{label}` failed {c['count']} time(s) in {n} sessions with: {head}",
        "solution_steps": steps, "evidence": evidence,
        "gotchas": ["a plain retry of the same command also succeeded at times: the failure "
                    "may be flaky or depend on state"] if c.get("retries") else [],
        "confidence": confidence(n, bool(fixes)), "tags": ["mined", "failure", c["kind"]],
        "key": f"mined:failure:{fp}", "origin": "mined", "status": "candidate",
    }
    return {"kind": "failures", "fingerprint": c["fingerprint"], "sessions": n,
            "occurrences": c["count"], "card": {k: v for k, v in card.items() if v != []}}


# --- registry: --kind name -> miner(aggregates) -> Run ----------------------------------------
MINERS: Dict[str, Callable[[dict], Run]] = {
    "failures": failures,
}


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
         dry_run: bool = False) -> dict:
    """Feed new observations to the miners, then write (or, dry, list) their lessons."""
    names, since_iso = check_args(kinds, since)
    path, state_path = memory.path("observations"), memory.path(STATE_FILE)
    data = {"kinds": names, "dry_run": dry_run, "since": since_iso or None,
            "observations": path, "state": state_path, "full": False, "full_reason": None,
            "observations_read": 0, "parsed": 0, "from_offset": 0, "checkpoint": None,
            "clusters": {}, "lessons": [], "unchanged": 0, "warnings": [],
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
            found, checkpoint = _scan(fh, names, state, since_iso, data)
        data["lessons"] = _write(memory, found, dry_run, data)
        if not dry_run and not since_iso and checkpoint != state["kinds"]:
            state["kinds"] = checkpoint
            store.atomic_write(state_path, fastjson.dumps(state) + "\n")
            data["checkpoint_written"] = True
    return data


def _scan(fh, names: List[str], state: dict, since_iso: str, data: dict):
    """Read from the lowest checkpoint on; each kind sees only the lines past its own.

    Returns the lessons found and the new checkpoint per kind (aggregates included).
    """
    st = os.fstat(fh.fileno())
    runs = []
    for name in names:
        cp = state["kinds"].get(name)
        why = "--since reads the whole file" if since_iso else _why_full(cp, st, fh)
        if why and cp is not None:
            data["full"], data["full_reason"] = True, why
        cp = cp if not why else {"offset": 0, "line": 0, "agg": {}}
        runs.append((cp["offset"], cp["line"], name, cp["agg"]))
    pos, line = min((off, ln) for off, ln, _, _ in runs)
    data["from_offset"] = pos
    miners = [(off, MINERS[name](agg)) for off, _, name, agg in runs]
    active = [run for off, run in miners if off <= pos]
    later = sorted(((off, run) for off, run in miners if off > pos), key=lambda x: x[0])
    fh.seek(pos)
    read = parsed = 0
    for raw in fh:
        if raw[-1:] != b"\n":
            break  # still being written: the next run reads it whole
        while later and pos >= later[0][0]:
            active.append(later.pop(0)[1])
        pos += len(raw)
        line += 1
        read += 1
        for run in active:
            if run.wants(raw):
                break
        else:
            continue
        try:
            obs = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            if len(data["warnings"]) < 10:
                data["warnings"].append(f"{fh.name}:{line}: not JSON ({exc}); skipped")
            continue
        if not isinstance(obs, dict):
            continue
        if obs.get("v", 1) != 1:
            model.upgrade(obs, f"{fh.name}:{line}")
        if since_iso and str(obs.get("ts", "")) < since_iso:
            continue
        parsed += 1
        for run in active:
            run.feed(obs)
    data["observations_read"], data["parsed"] = read, parsed
    data["checkpoint"] = {"offset": pos, "inode": st.st_ino, "line": line}
    head = cursors.head(fh, pos)
    found = [lesson for _, run in miners for lesson in run.lessons()]
    checkpoint = {name: {"inode": st.st_ino, "offset": pos, "line": line, "head": head,
                         "agg": agg} for _, _, name, agg in runs}
    for name, agg in ((n, a) for _, _, n, a in runs):
        data["clusters"][name] = len(agg.get("clusters", {}))
    return found, checkpoint


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
            grows = [k for k in ("evidence", "solution_steps", "gotchas")
                     if set(card.get(k, [])) - set(existing.get(k) or [])]
            if not grows and conf == old:
                data["unchanged"] += 1
                continue
            card = {"id": existing["id"], "title": existing["title"], "key": card["key"],
                    "confidence": conf, "problem": card["problem"],
                    **{k: card[k] for k in ("evidence", "solution_steps", "gotchas") if k in card}}
            entry["confidence"] = conf
        problems = model.check("card", card, f"mine: lesson {entry['key']}")
        if problems:  # pragma: no cover - lessons are built valid; this guards future miners
            raise SelfLearningError("\n".join(problems) + "\nmine: nothing was written")
        entry["card"] = card
        items.append(card)
        report.append(entry)
    if dry_run or not items:
        return report
    written = iter(record.record(memory, {"aha_cards": items})["aha_cards"])
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
    if not data["lessons"]:
        lines.append("no new or reinforced lessons")
    if data["unchanged"]:
        lines.append(f"{data['unchanged']} lesson(s) already up to date")
    if data["dry_run"]:
        lines.append("dry run: nothing written")
    elif data["checkpoint_written"]:
        lines.append(f"checkpoint: byte {cp['offset']} in {data['state']}")
    return lines
