"""The real Claude Code client with hooks placed by `install-hooks` fills the observation log."""
import json

import pytest

import claude_harness as ch

pytestmark = pytest.mark.e2e


def observations(store):
    path = store / "observations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_real_session_is_observed(claude_binary, skill_project, tmp_path):
    project, store, run_cli = skill_project
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert "$CLAUDE_PROJECT_DIR" in settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
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
                             tmp_path / "home", timeout=90)
    assert proc.returncode == 0, proc.stderr
    obs = observations(store)
    by_event = {}
    for o in obs:
        by_event.setdefault(o["event"], []).append(o)
    failure = [o for o in by_event.get("tool_failure", []) if o.get("tool") == "Bash"]
    assert len(failure) == 1, obs
    assert failure[0]["exit_code"] == 3 and failure[0]["family"] == "npm test"
    assert failure[0]["outcome"] == "failure"
    successes = {o["tool"]: o for o in by_event.get("tool_success", [])}
    assert successes["Write"]["file"] == str(notes)
    assert (successes["Edit"]["edit_old"], successes["Edit"]["edit_new"]) == ("world", "there")
    assert by_event["session_start"][0]["source"] == "startup"
    (prompt,) = by_event["prompt"]
    assert "ghp_" + "x" * 36 not in prompt["prompt"] and "REDACTED" in prompt["prompt"]
    assert {o["session_id"] for o in obs} == {by_event["session_start"][0]["session_id"]}
    assert not (store / "errors.jsonl").exists()
    doctor = json.loads(run_cli("doctor", "--format", "json").stdout)
    assert doctor["agents"]["claude"]["installed"] == ["project"]
    assert doctor["agents"]["claude"]["last_event"]["event"] in ("session_end", "stop")
