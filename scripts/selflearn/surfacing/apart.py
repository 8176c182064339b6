"""Part of a rebuild done in a second process: a forked child derives what one big file
yields into a scratch SQLite file of its own while this process goes on with the others;
its tables are then copied into the index, inside the rebuild's transaction.

A machine's second core halves the longest wait a store can cause (the first command after
the index is gone). Where ``os.fork`` is missing, the file is small, or the child fails for
any reason, the caller derives the part itself: the answers are the same either way. The
child touches nothing of its parent's (no connection, no buffered output) and leaves with
``os._exit``. Must not import storeindex (it hands the work in) or any stage above surfacing.
"""

import os
from typing import Callable, Iterable, Optional

try:
    import sqlite3
except ImportError:  # pragma: no cover - the index is off without it anyway
    sqlite3 = None

from ..storage import posixfs as fs

MIN_BYTES = 16 << 20   # a smaller file is read in this process: fork and copy cost more
SUFFIX = "-part"       # the scratch file: ``index.sqlite3-part``, private like the index


class Part:
    """A child at work: its process id and scratch file."""

    def __init__(self, pid: int, path: str):
        self.pid, self.path = pid, path


def start(path: str, size: int, work: Callable) -> Optional[Part]:
    """Fork a child that runs ``work(db)`` on a fresh scratch database at ``path``; None
    when the part is better done here (no fork, a small file, or forking failed)."""
    if size < MIN_BYTES or not hasattr(os, "fork") or \
            fs.env("SELF_LEARNING_INDEX_APART", "").strip().lower() in ("off", "0", "no"):
        return None
    discard(path)
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:  # pragma: no cover - runs in the child, which reports by its exit status
        status = 1
        try:
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, fs.PRIVATE_FILE))
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=OFF")  # scratch: a crash leaves nothing to keep
            db.execute("PRAGMA synchronous=OFF")
            db.execute("BEGIN")
            work(db)
            db.execute("COMMIT")
            db.close()
            status = 0
        except BaseException:
            pass
        finally:
            os._exit(status)
    return Part(pid, path)


def finish(part: Part, db, tables: Iterable[str]) -> bool:
    """Wait for the child and copy its ``tables`` into ``db``'s (empty) tables of the same
    shape; False when it failed, and the caller must do the part itself."""
    try:
        _, status = os.waitpid(part.pid, 0)
        if status != 0:
            return False
        # copied by SQLite itself: row by row through Python took six times as long
        db.execute("ATTACH DATABASE ? AS apart", (part.path,))
        for table in tables:
            db.execute(f"INSERT INTO main.{table} SELECT * FROM apart.{table}")
        return True
    finally:
        discard(part.path)  # the attached copy stays readable until ``detach``


def detach(db) -> None:
    """Let go of the scratch file ``finish`` attached, once the transaction it copied in has
    ended (SQLite keeps it locked until then)."""
    try:
        db.execute("DETACH DATABASE apart")
    except sqlite3.OperationalError:  # not attached: no child, or it failed
        pass


def discard(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
