"""Does Claude Code load the skill folder as a plugin (whose hooks/hooks.json registers our hooks)?

Claude Code auto-loads a folder of ``<repo>/.claude/skills/`` or
``~/.claude/skills/`` that carries ``.claude-plugin/plugin.json`` as the plugin
``<name>@skills-dir`` (a project one only once the workspace is trusted); a
plugin installed from a marketplace is listed in
``~/.claude/plugins/installed_plugins.json``. Either way its hooks fire
besides any in settings files, so ``install-hooks`` and ``doctor`` ask here.
Reads only; imports the standard library and storage errors, nothing above.
"""

import json
import os
from pathlib import Path
from typing import List, Optional

MANIFEST = Path(".claude-plugin") / "plugin.json"
SKILLS_DIR = "skills-dir"  # the marketplace name Claude Code gives auto-loaded skill folders


def config_dir(home: Path) -> Path:
    """``~/.claude``, or ``$CLAUDE_CONFIG_DIR``."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(moved).expanduser() if moved else Path(home) / ".claude"


def _json(path: Path) -> dict:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def manifest_name(skill_dir: Path) -> Optional[str]:
    name = _json(Path(skill_dir) / MANIFEST).get("name")
    return name if isinstance(name, str) and name else None


def _same(a: Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _enabled(plugin_id: str, repo_root: Path, home: Path) -> bool:
    """``enabledPlugins`` in local, project, then user settings: the first that names it wins."""
    for path in (Path(repo_root) / ".claude" / "settings.local.json",
                 Path(repo_root) / ".claude" / "settings.json",
                 config_dir(home) / "settings.json"):
        value = (_json(path).get("enabledPlugins") or {})
        if isinstance(value, dict) and isinstance(value.get(plugin_id), bool):
            return value[plugin_id]
    return True


def trusted(repo_root: Path, home: Path) -> bool:
    """Has the trust dialog been accepted for the repo or a folder above it (``~/.claude.json``)?"""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    config = Path(moved).expanduser() / ".claude.json" if moved else Path(home) / ".claude.json"
    projects = _json(config).get("projects")
    if not isinstance(projects, dict):
        return False
    here = Path(os.path.abspath(repo_root))
    for folder in (here, *here.parents):
        entry = projects.get(folder.as_posix())
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def _installed_ids(name: str, home: Path) -> List[str]:
    doc = _json(config_dir(home) / "plugins" / "installed_plugins.json")
    plugins = doc.get("plugins", doc)
    return sorted(k for k in plugins if isinstance(k, str) and k.split("@", 1)[0] == name) \
        if isinstance(plugins, dict) else []


def find(skill_dir: Path, repo_root: Path, home: Path) -> List[dict]:
    """Every way Claude Code loads this skill folder as a plugin, enabled or not.

    Each: ``id`` (name@marketplace), ``how`` (words for people), ``enabled``,
    ``needs_trust`` (a project skills folder loads only in a trusted workspace)
    and ``trusted`` (whether it is, as far as ``~/.claude.json`` says).
    """
    name = manifest_name(skill_dir)
    if name is None:
        return []
    out = []
    parent = Path(os.path.abspath(skill_dir)).parent
    where = {"project": Path(repo_root) / ".claude" / "skills",
             "user": config_dir(home) / "skills"}
    for scope, folder in where.items():
        if _same(parent, folder):
            plugin_id = f"{name}@{SKILLS_DIR}"
            out.append({"id": plugin_id, "how": f"{scope} skills folder {folder}",
                        "enabled": _enabled(plugin_id, repo_root, home),
                        "needs_trust": scope == "project",
                        "trusted": scope != "project" or trusted(repo_root, home)})
    for plugin_id in _installed_ids(name, home):
        out.append({"id": plugin_id, "how": "installed plugin",
                    "enabled": _enabled(plugin_id, repo_root, home), "needs_trust": False,
                    "trusted": True})
    return out


def loading(skill_dir: Path, repo_root: Path, home: Path, now: bool = False) -> List[dict]:
    """The enabled ones, each registering our hooks once more; ``now``: only those loading
    today (a project skills folder waits for the workspace's trust)."""
    return [p for p in find(skill_dir, repo_root, home)
            if p["enabled"] and (p["trusted"] or not now)]
