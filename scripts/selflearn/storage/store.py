"""Append-only JSONL files: locked appends, tolerant reads, atomic rewrites.

Invariants: nothing is written through a link: every write first checks the store's
folders from ``.agent-skills`` down and the file itself (``guard``), and opens with
``O_NOFOLLOW``. A record is one line, appended with a single ``write()`` under an
exclusive ``flock`` on the file; lines are never edited in place (a failed append is
cut back to where it began; ``append_all`` does that across files), and the latest
line per id wins when folded. Readers report bad lines (unparsable, or refused by the
caller's ``check``) instead of skipping them silently; only ``repair`` removes a line,
after copying its bytes to ``quarantine/``. Imported by the hook path: ``fcntl``,
``fastjson`` and ``posixfs`` (``errors`` only on an error; not ``os``, which costs the hook a
millisecond).
"""

import fcntl

from . import fastjson
from . import posixfs as fs

TAIL = 64 * 1024  # bytes an ``unless`` check sees: the last few dozen records
STORE_TOP = ".agent-skills"  # the first folder of a store whose links are never followed


def guard(path: str, writing: bool = True, below: str = "") -> None:
    """Refuse ``path`` when it, or a folder of the store above it, is a symbolic link, or,
    for a write, when it is a file with other hard links.

    Why: a repository can commit ``.agent-skills/…/observations.jsonl`` as a link to a
    shell rc file, and every hook would then append a command line to it. The folders
    checked run from ``.agent-skills`` down (a store named by a variable: its own folder),
    never above it: the repository's own path is the user's. ``below`` (a repository file:
    the folder its caller already trusts, e.g. its own folder) checks only what lies under
    it. What does not exist yet is created as a real folder or file."""
    parts = path.split("/")
    if below:
        top = len(below.rstrip("/").split("/"))
    else:
        top = parts.index(STORE_TOP) if STORE_TOP in parts else max(len(parts) - 2, 0)
    for end in range(top + 1, len(parts) + 1):
        here = "/".join(parts[:end])
        if not here:
            continue
        try:
            st = fs.lstat(here)
        except FileNotFoundError:
            return
        if st.st_mode & 0o170000 == 0o120000:
            from .errors import LinkedPath  # (loaded on the error only: the hook path is lean)
            raise LinkedPath(f"{here} is a symbolic link (to {fs.readlink(here)}); nothing is "
                             f"written through a link{'' if below else ' in the store'}: "
                             "remove the link and run again")
        if writing and end == len(parts) and st.st_nlink > 1 and \
                st.st_mode & 0o170000 == 0o100000:
            from .errors import LinkedPath
            raise LinkedPath(f"{here} has {st.st_nlink} hard links; nothing is written to a "
                             f"{'' if below else 'store '}file shared with another path: make "
                             "it a file of its own (cp FILE FILE.new && mv FILE.new FILE) and "
                             "run again")


def encode(record: dict) -> bytes:
    """One record as one UTF-8 line; unpaired surrogates become U+FFFD."""
    return (fastjson.dumps(record) + "\n").encode("utf-8", "replace")


LOCK_WAIT = 5.0  # seconds a writer waits for another one's lock before it gives up


def append(path: str, records: list, durable: bool = False) -> None:
    """Append ``records`` in one ``write()`` under an exclusive lock.

    A torn last line left by a crashed writer is closed with a newline first,
    so it stays a separate (quarantinable) line and the new records stay whole.
    """
    if records:
        append_bytes(path, b"".join(encode(r) for r in records), durable)


def append_bytes(path: str, data: bytes, durable: bool = False, unless=None) -> bool:
    """Append already-encoded lines in one ``write()`` under the file's lock; a failed
    write (full disk, ``ulimit -f``) is cut back, so the file is as it was. A file (and
    folder) this creates is private to its owner (0600, 0700) whatever the umask.

    ``unless(tail)``, given the file's last ``TAIL`` bytes under the same lock,
    vetoes the append when it returns true (two racing writers of the same
    event store it once). Returns whether ``data`` was written.
    """
    guard(path)
    fs.makedirs(fs.dirname(path) or ".", fs.PRIVATE_DIR)
    while True:
        fd = fs.open_fd(path, fs.O_RDWR | fs.O_APPEND | fs.O_CREAT | fs.O_NOFOLLOW,
                        fs.PRIVATE_FILE)
        try:
            lock(fd, path)
            if not _same_file(fd, path):
                continue  # repair replaced the file while we waited: reopen it
            st = fs.fstat(fd)
            size = st.st_size
            if size == 0 and st.st_mode & 0o777 != fs.PRIVATE_FILE:
                fs.fchmod(fd, fs.PRIVATE_FILE)  # just created under a strict or odd umask
            if unless is not None and size and unless(fs.pread(fd, min(size, TAIL), max(0, size - TAIL))):
                return False
            out = data if size == 0 or fs.pread(fd, 1, size - 1) == b"\n" else b"\n" + data
            try:
                _write_all(fd, out)
            except OSError:
                fs.ftruncate(fd, size)  # a full disk leaves no torn line behind
                raise
            if durable:
                fs.fsync(fd)
            return True
        finally:
            fs.close(fd)


