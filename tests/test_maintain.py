"""maintain on a fake clock: every step in order, the rate limit, the nothing-new skip, the daily
lifecycle run, idempotence, --force, and a dry run that writes nothing (state included)."""
import json
import subprocess
import sys

import pytest

from selflearn.learning import compact, lifecycle, maintain, mine_base
from selflearn.storage import model
from selflearn.storage import store as jsonl
from selflearn.storage.memory import Memory

T0 = 1767225600.0  # 2026-01-01T00:00:00Z
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


@pytest.fixture
def clock(monkeypatch):
    """``clock(seconds)`` sets SELF_LEARNING_NOW to T0 + seconds."""
    def _at(seconds):
        monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(T0 + seconds))
    _at(0)
    return _at


def failure(n, ts, session, event="tool_failure"):
    """Observation ``n``: the npm failure (or another event) in ``session`` at epoch ``ts``."""
    obs = {"v": 1, "id": f"obs_{n}", "ts": model.iso(ts), "agent": "claude",
           "session_id": session, "event": event}
    if event == "tool_failure":
        obs.update(outcome="failure", tool="Bash", tool_kind="shell", args="npm test",
                   family="npm test", error="Error: Cannot find module 'left-pad'")
    return obs


def fixed(n, ts, session):
    """Observation ``n``: the variant that passed after the npm failure (its certain fix)."""
    return dict(failure(n, ts, session, event="tool_success"), outcome="success", tool="Bash",
                tool_kind="shell", args="npm test --ci", family="npm test")


def failures(store, sessions, start=0):
    """The same npm failure once in each session, then the variant that fixed it: a lesson
    (2 observations per session)."""
    jsonl.append(str(store / "observations.jsonl"), [
        make(start + n, T0 - 3600 + 60 * (start + n) + k, f"s{start + n}")
        for n in range(sessions) for k, make in enumerate((failure, fixed))])


