"""The real Claude Code client fills the observation log once per event, however the hooks
were registered: plugin (trusted workspace), settings (untrusted), or both at once."""
import json
from collections import Counter

import pytest

import claude_harness as ch
import tap

pytestmark = pytest.mark.e2e


def observations(store):
    path = store / "observations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_real_session_is_observed_once(claude_binary, workspace):
    project, store, run_cli = workspace.project, workspace.store, workspace.run_cli
    settings = project / ".claude" / "settings.json"
    if workspace.kind == "trusted":
        assert "loads this folder as the plugin self-learning-skills@skills-dir" in \
            workspace.install_output
        assert not settings.exists()
    else:
        command = json.loads(settings.read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        assert command.startswith('python3 -S "$CLAUDE_PROJECT_DIR"/.claude/skills/')
    log = workspace.home / "payloads.jsonl"  # every payload Claude Code sends us, once
    tap.tap(workspace.skill / "hooks" / "hooks.json", log, into=project / ".claude" /
            "settings.local.json")
    notes = project / "notes.txt"
    script = [
        ch.tool_use("Bash", {"command": "npm test --silent 2>/dev/null; exit 3",
                             "description": "Run the tests"}),
        ch.tool_use("Write", {"file_path": str(notes), "content": "hello\nworld\n"}),
        ch.tool_use("Edit", {"file_path": str(notes), "old_string": "world", "new_string": "there"}),
        "Done.",
    ]
    with ch.ScriptedAnthropicServer(script) as server:
        proc = ch.run_claude(claude_binary, project, "take notes; token ghp_" + "x" * 36, server,
                             workspace.home, timeout=90)
    assert proc.returncode == 0, proc.stderr
    obs = observations(store)
    assert len(obs) == tap.stored_count(log) >= 10  # every event sent is stored, once
    keys = Counter((o["event"], o.get("tool_use_id"), o.get("prompt_id")) for o in obs)
    assert keys and set(keys.values()) == {1}, keys  # each event stored once
    assert {e for e, _, _ in keys} >= {"session_start", "prompt", "pre_tool", "tool_failure",
                                       "tool_success", "stop", "session_end"}
    by_event = {}
    for o in obs:
        by_event.setdefault(o["event"], []).append(o)
    (failure,) = [o for o in by_event["tool_failure"] if o.get("tool") == "Bash"]
    assert failure["exit_code"] == 3 and failure["family"] == "npm test"
    assert failure["outcome"] == "failure"
    successes = {o["tool"]: o for o in by_event.get("tool_success", [])}
    assert successes["Write"]["file"] == str(notes)
    assert (successes["Edit"]["edit_old"], successes["Edit"]["edit_new"]) == ("world", "there")
    assert by_event["session_start"][0]["source"] == "startup"
    (prompt,) = by_event["prompt"]
    assert "ghp_" + "x" * 36 not in prompt["prompt"] and "REDACTED" in prompt["prompt"]
    assert {o["session_id"] for o in obs} == {by_event["session_start"][0]["session_id"]}
    assert not (store / "errors.jsonl").exists()
    done = run_cli("doctor", "--format", "json")
    doctor = json.loads(done.stdout)
    claude = doctor["agents"]["claude"]
    assert claude["last_event"]["event"] in ("session_end", "stop")
    plugin = "plugin self-learning-skills@skills-dir"
    expected = {"trusted": [plugin], "untrusted": ["project settings"],
                "trusted-twice": [plugin, "project settings"]}[workspace.kind]
    assert claude["registrations"] == expected
    doubles = [p for p in doctor["problems"] if p.startswith("claude: hooks registered 2 times")]
    assert len(doubles) == (workspace.kind == "trusted-twice") == done.returncode
    assert doctor["problems"] == doubles  # a double registration, and only it, exits 1
    assert run_cli("doctor", "--report-only").returncode == 0


def test_a_call_refused_for_want_of_permission_is_a_denial(claude_binary, tmp_path, monkeypatch):
    """Claude Code fires no hook for a refused call; PostToolBatch carries the refusal."""
    from conftest import make_workspace
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT", raising=False)
    ws = make_workspace(tmp_path, "trusted")
    script = [ch.tool_use("Bash", {"command": "git reset --hard", "description": "Discard"}),
              "Understood, nothing was reset."]
    with ch.ScriptedAnthropicServer(script) as server:
        proc = ch.run_claude(claude_binary, ws.project, "reset the repo", server, ws.home,
                             timeout=90, skip_permissions=False)
    assert proc.returncode == 0, proc.stderr
    obs = [o for o in observations(ws.store) if o.get("args") == "git reset --hard"]
    assert [(o["event"], o.get("outcome"), o.get("reason")) for o in obs] == [
        ("pre_tool", None, None), ("permission_denied", "denial", "This command requires approval")]