def append_all(writes: list, durable: bool = True) -> None:
    """Append to several files all or nothing: ``writes`` is ``[(path, records)]``.

    Every file is opened and locked first (in path order, so two of these never deadlock;
    single appends take one lock), its size noted, then the lines are written in the
    order given. If any write fails (full disk, file-size limit), every file is cut back
    to its noted size before the error goes on: no other writer can have appended in
    between, because we hold all the locks. A crash half way leaves what ``repair`` reads:
    whole lines of the files written so far (callers write referenced records first).
    """
    writes = [(p, b"".join(encode(r) for r in recs)) for p, recs in writes if recs]
    held: dict = {}
    try:
        for path in sorted({p for p, _ in writes}):
            held[path] = _locked(path)
        done: list = []
        try:
            for path, data in writes:
                fd, size = held[path], fs.fstat(held[path]).st_size
                if path not in (d[0] for d in done):
                    done.append((path, size))
                tail = size == 0 or fs.pread(fd, 1, size - 1) == b"\n"
                _write_all(fd, data if tail else b"\n" + data)
            for path, _ in done:
                if durable:
                    fs.fsync(held[path])
        except BaseException:
            for path, size in done:
                fs.ftruncate(held[path], size)
            raise
    finally:
        for fd in held.values():
            fs.close(fd)


def _locked(path: str) -> int:
    """An append descriptor of ``path`` holding its exclusive lock (reopened if replaced);
    a file or folder this creates is private (0600, 0700) whatever the umask."""
    guard(path)
    fs.makedirs(fs.dirname(path) or ".", fs.PRIVATE_DIR)
    while True:
        fd = fs.open_fd(path, fs.O_RDWR | fs.O_APPEND | fs.O_CREAT | fs.O_NOFOLLOW,
                        fs.PRIVATE_FILE)
        try:
            lock(fd, path)
        except BaseException:
            fs.close(fd)
            raise
        if _same_file(fd, path):
            st = fs.fstat(fd)
            if st.st_size == 0 and st.st_mode & 0o777 != fs.PRIVATE_FILE:
                fs.fchmod(fd, fs.PRIVATE_FILE)  # just created under a strict or odd umask
            return fd
        fs.close(fd)


def lock(fd: int, path: str) -> None:
    """Take ``path``'s exclusive lock on ``fd``, waiting at most ``LOCK_WAIT`` seconds for
    another writer (a hung process must not hang every hook and command behind it): then one
    line saying so, and nothing is written."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import time
    deadline, delay = time.monotonic() + LOCK_WAIT, 0.005
    while True:
        time.sleep(delay)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                from .errors import SelfLearningError
                raise SelfLearningError(
                    f"{path} is locked by another process for more than {LOCK_WAIT:g} s; "
                    "nothing was written; run the command again once it is done") from None
        delay = min(delay * 2, 0.25)


def _same_file(fd: int, path: str) -> bool:
    try:
        return fs.stat(path).st_ino == fs.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[fs.write(fd, view):]


NEWER = "record format v"  # = model.NEWER: a line from a newer format is not damage


class Problem:
    """A line that could not be read: where it is, why, and its raw bytes."""

    __slots__ = ("path", "line", "reason", "raw")

    def __init__(self, path: str, line: int, reason: str, raw: bytes):
        self.path, self.line, self.reason, self.raw = path, line, reason, raw

    @property
    def newer(self) -> bool:
        """Written by a newer format: reported, never quarantined."""
        return self.reason.startswith(NEWER)

    def __str__(self) -> str:
        return f"{fs.basename(self.path)}:{self.line}: {self.reason}"


def read(path: str, wanted=None, check=None):
    """All records of a JSONL file and the lines that failed, in file order.

    ``wanted(raw line) -> bool``, when given, is a byte-level prefilter: a line it
    refuses is neither parsed nor reported (cheap reads of a few kinds of record).
    ``check(record) -> why or None`` turns a parsed line of the wrong shape into a problem.
    A UTF-8 byte order mark before the first line and CR before a newline are ignored.
    """
    records, problems = [], []
    guard(path, writing=False)  # a linked store file is refused, not read as if it were ours
    data = read_bytes(path)
    if data is None:
        return records, problems
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
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
            if not reason and check is not None:
                reason = check(record)
            if reason:
                problems.append(Problem(path, number, reason, raw))
            else:
                records.append(record)
    finally:
        if collecting:
            gc.enable()
    return records, problems


def read_bytes(path: str):
    """The whole file, or None when it does not exist; a folder or a device is an error."""
    try:
        fd = fs.open_fd(path, fs.O_RDONLY | fs.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        kind = fs.kind_of(fs.fstat(fd).st_mode)
        if kind != "file":
            raise not_a_file(path, kind)
        chunks = []
        while True:
            chunk = fs.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        fs.close(fd)


def read_input(path: str, command: str, limit: int = -1) -> bytes:
    """A file argument's bytes (up to ``limit``); a FIFO, device or folder is refused at once."""
    from .errors import UsageError
    try:
        fd = fs.open_fd(path, fs.O_RDONLY | fs.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"{command}: cannot read {path}: {exc.strerror}") from None
    try:
        kind = fs.kind_of(fs.fstat(fd).st_mode)
        if kind != "file":
            raise UsageError(f"{command}: {path} is a {kind}; give a regular file")
        chunks, left = [], limit
        while left != 0:
            chunk = fs.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    finally:
        fs.close(fd)


