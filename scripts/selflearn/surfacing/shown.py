"""The surfacing log ``<store>/surfacings.jsonl``: what reached the agent, and when.

One line per output a hook or ``advice --session-id`` printed: ``{v, id (srf_…), ts,
session_id, agent, event, lesson_ids, chars}``, plus the tool call and observation a note was
shown with (``call``, ``obs``) or the episodes the end of a turn asked about (``episodes``).
Every hook that may print reads only the log's tail (``SCAN_BYTES``), so a lesson is said once
per session and a question asked once, at a cost that does not grow with the log.
"""

from ..storage import fastjson, store
from ..storage import posixfs as fs

FILE = "surfacings.jsonl"
SCAN_BYTES = 256 * 1024   # the tail read to find what a session was shown or asked


def stamp() -> str:
    """Now as ISO UTC; the fake clock (``SELF_LEARNING_NOW``) when it is set."""
    if fs.env("SELF_LEARNING_NOW"):
        from ..storage import model
        return model.iso()
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def append(path: str, session_id: str, agent: str, event: str, lesson_ids: list, chars: int,
           **extra) -> None:
    """One line for one output that reached the agent (locked, one write)."""
    when = stamp()
    store.append_bytes(path, store.encode(dict({
        "v": 1, "id": f"srf_{when.replace('-', '').replace(':', '')}_{fs.urandom(3).hex()}",
        "ts": when, "session_id": session_id, "agent": agent, "event": event,
        "lesson_ids": list(lesson_ids), "chars": chars}, **extra)))


def recent(path: str) -> bytes:
    """The log's latest whole lines (at most ``SCAN_BYTES``)."""
    return fs.tail(path, SCAN_BYTES)


def in_session(path: str, session_id: str, only: tuple = ()) -> set:
    """Lesson ids this session was shown since its latest session start (newest first scan),
    at the events ``only`` names when given.

    A session start (startup, resume, clear, compact) shows the workspace advice
    again, so what came before it no longer counts as in the agent's context.
    """
    if not session_id:
        return set()
    needle = fastjson.dumps(session_id).encode("utf-8")
    ids: set = set()
    for raw in reversed(recent(path).split(b"\n")):
        if needle not in raw:
            continue
        try:
            record = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(record, dict) or record.get("session_id") != session_id:
            continue
        if not only or record.get("event") in only:
            ids.update(i for i in record.get("lesson_ids") or [] if isinstance(i, str))
        if record.get("event") == "session_start":
            break
    return ids
