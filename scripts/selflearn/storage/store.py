"""Append-only JSONL files: locked appends, tolerant reads, atomic rewrites.

Invariants: a record is one line, appended with a single ``write()`` under an
exclusive ``flock`` on the file; lines are never edited in place, and the
latest line per id wins when folded. Readers report bad lines instead of
skipping them silently; only ``repair`` removes a line, after copying it to
``quarantine/``. Imported by the hook path: ``fcntl``,
``fastjson`` and ``posixfs`` (not ``os``, which costs the hook a millisecond).
"""

import fcntl

from . import fastjson
from . import posixfs as fs


def encode(record: dict) -> bytes:
    """One record as one UTF-8 line; unpaired surrogates become U+FFFD."""
    return (fastjson.dumps(record) + "\n").encode("utf-8", "replace")


def append(path: str, records: list, durable: bool = False) -> None:
    """Append ``records`` in one ``write()`` under an exclusive lock.

    A torn last line left by a crashed writer is closed with a newline first,
    so it stays a separate (quarantinable) line and the new records stay whole.
    """
    if records:
        append_bytes(path, b"".join(encode(r) for r in records), durable)


def append_bytes(path: str, data: bytes, durable: bool = False) -> None:
    """Append already-encoded lines in one ``write()`` under the file's lock; a file (and
    folder) this creates is private to its owner (0600, 0700) whatever the umask."""
    fs.makedirs(fs.dirname(path) or ".", fs.PRIVATE_DIR)
    while True:
        fd = fs.open_fd(path, fs.O_RDWR | fs.O_APPEND | fs.O_CREAT, fs.PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _same_file(fd, path):
                continue  # repair replaced the file while we waited: reopen it
            st = fs.fstat(fd)
            size = st.st_size
            if size == 0 and st.st_mode & 0o777 != fs.PRIVATE_FILE:
                fs.fchmod(fd, fs.PRIVATE_FILE)  # just created under a strict or odd umask
            out = data if size == 0 or fs.pread(fd, 1, size - 1) == b"\n" else b"\n" + data
            _write_all(fd, out)
            if durable:
                fs.fsync(fd)
            return
        finally:
            fs.close(fd)


def _same_file(fd: int, path: str) -> bool:
    try:
        return fs.stat(path).st_ino == fs.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[fs.write(fd, view):]


class Problem:
    """A line that could not be read: where it is, why, and its raw bytes."""

    __slots__ = ("path", "line", "reason", "raw")

    def __init__(self, path: str, line: int, reason: str, raw: bytes):
        self.path, self.line, self.reason, self.raw = path, line, reason, raw

    def __str__(self) -> str:
        return f"{fs.basename(self.path)}:{self.line}: {self.reason}"


def read(path: str, wanted=None):
    """All records of a JSONL file and the lines that failed, in file order.

    ``wanted(raw line) -> bool``, when given, is a byte-level prefilter: a line it
    refuses is neither parsed nor reported (cheap reads of a few kinds of record).
    """
    records, problems = [], []
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return records, problems
    lines = data.split(b"\n")
    last = len(lines) - 1  # the piece after the final newline ("" when whole)
    import gc
    collecting = gc.isenabled()
    gc.disable()  # millions of fresh dicts would trigger full collections: superlinear
    try:
        for number, raw in enumerate(lines, 1):
            if not raw.strip() or (wanted is not None and not wanted(raw)):
                continue
            record, reason = parse_line(raw, number - 1 == last)
            if reason:
                problems.append(Problem(path, number, reason, raw))
            else:
                records.append(record)
    finally:
        if collecting:
            gc.enable()
    return records, problems


def parse_line(raw: bytes, torn: bool):
    """``(record, "")`` for a readable line, else ``(None, why not)``; ``torn``: the
    line is the piece after the file's last newline."""
    try:
        record = fastjson.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except ValueError as exc:
        return None, "torn last line (no newline)" if torn else f"not JSON ({exc})"
    return (record, "") if isinstance(record, dict) else (None, "not a JSON object")


def fold(records: list, key: str = "id") -> dict:
    """Latest line per id wins; a later partial line updates only its keys.

    Each folded record gains ``_versions`` and ``_first_ts`` (its creation time).
    """
    out: dict = {}
    for record in records:
        rid = record.get(key)
        if not isinstance(rid, str) or not rid:
            continue
        prev = out.get(rid)
        if prev is None:
            merged = dict(record)
            merged["_versions"] = 1
            merged["_first_ts"] = record.get("ts", "")
        else:
            merged = {**prev, **record}
            merged["_versions"] = prev["_versions"] + 1
            merged["_first_ts"] = prev["_first_ts"]
        out[rid] = merged
    return out


def atomic_write(path: str, content, private: bool = True) -> None:
    """Replace ``path`` with ``content`` (str or bytes) through a temp file beside it.

    ``private`` (store files): the file is 0600 and a folder this creates 0700, whatever
    the umask; files meant for the repository (guidance, skills) pass False.
    """
    folder = fs.dirname(path) or "."
    fs.makedirs(folder, fs.PRIVATE_DIR if private else 0o777)
    tmp = fs.join(folder, f".{fs.basename(path)}.{fs.getpid()}.tmp")
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        if fs.exists(tmp):
            fs.unlink(tmp)
        fd = fs.open_fd(tmp, fs.O_RDWR | fs.O_CREAT | fs.O_EXCL,
                        fs.PRIVATE_FILE if private else 0o666)
        if private:
            fs.fchmod(fd, fs.PRIVATE_FILE)
        with open(fd, "wb", closefd=True) as fh:
            fh.write(data)
            fh.flush()
            fs.fsync(fh.fileno())
        fs.replace(tmp, path)
    finally:
        if fs.exists(tmp):
            fs.unlink(tmp)


def quarantine(path: str, qdir: str, stamp: str) -> list:
    """Move unreadable lines of ``path`` to ``qdir/<file>.<stamp>.jsonl``.

    Done under the file's lock and re-checked there, so a line a live writer
    was still finishing is never taken for torn. Each moved line keeps its
    number, reason and raw text. Returns the problems moved.
    """
    fd = fs.open_fd(path, fs.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        problems = read(path)[1]
        if not problems:
            return []
        target = fs.join(qdir, f"{fs.basename(path)}.{stamp}.jsonl")
        append(target, [{"file": fs.basename(path), "line": p.line, "reason": p.reason,
                         "raw": p.raw.decode("utf-8", "backslashreplace")} for p in problems],
               durable=True)
        numbers = {p.line for p in problems}
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        kept = [line for n, line in enumerate(lines, 1) if n not in numbers and line.strip()]
        atomic_write(path, b"".join(line + b"\n" for line in kept))
        return problems
    finally:
        fs.close(fd)
