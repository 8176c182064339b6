"""Tests for selflearn.observation.observe: hook payload normalization for five agents.

Fixtures live in tests/data/hooks/<agent>/<Event>.json as
``{"payload": {...}, "expected": {...} | null}``; tests/data/hooks/claude-real/
holds raw payloads captured from a real Claude Code run (no expectation file).
"""
import ast
import glob
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(REPO, "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)

from selflearn.observation import observe, toolcall  # noqa: E402
from selflearn.storage import redact

HOOKS = os.path.join(REPO, "tests", "data", "hooks")
FIXTURES = sorted(f for agent in observe.AGENTS
                  for f in glob.glob(os.path.join(HOOKS, agent, "*.json")))
REAL = sorted(glob.glob(os.path.join(HOOKS, "claude-real", "*.json")))
LIMITS = {"args": 200, "error": 300, "prompt": 500, "last_message": 300, "edit_old": 200,
          "edit_new": 200, "file": 300, "cwd": 300, "tool": 200, "reason": 200}
OUTCOMES = ("success", "failure", "approval", "denial")


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _fixture_id(path):
    return os.path.relpath(path, HOOKS)


def _check_schema(obs):
    assert obs["event"] in observe.EVENTS
    assert obs["agent"] in observe.AGENTS
    for key, value in obs.items():
        assert value not in ("", None, [], {}), key
        if key in LIMITS:
            assert len(value) <= LIMITS[key], key
    if "outcome" in obs:
        assert obs["outcome"] in OUTCOMES
    if "exit_code" in obs:
        assert type(obs["exit_code"]) is int
    if "tool" in obs:
        assert obs["tool_kind"] in ("shell", "edit", "write", "read", "search", "web",
                                    "mcp", "task", "other")
    for key, digest in obs.get("hash", {}).items():
        assert key in obs and len(digest) == 12 and int(digest, 16) >= 0
    for key in ("args", "family", "tool", "reason", "file"):
        assert "\n" not in obs.get(key, ""), key


def test_every_agent_has_fixtures():
    for agent in observe.AGENTS:
        count = len(glob.glob(os.path.join(HOOKS, agent, "*.json")))
        assert count >= 4, agent


@pytest.mark.parametrize("path", FIXTURES, ids=_fixture_id)
def test_fixture(path):
    fixture = _load(path)
    agent = os.path.basename(os.path.dirname(path))
    got = observe.normalize(fixture["payload"], agent)
    assert got == fixture["expected"]
    if got is not None:
        _check_schema(got)


@pytest.mark.parametrize("path", FIXTURES, ids=_fixture_id)
def test_fixture_dialect_detected_from_payload_alone(path):
    fixture = _load(path)
    agent = os.path.basename(os.path.dirname(path))
    assert observe.detect_agent(fixture["payload"]) == agent
    assert observe.normalize(fixture["payload"], "auto") == fixture["expected"]


def test_claude_fixture_per_sdk_hook_event():
    """One fixture per hook event of @anthropic-ai/claude-agent-sdk's HOOK_EVENTS."""
    events = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
              "Notification", "UserPromptSubmit", "UserPromptExpansion", "SessionStart",
              "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
              "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch",
              "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated",
              "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
              "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged",
              "FileChanged", "DirectoryAdded", "MessageDisplay"]
    for event in events:
        path = os.path.join(HOOKS, "claude", event + ".json")
        assert _load(path)["payload"]["hook_event_name"] == event


REAL_EVENTS = {
    "PreToolUse": "pre_tool", "PostToolUse": "tool_success", "PostToolUseFailure": "tool_failure",
    "UserPromptSubmit": "prompt", "SessionStart": "session_start", "SessionEnd": "session_end",
    "Stop": "stop", "StopFailure": "stop_failure", "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop", "PreCompact": "compact", "PostCompact": "compact",
    "Notification": "notification", "PermissionRequest": "permission_request",
    "PermissionDenied": "permission_denied", "PostToolBatch": None, "MessageDisplay": None,
    "InstructionsLoaded": None, "FileChanged": None}


@pytest.mark.skipif(not REAL, reason="no captured Claude Code payloads yet")
@pytest.mark.parametrize("path", REAL, ids=_fixture_id)
def test_real_claude_payload(path):
    raw = _load(path)
    payload = raw.get("payload", raw) if isinstance(raw, dict) else raw
    name = payload["hook_event_name"]
    assert observe.detect_agent(payload) == "claude"
    obs = observe.normalize(payload, "auto")
    expected_event = REAL_EVENTS.get(name, "other")
    if expected_event is None:
        assert obs is None
        return
    _check_schema(obs)
    assert obs["event"] == expected_event
    assert obs["session_id"] == payload["session_id"]
    if obs["event"] == "other":
        assert obs["reason"] == name
    if "tool_name" in payload:
        assert obs["tool"] == payload["tool_name"]
    if name == "PostToolUseFailure" and payload["error"].startswith("Exit code "):
        assert obs["exit_code"] == int(payload["error"].split()[2])
        assert obs["outcome"] == "failure"
    if name == "PostToolUse" and payload["tool_name"] in ("Edit", "MultiEdit"):
        assert obs["edit_old"] and obs["file"]
    if name == "Stop" and payload.get("last_assistant_message"):
        assert obs["last_message"]


