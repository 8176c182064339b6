"""reinforce: scripted sessions after a surfacing → helped / violated counters, escalation, review lists."""
import json
import threading
import time

import pytest

from selflearn.surfacing import advice
from selflearn.storage import config, cursors, model
from selflearn.learning import lifecycle, mine_bypass, mine_failures, reinforce
from selflearn.storage import store as jsonl
from selflearn.storage.memory import Memory
from seeding import seed_record  # noqa: E402

T0 = model.parse_ts("2026-02-01T10:00:00Z")
NOW = "2026-02-02T10:00:00Z"  # a day later: every scripted session is idle by now


def failure(module="lodash"):
    return {"event": "tool_failure", "tool": "Bash", "tool_kind": "shell", "family": "npm test",
            "args": "npm test", "error": f"Error: Cannot find module '{module}'"}


DIGEST = mine_failures.recurs(failure())
OTHER = mine_failures.recurs({**failure(), "family": "make", "error": "make: *** Error 2"})


class Script:
    """Writes cards, surfacings and observations the way the hook and `mine` would."""

    def __init__(self, store):
        self.memory = Memory(str(store))
        self.n = 0

    def at(self, minutes: float) -> str:
        return model.iso(T0 + minutes * 60)

    def obs(self, session, minute, event="tool_success", **kw):
        self.n += 1
        rec = {"v": 1, "id": f"obs_{self.n:04d}", "ts": self.at(minute), "agent": "claude",
               "session_id": session, "event": event, **kw}
        jsonl.append(self.memory.path("observations"), [rec])
        return rec["id"]

    def surfaced(self, session, minute, *ids, event="session_start"):
        rec = {"v": 1, "id": f"srf_{session}_{minute}", "ts": self.at(minute),
               "session_id": session, "agent": "claude", "event": event,
               "lesson_ids": list(ids), "chars": 100}
        jsonl.append(self.memory.path("surfacings"), [rec])


