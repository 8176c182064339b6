"""The whole loop with the real Claude Code client: observe, learn, surface, evaluate.

Run with the plugin's hooks (trusted workspace) and with plugin and settings hooks both
registered: the lesson is learned from each failure once and injected once either way.

Three sessions on three days read the settings example at the repository's root, where it
is not, then in config/ (from the second on, the fix comes with the failure: the hooks learned
it after the first); `maintain` mines the failure with that fix into a lesson and promotes it
(a certain fix: the same file, found where it is; the just-in-time check keeps it: the file
its fix reads exists). The fourth session's first request to the Messages API carries the lesson and its
fix (put there by our SessionStart hook), and `reinforce` credits the lesson when the session
reads the right file and the failure does not come back. Days are set with the fake clock
(SELF_LEARNING_NOW), which hooks and commands both honour.
"""
import json
import subprocess

import pytest

import claude_harness as ch

pytestmark = pytest.mark.e2e

FAILING = "cat settings.example.yaml"  # at the root, where it is not: it lives in config/
FIX = "cat config/settings.example.yaml"
DAYS = ["2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"]


def _session(binary, project, home, now, script, prompt):
    with ch.ScriptedAnthropicServer(script) as server:
        proc = ch.run_claude(binary, project, prompt, server, home, timeout=90,
                             extra_env={"SELF_LEARNING_NOW": now})
    assert proc.returncode == 0, proc.stderr
    return server


def _json(done):
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("workspace", ["trusted", "trusted-twice"], indirect=True)
def test_a_lesson_from_three_sessions_reaches_the_fourth_once(claude_binary, workspace,
                                                              monkeypatch):
    project, store, run_cli, home = (workspace.project, workspace.store, workspace.run_cli,
                                     workspace.home)
    (project / "config").mkdir()
    (project / "config" / "settings.example.yaml").write_text("port: 8080\n")
    learned = 0.0
    for day in DAYS:
        _session(claude_binary, project, home, day,
                 [ch.tool_use("Bash", {"command": FAILING, "description": "Read the settings"}),
                  ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                  "The port is 8080."], "which port does the app use?")
        # the learning the hooks start in the background is done (a maintain that finds
        # one running is skipped, and the one below must run)
        learned = ch.wait_for_learning(store, learned)["last_run_epoch"]

    failures = [json.loads(line) for line in (store / "observations.jsonl").read_text()
                .splitlines() if '"tool_failure"' in line]
    assert [f["ts"][:10] for f in failures] == [d[:10] for d in DAYS]  # once each
    assert len({f["session_id"] for f in failures}) == 3

    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-04T12:00:00Z")
    report = _json(run_cli("maintain", "--format", "json"))
    while report.get("skipped") == "another maintain is running":  # a late background run
        ch.wait_for_learning(store, 0.0)
        report = _json(run_cli("maintain", "--format", "json"))
    cards = _json(run_cli("list", "--format", "json", "--status", "accepted"))["items"]
    (lesson,) = [c for c in cards if c.get("origin") == "mined"]
    assert lesson["title"] == ("`cat` fails with `cat: settings.example.yaml: No such file or "
                               "directory`"), report
    assert lesson["solution_steps"][0] == f"use `{FIX}` instead of `{FAILING}`"

    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-05T09:00:00Z")
    server = _session(claude_binary, project, home, "2026-03-05T09:00:00Z",
                      [ch.tool_use("Bash", {"command": FAILING, "description": "Read the settings"}),
                       ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                       "The port is 8080."], "which port does the app use?")
    first, failed = (r.text() for r in server.main_requests[:2])
    assert lesson["id"] not in first  # a lesson about a call waits for it: no session-start noise
    assert failed.count(lesson["id"]) == 1 and "settings.example.yaml" in failed  # once

    surfacings = [json.loads(line) for line in (store / "surfacings.jsonl").read_text()
                  .splitlines()]
    shown = [s for s in surfacings if lesson["id"] in s["lesson_ids"]]
    assert [s["event"] for s in shown if s["ts"].startswith("2026-03-05")] == ["tool_failure"]
    # and in sessions 2 and 3 it came with the repeated failure (learned from the first)
    assert [(s["ts"][:10], s["event"]) for s in shown[:-1]] == [
        ("2026-03-03", "tool_failure"), ("2026-03-04", "tool_failure")]

    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-05T18:00:00Z")
    _json(run_cli("reinforce", "--format", "json"))
    signals = [json.loads(line) for line in (store / "signals.jsonl").read_text().splitlines()]
    outcomes = [s for s in signals if s.get("aha_id") == lesson["id"]
                and s["kind"] in ("aha_helped", "aha_violated")]
    assert {s["kind"] for s in outcomes} == {"aha_helped"}  # sessions 2 to 4: it never recurred
    assert len({s["session_id"] for s in outcomes}) == 3


