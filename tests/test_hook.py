"""hook: exit 0 always, quiet stdout, errors logged, kill switch, capped records."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
REAL = REPO / "tests" / "data" / "hooks" / "claude-real"


def hook(stdin: bytes, *args, env=None):
    return subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", *args], input=stdin,
                          capture_output=True, env={**os.environ, **(env or {})}, check=False)


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_real_payload_is_stored_quietly(store):
    done = hook((REAL / "PostToolUseFailure.json").read_bytes(), "--agent", "claude")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (obs,) = read(store / "observations.jsonl")
    assert (obs["event"], obs["tool"], obs["exit_code"], obs["v"]) == ("tool_failure", "Bash", 3, 1)
    assert obs["id"].startswith("obs_") and obs["ts"].endswith("Z")


@pytest.mark.parametrize("stdin, reason", [
    (b"", "empty payload on stdin"),
    (b"   \n", "empty payload on stdin"),
    # 3.9's scanner raises json's own error; 3.10+ without json loaded gives ours
    (b"{not json", ("not a JSON document", "Expecting property name")),
    (b"[1, 2]", "payload is a JSON list, not an object"),
    (b"\xff\xfe{\"a\": 1}", "payload is not UTF-8"),
    (b"{\"a\": 1} trailing", "extra data after JSON document"),
])
def test_bad_stdin_exits_0_and_logs_one_error(store, stdin, reason):
    done = hook(stdin, "--agent", "auto")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (err,) = read(store / "errors.jsonl")
    reasons = (reason,) if isinstance(reason, str) else reason
    assert any(r in err["error"] for r in reasons) and err["where"] == "hook"
    assert not (store / "observations.jsonl").exists()


def test_huge_payload_is_stored_capped(store):
    payload = {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash",
               "tool_use_id": "toolu_1", "tool_input": {"command": "cat big.log"},
               "tool_response": {"stdout": "x" * (10 * 1024 * 1024), "stderr": ""},
               "prompt": "y" * 100000}
    done = hook(json.dumps(payload).encode(), "--agent", "claude")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    raw = (store / "observations.jsonl").read_bytes()
    assert len(raw) < 4096 and raw.count(b"\n") == 1


def test_many_long_fields_still_fit_4k(store, tmp_path):
    from selflearn.observation import hook as hook_mod
    record = {"v": 1, "id": "obs_x", "ts": "t", "agent": "claude", "event": "prompt",
              **{f"f{i}": "é" * 900 for i in range(8)}}
    line = hook_mod.fit_record(record)
    assert len(line) <= hook_mod.MAX_RECORD and json.loads(line)["truncated"] is True


@pytest.mark.parametrize("switch", ["env", "marker"])
def test_kill_switch_makes_hook_a_noop(store, repo, switch):
    env = {}
    if switch == "env":
        env["SELF_LEARNING_DISABLE"] = "1"
    else:
        marker = repo / ".agent-skills" / "self-learning" / "disabled"
        marker.parent.mkdir(parents=True)
        marker.write_text("")
    done = hook((REAL / "SessionStart.json").read_bytes(), env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not store.exists()


def test_unwritable_store_never_fails_the_agent(repo):
    (repo / ".agent-skills").write_text("a file where a folder should be")
    done = hook((REAL / "SessionStart.json").read_bytes())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_every_real_event_is_accepted(store):
    for path in sorted(REAL.glob("*.json")):
        assert hook(path.read_bytes(), "--agent", "auto").returncode == 0
    events = {o["event"] for o in read(store / "observations.jsonl")}
    assert {"session_start", "prompt", "pre_tool", "tool_success", "tool_failure", "stop",
            "session_end", "compact", "stop_failure"} <= events
    assert not (store / "errors.jsonl").exists()


def test_hook_path_imports_stay_small(store):
    probe = ("import sys, io; sys.path.insert(0, %r); sys.argv = ['x', 'hook'];"
             "sys.stdin = io.TextIOWrapper(io.BytesIO(open(%r, 'rb').read()));"
             "from selflearn.observation import hook; hook.main(['--agent', 'claude']);"
             "print(sorted(m for m in ('os', 'json', 're', 'argparse', 'typing', 'hashlib', 'datetime',"
             "'selflearn.cli.parser', 'selflearn.cli.common', 'selflearn.storage.model') if m in sys.modules))"
             % (str(REPO / "scripts"), str(REAL / "PostToolUse.json")))
    done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
    assert len(read(store / "observations.jsonl")) == 1


def test_cli_dispatches_hook_in_process(run, store, monkeypatch):
    code, out, err = run(["hook", "--agent", "claude"], (REAL / "Stop.json").read_text())
    assert (code, out, err) == (0, "", "")
    assert read(store / "observations.jsonl")[0]["event"] == "stop"
