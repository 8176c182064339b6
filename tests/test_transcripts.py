"""Tests for ``ingest-transcripts``: Claude Code transcripts turned into hook-shaped observations.

Fixtures: tests/data/transcripts/claude-real-session.jsonl (a real Claude Code 2.1.197 run)
and claude-code-log-samples.jsonl (entry shapes from claude-code-log's dev-docs; see README.md).
"""
import json
import os
import shlex
import shutil
import sys

import pytest

from selflearn.cli import parser as cli
from selflearn.observation import observe, transcripts

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "transcripts")
REAL = os.path.join(DATA, "claude-real-session.jsonl")
SAMPLES = os.path.join(DATA, "claude-code-log-samples.jsonl")
HOOKS_REAL = os.path.join(os.path.dirname(DATA), "hooks", "claude-real")
SESSION = "f75d1087-ead0-46fb-9c9b-b9b48aea7d06"


@pytest.fixture(autouse=True)
def fake_home(tmp_path, monkeypatch):
    """No test may read the real ~/.claude."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


@pytest.fixture
def transcript(tmp_path):
    """A writable copy of the real transcript."""
    path = tmp_path / "t" / "session.jsonl"
    path.parent.mkdir()
    shutil.copy(REAL, path)
    return path


def ingest(run, *args):
    code, out, err = run(["ingest-transcripts", "--format", "json", *map(str, args)])
    assert code == 0, err
    return json.loads(out)


def observations(store):
    path = store / "observations.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def lines_of(*entries):
    return "".join(json.dumps(e) + "\n" for e in entries)


def tool_use(tid, name, tool_input, ts="2026-11-23T10:00:00.000Z", **extra):
    return {"type": "assistant", "sessionId": SESSION, "timestamp": ts, "cwd": "/tmp/project",
            "message": {"role": "assistant", "stop_reason": "tool_use", "content": [
                {"type": "tool_use", "id": tid, "name": name, "input": tool_input}]}, **extra}


def tool_result(tid, content, is_error=False, ts="2026-11-23T10:00:01.000Z", result=None):
    entry = {"type": "user", "sessionId": SESSION, "timestamp": ts, "cwd": "/tmp/project",
             "promptId": "p-2", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": tid, "content": content,
                  "is_error": is_error}]}}
    if result is not None:
        entry["toolUseResult"] = result
    return entry


# --- the real sample ------------------------------------------------------------------------

def test_real_session_becomes_hook_shaped_observations(run, store, transcript):
    data = ingest(run, transcript)
    assert data["added"] == {"session_start": 1, "prompt": 1, "tool_failure": 1,
                             "tool_success": 3, "stop": 1}
    assert data["files_read"] == 1 and data["errors"] == [] and data["added_total"] == 7
    obs = observations(store)
    assert [o["event"] for o in obs] == ["session_start", "prompt", "tool_failure", "tool_success",
                                         "tool_success", "tool_success", "stop"]
    for o in obs:
        assert o["v"] == 1 and o["via"] == "transcript" and o["agent"] == "claude"
        assert o["id"].startswith("obs_") and o["session_id"] == SESSION
    assert obs[0]["ts"] == "2026-11-22T18:20:11Z"
    assert obs[1]["prompt"] == "Try the failing command, then write, edit and read notes.txt"
    failure = obs[2]
    assert failure["tool"] == "Bash" and failure["exit_code"] == 3
    assert failure["error"] == "Exit code 3" and failure["outcome"] == "failure"
    assert failure["tool_use_id"] == "toolu_e2e_0_0" and failure["ts"] == "2026-11-22T18:20:12Z"
    write, edit, read = obs[3:6]
    assert (write["tool"], write["file"], write["tool_kind"]) == (
        "Write", "/tmp/project/notes.txt", "write")
    assert (edit["tool"], edit["edit_old"], edit["edit_new"]) == ("Edit", "world", "there")
    assert read["tool_kind"] == "read"
    assert obs[6]["last_message"] == "All done: notes.txt now says hello there."


def test_tool_observations_match_what_the_hook_records(run, store, transcript):
    """Same fields as ``observe.normalize`` on the real hook payloads, minus what only hooks see."""
    ingest(run, transcript)
    by_tool = {o.get("tool_use_id"): o for o in observations(store)}
    for name in ("PostToolUseFailure", "PostToolUse"):
        with open(os.path.join(HOOKS_REAL, f"{name}.json")) as fh:
            expected = observe.normalize(json.load(fh), "claude")
        expected.pop("duration_ms")
        got = {k: v for k, v in by_tool[expected["tool_use_id"]].items()
               if k not in ("v", "id", "ts", "via")}
        assert got == expected


# --- incremental reading --------------------------------------------------------------------

def test_second_run_reads_nothing(run, store, transcript):
    ingest(run, transcript)
    data = ingest(run, transcript)
    assert data["added_total"] == 0 and data["files_read"] == 0 and data["files_unchanged"] == 1
    assert len(observations(store)) == 7


def test_appended_lines_only_are_read_and_tool_calls_pair_across_runs(run, store, transcript):
    first = ingest(run, transcript)
    size = first["files"][0]["to"]
    with open(transcript, "a") as fh:
        fh.write(lines_of(tool_use("toolu_new", "Bash", {"command": "npm test"})))
    data = ingest(run, transcript)
    assert data["added_total"] == 0 and data["files"][0]["from"] == size
    state = json.loads((store / "ingest_state.json").read_text())
    assert list(state["files"][str(transcript)]["pending"]) == ["toolu_new"]
    with open(transcript, "a") as fh:
        fh.write(lines_of(tool_result("toolu_new", "ok", result={"stdout": "ok", "stderr": "",
                                                                 "interrupted": False})))
    data = ingest(run, transcript)
    assert data["added"] == {"tool_success": 1}
    new = observations(store)[-1]
    assert (new["tool"], new["family"], new["args"], new["prompt_id"]) == (
        "Bash", "npm test", "npm test", "p-2")
    assert new["interrupted"] is False and new["ts"] == "2026-11-23T10:00:01Z"


def test_partial_last_line_is_left_for_the_next_run(run, store, transcript):
    ingest(run, transcript)
    line = lines_of(tool_use("toolu_a", "Read", {"file_path": "/x"}),
                    tool_result("toolu_a", "1\tx"))
    cut = len(line) - 10
    with open(transcript, "a") as fh:
        fh.write(line[:cut])
    data = ingest(run, transcript)
    assert data["added_total"] == 0 and data["errors"] == []
    with open(transcript, "a") as fh:
        fh.write(line[cut:])
    data = ingest(run, transcript)
    assert data["added"] == {"tool_success": 1}
    assert observations(store)[-1]["file"] == "/x"


def test_truncated_file_is_reread_without_duplicates(run, store, transcript):
    ingest(run, transcript)
    kept = transcript.read_text().splitlines(keepends=True)[:8]
    transcript.write_text("".join(kept))
    code, out, err = run(["ingest-transcripts", str(transcript)])
    assert code == 0
    assert "re-read from the start: the file shrank or was replaced" in out
    assert "0 new observation(s)" in out and "3 already recorded" in out
    assert len(observations(store)) == 7


def test_replaced_file_is_reread(run, store, transcript, tmp_path):
    ingest(run, transcript)
    other = tmp_path / "other.jsonl"
    other.write_text(transcript.read_text() + lines_of(
        tool_use("toolu_b", "Grep", {"pattern": "TODO"}), tool_result("toolu_b", "a.py")))
    os.replace(other, transcript)  # a new inode, as log rotation leaves it
    data = ingest(run, transcript)
    assert data["files"][0]["reread"] is True
    assert data["added"] == {"tool_success": 1} and data["skipped_duplicates"] == 7


def test_file_rewritten_in_place_is_noticed_by_its_first_bytes(run, store, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(lines_of(tool_use("toolu_1", "Read", {"file_path": "/a"}),
                             tool_result("toolu_1", "a")))
    ingest(run, path)
    with open(path, "r+") as fh:  # same inode, longer: only the first bytes tell
        fh.write(lines_of(tool_use("toolu_2", "Read", {"file_path": "/b"}),
                          tool_result("toolu_2", "b"), tool_use("toolu_3", "Read", {})))
    data = ingest(run, path)
    assert data["files"][0]["reread"] is True and data["added"] == {"tool_success": 1}


# --- dedup, --since, --dry-run --------------------------------------------------------------

def test_observations_the_hooks_recorded_are_not_added_again(run, store, transcript):
    store.mkdir(parents=True)
    hooked = []
    for name in ("SessionStart", "UserPromptSubmit", "PostToolUseFailure", "PostToolUse", "Stop"):
        with open(os.path.join(HOOKS_REAL, f"{name}.json")) as fh:
            obs = observe.normalize(json.load(fh), "claude")
        hooked.append({"v": 1, "id": f"obs_hook_{name}", "ts": "2026-11-22T18:20:13Z", **obs})
    (store / "observations.jsonl").write_text(lines_of(*hooked))
    data = ingest(run, transcript)
    assert data["skipped_duplicates"] == 5
    assert data["added"] == {"tool_success": 2}
    added = observations(store)[5:]
    assert [o["tool"] for o in added] == ["Write", "Read"]


def test_since_keeps_later_entries_only(run, store, transcript):
    data = ingest(run, transcript, "--since", "2026-11-22T18:20:12Z")
    assert data["skipped_before_since"] == 2
    assert data["added"] == {"tool_failure": 1, "tool_success": 3, "stop": 1}


def test_since_must_be_a_date(run, transcript):
    code, out, err = run(["ingest-transcripts", str(transcript), "--since", "yesterday"])
    assert code == 2 and out == ""
    assert err == ("self_learning: error: ingest-transcripts: --since 'yesterday' is not an ISO "
                   "date; use e.g. 2025-01-31 or 2025-01-31T12:00:00Z\n")


def test_dry_run_writes_nothing(run, store, transcript):
    code, out, err = run(["ingest-transcripts", str(transcript), "--dry-run"])
    assert code == 0 and err == ""
    assert out.splitlines()[-2:] == [
        "would add 7 observation(s) (prompt 1, session_start 1, stop 1, tool_failure 1, "
        "tool_success 3) from 1 file(s); 0 already recorded", "dry run: nothing written"]
    assert not store.exists()


# --- discovery ------------------------------------------------------------------------------

def test_project_dir_is_the_root_with_non_alphanumerics_as_dashes(fake_home):
    with open(os.path.join(HOOKS_REAL, "Stop.json")) as fh:
        sample = json.load(fh)["transcript_path"]  # /home/user/.claude/projects/-tmp-project/…
    assert os.path.basename(transcripts.project_dir("/tmp/project")) == sample.split("/")[-2]
    assert transcripts.project_dir("/a/my_repo.v2/é") == str(
        fake_home / ".claude" / "projects" / "-a-my-repo-v2--")


def test_default_discovery_finds_sessions_and_subagents(run, repo, store, fake_home, transcript):
    folder = fake_home / ".claude" / "projects" / transcripts.project_dir(str(repo)).split("/")[-1]
    (folder / SESSION / "subagents").mkdir(parents=True)
    shutil.copy(transcript, folder / f"{SESSION}.jsonl")
    (folder / SESSION / "subagents" / "agent-1.jsonl").write_text(lines_of(
        {**tool_use("toolu_sub", "Glob", {"pattern": "*.py"}), "isSidechain": True},
        tool_result("toolu_sub", "a.py")))
    (folder / "notes.txt").write_text("not a transcript")
    data = ingest(run)
    assert data["searched"] == [str(folder)]
    names = [os.path.basename(f["path"]) for f in data["files"]]
    assert names == [f"{SESSION}.jsonl", "agent-1.jsonl"]
    assert data["added"]["session_start"] == 1  # a subagent's file is no session of its own
    assert observations(store)[-1]["tool"] == "Glob"


def test_a_folder_of_project_folders_reads_the_transcripts_below_it(run, store, tmp_path,
                                                                    transcript):
    """~/.claude/projects/ holds a folder per project: each one's sessions and subagents."""
    projects = tmp_path / "projects"
    for project in ("-home-dev-app", "-home-dev-lib"):
        (projects / project / SESSION / "subagents").mkdir(parents=True)
        shutil.copy(transcript, projects / project / f"{SESSION}.jsonl")
    (projects / "-home-dev-lib" / SESSION / "subagents" / "agent-1.jsonl").write_text(lines_of(
        {**tool_use("toolu_sub", "Glob", {"pattern": "*.py"}), "isSidechain": True},
        tool_result("toolu_sub", "a.py")))
    too_deep = projects / "a" / "b" / "c" / "d"
    too_deep.mkdir(parents=True)
    shutil.copy(transcript, too_deep / "deep.jsonl")
    data = ingest(run, projects)
    assert [os.path.relpath(f["path"], projects) for f in data["files"]] == [
        f"-home-dev-app/{SESSION}.jsonl", f"-home-dev-lib/{SESSION}.jsonl",
        f"-home-dev-lib/{SESSION}/subagents/agent-1.jsonl"]
    assert data["added_total"] > 0 and observations(store)[-1]["tool"] == "Glob"


