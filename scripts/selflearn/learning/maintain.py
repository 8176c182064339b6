"""``maintain``: mine, reinforce, promote and decay in one cheap, idempotent run.

Owns ``<store>/maintain_state.json`` (``last_run`` and ``last_run_epoch``,
``last_lifecycle``, the size and inode ``seen`` of observations.jsonl, signals.jsonl and
aha_cards.jsonl at the end of the last run, and ``last_result``: what started it and what
each step produced, for ``doctor``), replaced atomically; safe to delete. A run is
skipped, writing nothing, when nothing changed since the last one and the lifecycle steps
ran less than ``LIFECYCLE_EVERY_HOURS`` ago (idle time alone still moves lessons, so
promote and decay run once a day without news). The hooks start it by themselves
(``autorun``: after a session, and as a catch-up), paced by what is new, not by the clock. After mining, old observations every miner has
read leave the log (``compact``: retention ``compact.RETENTION_DAYS``). ``--force`` runs every step now; a dry run
writes nothing, state included; so does a run that finds no store.
Two maintains at once would mine and judge the same news twice: a run holds
``<store>/maintain.lock`` (``flock``, never waited for) and a run that finds it
held is skipped ("another maintain is running"). A dry run takes no lock.
The steps take the store's own lock (``cursors.exclusive``) one at a time, never
nested. Must not import cli.
"""

import contextlib
import fcntl
import os
from typing import Dict, Iterator, List, Optional

from ..storage import cursors, fastjson, model, paths, store
from ..storage.errors import UsageError
from . import transitions
from ..storage.memory import Memory

STATE_FILE = "maintain_state.json"
LOCK_FILE = "maintain.lock"   # held (flock, non-blocking) for the whole of a run
BUSY = "another maintain is running"  # the skip reason when LOCK_FILE is held
OFF = "observation is off"            # the skip reason under the kill switch
LIFECYCLE_EVERY_HOURS = 24    # without news, promote and decay still run this often
WATCHED = ("observations", "signals", "cards")  # files whose growth means "something new"


def seen(memory: Memory) -> Dict[str, Optional[dict]]:
    """Size and inode of each watched file (None when absent): cheap, no reading."""
    out: Dict[str, Optional[dict]] = {}
    for name in WATCHED:
        try:
            st = os.stat(memory.path(name))
            out[name] = {"size": st.st_size, "inode": st.st_ino}
        except FileNotFoundError:
            out[name] = None
    return out


def _skip_reason(state: dict, now: float, news: bool, force: bool) -> Optional[str]:
    """Why this run does nothing, or None when it runs."""
    if force:
        return None
    if not news and not _lifecycle_due(state, now):
        return (f"nothing observed since the last run at {state['last_run']}; promote and "
                f"decay are next due at {model.iso(_next_lifecycle(state))}")
    return None


def _next_lifecycle(state: dict) -> float:
    return model.parse_ts(state.get("last_lifecycle", "")) + LIFECYCLE_EVERY_HOURS * 3600


def _lifecycle_due(state: dict, now: float) -> bool:
    return not state.get("last_lifecycle") or now >= _next_lifecycle(state)


