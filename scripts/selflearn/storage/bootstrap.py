"""Creating a store: its folder and the ``.gitignore`` line that keeps it private.

The store is per user and may hold private notes, so the first write into a
git repository makes sure ``.agent-skills/`` is ignored, unless a line
already ignores it or the user said ``init --no-gitignore``. A team that commits its
stores (``init --commit-store``) gets the ``.gitattributes`` line that merges them as a
union (``ensure_attributes``); files already there keep every line they had.
"""

import os
from typing import Optional

from . import posixfs as fs
from . import store
from .errors import LinkedPath

IGNORE_LINE = ".agent-skills/"


def ignored_already(text: str) -> bool:
    """True when an active (not comment, not negated) line ignores ``.agent-skills``."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        core = line.lstrip("/")
        for suffix in ("/**", "/*", "/"):
            if core.endswith(suffix):
                core = core[: -len(suffix)]
        if core == ".agent-skills":
            return True
    return False


def ensure_gitignore(repo_root: str) -> Optional[str]:
    """Add the ignore line when missing; returns the file changed, or None. A ``.gitignore``
    shared with another path (``shared``) is not rewritten: the line goes to
    ``.git/info/exclude``."""
    path = os.path.join(repo_root, ".gitignore")
    text = _read(path)
    if ignored_already(text):
        return None
    if shared(path):
        return _exclude_locally(repo_root)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
    store.atomic_write(path, _added(text), private=False)
    if mode is not None:
        os.chmod(path, mode)  # the replacement keeps the person's mode (0664, 0444, …)
    return path


def ensure_attributes(repo_root: str) -> Optional[str]:
    """Append ``provenance.UNION_LINE`` to ``.gitattributes`` (to the clone's
    ``info/attributes`` when ``.gitattributes`` is ``shared``); the file changed, or None when
    one already holds it."""
    from .provenance import UNION_LINE, attribute_files
    files = attribute_files(repo_root)
    if any(line.strip() == UNION_LINE for path in files for line in _read(path).splitlines()):
        return None
    path = files[-1] if shared(files[0]) else files[0]
    if shared(path):  # a shared file and no clone of our own to write to instead
        return None
    text = _read(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:  # only appended to: every byte there stays
        fh.write(("" if not text or text.endswith("\n") else "\n")
                 + "# self-learning-skills stores are append-only: a merge keeps both sides' "
                 f"lines\n{UNION_LINE}\n")
    return path


def shared(path: str) -> bool:
    """Whether a repository file is shared with another path: a symbolic link, or a file
    with other hard links (``store.guard``'s test). Such a file is never written here: an
    append would land in the file outside (a ``.gitattributes`` hard-linked to anything), and
    a rewrite would cut the sharing someone set up."""
    try:
        store.guard(path, below=os.path.dirname(path))
    except LinkedPath:
        return True
    return False


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def _added(text: str) -> str:
    sep = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{sep}# self-learning-skills memory: per user, may hold private notes\n{IGNORE_LINE}\n"


def _exclude_locally(repo_root: str) -> Optional[str]:
    """The ignore line in this clone's ``.git/info/exclude`` (None where ``.git`` is no folder)."""
    info = os.path.join(repo_root, ".git", "info")
    if not os.path.isdir(os.path.dirname(info)):
        return None
    path = os.path.join(info, "exclude")
    text = _read(path)
    if ignored_already(text) or shared(path):
        return None
    os.makedirs(info, exist_ok=True)
    store.atomic_write(path, _added(text), private=False)
    return path


def ensure_store(root: str, repo_root: Optional[str], gitignore: bool = True,
                 created: Optional[bool] = None) -> dict:
    """Create the store folder; on first creation inside a git repo, ignore it.

    ``created`` says whether this command created the store (appends make the
    folder before we get here); by default, whether the folder is missing now.
    """
    created = not os.path.isdir(root) if created is None else created
    store.guard(fs.join(root, "."))  # no store folder is made through a link
    fs.makedirs(root, fs.PRIVATE_DIR)
    changed = None
    in_git = repo_root and os.path.exists(os.path.join(repo_root, ".git"))
    if gitignore and created and in_git and root.startswith(os.path.join(repo_root, ".agent-skills")):
        changed = ensure_gitignore(repo_root)
    return {"store": root, "created": created, "gitignore_updated": changed}
