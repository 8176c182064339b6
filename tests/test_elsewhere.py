"""#24: at a failure, the shell's folder explains a path the call named from the repository
root (``surfacing.elsewhere``): no earlier session needed, nothing said when it is not so."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selflearn.surfacing import elsewhere

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
PATHSPEC = "fatal: pathspec '{}' did not match any files"


def hook(payload: dict) -> str:
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--agent", "claude"],
                          input=json.dumps(payload).encode(), capture_output=True, check=True,
                          env={**os.environ, "SELF_LEARNING_NOW": "2026-03-02T10:00:00Z",
                               "SELF_LEARNING_LEARN": "off"})
    assert done.stderr == b""
    return done.stdout.decode()


@pytest.fixture
def tree(repo):
    """A repository with a Go module in ``go/`` and a workflow at the root."""
    (repo / "go" / "cmd").mkdir(parents=True)
    (repo / "go" / "cmd" / "main.go").write_text("package main\n")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    return repo


def failed(command: str, error: str, cwd) -> dict:
    return {"tool_kind": "shell", "args": command, "error": error, "cwd": str(cwd)}


def test_a_path_from_the_root_named_from_a_subfolder(tree):
    note = elsewhere.hint(failed("git add go/cmd/main.go && git commit -m 'x'",
                                 PATHSPEC.format("go/cmd/main.go"), tree / "go"), str(tree))
    assert "The shell is in `go/`, not at the repository root" in note
    assert "`go/cmd/main.go` is missing here but exists from the repository root" in note
    assert f"`cd {tree} && ...`" in note and "`cmd/main.go` from here" in note
    note = elsewhere.hint(failed("git add .github/workflows/ci.yml",
                                 PATHSPEC.format(".github/workflows/ci.yml"), tree / "go"), str(tree))
    assert "`.github/workflows/ci.yml` is missing here" in note and "from here" not in note


def test_a_cd_into_the_folder_the_shell_is_already_in(tree):
    note = elsewhere.hint(failed("cd go && go build ./cmd", "bash: line 1: cd: go: No such file "
                                 "or directory", tree / "go"), str(tree))
    assert "The shell is already in `go/`" in note


@pytest.mark.parametrize("command, error, where", [
    ("git add go/cmd/main.go", PATHSPEC.format("go/cmd/main.go"), "."),  # at the root
    ("cat go/nothere.go", "cat: go/nothere.go: No such file or directory", "go"),  # nowhere
    ("git add go/cmd/main.go", "fatal: not a git repository", "go"),  # another failure
    ("cat /etc/go/cmd/main.go", "cat: /etc/go/cmd/main.go: No such file or directory", "go"),
    ("cd /tmp && cat go/cmd/main.go", "cat: go/cmd/main.go: No such file or directory", "go"),
    ("cat $HOME/go/cmd/main.go", "No such file or directory", "go"),  # a variable: not read
])
def test_nothing_is_said_when_the_folder_explains_nothing(tree, command, error, where):
    assert elsewhere.hint(failed(command, error, tree / where), str(tree)) == ""


def test_a_tool_other_than_the_shell_is_left_to_its_own_error(tree):
    record = dict(failed("go/cmd/main.go", "File does not exist.", tree / "go"), tool_kind="read")
    assert elsewhere.hint(record, str(tree)) == ""


def test_the_hook_says_it_at_the_failure_and_the_stop_still_asks(tree, store):
    """No trigger table, no earlier session: the note comes with the failure, as additional
    context of the failure's hook; the failure stays for the Stop hook's question (the note
    is no lesson covering it)."""
    base = {"session_id": "s1", "tool_name": "Bash", "cwd": str(tree / "go")}
    out = hook({**base, "hook_event_name": "PostToolUseFailure", "tool_use_id": "t1",
                "tool_input": {"command": "git add go/cmd/main.go"},
                "error": PATHSPEC.format("go/cmd/main.go")})
    said = json.loads(out)["hookSpecificOutput"]
    assert said["hookEventName"] == "PostToolUseFailure"
    assert "The shell is in `go/`" in said["additionalContext"]
    assert not (store / "triggers.jsonl").exists()
    hook({**base, "hook_event_name": "PostToolUse", "tool_use_id": "t2",
          "tool_input": {"command": f"git -C {tree} add go/cmd/main.go"},
          "tool_response": {"stdout": "", "stderr": "", "interrupted": False}})
    stop = hook({"hook_event_name": "Stop", "session_id": "s1", "stop_hook_active": False,
                 "last_assistant_message": "Committed.", "cwd": str(tree / "go")})
    assert json.loads(stop)["decision"] == "block"
    assert "git add go/cmd/main.go" in json.loads(stop)["reason"]
