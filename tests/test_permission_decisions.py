"""A permission request is not a decision: the refusal, when it comes, is the denial.

Claude Code fires no hook for a call refused at its permission prompt: PostToolBatch lists the
call with the refusal as its result (payload shapes of Claude Code 2.1.197, the headless one
captured from the real client), and its transcript keeps it as an error result.
"""
import json

SESSION = {"session_id": "9f1c2d3e", "transcript_path": "/home/dev/.claude/projects/-app/9f.jsonl",
           "cwd": "/home/dev/app", "permission_mode": "default"}
RESET = {"command": "git reset --hard", "description": "Discard local changes"}
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
            "if it was a file edit, the new_string was NOT written to the file). STOP what you "
            "are doing and wait for the user to tell you how to proceed.")


def rejected_session(sid: str, response: str = REJECTED) -> list:
    """Claude Code's hook payloads when the user says no to `git reset --hard`."""
    base = dict(SESSION, session_id=sid, prompt_id=f"p-{sid}")
    use = f"toolu_{sid}"
    return [dict(base, hook_event_name="PreToolUse", tool_name="Bash", tool_input=RESET,
                 tool_use_id=use),
            dict(base, hook_event_name="PermissionRequest", tool_name="Bash", tool_input=RESET,
                 permission_suggestions=[]),
            dict(base, hook_event_name="PostToolBatch", effort={"level": "high"}, tool_calls=[
                {"tool_name": "Bash", "tool_input": RESET, "tool_use_id": use,
                 "tool_response": response}]),
            dict(base, hook_event_name="Stop", stop_hook_active=False,
                 last_assistant_message="Understood, I left the repository as it is.")]


def observations(store) -> list:
    return [json.loads(x) for x in (store / "observations.jsonl").read_text().splitlines()]


def fire(run, payloads) -> None:
    for payload in payloads:
        assert run(["hook", "--agent", "claude"], json.dumps(payload))[0] == 0


def test_a_rejected_call_is_a_request_then_a_denial(run, store):
    fire(run, rejected_session("a"))
    got = [(o["event"], o.get("outcome"), o.get("args")) for o in observations(store)]
    assert got == [("pre_tool", None, "git reset --hard"),
                   ("permission_request", None, "git reset --hard"),
                   ("permission_denied", "denial", "git reset --hard"), ("stop", None, None)]
    denied = observations(store)[2]
    assert (denied["tool_use_id"], denied["family"]) == ("toolu_a", "git reset")
    assert denied["reason"] == "The user doesn't want to proceed with this tool use"


def test_headless_refusals_and_deny_rules_are_denials_and_other_batches_are_skipped(run, store):
    fire(run, rejected_session("h", "This command requires approval")[2:3])
    fire(run, rejected_session("r", "Permission to use Bash has been denied.")[2:3])
    fire(run, rejected_session("ok", "HEAD is now at 1a2b3c4 init")[2:3])
    assert [(o["event"], o["reason"]) for o in observations(store)] == [
        ("permission_denied", "This command requires approval"),
        ("permission_denied", "Permission to use Bash has been denied")]


def test_refusals_teach_a_denial_lesson_and_count_as_no_tool_outcome(run, store):
    for sid in ("a", "b"):
        fire(run, rejected_session(sid))
    code, out, _ = run(["mine", "--kind", "denials", "--format", "json"])
    (lesson,) = json.loads(out)["lessons"]
    assert code == 0 and lesson["fingerprint"] == "denied|git reset --hard"  # what was denied
    assert "denied at the permission prompt 2x" in lesson["card"]["problem"]
    outcomes = [o["outcome"] for o in observations(store) if "outcome" in o]
    assert outcomes == ["denial", "denial"]  # no approval, no failure


def test_an_ingested_rejection_is_a_denial_once(run, store, tmp_path):
    """The transcript's error result of the refused call is the denial the hook stored."""
    fire(run, rejected_session("t"))
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "assistant", "sessionId": "t", "cwd": "/home/dev/app",
              "timestamp": "2026-03-02T10:00:00Z",
              "message": {"role": "assistant", "content": [
                  {"type": "tool_use", "id": "toolu_t", "name": "Bash", "input": RESET}]}},
             {"type": "user", "sessionId": "t", "cwd": "/home/dev/app",
              "timestamp": "2026-03-02T10:00:05Z", "toolUseResult": f"Error: {REJECTED}",
              "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "toolu_t", "is_error": True,
                   "content": REJECTED}]}}]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert run(["ingest-transcripts", str(transcript)])[0] == 0
    assert [o["event"] for o in observations(store)].count("permission_denied") == 1
    (store / "observations.jsonl").unlink()
    (store / "ingest_state.json").unlink()
    assert run(["ingest-transcripts", str(transcript)])[0] == 0
    (denied,) = [o for o in observations(store) if o["event"] != "session_start"]
    assert (denied["event"], denied["outcome"], denied["args"]) == (
        "permission_denied", "denial", "git reset --hard")
