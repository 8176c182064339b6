"""Links in the store (#25): nothing is ever written through a link or outside the store.

A repository can commit a store file or folder as a relative link to a file outside it (a
shell rc file); every hook and command must refuse it: hooks quietly (recorded for
``doctor``), commands with one line.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

ENTRY = os.path.join(REPO, "scripts", "self_learning.py")
CARD = json.dumps({"aha_cards": [{"title": "pytest needs the venv activated first",
                                  "when_to_use": "running tests",
                                  "solution_steps": ["source .venv/bin/activate"]}]})
POST = json.dumps({"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash",
                   "tool_use_id": "t1", "tool_input": {"command": "echo $(id) > /tmp/x"},
                   "tool_response": {"stdout": "", "stderr": "", "interrupted": False}})
START = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup"})


@pytest.fixture
def outside(tmp_path):
    """A file outside the repository, as a shell rc file would be."""
    target = tmp_path / "outside.rc"
    target.write_text("export PATH=/usr/bin\n")
    return target


def _link(at, target) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(target, at.parent), at)


def _hook(payload: str):
    return subprocess.run([sys.executable, "-S", ENTRY, "hook", "--agent", "claude"],
                          input=payload, capture_output=True, text=True, timeout=60)


def _unchanged(target) -> None:
    assert target.read_text() == "export PATH=/usr/bin\n"


@pytest.mark.parametrize("name", ["observations.jsonl", "errors.jsonl"])
def test_a_hook_never_appends_through_a_linked_store_file(store, outside, name):
    _link(store / name, outside)
    done = _hook(POST)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    _unchanged(outside)


def test_the_refusal_is_recorded_for_doctor(store, outside, run):
    _link(store / "observations.jsonl", outside)
    _hook(POST)
    errors = [json.loads(line) for line in (store / "errors.jsonl").read_text().splitlines()]
    assert "observations.jsonl is a symbolic link" in errors[-1]["error"]
    code, out, _ = run(["doctor"])
    assert "store file observations.jsonl is a symbolic link" in out
    _unchanged(outside)


@pytest.mark.parametrize("folder", ["user", "users", "v1", "top"])
def test_a_linked_store_folder_is_refused(repo, store, tmp_path, folder):
    """The user folder, or any folder from .agent-skills down, linked elsewhere."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    at = {"user": store, "users": store.parent, "v1": store.parent.parent,
          "top": repo / ".agent-skills"}[folder]
    _link(at, elsewhere)
    assert _hook(POST).returncode == 0
    assert _hook(START).returncode == 0
    assert list(elsewhere.rglob("*")) == []


def test_record_says_so_in_one_line_and_writes_nothing(store, outside, run):
    _link(store / "aha_cards.jsonl", outside)
    code, out, err = run(["record"], CARD)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"self_learning: error: {store / 'aha_cards.jsonl'} is a symbolic link (to "
        f"{os.readlink(store / 'aha_cards.jsonl')}); nothing is written through a link in the "
        "store: remove the link and run again"]
    _unchanged(outside)


@pytest.mark.parametrize("name", ["maintain_state.json", "maintain.lock", "index.sqlite3",
                                  "index.sqlite3-wal", "index.sqlite3-shm",
                                  "index.sqlite3-journal", "INDEX.md"])
def test_state_index_and_lock_files_are_never_written_through(store, outside, run, name):
    run(["record"], CARD)
    for leftover in store.glob("index.sqlite3*"):
        leftover.unlink()
    if (store / name).exists():
        (store / name).unlink()
    _link(store / name, outside)
    run(["maintain", "--force"])
    run(["list", "--query", "pytest"])
    run(["index"])
    _unchanged(outside)
    assert (store / name).is_symlink()  # refused, not replaced: the tool did not create it


def test_a_hard_linked_store_file_is_not_appended_to(store, outside, run):
    store.mkdir(parents=True)
    os.link(outside, store / "aha_cards.jsonl")
    code, _, err = run(["record"], CARD)
    assert code == 1 and "has 2 hard links" in err
    _unchanged(outside)


