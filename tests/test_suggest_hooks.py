"""suggest-hooks: agents used in the repo without our hooks get the install-hooks command;
agents without hooks get the export-rules command."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from selflearn.cli.common import SKILL_DIR
from seeding import seed_record  # noqa: E402

pytestmark = pytest.mark.usefixtures("skill_in_repo")

SCRIPT = os.path.join(SKILL_DIR, "scripts", "self_learning.py")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def suggest(run):
    code, out, err = run(["suggest-hooks", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    return {r["agent"]: r for r in data["hook_agents"] + data["rules_agents"]}


def test_claude_without_hooks_and_gemini_with_hooks(run, repo):
    (repo / ".claude").mkdir()
    (repo / ".gemini").mkdir()
    code, _, err = run(["install-hooks", "--agent", "gemini"])
    assert code == 0, err
    rows = suggest(run)
    assert rows["claude"]["present"] and rows["claude"]["seen"] == [".claude"]
    assert rows["claude"]["hooks"] == "none"
    assert rows["claude"]["command"] == f"python3 {SCRIPT} install-hooks --agent claude"
    assert rows["gemini"]["hooks"] == "installed" and rows["gemini"]["scope"] == "project"
    assert rows["gemini"]["command"] == ""
    assert not rows["codex"]["present"] and not rows["cursor"]["present"]
    code, out, _ = run(["suggest-hooks"])
    assert out.splitlines() == [
        f"claude: used here (.claude), no hooks; add them: python3 {SCRIPT} install-hooks "
        "--agent claude",
        "gemini: hooks installed (project scope)"]


def test_the_suggested_command_works(run, repo, home):
    (repo / "CLAUDE.md").write_text("# notes\n")
    command = suggest(run)["claude"]["command"]
    copy = repo / ".claude" / "skills" / "self-learning-skills"  # where a user puts the folder
    shutil.copytree(os.path.join(SKILL_DIR, "scripts"), copy / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    command = command.replace(os.path.join(SKILL_DIR, "scripts"), str(copy / "scripts"))
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(command.replace("python3", sys.executable, 1).split(), env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    row = suggest(run)["claude"]
    assert row["hooks"] == "installed" and row["command"] == ""


def test_incomplete_hooks_are_flagged(run, repo):
    run(["install-hooks", "--agent", "cursor"])
    path = repo / ".cursor" / "hooks.json"
    doc = json.loads(path.read_text())
    del doc["hooks"]["stop"]
    path.write_text(json.dumps(doc))
    row = suggest(run)["cursor"]
    assert row["hooks"] == "incomplete" and row["missing_events"] == ["stop"]
    assert row["command"].endswith("install-hooks --agent cursor")


def test_agents_without_hooks_get_export_rules(run, repo):
    (repo / ".windsurfrules").write_text("be brief\n")
    (repo / ".continue").mkdir()
    rows = suggest(run)
    assert rows["windsurf"]["present"] and not rows["windsurf"]["exported"]
    assert rows["windsurf"]["command"] == f"python3 {SCRIPT} export-rules --agent windsurf"
    assert rows["continue"]["present"] and not rows["aider"]["present"]
    seed_record(({"aha_cards": [{"title": "Be brief", "status": "accepted"}]}))
    run(["export-rules", "--agent", "windsurf"])
    assert suggest(run)["windsurf"]["exported"]
    code, out, _ = run(["suggest-hooks"])
    assert "windsurf: used here (.windsurfrules), has no hooks; rules exported; refresh: " in out
    assert "continue: used here (.continue), has no hooks; export lessons as rules: " in out


def test_empty_repo_says_so(run, repo):
    code, out, _ = run(["suggest-hooks"])
    assert code == 0
    assert out == (f"no agent configuration found in {repo}; for Claude Code: python3 {SCRIPT} "
                   "install-hooks --agent claude\n")


def test_command_is_relative_when_the_skill_sits_in_the_repo(repo):
    from selflearn.surfacing import export_rules
    skill = repo / ".claude" / "skills" / "self-learning-skills"
    assert export_rules._command(str(repo), str(skill)) == \
        "python3 .claude/skills/self-learning-skills/scripts/self_learning.py"
    assert export_rules._command(str(repo), "/opt/sl") == "python3 /opt/sl/scripts/self_learning.py"
