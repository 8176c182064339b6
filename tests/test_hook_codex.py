"""hook --agent codex: a command's exit code, which Codex's PostToolUse leaves out, is read from
the session's rollout file (real Codex 0.169 payload and rollout lines)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
PAYLOAD = json.loads((REPO / "tests/data/hooks/codex-real/PostToolUse.json").read_text())
ROLLOUT = (REPO / "tests/data/transcripts/codex-real-rollout.jsonl").read_text()


def fire(payload: dict):
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--agent", "codex"],
                          input=json.dumps(payload).encode(), capture_output=True, check=False,
                          env=dict(os.environ))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def stored(store: Path) -> dict:
    (obs,) = [json.loads(x) for x in (store / "observations.jsonl").read_text().splitlines()]
    return obs


@pytest.fixture
def rollout(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_text('{"type":"session_meta"}\n' + ROLLOUT)
    return path


def test_a_failed_command_is_a_failure_with_its_exit_code(store, rollout):
    assert "exit" not in PAYLOAD["tool_response"].lower()  # Codex sends the output only
    fire(dict(PAYLOAD, transcript_path=str(rollout)))
    obs = stored(store)
    assert (obs["event"], obs["exit_code"], obs["family"]) == ("tool_failure", 1, "npm test")
    assert obs["error"] == "Error: Cannot find module left-pad"


def test_exit_code_zero_and_unknown_calls_stay_successes(store, rollout, tmp_path):
    rollout.write_text(ROLLOUT.replace('"exit_code":1', '"exit_code":0'))
    fire(dict(PAYLOAD, transcript_path=str(rollout)))
    fire(dict(PAYLOAD, tool_use_id="call_unknown", transcript_path=str(rollout)))
    fire(dict(PAYLOAD, tool_use_id="call_x", transcript_path=str(tmp_path / "missing.jsonl")))
    events = [json.loads(x) for x in (store / "observations.jsonl").read_text().splitlines()]
    assert [(o["event"], o.get("exit_code")) for o in events] == [("tool_success", 0),
                                                                 ("tool_success", None),
                                                                 ("tool_success", None)]
