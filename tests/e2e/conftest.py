"""Fixtures for tests that drive the real Claude Code client."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claude_harness as ch  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    try:
        binary = ch.ensure_claude()
    except (RuntimeError, OSError) as exc:  # npm present but the install failed
        pytest.skip(f"could not install {ch.CLAUDE_CODE_PACKAGE}@{ch.CLAUDE_CODE_VERSION}: {exc}")
    if binary is None:
        pytest.skip("npm is not on PATH: cannot install the Claude Code client for e2e tests")
    return binary


@pytest.fixture
def skill_project(tmp_path, monkeypatch):
    """A git repo with this skill folder dropped into .claude/skills/ and hooks installed.

    Returns (project, store, run_cli) where run_cli runs our CLI inside the project.
    """
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    skill = project / ".claude" / "skills" / "self-learning-skills"
    shutil.copytree(REPO / "scripts", skill / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if (REPO / "SKILL.md").exists():
        shutil.copy(REPO / "SKILL.md", skill / "SKILL.md")

    def run_cli(*args):
        return subprocess.run([sys.executable, str(skill / "scripts" / "self_learning.py"), *args],
                              cwd=project, capture_output=True, text=True, check=False)

    done = run_cli("install-hooks", "--agent", "claude")
    assert done.returncode == 0, done.stderr
    store = project / ".agent-skills" / "self-learning" / "v1" / "users" / "tester"
    return project, store, run_cli
