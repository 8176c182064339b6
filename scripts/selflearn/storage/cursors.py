"""Cursors (checkpoints) of incremental readers (``mine``, ``ingest-transcripts``).

A reader remembers, per file, how far it read (offset, inode) and a digest of
the first bytes it read, so a later run continues where it stopped and starts
over when the file was replaced, shrank or was rewritten in place. The state
is one JSON file in the store, replaced atomically by its owner.
"""

import contextlib
import hashlib
import os
from . import fastjson, model, store
from .errors import UsageError
from . import posixfs as fs


def head(fh, size: int) -> str:
    """A digest of the file's first ``min(size, 256)`` bytes."""
    fh.seek(0)
    return hashlib.sha256(fh.read(min(size, 256))).hexdigest()[:16]


def load(path: str, section: str, command: str, redo: str) -> dict:
    """The saved state, or an empty one; a state that is not JSON is a one-line error.

    ``section`` names the dict the state must hold (``kinds``, ``files``);
    ``redo`` says what deleting the file does, for the error message.
    """
    try:
        raw = store.read_bytes(path)  # a FIFO or folder is an error, never a hang
        state = {} if raw is None else fastjson.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{command}: {path} is not JSON ({exc}); delete it to {redo}") from None
    if not isinstance(state, dict) or not isinstance(state.get(section), dict):
        return {"v": model.SCHEMA_VERSION, section: {}}
    return model.upgrade(state, path)


@contextlib.contextmanager
def exclusive(folder: str, enabled: bool = True):
    """Hold an exclusive lock on the store folder: two incremental runs at once
    would read the same bytes twice. A dry run (``enabled=False``) takes no lock."""
    if not enabled:
        yield
        return
    store.guard(fs.join(folder, "."))  # the folder itself must be no link
    fs.makedirs(folder, fs.PRIVATE_DIR)
    fd = os.open(folder, os.O_RDONLY)
    try:
        store.lock(fd, folder)  # bounded: a hung run must not hang every later one
        yield
    finally:
        os.close(fd)
