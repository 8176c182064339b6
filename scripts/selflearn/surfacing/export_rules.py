"""``export-rules`` and ``suggest-hooks``: lessons for agents that cannot run our hooks.

Owns the table of agents' rules files, the marked block the tool keeps in them,
and which agents a repository uses. ``export`` writes accepted lessons as one-line
rules between ``<!-- self-learning-skills:begin -->`` and ``:end -->``; every byte
outside the block stays as it was, a second run with the same lessons writes
nothing, and a write must land on a regular file inside the repository (no
symlink, nothing resolving outside). ``suggest`` says which agents in the repo
lack our hooks. Must not import cli.
"""

import os
import re
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from . import advice
from ..learning import lifecycle
from ..storage import model, redact, screen, store
from ..storage.errors import SelfLearningError, UsageError
from ..storage.memory import Memory
from ..storage.text import RULE_CHARS, clean_line, origin_label, rule


class Target(NamedTuple):
    path: str    # relative to the repository root
    front: str   # "" when the block goes into a shared file; else the whole file is ours
    note: str    # what the user may still have to do


CURSOR_FRONT = ("---\ndescription: Lessons learned in this repository (self-learning-skills)\n"
                "globs:\nalwaysApply: true\n---\n\n")
CONTINUE_FRONT = "---\nname: Self-learning lessons\nalwaysApply: true\n---\n\n"
# agent -> its rules file; cursor and continue get a file of their own (with front matter)
TARGETS: Dict[str, Target] = {
    "copilot": Target(".github/copilot-instructions.md", "", ""),
    "cursor": Target(".cursor/rules/self-learning.mdc", CURSOR_FRONT, ""),
    "gemini": Target("GEMINI.md", "", ""),
    "windsurf": Target(".windsurfrules", "", ""),
    "aider": Target("CONVENTIONS.md", "", "aider reads it only when asked: `aider --read "
                    "CONVENTIONS.md`, or `read: CONVENTIONS.md` in .aider.conf.yml"),
    "continue": Target(".continue/rules/self-learning.md", CONTINUE_FRONT, ""),
    "agents-md": Target("AGENTS.md", "", ""),
}
# first line of our block (`pad=N` inside when the tool added N newlines before it)
BEGIN = "<!-- self-learning-skills:begin -->"
END = "<!-- self-learning-skills:end -->"      # last line of our block
MAX_RULES = 30        # rules exported, most confident first
MAX_CHARS = 4000      # characters of rules exported (whole rules only)
EMPTY = "- (no accepted lessons yet)"
WRITES = ("created", "added", "updated", "removed", "deleted")  # actions that change the file
_BEGIN_RE = re.compile(r"^<!-- self-learning-skills:begin(?: pad=(\d))? -->$", re.M)
_END_RE = re.compile(r"^" + re.escape(END) + r"$\n?", re.M)


def target(agent: str) -> Target:
    if agent not in TARGETS:
        raise UsageError(f"export-rules: unknown agent {agent!r} (one of: {', '.join(TARGETS)})")
    return TARGETS[agent]


# --- the rules -------------------------------------------------------------------------------

def rules(cards: Dict[str, dict], signals: List[dict]) -> List[str]:
    """Accepted lessons the safety screen passes, most confident first, each saying where
    it came from, bounded by MAX_RULES and MAX_CHARS."""
    now, ev = model.now(), lifecycle.evidence(signals)
    ranked = sorted((c for c in cards.values() if c.get("status") == "accepted"
                     and not c.get("_imported") and not screen.blocked(c)),
                    key=lambda c: (-lifecycle.confidence(c, ev.get(c["id"]), now),
                                   c.get("_first_ts") or c.get("ts", ""), c["id"]))
    out: List[str] = []
    size = 0
    for card in ranked[:MAX_RULES]:
        line = rule(card, f" ({clean_line(origin_label(card), 80)})")
        if size + len(line) + 1 > MAX_CHARS:
            break
        out.append(line)
        size += len(line) + 1
    return list(dict.fromkeys(out))


def block(lines: List[str], pad: int = 0) -> str:
    begin = BEGIN if not pad else BEGIN.replace(" -->", f" pad={pad} -->")
    return "\n".join([begin, "## Lessons learned (self-learning-skills)", "",
                      "Accepted lessons from this repository's memory, exported by "
                      "`self_learning.py export-rules`. Change them in the memory "
                      "(`aha-status`, `feedback`), not here: this block is rewritten.", "",
                      *(lines or [EMPTY]), END]) + "\n"


# --- the block in a file ---------------------------------------------------------------------

