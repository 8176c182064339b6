"""Learning that runs by itself: when the hooks start ``maintain``, and starting it unwaited.

The hook calls ``due`` after a turn ends (``stop``), a session ends and a session starts.
It reads only ``maintain_state.json`` (what the last run saw and when) and the size of
``observations.jsonl``, and says why learning should run now, or "":

- a session ended, or one starts (a catch-up for a session whose end was never seen): when
  anything was observed since the last run;
- a turn ended: when the observations since the last run hold a failure or a refusal (what
  the miners learn from) and the last run is ``STOP_EVERY`` seconds old.

Nothing else paces it: a lesson learned in one session is there for the next, minutes
later. ``spawn`` starts ``maintain --auto WHY`` detached (its own session, stdin, stdout and
stderr on /dev/null), so the hook returns at once; a run that finds another one running
skips (``maintain.lock``). ``SELF_LEARNING_LEARN``: ``background`` (default), ``sync``
(the hook waits: tests and bench/replay.py), ``off``.
On the hook path after those events only: imports ``posixfs``, ``fastjson``, ``store``.
"""

import posix

from ..storage import fastjson
from ..storage import posixfs as fs

STATE_FILE = "maintain_state.json"   # = maintain.STATE_FILE (maintain imports much more)
LOCK_FILE = "maintain.lock"          # = maintain.LOCK_FILE
OBSERVATIONS = "observations.jsonl"
STOP_EVERY = 120                     # seconds between runs started at the end of a turn
SCAN_NEW = 512 * 1024                # bytes of new observations looked at for a failure
LEARNS_FROM = (b'"tool_failure"', b'"permission_denied"', b'"denial"')
MODES = ("background", "sync", "off")


def mode() -> str:
    value = (fs.env("SELF_LEARNING_LEARN") or "background").strip().lower()
    return value if value in MODES else "background"


def _now() -> float:
    if fs.env("SELF_LEARNING_NOW"):
        from ..storage import model
        return model.now()
    import time
    return time.time()


def _state(store_dir: str) -> dict:
    try:
        fd = fs.open_fd(fs.join(store_dir, STATE_FILE), fs.O_RDONLY | fs.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        raw = fs.read(fd, 1 << 20)
    finally:
        fs.close(fd)
    try:
        state = fastjson.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _seen_size(state: dict) -> int:
    seen = state.get("seen")
    obs = seen.get("observations") if isinstance(seen, dict) else None
    size = obs.get("size") if isinstance(obs, dict) else 0
    return size if isinstance(size, int) else 0


def _new_bytes(path: str, start: int) -> bytes:
    """The observations appended since ``start`` (the last ``SCAN_NEW`` bytes of them)."""
    try:
        fd = fs.open_fd(path, fs.O_RDONLY | fs.O_NOFOLLOW)
    except OSError:
        return b""
    try:
        size = fs.fstat(fd).st_size
        if size < start:
            start = 0  # replaced or compacted since: all of it is new
        begin = max(start, size - SCAN_NEW)
        return fs.pread(fd, size - begin, begin)
    finally:
        fs.close(fd)


def _others(new: bytes, session_id: str) -> bool:
    """Whether ``new`` holds a line of a session other than ``session_id``."""
    mine = b'"session_id": ' + fastjson.dumps(session_id).encode("utf-8")
    return new.count(b'"session_id": ') > new.count(mine)


def due(event: str, store_dir: str, session_id: str = "") -> str:
    """Why learning should run after ``event`` of session ``session_id`` ("" when not)."""
    if mode() == "off" or event not in ("stop", "session_end", "session_start"):
        return ""
    state = _state(store_dir)
    new = _new_bytes(fs.join(store_dir, OBSERVATIONS), _seen_size(state))
    if not new.strip() or (event == "session_start" and not _others(new, session_id)):
        return ""  # a catch-up is for what earlier sessions left, not this one's start
    if event == "stop":
        last = state.get("last_run_epoch")
        if isinstance(last, (int, float)) and _now() - last < STOP_EVERY:
            return ""
        if not any(marker in new for marker in LEARNS_FROM):
            return ""
    return {"stop": "turn-end", "session_end": "session-end",
            "session_start": "catch-up"}[event]


def entry_point() -> str:
    """``scripts/self_learning.py`` beside this package."""
    here = fs.abspath(__file__)
    return fs.join(fs.dirname(fs.dirname(fs.dirname(here))), "self_learning.py")


def spawn(repo_root: str, why: str) -> None:
    """Start ``maintain --auto WHY`` in the background, detached from the agent's hook."""
    import sys
    argv = [sys.executable, "-S", entry_point(), "maintain", "--auto", why,
            "--repo-root", repo_root]
    devnull = "/dev/null"
    actions = [(posix.POSIX_SPAWN_OPEN, 0, devnull, fs.O_RDONLY, 0),
               (posix.POSIX_SPAWN_OPEN, 1, devnull, posix.O_WRONLY, 0),
               (posix.POSIX_SPAWN_OPEN, 2, devnull, posix.O_WRONLY, 0)]
    try:
        posix.posix_spawn(sys.executable, argv, posix.environ, file_actions=actions, setsid=True)
    except (AttributeError, NotImplementedError, TypeError):  # no posix_spawn with setsid
        _fork(argv, devnull)


def _fork(argv: list, devnull: str) -> None:  # pragma: no cover - platforms without setsid spawn
    """The same with fork: the grandchild runs, detached; the child exits at once."""
    pid = posix.fork()
    if pid:
        posix.waitpid(pid, 0)
        return
    try:
        posix.setsid()
        if posix.fork():
            posix._exit(0)
        fd = posix.open(devnull, posix.O_RDWR)
        for target in (0, 1, 2):
            posix.dup2(fd, target)
        posix.execv(argv[0], argv)
    finally:
        posix._exit(1)
