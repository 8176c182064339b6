"""record: validation (nothing written on reject), ids, dedup/reinforce, usage signals."""
import json

import pytest

from selflearn.storage import store as jsonl


def lines(path):
    return jsonl.read(str(path))[0] if path.exists() else []


def card(**kw):
    base = {"title": "Use sh -c in the sandbox", "when_to_use": "bash -lc exits 127"}
    base.update(kw)
    return base


def test_record_fills_id_ts_status_scope_skill(run, store):
    code, out, err = run(["record", "--format", "json"], json.dumps({"aha_cards": [card()]}))
    assert code == 0, err
    data = json.loads(out)
    assert data["schema"] == 1
    (rec,) = lines(store / "aha_cards.jsonl")
    assert rec["id"] == data["aha_cards"][0]["id"] and rec["id"].startswith("aha_")
    assert rec["ts"].endswith("Z") and len(rec["ts"]) == 20
    assert (rec["status"], rec["scope"], rec["primary_skill"], rec["v"]) == \
        ("proposed", "project", "unknown", 1)
    assert (store / "INDEX.md").read_text().count("Use sh -c in the sandbox") >= 1


def test_record_from_file(run, store, tmp_path):
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"recommendations": [{"title": "Pin pytest"}],
                                   "event": {"task_summary": "fix CI"}}))
    code, out, _ = run(["record", "--json", str(payload)])
    assert code == 0
    assert "created rec_" in out and "event evt_" in out
    assert lines(store / "events.jsonl")[0]["task_summary"] == "fix CI"


@pytest.mark.parametrize("payload, message", [
    ({"aha_cards": [{"when_to_use": "x"}]}, "record: aha_cards[0].title: missing (required)"),
    ({"aha_cards": [card(scope="galaxy")]}, "record: aha_cards[0].scope: unknown value 'galaxy'"),
    ({"aha_cards": [card(tags="a,b")]}, "record: aha_cards[0].tags: must be an array of strings, got str"),
    ({"aha_cards": [card(shareable="yes")]}, "record: aha_cards[0].shareable: must be true or false, got str"),
    ({"aha_cards": [card(title="  ")]}, "record: aha_cards[0].title: is empty"),
    ({"aha_cards": ["just text"]}, "record: aha_cards[0]: must be an object, got str"),
    ({"aha_cards": {"title": "x"}}, "record: aha_cards: must be an array of objects"),
    ({"recommendations": [{"title": "t", "status": "maybe"}]},
     "record: recommendations[0].status: unknown value 'maybe'"),
    ({"recommendations": [{"title": "t", "priority": "urgent"}]},
     "record: recommendations[0].priority: unknown value 'urgent'"),
    ({"event": {"notes": "not a list"}}, "record: event.notes: must be an array of strings, got str"),
    ({"used_aha_ids": ["aha_missing"]}, "record: used_aha_ids: unknown id 'aha_missing'"),
    ({"used_rec_ids": "rec_a, rec_b"}, "record: used_rec_ids: unknown id 'rec_a'"),
    ({"used_aha_ids": 5}, "record: used_aha_ids: must be an array of ids or a comma-separated string"),
    ({"used": ["x"]}, "record: used: must be an object"),
    ({"usage_context": 3}, "record: usage_context: must be a string"),
    ({"cards": []}, "record: payload.cards: unknown key"),
    ([1, 2], "record: payload: must be a JSON object, got list"),
])
def test_invalid_payload_writes_nothing(run, store, payload, message):
    good = card(title="a valid card that must not be written either")
    if isinstance(payload, dict) and "aha_cards" not in payload:
        payload = {**payload, "aha_cards": [good]}
    code, out, err = run(["record"], json.dumps(payload))
    assert code == 2
    assert out == ""
    assert f"self_learning: error: {message}" in err
    assert err.rstrip().endswith("nothing was written (fields: references/FORMAT.md)")
    assert len(err.splitlines()) == 1 or "aha_missing" in message or "rec_a" in message
    assert "Traceback" not in err
    assert not store.exists() or not any(p.stat().st_size for p in store.glob("*.jsonl"))


def test_every_problem_is_reported_one_line_each(run):
    payload = {"aha_cards": [{"scope": "x"}, card(tags=[1])]}
    code, _, err = run(["record"], json.dumps(payload))
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("self_learning: error:")]
    assert errors == [
        "self_learning: error: record: aha_cards[0].title: missing (required)",
        "self_learning: error: record: aha_cards[0].scope: unknown value 'x' (one of: project, portable)",
        "self_learning: error: record: aha_cards[1].tags: must be an array of strings, got list",
        "self_learning: error: record: nothing was written (fields: references/FORMAT.md)",
    ]


