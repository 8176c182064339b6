"""Path, file and environment helpers built on the builtin ``posix`` module.

Why: ``import os`` costs about 1 ms, a seventh of the interpreter's own
start-up, and the hook path needs only a handful of its functions, all of
which ``posix`` (always loaded) already provides. The tool is POSIX-only
(it locks with ``flock``), so paths are ``/``-separated. Each helper behaves
like its ``os``/``os.path`` namesake; tests compare them on random paths.
"""

import posix

O_RDONLY, O_RDWR, O_APPEND, O_CREAT = posix.O_RDONLY, posix.O_RDWR, posix.O_APPEND, posix.O_CREAT
O_EXCL = posix.O_EXCL
O_NONBLOCK = posix.O_NONBLOCK
O_NOFOLLOW = posix.O_NOFOLLOW  # a store file is never opened through a link
lstat, readlink = posix.lstat, posix.readlink
open_fd, close, write, pread, fstat, stat, fsync = (
    posix.open, posix.close, posix.write, posix.pread, posix.fstat, posix.stat, posix.fsync)
read, ftruncate = posix.read, posix.ftruncate
urandom, getpid, replace, unlink = posix.urandom, posix.getpid, posix.replace, posix.unlink
chmod, fchmod = posix.chmod, posix.fchmod
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600  # store folders and files, whatever the umask


def env(name: str, default=None):
    """``os.environ.get`` without ``os``."""
    value = posix.environ.get(name.encode())
    return default if value is None else value.decode("utf-8", "surrogateescape")


def getcwd() -> str:
    return posix.getcwd()


def join(first: str, *rest: str) -> str:
    path = first
    for part in rest:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def dirname(path: str) -> str:
    head = path[: path.rfind("/") + 1]
    stripped = head.rstrip("/")
    return stripped if stripped else head


def basename(path: str) -> str:
    return path[path.rfind("/") + 1:]


def normpath(path: str) -> str:
    if not path:
        return "."
    lead = "//" if path.startswith("//") and not path.startswith("///") else (
        "/" if path.startswith("/") else "")
    parts: list = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not lead and (not parts or parts[-1] == "..")):
            parts.append(part)
        elif parts:
            parts.pop()
    return (lead + "/".join(parts)) or "."


def abspath(path: str) -> str:
    return normpath(path if path.startswith("/") else join(getcwd(), path))


def expanduser(path: str) -> str:
    if path != "~" and not path.startswith("~/"):
        return path
    home = env("HOME")
    if not home:
        import pwd  # rare: only without $HOME
        home = pwd.getpwuid(posix.getuid()).pw_dir
    return (home.rstrip("/") or "/") + path[1:]


def exists(path: str) -> bool:
    try:
        stat(path)
    except (OSError, ValueError):
        return False
    return True


def kind_of(mode: int) -> str:
    """``file``, ``folder``, or what else a ``st_mode`` names (a FIFO, a device...)."""
    return {0o100000: "file", 0o040000: "folder", 0o010000: "FIFO", 0o020000: "device",
            0o060000: "device", 0o140000: "socket", 0o120000: "symlink"}.get(
        mode & 0o170000, "special file")


def isdir(path: str) -> bool:
    try:
        return stat(path).st_mode & 0o170000 == 0o040000
    except (OSError, ValueError):
        return False


def makedirs(path: str, mode: int = 0o777) -> None:
    """``os.makedirs(path, mode, exist_ok=True)``: parents get the default mode; the leaf,
    when this call creates it, gets exactly ``mode`` whatever the umask."""
    if not path or isdir(path):
        return
    parent = dirname(path)
    if parent and parent != path:
        makedirs(parent)
    try:
        posix.mkdir(path, mode)
    except FileExistsError:
        if not isdir(path):
            raise
        return
    if mode != 0o777:
        chmod(path, mode)


def tail(path: str, limit: int) -> bytes:
    """The whole lines among the last ``limit`` bytes of a store file, never through a link
    (empty when there is none): what the hooks read of a log that only grows."""
    try:
        fd = open_fd(path, O_RDONLY | O_NOFOLLOW)
    except OSError:
        return b""
    try:
        size = fstat(fd).st_size
        start = max(0, size - limit)
        data = pread(fd, size - start, start)
    finally:
        close(fd)
    return data[data.find(b"\n") + 1:] if start else data
