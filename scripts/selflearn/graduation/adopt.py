"""Adopting a proposal: a skill folder written, or a rule line through the guarded edit.

``apply`` is where a proposal from the inbox (``learning.proposals``) becomes permanent text in
the repository, after a person asked for it: a skill folder that never replaces an existing
one, or a rule line appended by ``improve`` (a duplicate counts as present). The decision is
logged in ``proposals.jsonl``. Must not import cli.
"""

import contextlib
import os
from typing import List, Optional, Tuple

from . import improve
from ..learning import proposals, skilldraft
from ..storage import outputs, screen, store
from ..storage.text import inert
from ..storage.errors import SelfLearningError, UsageError


def skills_home(repo_root: str, skills_dir: Optional[str]) -> str:
    """The folder skills go to: proposals.SKILLS_DIR, or ``--skills-dir`` taken relative to the
    repository; a folder outside the repository must be absolute and exist already."""
    if not skills_dir:
        return os.path.join(repo_root, proposals.SKILLS_DIR)
    folder = os.path.normpath(os.path.join(repo_root, skills_dir))
    root = os.path.realpath(repo_root)
    real = os.path.realpath(folder)
    inside = real == root or real.startswith(root + os.sep)
    if not inside and not (os.path.isabs(skills_dir) and os.path.isdir(folder)):
        raise UsageError(f"proposals apply: --skills-dir {skills_dir!r} is outside the "
                         "repository; name an existing folder by its absolute path, or a "
                         "folder inside the repository; nothing was written")
    return folder


def _makedirs(target: str) -> List[str]:
    """Create ``target`` and its missing parents; the folders created, deepest first."""
    made, here = [], target
    while not os.path.lexists(here):
        made.append(here)
        here = os.path.dirname(here)
    os.makedirs(target)
    return made


def _write_skill(p: dict, repo_root: str, skills_dir: Optional[str], name: Optional[str]) -> str:
    """Write ``<skills dir>/<name>/SKILL.md`` with the pattern's corrections; refuses bad names
    and existing folders, and removes the folders it created when the write fails."""
    name = name or p["name"]
    why = skilldraft.check_name(name)
    if why:
        raise UsageError(f"proposals apply: skill name {name!r} {why}; nothing was written")
    target = os.path.join(skills_home(repo_root, skills_dir), name)
    if os.path.lexists(target):
        raise UsageError(f"proposals apply: {target} already exists; nothing was written "
                         "(pass another --name, or --skills-dir)")
    outputs.claim(target, repo_root, "proposals apply:")  # no .git, no symlink out of the repo
    text = p["body"] if p["kind"] == "skill" else \
        skilldraft.compose(p, name, use_provider=False)["text"]
    text = skilldraft.rename(text, name) if name != p.get("name") else text
    head, sep, body = text.partition("\n---\n")  # the body as it renders: inert (a stored
    text = head + sep + inert(body) if sep else text  # draft may predate or dodge compose)
    text = skilldraft.with_corrections(text, _safe(p["corrections"]))
    problems = skilldraft.check(text)
    if problems:
        raise SelfLearningError(f"proposals apply: the draft of {p['id']} is not a valid "
                                f"SKILL.md ({problems[0]}); nothing was written")
    made: List[str] = []
    try:
        made = _makedirs(target)
        store.atomic_write(os.path.join(target, "SKILL.md"), text, private=False)
    except OSError as exc:
        for folder in made:  # deepest first; a folder something else wrote into stays
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise SelfLearningError(f"proposals apply: cannot write {target} ({exc.strerror or exc})"
                                "; nothing was written") from None
    return target


def _write_rule(memory, p: dict, repo_root: str, rules_file: Optional[str]) -> Tuple[str, str]:
    """Append the rule through the guarded-edit module (which refuses weak rules);
    ``(where, "")``, or ``(where, "<file> line N")`` when the file already says it."""
    target = rules_file or p.get("target") or proposals.RULES_FILE
    card = memory.folded("cards").get(str(p.get("card") or ""))
    body = p["body"] + (proposals.rule_label(card) if card else "")  # says where it came from
    try:
        result = improve.append_rule(repo_root, target, body,
                                     p.get("rationale") or p["title"], f"proposal {p['id']}",
                                     store_root=memory.root)
    except improve.DuplicateRule as dup:
        return dup.path, dup.where
    return str(result.get("path") or target), ""


def _safe(corrections: List[str]) -> List[str]:
    """The corrections the safety screen passes: a skill's text is read as instructions."""
    return [inert(c) for c in corrections if not screen.text_findings(c)]


def correct_skill(memory, repo_root: str, target: str) -> List[dict]:
    """After ``correct --pattern target``: the SKILL.md of each applied skill or command of
    that pattern gets its corrections block rewritten (only a file we wrote, still there);
    per skill ``{path, written, why}``."""
    out = []
    for p in proposals.naming(memory, target, "applied"):
        if p.get("kind") not in ("skill", "command") or not p.get("applied_to"):
            continue
        path = os.path.join(p["applied_to"], "SKILL.md")
        try:
            if not os.path.isfile(path):
                raise UsageError(f"correct: {path} is no longer there; nothing was written")
            real = outputs.claim(path, repo_root, "correct:", marker=skilldraft.OWNED)
            with open(real, encoding="utf-8") as fh:
                text = fh.read()
            store.atomic_write(real, skilldraft.with_corrections(text, _safe(p["corrections"])),
                               private=False)
            out.append({"path": path, "written": True, "why": ""})
        except (UsageError, OSError, UnicodeDecodeError) as exc:
            out.append({"path": path, "written": False, "why": str(exc)})
    return out


def apply(memory, repo_root: str, pid: str, skills_dir: Optional[str] = None,
          name: Optional[str] = None, rules_file: Optional[str] = None) -> dict:
    """Carry a proposal out: a skill folder (skill, command) or a guarded rule line."""
    p = proposals.with_corrections(memory, [proposals.get(memory, pid, "apply")])[0]
    proposals.undecided(p, "apply")
    flags = screen.blocked(p)
    if flags:
        raise UsageError(f"proposals apply: the safety screen holds {pid} back "
                         f"({'; '.join(flags)}); nothing was written (read it with `proposals "
                         f"show --id {pid}`, then reject it or write it by hand)")
    if p["kind"] == "rule":
        if skills_dir or name:
            raise UsageError("proposals apply: --skills-dir and --name are for skill and "
                             f"command proposals; {pid} is a rule (use --file)")
        where, present = _write_rule(memory, p, repo_root, rules_file)
    else:
        if rules_file:
            raise UsageError(f"proposals apply: --file is for rule proposals; {pid} is a "
                             f"{p['kind']} (use --skills-dir or --name)")
        where, present = _write_skill(p, repo_root, skills_dir, name), ""
    line = proposals.decided(pid, "applied", applied_to=where, **({"present": present} if present else {}))
    memory.append("proposals", [line])
    return {"proposal": {**p, **line}, "action": "applied", "written": None if present else where}
