"""#26: the Stop hook asks the agent once to write down what a recovered failure taught; a
card naming the episode comes back at that call; `distill` does the same through a provider."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from seeding import seed_payload
from selflearn.learning import episodes
from selflearn.storage.memory import Memory
from selflearn.surfacing import triggers

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
NOW = "2026-03-02T10:00:00Z"
PEP668 = ("Exit code 1\nerror: externally-managed-environment\n\nThis environment is "
          "externally managed")


def hook(payload: dict, agent: str = "claude", env=None) -> str:
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--agent", agent],
                          input=json.dumps(payload).encode(), capture_output=True, check=True,
                          env={**os.environ, "SELF_LEARNING_NOW": NOW,
                               "SELF_LEARNING_LEARN": "off", **(env or {})})
    assert done.stderr == b""
    return done.stdout.decode()


def episode(repo, sid="s1", agent="claude") -> None:
    """A session: pip3 refuses, the agent uses uv, which works."""
    base = {"session_id": sid, "tool_name": "Bash", "cwd": str(repo)}
    hook({**base, "hook_event_name": "PostToolUseFailure", "tool_use_id": f"{sid}-1",
          "tool_input": {"command": "pip3 install requests"}, "error": PEP668}, agent)
    hook({**base, "hook_event_name": "PostToolUse", "tool_use_id": f"{sid}-2",
          "tool_input": {"command": "uv pip install requests"},
          "tool_response": {"stdout": "Installed 1 package", "stderr": "", "interrupted": False}},
         agent)


def stop(repo, sid="s1", active=False, agent="claude", env=None) -> str:
    return hook({"hook_event_name": "Stop", "session_id": sid, "stop_hook_active": active,
                 "last_assistant_message": "Installed.", "cwd": str(repo)}, agent, env)


def test_the_stop_hook_asks_once_with_the_evidence(repo, store):
    episode(repo)
    out = json.loads(stop(repo))
    assert out["decision"] == "block"
    reason = out["reason"]
    assert "`pip3 install requests` failed: `error: externally-managed-environment`" in reason
    assert "worked: `uv pip install requests`" in reason
    assert "record" in reason and "nothing is worth keeping" in reason
    # (measured with the entry point as inside a repository: an absolute one is as long as
    # the checkout's own path, which differs between machines and worktrees)
    assert len(reason.replace(str(SCRIPT), "scripts/self_learning.py")) < 800
    (ask,) = [s for s in map(json.loads, (store / "surfacings.jsonl").read_text().splitlines())
              if s["event"] == "ask"]
    assert ask["chars"] == len(json.dumps(out, ensure_ascii=False)) + 1 and len(ask["episodes"]) == 1
    assert stop(repo, active=True) == ""  # the client made it go on: never while active
    assert stop(repo) == ""               # and never twice in a session


def test_nothing_is_asked_without_a_recovery_or_when_off(repo, store):
    hook({"hook_event_name": "PostToolUseFailure", "session_id": "s1", "tool_use_id": "t",
          "tool_name": "Bash", "tool_input": {"command": "pip3 install x"}, "error": PEP668,
          "cwd": str(repo)})
    assert stop(repo) == ""  # failed, never recovered: nothing learned yet
    episode(repo, "s2")
    assert stop(repo, "s2", env={"SELF_LEARNING_ASK": "off"}) == ""
    (repo / ".agent-skills" / "self-learning" / "config.json").write_text(
        json.dumps({"advice": {"ask": False}}))
    assert stop(repo, "s2") == ""


def test_not_asked_for_what_a_lesson_covers_or_the_agent_recorded(repo, store, run):
    seed_payload({"aha_cards": [{"id": "aha_uv", "title": "pip3 refuses: use uv",
                                 "status": "accepted", "solution_steps": ["use `uv pip`"],
                                 "call": {"family": "pip3 install",
                                          "error": ["externally-managed-environment"]}}]})
    triggers.refresh(Memory(str(store)), str(repo))
    episode(repo, "s1")
    assert stop(repo, "s1") == ""  # covered: the lesson came with the failure
    (store / "triggers.jsonl").unlink()
    episode(repo, "s2")
    code, _, err = run(["record"], json.dumps({"aha_cards": [{
        "title": "pip needs uv here", "solution_steps": ["uv pip install"]}]}))
    assert code == 0, err
    assert stop(repo, "s2") == ""  # the agent already wrote something down


@pytest.mark.parametrize("agent,key,value", [("codex", "decision", "block"),
                                             ("gemini", "decision", "deny"),
                                             ("cursor", "followup_message", None),
                                             ("copilot", None, None)])
def test_each_agent_is_asked_its_way(repo, store, agent, key, value):
    from selflearn.surfacing import ask
    episode(repo)
    out = ask.at_stop({"agent": agent, "event": "stop", "session_id": "s1"}, str(repo),
                      str(store))
    if key is None:
        assert out == ""
        return
    data = json.loads(out)
    assert ("episode obs_" in data[key]) if value is None else (
        data[key] == value and "episode obs_" in data["reason"])


def test_a_card_naming_its_episode_comes_back_at_that_call(repo, store, run):
    episode(repo)
    reason = json.loads(stop(repo))["reason"]
    eid = reason.split("(episode ")[1].split(")")[0]
    code, out, err = run(["record"], json.dumps({"aha_cards": [{
        "title": "pip3 install refuses: the system Python is externally managed",
        "problem": "PEP 668", "solution_steps": ["use `uv pip install <pkg>`"],
        "episode": eid}]}))
    assert code == 0, err
    card = next(iter(Memory(str(store)).folded("cards").values()))
    assert (card["origin"], card["episode"]) == ("agent", eid)
    assert card["call"]["family"] == "pip3 install" and \
        "externally-managed-environment" in card["call"]["error"]
    triggers.refresh(Memory(str(store)), str(repo))
    out = hook({"hook_event_name": "PostToolUseFailure", "session_id": "s9", "tool_use_id": "x",
                "tool_name": "Bash", "tool_input": {"command": "pip3 install flask"},
                "error": PEP668, "cwd": str(repo)})
    assert card["id"] in out and "not reviewed" in out


def test_the_finder_sees_a_failure_got_past_and_a_program_replaced():
    obs = [{"id": "o1", "event": "tool_failure", "tool_kind": "shell", "family": "mix test",
            "args": "mix test", "error": "** (RuntimeError) no :secret_key_base configuration"},
           {"id": "o2", "event": "tool_success", "tool_kind": "edit", "tool": "Edit",
            "file": "config/test.exs"},
           {"id": "o3", "event": "tool_failure", "tool_kind": "shell", "family": "mix test",
            "args": "mix test", "error": "1) test renders (SpotterWeb.LiveTest)"},
           {"id": "o4", "event": "tool_failure", "tool_kind": "shell", "family": "tree",
            "args": "tree lib -L 2", "error": "zsh: command not found: tree", "exit_code": 127},
           {"id": "o5", "event": "tool_success", "tool_kind": "shell", "family": "find",
            "args": "find lib -type d"}]
    found = episodes.find(obs)
    assert [(e["id"], e["worked_id"], e["steps"]) for e in found] == [
        ("o1", "o3", ["Edit test.exs"]), ("o4", "o5", [])]


def test_another_package_manager_running_the_same_script_is_the_same_job():
    """`pnpm test` refused by a bun project, then `bun test` (failing on for another reason):
    the first failure was got past; `yarn run build` is another script, no recovery of it."""
    obs = [{"id": "o1", "event": "tool_failure", "tool_kind": "shell", "family": "pnpm test",
            "args": "pnpm test --filter=@acme/a", "error": "ERROR This project is configured "
            "to use bun"},
           {"id": "o2", "event": "tool_failure", "tool_kind": "shell", "family": "bun test",
            "args": "bun test packages/a", "error": "error: Cannot find module '@acme/core'"},
           {"id": "o3", "event": "tool_failure", "tool_kind": "shell", "family": "yarn run build",
            "args": "yarn run build", "error": "error Command failed: missing ts-node"},
           {"id": "o4", "event": "tool_success", "tool_kind": "shell", "family": "pnpm run lint",
            "args": "pnpm run lint"}]
    assert [(e["id"], e["worked_id"]) for e in episodes.find(obs)] == [("o1", "o2")]


def test_a_failing_tests_verdict_or_a_protocol_slip_is_no_episode():
    obs = [{"id": "o1", "event": "tool_failure", "tool_kind": "shell", "family": "pytest",
            "args": "pytest", "error": "E   assert 1 == 2"},
           {"id": "o2", "event": "tool_success", "tool_kind": "shell", "family": "pytest",
            "args": "pytest"},
           {"id": "o3", "event": "tool_failure", "tool_kind": "edit", "tool": "Edit",
            "error": "String to replace not found in file"},
           {"id": "o4", "event": "tool_success", "tool_kind": "edit", "tool": "Edit"}]
    assert episodes.find(obs) == []


def provider(tmp_path, answer: str) -> str:
    script = tmp_path / "provider.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        prompt = sys.stdin.read()
        assert "externally-managed-environment" in prompt and "not instructions" in prompt
        print({answer!r})
    """))
    return f"{sys.executable} {script}"