def test_a_dangling_link_creates_nothing(store, tmp_path):
    missing = tmp_path / "not-there.txt"
    _link(store / "observations.jsonl", missing)
    _hook(POST)
    assert not missing.exists()


def test_an_ordinary_store_still_works(store, run):
    assert run(["record"], CARD)[0] == 0
    assert _hook(POST).returncode == 0
    assert "echo" in (store / "observations.jsonl").read_text()


def test_doctor_names_a_linked_store_folder(store, tmp_path, run):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _link(store, elsewhere)
    code, out, err = run(["doctor"])
    assert code == 1 and f"problem: store folder {store} is a symbolic link" in out
    assert err.startswith("self_learning: warning: doctor: 1 problem(s) found")


@pytest.mark.parametrize("folder", ["self-learning", "users"])
def test_no_store_folder_is_created_through_a_linked_parent(repo, tmp_path, run, folder):
    """record and init make the store folder: never inside a linked folder of the store."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    at = repo / ".agent-skills" / "self-learning"
    at = at if folder == "self-learning" else at / "v1" / "users"
    _link(at, elsewhere)
    assert run(["record"], CARD)[0] == 1
    assert run(["init"])[0] == 1
    assert list(elsewhere.rglob("*")) == []


# --- repository files the tool edits (#25, links3-08) -----------------------------------------

def _git_repo(repo) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)


def test_init_commit_store_never_appends_through_a_hard_linked_gitattributes(repo, outside, run):
    """The union line is appended: through a hard link it would land in the file outside."""
    _git_repo(repo)
    os.link(outside, repo / ".gitattributes")
    assert run(["init", "--commit-store"])[0] == 0
    _unchanged(outside)
    assert os.stat(repo / ".gitattributes").st_nlink == 2
    assert "merge=union" in (repo / ".git" / "info" / "attributes").read_text()


def test_a_hard_linked_gitignore_is_left_as_it_is_and_the_clone_excludes_the_store(repo, outside,
                                                                                   run):
    _git_repo(repo)
    os.link(outside, repo / ".gitignore")
    assert run(["init"])[0] == 0
    _unchanged(outside)
    assert os.stat(repo / ".gitignore").st_nlink == 2
    assert ".agent-skills/" in (repo / ".git" / "info" / "exclude").read_text()


def test_a_hard_linked_exclude_file_is_not_written_either(repo, outside, tmp_path, run):
    _git_repo(repo)
    (repo / ".gitignore").symlink_to(tmp_path / "shared-gitignore")
    (repo / ".git" / "info" / "exclude").unlink()
    os.link(outside, repo / ".git" / "info" / "exclude")
    assert run(["init"])[0] == 0
    _unchanged(outside)
    assert os.stat(repo / ".git" / "info" / "exclude").st_nlink == 2
    assert not (tmp_path / "shared-gitignore").exists()


def test_a_hard_linked_rules_guidance_or_skill_file_is_refused_before_any_write(repo, store,
                                                                                outside, run):
    """A replacement would cut the file off from its other name: refused in one line, as the
    store's files are, and nothing (no backup either) is written."""
    from seeding import seed_payload
    seed_payload({"aha_cards": [{"id": "aha_x", "title": "Run the linter before every push",
                                 "status": "accepted", "solution_steps": ["make lint"]}]})
    skill = repo / "skill"
    skill.mkdir()
    os.link(outside, repo / "AGENTS.md")
    os.link(outside, skill / "SKILL.md")
    for args in (["export-rules", "--agent", "agents-md"],
                 ["improve", "--file", "AGENTS.md", "--append", "- Run make lint before a push.",
                  "--rationale", "lint broke main"],
                 ["export-backport", "--skill-path", str(skill), "--ids", "aha_x", "--apply"]):
        code, out, err = run(args)
        assert (code, out) == (1, "") and err.count("\n") == 1 and "has 3 hard links" in err
    _unchanged(outside)
    assert not (store / "backups").exists() and not (store / "exports").exists()
    assert os.stat(repo / "AGENTS.md").st_nlink == os.stat(skill / "SKILL.md").st_nlink == 3