def test_a_folder_without_transcripts_says_what_it_expected(run, repo, tmp_path):
    (tmp_path / "empty" / "project").mkdir(parents=True)
    code, out, err = run(["ingest-transcripts", str(tmp_path / "empty")])
    assert code == 0 and out.endswith("added 0 observation(s) from 0 file(s); 0 already recorded\n")
    assert err == (f"self_learning: warning: ingest-transcripts: no .jsonl file in "
                   f"{tmp_path / 'empty'} or the 3 levels of folders below it; pass Claude Code "
                   "transcripts (files, a project's folder or a folder of them, as "
                   "~/.claude/projects/ is), or nothing to read "
                   f"{transcripts.project_dir(str(repo))}\n")


def test_claude_config_dir_moves_the_projects_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert transcripts.projects_home() == str(tmp_path / "cfg" / "projects")


def test_no_transcripts_is_not_an_error(run, store):
    code, out, err = run(["ingest-transcripts"])
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith("no new transcript lines in ")
    assert not store.exists()


def test_missing_path_is_a_usage_error(run, tmp_path):
    code, out, err = run(["ingest-transcripts", str(tmp_path / "nope.jsonl")])
    assert code == 2
    assert err.startswith(f"self_learning: error: ingest-transcripts: {tmp_path / 'nope.jsonl'} "
                          "does not exist; pass transcript .jsonl files or folders, or nothing "
                          "to read ")


