"""install-skill: a repository receives what the skill needs to run and be read, no more;
the copy runs; a file the tool did not write is never overwritten; a rerun updates its own."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from selflearn.observation import skillcopy

REPO = Path(__file__).resolve().parents[1]


def install(run, dest, *more):
    code, out, err = run(["install-skill", "--to", str(dest), "--format", "json", *more])
    assert code == 0, err
    return json.loads(out)


def files(folder: Path) -> set:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def run_copy(dest: Path, repo: Path, *args, stdin: bytes = b""):
    env = {**os.environ, "SELF_LEARNING_REPO_ROOT": str(repo)}
    return subprocess.run([sys.executable, "-S", str(dest / "scripts" / "self_learning.py"), *args],
                          input=stdin, capture_output=True, env=env, timeout=60, check=False)


def test_the_copy_holds_what_the_skill_needs_and_runs(run, repo, store):
    dest = repo / ".claude" / "skills" / "self-learning-skills"
    data = install(run, dest)
    got = files(dest)
    assert {"SKILL.md", "AGENTS.md", "README.md", "LICENSE.txt", "hooks/hooks.json",
            ".claude-plugin/plugin.json", "scripts/self_learning.py", "references/CLI.md",
            "scripts/selflearn/observation/hook.py", skillcopy.MANIFEST} <= got
    assert not [f for f in got if f.startswith(("bench/", "tests/", ".ci/", ".git/"))
                or "__pycache__" in f]
    assert len(data["add"]) == data["files"] == len(got) - 1 and data["bytes"] < 2_000_000
    assert os.access(dest / "scripts" / "self_learning.py", os.X_OK)
    for args in (["--help"], ["doctor"]):
        done = run_copy(dest, repo, *args)
        assert done.returncode == 0, done.stderr
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash",
               "tool_use_id": "toolu_1", "tool_input": {"command": "npm test"},
               "tool_response": {"stdout": "ok", "stderr": ""}}
    done = run_copy(dest, repo, "hook", "--agent", "claude", stdin=json.dumps(payload).encode())
    assert (done.returncode, done.stderr) == (0, b"")
    (obs,) = [json.loads(x) for x in (store / "observations.jsonl").read_text().splitlines()]
    assert obs["family"] == "npm test"


def test_a_rerun_changes_nothing(run, tmp_path):
    dest = tmp_path / "skill"
    install(run, dest)
    before = {f: (dest / f).stat().st_mtime_ns for f in files(dest)}
    data = install(run, dest)
    assert (data["add"], data["update"], data["remove"]) == ([], [], [])
    assert data["unchanged"] == data["files"]
    assert {f: (dest / f).stat().st_mtime_ns for f in files(dest)} == before


def test_a_file_it_did_not_write_is_never_overwritten(run, tmp_path):
    dest = tmp_path / "skill"
    (dest / "scripts").mkdir(parents=True)
    (dest / "SKILL.md").write_text("my own skill\n")
    (dest / "scripts" / "self_learning.py").write_text("# mine\n")
    code, out, err = run(["install-skill", "--to", str(dest)])
    assert (code, out) == (2, "")
    assert err == (f"self_learning: error: install-skill: {dest / 'SKILL.md'} exists and was not "
                   "written by install-skill (or was changed since), and 1 more; nothing was "
                   "written: move them away (or the whole folder) and run it again\n")
    assert files(dest) == {"SKILL.md", "scripts/self_learning.py"}
    assert (dest / "SKILL.md").read_text() == "my own skill\n"


def test_a_rerun_updates_an_older_copy_it_installed(run, tmp_path):
    """An older release: one file differs, one is gone since; the user changed one, added one."""
    old = tmp_path / "old"
    for rel, path in skillcopy.wanted(str(REPO)).items():
        (old / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, old / rel)
    (old / "references" / "CLI.md").write_text("old reference\n")
    (old / "references" / "GONE.md").write_text("a page the skill no longer has\n")
    (old / "references" / "KEPT.md").write_text("another one\n")
    dest = tmp_path / "skill"
    skillcopy.install(str(old), str(dest))
    (dest / "references" / "KEPT.md").write_text("the user's notes now\n")
    (dest / "NOTES.md").write_text("the user's file\n")
    data = install(run, dest)
    assert (data["update"], data["remove"], data["left"]) == (
        ["references/CLI.md"], ["references/GONE.md"], ["references/KEPT.md"])
    assert (dest / "references" / "CLI.md").read_bytes() == (REPO / "references" / "CLI.md").read_bytes()
    assert not (dest / "references" / "GONE.md").exists()
    assert (dest / "references" / "KEPT.md").read_text() == "the user's notes now\n"
    assert (dest / "NOTES.md").read_text() == "the user's file\n"
    manifest = json.loads((dest / skillcopy.MANIFEST).read_text())["files"]
    assert "references/KEPT.md" not in manifest and "NOTES.md" not in manifest
    (dest / "SKILL.md").write_text("changed by the user\n")  # ours once, changed since: kept
    code, _, err = run(["install-skill", "--to", str(dest)])
    assert code == 2 and f"{dest / 'SKILL.md'} exists and was not written" in err


def test_dry_run_writes_nothing_and_the_copy_cannot_go_inside_the_skill(run, tmp_path):
    dest = tmp_path / "skill"
    assert len(install(run, dest, "--dry-run")["add"]) > 100 and not dest.exists()
    code, _, err = run(["install-skill", "--to", str(REPO / "references" / "copy")])
    assert code == 2 and "is inside the skill folder" in err


def test_a_damaged_manifest_or_a_file_in_the_way_is_refused(run, tmp_path):
    dest = tmp_path / "skill"
    dest.mkdir()
    (dest / skillcopy.MANIFEST).write_text("{oops")
    code, _, err = run(["install-skill", "--to", str(dest)])
    assert code == 2 and err == (f"self_learning: error: install-skill: {dest / skillcopy.MANIFEST} "
                                 "is damaged; nothing was written (delete it and the files it "
                                 "listed, then install again)\n")
    (tmp_path / "file").write_text("x")
    code, _, err = run(["install-skill", "--to", str(tmp_path / "file")])
    assert code == 2 and err.endswith(f"{tmp_path / 'file'} is not a folder; nothing was written\n")


def test_a_linked_folder_in_the_repository_is_never_written_through(run, tmp_path):
    """Issue #25: a repository may commit `.claude/skills` as a link to anywhere."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    outside.mkdir()
    (repo / ".claude" / "skills").symlink_to(outside)
    code, out, err = run(["install-skill", "--to", str(repo / ".claude/skills/self-learning-skills")])
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert f"{repo / '.claude' / 'skills'} is a symbolic link" in err
    assert list(outside.iterdir()) == []
    assert len(install(run, outside / "self-learning-skills")["add"]) > 100  # the folder itself


