"""Shared test fixtures: an isolated store per test and an in-process CLI runner."""
import io
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(REPO, "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)

from selflearn.cli import parser as cli  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: runs the real Claude Code client (needs npm)")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Every test gets its own repo root, user and global store; no kill switch, real clock;
    no learning started in the background (a test that wants it sets SELF_LEARNING_LEARN)."""
    repo = tmp_path / "sl-repo"
    repo.mkdir()
    monkeypatch.setenv("SELF_LEARNING_REPO_ROOT", str(repo))
    monkeypatch.setenv("SELF_LEARNING_USER", "tester")
    monkeypatch.setenv("SELF_LEARNING_GLOBAL_DIR", str(tmp_path / "global"))
    monkeypatch.setenv("SELF_LEARNING_LEARN", "off")
    for var in ("SELF_LEARNING_DISABLE", "SELF_LEARNING_NOW", "SELF_LEARNING_LLM_CMD"):
        monkeypatch.delenv(var, raising=False)
    return repo


@pytest.fixture
def skill_in_repo(isolated, tmp_path, monkeypatch):
    """The skill folder as a user places it: inside the repo (install-hooks writes no machine path).

    A stub entry point is enough for install-hooks; Claude Code's config folder is a temp one.
    """
    skill = isolated / "vendor" / "self-learning-skills"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "self_learning.py").write_text("# stub entry point\n")
    monkeypatch.setattr("selflearn.cli.hooks.SKILL_DIR", str(skill))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    return skill


@pytest.fixture
def repo(isolated):
    return isolated


@pytest.fixture
def store(repo):
    """The project store folder of the isolated repo."""
    return repo / ".agent-skills" / "self-learning" / "v1" / "users" / "tester"


@pytest.fixture
def run(capsys, monkeypatch):
    """``run(args, stdin=None) -> (code, out, err)`` through ``cli.main`` in-process."""
    def _run(args, stdin=None):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err
    return _run