def test_not_json_is_one_line(run, store):
    code, out, err = run(["record"], "{nope")
    assert code == 2 and out == ""
    assert err.startswith("self_learning: error: record: standard input is not valid JSON (")
    assert len(err.splitlines()) == 1
    assert not store.exists()


def test_missing_file_is_one_line(run, tmp_path):
    code, _, err = run(["record", "--json", str(tmp_path / "nope.json")])
    assert code == 2
    assert err == f"self_learning: error: record: cannot read {tmp_path / 'nope.json'}: No such file or directory\n"


def test_same_title_twice_in_one_second_gets_distinct_ids(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-01T00:00:00Z")
    payload = {"aha_cards": [card(title="t", key="one"), card(title="t", key="two")]}
    assert run(["record"], json.dumps(payload))[0] == 0
    assert run(["record"], json.dumps({"aha_cards": [card(title="t", key="three")]}))[0] == 0
    ids = [r["id"] for r in lines(store / "aha_cards.jsonl")]
    assert len(ids) == 3 and len(set(ids)) == 3


def test_equivalent_card_is_reinforced_not_duplicated(run, store):
    run(["record"], json.dumps({"aha_cards": [card(solution_steps=["sh -c"], tags=["shell"])]}))
    code, out, _ = run(["record", "--format", "json"], json.dumps({"aha_cards": [
        card(title="  USE sh -c   in the sandbox!", solution_steps=["sh -c", "avoid bash -l"],
             tags=["sandbox"])]}))
    assert code == 0
    assert json.loads(out)["aha_cards"][0]["action"] == "reinforced"
    versions = lines(store / "aha_cards.jsonl")
    assert len(versions) == 2 and versions[0]["id"] == versions[1]["id"]
    assert versions[1]["solution_steps"] == ["sh -c", "avoid bash -l"]
    assert versions[1]["tags"] == ["shell", "sandbox"]
    kinds = [s["kind"] for s in lines(store / "signals.jsonl")]
    assert kinds == ["aha_reinforced"]
    code, out, _ = run(["list", "--format", "json"])
    assert json.loads(out)["count"] == 1


def test_explicit_key_dedups_recommendations(run, store):
    run(["record"], json.dumps({"recommendations": [{"title": "Pin pytest", "key": "pin-pytest"}]}))
    run(["record"], json.dumps({"recommendations": [{"title": "Pin the test runner",
                                                     "key": "Pin-Pytest", "evidence": ["ci log"]}]}))
    recs = jsonl.fold(lines(store / "recommendations.jsonl"))
    assert len(recs) == 1
    (rec,) = recs.values()
    assert rec["title"] == "Pin pytest" and rec["evidence"] == ["ci log"]
    assert [s["kind"] for s in lines(store / "signals.jsonl")] == ["rec_reinforced"]


def test_different_skill_is_not_a_duplicate(run, store):
    run(["record"], json.dumps({"aha_cards": [card(primary_skill="a")]}))
    run(["record"], json.dumps({"aha_cards": [card(primary_skill="b")]}))
    assert len(jsonl.fold(lines(store / "aha_cards.jsonl"))) == 2


def test_explicit_existing_id_updates(run, store):
    run(["record"], json.dumps({"aha_cards": [card(id="aha_fixed")]}))
    run(["record"], json.dumps({"aha_cards": [{"id": "aha_fixed", "title": "Renamed"}]}))
    folded = jsonl.fold(lines(store / "aha_cards.jsonl"))
    assert folded["aha_fixed"]["title"] == "Renamed"
    assert folded["aha_fixed"]["when_to_use"] == "bash -lc exits 127"


@pytest.mark.parametrize("usage", [
    {"used_aha_ids": "aha_x, aha_x", "used_rec_ids": ["rec_y"]},
    {"used": {"aha_ids": ["aha_x"], "rec_ids": ["rec_y"]}},
])
def test_used_ids_become_signals(run, store, usage):
    run(["record"], json.dumps({"aha_cards": [card(id="aha_x")],
                                "recommendations": [{"id": "rec_y", "title": "r"}]}))
    payload = {**usage, "usage_source": "agent", "usage_context": "token=ghp_" + "a" * 36}
    assert run(["record"], json.dumps(payload))[0] == 0
    signals = lines(store / "signals.jsonl")
    assert [(s["kind"], s.get("aha_id") or s.get("rec_id")) for s in signals] == \
        [("aha_used", "aha_x"), ("rec_used", "rec_y")]
    assert all(s["source"] == "agent" and "ghp_" not in s["context"] for s in signals)


def test_used_ids_may_name_cards_of_the_same_payload(run, store):
    payload = {"aha_cards": [card(id="aha_new")], "used_aha_ids": ["aha_new"]}
    assert run(["record"], json.dumps(payload))[0] == 0
    assert lines(store / "signals.jsonl")[0]["aha_id"] == "aha_new"


def test_secrets_are_redacted_before_writing(run, store):
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    payload = {"aha_cards": [card(problem=f"the key {secret} leaked",
                                  evidence=["Authorization: Bearer abcdef1234567890abcdef"],
                                  input_shape={"api_key": "plain-value-123"})],
               "event": {"task_summary": "deploy", "notes": [f"used {secret}"]}}
    assert run(["record"], json.dumps(payload))[0] == 0
    raw = "".join(p.read_text() for p in store.glob("*.jsonl")) + (store / "INDEX.md").read_text()
    for leaked in (secret, "abcdef1234567890abcdef", "plain-value-123"):
        assert leaked not in raw
    assert "REDACTED" in raw


def test_status_alias_normalized_on_record(run, store):
    run(["record"], json.dumps({"recommendations": [{"title": "r", "status": "Implemented"}]}))
    assert lines(store / "recommendations.jsonl")[0]["status"] == "done"


# --- provenance: set by the tool, never by the payload -----------------------------------------

PROVENANCE = "record: provenance is set by the tool, not the payload: "


@pytest.mark.parametrize("fields, claim", [
    ({"origin": "human"}, "aha_cards[0] sets origin"),
    ({"confidence": 1}, "aha_cards[0] sets confidence"),
    ({"status": "accepted"}, "aha_cards[0] sets status 'accepted'"),
    ({"status": "candidate", "origin": "mined", "observations": 9},
     "aha_cards[0] sets origin, observations and status 'candidate'"),
    ({"screen_accepted": {"digest": "x"}}, "aha_cards[0] sets screen_accepted"),
])
def test_agent_payload_cannot_claim_provenance(run, store, fields, claim):
    code, out, err = run(["record"], json.dumps({"aha_cards": [card(), card(title="t2", **fields)]}))
    assert (code, out) == (2, "")
    assert err == ("self_learning: error: " + PROVENANCE + claim.replace("[0]", "[1]")
                   + " (cards start as 'proposed'; origin, confidence and internal fields are the "
                   "tool's; a person changes status with `aha-status` or feedback.md); nothing was "
                   "written (see references/SECURITY.md)\n")
    assert not (store / "aha_cards.jsonl").exists()


def test_agent_may_state_the_initial_status_and_recs_keep_their_statuses(run, store):
    code, _, err = run(["record"], json.dumps({"aha_cards": [card(status="proposed")],
                                              "recommendations": [{"title": "r", "status": "done"}]}))
    assert code == 0, err
    (rec,) = lines(store / "aha_cards.jsonl")
    assert (rec["status"], rec["origin"]) == ("proposed", "agent")


def test_a_recorded_change_to_an_accepted_card_goes_back_to_review(run, store):
    run(["record"], json.dumps({"aha_cards": [card(id="aha_1", solution_steps=["sh -c x"])]}))
    assert run(["aha-status", "--id", "aha_1", "--status", "accepted"])[0] == 0
    code, _, err = run(["record"], json.dumps({"aha_cards": [{"id": "aha_1", "title": "Use sh -c",
                                                              "solution_steps": ["curl x | sh"]}]}))
    assert code == 0, err
    latest = lines(store / "aha_cards.jsonl")[-1]
    assert (latest["status"], latest["origin"]) == ("proposed", "agent")
    assert latest["note"].startswith("changed by record (was accepted)")


def test_a_recorded_equal_card_keeps_its_accepted_status(run, store):
    run(["record"], json.dumps({"aha_cards": [card(id="aha_1")]}))
    run(["aha-status", "--id", "aha_1", "--status", "accepted"])
    assert run(["record"], json.dumps({"aha_cards": [card()]}))[0] == 0  # merged: nothing new
    assert lines(store / "aha_cards.jsonl")[-1]["status"] == "accepted"
