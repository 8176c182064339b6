"""promote: project → global store once, refusals, and how list --include-global shows origin."""
import json

from selflearn.storage import store as jsonl
from seeding import seed_record


def lines(path):
    return jsonl.read(str(path))[0] if path.exists() else []


def seed(run, *cards, repo=None):
    extra = ["--repo-root", str(repo)] if repo else []
    code, _, err = run(["record", *extra], json.dumps({"aha_cards": list(cards)}))
    assert code == 0, err


def card(cid, **kw):
    return {"id": cid, "title": f"Lesson {cid}", "scope": "portable", **kw}


def test_promote_copies_the_latest_version_once(run, store, tmp_path):
    seed(run, card("aha_one"))
    seed(run, {"id": "aha_one", "title": "Lesson one, final"})
    code, out, err = run(["promote", "--ids", "aha_one"])
    assert code == 0, err
    assert out == f"promoted aha_one: Lesson one, final\nglobal store: {tmp_path / 'global'}\n"
    (copy,) = lines(tmp_path / "global" / "aha_cards.jsonl")
    assert copy["title"] == "Lesson one, final" and copy["v"] == 1 and copy["id"] == "aha_one"
    assert not any(k.startswith("_") for k in copy)
    assert (tmp_path / "global" / "INDEX.md").exists()
    code, out, _ = run(["promote", "--ids", "aha_one"])
    assert out == (f"already promoted aha_one: Lesson one, final\nglobal store: "
                   f"{tmp_path / 'global'} (nothing copied)\n")
    assert len(lines(tmp_path / "global" / "aha_cards.jsonl")) == 1
    signals = [(s["kind"], s["aha_id"]) for s in lines(store / "signals.jsonl")]
    assert signals == [("aha_promoted", "aha_one")]
    seed(run, {"id": "aha_one", "title": "Lesson one, final", "solution_steps": ["a new step"]})
    code, out, _ = run(["promote", "--ids", "aha_one", "--format", "json"])
    assert json.loads(out)["cards"][0]["action"] == "updated"
    assert len(lines(tmp_path / "global" / "aha_cards.jsonl")) == 2
    assert len(lines(store / "signals.jsonl")) == 2


def test_promote_refuses_non_shareable_and_unknown_cards(run, store, tmp_path):
    seed(run, card("aha_ok"), card("aha_private", shareable=False))
    code, out, err = run(["promote", "--ids", "aha_ok,aha_private", "--ids", "aha_nope"])
    assert (code, out) == (2, "")
    assert err == (
        "self_learning: error: promote: card aha_private is not shareable (shareable: false), so "
        "it stays in this project\n"
        "self_learning: error: promote: unknown card id 'aha_nope' in the project store (see `list`)\n"
        "self_learning: error: promote: nothing was written\n")
    assert not (tmp_path / "global").exists()
    assert lines(store / "signals.jsonl") == []


def test_list_include_global_marks_origin_and_project_wins(run, tmp_path):
    other = tmp_path / "other-repo"
    other.mkdir()
    seed(run, card("aha_shared", title="Learned elsewhere"), repo=other)
    assert run(["promote", "--repo-root", str(other), "--ids", "aha_shared"])[0] == 0
    seed(run, card("aha_here"))

    code, out, _ = run(["list", "--format", "json"])
    assert [i["id"] for i in json.loads(out)["items"]] == ["aha_here"]
    code, out, _ = run(["list", "--include-global", "--format", "json"])
    origin = {i["id"]: (i["store"], i["title"]) for i in json.loads(out)["items"]}
    assert origin == {"aha_here": ("project", "Lesson aha_here"),
                      "aha_shared": ("global", "Learned elsewhere")}
    code, out, _ = run(["list", "--include-global"])
    assert "(global)  Learned elsewhere" in out

    seed(run, card("aha_shared", title="Our own take"))
    code, out, _ = run(["list", "--include-global", "--format", "json"])
    items = [i for i in json.loads(out)["items"] if i["id"] == "aha_shared"]
    assert [(i["store"], i["title"]) for i in items] == [("project", "Our own take")]


def test_promote_needs_ids(run):
    code, _, err = run(["promote", "--ids", " , "])
    assert (code, err) == (2, "self_learning: error: promote: give card ids with --ids a,b (see `list`)\n")


def test_promote_refuses_what_no_lifecycle_or_export_would_take(run, store, tmp_path):
    seed_record({"aha_cards": [card("aha_no", status="rejected"), card("aha_ok"),
                               card("aha_old", status="deprecated"),
                               card("aha_gone", status="retired")]})
    code, out, err = run(["promote", "--ids", "aha_no"])
    assert (code, out) == (2, "")
    assert err == ("self_learning: error: promote: card aha_no is rejected, so it stays out of "
                   "the global store (to copy it, bring it back first: `aha-status --id aha_no "
                   "--status accepted`); nothing was written\n")
    code, _, err = run(["promote", "--ids", "aha_ok,aha_old,aha_gone"])
    assert code == 2 and err.count("\n") == 3
    assert "card aha_old is deprecated" in err and "card aha_gone is retired" in err
    assert err.endswith("self_learning: error: promote: nothing was written\n")
    assert not (tmp_path / "global").exists()
    assert lines(store / "signals.jsonl") == []
    assert run(["aha-status", "--id", "aha_no", "--status", "accepted"])[0] == 0
    code, out, err = run(["promote", "--ids", "aha_no"])
    assert code == 0 and out.startswith("promoted aha_no: Lesson aha_no\n"), err