@pytest.fixture
def script(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    cards = [{"id": "aha_npm", "title": "`npm test` fails with `Error: Cannot find module <X>`",
              "key": f"mined:failure:{DIGEST}", "origin": "mined", "status": "candidate",
              "confidence": 0.6, "solution_steps": ["run `npm ci` first"]},
             {"id": "aha_make", "title": "`make` fails", "key": f"mined:failure:{OTHER}",
              "origin": "mined", "status": "accepted", "confidence": 0.6},
             {"id": "aha_note", "title": "A recorded note", "status": "accepted"}]
    assert seed_record(({"aha_cards": cards}))[0] == 0
    return Script(store)


def signals(script, kind=None):
    return [s for s in script.memory.load("signals") if s["kind"] in reinforce.OUTCOMES
            and (kind is None or s["kind"] == kind)]


def test_scripted_sessions_become_helped_and_violated_signals(script, run):
    script.surfaced("recur", 0, "aha_npm", "aha_note")
    failed = script.obs("recur", 5, **failure("react"))     # the same pattern, other module
    script.obs("recur", 9, "session_end")
    script.surfaced("clean", 0, "aha_npm", "aha_make")
    script.obs("clean", 3, tool="Bash", tool_kind="shell", args="npm ci && npm test")
    script.obs("clean", 4, **{**failure(), "family": "make", "error": "make: *** Error 2"})
    script.obs("clean", 8, "session_end")
    script.surfaced("before", 30, "aha_npm")
    script.obs("before", 20, **failure())                   # recurred BEFORE it was surfaced
    script.obs("before", 31, "tool_success", tool="Read", tool_kind="read")
    script.surfaced("idle", 0, "aha_npm")
    script.obs("idle", 1, "pre_tool", tool="Read", tool_kind="read")  # asked, never ran
    script.obs("idle", 2, "session_end")
    data = reinforce.reinforce(script.memory)
    got = {(j["session_id"], j["aha_id"]): (j["outcome"], j["obs"]) for j in data["judged"]}
    assert got == {("recur", "aha_npm"): ("violated", failed),
                   ("clean", "aha_npm"): ("helped", None),
                   ("clean", "aha_make"): ("violated", "obs_0004"),
                   ("before", "aha_npm"): ("helped", None)}
    assert data["unjudged"] == 1 and data["signals_written"] == 4
    assert data["counts"]["untested"] == 1  # session "idle": no tool work, nothing at stake
    (violation,) = [s for s in signals(script, "aha_violated") if s["session_id"] == "recur"]
    assert (violation["aha_id"], violation["source"]) == ("aha_npm", "reinforce")
    assert violation["context"] == f"surfacing srf_recur_0 at {script.at(0)}; recurred as {failed}"
    again = reinforce.reinforce(script.memory)
    assert again["judged"] == [] and again["signals_written"] == 0 and len(signals(script)) == 4
    code, out, err = run(["reinforce"])
    assert code == 0 and out.startswith("judged 0 surfaced lesson(s)")


def test_live_sessions_wait_and_old_surfacings_are_dropped(script, monkeypatch):
    script.surfaced("live", 0, "aha_npm")
    script.obs("live", 1, tool="Bash", tool_kind="shell", args="ls")
    script.surfaced("quiet", 0, "aha_make")
    script.obs("quiet", 0, tool="Bash", tool_kind="shell", args="make")  # then nothing more
    monkeypatch.setenv("SELF_LEARNING_NOW", script.at(reinforce.SESSION_IDLE_MINUTES - 1))
    data = reinforce.reinforce(script.memory, dry_run=True)
    assert data["counts"] == {"helped": 0, "violated": 0, "untested": 0, "waiting": 2}
    monkeypatch.setenv("SELF_LEARNING_NOW", script.at(reinforce.SESSION_IDLE_MINUTES + 1))
    data = reinforce.reinforce(script.memory, dry_run=True)
    assert data["counts"] == {"helped": 1, "violated": 0, "untested": 0, "waiting": 1}
    assert [j["session_id"] for j in data["judged"]] == ["quiet"]
    monkeypatch.setenv("SELF_LEARNING_NOW",
                       model.iso(T0 + (reinforce.JUDGE_WITHIN_DAYS + 1) * lifecycle.DAY))
    assert reinforce.reinforce(script.memory)["judged"] == []  # too old to judge


def test_a_lesson_surfaced_twice_in_a_session_is_judged_once_from_the_first(script):
    script.surfaced("s", 0, "aha_npm")
    script.obs("s", 2, **failure())
    script.surfaced("s", 5, "aha_npm", event="prompt")
    script.obs("s", 6, "session_end")
    (j,) = reinforce.reinforce(script.memory)["judged"]
    assert (j["outcome"], j["surfacing"]) == ("violated", "srf_s_0")


def test_dry_run_writes_nothing(script, run, store):
    script.surfaced("s", 0, "aha_npm")
    script.obs("s", 1, **failure())
    script.obs("s", 2, "session_end")
    before = (store / "signals.jsonl").read_bytes() if (store / "signals.jsonl").exists() else b""
    code, out, _ = run(["reinforce", "--dry-run", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["dry_run"] and data["signals_written"] == 0
    assert [j["outcome"] for j in data["judged"]] == ["violated"]
    after = (store / "signals.jsonl").read_bytes() if (store / "signals.jsonl").exists() else b""
    assert after == before
    code, out, _ = run(["reinforce", "--dry-run"])
    assert out.splitlines()[-1] == "dry run: nothing written"
    assert "violated aha_npm in session s (obs_0001)" in out


def test_escalation_dates_the_recurrence_and_keeps_the_fix(script, run, monkeypatch):
    """The note dates when the failure came back, not when reinforce ran; a long title gives
    way before the fix does."""
    title = "`make` fails in the release pipeline when " + "the cache volume is stale " * 5
    fix = "run `make clean-cache` first, then `make release` again"
    assert seed_record({"aha_cards": [{"id": "aha_make", "title": title,
                                       "solution_steps": [fix]}]})[0] == 0
    for i in range(3):
        script.surfaced(f"bad{i}", i * 60, "aha_make")
        script.obs(f"bad{i}", i * 60 + 1, **{**failure(), "family": "make",
                                             "error": "make: *** Error 2"})
        script.obs(f"bad{i}", i * 60 + 2, "session_end")
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-02-09T10:00:00Z")  # judged a week later
    reinforce.reinforce(script.memory)
    memory = Memory(script.memory.root)
    [violated] = [s for s in memory.load("signals") if s["kind"] == "aha_violated"][-1:]
    assert violated["seen"] == script.at(121) and violated["ts"].startswith("2026-02-09")
    [item] = [i for i in advice.advise(memory, script.memory.root)["output"].splitlines()
              if "aha_make" in i]
    assert item.endswith(f": {fix} (recorded by the agent; not reviewed) (warned 3 times, "
                         "recurred anyway; last 2026-02-01)")
    assert len(item) <= advice.LINE_MAX and "`make` fails in the release pipeline" in item


def test_outcomes_move_confidence_and_escalate_advice(script, run):
    for i in range(3):
        sid = f"bad{i}"
        script.surfaced(sid, i * 60, "aha_make")
        script.obs(sid, i * 60 + 1, **{**failure(), "family": "make", "error": "make: *** Error 2"})
        script.obs(sid, i * 60 + 2, "session_end")
        good = f"good{i}"
        script.surfaced(good, i * 60, "aha_npm")
        script.obs(good, i * 60 + 1, tool="Bash", tool_kind="shell", args="npm test")
        script.obs(good, i * 60 + 2, "session_end")
    reinforce.reinforce(script.memory)
    memory = Memory(script.memory.root)
    ev = lifecycle.evidence(memory.load("signals"))
    assert (ev["aha_make"].violated, ev["aha_make"].helped) == (3, 0)
    assert (ev["aha_npm"].violated, ev["aha_npm"].helped) == (0, 3)
    cards = memory.folded("cards")
    now = model.parse_ts(NOW)
    assert lifecycle.confidence(cards["aha_npm"], ev["aha_npm"], now) > 0.6 > \
        lifecycle.confidence(cards["aha_make"], ev["aha_make"], now)
    data = advice.advise(memory, script.memory.root)
    (item,) = [i for i in data["items"] if i["id"] == "aha_make"]
    assert item["violations"] == 3
    assert "(warned 3 times, recurred anyway; last 2026-02-01)" in data["output"]
    eff = reinforce.effectiveness(memory)
    assert [r["id"] for r in eff["helped_most"]] == ["aha_npm"]
    assert [(r["id"], r["violated"], r["surfaced"]) for r in eff["keep_failing"]] == \
        [("aha_make", 3, 3)]
    assert eff["surfacings"] == 6 and eff["lessons_surfaced"] == 2
    text = reinforce.render_effectiveness(eff)
    assert text[0] == "6 surfacing(s) of 2 lesson(s)"
    assert text[-1].startswith("keeps failing: violated 3x, last ")
    code, out, _ = run(["review"])
    review = out.splitlines()
    at = review.index("Surfaced lessons:")
    assert review[at + 1:at + 3] == ["  " + line for line in text[1:]]
    assert "aha_make was surfaced and recurred 3x: rewrite it (`correct --lesson aha_make" in out
    assert "1 mined candidate(s): `promote --dry-run`" in out  # aha_npm


def test_review_lists_are_disjoint_recent_and_skip_hidden_cards(script, run):
    extra = [{"id": "aha_gone", "title": "Rejected", "status": "rejected"},
             {"id": "aha_good", "title": "Mostly helps", "status": "accepted"}]
    assert seed_record(({"aha_cards": extra}))[0] == 0
    sig = lambda kind, aid, ts: {**model.complete("signal", {  # noqa: E731
        "kind": kind, "aha_id": aid, "source": "reinforce"}), "ts": ts}
    quiet = model.iso(model.parse_ts(NOW) - (lifecycle.QUIET_DAYS + 1) * lifecycle.DAY)
    script.memory.append("signals", [
        sig("aha_violated", "aha_npm", quiet),                   # outlived: in neither list
        sig("aha_helped", "aha_npm", quiet),
        sig("aha_violated", "aha_make", "2026-01-30T00:00:00Z"),  # tie: keeps failing only
        sig("aha_helped", "aha_make", "2026-01-31T00:00:00Z"),
        sig("aha_violated", "aha_note", "2026-01-29T00:00:00Z"),
        sig("aha_violated", "aha_note", "2026-01-28T00:00:00Z"),
        sig("aha_violated", "aha_gone", "2026-02-01T00:00:00Z"),  # rejected: hidden
        sig("aha_helped", "aha_good", "2026-01-30T00:00:00Z"),
        sig("aha_helped", "aha_good", "2026-01-31T00:00:00Z"),
        sig("aha_violated", "aha_good", "2026-02-01T00:00:00Z")])
    eff = reinforce.effectiveness(Memory(script.memory.root))
    assert [r["id"] for r in eff["keep_failing"]] == ["aha_note", "aha_make"]
    assert [r["id"] for r in eff["helped_most"]] == ["aha_good"]


def record_lessons(run, lessons, *flags):
    """Mined cards ``(id, failure error or key, trigger)``; trigger None: an older card."""
    cards = []
    for aid, error, trigger in lessons:
        key = error if error.startswith("mined:") else \
            "mined:failure:" + mine_failures.recurs({**failure(), "error": error})
        cards.append({"id": aid, "title": aid, "key": key, "origin": "mined",
                      "status": "candidate", "confidence": 0.5,
                      **({"trigger": trigger} if trigger else {})})
    root = flags[flags.index("--repo-root") + 1] if "--repo-root" in flags else None
    assert seed_record({"aha_cards": cards}, root)[0] == 0


def test_helped_needs_the_session_to_touch_the_lessons_trigger(script, run):
    record_lessons(run, [("aha_t", "Error: t", "npm test"), ("aha_r", "Error: r", "Read"),
                         ("aha_e", "Error: e", "edit")])
    git = dict(tool="Bash", tool_kind="shell", family="git status", args="git status")
    script.surfaced("unrelated", 0, "aha_t", "aha_r", "aha_e", "aha_npm")
    script.obs("unrelated", 1, **git)
    script.obs("unrelated", 2, "session_end")
    script.surfaced("ran", 0, "aha_t", "aha_r", "aha_e")
    script.obs("ran", 1, **{**failure(), "error": "Error: other"})  # npm test, another error
    script.obs("ran", 2, tool="Read", tool_kind="read", args="a.py")
    script.obs("ran", 3, tool="Edit", tool_kind="edit", args="a.py")
    script.obs("ran", 4, "session_end")
    script.surfaced("before", 30, "aha_t")
    script.obs("before", 20, tool="Bash", tool_kind="shell", family="npm test", args="npm test")
    script.obs("before", 31, **git)
    data = reinforce.reinforce(script.memory)
    got = {(j["session_id"], j["aha_id"]): j["outcome"] for j in data["judged"]}
    assert got == {("unrelated", "aha_npm"): "helped",  # no trigger: any finished tool call
                   ("ran", "aha_t"): "helped", ("ran", "aha_r"): "helped",
                   ("ran", "aha_e"): "helped"}
    assert data["counts"]["untested"] == 4  # unrelated: t, r, e; before: t (touched earlier)


def test_configured_miners_judge_against_the_config_of_repo_root(run, tmp_path, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    other = tmp_path / "other-repo"  # the environment's repo (SELF_LEARNING_REPO_ROOT) has none
    rules = {"skill_bypass": [{"pattern": "^npm publish", "skill": "release"}]}
    (other / config.CONFIG).parent.mkdir(parents=True)
    (other / config.CONFIG).write_text(json.dumps(rules))
    digest = mine_bypass.rules(rules)[0].digest
    flags = ["--repo-root", str(other)]
    record_lessons(run, [("aha_pub", f"mined:bypass:{digest}", "npm publish")], *flags)
    script = Script(other / ".agent-skills" / "self-learning" / "v1" / "users" / "tester")
    script.surfaced("s", 0, "aha_pub")
    published = script.obs("s", 1, tool="Bash", tool_kind="shell", family="npm publish",
                           args="npm publish --tag next")
    script.obs("s", 2, "session_end")
    code, out, err = run(["reinforce", *flags, "--format", "json"])
    assert code == 0, err
    assert [(j["outcome"], j["obs"]) for j in json.loads(out)["judged"]] == [
        ("violated", published)]


def judge_later(runs, root, **kw):
    """Start a thread running reinforce on ``root``; its result is appended to ``runs``."""
    thread = threading.Thread(target=lambda: runs.append(
        reinforce.reinforce(Memory(root), **kw)))
    thread.start()
    return thread


def test_two_runs_at_once_write_each_outcome_once(script, monkeypatch):
    script.surfaced("s", 0, "aha_npm")
    script.obs("s", 1, **failure())
    script.obs("s", 2, "session_end")
    real, entered = reinforce.scan, []

    def slow_scan(*args):  # each run waits here for the other: only possible without a lock
        entered.append(1)
        deadline = time.monotonic() + 0.5
        while len(entered) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        return real(*args)

    monkeypatch.setattr(reinforce, "scan", slow_scan)
    runs = []
    for thread in [judge_later(runs, script.memory.root) for _ in range(2)]:
        thread.join(10)
    assert sorted(r["signals_written"] for r in runs) == [0, 1]
    assert [s["aha_id"] for s in signals(script)] == ["aha_npm"]


def test_dry_run_takes_no_lock(script):
    script.surfaced("s", 0, "aha_npm")
    script.obs("s", 1, **failure())
    runs = []
    with cursors.exclusive(script.memory.root):  # as a running `mine` would hold it
        thread = judge_later(runs, script.memory.root, dry_run=True)
        thread.join(10)
        blocked = thread.is_alive()
    thread.join()
    assert not blocked and runs[0]["counts"]["violated"] == 1


@pytest.mark.parametrize("key, expected", [
    (f"mined:failure:{DIGEST}", ("failures", DIGEST)), (f"mined:failures:{DIGEST}",
                                                        ("failures", DIGEST)),
    ("mined:unknown:abc", None), ("mined:failure:", None), ("human-key", None), (None, None)])
def test_parse_key(key, expected):
    from selflearn.learning import mine
    assert reinforce.parse_key(key, mine.MINERS) == expected


def test_no_observations_file_means_nothing_was_at_stake(script):
    script.surfaced("s", 0, "aha_npm")
    data = reinforce.reinforce(script.memory)
    assert data["judged"] == [] and data["counts"]["untested"] == 1


def test_a_recurrence_in_the_surfacings_own_second_may_precede_it():
    """Stamps have whole seconds: a failure stamped with the surfacing's second may be the one
    that led to it (a session re-prompted at once), so only a later one is a violation."""
    p = reinforce.Pending("2026-03-02T10:00:00Z", "srf_1", "failure", "d1", "cat")
    s = reinforce.Session()
    s.ended = "2026-03-02T10:05:00Z"
    s.hits.append(("2026-03-02T10:00:00Z", "obs_1", "failure", "d1", ""))
    assert reinforce.judge(p, s, "")[0] != "violated"
    s.hits.append(("2026-03-02T10:00:01Z", "obs_2", "failure", "d1", ""))
    assert reinforce.judge(p, s, "")[:2] == ("violated", "obs_2")
