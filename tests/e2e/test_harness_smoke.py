"""Smoke test: the real Claude Code client, offline, fires real hooks.

Runs the pinned ``claude`` binary against the scripted Messages API server
(tests/e2e/claude_harness.py) in a temp project whose settings log every
hook payload.  Skipped when npm is not available.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claude_harness as ch  # noqa: E402

pytestmark = pytest.mark.e2e

SESSION_MARKER = "SESSIONSTART_MARKER_7731"
PROMPT_MARKER = "PROMPTSUBMIT_MARKER_8842"


def test_real_client_fires_hooks_with_real_payloads(claude_binary: Path, tmp_path: Path) -> None:
    project, home, log = tmp_path / "project", tmp_path / "home", tmp_path / "hooklog"
    (project / ".claude").mkdir(parents=True)
    log.mkdir()
    settings = ch.hook_logger_settings(
        log, ch.ALL_HOOK_EVENTS,
        echo={"SessionStart": SESSION_MARKER, "UserPromptSubmit": PROMPT_MARKER})
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    notes = project / "notes.txt"
    script = [
        ch.tool_use("Bash", {"command": "exit 3", "description": "Fail on purpose"}),
        ch.tool_use("Write", {"file_path": str(notes), "content": "hello\nworld\n"}),
        ch.tool_use("Edit", {"file_path": str(notes), "old_string": "world",
                             "new_string": "there"}),
        ch.tool_use("Read", {"file_path": str(notes)}),
        "All done.",
    ]
    with ch.ScriptedAnthropicServer(script) as server:
        proc = ch.run_claude(claude_binary, project, "write some notes", server, home, timeout=60)

    diag = f"rc={proc.returncode}\nstdout={proc.stdout}\nstderr={proc.stderr}"
    assert proc.returncode == 0, diag
    assert "All done." in proc.stdout, diag
    # the real tools ran
    assert notes.read_text() == "hello\nthere\n"

    hooks = ch.read_hook_log(log)
    failures = hooks.get("PostToolUseFailure", [])
    assert any(p["tool_name"] == "Bash" and p["error"].startswith("Exit code 3")
               for p in failures), hooks.keys()
    post_tools = [p["tool_name"] for p in hooks.get("PostToolUse", [])]
    assert "Write" in post_tools and "Edit" in post_tools and "Read" in post_tools
    pre_tools = [p["tool_name"] for p in hooks.get("PreToolUse", [])]
    assert pre_tools == ["Bash", "Write", "Edit", "Read"]
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert hooks.get(event), f"{event} did not fire; fired: {sorted(hooks)}"
    assert hooks["SessionStart"][0]["source"] == "startup"
    assert hooks["UserPromptSubmit"][0]["prompt"] == "write some notes"
    assert hooks["Stop"][0]["last_assistant_message"] == "All done."
    # every payload carries the base fields and a transcript the client wrote
    session_id = hooks["SessionStart"][0]["session_id"]
    for event, payloads in hooks.items():
        for p in payloads:
            assert p["hook_event_name"] == event
            assert p["session_id"] == session_id
            assert p["cwd"].startswith(str(project))
    transcript = Path(hooks["Stop"][0]["transcript_path"])
    assert transcript.is_file() and home in transcript.parents
    assert transcript in ch.find_transcripts(home)

    # the server saw the scripted conversation and the hooks' stdout
    main = server.main_requests
    assert [r.turn_index for r in main] == [0, 1, 2, 3, 4]
    last = main[-1].body["messages"]
    results = [b for m in last if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0]["is_error"] is True and "Exit code 3" in json.dumps(results[0])
    # SessionStart / UserPromptSubmit stdout reaches the model as context
    assert server.bodies_containing(SESSION_MARKER)
    assert server.bodies_containing(PROMPT_MARKER)
    for rec in server.requests:
        assert rec.headers.get("x-api-key") in (None, "<redacted>")
