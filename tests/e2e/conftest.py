"""Fixtures for tests that drive the real Claude Code client."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claude_harness as ch  # noqa: E402


# How the hooks get registered in each workspace, as README and INTEGRATION.md tell users:
#   trusted        the folder loads as the plugin self-learning-skills@skills-dir; install-hooks
#                  says so and adds nothing
#   untrusted      headless run in a workspace never trusted: the plugin does not load, so
#                  install-hooks --ignore-plugin puts the hooks in .claude/settings.json
#   trusted-twice  both at once (the double registration): every event still stored once
WORKSPACES = {
    "trusted": (True, ["install-hooks", "--agent", "claude"]),
    "untrusted": (False, ["install-hooks", "--agent", "claude", "--ignore-plugin"]),
    "trusted-twice": (True, ["install-hooks", "--agent", "claude", "--ignore-plugin"]),
}


@pytest.fixture(autouse=True)
def learning_as_installed(isolated, monkeypatch):
    """The real clients run the hooks as a user has them: learning starts in the background
    (the suite's own tests turn it off unless they ask for it)."""
    monkeypatch.delenv("SELF_LEARNING_LEARN", raising=False)


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    try:
        binary = ch.ensure_claude()
    except (RuntimeError, OSError) as exc:  # npm present but the install failed
        pytest.skip(f"could not install {ch.CLAUDE_CODE_PACKAGE}@{ch.CLAUDE_CODE_VERSION}: {exc}")
    if binary is None:
        pytest.skip("npm is not on PATH: cannot install the Claude Code client for e2e tests")
    return binary


def trust(home: Path, project: Path) -> None:
    """Pre-accept Claude Code's trust dialog for ``project`` (what answering it writes)."""
    config = home / ".claude.json"
    doc = json.loads(config.read_text()) if config.exists() else {}
    doc.setdefault("projects", {}).setdefault(str(project), {})["hasTrustDialogAccepted"] = True
    config.write_text(json.dumps(doc, indent=2))


def make_workspace(tmp_path: Path, kind: str) -> SimpleNamespace:
    trusted, install = WORKSPACES[kind]
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    skill = ch.copy_skill(project / ".claude" / "skills" / "self-learning-skills")
    if trusted:
        trust(home, project)

    def run_cli(*args):
        env = {**os.environ, "HOME": str(home)}
        env.pop("SELF_LEARNING_REPO_ROOT", None)
        return subprocess.run([sys.executable, str(skill / "scripts" / "self_learning.py"), *args],
                              cwd=project, capture_output=True, text=True, check=False, env=env)

    done = run_cli(*install)
    assert done.returncode == 0, done.stderr
    store = project / ".agent-skills" / "self-learning" / "v1" / "users" / "tester"
    return SimpleNamespace(kind=kind, trusted=trusted, project=project, home=home, skill=skill,
                           store=store, run_cli=run_cli, install_output=done.stdout)


@pytest.fixture(params=list(WORKSPACES))
def workspace(request, tmp_path, monkeypatch):
    """A git repo with the whole skill folder in .claude/skills/ and hooks registered per ``kind``."""
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT", raising=False)
    return make_workspace(tmp_path, request.param)



def _launcher(ensure, package: str, version: str) -> Path:
    try:
        launcher = ensure()
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"could not install {package}@{version}: {exc}")
    if launcher is None:
        pytest.skip(f"npm is not on PATH: cannot install {package} for e2e tests")
    return launcher


@pytest.fixture(scope="session")
def codex_launcher() -> Path:
    import codex_harness as cx
    return _launcher(cx.ensure_codex, cx.CODEX_PACKAGE, cx.CODEX_VERSION)


@pytest.fixture(scope="session")
def gemini_launcher() -> Path:
    import gemini_harness as gx
    return _launcher(gx.ensure_gemini, gx.GEMINI_PACKAGE, gx.GEMINI_VERSION)


@pytest.fixture(scope="session")
def copilot_launcher() -> Path:
    import copilot_harness as px
    return _launcher(px.ensure_copilot, px.COPILOT_PACKAGE, px.COPILOT_VERSION)
