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


@pytest.mark.parametrize("args, message", [
    (["review", "--days", "nan"], "review: --days must be a number from 0 to 36500, got nan"),
    (["review", "--days", "inf"], "review: --days must be a number from 0 to 36500, got inf"),
    (["review", "--days", "1e308"], "review: --days must be a number from 0 to 36500, got 1e+308"),
    (["review", "--days", "-5"], "review: --days must be a number from 0 to 36500, got -5"),
    (["review", "--stale-days", "nan"],
     "review: --stale-days must be a number from 0 to 36500, got nan"),
    (["review", "--status", "bogus"], "review: unknown --status 'bogus' (one of: proposed, "
     "candidate, accepted, dormant, retired, rejected, deprecated, backported, in_progress, "
     "blocked, done)"),
    (["list", "--status", "accepted,bogus"], "list: unknown --status 'bogus' (one of: "
     "proposed, candidate, accepted, dormant, retired, rejected, deprecated, backported)"),
    (["list", "--limit", "-1"], "list: --limit must be a number 0 or more, got -1"),
])
def test_bad_numbers_and_statuses_are_one_line(run, store, args, message):
    assert run(["record"], json.dumps({"aha_cards": [{"title": "a lesson to filter"}]}))[0] == 0
    before = files(store.parent)
    code, out, err = run(args)
    assert (code, out, err) == (2, "", f"self_learning: error: {message}\n")
    assert files(store.parent) == before


def test_status_aliases_and_rec_statuses_still_filter(run):
    rec = {"title": "Pin the tool versions", "why": "drift"}
    assert run(["record"], json.dumps({"recommendations": [rec]}))[0] == 0
    code, out, err = run(["review", "--status", "open,done", "--format", "json"])
    assert code == 0, err
    assert [r["title"] for r in json.loads(out)["open_recommendations"]] == [rec["title"]]


def read_only_derived(monkeypatch):
    """The store folder refuses new files (as a read-only folder does for anyone but root):
    INDEX.md and screened.json, both derived, cannot be replaced; appends still work."""
    from selflearn.storage import store as jsonl
    real = jsonl.atomic_write

    def refuse(path, *a, **kw):
        if os.path.basename(path) in ("INDEX.md", "screened.json"):
            raise PermissionError(13, "Permission denied", path + ".tmp")
        return real(path, *a, **kw)
    monkeypatch.setattr(jsonl, "atomic_write", refuse)


def test_a_write_whose_index_cannot_be_refreshed_says_so_and_succeeds(run, store, monkeypatch):
    payload = json.dumps({"aha_cards": [{"title": "Use the lockfile in CI"}]})
    assert run(["init"])[0] == 0
    read_only_derived(monkeypatch)
    code, out, err = run(["record"], payload)
    assert code == 0 and out.startswith("created aha_"), err
    assert err == (f"self_learning: warning: the records are written but INDEX.md is not "
                   f"refreshed ({store / 'INDEX.md'}.tmp: Permission denied; it must be yours, "
                   "readable and writable (chmod u+rw), or point SELF_LEARNING_REPO_ROOT at a "
                   "copy you own); run "
                   "`index` once that is fixed\n")
    code, out, _ = run(["record"], payload)  # the same lesson again merges: still one card
    assert code == 0
    from selflearn.storage import store as jsonl
    assert len(jsonl.fold(jsonl.read(str(store / "aha_cards.jsonl"))[0])) == 1


@pytest.mark.parametrize("index", ["on", "off"])
def test_reading_commands_work_when_their_cache_cannot_be_saved(run, store, monkeypatch, index):
    """Verdicts go to the derived index (a failed write there is a lost cache) or, without
    one, to screened.json: neither failure may fail a reading command."""
    from seeding import seed_record
    monkeypatch.setenv("SELF_LEARNING_INDEX", index)
    seed_record({"aha_cards": [{"id": "aha_lock", "title": "Use the lockfile in CI",
                                "status": "accepted", "solution_steps": ["npm ci"]}]})
    for derived in ("screened.json", "index.sqlite3"):
        if (store / derived).exists():
            (store / derived).unlink()
    read_only_derived(monkeypatch)
    for args in (["review"], ["advice", "--query", "lockfile CI"], ["list"]):
        code, out, err = run(args)
        assert (code, err) == (0, ""), (args, err)
        assert "aha_lock" in out
    assert not (store / "screened.json").exists()