@contextlib.contextmanager
def running(memory: Memory, enabled: bool = True) -> Iterator[bool]:
    """Hold ``LOCK_FILE`` without waiting: yields False when another run holds it. Without
    a store (nothing to do, nothing to create) or when not ``enabled``, yields True."""
    if not enabled or not memory.exists():
        yield True
        return
    store.guard(memory.path(LOCK_FILE))
    fd = os.open(memory.path(LOCK_FILE), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def maintain(memory: Memory, repo_root: str, dry_run: bool = False, force: bool = False,
             progress=None, trigger: str = "") -> dict:
    """Run the steps that are due, unless another maintain is running or the kill switch
    is on (a hook's run writes nothing then; ``--force`` is a person's); report each
    step's data, or why nothing ran. ``progress(line)``, if given, hears each step start;
    ``trigger`` says what started a run the hooks started (kept in the state)."""
    off = paths.kill_switch(repo_root)
    if off and not force:
        return {"dry_run": dry_run, "forced": force, "state": memory.path(STATE_FILE),
                "last_run": None, "new_since_last_run": None, "skipped":
                f"{OFF}: {off}; --force runs it anyway", "steps": {}, "wrote": False,
                "state_written": False}
    with running(memory, enabled=not dry_run) as alone:
        if not alone:
            return {"dry_run": dry_run, "forced": force, "state": memory.path(STATE_FILE),
                    "last_run": None, "new_since_last_run": None, "skipped": BUSY,
                    "steps": {}, "wrote": False, "state_written": False}
        return _maintain(memory, repo_root, dry_run, force, progress or (lambda line: None),
                         trigger)


def _maintain(memory: Memory, repo_root: str, dry_run: bool, force: bool, progress,
              trigger: str = "") -> dict:
    now = model.now()
    state_path = memory.path(STATE_FILE)
    warnings = []
    try:
        state = cursors.load(state_path, "seen", "maintain", "run every step on the next run")
    except UsageError as exc:  # derived, so never a reason to stop learning: start over
        state = {"v": model.SCHEMA_VERSION, "seen": {}}
        why = str(exc).split(" is not JSON ", 1)[-1].split("; delete it", 1)[0]
        warnings.append(f"{state_path} is damaged {why}: read as none, so every step runs "
                        "and it is written anew")
    before = seen(memory)
    news = before != state["seen"]
    data = {"dry_run": dry_run, "forced": force, "state": state_path,
            "last_run": state.get("last_run"), "new_since_last_run": news,
            "skipped": _skip_reason(state, now, news, force), "steps": {}, "wrote": False,
            "state_written": False, "warnings": warnings}
    if data["skipped"]:
        return data
    steps = data["steps"]
    if news or force:
        from . import mine, reinforce
        progress("maintain: mine")
        steps["mine"] = mine.mine(memory, None, None, dry_run, repo_root, progress)
        progress("maintain: reinforce")
        steps["reinforce"] = reinforce.reinforce(memory, repo_root, dry_run)
        from . import compact
        steps["compact"] = compact.compact(memory, dry_run)
    for step in transitions.STEPS:
        progress(f"maintain: {step}")
        steps[step] = transitions.run(memory, step, dry_run)
    after = seen(memory)
    data["wrote"] = not dry_run and after != before
    if not dry_run and memory.exists():  # no store yet and nothing to keep: do not create one
        state.update(last_run=model.iso(now), last_run_epoch=now, last_lifecycle=model.iso(now),
                     seen=after, last_result=result(data, trigger or ("forced" if force
                                                                      else "by hand")))
        store.atomic_write(state_path, fastjson.dumps(state) + "\n")
        data["state_written"] = True
    return data


def log_error(memory: Memory, trigger: str, exc: BaseException) -> None:
    """One errors.jsonl line for a run the hooks started (its stderr goes nowhere)."""
    from ..storage import redact
    try:
        memory.append("errors.jsonl", [{"v": 1, "ts": model.iso(), "where": "learn",
                                        "trigger": trigger, "error": redact.redact_text(
                                            f"{type(exc).__name__}: {exc}")[:500]}])
    except Exception:  # noqa: BLE001 - nothing more to do: the hook already returned
        pass


def result(data: dict, trigger: str) -> dict:
    """What a run produced, in a few numbers (kept in the state; ``doctor`` shows it)."""
    steps = data["steps"]
    mined = steps.get("mine") or {}
    acts = [e["action"] for e in mined.get("lessons", [])]
    moved = {step: transitions.counts(steps[step]) for step in transitions.STEPS if step in steps}
    return {"trigger": trigger, "observations_read": mined.get("observations_read", 0),
            "lessons_created": acts.count("created"), "lessons_reinforced": acts.count("reinforced"),
            "promoted": moved.get("promote", {}).get("accepted", 0),
            "decayed": sum(moved.get("decay", {}).values())}


def _mine_line(data: dict) -> str:
    if data.get("message"):
        return "mine: no observations yet"
    acts = [e["action"] for e in data["lessons"]]
    skipped = sum(a.startswith("skipped") for a in acts)  # "skipped (rejected)" and the like
    return (f"mine: {len(acts)} lesson(s) ({acts.count('created')} created, "
            f"{acts.count('reinforced')} reinforced, {skipped} skipped) from "
            f"{data['observations_read']} new observation(s)")


def _compact_line(data: dict) -> str:
    if data["compacted"] or (data["dropped"] and not data["reason"]):
        return (f"compact: {data['dropped']} observation(s) older than {data['retention_days']} "
                f"days left the log ({data['dropped_bytes']} bytes; {data['kept']} kept)")
    return f"compact: nothing dropped ({data['reason']})"


def render(data: dict) -> List[str]:
    """One line per step that ran, or the reason nothing ran."""
    if data["skipped"] == BUSY:
        return [f"maintain: {BUSY}; skipped"]
    if data["skipped"]:
        return [f"maintain: skipped: {data['skipped']}"]
    lines = []
    steps = data["steps"]
    if "mine" in steps:
        from . import reinforce
        lines.append(_mine_line(steps["mine"]))
        lines.append("reinforce: " + reinforce.render(steps["reinforce"])[0])
        lines.append(_compact_line(steps["compact"]))
    else:
        lines.append("mine, reinforce: skipped (nothing observed since the last run)")
    lines += [transitions.summary(steps[step]) for step in transitions.STEPS]
    if data["dry_run"]:
        lines.append("dry run: nothing written")
    elif data["state_written"]:
        lines.append(f"state: {data['state']}")
    return lines
