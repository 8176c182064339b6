"""The fast part of bench/learning_quality.py: real sessions replayed, the goals reached kept.

27 public Claude Code sessions (bench/learning/manifest.json) go through ingest-transcripts,
mine and maintain, and each other set of the manifest apart: 40 held-out ones of five other
projects, held-out-2 (29 sessions of three more, not read by anyone changing rules until an
independent labeller judged its 8 lessons at stop 23, and read since the fix of the classes
behind its wrong ones: every lesson must stay labelled, none wrong) and held-out-3 (28
sessions of two more, added after that fix and labelled by someone who changes no rules); the labels
and gold lessons are the
data files next to them. A change that makes a lesson wrong, leaves one unlabelled or loses a
useful one fails here; label new lessons in bench/learning/labels.json after reading them.
"""
import hashlib
import importlib.util
import json
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    "learning_quality", os.path.join(REPO, "bench", "learning_quality.py"))
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)
_SPEC = importlib.util.spec_from_file_location("replay", os.path.join(REPO, "bench", "replay.py"))
replay = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(replay)
HELD_OUT_2 = "held-out-2"  # read since #26 (branch miner3), as held-out since stop 23
UNSEEN = (HELD_OUT_2, "held-out-3")  # sets sourced from public commits after the tuning ones

USEFUL_SHARE = 0.8   # issue 12's goal for mined lessons
GOLD_SHARE = 0.8     # and for gold lessons found
GOLD_FOUND = 17      # gold lessons found today (of 18): a regression fails
USEFUL = 19          # 20 before stop 23: claude-code-viewer's `ls types/` card went, its step
#                      (`ls -la /path/to/Demo`, another folder) was no certain fix (bench/README.md)
HELD_OUT_GOLD = 10   # of 25, on sessions read at stop 23 (bench/README.md)
HELD_OUT_WRONG = 0   # the rtk card is right since stop 23: the figure may never rise
HELD_OUT_2_WRONG = 0  # 4 before the classes behind them were fixed (#26, branch miner3)


def test_the_benchmark_data_is_real_varied_and_sourced():
    manifest = bench.load("manifest.json")
    sessions = manifest["sessions"]
    assert len([s for s in sessions if s.get("set") != "held-out"]) >= 20
    assert len([s for s in sessions if s.get("set") == "held-out"]) >= 6
    assert len({s["project"] for s in sessions}) >= 3
    assert len({s["ecosystem"].split(" ")[0] for s in sessions}) >= 3
    for s in sessions:  # shared and fetched files need not be on this machine (CI has none)
        assert s["repo"].startswith("https://github.com/") and len(s["commit"]) == 40
        assert s["licence"] and (s.get("root") in ("shared", "mirror")
                                 or os.path.exists(bench.path_of(s)))
        assert s.get("root") != "mirror" or s["blob"].startswith(s["commit"] + ":")
    gold = bench.load("gold.json")["gold"]
    written = {g["session"] for g in gold}  # 1-3 lessons for a session that has any, up to 6
    assert all(1 <= sum(g["session"] == s for g in gold) <= 6 for s in written)  # in a long one
    assert sum(sum(g["session"] == s for g in gold) > 3 for s in written) <= 1  # (8ea091c9)
    names = {s["session"] for s in sessions}
    assert all(g["session"] in g["seen_in"] and set(g["seen_in"]) <= names for g in gold)


def test_each_set_is_described_and_the_unseen_ones_are_sourced_with_gold():
    manifest, gold = bench.load("manifest.json"), bench.load("gold.json")["gold"]
    assert bench.sets(manifest)[:4] == ["tuning", "held-out", *UNSEEN]
    assert all(manifest["sets"].get(group) for group in bench.sets(manifest))
    for group in UNSEEN:
        fresh = [s for s in manifest["sessions"] if s.get("set") == group]
        assert len(fresh) >= 20 and len({s["project"] for s in fresh}) >= 2
        for s in fresh:  # the file is the one the manifest names, taken from a public commit
            with open(os.path.join(bench.DATA, s["file"]), "rb") as fh:
                assert hashlib.sha256(fh.read()).hexdigest() == s["sha256"]
            assert s["path"] and s["started"] and s["licence"] == "MIT"
        written = [g for g in gold if g.get("set") == group]
        assert {g["project"] for g in written} == {s["project"] for s in fresh}
        assert {g["session"] for g in written} <= {s["session"] for s in fresh}


def test_sessions_kept_in_the_shared_folder_are_read_there_checked_or_skipped(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "SHARED", str(tmp_path))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.jsonl").write_bytes(b"{}\n")
    here = {"session": "p/a", "file": "p/a.jsonl", "root": "shared", "set": "s1",
            "sha256": hashlib.sha256(b"{}\n").hexdigest()}
    gone = dict(here, session="q/b", file="q/b.jsonl", set="s2")
    assert bench.available({"sessions": [here, gone]})["sessions"] == [here]
    assert bench.path_of(here) == str(tmp_path / "p" / "a.jsonl")
    assert capsys.readouterr().err.count("skipped") == 1  # one line for the absent set
    with pytest.raises(SystemExit):  # a file that is not the manifest's
        bench.available({"sessions": [dict(here, sha256="0" * 64)]})