def find(text: str, where: str) -> Optional[Tuple[int, int, int]]:
    """``(start, end, pad)`` of our block in ``text``, or None; refuses a broken one."""
    begins, ends = list(_BEGIN_RE.finditer(text)), list(_END_RE.finditer(text))
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0].start() < begins[0].end():
        raise SelfLearningError(f"export-rules: {where} has {len(begins)} begin and {len(ends)} "
                                f"end markers ({BEGIN} … {END}); fix them by hand so one "
                                "block remains; nothing was written")
    return begins[0].start(), ends[0].end(), int(begins[0].group(1) or 0)


def splice(text: str, lines: List[str], where: str) -> str:
    """The text with our block replaced in place, or appended after a blank line."""
    span = find(text, where)
    if span is not None:
        start, end, pad = span
        return text[:start] + block(lines, pad) + text[end:]
    pad = 0 if not text or text.endswith("\n\n") else 1 if text.endswith("\n") else 2
    return text + "\n" * pad + block(lines, pad)


def cut(text: str, where: str) -> str:
    """The text without our block and the newlines we added before it."""
    span = find(text, where)
    if span is None:
        return text
    start, end, pad = span
    while pad and start and text[start - 1] == "\n":
        start, pad = start - 1, pad - 1
    return text[:start] + text[end:]


# --- writing ---------------------------------------------------------------------------------

def resolve(repo_root: str, rel: str) -> str:
    """The target path, refused when it is a symlink or resolves outside the repository."""
    root = os.path.realpath(repo_root)
    path = os.path.join(repo_root, rel)
    if os.path.islink(path):
        raise SelfLearningError(f"export-rules: {path} is a symlink; refusing to write through "
                                "it (replace it with a regular file); nothing was written")
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise SelfLearningError(f"export-rules: {path} resolves to {real}, outside the "
                                f"repository {root}; nothing was written")
    if ".git" in os.path.relpath(real, root).split(os.sep):
        raise SelfLearningError(f"export-rules: {path} is inside a .git folder; nothing was "
                                "written")
    if os.path.isdir(real):
        raise SelfLearningError(f"export-rules: {path} is a folder; nothing was written")
    if os.path.exists(real) and not os.path.isfile(real):
        raise SelfLearningError(f"export-rules: {path} is not a regular file; nothing was "
                                "written")
    return path


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SelfLearningError(f"export-rules: cannot read {path} ({exc}); nothing was "
                                "written") from None


def _proposed(spec: Target, before: Optional[str], lines: List[str], remove: bool,
              where: str) -> Optional[str]:
    """The file's new text; None: delete it (a file of our own with nothing else in it)."""
    if remove:
        after = cut(before, where) if before is not None else None
        return None if after is not None and (not after.strip() or spec.front
                                              and after.strip() == spec.front.strip()) else after
    if spec.front and before is not None and find(before, where) is None:
        raise SelfLearningError(f"export-rules: {where} exists and holds no {BEGIN} block; "
                                "it is not ours to overwrite (move it away); nothing was written")
    return splice(spec.front if before is None and spec.front else before or "", lines, where)


def export(memory: Memory, repo_root: str, agent: str, dry_run: bool = False,
           remove: bool = False) -> dict:
    """Write (or remove) the accepted lessons in ``agent``'s rules file."""
    spec = target(agent)
    path = resolve(repo_root, spec.path)
    before = _read(path)
    has_block = before is not None and find(before, spec.path) is not None
    lines = [] if remove else rules(memory.folded("cards"), advice.evidence_signals(memory))
    if not has_block and (remove or not lines):
        after, action = before, "nothing"   # no block to remove, none worth adding
    else:
        after = _proposed(spec, before, lines, remove, spec.path)
        action = "unchanged" if after == before else "deleted" if after is None else \
            "removed" if remove else "updated" if has_block else \
            "created" if before is None else "added"
    if action in WRITES and not dry_run:
        _write(path, before, after)
    return {"agent": agent, "path": spec.path, "file": path, "action": action,
            "dry_run": dry_run, "remove": remove, "rules": lines,
            "note": spec.note if action in ("created", "added", "updated", "unchanged") else ""}


def _write(path: str, before: Optional[str], after: Optional[str]) -> None:
    if after is None:
        os.unlink(path)
        return
    mode = os.stat(path).st_mode & 0o7777 if before is not None else None
    store.atomic_write(path, after, private=False)
    if mode is not None:
        os.chmod(path, mode)


def render(data: dict) -> List[str]:
    verb = {"created": "create", "added": "add the block to", "updated": "update",
            "removed": "remove the block from", "deleted": "delete"}.get(data["action"])
    if data["action"] == "nothing":
        lines = [f"{data['path']}: no accepted lessons to export (accept one with `aha-status "
                 "--id ID --status accepted` or in `feedback`)" if not data["remove"]
                 else f"{data['path']}: no block to remove"]
    elif verb is None:
        lines = [f"{data['path']}: unchanged ({len(data['rules'])} rules)"]
    elif data["dry_run"]:
        lines = [f"would {verb} {data['path']}" + ("" if data["remove"] else
                                                    f" with {len(data['rules'])} rules:")]
        lines += data["rules"] if not data["remove"] else []
    else:
        lines = [f"{data['action']} {data['path']}" + ("" if data["remove"] else
                                                       f" ({len(data['rules'])} rules)")]
    return lines + ([f"note: {data['note']}"] if data["note"] else [])


