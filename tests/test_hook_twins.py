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
HOOKS = REPO / "tests" / "data" / "hooks"
NOW = {"SELF_LEARNING_NOW": "2026-03-02T10:00:00Z"}  # every firing in the same second


def real(name: str, agent: str = "claude-real") -> dict:
    data = json.loads((HOOKS / agent / f"{name}.json").read_text())
    return data.get("payload", data)


def fire(data: dict, env=None, agent: str = "claude") -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-S", str(SCRIPT), "hook", "--agent", agent],
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


def test_copilot_calls_without_an_id_are_kept_when_tool_args_or_time_differ(store):
    """Copilot sends no tool-call id: `npm test` then `npm run lint` are two calls, and so is
    `npm test` run again (a new timestamp); the same bytes twice are one call fired twice."""
    base = real("preToolUse", "copilot")
    calls = [dict(base, toolArgs='{"command":"npm test"}'),
             dict(base, toolArgs='{"command":"npm run lint"}'),
             dict(base, toolArgs='{"command":"npm test"}', timestamp=base["timestamp"] + 900),
             dict(base, toolArgs='{"command":"npm run lint"}')]  # the second call fired again
    for data in calls:
        finish(fire(data, NOW, "copilot"))
    assert [o["args"] for o in observations(store)] == ["npm test", "npm run lint", "npm test"]


def test_gemini_tools_within_a_second_are_all_kept(store):
    """Two different tools within a second, each before and after: four events."""
    before, after = real("BeforeTool", "gemini"), real("AfterTool", "gemini")
    read = {"tool_name": "read_file", "tool_input": {"absolute_path": "/home/dev/app/a.txt"}}
    for data in (before, dict(before, **read), after, dict(after, **read)):
        finish(fire(data, NOW, "gemini"))
    assert [(o["event"], o["tool"]) for o in observations(store)] == [
        ("pre_tool", "run_shell_command"), ("pre_tool", "read_file"),
        ("tool_failure", "run_shell_command"), ("tool_success", "read_file")]


def test_copilot_firing_our_claude_entry_too_is_one_event(store):
    """Copilot CLI runs .claude/settings.json hooks as well, with the same event cased for VS
    Code (payloads of Copilot CLI 1.0.102); a second call at another instant is kept."""
    camel = {"sessionId": "772d1f93", "timestamp": 1795731488926, "cwd": "/tmp/project",
             "toolName": "bash", "toolArgs": {"command": "echo one"}}
    pascal = {"hook_event_name": "PreToolUse", "session_id": "772d1f93",
              "timestamp": "2026-11-26T22:18:08.926Z", "cwd": "/tmp/project",
              "tool_name": "Bash", "tool_input": {"command": "echo one"}}
    later = dict(camel, timestamp=camel["timestamp"] + 1)
    text = "cat: x: No such file or directory\n<shellId: 0 completed with exit code 1>"
    post = dict(camel, timestamp=camel["timestamp"] + 300,
                toolResult={"resultType": "success", "textResultForLlm": text})
    post_cased = dict(pascal, hook_event_name="PostToolUse", timestamp="2026-11-26T22:18:09.226Z",
                      tool_result={"result_type": "success", "text_result_for_llm": text})
    for data, agent in ((camel, "copilot"), (pascal, "claude"), (later, "copilot"),
                        (post_cased, "claude"), (post, "copilot")):
        finish(fire(data, NOW, agent))
    got = [(o["agent"], o["event"], o.get("exit_code")) for o in observations(store)]
    assert got == [("copilot", "pre_tool", None)] * 2 + [("copilot", "tool_failure", 1)]


def test_the_same_payload_under_another_event_name_is_another_event(store):
    payload = {"sessionId": "cop-1", "timestamp": 1704614600000, "cwd": "/app"}
    for event in ("sessionStart", "sessionEnd"):
        proc = subprocess.Popen([sys.executable, "-S", str(SCRIPT), "hook", "--agent", "copilot",
                                 "--event", event], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, **NOW})
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
        finish(proc)
    assert [o["event"] for o in observations(store)] == ["session_start", "session_end"]


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
