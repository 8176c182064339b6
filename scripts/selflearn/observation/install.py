"""``install-hooks`` / ``uninstall-hooks``: merge our hook entries into each agent's config.

``plan()`` computes the new text of every file it would touch (nothing is
written); ``apply()`` writes those files atomically after backing up the old
ones; ``status()`` reports where our hooks are installed.  Our entries are the
ones whose command contains ``self_learning.py hook``; every other key and hook
entry is left as it was, in its order.  One table, ``AGENTS``, says per agent
which file, which events, which timeout field and unit, and which variable
names the project directory.
"""

import difflib
import json
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..storage import store
from ..storage.errors import SelfLearningError, UsageError

MARKER = "self_learning.py hook"
_MARKER_RE = re.compile(r"self_learning\.py['\"]?\s+hook\b")
SCRIPT = "scripts/self_learning.py"
PLUGIN_ROOT_VAR = "CLAUDE_PLUGIN_ROOT"
# Codex runs hooks in the session's cwd with no project-dir variable: find the top at run time.
TOPLEVEL = "git rev-parse --show-toplevel 2>/dev/null || pwd"
SCOPES = ("project", "user")
SKILL_HOMES = (".claude", ".agents", ".codex", ".github", ".gemini", ".cursor")


@dataclass(frozen=True)
class Agent:
    name: str
    project_file: str  # relative to the repository root
    user_file: Optional[str]  # relative to the home directory; None: no user scope
    shape: str  # "nested": event -> [{matcher?, hooks: [handler]}]; "flat": event -> [handler]
    events: Tuple[Tuple[str, int, Optional[str]], ...]  # (event, timeout in seconds, matcher)
    timeout_key: str
    timeout_ms: bool  # the agent counts the timeout in milliseconds
    project_var: Optional[str]  # shell variable naming the project root in hook commands
    command_key: str = "command"
    skeleton: Tuple[Tuple[str, object], ...] = ()  # keys a new file starts with
    extra: Tuple[Tuple[str, object], ...] = (("type", "command"),)  # other handler keys
    cwd_relative: bool = False  # hooks take a "cwd" relative to the repository root


AGENTS: Dict[str, Agent] = {
    a.name: a
    for a in (
        Agent(
            "claude", ".claude/settings.json", ".claude/settings.json", "nested",
            (("SessionStart", 10, None), ("UserPromptSubmit", 5, None),
             ("PreToolUse", 5, "*"), ("PostToolUse", 5, "*"),
             ("PostToolUseFailure", 5, "*"), ("PermissionDenied", 5, "*"),
             ("PostToolBatch", 5, None), ("PreCompact", 10, None), ("Stop", 10, None),
             ("StopFailure", 5, None), ("SessionEnd", 10, None)),
            "timeout", False, "CLAUDE_PROJECT_DIR",
        ),
        Agent(
            # Codex gives hooks no project-dir variable (they run in the session cwd, so the
            # project command asks git for the top level), and caps SessionEnd hooks at 3 s.
            "codex", ".codex/hooks.json", ".codex/hooks.json", "nested",
            (("SessionStart", 10, None), ("UserPromptSubmit", 5, None),
             ("PreToolUse", 5, None), ("PostToolUse", 5, None),
             ("PreCompact", 10, None), ("Stop", 10, None), ("SessionEnd", 3, None)),
            "timeout", False, None,
        ),
        Agent(
            "gemini", ".gemini/settings.json", ".gemini/settings.json", "nested",
            (("SessionStart", 10, None), ("BeforeAgent", 5, None),
             ("BeforeTool", 5, "*"), ("AfterTool", 5, "*"),
             ("PreCompress", 10, None), ("AfterAgent", 10, None),
             ("SessionEnd", 10, None)),
            "timeout", True, "GEMINI_PROJECT_DIR",
            extra=(("name", "self-learning-skills"), ("type", "command")),
        ),
        Agent(
            # Copilot CLI and the cloud agent: a file of our own; "cwd" is relative to the repo root.
            "copilot", ".github/hooks/self-learning.json", ".copilot/hooks/self-learning.json", "flat",
            (("sessionStart", 10, None), ("userPromptSubmitted", 5, None),
             ("preToolUse", 5, None), ("postToolUse", 5, None),
             ("postToolUseFailure", 5, None), ("errorOccurred", 5, None),
             ("preCompact", 10, None), ("agentStop", 10, None), ("sessionEnd", 10, None)),
            "timeoutSec", False, None, command_key="bash",
            skeleton=(("version", 1),), cwd_relative=True,
        ),
        Agent(
            "cursor", ".cursor/hooks.json", ".cursor/hooks.json", "flat",
            (("sessionStart", 10, None), ("beforeSubmitPrompt", 5, None),
             ("preToolUse", 5, None), ("postToolUse", 5, None),
             ("postToolUseFailure", 5, None), ("preCompact", 10, None),
             ("stop", 10, None), ("sessionEnd", 10, None)),
            "timeout", False, "CURSOR_PROJECT_DIR",
            skeleton=(("version", 1),), extra=(),
        ),
    )
}

