"""The real Codex CLI, offline against a scripted Responses API: hooks written by
`install-hooks --agent codex` observe failing-then-fixed sessions, `maintain` mines the
failure into a lesson, and the next session's first model request carries it, once."""
import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest

import codex_harness as cx
from conftest import NOT_COPIED, REPO

pytestmark = pytest.mark.e2e

FAILING = ("npm test 2>/dev/null || { echo \"Error: Cannot find module 'left-pad'\" >&2; "
           "exit 1; }")
FIXED = "npm test --offline 2>/dev/null || echo '3 passing'"
DAYS = ["2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    skill = project / ".agents" / "skills" / "self-learning-skills"  # where Codex reads skills
    shutil.copytree(REPO, skill, ignore=NOT_COPIED)
    return project


def cli(project, *args):
    done = subprocess.run([sys.executable, str(project / ".agents/skills/self-learning-skills/"
                                               "scripts/self_learning.py"), *args],
                          cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def session(launcher, project, tmp_path, now, script, prompt):
    with cx.ScriptedResponsesServer(script) as server:
        proc = cx.run_codex(launcher, project, prompt, server, tmp_path / "codex-home",
                            extra_env={"SELF_LEARNING_NOW": now})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return server


def observations(project):
    path = project / ".agent-skills/self-learning/v1/users/tester/observations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_codex_learns_from_failing_then_fixed_sessions(codex_launcher, project, tmp_path,
                                                       monkeypatch):
    cli(project, "install-hooks", "--agent", "codex")
    hooks = (project / ".codex" / "hooks.json").read_text()
    assert str(tmp_path) not in hooks and "git rev-parse --show-toplevel" in hooks
    for day in DAYS:
        session(codex_launcher, project, tmp_path, day,
                [cx.command(FAILING), cx.command(FIXED), "Fixed: the tests pass."],
                "run the tests and fix them")

    obs = observations(project)
    keys = Counter((o["session_id"], o["event"], o.get("tool_use_id")) for o in obs)
    assert set(keys.values()) == {1}, keys  # each event stored once
    assert {o["agent"] for o in obs} == {"codex"}
    failures = [o for o in obs if o["event"] == "tool_failure"]
    assert [(f["family"], f["exit_code"], f["ts"][:10]) for f in failures] == \
        [("npm test", 1, d[:10]) for d in DAYS]
    assert all("Cannot find module 'left-pad'" in f["error"] for f in failures)
    fixed = [o for o in obs if o["event"] == "tool_success" and "--offline" in o.get("args", "")]
    assert len(fixed) == 3 and all(o["exit_code"] == 0 for o in fixed)
    assert {o["event"] for o in obs} >= {"session_start", "prompt", "pre_tool", "stop"}

    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-04T12:00:00Z")
    cli(project, "maintain", "--format", "json")
    cards = json.loads(cli(project, "list", "--format", "json", "--status", "accepted"))["items"]
    (lesson,) = [c for c in cards if c.get("origin") == "mined"]
    assert "npm test" in lesson["title"] and "Cannot find module" in lesson["title"]

    server = session(codex_launcher, project, tmp_path, "2026-03-05T09:00:00Z",
                     ["Nothing to fix today."], "what changed since yesterday?")
    first = server.texts()[0]
    assert first.count(lesson["id"]) == 1 and "Cannot find module" in first