def test_sessions_read_from_a_fetched_snapshot_are_prepared_for_the_run_only(
        tmp_path, monkeypatch, capsys):
    """A set read straight from a snapshot the search library fetched: the transcript is
    prepared (prepare.py) into a folder of this run's, checked against the manifest, and a
    snapshot that is not on this machine skips its set with one line."""
    import prepare
    git = ["git", "-C", str(tmp_path / "work")]
    (tmp_path / "work").mkdir()
    raw = ('{"type":"user","sessionId":"s","cwd":"/home/ann/p","message":{"role":"user",'
           '"content":"run the tests"},"uuid":"u1"}\n{"type":"queue-operation"}\n')
    (tmp_path / "work" / "full.jsonl").write_text(raw)
    for step in (["init", "-q"], ["add", "full.jsonl"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(git + step, check=True)
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    monkeypatch.setattr(bench, "MIRRORS", str(tmp_path))
    text = prepare.prepared(raw)
    assert "ann" not in text and "queue-operation" not in text
    here = {"session": "p/s", "root": "mirror", "set": "s1", "git_dir": "work/.git",
            "blob": f"{commit}:full.jsonl", "sha256": hashlib.sha256(text.encode()).hexdigest()}
    gone = dict(here, session="q/s", set="s2", git_dir="absent/.git")
    assert bench.available({"sessions": [here, gone]})["sessions"] == [here]
    path = bench.path_of(here)
    assert open(path, encoding="utf-8").read() == text
    assert not path.startswith(str(tmp_path)) and not path.startswith(bench.REPO)
    assert capsys.readouterr().err.count("skipped") == 1
    with pytest.raises(SystemExit):  # a transcript that is not the manifest's
        bench.available({"sessions": [dict(here, sha256="0" * 64)]})


def test_the_replay_totals_each_set_apart():
    data = replay.measure(HELD_OUT_2, "tij", False)
    assert [(r["project"], r["set"]) for r in data["rows"]] == [
        ("tij", HELD_OUT_2), (f"total {HELD_OUT_2}", HELD_OUT_2)]


def test_the_replayed_sessions_reach_the_goals(monkeypatch):
    data = bench.measure()
    manifest = bench.available(bench.load("manifest.json"))  # the sets on this machine
    for group in bench.sets(manifest):  # a total row per set, never mixed into another
        row = next(r for r in data["rows"] if r["project"] == bench.total_name(group))
        assert row["set"] == group and row["sessions"] == sum(
            bench.set_of(s) == group for s in manifest["sessions"])
    third = next(r for r in data["rows"] if r["project"] == HELD_OUT_2)
    assert third["gold"] == sum(g.get("set") == HELD_OUT_2 for g in bench.load("gold.json")["gold"])
    assert third["unlabelled"] == 0 and third["wrong"] <= HELD_OUT_2_WRONG, [
        j for j in data["lessons"] if j["label"] in ("unlabelled", "wrong")]
    fourth = next(r for r in data["rows"] if r["project"] == UNSEEN[1])  # labelled at stop 24
    assert fourth["unlabelled"] == 0, [j["title"] for j in data["lessons"]
                                       if j["label"] == "unlabelled"]
    total = next(r for r in data["rows"] if r["project"] == "total")
    held = next(r for r in data["rows"] if r["project"] == "held-out")
    assert total["sessions"] == 27 and held["sessions"] == 40
    assert held["unlabelled"] == 0 and held["wrong"] <= HELD_OUT_WRONG, [
        j for j in data["lessons"] if j["label"] in ("unlabelled", "wrong")]
    assert held["gold_found"] >= HELD_OUT_GOLD and held["noise"] == 0
    assert data["sets"]["held-out"]["useful_share"] >= USEFUL_SHARE, [
        j for j in data["lessons"] if j["label"] != "useful"]
    assert total["wrong"] == 0, [j for j in data["lessons"] if j["label"] == "wrong"]
    assert total["unlabelled"] == 0, [j["title"] for j in data["lessons"]
                                      if j["label"] == "unlabelled"]
    assert total["useful"] >= USEFUL and data["useful_share"] >= USEFUL_SHARE, \
        json.dumps(data["lessons"], indent=1)
    assert total["gold_found"] >= GOLD_FOUND and data["gold_share"] >= GOLD_SHARE, \
        data["gold_found"]
    assert total["noise"] == 0


def test_the_replay_puts_the_sessions_folder_at_its_repository_root():
    """As in a real run, the hooks see the repository where the session ran: its folder and
    the paths under it become the replay's root; a sibling folder that starts alike stays."""
    payload = {"cwd": "/Users/USER/Code/cb", "tool_input": {
        "command": "cd /Users/USER/Code/cb/apps && ls /Users/USER/Code/cbx /Users/USER/Code/cb"}}
    assert replay.moved(payload, "/Users/USER/Code/cb", "/tmp/r/cb") == {
        "cwd": "/tmp/r/cb",
        "tool_input": {"command": "cd /tmp/r/cb/apps && ls /Users/USER/Code/cbx /tmp/r/cb"}}
    assert replay.moved(payload, "/home", "/tmp/r/cb") == payload  # too wide to be a project


def test_the_replay_makes_the_files_the_session_worked_on(tmp_path):
    """The repository is not in the transcript: a lesson citing `./cmd/server/` must not look
    stale in the replay for want of a file the session read; a failed Read or a path outside
    the repository makes nothing."""
    root = str(tmp_path / "r")
    def ev(call, event, tool, path):
        return {"call": call, "payload": {"hook_event_name": event, "tool_name": tool,
                                          "tool_input": {"file_path": path}}}
    events = [ev("a", "PostToolUse", "Read", f"{root}/go/cmd/server/main.go"),
              ev("b", "PostToolUseFailure", "Read", f"{root}/missing.txt"),
              ev("c", "PostToolUse", "Write", "/etc/passwd"),
              ev("d", "PostToolUse", "Edit", f"{root}/../outside.txt")]
    assert replay.materialize(events, root) == 1
    assert os.path.isfile(os.path.join(root, "go", "cmd", "server", "main.go"))
    assert not os.path.exists(os.path.join(root, "missing.txt"))


def test_a_note_in_the_scripted_agents_words_states_its_gold_lesson():
    g = {"lesson": "In many sessions the Bash tool's PATH has no Go: `go build` fails with "
                   "'go: command not found'. The toolchain is /usr/local/go/bin/go.",
         "match": r"(?i)go: command not found", "needs": "(?i)/usr/local/go/bin"}
    note = "[aha_1] In many sessions the Bash tool's PATH has no Go: The toolchain is ..."
    assert replay.states(g, note) and not replay.states(g, "[aha_2] PATH has no Go")


def test_a_note_at_a_failure_is_read_beside_its_error():
    """A note printed at a failure names the fix; the error it explains is beside it. A gold
    lesson with no fix to name is not stated by the error alone."""
    g = {"lesson": "The shell stays in go/ after a cd.", "match": r"(?i)did not match any files",
         "needs": r"(?i)absolute path"}
    note = "The shell is in `go/`, not at the repository root. Use an absolute path."
    error = "fatal: pathspec 'go/x.go' did not match any files"
    assert replay.with_fix(g, note, error) and not replay.with_fix(g, note)
    assert not replay.with_fix(g, "The shell is in `go/`.", error)  # no fix named
    assert not replay.with_fix(dict(g, needs=""), "Anything at all.", error)


def test_a_note_at_a_tools_own_failure_concerns_the_session():
    """A mined note about a tool's failure names the tool (`Skill` fails with …): at that
    tool's failure it concerns the session, at another tool's it does not."""
    note = ("[aha_1] `Skill` fails with `Unknown skill: commit`: there is no `commit` skill in "
            "this setup; `git commit` did its job instead (mined; not reviewed)")
    printed = "Learned note for this call:\n<learned-notes>\n- " + note + "\n</learned-notes>"
    def run(tool):
        return {"session": "s", "events": [{"event": "PostToolUseFailure", "printed": printed,
                                            "command": '{"skill": "commit"}', "tool": tool,
                                            "error": "Unknown skill: commit"}]}
    assert [n["relevant"] for n in replay.notes(run("Skill"), [])] == [True]
    assert [n["relevant"] for n in replay.notes(run("Task"), [])] == [False]


def test_the_scripted_agent_reads_the_whole_error_it_lived_through(monkeypatch):
    """The store keeps an error's head; the agent asked about it saw the whole output, so a
    gold lesson whose words come late in it (turbo's summary at the end) is still its answer."""
    sent = []
    monkeypatch.setattr(replay, "_run", lambda argv, stdin="": sent.append(stdin))
    monkeypatch.setattr(replay, "setenv", lambda key, value: None)
    g = {"id": "g1", "lesson": "Live e2e tests need credentials: run `bun run verify`.",
         "match": r"(?i)bun run test.*Missing CLICKHOUSE_URL", "needs": r"(?i)bun run verify"}
    obs = {"id": "obs_1", "tool_use_id": "toolu_1", "args": "bun run test",
           "error": "Failed: @chkit/plugin-pull#test\n• turbo 2.8.9"}
    assert replay.answer("/r", [obs], [g], "2026-02-24T01:59:12Z") == []
    whole = "• turbo 2.8.9\n" + "x\n" * 200 + "error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST"
    assert replay.answer("/r", [obs], [g], "2026-02-24T01:59:12Z", {"toolu_1": whole}) == ["g1"]
    assert '"episode": "obs_1"' in sent[-1]
    head = dict(g, id="g0", match=r"(?i)Failed: @chkit/plugin-pull#test")  # what the question
    assert replay.answer("/r", [obs], [g, head], "t", {"toolu_1": whole}) == ["g0"]  # quoted
