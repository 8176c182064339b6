"""``install-skill``: copy what the skill needs to run and be read into another repository.

Owns the list of what a user's repository receives (``FILES``, ``FOLDERS``: no benchmarks,
no tests) and the manifest ``.self-learning-install.json`` in the copy, which names every file
this wrote with the SHA-256 it wrote. Invariants: a file this did not write (or that was
changed since) is never overwritten or removed; the whole plan is checked before the first
write, so a refused install writes nothing; running it again changes nothing, and on a newer
source it updates (and removes) only the files it wrote. Imports storage only.
"""

import hashlib
import json
import os
from typing import Dict, Iterable, List

from .. import __version__
from ..storage import store
from ..storage.errors import LinkedPath, UsageError

FILES = ("SKILL.md", "AGENTS.md", "README.md", "LICENSE.txt", "CHANGELOG.md", ".gitignore",
         ".claude-plugin/plugin.json")
FOLDERS = ("scripts", "references", "hooks")  # every file below them but bytecode
MANIFEST = ".self-learning-install.json"


def _sha(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def wanted(source: str) -> Dict[str, str]:
    """Relative path -> file of ``source`` for everything the copy holds, in path order."""
    found = {rel: os.path.join(source, rel) for rel in FILES
             if os.path.isfile(os.path.join(source, rel))}
    for folder in FOLDERS:
        for top, dirs, names in os.walk(os.path.join(source, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in names:
                path = os.path.join(top, name)
                if not name.endswith((".pyc", ".tmp")) and os.path.isfile(path) \
                        and not os.path.islink(path):
                    found[os.path.relpath(path, source)] = path
    return dict(sorted(found.items()))


def _manifest(dest: str) -> Dict[str, str]:
    """The files an earlier install wrote, with their SHA-256; {} when none did. Each must be
    a plain path inside the copy, as install-skill writes them: an entry like
    ``../../AGENTS.md`` (a committed copy's manifest is anyone's to edit) would let an update
    remove or overwrite a file outside the copy that happens to hold the listed bytes."""
    path = os.path.join(dest, MANIFEST)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            files = json.load(fh)["files"]
        if isinstance(files, dict) and all(isinstance(v, str) for v in files.values()):
            bad = next((rel for rel in files if not _plain(rel)), None)
            if bad is None:
                return files
            raise UsageError(f"install-skill: {path} lists {bad!r}, which is not a plain path "
                             "inside the copy (install-skill never writes one); nothing was "
                             "written: check who changed it, then move the folder away and "
                             "install again")
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise UsageError(f"install-skill: {path} is damaged; nothing was written (delete it and the "
                     "files it listed, then install again)")


def _plain(rel: str) -> bool:
    """A relative path of named parts: no ``..``, ``.``, empty part or leading ``/``."""
    return "\0" not in rel and all(part not in ("", ".", "..") for part in rel.split("/"))


def _linked(dest: str, rels: Iterable[str] = ()) -> str:
    """Why writing ``rels`` into ``dest`` would go through a link, or "": a symbolic link on
    the way from ``dest``'s repository (the nearest folder holding ``.git``; outside one,
    ``dest``'s parent) down to ``dest``, then on the way from ``dest`` to each of ``rels``
    (a committed ``references/`` linked to a folder outside), or one of ``rels`` that is a
    file with other hard links (``store.guard`` says which, as for the store)."""
    parts, top = dest.rstrip(os.sep).split(os.sep), 0
    for n in range(len(parts), 0, -1):
        if os.path.lexists(os.sep.join(parts[:n] + [".git"])):
            top = n
            break
    top = top or max(1, len(parts) - 1)
    paths = [os.sep.join(parts[:n]) for n in range(top + 1, len(parts) + 1)]
    for rel in rels:
        steps = rel.split("/")
        paths += [os.path.join(dest, *steps[:n]) for n in range(1, len(steps) + 1)]
    for path in dict.fromkeys(paths):
        try:
            store.guard(path, below=os.path.dirname(path))
        except LinkedPath as exc:
            return str(exc)
    return ""


def plan(source: str, dest: str) -> dict:
    """What an install of ``source`` into ``dest`` adds, updates, keeps and removes."""
    source, dest = os.path.realpath(source), os.path.abspath(dest)
    if os.path.realpath(dest) == source or os.path.realpath(dest).startswith(source + os.sep):
        raise UsageError(f"install-skill: {dest} is inside the skill folder {source}; pass a "
                         "folder of the repository that receives it, e.g. "
                         "<repo>/.claude/skills/self-learning-skills")
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise UsageError(f"install-skill: {dest} is not a folder; nothing was written")
    files, link = wanted(source), _linked(dest, [MANIFEST])  # (read through no link either)
    old = {} if link else _manifest(dest)
    link = link or _linked(dest, [*files, *old])
    if link:  # a repository may commit a link that points anywhere
        raise UsageError(f"install-skill: {link}")
    out: dict = {"to": dest, "source": source, "add": [], "update": [], "keep": [],
                 "remove": [], "left": [], "conflicts": [], "sha": {}}
    for rel, path in files.items():
        target, sha = os.path.join(dest, rel), _sha(path)
        out["sha"][rel] = sha
        if not os.path.lexists(target):
            out["add"].append(rel)
            continue
        now = _sha(target) if os.path.isfile(target) and not os.path.islink(target) else None
        if now == sha:
            out["keep"].append(rel)
        elif now is not None and old.get(rel) == now:  # ours, unchanged since: an update
            out["update"].append(rel)
        else:
            out["conflicts"].append(rel)
    for rel, sha in old.items():
        if rel not in files:
            target = os.path.join(dest, rel)
            ours = os.path.isfile(target) and not os.path.islink(target) and _sha(target) == sha
            out["remove" if ours else "left"].append(rel)
    return out


def install(source: str, dest: str, dry_run: bool = False) -> dict:
    """Copy ``source``'s skill files into ``dest`` as ``plan`` says; refuse on any conflict."""
    p = plan(source, dest)
    if p["conflicts"]:
        first = os.path.join(p["to"], p["conflicts"][0])
        raise UsageError(f"install-skill: {first} exists and was not written by install-skill "
                         f"(or was changed since), and {len(p['conflicts']) - 1} more; nothing "
                         "was written: move them away (or the whole folder) and run it again")
    data = {k: p[k] for k in ("to", "source", "add", "update", "remove", "left")}
    data.update(unchanged=len(p["keep"]), files=len(p["sha"]), dry_run=dry_run,
                bytes=sum(os.path.getsize(os.path.join(p["source"], r)) for r in p["sha"]))
    if dry_run or not (p["add"] or p["update"] or p["remove"] or p["left"]
                       or not os.path.exists(os.path.join(p["to"], MANIFEST))):
        return data
    for rel in p["add"] + p["update"]:
        src, target = os.path.join(p["source"], rel), os.path.join(p["to"], rel)
        with open(src, "rb") as fh:
            store.atomic_write(target, fh.read(), private=False)
        os.chmod(target, os.stat(src).st_mode & 0o777)
    for rel in p["remove"]:
        os.unlink(os.path.join(p["to"], rel))
    manifest = {"v": 1, "installed_by": "self_learning install-skill", "version": __version__,
                "files": p["sha"]}
    store.atomic_write(os.path.join(p["to"], MANIFEST),
                       json.dumps(manifest, indent=1, sort_keys=True) + "\n", private=False)
    return data


def render(data: dict) -> List[str]:
    verb = "would install" if data["dry_run"] else "installed"
    lines = [f"{verb} {data['files']} files ({data['bytes'] // 1024} KiB) in {data['to']}: "
             f"{len(data['add'])} added, {len(data['update'])} updated, "
             f"{len(data['remove'])} removed, {data['unchanged']} unchanged"]
    lines += [f"  left {rel}: no longer part of the skill, but changed since it was installed"
              for rel in data["left"]]
    script = os.path.join(data["to"], "scripts", "self_learning.py")
    lines.append(f"next: python3 {script} install-hooks --agent <agent>, in that repository, "
                 "registers the hooks (README.md, Install)")
    return lines