@pytest.mark.parametrize("workspace", ["trusted", "untrusted"], indirect=True)
def test_the_loop_closes_with_no_command_typed(claude_binary, workspace):
    """#24: the folder dropped in, hooks registered both ways the README gives; three sessions
    fail the same way and recover; nobody runs a command; the fourth session's requests carry
    the lesson with its fix, at the latest with the repeated failing call."""
    project, store, home = workspace.project, workspace.store, workspace.home
    (project / "config").mkdir()
    (project / "config" / "settings.example.yaml").write_text("port: 8080\n")
    learned = 0.0
    for day in DAYS:
        _session(claude_binary, project, home, day,
                 [ch.tool_use("Bash", {"command": FAILING, "description": "Read the settings"}),
                  ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                  "The port is 8080."], "which port does the app use?")
        state = ch.wait_for_learning(store, learned)  # started by the Stop or SessionEnd hook
        assert state["last_result"]["trigger"] in ("turn-end", "session-end")
        learned = state["last_run_epoch"]
    server = _session(claude_binary, project, home, "2026-03-05T09:00:00Z",
                      [ch.tool_use("Bash", {"command": FAILING, "description": "Read the settings"}),
                       ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                       "The port is 8080."], "which port does the app use?")
    requests = [r.text() for r in server.main_requests]
    seen = [i for i, text in enumerate(requests)
            if "Learned note" in text and "settings.example.yaml" in text]
    assert seen and seen[0] <= 1, requests  # with the failing call's result at the latest
    lesson = json.loads((store / "triggers.jsonl").read_text().splitlines()[1])["id"]
    assert requests[seen[0]].count(lesson) == 1


def _record_from_question(body) -> "ch.Turn":
    """The scripted agent reads the Stop hook's question and records the lesson it asks for."""
    text = json.dumps(body)
    episode = text.split("(episode ")[1].split(")")[0]
    card = {"title": "config/settings.yaml is not in the repository: read "
                     "config/settings.example.yaml", "problem": "only the example is committed",
            "solution_steps": [f"read `{FIX}` instead"], "episode": episode}
    command = ("python3 .claude/skills/self-learning-skills/scripts/self_learning.py record "
               f"<<'EOF'\n{json.dumps({'aha_cards': [card]})}\nEOF")
    return ch.tool_use("Bash", {"command": command, "description": "Record the lesson"})


@pytest.mark.parametrize("workspace", ["trusted"], indirect=True)
def test_the_agent_is_asked_once_and_its_lesson_comes_back(claude_binary, workspace):
    """#26: a session fails, recovers and says it is done; the Stop hook asks; the agent
    records the lesson in its words; the next session gets it with the same failure and is
    not asked again, since a lesson covers it now."""
    project, store, home = workspace.project, workspace.store, workspace.home
    (project / "config").mkdir()
    (project / "config" / "settings.example.yaml").write_text("port: 8080\n")
    first = _session(claude_binary, project, home, DAYS[0],
                     [ch.tool_use("Bash", {"command": FAILING, "description": "Read settings"}),
                      ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                      "The port is 8080.", ch.Reply(_record_from_question), "Recorded."],
                     "which port does the app use?")
    last = first.main_requests[-1].text()
    assert last.count("before you finish") == 1 and "settings.example.yaml" in last  # once
    cards = [json.loads(line) for line in (store / "aha_cards.jsonl").read_text().splitlines()]
    (card,) = [c for c in cards if c.get("origin") == "agent"]
    assert card["episode"].startswith("obs_") and card["call"]["family"] == "cat"
    ch.wait_for_learning(store, 0.0)
    second = _session(claude_binary, project, home, DAYS[1],
                      [ch.tool_use("Bash", {"command": FAILING, "description": "Read settings"}),
                       ch.tool_use("Bash", {"command": FIX, "description": "Read the example"}),
                       "The port is 8080."], "which port does the app use?")
    texts = [r.text() for r in second.main_requests]
    assert any(card["id"] in t for t in texts[:2])  # with the failing call's result
    assert not any("before you finish" in t for t in texts)  # covered: not asked again


@pytest.mark.parametrize("workspace", ["trusted"], indirect=True)
def test_a_skill_this_setup_lacks_comes_back_at_its_failure(claude_binary, workspace):
    """#26 with the real client: the agent asks the Skill tool for a `commit` skill the setup
    does not have, then commits with git; the next session's failing Skill call brings the
    lesson and what did its job. The client turns such a call down before it runs: no
    PreToolUse, no PostToolUseFailure, only PostToolBatch lists it, and the lesson goes back
    in that hook's additional context."""
    project, store, home = workspace.project, workspace.store, workspace.home
    for key, value in (("user.name", "E2E"), ("user.email", "e2e@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=project, check=True)
    for day, name in ((DAYS[0], "a.txt"), (DAYS[1], "b.txt")):
        (project / name).write_text("x\n")
        server = _session(claude_binary, project, home, day,
                          [ch.tool_use("Skill", {"skill": "commit"}),
                           ch.tool_use("Bash", {"command": f"git add {name} && git commit -q "
                                                           f"-m 'add {name}'",
                                                "description": "Commit"}),
                           "Committed."], f"commit {name}")
        if day == DAYS[0]:
            obs = [json.loads(line) for line in (store / "observations.jsonl").read_text()
                   .splitlines()]
            (failed,) = [o for o in obs if o["event"] == "tool_failure"]
            assert (failed["tool"], failed["args"]) == ("Skill", "commit")
            assert failed["error"].startswith("Unknown skill: commit"), failed
            ch.wait_for_learning(store, 0.0)
    texts = [r.text() for r in server.main_requests]
    assert "there is no `commit` skill in this setup" in texts[1], texts  # with the failure
    shown = [json.loads(line) for line in (store / "surfacings.jsonl").read_text().splitlines()]
    assert [s["event"] for s in shown if s["ts"].startswith(DAYS[1][:10])] == ["tool_failure"]