# What install-hooks cannot do for the user; the CLI prints these after a plan.
MANUAL_STEPS: Dict[str, List[str]] = {
    "claude": ["Claude Code reads hooks at session start: start a new session (or review them in /hooks)."],
    "codex": [
        "Codex runs a new or changed hook only after you trust it: open /hooks in Codex and trust the entries.",
        "Project hooks load only in a trusted project; Codex before 0.124 also needs "
        "`[features] codex_hooks = true` in ~/.codex/config.toml.",
    ],
    "gemini": [
        "Gemini CLI reads .gemini/settings.json only in a trusted folder; hooks are on by default "
        "since 0.27 (older releases need \"tools\": {\"enableHooks\": true}).",
    ],
    "copilot": ["The Copilot cloud agent uses .github/hooks/*.json only from the default branch: commit it."],
    "cursor": ["Restart Cursor if the hooks do not fire; its Hooks settings tab lists what it loaded."],
}


@dataclass
class Change:
    path: Path
    before: Optional[str]  # None: the file does not exist
    after: Optional[str]  # None: the file is removed
    summary: str


def agent_spec(agent: str) -> Agent:
    if agent not in AGENTS:
        raise UsageError(f"unknown agent {agent!r}; choose one of: {', '.join(AGENTS)}")
    return AGENTS[agent]


def config_path(agent: str, scope: str, repo_root: Path, home: Path) -> Path:
    spec = agent_spec(agent)
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}; choose project or user")
    if scope == "project":
        return Path(repo_root) / spec.project_file
    if spec.user_file is None:
        raise UsageError(f"{agent} has no user-level hooks file; use --scope project")
    return Path(home) / spec.user_file


def is_ours(handler: object) -> bool:
    """A handler (dict) whose command runs ``self_learning.py hook``."""
    if not isinstance(handler, dict):
        return False
    return any(isinstance(handler.get(k), str) and _MARKER_RE.search(handler[k])
               for k in ("command", "bash", "powershell"))


def hook_command(spec: Agent, scope: str, repo_root: Path, skill_dir: Path) -> Tuple[str, Optional[str]]:
    """The shell command for ``spec`` and the ``cwd`` to run it in (or None).

    A project file is committed, so its command never holds this machine's
    path: the agent's project-dir variable, a path relative to the ``cwd`` the
    agent honours, or (Codex, which has neither) the repository's top level
    asked of git at run time. Only ``--scope user`` writes an absolute path.
    """
    skill = Path(os.path.abspath(skill_dir))
    tail = f"/{SCRIPT} hook --agent {spec.name}"
    if scope != "project":
        return f"python3 -S {shlex.quote(skill.as_posix())}{tail}", None
    rel = _relative_to(skill, Path(repo_root))
    if rel is None:
        raise UsageError(f"{skill} is outside the repository {repo_root}: a project hook file is "
                         "committed and must not hold this machine's path; copy the folder into "
                         "the repository (e.g. .claude/skills/self-learning-skills) or use "
                         "--scope user")
    inside = "" if rel == "." else "/" + shlex.quote(rel)
    if spec.project_var:
        return f'python3 -S "${spec.project_var}"{inside}{tail}', None
    if spec.cwd_relative:
        return f"python3 -S {shlex.quote(rel)}{tail}", "."
    return f'python3 -S "$({TOPLEVEL})"{inside}{tail}', None


def _relative_to(path: Path, root: Path) -> Optional[str]:
    """``path`` relative to ``root``; a folder linked into the repo's skill folders counts as inside."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        pass
    for home in SKILL_HOMES:  # e.g. .claude/skills/self-learning-skills -> ~/src/self-learning-skills
        for entry in sorted((root / home / "skills").glob("*")):
            if entry.is_symlink() and entry.resolve() == path.resolve():
                return entry.relative_to(root).as_posix()
    return None


def handler(spec: Agent, command: str, timeout: int, cwd: Optional[str]) -> dict:
    out = dict(spec.extra)
    out[spec.command_key] = command
    if cwd is not None:
        out["cwd"] = cwd
    out[spec.timeout_key] = timeout * 1000 if spec.timeout_ms else timeout
    return out


def desired_entries(spec: Agent, command: str, cwd: Optional[str] = None) -> Dict[str, dict]:
    """Event name -> the entry we put in that event's list."""
    out = {}
    for event, timeout, matcher in spec.events:
        h = handler(spec, command, timeout, cwd)
        if spec.shape == "flat":
            out[event] = h
        else:
            out[event] = ({"matcher": matcher} if matcher is not None else {})
            out[event]["hooks"] = [h]
    return out