# --- suggest-hooks ---------------------------------------------------------------------------

HOOK_AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")  # install-hooks knows these
# files or folders whose presence says an agent is used in the repository
PRESENCE: Dict[str, Tuple[str, ...]] = {
    "claude": (".claude", "CLAUDE.md"),
    "codex": (".codex",),
    "gemini": (".gemini", "GEMINI.md"),
    "copilot": (".github/copilot-instructions.md", ".github/hooks", ".github/instructions",
                ".copilot"),
    "cursor": (".cursor", ".cursorrules"),
    "windsurf": (".windsurf", ".windsurfrules"),
    "aider": (".aider.conf.yml", "CONVENTIONS.md"),
    "continue": (".continue",),
}
RULES_ONLY = ("windsurf", "aider", "continue")  # no hooks: export-rules is their channel


def _command(repo_root: str, skill_dir: str) -> str:
    script = os.path.join(os.path.abspath(skill_dir), "scripts", "self_learning.py")
    rel = os.path.relpath(script, os.path.realpath(repo_root))
    return "python3 " + (rel if not rel.startswith("..") else script)


def suggest(repo_root: str, home: str, skill_dir: str) -> dict:
    """Per agent: used here?, our hooks installed?, and the command that would help."""
    from ..observation import claude_plugin, install
    status = install.status(Path(repo_root), Path(home))
    plugins = claude_plugin.loading(Path(skill_dir), Path(repo_root), Path(home))
    base = _command(repo_root, skill_dir)
    hooks, rules_only = [], []
    for agent in HOOK_AGENTS + RULES_ONLY:
        seen = [p for p in PRESENCE[agent] if os.path.lexists(os.path.join(repo_root, p))]
        row = {"agent": agent, "present": bool(seen), "seen": seen}
        if agent in RULES_ONLY:
            row["rules_file"] = TARGETS[agent].path
            text = _read(os.path.join(repo_root, TARGETS[agent].path))
            row["exported"] = bool(text and _BEGIN_RE.search(text))
            row["command"] = f"{base} export-rules --agent {agent}"
            rules_only.append(row)
            continue
        row.update(_hook_state(status[agent]))
        if agent == "claude" and plugins and row["hooks"] == "none":
            row.update(hooks="plugin", plugin=plugins[0]["id"])  # its hooks/hooks.json
        row["command"] = f"{base} install-hooks --agent {agent}" if row["hooks"] in (
            "none", "incomplete") else ""
        hooks.append(row)
    return {"repo_root": repo_root, "script": base, "hook_agents": hooks,
            "rules_agents": rules_only}


def _hook_state(info: dict) -> dict:
    scans = [(scope, info[scope]) for scope in ("project", "user") if info.get(scope)]
    errors = [s["error"] for _, s in scans if s.get("error")]
    for scope, scan in scans:
        if scan["installed"]:
            state = "incomplete" if scan["missing_events"] else "installed"
            return {"hooks": state, "scope": scope, "missing_events": scan["missing_events"],
                    "errors": errors}
    return {"hooks": "none", "scope": None, "missing_events": [], "errors": errors}


def render_suggest(data: dict) -> List[str]:
    lines = []
    for row in data["hook_agents"]:
        where = f"used here ({', '.join(row['seen'])})" if row["present"] else "not seen here"
        if row["hooks"] == "installed":
            lines.append(f"{row['agent']}: hooks installed ({row['scope']} scope)")
        elif row["hooks"] == "plugin":
            lines.append(f"{row['agent']}: hooks registered by the plugin {row['plugin']}")
        elif row["present"] and row["hooks"] == "incomplete":
            lines.append(f"{row['agent']}: hooks miss {', '.join(row['missing_events'])}; "
                         f"update them: {row['command']}")
        elif row["present"]:
            lines.append(f"{row['agent']}: {where}, no hooks; add them: {row['command']}")
        lines += [f"{row['agent']}: warning: {e}" for e in row["errors"]]
    for row in data["rules_agents"]:
        if row["present"]:
            done = "rules exported; refresh" if row["exported"] else "export lessons as rules"
            lines.append(f"{row['agent']}: used here ({', '.join(row['seen'])}), has no hooks; "
                         f"{done}: {row['command']}")
    if not any(r["present"] for r in data["hook_agents"] + data["rules_agents"]):
        lines.append(f"no agent configuration found in {data['repo_root']}; for Claude Code: "
                     f"{data['script']} install-hooks --agent claude")
    return lines
