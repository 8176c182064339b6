"""The real Codex CLI, Gemini CLI and GitHub Copilot CLI, offline against scripted model APIs:
hooks written by `install-hooks --agent <name>` (portable project files) observe
failing-then-fixed sessions once each, `maintain` mines the failure into a lesson, and the next
session's first model request carries it, once (Copilot ignores hook output, so nothing is
injected there). Cursor has no client that runs offline: tests/test_hook_files.py checks its
file against the documented shape."""
import json
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone

import pytest

import claude_harness as ch
import codex_harness as cx
import copilot_harness as px
import gemini_harness as gx
import tap

pytestmark = pytest.mark.e2e

# The agent reads the settings example at the root, where it is not, then in config/: a certain
# fix the just-in-time check keeps (the fix's file exists), as in test_surfacing_e2e.py.
FAILING = "cat settings.example.yaml"
FIXED = "cat config/settings.example.yaml"
ERROR = "cat: settings.example.yaml: No such file or directory"
DAYS = ["2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"]

# agent -> (harness, launcher fixture, hook file, the hook file's portable root)
AGENTS = {
    "codex": (cx, "codex_launcher", ".codex/hooks.json", "git rev-parse --show-toplevel"),
    "gemini": (gx, "gemini_launcher", ".gemini/settings.json", "$GEMINI_PROJECT_DIR"),
    "copilot": (px, "copilot_launcher", ".github/hooks/self-learning.json", '"cwd": "."'),
}
SERVERS = {"codex": cx.ScriptedResponsesServer, "gemini": gx.ScriptedGeminiServer,
           "copilot": px.server}
RUNS = {"codex": cx.run_codex, "gemini": gx.run_gemini, "copilot": px.run_copilot}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "config").mkdir()
    (project / "config" / "settings.example.yaml").write_text("port: 8080\n")
    ch.copy_skill(project / ".agents" / "skills" / "self-learning-skills")
    return project


def cli(project, *args):
    done = subprocess.run([sys.executable, str(project / ".agents/skills/self-learning-skills/"
                                               "scripts/self_learning.py"), *args],
                          cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def session(agent, launcher, project, home, now, script, prompt):
    with SERVERS[agent](script) as server:
        proc = RUNS[agent](launcher, project, prompt, server, home,
                           extra_env={"SELF_LEARNING_NOW": now})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return server


@pytest.mark.parametrize("agent", list(AGENTS))
def test_agent_learns_from_failing_then_fixed_sessions(agent, project, tmp_path, monkeypatch,
                                                       request):
    harness, fixture, hook_file, root = AGENTS[agent]
    launcher = request.getfixturevalue(fixture)
    home = tmp_path / "home"
    cli(project, "install-hooks", "--agent", agent)
    hooks = (project / hook_file).read_text()
    assert str(tmp_path) not in hooks and root in hooks
    log = tmp_path / "payloads.jsonl"  # every payload the client sends us, logged beside us
    tap.tap(project / hook_file, log)
    store = project / ".agent-skills/self-learning/v1/users/tester"
    servers = []
    for day in DAYS:  # a day apart: the learning a session started has ended before the next
        servers.append(session(agent, launcher, project, home, day, [
            harness.command(FAILING), harness.command(FIXED), "The port is 8080."],
            "which port does the app use?"))
        state = ch.wait_for_learning(store, datetime.fromisoformat(day[:-1]).replace(
            tzinfo=timezone.utc).timestamp() - 1)
    # the first session recovered from a failure no lesson covered: the end of its turn asks
    # the agent to record it (Codex Stop: decision block; Gemini AfterAgent: deny, a new
    # prompt), once; later sessions get the lesson instead (Copilot has no channel for either)
    asked = [sum("before you finish" in t for t in server.texts()[-1:]) for server in servers]
    assert asked == ([0, 0, 0] if agent == "copilot" else [1, 0, 0]), asked

    path = project / ".agent-skills/self-learning/v1/users/tester/observations.jsonl"
    obs = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(obs) == tap.stored_count(log) > 3 * len(DAYS)  # every event sent is stored
    if agent == "gemini":  # PreCompress before every model turn: questions, not compactions
        sent = [e for e in tap.payloads(log) if e["payload"]["hook_event_name"] == "PreCompress"]
        assert len(sent) >= len(DAYS) and not [o for o in obs if o["event"] == "compact"]
    keys = Counter((o["session_id"], o["event"], o.get("tool_use_id"), o.get("args"), o["ts"],
                    o.get("prompt"), o.get("last_message"), o.get("stop_hook_active"))
                   for o in obs)
    assert set(keys.values()) == {1}, keys  # each event stored once
    assert {o["agent"] for o in obs} == {agent} and len({o["session_id"] for o in obs}) == 3
    failures = [o for o in obs if o["event"] == "tool_failure"]
    assert [(f["family"], f["exit_code"], f["ts"][:10]) for f in failures] == \
        [("cat", 1, d[:10]) for d in DAYS]
    assert all(f["error"] == ERROR for f in failures)
    fixed = [o for o in obs if o["event"] == "tool_success" and o.get("args") == FIXED]
    assert len(fixed) == len(DAYS)
    assert {o["event"] for o in obs} >= {"session_start", "prompt", "pre_tool", "stop"}

    # nobody runs maintain: the hooks started it in the background after the last session
    assert state["last_result"]["trigger"] in ("turn-end", "session-end")
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-04T12:00:00Z")
    cards = json.loads(cli(project, "list", "--format", "json", "--status", "accepted"))["items"]
    (lesson,) = [c for c in cards if c.get("origin") == "mined"]
    assert lesson["title"] == f"`cat` fails with `{ERROR}`"
    assert lesson["solution_steps"][0] == f"use `{FIXED}` instead of `{FAILING}`"

    # the fourth session makes the same call: the lesson comes with its failure (not at the
    # session's start, where it would be noise in every session that never makes the call)
    server = session(agent, launcher, project, home, "2026-03-05T09:00:00Z",
                     [harness.command(FAILING), harness.command(FIXED), "The port is 8080."],
                     "which port does the app use?")
    texts = server.texts()
    assert lesson["id"] not in texts[0]
    if agent == "copilot":  # Copilot ignores what hooks print (references/INTEGRATION.md)
        assert not any(lesson["id"] in t for t in texts)
        return
    assert texts[1].count(lesson["id"]) == 1 and "settings.example.yaml" in texts[1]


def test_copilot_firing_our_claude_entry_too_stores_each_event_once(project, tmp_path,
                                                                     copilot_launcher):
    """Copilot CLI also runs the hooks of .claude/settings.json, with each event cased for VS
    Code: the same event at two entries is stored once, and every event Copilot sent is."""
    cli(project, "install-hooks", "--agent", "copilot")
    cli(project, "install-hooks", "--agent", "claude", "--ignore-plugin")
    log = tmp_path / "payloads.jsonl"  # what Copilot sends to its own entry
    tap.tap(project / ".github/hooks/self-learning.json", log)
    session("copilot", copilot_launcher, project, tmp_path / "home", DAYS[0],
            [px.command(FAILING), px.command(FIXED), "The port is 8080."], "which port?")
    path = project / ".agent-skills/self-learning/v1/users/tester/observations.jsonl"
    obs = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(obs) == tap.stored_count(log) >= 8
    assert [o["args"] for o in obs if o["event"] == "pre_tool"] == [FAILING, FIXED]