def plugin_hooks_document() -> dict:
    """The Claude Code plugin's hooks/hooks.json, built from the claude row of AGENTS."""
    spec = AGENTS["claude"]
    command = f'python3 -S "${{{PLUGIN_ROOT_VAR}}}/{SCRIPT}" hook --agent claude'
    return {"description": "self-learning-skills: observe the session so lessons can be learned",
            "hooks": {event: [entry] for event, entry in desired_entries(spec, command).items()}}


def render_json(doc: object, indent: object = 2) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def _detect_indent(text: str) -> object:
    m = re.search(r"^([ \t]+)\S", text, re.M)
    if not m:
        return 2
    return "\t" if "\t" in m.group(1) else len(m.group(1))


def read_config(path: Path) -> Tuple[Optional[str], dict]:
    """The file's text (None if absent) and its parsed object; refuses anything but a JSON object."""
    path = Path(path)
    if path.exists() and not path.is_file():  # a FIFO would block, a folder cannot be merged
        raise UsageError(f"{path} is not a regular file; move it away first - nothing was written")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as err:
        raise SelfLearningError(f"{path}: cannot read ({err}); nothing was written")
    if not text.strip():
        return text, {}
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise UsageError(f"{path}: not valid JSON ({err}); fix or move it first - nothing was written")
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: expected a JSON object at the top level; nothing was written")
    return text, doc


def _strip_ours(item: object, spec: Agent) -> Tuple[int, object]:
    """How many of our handlers ``item`` holds, and what is left of it (None: nothing)."""
    if spec.shape == "flat":
        return (1, None) if is_ours(item) else (0, item)
    inner = item.get("hooks") if isinstance(item, dict) else None
    if not isinstance(inner, list):
        return 0, item
    others = [h for h in inner if not is_ours(h)]
    if len(others) == len(inner):
        return 0, item
    return len(inner) - len(others), (dict(item, hooks=others) if others else None)


def merge(doc: dict, spec: Agent, wanted: Dict[str, dict], where: Path) -> Tuple[dict, int, int]:
    """Put ``wanted`` (event -> entry) into a copy of ``doc``, dropping our other entries.

    An entry of ours is replaced where it stands; a group shared with other
    handlers keeps them.  Returns the new document and how many entries of ours
    were removed and placed.
    """
    doc = json.loads(json.dumps(doc))
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{where}: \"hooks\" is not a JSON object; nothing was written")
    had_content = bool(hooks)
    removed = placed = 0
    for event in list(hooks):
        items = hooks[event]
        if not isinstance(items, list):
            if event in wanted:
                raise UsageError(f"{where}: hooks.{event} is not a list; nothing was written")
            continue
        kept, done = [], event not in wanted
        for item in items:
            mine, rest = _strip_ours(item, spec)
            removed += mine
            if rest is not None:
                kept.append(rest)
            if mine and not done:
                kept.append(wanted[event])
                done = True
        if not done:
            kept.append(wanted[event])
        placed += event in wanted
        if kept or not items:
            hooks[event] = kept
        else:
            del hooks[event]  # only ours were there
    for event, entry in wanted.items():
        if event not in hooks:
            hooks[event] = [entry]
            placed += 1
    if hooks or ("hooks" in doc and not had_content):
        doc["hooks"] = hooks
    else:
        doc.pop("hooks", None)
    missing = {k: v for k, v in spec.skeleton if k not in doc} if wanted else {}
    return (dict(missing, **doc) if missing else doc), removed, placed


def check_symlink(path: Path, repo_root: Path, follow: bool) -> None:
    """Refuse a project settings file that a symlink sends outside the repository."""
    real, root = os.path.realpath(path), os.path.realpath(repo_root)
    if follow or real == os.path.abspath(path) or real.startswith(root.rstrip(os.sep) + os.sep):
        return
    raise UsageError(f"{path} is a symbolic link to {real}, outside the repository; pass "
                     "--follow-symlinks to change that file anyway - nothing was written")