def js(run, *args):
    code, out, err = run(["maintain", *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def snapshot(store):
    return {p.name: p.read_bytes() for p in sorted(store.iterdir())  # not the derived index
            if p.is_file() and not p.name.startswith("index.sqlite3")} \
        if store.exists() else {}


def cards(store):
    return jsonl.fold(jsonl.read(str(store / "aha_cards.jsonl"))[0])


def test_first_run_mines_reinforces_promotes_decays_and_saves_state(run, clock, store):
    failures(store, 2)
    code, out, err = run(["maintain"])
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "mine", "reinforce", "compact", "promote", "decay", "state"]
    assert lines[0] == "mine: 1 lesson(s) (1 created, 0 reinforced, 0 skipped) from 4 new observation(s)"
    assert lines[2] == f"compact: nothing dropped (0 bytes to drop < {compact.MIN_DROP_BYTES})"
    assert lines[3] == "promote: no change (1 mined lesson(s) checked)"
    (card,) = cards(store).values()
    assert (card["origin"], card["status"]) == ("mined", "candidate")
    state = json.loads((store / maintain.STATE_FILE).read_text())
    assert state["last_run"] == state["last_lifecycle"] == model.iso(T0)
    assert state["seen"] == maintain.seen(Memory(str(store)))
    assert state["seen"]["observations"]["size"] == (store / "observations.jsonl").stat().st_size
    assert (store / "INDEX.md").exists()


def test_nothing_new_writes_nothing_whenever_it_runs(run, clock, store):
    """No clock limit: a run a minute later does its work when there is news, and writes
    nothing when there is none (the hooks pace it by what is new)."""
    failures(store, 2)
    js(run)
    before = snapshot(store)
    clock(MINUTE)
    code, out, _ = run(["maintain"])
    due = model.iso(T0 + maintain.LIFECYCLE_EVERY_HOURS * HOUR)
    assert out == (f"maintain: skipped: nothing observed since the last run at {model.iso(T0)}; "
                   f"promote and decay are next due at {due}\n")
    assert snapshot(store) == before
    failures(store, 1, start=2)
    assert js(run)["skipped"] is None


def test_new_observations_run_mine_again(run, clock, store):
    failures(store, 2)
    js(run)
    failures(store, 1, start=2)
    clock(MINUTE)
    data = js(run)
    assert data["new_since_last_run"] and data["wrote"]
    (lesson,) = data["steps"]["mine"]["lessons"]
    assert (lesson["action"], lesson["sessions"]) == ("reinforced", 3)


def test_without_news_promote_and_decay_run_once_a_day(run, clock, store):
    failures(store, 2)
    js(run)
    clock(maintain.LIFECYCLE_EVERY_HOURS * HOUR - 1)
    assert js(run)["skipped"].startswith("nothing observed")
    clock(maintain.LIFECYCLE_EVERY_HOURS * HOUR)
    data = js(run)
    assert set(data["steps"]) == {"promote", "decay"} and not data["wrote"]
    code, out, _ = run(["maintain", "--force", "--dry-run"])
    assert out.splitlines()[-1] == "dry run: nothing written"
    clock(lifecycle.DORMANT_AFTER_DAYS * 24 * HOUR)
    code, out, _ = run(["maintain"])
    assert out.splitlines()[:3] == [
        "mine, reinforce: skipped (nothing observed since the last run)",
        "promote: no change (1 mined lesson(s) checked)",
        "decay: 1 dormant (1 mined lesson(s) checked)"]
    assert [c["status"] for c in cards(store).values()] == ["dormant"]


def test_second_run_and_forced_run_change_nothing_but_state(run, clock, store):
    failures(store, 3)
    first = js(run)
    assert first["wrote"]
    before = snapshot(store)
    clock(MINUTE)
    assert js(run)["skipped"] and snapshot(store) == before
    forced = js(run, "--force")
    assert forced["forced"] and set(forced["steps"]) == {"mine", "reinforce", "compact", "promote", "decay"}
    assert not forced["wrote"]
    after = snapshot(store)
    assert {k for k in after if after[k] != before.get(k)} == {maintain.STATE_FILE}


def test_dry_run_writes_nothing_not_even_state(run, clock, store):
    failures(store, 2)
    before = snapshot(store)
    data = js(run, "--dry-run")
    assert data["dry_run"] and not data["wrote"]
    assert [e["action"] for e in data["steps"]["mine"]["lessons"]] == ["created"]
    assert snapshot(store) == before
    assert not (store / maintain.STATE_FILE).exists()


def test_promotes_a_candidate_that_meets_the_bar(run, clock, store):
    failures(store, lifecycle.PROMOTE_MIN_OBSERVATIONS + 2)
    js(run)
    (card,) = cards(store).values()
    assert card["status"] == "candidate"  # its observations span minutes, not days
    jsonl.append(str(store / "aha_cards.jsonl"), [{
        **{k: v for k, v in card.items() if not k.startswith("_")},
        "solution_steps": ["run `npm ci` before `npm test`: it then no longer failed this way"],
        "first_seen": model.iso(model.parse_ts(card["last_seen"])
                                - lifecycle.PROMOTE_MIN_DAYS * 86400)}])
    clock(MINUTE)
    data = js(run)
    assert [c["to"] for c in data["steps"]["promote"]["changes"]] == ["accepted"]


@pytest.mark.parametrize("steps", [[], ["to see what failed: `git status --short`"]])
def test_a_failure_lesson_without_a_fix_is_never_promoted(run, clock, store, steps):
    failures(store, lifecycle.PROMOTE_MIN_OBSERVATIONS + 2)
    js(run)
    (card,) = cards(store).values()
    jsonl.append(str(store / "aha_cards.jsonl"), [{
        **{k: v for k, v in card.items() if not k.startswith("_")}, "solution_steps": steps,
        "first_seen": model.iso(model.parse_ts(card["last_seen"])
                                - lifecycle.PROMOTE_MIN_DAYS * 86400)}])
    clock(MINUTE)
    data = js(run)
    assert data["steps"]["promote"]["changes"] == []
    assert cards(store)[card["id"]]["status"] == "candidate"
    why = lifecycle.assess(cards(store)[card["id"]], None, model.now()).reason
    assert why == "no fix seen: a failure lesson without one waits for a person"


def test_no_store_yet_creates_none(run, clock, store):
    code, out, err = run(["maintain"])
    assert code == 0, err
    assert out.splitlines()[0] == "mine: no observations yet"
    assert not store.exists()


def test_reinforce_runs_between_mine_and_promote(run, clock, store):
    """A violation judged in this run holds back a candidate that would otherwise be accepted."""
    obs = str(store / "observations.jsonl")
    jsonl.append(obs, [failure(0, T0 - 3 * DAY, "s0"), fixed(4, T0 - 3 * DAY + 1, "s0"),
                       failure(1, T0 - 2 * DAY, "s1"), fixed(5, T0 - 2 * DAY + 1, "s1")])
    clock(-2 * DAY + HOUR)
    js(run)
    (card,) = cards(store).values()
    jsonl.append(str(store / "surfacings.jsonl"), [{
        "v": 1, "id": "srf_1", "ts": model.iso(T0 - DAY), "session_id": "s2", "agent": "claude",
        "event": "prompt", "lesson_ids": [card["id"]], "chars": 100}])
    jsonl.append(obs, [failure(2, T0 - DAY + 60, "s2"),
                       failure(3, T0 - DAY + 120, "s2", event="session_end")])
    clock(0)
    code, out, err = run(["maintain"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == ("mine: 1 lesson(s) (0 created, 1 reinforced, 0 skipped) from 2 new "
                        "observation(s)")
    assert lines[1].startswith("reinforce: judged 1 surfaced lesson(s): 0 helped, 1 violated")
    assert lines[3] == "promote: no change (1 mined lesson(s) checked)"
    conf = round(mine_base.confidence(3, has_fix=True) * (1 - lifecycle.VIOLATION_LOSS), 3)
    held = js(run, "--force", "--dry-run")["steps"]["promote"]["held"]
    assert [h["reason"] for h in held] == [
        f"confidence {conf} < {lifecycle.PROMOTE_MIN_CONFIDENCE}"]
    assert cards(store)[card["id"]]["status"] == "candidate"


def test_counts_add_up_with_lessons_a_person_rejected(run, clock, store):
    failures(store, 2)
    jsonl.append(str(store / "observations.jsonl"), [{
        **failure(10 + n, T0 - 1800 + n, f"m{n}"), "family": "make", "args": "make",
        "error": "make: *** [all] Error 2"} for n in range(2)] + [{
        **fixed(30 + n, T0 - 1790 + n, f"m{n}"), "family": "make", "args": "make -j1"}
        for n in range(2)])
    js(run)
    (rejected,) = [c for c in cards(store).values() if c["title"].startswith("`make`")]
    assert run(["aha-status", "--id", rejected["id"], "--status", "rejected"])[0] == 0
    failures(store, 1, start=2)
    jsonl.append(str(store / "observations.jsonl"), [{
        **failure(20, T0 - 1700, "m2"), "family": "make", "args": "make",
        "error": "make: *** [all] Error 2"}, {**fixed(21, T0 - 1690, "m2"), "family": "make",
                                              "args": "make -j1"}])
    clock(MINUTE)
    code, out, err = run(["maintain"])
    assert code == 0, err
    assert out.splitlines()[0] == ("mine: 2 lesson(s) (0 created, 1 reinforced, 1 skipped) "
                                   "from 4 new observation(s)")


HOLD = ("import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n")


def test_a_maintain_already_running_makes_another_skip(run, clock, store):
    failures(store, 2)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store / maintain.LOCK_FILE)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"  # another process is in its maintain run
        before = snapshot(store)
        code, out, err = run(["maintain"])
        assert (code, out) == (0, "maintain: another maintain is running; skipped\n"), err
        assert snapshot(store) == before
        assert js(run, "--dry-run")["steps"]["mine"]["lessons"]  # a dry run takes no lock
    finally:
        holder.communicate("")
    data = js(run)
    assert not data["skipped"] and [e["action"] for e in data["steps"]["mine"]["lessons"]] == [
        "created"]


def test_a_damaged_state_never_stops_learning(run, clock, store):
    """maintain_state.json is derived: a damaged one is read as none (a warning), not a refusal."""
    failures(store, 2)
    (store / maintain.STATE_FILE).write_text("{not json")
    code, out, err = run(["maintain", "--force"])
    assert code == 0 and err.startswith(f"self_learning: warning: {store / maintain.STATE_FILE} "
                                        "is damaged (") and "written anew" in err
    assert json.loads((store / maintain.STATE_FILE).read_text())["last_run"]