@pytest.mark.parametrize("command,family", [
    ("npm test", "npm test"),
    ("npm run build -- --prod", "npm run build"),
    ("git push origin main", "git push"),
    ("git -C repo commit -m 'fix: x && y'", "git commit"),
    ("pytest -q tests/", "pytest"),
    ("python3 -m pytest -x", "python3 -m pytest"),
    ("/usr/bin/python3.11 manage.py test", "python3.11 manage.py"),
    ("pnpm install", "pnpm install"),
    ("pnpm --filter web test", "pnpm test"),
    ("cargo +nightly test -p core", "cargo test"),
    ("make", "make"),
    ("make -j 8 check", "make check"),
    ("FOO=1 BAR=2 npm test", "npm test"),
    ("sudo -E apt-get install -y jq", "apt-get install"),
    ("time pytest", "pytest"),
    ("timeout 30 go test ./...", "go test"),
    ("cd web && yarn build", "yarn build"),
    ("cd web; export CI=1; npm ci", "npm ci"),
    ("pytest -q 2>&1 | tail -n 20", "pytest"),
    ("bash -lc 'uv run pytest -k slow'", "uv run pytest"),
    ("npx vitest run", "npx vitest"),
    ("./node_modules/.bin/jest --ci", "jest"),
    ("cd somewhere", "cd"),
    ("", ""),
    # entire-cli session 9fd2fc39aa5f-0 (bench/learning): a `$(...)` assignment spans words
    ("POSTHOG_PATH=$(go env GOMODCACHE)/github.com/posthog/posthog-go@* && grep -A 30 "
     "\"func (c \\*client) Close\" $POSTHOG_PATH/posthog.go 2>/dev/null || find", "grep"),
    ("GOMODCACHE=$(go env GOMODCACHE) && grep -B5 -A15 \"type Config struct\" x | head -40",
     "grep"),
    ("A=$(echo $(pwd)) ls -la", "ls"),
    # a comment runs nothing (cipher-box: the program was taken as `#`), nor does a `\` newline
    ("# Reply to the threads\n# 1. header (see diff) && x\ngh api repos/o/r/pulls/8/comments \\\n"
     "  -F in_reply_to=1 # integer", "gh api"),
    ("echo ${#x} $# a#b", "echo"),
])
def test_command_family(command, family):
    assert observe.command_family(command) == family


def test_a_stored_command_keeps_what_runs_not_its_comments():
    """``args`` is stored on one line: a leading comment would swallow the command."""
    obs = observe.normalize({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "# list it\nls -la 'a # b' # all\npwd"},
                             "tool_response": {"stdout": ""}, "session_id": "s"}, "claude")
    assert obs["args"] == "ls -la 'a # b' pwd" and obs["family"] == "ls"


@pytest.mark.parametrize("text,first_only,code", [
    ("Exit code 1\nboom", True, 1),
    ("Exit code 127", True, 127),
    ("boom\nExit code 1", True, None),
    ("Command: x\nOutput: y\nExit Code: 2\nSignal: (none)", False, 2),
    ("Process exited with code -15", False, -15),
    ("FAIL\nexit status 1", False, 1),
    ("all good", False, None),
])
def test_exit_code(text, first_only, code):
    assert toolcall.exit_code(text, first_only) == code


@pytest.mark.parametrize("name,kind", [
    ("Bash", "shell"), ("run_shell_command", "shell"), ("bash", "shell"), ("Shell", "shell"),
    ("Edit", "edit"), ("replace", "edit"), ("apply_patch", "edit"), ("Write", "write"),
    ("create", "write"), ("Read", "read"), ("view", "read"), ("Grep", "search"),
    ("glob", "search"), ("WebFetch", "web"), ("google_web_search", "web"), ("Task", "task"),
    ("mcp__github__create_issue", "mcp"), ("MCP:linear:create", "mcp"), ("TodoWrite", "other"),
])
def test_tool_kind(name, kind):
    assert observe.tool_kind(name) == kind


def test_truncation_hashes_redacted_full_value():
    secret = "sk-ant-api03-" + "B" * 40
    prompt = "use " + secret + " then " + "x" * 600
    obs = observe.normalize({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                             "prompt": prompt}, "claude")
    assert secret not in obs["prompt"] and "[REDACTED" in obs["prompt"]
    assert len(obs["prompt"]) == 500 and obs["prompt"].endswith("\u2026")
    import hashlib
    full = redact.redact_text(prompt)
    assert obs["hash"] == {"prompt": hashlib.sha256(full.encode()).hexdigest()[:12]}


def test_every_kept_string_is_redacted():
    token = "ghp_" + "a1B2" * 9
    payload = {"hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_use_id": "t",
               "tool_name": "Bash", "tool_input": {"command": "GITHUB_TOKEN=%s gh pr list" % token},
               "error": "Exit code 1\nbad credentials for %s" % token}
    obs = observe.normalize(payload, "claude")
    assert token not in json.dumps(obs)
    assert obs["family"] == "gh pr" and obs["exit_code"] == 1