def plan(agent: str, scope: str, repo_root: Path, skill_dir: Path, home: Path,
         uninstall: bool = False, follow_symlinks: bool = False,
         plugin: Optional[str] = None) -> List[Change]:
    """The changes install (or uninstall) would make; empty when there is nothing to do.

    ``plugin`` names the Claude Code plugin that already registers our hooks:
    install then adds none and takes ours out of the settings file instead.
    """
    spec = agent_spec(agent)
    path = config_path(agent, scope, repo_root, home)
    if scope == "project":
        check_symlink(path, repo_root, follow_symlinks)
    before, doc = read_config(path)
    if plugin is not None and not uninstall:
        new, removed, _ = merge(doc, spec, {}, path)
        if not removed:
            return []
        after = None if new in ({}, dict(spec.skeleton)) else \
            render_json(new, _detect_indent(before) if before else 2)
        return [Change(path=path, before=before, after=after,
                       summary=f"update {path}: remove {removed} {spec.name} hook entries "
                               f"({scope} scope): the plugin {plugin} registers them")]
    if uninstall:
        wanted: Dict[str, dict] = {}
    else:
        script = Path(skill_dir) / SCRIPT
        if not script.is_file():
            raise UsageError(f"{script} not found; --skill-dir must be the self-learning-skills folder")
        command, cwd = hook_command(spec, scope, repo_root, skill_dir)
        wanted = desired_entries(spec, command, cwd)
    new, removed, placed = merge(doc, spec, wanted, path)
    if before is not None and new == doc:
        return []
    if before is None and not wanted:
        return []
    n = f"{removed if uninstall else placed} {spec.name} hook entries"
    if uninstall and new in ({}, dict(spec.skeleton)):
        after = None  # nothing but what we wrote: remove the file
        summary = f"delete {path}: it held only our {n}"
    else:
        after = render_json(new, _detect_indent(before) if before else 2)
        if before is None:
            summary = f"create {path} with {n} ({scope} scope)"
        else:
            summary = f"update {path}: {'remove' if uninstall else 'set'} {n} ({scope} scope)"
    return [Change(path=path, before=before, after=after, summary=summary)]


def render_diff(change: Change) -> str:
    """A unified diff of one change, for a dry run."""
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    name = str(change.path)
    return "".join(difflib.unified_diff(before, after, name if change.before is not None else "/dev/null",
                                        name if change.after is not None else "/dev/null"))


def _backup_name(path: Path) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    flat = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(os.path.abspath(path)).as_posix().strip("/"))
    return f"{stamp}-{flat}"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply(changes: List[Change], backup_dir: Path) -> List[Path]:
    """Write each change atomically, backing up the previous file first; returns the paths touched."""
    done = []
    for change in changes:
        target = Path(os.path.realpath(change.path))  # write through a symlinked config
        try:
            current = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != change.before:
            raise SelfLearningError(f"{change.path} changed since the plan was made; run the command again")
        if current is not None:
            backup = Path(backup_dir) / _backup_name(change.path)
            store.guard(str(backup))  # a backup in the store: never through a link
            Path(backup_dir).mkdir(parents=True, exist_ok=True)
            store.atomic_write(str(backup), target.read_bytes())
        if change.after is None:
            if current is not None:
                target.unlink()
            done.append(Path(change.path))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = (target.stat().st_mode & 0o7777) if current is not None else (0o666 & ~_umask())
        fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(change.after)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        done.append(Path(change.path))
    return done


def _scan(path: Path, spec: Agent) -> dict:
    info = {"file": str(path), "exists": path.exists(), "installed": False,
            "events": [], "missing_events": [], "commands": [], "error": None}
    try:
        _, doc = read_config(path)
    except SelfLearningError as err:
        info["error"] = str(err)
        return info
    hooks = doc.get("hooks") if isinstance(doc.get("hooks"), dict) else {}
    commands = []
    for event, items in hooks.items():
        for item in items if isinstance(items, list) else []:
            inner = item.get("hooks") if spec.shape == "nested" and isinstance(item, dict) else [item]
            for h in inner if isinstance(inner, list) else []:
                if is_ours(h):
                    if event not in info["events"]:
                        info["events"].append(event)
                    cmd = h.get(spec.command_key) or h.get("command")
                    if cmd not in commands:
                        commands.append(cmd)
    info["commands"] = commands
    info["installed"] = bool(info["events"])
    info["missing_events"] = [e for e, _, _ in spec.events if e not in info["events"]] if commands else []
    return info


def status(repo_root: Path, home: Path) -> Dict[str, dict]:
    """Per agent and scope: the config file, whether our hooks are in it, and for which events."""
    out = {}
    for name, spec in AGENTS.items():
        out[name] = {
            "project": _scan(Path(repo_root) / spec.project_file, spec),
            "user": _scan(Path(home) / spec.user_file, spec) if spec.user_file else None,
            "manual_steps": list(MANUAL_STEPS.get(name, [])),
        }
    return out
