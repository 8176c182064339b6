"""hook: a second firing of the same event (two registrations) is stored and injected once."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from seeding import seed_record  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
REAL = REPO / "tests" / "data" / "hooks" / "claude-real"


def real(name: str) -> dict:
    return json.loads((REAL / f"{name}.json").read_text())


def fire(data: dict, env=None) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-S", str(SCRIPT), "hook", "--agent", "claude"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    proc.stdin.write(json.dumps(data).encode())
    proc.stdin.close()
    return proc


def finish(proc: subprocess.Popen):
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait() == 0 and err == b""
    return out


def observations(store: Path) -> list:
    path = store / "observations.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", ["PostToolUse", "PostToolUseFailure", "PreToolUse",
                                  "UserPromptSubmit", "Stop", "SessionEnd"])
def test_two_registrations_firing_together_store_the_event_once(store, name):
    procs = [fire(real(name)) for _ in range(3)]  # plugin, project and user settings at once
    for proc in procs:
        finish(proc)
    (obs,) = observations(store)
    assert obs["session_id"] == real(name)["session_id"]


def test_a_second_firing_after_the_first_finished_is_dropped_too(store):
    finish(fire(real("PostToolUse")))
    finish(fire(real("PostToolUse")))
    assert len(observations(store)) == 1
    assert not (store / "errors.jsonl").exists()


def test_other_tool_uses_prompts_and_sessions_are_kept(store):
    base = real("PostToolUse")
    variants = [base, dict(base, tool_use_id="toolu_other"), dict(base, prompt_id="p-other"),
                dict(base, session_id="another-session"),
                dict(base, hook_event_name="PostToolUseFailure", error="Exit code 1")]
    for data in variants:
        finish(fire(data))
    assert len(observations(store)) == len(variants)


def test_the_same_event_later_than_the_window_is_a_new_event(store):
    finish(fire(real("Stop"), {"SELF_LEARNING_NOW": "2026-03-02T10:00:00Z"}))
    finish(fire(real("Stop"), {"SELF_LEARNING_NOW": "2026-03-02T10:00:00Z"}))
    finish(fire(real("Stop"), {"SELF_LEARNING_NOW": "2026-03-02T10:00:03Z"}))
    assert [o["ts"] for o in observations(store)] == ["2026-03-02T10:00:00Z",
                                                      "2026-03-02T10:00:03Z"]


def test_notes_are_injected_once_when_session_start_fires_twice(run, store):
    card = {"id": "aha_build", "title": "Build needs the cache warmed", "status": "accepted",
            "solution_steps": ["run make warm before make build"]}
    assert seed_record({"aha_cards": [card]})[0] == 0  # an accepted card: the tool's to write
    outs = [finish(p) for p in [fire(real("SessionStart")) for _ in range(2)]]
    assert sorted(bool(o) for o in outs) == [False, True]
    assert b"aha_build" in b"".join(outs)
    surfacings = (store / "surfacings.jsonl").read_text().splitlines()
    assert len(surfacings) == 1 and len(observations(store)) == 1


def test_hook_help_prints_help_and_reads_no_stdin(store):
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--help"],
                          stdin=subprocess.PIPE, capture_output=True, timeout=20, check=False)
    assert done.returncode == 0 and done.stdout.startswith(b"usage: self_learning hook")
    assert b"examples:" in done.stdout and b"same event" in done.stdout
    assert not store.exists()
