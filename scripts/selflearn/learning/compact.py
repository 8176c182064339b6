"""Compaction of ``observations.jsonl``: old lines every miner has read leave the log.

Owns the retention rule run by ``maintain``: an observation older than ``RETENTION_DAYS``
that lies before the lowest checkpoint in ``mine_state.json`` (so every miner has counted
it) is dropped; every other line keeps its bytes and order (unreadable ones too: they are
``repair``'s). Nothing is dropped until at least ``MIN_DROP_BYTES`` can go. The kept prefix
is written beside the log while hooks keep appending; only copying what they appended
meanwhile and the rename happen under the log's ``flock``. The miners' checkpoints move by
the bytes and lines removed, so mining stays incremental. Cards are never touched: lessons
keep their evidence ids and counts. Runs under the store lock. Must not import cli.
"""

import os
from typing import Optional

from ..storage import cursors, fastjson, model, store
from .mine_base import STATE_FILE

RETENTION_DAYS = 180          # observations younger than this always stay
MIN_DROP_BYTES = 4 << 20      # compact only when at least this many bytes can go


def compact(memory, dry_run: bool = False, min_drop: int = MIN_DROP_BYTES) -> dict:
    """Drop old, mined observations (or, dry, count them); report what went."""
    path, state_path = memory.path("observations"), memory.path(STATE_FILE)
    cutoff = model.iso(model.now() - RETENTION_DAYS * 86400)
    data = {"observations": path, "retention_days": RETENTION_DAYS, "cutoff": cutoff,
            "dropped": 0, "dropped_bytes": 0, "kept": 0, "compacted": False, "reason": None}
    if not os.path.exists(path):
        data["reason"] = "no observations"
        return data
    with cursors.exclusive(memory.root, enabled=not dry_run):
        state = cursors.load(state_path, "kinds", "maintain", "mine every observation again")
        with open(path, "rb") as fh:
            limit = _mined(state, fh)
            if limit is None:
                data["reason"] = "not every miner has a current checkpoint (run `mine`)"
                return data
            ino, size = os.fstat(fh.fileno()).st_ino, os.fstat(fh.fileno()).st_size
            kept, dropped_lines = _keep(fh.read(limit), cutoff, data)
            data["kept"] += sum(1 for _ in fh)  # the lines past the checkpoint all stay
        if data["dropped_bytes"] < min_drop:
            data["reason"] = f"{data['dropped_bytes']} bytes to drop < {min_drop}"
            return data
        if dry_run:
            return data
        if not _replace(path, ino, kept, limit, size):
            data["reason"] = "observations.jsonl was replaced meanwhile"
            return data
        _move_checkpoints(state, path, data["dropped_bytes"], dropped_lines)
        store.atomic_write(state_path, fastjson.dumps(state) + "\n")
        data["compacted"] = True
    return data


def _mined(state: dict, fh) -> Optional[int]:
    """The lowest checkpoint offset, when every miner's checkpoint is on this very file."""
    from .mine import MINERS
    kinds = state.get("kinds") or {}
    st = os.fstat(fh.fileno())
    if set(kinds) != set(MINERS):
        return None
    for cp in kinds.values():
        if not isinstance(cp, dict) or cp.get("inode") != st.st_ino or \
                not isinstance(cp.get("offset"), int) or cp["offset"] > st.st_size or \
                cp.get("head") != cursors.head(fh, cp["offset"]):
            return None
    fh.seek(0)
    return min(cp["offset"] for cp in kinds.values())


def _keep(prefix: bytes, cutoff: str, data: dict):
    """The lines of ``prefix`` to keep, and how many were dropped (counted in ``data``)."""
    kept, dropped = [], 0
    for raw in prefix.split(b"\n")[:-1] if prefix.endswith(b"\n") else prefix.split(b"\n"):
        record, reason = store.parse_line(raw, False) if raw.strip() else (None, "blank")
        if not reason and str(record.get("ts", "")) < cutoff:
            dropped += 1
            data["dropped_bytes"] += len(raw) + 1
            continue
        kept.append(raw + b"\n")
    data["dropped"], data["kept"] = dropped, len(kept)
    return b"".join(kept), dropped


def _replace(path: str, ino: int, kept: bytes, limit: int, size: int) -> bool:
    """Write ``kept`` + the log from ``limit`` on beside it, then swap it in under the lock."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.compact")
    store.guard(path)
    if os.path.lexists(tmp):
        os.unlink(tmp)  # a leftover (or a planted link): never written through
    try:
        with open(tmp, "xb") as out, open(path, "rb") as src:
            out.write(kept)
            src.seek(limit)
            out.write(src.read(size - limit))
            fd = os.open(path, os.O_RDWR)
            try:
                store.lock(fd, path)  # hooks wait only for the tail copy and rename
                if os.fstat(fd).st_ino != ino:
                    return False
                src.seek(size)
                out.write(src.read())
                out.flush()
                os.fsync(out.fileno())
                os.replace(tmp, path)
            finally:
                os.close(fd)
        return True
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _move_checkpoints(state: dict, path: str, dropped_bytes: int, dropped_lines: int) -> None:
    """Every miner's checkpoint, shifted onto the compacted file."""
    ino = os.stat(path).st_ino
    with open(path, "rb") as fh:
        for cp in state["kinds"].values():
            cp["offset"] -= dropped_bytes
            cp["line"] = max(0, cp.get("line", 0) - dropped_lines)
            cp["inode"] = ino
            cp["head"] = cursors.head(fh, cp["offset"])
