"""install-hooks / uninstall-hooks / doctor through the CLI."""
import json

import pytest

pytestmark = pytest.mark.usefixtures("skill_in_repo")


def js(run, *args):
    code, out, err = run([*args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def test_dry_run_writes_nothing(run, repo):
    code, out, err = run(["install-hooks", "--agent", "claude", "--dry-run"])
    assert code == 0 and err == ""
    assert out.startswith(f"create {repo / '.claude' / 'settings.json'} with 11 claude hook entries")
    assert "+++ " in out and "self_learning.py hook --agent claude" in out
    assert "\n+    \"SessionStart\": [\n" in out  # the diff as lines, not one escaped line
    assert "\\x0a" not in out
    assert not (repo / ".claude").exists()


def test_install_merges_backs_up_and_uninstalls(run, repo, store):
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {"permissions": {"allow": ["Bash(ls:*)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    settings.write_text(json.dumps(original, indent=2) + "\n")
    data = js(run, "install-hooks", "--agent", "claude")
    assert data["written"] == [str(settings)]
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == original["permissions"]
    stop_commands = [h["command"] for g in merged["hooks"]["Stop"] for h in g["hooks"]]
    assert "echo mine" in stop_commands and any("self_learning.py hook" in c for c in stop_commands)
    assert [p.read_text() for p in (store / "backups").iterdir()] == [json.dumps(original, indent=2) + "\n"]
    assert js(run, "install-hooks", "--agent", "claude")["changes"] == []  # idempotent
    js(run, "uninstall-hooks", "--agent", "claude")
    assert json.loads(settings.read_text()) == original


def test_invalid_settings_refused(run, repo):
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ // comment\n}")
    code, out, err = run(["install-hooks", "--agent", "gemini"])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("self_learning: error: ") and str(settings) in err
    assert settings.read_text() == "{ // comment\n}"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "cursor"])
def test_doctor_reports_installed_agents(run, repo, agent):
    run(["install-hooks", "--agent", agent])
    code, out, _ = run(["doctor"])
    assert code == 1 and out.endswith("see the problems above\n")  # a problem fails a CI step
    data = js(run, "doctor", "--report-only")
    assert data["agents"][agent]["installed"] == ["project"]
    assert f"{agent}: hooks installed but no event seen yet (start a session)" in data["problems"]
    assert data["healthy"] is False


def test_doctor_shows_errors_kill_switch_and_last_event(run, repo, store, monkeypatch):
    run(["hook", "--agent", "claude"], '{"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"}')
    run(["hook", "--agent", "claude"], "not json")
    assert run(["doctor"])[0] == 1  # a hook error is reported until errors.jsonl is deleted
    data = js(run, "doctor", "--report-only")
    assert data["agents"]["claude"]["last_event"]["event"] == "session_start"
    assert data["errors"] == 1 and "not a JSON document" in data["recent_errors"][0]["error"]
    assert data["disabled"] is None
    monkeypatch.setenv("SELF_LEARNING_DISABLE", "1")
    code, out, _ = run(["doctor"])
    assert "observation: OFF (SELF_LEARNING_DISABLE is set)" in out
