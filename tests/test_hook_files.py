"""The hook files install-hooks writes, checked against each agent's documented shape.

Claude Code, Codex, Gemini CLI and Copilot CLI also load these files for real in tests/e2e.
Cursor has no client that runs offline, so its file is checked here only: the shape and event
names of Cursor's hooks page (``version`` 1; ``hooks`` maps an event to a list of
``{"command", "timeout"?, "matcher"?}``). The event lists are the documented ones, so a
misspelled or invented event fails.
"""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from selflearn.observation import install  # noqa: E402
from claude_harness import ALL_HOOK_EVENTS  # noqa: E402  (the Claude Agent SDK's HOOK_EVENTS)

DOCUMENTED_EVENTS = {
    "claude": set(ALL_HOOK_EVENTS),
    # developers.openai.com/codex/hooks
    "codex": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
              "PostToolUse", "PreCompact", "PostCompact", "Stop", "SessionEnd", "SubagentStart",
              "SubagentStop"},
    # Gemini CLI docs/hooks/reference.md (shipped in the npm package)
    "gemini": {"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel",
               "AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress",
               "Notification"},
    # docs.github.com: hooks configuration reference (Copilot CLI and cloud agent)
    "copilot": {"sessionStart", "sessionEnd", "userPromptSubmitted", "preToolUse",
                "postToolUse", "postToolUseFailure", "errorOccurred", "agentStop",
                "subagentStop", "preCompact", "notification"},
    # cursor.com/docs/agent/hooks
    "cursor": {"sessionStart", "sessionEnd", "beforeSubmitPrompt", "preToolUse", "postToolUse",
               "postToolUseFailure", "beforeShellExecution", "afterShellExecution",
               "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
               "subagentStart", "subagentStop", "preCompact", "stop", "afterAgentResponse",
               "afterAgentThought"},
}

# handler keys: required -> type, optional -> type
HANDLERS = {
    "claude": ({"type": str, "command": str}, {"timeout": int}),
    "codex": ({"type": str, "command": str}, {"timeout": int, "statusMessage": str}),
    "gemini": ({"type": str, "command": str}, {"timeout": int, "name": str,
                                                "description": str}),
    "copilot": ({"type": str, "bash": str}, {"powershell": str, "cwd": str, "timeoutSec": int,
                                              "env": dict}),
    "cursor": ({"command": str}, {"timeout": int, "type": str, "matcher": str}),
}
TOP_LEVEL = {"claude": {"hooks"}, "codex": {"hooks", "description"}, "gemini": {"hooks"},
             "copilot": {"version", "hooks"}, "cursor": {"version", "hooks"}}


def check_handler(agent: str, handler: dict) -> None:
    required, optional = HANDLERS[agent]
    for key, kind in required.items():
        assert isinstance(handler.get(key), kind), (agent, key, handler)
    assert set(handler) <= set(required) | set(optional), (agent, handler)
    for key, kind in optional.items():
        assert key not in handler or isinstance(handler[key], kind), (agent, key)
    if "type" in handler:
        assert handler["type"] == "command"


def check_file(agent: str, doc: dict) -> None:
    assert set(doc) <= TOP_LEVEL[agent] and "hooks" in doc
    if "version" in TOP_LEVEL[agent]:
        assert doc["version"] == 1
    spec = install.AGENTS[agent]
    assert set(doc["hooks"]) <= DOCUMENTED_EVENTS[agent], set(doc["hooks"]) - DOCUMENTED_EVENTS[agent]
    for event, entries in doc["hooks"].items():
        assert isinstance(entries, list) and entries
        for entry in entries:
            if spec.shape == "flat":
                check_handler(agent, entry)
                continue
            assert set(entry) <= {"matcher", "hooks"} and isinstance(entry["hooks"], list)
            assert isinstance(entry.get("matcher", ""), str)
            for handler in entry["hooks"]:
                check_handler(agent, handler)


@pytest.mark.parametrize("agent", list(install.AGENTS))
@pytest.mark.parametrize("scope", ["project", "user"])
def test_written_files_have_the_documented_shape(agent, scope, tmp_path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    skill = repo / ".agents" / "skills" / "self-learning-skills"
    (skill / "scripts").mkdir(parents=True)
    (skill / install.SCRIPT).write_text("# stub\n")
    home.mkdir()
    (change,) = install.plan(agent, scope, repo, skill, home)
    check_file(agent, json.loads(change.after))


def test_the_plugin_hooks_file_has_claudes_shape():
    check_file("claude", {"hooks": json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]})


@pytest.mark.parametrize("bad", [
    {"version": 1, "hooks": {"beforeShellExecution": [{"command": 3}]}},
    {"version": 1, "hooks": {"onSave": [{"command": "x"}]}},
    {"version": 2, "hooks": {}},
    {"version": 1, "hooks": {"stop": [{"command": "x", "timeoutSec": 5}]}},
])
def test_the_checker_rejects_what_cursor_would_not_load(bad):
    with pytest.raises(AssertionError):
        check_file("cursor", bad)
