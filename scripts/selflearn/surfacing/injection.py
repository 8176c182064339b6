"""The surfacing log ``<store>/surfacings.jsonl``, and advice injected by a hook.

One record per output that reached an agent: ``{v, id (srf_…), ts, session_id,
agent, event (session_start|prompt|advice), lesson_ids, chars}``; only what was
actually printed is logged, and nothing else is written while a hook runs.
``inject`` is the hook's side: on session start the workspace advice, on a
prompt the advice for its text minus what this session was already shown.
The session's earlier ids are read from the end of the log (at most
``SCAN_BYTES``), so a hook's cost does not grow with the log.
Must not import cli.
"""

from typing import Optional, Set

from ..storage import fastjson, model, store
from ..storage import posixfs as fs

SCAN_BYTES = 256 * 1024   # tail of surfacings.jsonl read to find what a session was shown
EVENTS = ("session_start", "prompt", "advice")


def new_record(session_id: str, agent: str, event: str, lesson_ids, chars: int) -> dict:
    stamp = model.iso()
    return {"v": model.SCHEMA_VERSION,
            "id": f"srf_{stamp.replace('-', '').replace(':', '')}_{fs.urandom(3).hex()}",
            "ts": stamp, "session_id": session_id, "agent": agent, "event": event,
            "lesson_ids": list(lesson_ids), "chars": chars}


def log(path: str, record: dict) -> None:
    """Append one surfacing (locked, one write)."""
    store.append_bytes(path, store.encode(record))


def _tail(path: str) -> list:
    """The whole lines in the last ``SCAN_BYTES`` of the file, oldest first."""
    try:
        fd = fs.open_fd(path, fs.O_RDONLY)
    except FileNotFoundError:
        return []
    try:
        size = fs.fstat(fd).st_size
        start = max(0, size - SCAN_BYTES)
        data = fs.pread(fd, size - start, start)
    finally:
        fs.close(fd)
    lines = data.split(b"\n")
    return lines[1:] if start else lines


def surfaced_in_session(path: str, session_id: str) -> Set[str]:
    """Lesson ids this session was shown since its latest session start (newest first scan).

    A session start (startup, resume, clear, compact) shows the workspace advice
    again, so what came before it no longer counts as in the agent's context.
    """
    if not session_id:
        return set()
    needle = fastjson.dumps(session_id).encode("utf-8")
    ids: Set[str] = set()
    for raw in reversed(_tail(path)):
        if needle not in raw:
            continue
        try:
            record = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(record, dict) or record.get("session_id") != session_id:
            continue
        ids.update(i for i in record.get("lesson_ids") or [] if isinstance(i, str))
        if record.get("event") == "session_start":
            break
    return ids


def _log_skipped(memory, agent: str, event: str) -> None:
    """One errors.jsonl line per injection that skipped store lines (``doctor`` shows it)."""
    first = memory.warnings[0]
    more = f" (and {len(memory.warnings) - 1} more)" if len(memory.warnings) > 1 else ""
    store.append(memory.path("errors.jsonl"), [{
        "v": 1, "ts": model.iso(), "where": "hook", "agent": agent, "event": event,
        "error": f"skipped store line {first}{more}"[:500]}])


def called(store_dir: str) -> Set[str]:
    """The lessons not yet accepted that the trigger table shows at the call they concern
    (an accepted one is a fact of the repository: session start may say it as well)."""
    from .jit import table
    out = set()
    for line in table(store_dir).split(b"\n"):
        at = line.find(b'"id": "')
        if at >= 0 and b'"accepted": true' not in line:
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
    seen = surfaced_in_session(memory.path("surfacings"), session) if event == "prompt" else set()
    # a lesson about a call not yet accepted waits for that call (surfacing.jit): here it
    # would be noise in every session that never makes the call
    seen = set(seen) | called(store_dir)
    data = advice.advise(memory, repo_root, query, conf["budget"], seen, shape)
    if memory.warnings:
        _log_skipped(memory, agent, event)
    if data["output"]:
        log(memory.path("surfacings"), new_record(
            session, agent, event, [i["id"] for i in data["items"]], data["chars"]))
    return data["output"]
