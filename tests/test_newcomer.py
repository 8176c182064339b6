"""A new user's first steps and mistakes: each case once failed (a traceback, a silent no-op,
a file written by a bad call, a store left public or unignored); see CHANGELOG "Fixes (s18)"."""
import json
import os
import stat
import subprocess

import pytest


def git_init(repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)


def files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def test_init_then_doctor_finds_no_problem(run, repo, store):
    git_init(repo)
    assert run(["init"])[0] == 0
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in store.iterdir() if p.is_file()}
    assert modes and set(modes.values()) == {0o600}, modes
    code, out, err = run(["doctor"])
    assert "problem:" not in out + err, out


def test_index_on_a_fresh_repo_keeps_the_store_out_of_git(run, repo, store):
    git_init(repo)
    code, out, err = run(["index"])
    assert code == 0 and out == f"wrote {store / 'INDEX.md'}\n", err
    assert (repo / ".gitignore").read_text().endswith(".agent-skills/\n")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True).stdout
    assert status == "?? .gitignore\n"