def test_distill_writes_the_providers_lesson_as_record_would(repo, store, run, tmp_path,
                                                              monkeypatch):
    episode(repo)
    code, out, _ = run(["distill"])
    assert code == 0 and "no provider is set" in out and "pip3 install requests" in out
    monkeypatch.setenv("SELF_LEARNING_LLM_CMD", provider(tmp_path, json.dumps({"aha_cards": [{
        "title": "pip3 refuses here: externally managed Python",
        "solution_steps": ["use `uv pip install`"]}]})))
    code, out, err = run(["distill"])
    assert code == 0, err
    card = next(iter(Memory(str(store)).folded("cards").values()))
    assert (card["origin"], card["status"]) == ("agent", "proposed")
    assert card["episode"].startswith("obs_") and card["call"]["family"] == "pip3 install"
    code, out, _ = run(["distill"])
    assert "0 episode(s)" in out  # named by a card now: never asked again


@pytest.mark.parametrize("answer,why", [
    ('{"skip": "a typo"}', "skipped"),
    ("no json here", "failed"),
    ('{"aha_cards": [{"title": "x", "origin": "human"}]}', "failed")])
def test_distill_keeps_nothing_from_a_bad_or_negative_answer(repo, store, run, tmp_path,
                                                             monkeypatch, answer, why):
    episode(repo)
    monkeypatch.setenv("SELF_LEARNING_LLM_CMD", provider(tmp_path, answer))
    code, out, err = run(["distill", "--format", "json"])
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["action"] == why and Memory(str(store)).folded("cards") == {}
