"""hook injection end to end: `self_learning.py hook` as the agents run it, with real payload shapes."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selflearn.surfacing import advice
from selflearn.storage.memory import Memory
from seeding import seed_record  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
HOOKS = REPO / "tests" / "data" / "hooks"


def payload(agent: str, name: str) -> dict:
    doc = json.loads((HOOKS / agent / f"{name}.json").read_text())
    return doc.get("payload", doc)


def hook(data: dict, agent="auto", env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--agent", agent],
                          input=json.dumps(data).encode(), capture_output=True,
                          env={**os.environ, **(env or {})}, check=False)


def lines(path: Path):
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def cards(run):
    items = [{"id": "aha_build", "title": "Build needs the cache warmed",
              "solution_steps": ["run make warm before make build"], "status": "accepted"},
             {"id": "aha_deploy", "title": "Deploy script needs --dry-run first",
              "when_to_use": "add a flag to deploy.sh", "status": "accepted",
              "solution_steps": ["try the deploy with --dry-run before the real one"]},
             {"id": "aha_ci", "title": "CI build fails when the lockfile is stale",
              "when_to_use": "why does the build fail on CI", "status": "candidate",
              "origin": "mined", "confidence": 0.8, "solution_steps": ["run npm install"]}]
    code, _, err = seed_record(({"aha_cards": items}))
    assert code == 0, err
    return items


def test_claude_session_start_prints_exactly_the_workspace_advice(cards, store, repo):
    done = hook(payload("claude-real", "SessionStart"), "claude")
    assert done.returncode == 0 and done.stderr == b""
    expected = advice.advise(Memory(str(store)), str(repo))["output"]
    assert expected and done.stdout.decode() == expected
    (srf,) = lines(store / "surfacings.jsonl")
    assert (srf["event"], srf["agent"], srf["chars"]) == ("session_start", "claude", len(expected))
    assert set(srf["lesson_ids"]) == {"aha_build", "aha_deploy"}
    assert srf["id"].startswith("srf_") and srf["session_id"] == \
        payload("claude-real", "SessionStart")["session_id"]
    assert [o["event"] for o in lines(store / "observations.jsonl")] == ["session_start"]


def test_prompt_shows_only_what_this_session_was_not_shown(cards, store):
    start = payload("claude", "SessionStart")
    prompt = dict(payload("claude", "UserPromptSubmit"), prompt="add a --dry-run flag to deploy.sh")
    assert hook(start, "claude").stdout  # aha_build and aha_deploy shown
    assert hook(prompt, "claude").stdout == b""  # only aha_deploy matches: already shown
    assert b"[aha_deploy]" in hook(dict(prompt, session_id="s2"), "claude").stdout
    ci = dict(prompt, prompt="why does the build fail on CI with a stale lockfile?")
    first = hook(ci, "claude").stdout.decode()
    assert "[aha_ci]" in first and "[aha_build]" not in first
    assert hook(ci, "claude").stdout == b""  # the same prompt again: nothing new
    events = [(s["event"], s["lesson_ids"]) for s in lines(store / "surfacings.jsonl")]
    assert events[1:] == [("prompt", ["aha_deploy"]), ("prompt", ["aha_ci"])]  # s2, then ci
    other = dict(ci, session_id="another-session")
    assert "[aha_ci]" in hook(other, "claude").stdout.decode()


def test_session_start_again_resets_what_counts_as_shown(cards, store):
    start = payload("claude", "SessionStart")
    ci = dict(payload("claude", "UserPromptSubmit"), prompt="why does the build fail on CI?")
    hook(start, "claude")
    assert b"aha_ci" in hook(ci, "claude").stdout
    compact = dict(start, source="compact")
    assert b"aha_build" in hook(compact, "claude").stdout  # the context was compacted
    assert b"aha_ci" in hook(dict(ci, prompt_id="after-compact"), "claude").stdout  # a new prompt


@pytest.mark.parametrize("agent, start, prompt, start_name, prompt_name", [
    ("gemini", "SessionStart", "BeforeAgent", "SessionStart", "BeforeAgent"),
    ("codex", "SessionStart", "UserPromptSubmit", "SessionStart", "UserPromptSubmit"),
])
def test_gemini_and_codex_get_hook_specific_json(cards, agent, start, prompt, start_name,
                                                 prompt_name):
    done = hook(payload(agent, start))
    doc = json.loads(done.stdout)
    assert doc == {"hookSpecificOutput": {"hookEventName": start_name, "additionalContext":
                                          doc["hookSpecificOutput"]["additionalContext"]}}
    assert doc["hookSpecificOutput"]["additionalContext"].startswith(advice.HEADER)
    ask = dict(payload(agent, prompt), prompt="why does the build fail on CI?",
               session_id="fresh-session")
    doc = json.loads(hook(ask).stdout)
    assert doc["hookSpecificOutput"]["hookEventName"] == prompt_name
    assert "[aha_ci]" in doc["hookSpecificOutput"]["additionalContext"]


def test_cursor_gets_additional_context_at_start_and_nothing_on_prompts(cards):
    doc = json.loads(hook(payload("cursor", "sessionStart")).stdout)
    assert list(doc) == ["additional_context"] and "[aha_build]" in doc["additional_context"]
    ask = dict(payload("cursor", "beforeSubmitPrompt"), prompt="why does the build fail on CI?")
    assert hook(ask).stdout == b""


@pytest.mark.parametrize("name", ["sessionStart", "userPromptSubmitted", "SessionStart-vscode"])
def test_copilot_ignores_hook_output_so_nothing_is_printed(cards, store, name):
    done = hook(dict(payload("copilot", name), prompt="why does the build fail on CI?"),
                "copilot")
    assert (done.returncode, done.stdout) == (0, b"")
    assert not (store / "surfacings.jsonl").exists()


@pytest.mark.parametrize("agent, name", [("claude-real", "PostToolUse"),
                                         ("claude-real", "PostToolUseFailure"),
                                         ("claude-real", "Stop"), ("gemini", "AfterTool")])
def test_non_injecting_events_print_nothing(cards, agent, name):
    done = hook(payload(agent, name))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.parametrize("agent, name", [("claude-real", "SessionStart"),
                                         ("gemini", "SessionStart"), ("codex", "SessionStart"),
                                         ("cursor", "sessionStart")])
def test_budget_from_config_bounds_every_agent_output(run, repo, agent, name):
    items = [{"id": f"aha_{i:02d}", "title": f"Lesson {i} about \"quotes\"\nand lines " + "é" * 40,
              "status": "accepted"} for i in range(40)]
    assert seed_record(({"aha_cards": items}))[0] == 0
    conf = repo / ".agent-skills" / "self-learning" / "config.json"
    for budget in (420, 1000):
        conf.write_text(json.dumps({"advice": {"budget": budget}}))
        start = dict(payload(agent, name), session_id=f"session-{budget}")  # one per session
        out = hook(start).stdout.decode()
        assert 0 < len(out) <= budget


@pytest.mark.parametrize("switch", ["env", "inject-off"])
def test_switches_turn_injection_off(cards, repo, store, switch):
    env = {}
    if switch == "env":
        env["SELF_LEARNING_DISABLE"] = "1"
    else:
        (repo / ".agent-skills" / "self-learning" / "config.json").write_text(
            json.dumps({"advice": {"inject": False}}))
    before = lines(store / "observations.jsonl")
    done = hook(payload("claude-real", "SessionStart"), "claude", env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (store / "surfacings.jsonl").exists()
    observed = len(lines(store / "observations.jsonl")) - len(before)
    assert observed == (0 if switch == "env" else 1)  # inject off still observes


def test_an_error_while_advising_is_logged_and_the_agent_sees_nothing(cards, repo, store):
    (repo / ".agent-skills" / "self-learning" / "config.json").write_text("{not json")
    done = hook(payload("claude-real", "SessionStart"), "claude")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (err,) = lines(store / "errors.jsonl")
    assert err["where"] == "hook" and "config.json: not readable JSON" in err["error"]
    assert [o["event"] for o in lines(store / "observations.jsonl")] == ["session_start"]


def test_empty_store_prints_nothing(store):
    done = hook(payload("claude-real", "SessionStart"), "claude")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (store / "surfacings.jsonl").exists()


def test_non_injecting_events_import_no_advice_module(cards, store):
    probe = ("import sys, io; sys.path.insert(0, %r);"
             "sys.stdin = io.TextIOWrapper(io.BytesIO(open(%r, 'rb').read()));"
             "import self_learning;"  # the real entry point's inject
             "from selflearn.observation import hook; self_learning.hook(['--agent', 'claude']);"
             "print(sorted(m for m in sys.modules if m.split('.')[-1] in ('advice', 'surfacing',"
             "'search', 'config', 'memory', 'lifecycle', 'corrections', 'json', 're')))")
    run = lambda name: subprocess.run(  # noqa: E731
        [sys.executable, "-S", "-c", probe % (str(REPO / "scripts"),
                                              str(HOOKS / "claude-real" / f"{name}.json"))],
        capture_output=True, text=True, check=True).stdout
    assert run("PostToolUse").splitlines()[-1] == "[]"
    assert "selflearn.surfacing.advice" in run("SessionStart")  # the probe can see an injection's imports


def test_a_session_start_on_judged_lessons_imports_no_hashing_calendar_or_screen(
        cards, store, tmp_path):
    """Once the printed lessons are judged, their verdicts are found by the digest the index
    keeps: hashlib (OpenSSL, about 3 ms), calendar (and locale) and the screen stay out."""
    first = payload("claude-real", "SessionStart")
    assert b"[aha_" in hook(first, "claude").stdout  # judges what it prints, builds the index
    again = tmp_path / "again.json"
    again.write_text(json.dumps({**first, "session_id": "another-session"}))
    probe = ("import sys, io; sys.path.insert(0, %r);"
             "sys.stdin = io.TextIOWrapper(io.BytesIO(open(%r, 'rb').read()));"
             "import self_learning;"
             "from selflearn.observation import hook; self_learning.hook(['--agent', 'claude']);"
             "print(sorted(m for m in ('hashlib', 'calendar', 'locale', 'selflearn.storage.screen',"
             "'selflearn.surfacing.advice') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", probe % (str(REPO / "scripts"), str(again))],
                         capture_output=True, text=True, check=True).stdout
    assert "[aha_" in out
    assert out.splitlines()[-1] == "['selflearn.surfacing.advice']"


def test_hook_output_carries_no_raw_tool_output(run, store):
    """A mined card's evidence holds error text; only title and step reach the agent."""
    card = {"id": "aha_m", "title": "`npm test` fails with `Error: Cannot find module <X>`",
            "status": "accepted", "origin": "mined", "solution_steps": ["run `npm ci` first"],
            "evidence": ["example (npm test): `npm test` failed with: TOKEN-LIKE-RAW-OUTPUT"]}
    assert seed_record(({"aha_cards": [card]}))[0] == 0
    out = hook(payload("claude-real", "SessionStart"), "claude").stdout.decode()
    assert "[aha_m]" in out and "TOKEN-LIKE-RAW-OUTPUT" not in out
    assert "<X>" not in out and "\u2039X\u203a" in out  # placeholders cannot open a tag


def test_the_fake_clock_stamps_observations_and_surfacings_alike(cards, store):
    done = hook(payload("claude-real", "SessionStart"), "claude",
                {"SELF_LEARNING_NOW": "2026-03-05T09:00:00Z"})
    assert done.stdout
    (obs,) = lines(store / "observations.jsonl")
    (srf,) = lines(store / "surfacings.jsonl")
    assert obs["ts"] == srf["ts"] == "2026-03-05T09:00:00Z"
    assert obs["id"].startswith("obs_20260305T090000Z_")