def test_a_repo_root_that_is_no_folder_is_bad_input(run, tmp_path, monkeypatch):
    (tmp_path / "notes.txt").write_text("mine\n")
    for flag, message in (
            ("missing", f"--repo-root {tmp_path / 'missing'} is missing, not a folder"),
            ("notes.txt", f"--repo-root {tmp_path / 'notes.txt'} is a file, not a folder")):
        code, out, err = run(["list", "--repo-root", str(tmp_path / flag)])
        assert (code, out) == (2, "")
        assert err == (f"self_learning: error: {message}; give the repository's folder "
                       "(default: the nearest one holding .git)\n")
    monkeypatch.setenv("SELF_LEARNING_REPO_ROOT", str(tmp_path / "gone"))
    code, _, err = run(["record"], json.dumps({"aha_cards": [{"title": "a lesson"}]}))
    assert code == 2 and err.startswith(
        f"self_learning: error: SELF_LEARNING_REPO_ROOT {tmp_path / 'gone'} is missing")
    assert not (tmp_path / "gone").exists() and (tmp_path / "notes.txt").read_text() == "mine\n"


def test_hook_help_offers_only_the_options_the_hook_reads(run, capsys):
    from selflearn.cli import parser as cli
    with pytest.raises(SystemExit):
        cli.main(["hook", "--help"])
    text = capsys.readouterr().out
    usage = text.split("\n\n", 1)[0]
    assert "--agent" in usage and "--event" in usage
    for ignored in ("--repo-root", "--user", "--format"):
        assert ignored not in usage  # the hook never parsed them: it finds its store itself
    assert "SELF_LEARNING_REPO_ROOT" in text and "CLAUDE_PROJECT_DIR" in text


def test_demo_never_writes_sample_records_into_the_real_store(run, repo, store):
    import shutil
    # SELF_LEARNING_REPO_ROOT points at the real repo (the isolated fixture sets it, as a
    # user's hook setup may): the demo still goes to a throwaway folder
    code, out, err = run(["demo", "--format", "json"])
    assert code == 0, err
    demo_store = json.loads(out)["store"]
    try:
        assert not store.exists() and not demo_store.startswith(str(repo))
        assert os.path.exists(os.path.join(demo_store, "aha_cards.jsonl"))
    finally:
        shutil.rmtree(demo_store.split("/.agent-skills/")[0])
    code, out, err = run(["demo", "--repo-root", str(repo), "--format", "json"])
    assert code == 0 and json.loads(out)["store"] == str(store)  # asked for by name: there


def test_record_without_a_payload_says_how_to_give_one(run, store, monkeypatch, capsys):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    code, out, err = run(["record"], "  \n")
    assert (code, out) == (2, "")
    assert err == ("self_learning: error: record: standard input is empty; give one JSON object "
                   "such as {\"aha_cards\": [{\"title\": \"...\"}]} (fields: "
                   "references/FORMAT.md); nothing was written\n")
    monkeypatch.setattr(sys, "stdin", Terminal(""))
    from selflearn.cli import parser as cli
    assert cli.main(["record"]) == 2  # instead of waiting for input nobody is going to type
    assert capsys.readouterr().err.startswith("self_learning: error: record: reads one JSON "
                                              "object from standard input or --json FILE, e.g.")
    assert not store.exists()


LONG = " ".join(f"logline{i}" for i in range(1500))  # a pasted log: 1500 distinct words


def test_clip_query_keeps_the_first_distinct_terms():
    from selflearn.surfacing import search
    assert search.clip_query("npm test fails") == "npm test fails"
    clipped = search.clip_query("widget tool " + LONG)
    assert clipped.startswith("widget tool logline0 ")
    next_word = ("widget tool " + LONG)[len(clipped):].split()[0]
    assert len(set(search.tokenize(clipped))) <= search.MAX_QUERY_TERMS
    assert len(set(search.tokenize(clipped + " " + next_word))) > search.MAX_QUERY_TERMS
    assert search.clip_query("a " * 5000 + "b") == "a " * 5000 + "b"  # repeats are one term


@pytest.mark.parametrize("command", ["list", "review", "advice"])
def test_a_query_as_long_as_a_pasted_log_still_answers(run, command):
    """A log of a hundred words nothing stored holds around the card's own words: the floor
    grows with the log, but by its logarithm, so the card's four words still clear it."""
    from seeding import seed_record
    seed_record({"aha_cards": [{"id": "aha_widget", "title": "Widget tool needs the flag",
                                "status": "accepted", "solution_steps": ["widget --flag"]}]})
    code, out, err = run([command, "--query", "widget tool needs the flag " + LONG])
    assert code == 0, err
    assert err == ("self_learning: warning: --query holds more than 200 distinct words; only "
                   "the text before 'logline102' is matched\n")  # each adds logline and a number
    assert "aha_widget" in out
    assert "aha_widget" not in run([command, "--query", "widget " + LONG])[1]  # one word: noise


