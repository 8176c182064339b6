"""Imported stores: a project store that git tracks came from someone else's commit.

Owns telling whether git tracks a store folder (the repository's index names a file under
it) and the local acceptances of its cards, kept outside the repository in the user's
global store (``imported_accepted.jsonl``: ``{v, ts, store, id, digest}``), where a commit
cannot forge them. A card of a tracked store counts as ``imported`` (listed, never injected,
promoted or exported) until a local person accepts that exact content (``screen.digest``).
Imports only storage modules; must not import any stage above.
"""

import mmap
import os
from typing import Dict, Optional, Tuple

from . import model, paths, store
from .content import digest

ACCEPTED_FILE = "imported_accepted.jsonl"
_CACHE: Dict[tuple, bool] = {}


def _git_dir(repo_root: str) -> Optional[str]:
    dot = os.path.join(repo_root, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8") as fh:
            line = fh.readline().strip()
    except OSError:
        return None
    if line.startswith("gitdir:"):
        target = line[len("gitdir:"):].strip()
        return os.path.normpath(os.path.join(repo_root, target))
    return None


def repo_of(store_root: str) -> Optional[str]:
    """The repository holding ``store_root`` (nearest parent with ``.git``), or None."""
    here = os.path.dirname(os.path.abspath(store_root))
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def tracked(store_root: str) -> bool:
    """True when the repository's git index holds a file inside ``store_root`` (the answer
    is kept while the index file is unchanged)."""
    store_root = os.path.abspath(store_root)
    repo = repo_of(store_root)
    git_dir = repo and _git_dir(repo)
    index = git_dir and os.path.join(git_dir, "index")
    try:
        st = os.stat(index) if index else None
    except OSError:
        st = None
    if st is None:
        return False
    key = (store_root, st.st_mtime_ns, st.st_size, st.st_ino)
    if key not in _CACHE:
        _CACHE[key] = _tracked(store_root, repo, index)
    return _CACHE[key]


def _tracked(store_root: str, repo: str, index: str) -> bool:
    rel = os.path.relpath(store_root, repo).replace(os.sep, "/").encode() + b"/"
    with open(index, "rb") as fh:
        head = fh.read(8)
        if head[:4] != b"DIRC":
            return False
        if int.from_bytes(head[4:8], "big") >= 4:  # paths are prefix-compressed: ask git
            return _ls_files(repo, rel.decode())
        if os.fstat(fh.fileno()).st_size <= 8:
            return False
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(rel) != -1


def _ls_files(repo: str, rel: str) -> bool:
    import subprocess
    try:
        done = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--", rel],
                              capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return True  # cannot tell: treat the store as someone else's
    return bool(done.stdout.strip(b"\0"))


def _accepted_path(user: str) -> str:
    return os.path.join(paths.global_store(user), ACCEPTED_FILE)


def acceptances(store_root: str, user: str) -> Dict[str, str]:
    """Card id -> digest a local person accepted, for this store."""
    records, _ = store.read(_accepted_path(user))
    key = os.path.abspath(store_root)
    return {r["id"]: r["digest"] for r in records if r.get("store") == key
            and isinstance(r.get("id"), str) and isinstance(r.get("digest"), str)}


def accept(store_root: str, user: str, card: dict) -> None:
    """Record that a local person accepted this content of an imported card."""
    store.append(_accepted_path(user), [{"v": model.SCHEMA_VERSION, "ts": model.iso(),
                                         "store": os.path.abspath(store_root), "id": card["id"],
                                         "digest": digest(card)}], durable=True)


def mark(cards: Dict[str, dict], store_root: str, user: str) -> Tuple[int, int]:
    """In a tracked store, mark every card ``_tracked`` and those no local person accepted
    ``_imported`` (in memory only); returns (imported, accepted locally)."""
    if not cards or not tracked(store_root):
        return 0, 0
    ok = acceptances(store_root, user)
    imported = 0
    for card in cards.values():
        card["_tracked"] = True  # provenance ``imported``; ``origin`` keeps what the line says
        if ok.get(card["id"]) != digest(card):
            card["_imported"] = True
            imported += 1
    return imported, len(cards) - imported
