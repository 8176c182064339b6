"""Lifecycle rules on a fake clock: confidence gains and losses, idle decay, the promotion
bar, dormancy, retirement, revival; promote/decay write only what the rules decide.

Every expectation is computed from the constants in ``lifecycle`` (references/LIFECYCLE.md),
each tested at its boundary: one step short of it and exactly at it.
"""
import json

import pytest
from hypothesis import given, settings, strategies as st

from selflearn.learning import lifecycle as L
from selflearn.storage import model
from selflearn.storage import store as jsonl
from seeding import seed_record  # noqa: E402

T0 = 1767225600.0  # 2026-01-01T00:00:00Z
DAY = L.DAY


@pytest.fixture
def clock(monkeypatch):
    """``clock(days)`` sets SELF_LEARNING_NOW to T0 + days."""
    def _at(days):
        monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(T0 + days * DAY))
    _at(0)
    return _at


def js(run, *args):
    code, out, err = run([*args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def mined(cid, obs=L.PROMOTE_MIN_OBSERVATIONS, span=L.PROMOTE_MIN_DAYS, conf=0.65, **kw):
    """A mined candidate whose last observation is at T0 and first ``span`` days before."""
    return {"id": cid, "title": f"Lesson {cid}", "origin": "mined", "status": "candidate",
            "confidence": conf, "observations": obs, "key": f"mined:failure:{cid}",
            "first_seen": model.iso(T0 - span * DAY), "last_seen": model.iso(T0), **kw}


def seed(run, *cards):
    code, _, err = seed_record(({"aha_cards": list(cards)}))
    assert code == 0, err


def signal(run, kind, cid):
    code, _, err = run(["signal", "--kind", kind, "--aha-id", cid])
    assert code == 0, err


def statuses(run):
    return {i["id"]: i["status"] for i in js(run, "list", "--limit", "0", "--status",
                                              ",".join(model.CARD_STATUSES))["items"]}


def confidence_of(run, cid):
    (item,) = [i for i in js(run, "list", "--limit", "0", "--status",
                             ",".join(model.CARD_STATUSES))["items"] if i["id"] == cid]
    return item["confidence"]


def snapshot(store):
    return {p.name: p.read_bytes() for p in sorted(store.iterdir())
            if p.is_file() and not p.name.startswith("index.sqlite3")}  # derived cache


# --- confidence --------------------------------------------------------------------------------

def test_base_confidence_from_card_or_origin(run, clock):
    seed(run, {"id": "aha_agent", "title": "agent card"},
         {"id": "aha_human", "title": "human card", "origin": "human"},
         {"id": "aha_mined", "title": "mined card", "origin": "mined", "status": "candidate"},
         {"id": "aha_set", "title": "stated", "confidence": 0.37})
    assert confidence_of(run, "aha_agent") == L.ORIGIN_BASE["agent"]
    assert confidence_of(run, "aha_human") == L.ORIGIN_BASE["human"]
    assert confidence_of(run, "aha_mined") == L.ORIGIN_BASE["mined"]
    assert confidence_of(run, "aha_set") == 0.37
    item = [i for i in js(run, "list")["items"] if i["id"] == "aha_set"][0]
    assert item["confidence_base"] == 0.37


@pytest.mark.parametrize("kind, gain", [("aha_used", L.USE_GAIN), ("aha_helped", L.HELP_GAIN)])
def test_gains_have_diminishing_returns(run, clock, kind, gain):
    seed(run, mined("aha_g", conf=0.5))
    expected, steps = 0.5, []
    for _ in range(3):
        signal(run, kind, "aha_g")
        before, expected = expected, expected + gain * (1 - expected)
        steps.append(expected - before)
        assert confidence_of(run, "aha_g") == round(expected, 3)
    assert steps[0] > steps[1] > steps[2] > 0


def test_violation_loses_a_share(run, clock):
    seed(run, mined("aha_v", conf=0.8))
    signal(run, "aha_violated", "aha_v")
    assert confidence_of(run, "aha_v") == round(0.8 - L.VIOLATION_LOSS * 0.8, 3)
    signal(run, "aha_violated", "aha_v")
    once = 0.8 * (1 - L.VIOLATION_LOSS)
    assert confidence_of(run, "aha_v") == round(once * (1 - L.VIOLATION_LOSS), 3)


def test_decay_per_full_idle_week(run, clock):
    seed(run, mined("aha_d", conf=0.7))
    clock(6.99)
    assert confidence_of(run, "aha_d") == 0.7
    clock(7)
    assert confidence_of(run, "aha_d") == round(0.7 - L.DECAY_PER_WEEK, 3)
    clock(21)
    assert confidence_of(run, "aha_d") == round(0.7 - 3 * L.DECAY_PER_WEEK, 3)
    signal(run, "aha_used", "aha_d")  # new evidence resets the idle clock
    assert confidence_of(run, "aha_d") == round(0.7 + L.USE_GAIN * 0.3, 3)


def test_worked_example_from_the_reference(run, clock):
    """The worked example in references/LIFECYCLE.md, by its recipe."""
    seed(run, mined("aha_w", conf=0.65))
    for kind in ("aha_used", "aha_used", "aha_helped", "aha_violated"):
        signal(run, kind, "aha_w")
    clock(15)
    c = 0.65
    c += L.USE_GAIN * (1 - c)
    c += L.USE_GAIN * (1 - c)
    c += L.HELP_GAIN * (1 - c)
    c -= L.VIOLATION_LOSS * c
    assert confidence_of(run, "aha_w") == round(c - 2 * L.DECAY_PER_WEEK, 3) == 0.508


# --- promotion bar -----------------------------------------------------------------------------

def promoted(run):
    return {c["id"] for c in js(run, "promote")["changes"] if c["to"] == "accepted"}


def test_promotion_needs_enough_observations(run, clock):
    n = L.PROMOTE_MIN_OBSERVATIONS
    seed(run, mined("aha_few", obs=n - 1), mined("aha_enough", obs=n))
    data = js(run, "promote", "--dry-run")
    assert [c["id"] for c in data["changes"]] == ["aha_enough"]
    assert [(h["id"], h["reason"]) for h in data["held"]] == [
        ("aha_few", f"{n - 1} observation(s) < {n}")]
    assert promoted(run) == {"aha_enough"}
    assert statuses(run) == {"aha_few": "candidate", "aha_enough": "accepted"}


def test_promotion_needs_enough_days(run, clock):
    m = L.PROMOTE_MIN_DAYS
    seed(run, mined("aha_short", span=m - 0.5), mined("aha_long", span=m))
    data = js(run, "promote")
    assert [c["id"] for c in data["changes"]] == ["aha_long"]
    assert data["held"][0]["reason"] == f"seen over {m - 0.5:.1f} day(s) < {m}"


def test_promotion_needs_confidence(run, clock):
    floor = L.PROMOTE_MIN_CONFIDENCE
    seed(run, mined("aha_low", conf=round(floor - 0.01, 2)), mined("aha_ok", conf=floor))
    data = js(run, "promote")
    assert [c["id"] for c in data["changes"]] == ["aha_ok"]
    assert data["held"][0]["reason"] == f"confidence {round(floor - 0.01, 2)} < {floor}"


def test_promotion_waits_quiet_days_after_a_violation(run, clock):
    # high enough that one violation and the idle weeks still leave it above the floor
    seed(run, mined("aha_q", conf=0.95))
    signal(run, "aha_violated", "aha_q")
    signal(run, "aha_used", "aha_q")  # evidence after the violation keeps it from idling
    clock(L.QUIET_DAYS - 0.01)
    data = js(run, "promote")
    assert data["changes"] == []
    assert data["held"][0]["reason"] == f"violated within the last {L.QUIET_DAYS} days"
    clock(L.QUIET_DAYS)
    assert promoted(run) == {"aha_q"}


def test_promote_text_lists_moves_held_and_summary(run, clock):
    seed(run, mined("aha_yes"), mined("aha_no", obs=1))
    code, out, err = run(["promote", "--dry-run"])
    assert code == 0, err
    assert out.splitlines() == [
        "accepted aha_yes: Lesson aha_yes (met the promotion bar; confidence 0.65)",
        "stays candidate aha_no: Lesson aha_no (1 observation(s) < "
        f"{L.PROMOTE_MIN_OBSERVATIONS})",
        "promote: would make 1 accepted (2 mined lesson(s) checked); dry run: nothing written"]


# --- dormancy, retirement, revival ------------------------------------------------------------

def test_dormant_then_retired_then_nothing(run, clock, store):
    seed(run, mined("aha_idle", obs=1), {**mined("aha_acc"), "status": "accepted"})
    clock(L.DORMANT_AFTER_DAYS - 0.01)
    assert js(run, "decay")["changes"] == []
    clock(L.DORMANT_AFTER_DAYS)
    data = js(run, "decay")
    assert {(c["id"], c["from"], c["to"]) for c in data["changes"]} == {
        ("aha_idle", "candidate", "dormant"), ("aha_acc", "accepted", "dormant")}
    assert data["changes"][0]["reason"] == (
        f"no evidence for {L.DORMANT_AFTER_DAYS} days (>= {L.DORMANT_AFTER_DAYS})")
    clock(L.RETIRE_AFTER_DAYS - 0.01)
    assert js(run, "decay")["changes"] == []
    clock(L.RETIRE_AFTER_DAYS)
    assert {c["to"] for c in js(run, "decay")["changes"]} == {"retired"}
    assert statuses(run) == {"aha_idle": "retired", "aha_acc": "retired"}
    before = snapshot(store)
    clock(L.RETIRE_AFTER_DAYS * 3)
    assert js(run, "decay")["changes"] == []
    assert snapshot(store) == before


def test_retired_directly_when_idle_long_enough(run, clock):
    seed(run, mined("aha_old"))
    clock(L.RETIRE_AFTER_DAYS)
    (change,) = js(run, "decay")["changes"]
    assert (change["from"], change["to"]) == ("candidate", "retired")


def test_dormant_lesson_with_new_evidence_is_revived(run, clock):
    seed(run, mined("aha_back", obs=1))
    clock(L.DORMANT_AFTER_DAYS)
    js(run, "decay")
    clock(L.DORMANT_AFTER_DAYS + 5)
    signal(run, "aha_observed", "aha_back")
    data = js(run, "decay")
    assert [(c["from"], c["to"], c["reason"]) for c in data["changes"]] == [
        ("dormant", "candidate", "new evidence after dormancy")]
    code, out, _ = run(["decay", "--dry-run"])
    assert out.splitlines()[-1] == ("decay: no change (1 mined lesson(s) checked); "
                                    "dry run: nothing written")


def test_moves_are_versions_and_lifecycle_signals(run, clock, store):
    seed(run, mined("aha_x"))
    clock(L.DORMANT_AFTER_DAYS)
    js(run, "decay")
    versions = [c for c in jsonl.read(str(store / "aha_cards.jsonl"))[0] if c["id"] == "aha_x"]
    assert [v["status"] for v in versions] == ["candidate", "dormant"]
    assert versions[-1]["confidence"] == 0.65  # the miner's base stays
    assert versions[-1]["note"].startswith("lifecycle: no evidence for")
    assert "last_touched_ts" not in versions[-1]  # not a manual change
    (sig,) = [s for s in jsonl.read(str(store / "signals.jsonl"))[0] if s["kind"] == "aha_status"]
    assert (sig["aha_id"], sig["source"]) == ("aha_x", "lifecycle")
    assert sig["context"].startswith("candidate -> dormant: no evidence for")


def test_human_statuses_and_non_mined_cards_are_never_touched(run, clock, store):
    human = [{**mined(f"aha_{s}"), "status": s} for s in ("rejected", "deprecated", "backported",
                                                           "proposed", "retired")]
    agent = {**mined("aha_agent"), "origin": "agent"}
    seed(run, *human, agent, {**mined("aha_human"), "origin": "human"})
    before = snapshot(store)
    for day in (0, L.DORMANT_AFTER_DAYS, L.RETIRE_AFTER_DAYS):
        clock(day)
        assert js(run, "promote")["changes"] == [] and js(run, "decay")["changes"] == []
    assert snapshot(store) == before


@pytest.mark.parametrize("command", ["promote", "decay"])
def test_dry_runs_write_nothing(run, clock, store, command):
    seed(run, mined("aha_dry"))
    clock(L.DORMANT_AFTER_DAYS if command == "decay" else 0)
    before = snapshot(store)
    data = js(run, command, "--dry-run")
    assert len(data["changes"]) == 1 and data["dry_run"] and not data["wrote"]
    assert snapshot(store) == before


def test_second_run_writes_nothing(run, clock, store):
    seed(run, mined("aha_once"))
    assert len(js(run, "promote")["changes"]) == 1
    before = snapshot(store)
    assert js(run, "promote")["changes"] == []
    assert snapshot(store) == before


def test_promote_with_ids_still_copies_and_refuses_dry_run(run, clock, tmp_path):
    seed(run, mined("aha_copy"))
    assert run(["promote", "--ids", "aha_copy"])[0] == 0
    assert (tmp_path / "global" / "aha_cards.jsonl").exists()
    code, out, err = run(["promote", "--ids", "aha_copy", "--dry-run"])
    assert (code, out) == (2, "")
    assert err == ("self_learning: error: promote: --dry-run applies to lifecycle promotion "
                   "(without --ids); copying with --ids has no dry run\n")


# --- assess, the pure core ---------------------------------------------------------------------

def test_assess_without_evidence_or_dates():
    card = {"id": "aha_p", "origin": "mined", "status": "candidate", "title": "t"}
    verdict = L.assess(card, None, T0)
    assert verdict == (L.ORIGIN_BASE["mined"], "candidate",
                       f"1 observation(s) < {L.PROMOTE_MIN_OBSERVATIONS}", 0.0)
    outside = L.assess({**card, "origin": "agent"}, None, T0)
    assert outside.status == "candidate" and outside.reason.startswith("outside the lifecycle")


def test_evidence_ignores_other_signals():
    ev = L.evidence([{"kind": "aha_promoted", "aha_id": "a", "ts": "2026-01-01T00:00:00Z"},
                     {"kind": "aha_used", "aha_id": None},
                     {"kind": "aha_observed", "aha_id": "a", "ts": "2026-01-02T00:00:00Z"}])
    assert list(ev) == ["a"] and (ev["a"].used, ev["a"].last) == (0, "2026-01-02T00:00:00Z")


def test_reference_tables_state_the_constants_of_the_code():
    """Each `| `NAME` | value |` row of references/LIFECYCLE.md matches the module constant."""
    import os
    import re

    from selflearn.learning import autorun, compact, corrections, maintain
    doc = open(os.path.join(os.path.dirname(__file__), "..", "references", "LIFECYCLE.md")).read()
    rows = re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", doc, re.M)
    found = {}
    for name, value in rows:
        module = next(m for m in (L, maintain, corrections, compact, autorun) if hasattr(m, name))
        actual = getattr(module, name)
        if isinstance(actual, dict):
            stated = dict(re.findall(r"(\w+) ([\d.]+)", value))
            assert {k: float(v) for k, v in stated.items()} == actual, name
        else:
            assert float(value) == actual, name
        found[name] = actual
    assert len(found) == 19 and "QUIET_DAYS" in found and "MAX_CORRECTIONS" in found


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 9999), st.integers(1, 12), st.integers(1, 31), st.integers(0, 23),
       st.integers(0, 59), st.integers(0, 61))
def test_timestamps_parse_as_calendar_would(y, mo, d, h, mi, sec):
    import calendar
    assert model.timegm((y, mo, d, h, mi, sec)) == calendar.timegm((y, mo, d, h, mi, sec))
    stamp = "%04d-%02d-%02dT%02d:%02d:%02dZ" % (y, mo, d, h, mi, sec)
    valid = d <= calendar.monthrange(y, mo)[1] and sec <= 59
    expected = float(calendar.timegm((y, mo, d, h, mi, sec))) if valid else None
    assert model._canonical_ts(stamp[:19]) == expected
