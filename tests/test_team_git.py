"""Team use over git, with real git: two clones, a store per person, both committed.

What a team gets (references/SHARING.md): each person's committed lessons stay theirs (listed,
injected for them), branches of the same store merge without a conflict (git's union merge of
append-only lines), and a teammate's lessons are listed as imported and reach the agent only
once a person accepts them here.
"""
import json
import subprocess

import pytest

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(clone, *args) -> str:
    import os
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, "HOME": str(clone.parent)}, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


class Person:
    """One teammate: a clone, a user name and a global store of their own."""

    def __init__(self, name, clone, tmp_path, run, monkeypatch):
        self.name, self.clone, self.run, self.mp = name, clone, run, monkeypatch
        self.global_dir = tmp_path / f"global-{name}"

    def cli(self, *args, stdin=None):
        self.mp.setenv("SELF_LEARNING_REPO_ROOT", str(self.clone))
        self.mp.setenv("SELF_LEARNING_USER", self.name)
        self.mp.setenv("SELF_LEARNING_GLOBAL_DIR", str(self.global_dir))
        return self.run(list(args), stdin)

    def js(self, *args, stdin=None):
        code, out, err = self.cli(*args, "--format", "json", stdin=stdin)
        assert code == 0, err
        return json.loads(out)

    def learn(self, title: str) -> str:
        """Record a lesson and accept it (as its author would)."""
        data = self.js("record", stdin=json.dumps({"aha_cards": [
            {"title": title, "scope": "portable", "solution_steps": [f"do it: {title}"]}]}))
        card = data["aha_cards"][0]["id"]
        assert self.cli("aha-status", "--id", card, "--status", "accepted")[0] == 0
        return card

    def commit(self, message: str) -> None:
        files = self.js("init", "--commit-store")["commit_store"]["files"]
        git(self.clone, "add", "-f", *files, ".gitattributes", ".gitignore")
        git(self.clone, "commit", "-q", "-m", message)

    def advised(self) -> list:
        return [i["id"] for i in self.js("advice")["items"]]

    def session_start(self) -> str:
        """What the SessionStart hook injects into a new session."""
        self.sessions = getattr(self, "sessions", 0) + 1
        payload = {"hook_event_name": "SessionStart", "source": "startup",
                   "session_id": f"s-{self.name}-{self.sessions}"}
        code, out, _ = self.cli("hook", "--agent", "claude", stdin=json.dumps(payload))
        return out


@pytest.fixture
def team(tmp_path, run, monkeypatch):
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    people = {}
    for name in ("alice", "bob"):
        clone = tmp_path / name
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True,
                       capture_output=True)
        git(clone, "checkout", "-q", "-b", "main")
        people[name] = Person(name, clone, tmp_path, run, monkeypatch)
    alice = people["alice"]
    (alice.clone / "README.md").write_text("app\n")
    git(alice.clone, "add", "README.md")
    git(alice.clone, "commit", "-q", "-m", "start")
    git(alice.clone, "push", "-q", "origin", "main")
    git(people["bob"].clone, "pull", "-q", "origin", "main")
    return people["alice"], people["bob"]


def test_a_teammates_lesson_is_imported_then_injected_once_accepted(team):
    alice, bob = team
    assert alice.js("init", "--commit-store")["commit_store"]["attributes_updated"]
    mine = alice.learn("Run migrations before the API tests")
    alice.commit("alice's lessons")
    git(alice.clone, "push", "-q", "origin", "main")
    assert alice.advised() == [mine]  # committed, still hers: injected for her
    assert mine in alice.session_start()

    git(bob.clone, "pull", "-q", "origin", "main")
    bob.js("init", "--commit-store")
    (item,) = bob.js("list")["items"]
    assert (item["id"], item["owner"], item["provenance"]) == (mine, "alice", "imported")
    assert "(alice's, imported)" in bob.cli("list")[1]
    assert bob.advised() == [] and mine not in bob.session_start()  # not before a person accepts

    assert bob.cli("aha-status", "--id", mine, "--status", "accepted")[0] == 0
    assert bob.advised() == [mine]
    assert mine in bob.session_start()
    assert bob.js("list")["items"][0]["status"] == "accepted"


def test_branches_where_both_recorded_merge_without_a_conflict(team):
    alice, bob = team
    alice.js("init", "--commit-store")
    alice.commit("stores merge as a union")
    git(alice.clone, "push", "-q", "origin", "main")
    git(bob.clone, "pull", "-q", "origin", "main")
    bob.js("init", "--commit-store")
    bob.commit("bob's store")

    git(bob.clone, "checkout", "-q", "-b", "side")  # one person, two branches, one store
    on_side = bob.learn("Side branch: use the staging database")
    bob.commit("side")
    git(bob.clone, "checkout", "-q", "main")
    on_main = bob.learn("Main branch: pin node 20")
    bob.commit("main")
    git(alice.clone, "checkout", "-q", "-b", "feature")
    theirs = alice.learn("Feature: the cache needs warming")
    alice.commit("feature")
    git(alice.clone, "push", "-q", "origin", "feature")

    git(bob.clone, "merge", "-q", "--no-edit", "side")  # exits non-zero on a conflict
    git(bob.clone, "fetch", "-q", "origin")
    git(bob.clone, "merge", "-q", "--no-edit", "origin/feature")
    assert git(bob.clone, "status", "--porcelain", "--untracked-files=no") == ""
    items = {i["id"]: i for i in bob.js("list")["items"]}
    assert set(items) == {on_side, on_main, theirs}
    assert items[theirs]["provenance"] == "imported" and "provenance" not in items[on_main]
    assert sorted(bob.advised()) == sorted([on_side, on_main])  # his own, not hers yet


def test_the_union_line_joins_an_existing_gitattributes_once(run, repo, tmp_path):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitattributes").write_text("*.png binary")  # the team's own, no final newline
    for _ in range(2):
        assert run(["init", "--commit-store"])[0] == 0
    assert (repo / ".gitattributes").read_text() == (
        "*.png binary\n# self-learning-skills stores are append-only: a merge keeps both sides' "
        "lines\n/.agent-skills/self-learning/v1/users/*/*.jsonl merge=union\n")
    shared = tmp_path / "shared-attributes"
    shared.write_text("*.png binary\n")
    (repo / ".gitattributes").unlink()
    (repo / ".gitattributes").symlink_to(shared)  # a linked file is not rewritten
    assert run(["init", "--commit-store"])[0] == 0
    assert shared.read_text() == "*.png binary\n"
    assert "merge=union" in (repo / ".git" / "info" / "attributes").read_text()
    code, _, err = run(["init", "--commit-store", "--global"])
    assert code == 2 and err == ("self_learning: error: init: --commit-store is for the project "
                                 "store (a team commits it); drop --global\n")
