"""Imported stores: a project store that git tracks came from someone else's commit.

Owns telling whether git tracks a store folder (the repository's index names a file under
it), whether the team committed stores (``UNION_LINE`` in the repository's attributes), which
teammates' stores the repository holds, and the local acceptances of cards, kept outside the
repository in the user's global store (``imported_accepted.jsonl``: ``{v, ts, store, id,
digest}``), where a commit cannot forge them. A card of a tracked store counts as ``imported``
(listed, never injected, promoted or exported) until a local person accepts that exact content
(``screen.digest``); what a person writes into their own store here counts as accepted.
Imports only storage modules; must not import any stage above.
"""

import mmap
import os
from typing import Dict, List, Optional, Tuple

from . import model, paths, store
from .content import digest

ACCEPTED_FILE = "imported_accepted.jsonl"
# Stores are append-only JSONL: a merge of two branches keeps the lines of both (git's union).
UNION_LINE = "/" + "/".join(paths.STORE_PARTS) + "/*/*.jsonl merge=union"
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


def attribute_files(repo_root: str) -> List[str]:
    """Where git reads attributes for the whole repository: ``.gitattributes``, then the
    clone's own ``info/attributes`` (where a linked ``.gitattributes`` is not rewritten)."""
    git_dir = _git_dir(repo_root)
    return [os.path.join(repo_root, ".gitattributes")] + (
        [os.path.join(git_dir, "info", "attributes")] if git_dir else [])


def committed(store_root: str) -> bool:
    """The store is, or is meant to be, committed: git tracks it, or the repository merges
    stores as a union (``init --commit-store`` wrote ``UNION_LINE``)."""
    if tracked(store_root):
        return True
    repo = repo_of(store_root)
    for path in attribute_files(repo) if repo else []:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                if any(line.strip() == UNION_LINE for line in fh):
                    return True
        except OSError:
            continue
    return False


def teammates(repo_root: str, user: str) -> List[str]:
    """The store folders of other users that git tracks in ``repo_root`` (teammates'
    committed stores), in name order."""
    folder = os.path.join(repo_root, *paths.STORE_PARTS)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n != user
            and os.path.isdir(os.path.join(folder, n)) and tracked(os.path.join(folder, n))]


def _accepted_path(user: str) -> str:
    return os.path.join(paths.global_store(user), ACCEPTED_FILE)


def acceptances(store_root: str, user: str) -> Dict[str, Tuple[str, bool]]:
    """Card id -> (digest, written here) a local person accepted or wrote, for this store
    (the latest record per id)."""
    records, _ = store.read(_accepted_path(user))
    key = os.path.abspath(store_root)
    return {r["id"]: (r["digest"], r.get("written") is True) for r in records
            if r.get("store") == key and isinstance(r.get("id"), str)
            and isinstance(r.get("digest"), str)}


def accept(store_root: str, user: str, cards: List[dict], written: bool = False) -> None:
    """Record that a local person accepted this content of these cards (``written``: wrote
    it into their own store here)."""
    stamp, key = model.iso(), os.path.abspath(store_root)
    extra = {"written": True} if written else {}
    store.append(_accepted_path(user), [{"v": model.SCHEMA_VERSION, "ts": stamp, "store": key,
                                         "id": c["id"], "digest": digest(c), **extra}
                                        for c in cards], durable=True)


def mark(cards: Dict[str, dict], store_root: str, user: str) -> Tuple[int, int]:
    """In a tracked store, mark the cards that came with a commit ``_tracked`` and those no
    local person accepted ``_imported`` (in memory only); a card written here is neither.
    Returns (imported, accepted locally)."""
    if not cards or not tracked(store_root):
        return 0, 0
    ok = acceptances(store_root, user)
    imported = 0
    for card in cards.values():
        sign, written = ok.get(card["id"], ("", False))
        same = bool(sign) and sign == digest(card)  # a card nobody signed is hashed not at all
        if same and written:
            continue  # this person's own lesson, committed
        card["_tracked"] = True  # provenance ``imported``; ``origin`` keeps what the line says
        if not same:
            card["_imported"] = True
            imported += 1
    return imported, len(cards) - imported