def not_a_file(path: str, kind: str):
    """A store file that is a folder, FIFO or device: one line naming it and the fix."""
    from .errors import SelfLearningError
    return SelfLearningError(f"{path} is a {kind}, not a regular file; move it away "
                             f"(e.g. rename it to {fs.basename(path)}.bak) and run the command "
                             "again")


def parse_line(raw: bytes, torn: bool):
    """``(record, "")`` for a readable line, else ``(None, why not)``; ``torn``: the
    line is the piece after the file's last newline."""
    try:
        record = fastjson.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, "torn last line (no newline)" if torn else f"not JSON ({exc})"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    if b"\\u" in raw and _lone_surrogate(record):
        return None, "holds a lone surrogate (a \\ud800-\\udfff escape without its pair)"
    return record, ""


def _lone_surrogate(record: dict) -> bool:
    from .content import lone_surrogate  # only for a line with an escape: not on the hook path
    return lone_surrogate(record)


def fold(records: list, key: str = "id") -> dict:
    """Latest line per id wins; a later partial line updates only its keys.

    Each folded record gains ``_versions`` and ``_first_ts`` (its creation time).
    """
    out: dict = {}
    for record in records:
        rid = record.get(key)
        if not isinstance(rid, str) or not rid:
            continue
        out[rid] = merge(out.get(rid), record)
    return out


def merge(prev, record: dict) -> dict:
    """One line folded onto the version before it (None for the first line of an id)."""
    if prev is None:
        merged = dict(record)
        merged["_versions"] = 1
        merged["_first_ts"] = record.get("ts", "")
    else:
        merged = {**prev, **record}
        merged["_versions"] = prev["_versions"] + 1
        merged["_first_ts"] = prev["_first_ts"]
    return merged


def atomic_write(path: str, content, private: bool = True) -> None:
    """Replace ``path`` with ``content`` (str or bytes) through a temp file beside it.

    ``private`` (store files): the file is 0600 and a folder this creates 0700, whatever
    the umask, and a link in its place or above it is refused (``guard``); files meant for
    the repository (guidance, skills) pass False: their callers check the folders above
    (each knows its repository), and the file itself is refused when it is a link or has
    other hard links, which a replacement would silently cut off from it.
    """
    guard(path, below="" if private else fs.dirname(path))
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


def _quarantined(path: str, problem: Problem) -> dict:
    """A quarantine line: where the line was, why, and its bytes (base64 when not UTF-8)."""
    entry = {"file": fs.basename(path), "line": problem.line, "reason": problem.reason}
    try:
        entry["raw"] = problem.raw.decode("utf-8")
    except UnicodeDecodeError:
        import binascii
        entry["raw_base64"] = binascii.b2a_base64(problem.raw, newline=False).decode("ascii")
    return entry


def quarantine(path: str, qdir: str, stamp: str, check=None) -> list:
    """Move unreadable lines of ``path`` to ``qdir/<file>.<stamp>.jsonl``.

    Done under the file's lock and re-checked there, so a line a live writer
    was still finishing is never taken for torn. Each moved line keeps its
    number, reason and raw text. Returns the problems moved.
    """
    guard(path)
    fd = fs.open_fd(path, fs.O_RDWR | fs.O_NOFOLLOW)
    try:
        lock(fd, path)
        problems = [p for p in read(path, check=check)[1] if not p.newer]
        if not problems:
            return []
        target = fs.join(qdir, f"{fs.basename(path)}.{stamp}.jsonl")
        append(target, [_quarantined(path, p) for p in problems], durable=True)
        numbers = {p.line for p in problems}
        lines = (read_bytes(path) or b"").split(b"\n")
        kept = [line for n, line in enumerate(lines, 1) if n not in numbers and line.strip()]
        atomic_write(path, b"".join(line + b"\n" for line in kept))
        return problems
    finally:
        fs.close(fd)