def test_a_failure_inside_the_derived_index_is_one_line(run, store, monkeypatch):
    import sqlite3
    from selflearn.surfacing import catalog
    assert run(["record"], json.dumps({"aha_cards": [{"title": "a lesson to find"}]}))[0] == 0

    def broken(*a, **kw):
        raise sqlite3.OperationalError("database disk image is malformed")
    monkeypatch.setattr(catalog, "order", broken)
    code, out, err = run(["list", "--query", "lesson"])
    assert (code, out) == (1, "")
    assert err == ("self_learning: error: the derived index failed (database disk image is "
                   f"malformed); it is rebuilt from the store's files: delete "
                   f"{store / 'index.sqlite3'} and run the command again\n")
    monkeypatch.setattr(catalog, "order", lambda *a, **kw: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # anything else is a bug: it is not disguised
        run(["list", "--query", "lesson"])


def test_proposals_alone_lists_the_inbox(run):
    assert run(["proposals"]) == run(["proposals", "list"])
    code, out, err = run(["proposals"])
    assert (code, err) == (0, "") and out


def test_hook_with_a_repo_root_that_is_gone_creates_nothing(tmp_path, run, monkeypatch):
    import sys
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "scripts", "self_learning.py")
    ghost = tmp_path / "typo"
    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1"}).encode()
    done = subprocess.run([sys.executable, "-S", script, "hook", "--agent", "claude"],
                          input=payload, capture_output=True, check=False,
                          env={**os.environ, "SELF_LEARNING_REPO_ROOT": str(ghost)})
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")  # never breaks the agent
    assert not ghost.exists()
    monkeypatch.setenv("SELF_LEARNING_REPO_ROOT", str(ghost))
    code, _, err = run(["doctor"])
    assert code == 2 and f"SELF_LEARNING_REPO_ROOT {ghost} is missing" in err  # doctor says why


def test_a_gitignore_that_is_a_link_is_left_alone(run, repo, tmp_path):
    git_init(repo)
    shared = tmp_path / "shared-ignore"
    shared.write_text("node_modules\n")
    (repo / ".gitignore").symlink_to(shared)
    code, out, err = run(["init"])
    assert code == 0, err
    exclude = repo / ".git" / "info" / "exclude"
    assert out.endswith(f"Added .agent-skills/ to {exclude}\n")
    assert (repo / ".gitignore").is_symlink() and shared.read_text() == "node_modules\n"
    assert exclude.read_text().endswith("\n.agent-skills/\n")
    check = subprocess.run(["git", "check-ignore", "-q", ".agent-skills/self-learning/v1"],
                           cwd=repo)
    assert check.returncode == 0
    assert run(["init"])[1].count("Added") == 0  # once


def test_review_since_a_future_date_is_bad_input(run):
    code, out, err = run(["review", "--since", "9999-12-31"])
    assert (code, out) == (2, "")
    assert err == ("self_learning: error: review: --since 9999-12-31 is in the future; give a "
                   "past date, e.g. --since 2026-01-31, or --days 30\n")


def test_gitignore_keeps_its_mode(run, repo):
    git_init(repo)
    (repo / ".gitignore").write_text("node_modules\n")
    (repo / ".gitignore").chmod(0o664)
    assert run(["init"])[0] == 0
    assert (repo / ".gitignore").read_text().endswith(".agent-skills/\n")
    assert stat.S_IMODE((repo / ".gitignore").stat().st_mode) == 0o664


@pytest.mark.parametrize("source, message", [
    ("reinforce", "--source reinforce is what the tool's own reinforce step writes"),
    ("two words", "--source must be a short label"),
    ("x" * 41, "--source must be a short label"),
    ("", "--source must be a short label"),
])
def test_a_source_label_is_checked(run, store, source, message):
    from seeding import seed_record
    seed_record({"aha_cards": [{"id": "aha_src", "title": "Use the lockfile in CI"}]})
    before = (store / "signals.jsonl").read_bytes() if (store / "signals.jsonl").exists() else b""
    for args in (["use", "--aha", "aha_src"], ["signal", "--kind", "aha_used", "--aha-id",
                                                "aha_src"]):
        code, out, err = run([*args, "--source", source])
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err, err
    after = (store / "signals.jsonl").read_bytes() if (store / "signals.jsonl").exists() else b""
    assert after == before
    assert run(["use", "--aha", "aha_src", "--source", "ci-bot"])[0] == 0