@pytest.mark.parametrize("entry", ["../../outside/victim.txt", "/abs/victim.txt", "a/../../x",
                                   "./SKILL.md", "a//b", ""])
def test_a_manifest_naming_a_path_outside_the_copy_is_refused(run, tmp_path, entry):
    """Issue #25 (links3-19, links3-20): a committed manifest can list any path with the real
    hash of a file there; an update would remove it as 'no longer part of the skill'."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.txt").write_text("victim data\n")
    dest = repo / "skill"
    dest.mkdir()
    sha = hashlib.sha256(b"victim data\n").hexdigest()
    (dest / skillcopy.MANIFEST).write_text(json.dumps({"v": 1, "files": {entry: sha}}))
    code, out, err = run(["install-skill", "--to", str(dest)])
    assert (code, out) == (2, "") and err == (
        f"self_learning: error: install-skill: {dest / skillcopy.MANIFEST} lists {entry!r}, "
        "which is not a plain path inside the copy (install-skill never writes one); nothing "
        "was written: check who changed it, then move the folder away and install again\n")
    assert (outside / "victim.txt").read_text() == "victim data\n"
    assert sorted(p.name for p in dest.iterdir()) == [skillcopy.MANIFEST]


@pytest.mark.parametrize("shared", ["references", skillcopy.MANIFEST, "SKILL.md"])
def test_nothing_is_written_or_removed_through_a_link_inside_the_copy(run, tmp_path, shared):
    """Issue #25 (links3-21): the copy's own `references/` (or a file) as a committed link to
    outside, or a file hard-linked with one outside: the install is refused, nothing written."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (outside / "refs").mkdir(parents=True)
    (outside / "refs" / "notes.md").write_text("keep\n")
    (outside / "file").write_text("keep\n")
    dest = repo / "skill"
    dest.mkdir()
    if shared == "references":
        (dest / shared).symlink_to(outside / "refs")
    elif shared == "SKILL.md":
        os.link(outside / "file", dest / shared)
    else:
        (dest / shared).symlink_to(outside / "file")
    code, out, err = run(["install-skill", "--to", str(dest)])
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"self_learning: error: install-skill: {dest / shared} ")
    assert "hard links" in err if shared == "SKILL.md" else "is a symbolic link" in err
    assert sorted(p.name for p in (outside / "refs").iterdir()) == ["notes.md"]
    assert (outside / "file").read_text() == "keep\n"
    assert [p.name for p in dest.iterdir()] == [shared]