# --- entry shapes ---------------------------------------------------------------------------

def test_claude_code_log_sample_shapes(run, store):
    data = ingest(run, SAMPLES)
    assert data["added"] == {"session_start": 1, "prompt": 2, "tool_success": 3, "tool_failure": 2}
    obs = observations(store)
    prompts = [o["prompt"] for o in obs if o["event"] == "prompt"]
    assert prompts[0] == "/model" and prompts[1].startswith("Oh, I just found out")
    failures = [o for o in obs if o["event"] == "tool_failure"]
    assert failures[0]["tool"] == "Edit"
    assert failures[0]["error"] == "File has not been read yet. Read it first before writing to it."
    assert "tool" not in failures[1]  # its tool_use is in another file
    assert [o["tool"] for o in obs if o["event"] == "tool_success"] == ["Bash", "Glob", "Task"]


def test_interrupts_compaction_and_prompt_blocks(run, store, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(lines_of(
        {"type": "summary", "summary": "x", "leafUuid": "u"},
        {"type": "user", "sessionId": SESSION, "timestamp": "2026-11-23T10:00:00Z",
         "promptId": "p1",
         "message": {"role": "user", "content": [
             {"type": "text", "text": "fix the build"},
             {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
             {"type": "image", "source": {}}]}},
        tool_use("toolu_i", "Bash", {"command": "make -j8 test"}),
        tool_result("toolu_i", [{"type": "text",
                                 "text": "[Request interrupted by user for tool use]"}],
                    is_error=True),
        {"type": "user", "sessionId": SESSION, "timestamp": "2026-11-23T10:00:02Z",
         "message": {"role": "user", "content": "[Request interrupted by user]"}},
        {"type": "user", "sessionId": SESSION, "timestamp": "2026-11-23T10:00:02Z",
         "isCompactSummary": True, "message": {"role": "user", "content": "Summary: ..."}},
        {"type": "user", "sessionId": SESSION, "timestamp": "2026-11-23T10:00:02Z",
         "message": {"role": "user", "content":
                     "<command-message>greet is running…</command-message>\n"
                     "<command-name>/greet</command-name>\n<command-args>world</command-args>"}},
        {"type": "system", "subtype": "compact_boundary", "sessionId": SESSION,
         "timestamp": "2026-11-23T10:00:03Z", "compactMetadata": {"trigger": "manual"}},
        {"type": "assistant", "sessionId": SESSION, "timestamp": "2026-11-23T10:00:04Z",
         "message": {"role": "assistant", "stop_reason": "end_turn",
                     "content": [{"type": "thinking", "thinking": "hm"}]}}))
    ingest(run, path)
    obs = observations(store)
    assert [o["event"] for o in obs] == ["session_start", "prompt", "tool_failure", "prompt",
                                         "compact"]
    assert obs[1]["prompt"] == "fix the build" and obs[3]["prompt"] == "/greet world"
    assert obs[2]["interrupted"] is True and obs[2]["family"] == "make test"
    assert (obs[4]["trigger"], obs[4]["phase"]) == ("manual", "post")


def test_secrets_are_redacted(run, store, tmp_path):
    path = tmp_path / "s.jsonl"
    key = "sk-ant-api03-" + "A" * 40
    path.write_text(lines_of(
        tool_use("toolu_s", "Bash", {"command": f"curl -H 'x-api-key: {key}'"}),
        tool_result("toolu_s", f"Exit code 1\nbad key {key}", is_error=True)))
    ingest(run, path)
    text = (store / "observations.jsonl").read_text()
    assert key not in text and "[REDACTED" in text
    assert key not in (store / "ingest_state.json").read_text()


# --- errors and progress --------------------------------------------------------------------

def test_garbage_lines_are_reported_not_fatal(run, store, tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"{not json\n[1, 2]\n\n\xff\xfe\n" + lines_of(
        tool_use("toolu_g", "Read", {"file_path": "/g"}), tool_result("toolu_g", "g")).encode())
    code, out, err = run(["ingest-transcripts", str(path)])
    assert code == 0 and err == ""
    bad = [line for line in out.splitlines() if line.startswith("unreadable: ")]
    assert [b.split(": ", 2)[1] for b in bad] == [f"{path}:1", f"{path}:2", f"{path}:4"]
    assert "not a JSON object" in bad[1] and "not JSON" in bad[0]
    assert observations(store)[-1]["file"] == "/g"


def test_unreadable_file_is_reported(run, transcript, monkeypatch):
    def fake_open(path, *args, **kwargs):
        if str(path) == str(transcript):
            raise PermissionError(13, "Permission denied")
        return open(path, *args, **kwargs)
    monkeypatch.setattr(transcripts, "open", fake_open, raising=False)
    data = ingest(run, transcript)
    assert data["errors"] == [f"{transcript}: unreadable (Permission denied); skipped"]
    assert data["files_read"] == 0


def test_progress_goes_to_stderr_only_on_a_tty(run, transcript, monkeypatch):
    code, out, err = run(["ingest-transcripts", str(transcript), "--dry-run"])
    assert err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(["ingest-transcripts", str(transcript), "--dry-run"])
    assert err == f"self_learning: {transcript}: 7 new observation(s)\n"


def test_bad_state_file_is_an_error(run, store, transcript):
    store.mkdir(parents=True)
    (store / "ingest_state.json").write_text("{oops")
    code, out, err = run(["ingest-transcripts", str(transcript)])
    assert code == 2
    state = store / "ingest_state.json"
    assert err.startswith(f"self_learning: error: ingest-transcripts: {state} is not JSON (")
    assert err.endswith("); delete it to re-read every transcript (observations already stored "
                        "are not duplicated)\n")
    (store / "ingest_state.json").write_text('{"v": 9, "files": {}}')
    code, out, err = run(["ingest-transcripts", str(transcript)])
    assert code == 1 and "written by a newer self_learning" in err
    (store / "ingest_state.json").write_text("[]")
    assert ingest(run, transcript)["added_total"] == 7


def test_unanswered_tool_calls_are_capped(run, store, tmp_path, monkeypatch):
    monkeypatch.setattr(transcripts, "_MAX_PENDING", 1)
    path = tmp_path / "p.jsonl"
    path.write_text(lines_of(tool_use("toolu_x", "Read", {}), tool_use("toolu_y", "Read", {})))
    ingest(run, path)
    state = json.loads((store / "ingest_state.json").read_text())
    assert list(state["files"][str(path)]["pending"]) == ["toolu_y"]


def test_key_of_other_events_uses_time():
    assert transcripts.key({"event": "compact", "session_id": "s", "ts": "t"}) == (
        "compact", "s", "t", None)


def test_help_examples_run(run, monkeypatch):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["ingest-transcripts"]
    examples = [line.split("$ ", 1)[1] for line in sub.epilog.splitlines() if "$ " in line]
    assert examples
    for example in examples:
        args = shlex.split(example)[2:]  # drop "python3 scripts/self_learning.py"
        code, out, err = run(args)
        assert code == 0, (example, err)


def test_a_file_that_is_no_transcript_gets_a_hint(run, store, transcript, tmp_path):
    other = tmp_path / "notes.jsonl"
    other.write_text('{"level": "info", "msg": "deploy done", "timestamp": "2026-11-23T10:00:00Z"}\n')
    code, out, err = run(["ingest-transcripts", str(transcript), str(other)])
    assert code == 0 and err == ""
    hints = [line for line in out.splitlines() if "looks like a Claude Code transcript" in line]
    assert len(hints) == 1
    assert out.splitlines()[out.splitlines().index(hints[0]) - 1].startswith(str(other))
    assert [f["transcript"] for f in ingest(run, transcript, other)["files"]] == []  # unchanged
    other.write_text(other.read_text() + '{"msg": "again"}\n')
    (entry,) = ingest(run, other)["files"]
    assert entry["transcript"] is False and entry["added"] == 0