def test_error_head_keeps_three_lines_and_marks_cut():
    error = "Exit code 2\n\n  first   line \nsecond\nthird\nfourth\nfifth"
    obs = observe.normalize({"hook_event_name": "PostToolUseFailure", "session_id": "s",
                             "tool_name": "Bash", "tool_input": {"command": "make"},
                             "error": error}, "claude")
    assert obs["error"] == "first line\nsecond\nthird"
    assert obs["exit_code"] == 2 and "error" in obs["hash"]


def test_copilot_event_hint_and_shape_inference():
    payload = {"timestamp": 1704614600000, "cwd": "/w", "toolName": "bash",
               "toolArgs": "{\"command\":\"npm test\"}"}
    assert observe.normalize(payload, "copilot")["event"] == "pre_tool"
    assert observe.normalize(payload, "auto", event="preToolUse")["family"] == "npm test"
    bad_args = dict(payload, toolArgs="not json at all")
    assert observe.normalize(bad_args, "copilot")["args"] == "not json at all"


def test_uninteresting_payloads_are_dropped():
    assert observe.normalize({}, "claude") is None
    assert observe.normalize({"hook_event_name": "MessageDisplay", "delta": "x"}, "claude") is None
    assert observe.normalize({"hook_event_name": "AfterModel"}, "gemini") is None


def test_detect_agent_from_minimal_shapes():
    assert observe.detect_agent({"hook_event_name": "PreToolUse", "session_id": "s",
                                 "transcript_path": "/h/.claude/p/x.jsonl"}) == "claude"
    assert observe.detect_agent({"hook_event_name": "Stop", "turn_id": "t"}) == "codex"
    assert observe.detect_agent({"hook_event_name": "AfterTool", "tool_name": "x"}) == "gemini"
    assert observe.detect_agent({"toolName": "bash", "timestamp": 1}) == "copilot"
    assert observe.detect_agent({"hook_event_name": "stop", "conversation_id": "c"}) == "cursor"
    assert observe.detect_agent({"hook_event_name": "SessionStart", "source": "startup",
                                 "timestamp": "2026-01-01T00:00:00Z",
                                 "transcript_path": "/t"}) == "gemini"


SPEED_PROBE = """
import sys
sys.path.insert(0, {scripts!r})
import selflearn.observation.observe as o
{call}
print(sorted(m for m in sys.modules if m in ('re', 'json', 'hashlib', 'argparse', 'datetime')))
"""


@pytest.mark.parametrize("call", [
    "o.normalize({payload!r}, 'claude')",
    "o.normalize({payload!r}, 'auto')",
    "o.normalize({copilot!r}, 'copilot')",
    "o.normalize({long!r}, 'claude')",
])
def test_hook_path_imports_no_heavy_modules(call):
    payload = {"session_id": "s", "transcript_path": "/h/.claude/x.jsonl", "cwd": "/w",
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
               "tool_input": {"command": "cd app && npm test"},
               "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}}
    copilot = {"timestamp": 1, "cwd": "/w", "toolName": "bash",
               "toolArgs": "{\"command\":\"npm test\"}",
               "toolResult": {"resultType": "failure", "textResultForLlm": "boom\nexit status 1"}}
    long = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "a" * 900}
    code = SPEED_PROBE.format(scripts=SCRIPTS, call=call.format(
        payload=payload, copilot=copilot, long=long))
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_module_parses_as_python39():
    folder = os.path.dirname(observe.__file__)
    for name in ("observe", "commands", "toolcall"):
        with open(os.path.join(folder, name + ".py"), encoding="utf-8") as f:
            ast.parse(f.read(), feature_version=(3, 9))


OPENVPN_AUTH = "vpn-ci\nybprbKYpTHEgm6Rqdfhg\n2026-03-02 10:00:01 AUTH: Received control message: AUTH_FAILED"


@pytest.mark.parametrize("command, kept", [
    ("cat /etc/openvpn/auth.txt && sudo openvpn --config a.ovpn --auth-user-pass "
     "/etc/openvpn/auth.txt", False),                       # the file the command hands over
    ("cat ~/.vault-token; vault status", False),           # a credential file by its name
    ("cat build.log && make", True)])                      # any other file: bare lines stay
def test_a_printed_credential_files_bare_lines_are_not_stored(command, kept):
    """Round 2's OpenVPN case: a user line and a bare password line, no secret format."""
    obs = observe.normalize({"hook_event_name": "PostToolUseFailure", "session_id": "s",
                             "tool_name": "Bash", "tool_input": {"command": command},
                             "error": OPENVPN_AUTH}, "claude")
    assert "AUTH_FAILED" in obs["error"]
    assert ("ybprbKYpTHEgm6Rqdfhg" in json.dumps(obs)) is kept
    assert ("vpn-ci" in obs["error"]) is kept
