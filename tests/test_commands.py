"""list, review, status commands, use, signal, repair, init, paths, INDEX.md."""
import json
import subprocess

import pytest

from selflearn.storage import store as jsonl
from selflearn.surfacing import search


def record(run, payload):
    code, out, err = run(["record", "--format", "json"], json.dumps(payload))
    assert code == 0, err
    return json.loads(out)


def js(run, *args):
    code, out, err = run([*args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


CARDS = [
    {"id": "aha_pytest", "title": "Run pytest with -p no:cacheprovider", "when_to_use": "read-only checkout",
     "tags": ["pytest"], "primary_skill": "testing", "scope": "portable"},
    {"id": "aha_camel", "title": "SessionStart hook fires twice after resume",
     "when_to_use": "duplicate context", "tags": ["hooks"], "primary_skill": "claude"},
    {"id": "aha_snake", "title": "Edit self_learning.py through the CLI module",
     "problem": "scripts/selflearn/cli.py owns argparse", "tags": ["style"]},
]


def test_empty_store_says_nothing_recorded(run):
    data = js(run, "list")
    assert data["count"] == 0 and data["items"] == []
    assert data["message"].startswith("Nothing is recorded yet.")
    code, out, _ = run(["list"])
    assert out.startswith("Nothing is recorded yet.")
    assert js(run, "review")["next_actions"][0].startswith("Nothing is recorded yet.")


@pytest.mark.parametrize("query, best", [
    ("session start", "aha_camel"),       # camelCase split
    ("self learning", "aha_snake"),       # snake_case split
    ("selflearn cli", "aha_snake"),       # path split
    ("pytest cache provider", "aha_pytest"),
])
def test_query_ranks_by_relevance(run, query, best):
    record(run, {"aha_cards": CARDS})
    items = js(run, "list", "--query", query)["items"]
    assert items[0]["id"] == best
    assert items[0]["relevance"] > 0
    assert all(items[i]["relevance"] >= items[i + 1]["relevance"] for i in range(len(items) - 1))


def test_unrelated_query_returns_nothing(run):
    record(run, {"aha_cards": CARDS})
    data = js(run, "list", "--query", "kubernetes helm chart")
    assert data["count"] == 0 and data["message"] == (
        "No card answers 'kubernetes helm chart': nothing stored is about it (no card holds "
        "enough of its rarer words).")
    # mostly answered: kept; one shared word in a question about something else: not
    data = js(run, "list", "--query", "hook fires twice on kubernetes")
    assert [i["id"] for i in data["items"]] == ["aha_camel"]
    assert js(run, "list", "--query", "kubernetes helm chart values override hook")["count"] == 0
    assert js(run, "list", "--query", "pytest", "--tag", "nosuchtag")["message"] == \
        "No card matches these filters."
    assert js(run, "list", "--query", "kubernetes helm chart", "--tag", "hooks")["message"] \
        .startswith("No card answers")  # a card has the tag: the query is what finds none


def test_ties_broken_by_score_then_recency(run):
    record(run, {"aha_cards": [{"id": "aha_a", "title": "same words"},
                               {"id": "aha_b", "title": "same words", "key": "b"}]})
    run(["use", "--aha", "aha_b"])
    assert [i["id"] for i in js(run, "list", "--query", "same words")["items"]] == ["aha_b", "aha_a"]


def test_filters_and_hidden_statuses(run):
    record(run, {"aha_cards": CARDS})
    assert [i["id"] for i in js(run, "list", "--skill", "testing")["items"]] == ["aha_pytest"]
    assert [i["id"] for i in js(run, "list", "--tag", "hooks")["items"]] == ["aha_camel"]
    run(["aha-status", "--id", "aha_camel", "--status", "rejected"])
    assert "aha_camel" not in [i["id"] for i in js(run, "list")["items"]]
    assert [i["id"] for i in js(run, "list", "--status", "rejected")["items"]] == ["aha_camel"]
    assert js(run, "list", "--limit", "1")["count"] == 1
    assert js(run, "list", "--limit", "1")["total"] == 2


def test_list_json_contract(run):
    record(run, {"aha_cards": CARDS[:1]})
    item = js(run, "list")["items"][0]
    for key in ("id", "title", "when_to_use", "primary_skill", "status", "scope", "score",
                "relevance", "score_explained", "store", "created", "versions"):
        assert key in item


def test_only_latest_version_listed(run, store):
    record(run, {"aha_cards": CARDS[:1]})
    run(["aha-status", "--id", "aha_pytest", "--status", "accepted", "--note", "worked"])
    items = js(run, "list")["items"]
    assert len(items) == 1 and items[0]["status"] == "accepted" and items[0]["versions"] == 2
    assert len(jsonl.read(str(store / "aha_cards.jsonl"))[0]) == 2


def test_score_is_explained(run):
    record(run, {"aha_cards": CARDS[:1]})
    run(["use", "--aha", "aha_pytest"])
    run(["use", "--aha", "aha_pytest"])
    run(["signal", "--kind", "aha_recalled", "--aha-id", "aha_pytest"])
    run(["aha-status", "--id", "aha_pytest", "--status", "accepted"])
    item = js(run, "list")["items"][0]
    assert item["score"] == 1 + 2 * 2 + 1 + 1
    assert item["score_explained"] == "1 base + 2×2 used + 1 recalled + 1 accepted"


@pytest.mark.parametrize("index", ["on", "off"])
def test_review_shows_the_same_few_rows_in_json_and_text_unless_limit_says(run, monkeypatch,
                                                                         index):
    """JSON no longer returns every card of each list: `--limit` (default 5, 0 = all) cuts
    each list, text and JSON alike, and `totals` counts them all."""
    monkeypatch.setenv("SELF_LEARNING_INDEX", index)
    cards = [{"id": f"aha_{i:02d}", "title": f"Lesson number {i} about the build cache",
              "scope": "portable" if i % 2 else "project"}
             for i in range(12)]
    recs = [{"id": f"rec_{i:02d}", "title": f"Recommendation {i}"} for i in range(8)]
    record(run, {"aha_cards": cards, "recommendations": recs})
    for i in range(12):
        run(["use", "--aha", f"aha_{i:02d}"])
    data = js(run, "review")
    lists = ("top_cards", "backport_candidates", "open_recommendations")
    assert [len(data[k]) for k in lists] == [5, 5, 5]
    assert [data["totals"][k] for k in lists] == [12, 6, 8]
    assert [len(js(run, "review", "--limit", "7")[k]) for k in lists] == [7, 6, 7]
    assert [len(js(run, "review", "--limit", "0")[k]) for k in lists] == [12, 6, 8]
    code, out, _ = run(["review", "--limit", "7"])
    assert sum(line.startswith("  ") and " aha_" in line for line in out.splitlines()) == 7
    assert out.splitlines()[-1].startswith(
        "More: 5 more top cards, 1 more open recommendations (raise --limit); `list")
    assert run(["review", "--limit", "-1"])[2] == \
        "self_learning: error: review: --limit must be a number 0 or more, got -1\n"


def test_review_dashboard(run, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-01T00:00:00Z")
    record(run, {"aha_cards": CARDS, "recommendations": [
        {"id": "rec_low", "title": "low one", "priority": "low"},
        {"id": "rec_high", "title": "high one", "expected_impact": {"speed": "high"}},
        {"id": "rec_done", "title": "finished", "status": "done"}]})
    run(["use", "--aha", "aha_pytest"])
    run(["rec-status", "--id", "rec_low", "--status", "in-progress"])
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-20T00:00:00Z")
    data = js(run, "review")
    assert [r["id"] for r in data["open_recommendations"]] == ["rec_high", "rec_low"]
    high, low = data["open_recommendations"]
    assert (high["stale"], high["untouched"], high["idle_days"]) == (True, True, 19.0)
    assert (low["status"], low["untouched"]) == ("in_progress", False)
    assert [c["id"] for c in data["backport_candidates"]] == ["aha_pytest"]
    assert data["top_cards"][0]["id"] == "aha_pytest"
    assert any("idle 19 days" in a for a in data["next_actions"])
    assert data["counts"]["events_in_window"] == 0 and data["counts"]["open_recommendations"] == 2
    assert js(run, "review", "--stale-days", "30")["counts"]["stale_recommendations"] == 0
    assert js(run, "review", "--since", "2025-12-01")["counts"]["card_versions_in_window"] == 3
    code, out, _ = run(["review"])
    assert code == 0 and len(out.splitlines()) <= 20 and "[high] rec_high" in out


def test_review_bad_since_is_one_line(run):
    code, out, err = run(["review", "--since", "yesterday"])
    assert (code, out) == (2, "")
    assert err == "self_learning: error: review: --since 'yesterday' is not an ISO date like 2026-01-31\n"


@pytest.mark.parametrize("args, message", [
    (["aha-status", "--id", "aha_nope", "--status", "accepted"],
     "aha-status: unknown card id 'aha_nope'; nothing was written (see `list` or `review --format json`)"),
    (["aha-status", "--id", "aha_pytest", "--status", "done"],
     "aha-status: unknown status 'done' (one of: proposed, candidate, accepted, dormant, retired, "
     "rejected, deprecated, backported)"),
    (["rec-status", "--id", "rec_x", "--status", "accepted"],
     "rec-status: unknown recommendation id 'rec_x'; nothing was written (see `list` or `review --format json`)"),
    (["use"], "use: give --aha and/or --rec ids"),
    (["use", "--aha", "aha_pytest,aha_gone"],
     "use: unknown card id 'aha_gone'; nothing was written (see `list` or `review --format json`)"),
    (["signal", "--kind", "aha_liked", "--aha-id", "aha_pytest"], "signal: unknown kind 'aha_liked' (one of: "),
    (["signal", "--kind", "aha_used", "--rec-id", "rec_x"], "signal: kind aha_used takes --aha-id (and no --rec-id)"),
    (["signal", "--kind", "rec_done", "--aha-id", "aha_pytest"], "signal: kind rec_done takes --rec-id (and no --aha-id)"),
    (["list", "--limit", "many"], "argument --limit: invalid whole number value: 'many' (see `self_learning list --help`)"),
    (["frobnicate"], "argument <command>: invalid choice: 'frobnicate'"),
])
def test_update_errors_are_one_line_and_write_nothing(run, store, args, message):
    record(run, {"aha_cards": CARDS[:1]})
    before = {p.name: p.read_bytes() for p in store.glob("*.jsonl")}
    code, out, err = run(args)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"self_learning: error: {message}")
    assert {p.name: p.read_bytes() for p in store.glob("*.jsonl")} == before


def test_rec_status_scope_and_signals(run, store):
    record(run, {"recommendations": [{"id": "rec_a", "title": "a"}]})
    code, out, _ = run(["rec-status", "--id", "rec_a", "--status", "done", "--scope", "portable"])
    assert out == "rec_a: proposed → done\n"
    rec = jsonl.fold(jsonl.read(str(store / "recommendations.jsonl"))[0])["rec_a"]
    assert (rec["status"], rec["scope"]) == ("done", "portable") and rec["last_touched_ts"]
    assert [s["kind"] for s in jsonl.read(str(store / "signals.jsonl"))[0]] == ["rec_done"]


def test_repair_quarantines_torn_lines_and_keeps_staleness(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-01T00:00:00Z")
    record(run, {"recommendations": [{"id": "rec_a", "title": "a", "tags": ["skill:deploy"]}]})
    with open(store / "recommendations.jsonl", "a") as fh:
        fh.write('{"id": "rec_a", "status": "complete"}\nnot json at all\n{"id": "rec_b", "ti')
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-02-01T00:00:00Z")
    code, out, err = run(["repair"])
    assert code == 0 and err == ""
    assert "recommendations.jsonl:3: not JSON" in out and "recommendations.jsonl:4: torn last line" in out
    assert "rec_a: primary_skill → deploy, status → done (would be set)" in out
    before = (store / "recommendations.jsonl").read_bytes()
    assert run(["repair"])[1] == out and (store / "recommendations.jsonl").read_bytes() == before
    code, out, _ = run(["repair", "--apply", "--format", "json"])
    data = json.loads(out)
    assert [(q["line"], q["quarantine"]) for q in data["quarantined"]] == [
        (3, "quarantine/recommendations.jsonl.20260201T000000Z.jsonl"),
        (4, "quarantine/recommendations.jsonl.20260201T000000Z.jsonl")]
    moved = (store / data["quarantined"][0]["quarantine"]).read_text()
    assert "not json at all" in moved and '{\\"id\\": \\"rec_b\\", \\"ti' in moved
    rec = js(run, "review")["open_recommendations"]
    assert rec == []  # done now
    folded = jsonl.fold(jsonl.read(str(store / "recommendations.jsonl"))[0])["rec_a"]
    assert folded["primary_skill"] == "deploy" and "last_touched_ts" not in folded
    assert run(["repair"])[1] == "Store is healthy: nothing to repair.\n"


def test_repair_backfills_skill_from_nearest_event(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-01T00:00:00Z")
    record(run, {"event": {"task_summary": "a", "primary_skill": "early"}})
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-05T00:00:00Z")
    record(run, {"event": {"task_summary": "b", "primary_skill": "late"}})
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-04T00:00:00Z")
    record(run, {"aha_cards": [{"id": "aha_x", "title": "x"}]})
    fixes = js(run, "repair")["fixes"]
    assert fixes == [{"file": "cards", "id": "aha_x", "set": {"primary_skill": "late"}}]


def test_init_adds_gitignore_once(run, repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    code, out, _ = run(["init"])
    assert code == 0 and "Added .agent-skills/ to" in out
    assert (repo / ".gitignore").read_text().count(".agent-skills/") == 1
    run(["init"])
    assert (repo / ".gitignore").read_text().count(".agent-skills/") == 1
    check = subprocess.run(["git", "check-ignore", "-q", ".agent-skills/self-learning/v1"], cwd=repo)
    assert check.returncode == 0


@pytest.mark.parametrize("existing, adds", [
    ("/.agent-skills\n", False), (".agent-skills/**\n", False), ("# .agent-skills/\n", True),
    ("!.agent-skills/\n", True), ("node_modules", True),
])
def test_gitignore_only_when_no_active_line(run, repo, existing, adds):
    (repo / ".gitignore").write_text(existing)
    run(["init"])
    text = (repo / ".gitignore").read_text()
    assert (text != existing) is adds
    if adds:
        assert text.startswith(existing.rstrip("\n") + "\n") and text.endswith(".agent-skills/\n")


def test_init_no_gitignore_and_global(run, repo, tmp_path):
    (repo / ".gitignore").write_text("x\n")
    run(["init", "--no-gitignore"])
    assert (repo / ".gitignore").read_text() == "x\n"
    code, out, _ = run(["init", "--global"])
    assert code == 0 and (tmp_path / "global" / "aha_cards.jsonl").exists()


def test_paths_lists_every_file(run, store, repo):
    data = js(run, "paths")
    assert data["store"] == str(store) and data["user"] == "tester"
    assert data["files"]["cards"] == str(store / "aha_cards.jsonl")
    assert data["disabled_marker"] == str(repo / ".agent-skills" / "self-learning" / "disabled")


def test_user_slug_never_an_email(monkeypatch):
    from selflearn.storage import paths
    assert paths.user_slug("Jane.Doe@Example.com") == "jane.doe"
    assert paths.user_slug("we ird/Name") == "we-ird-name"
    monkeypatch.delenv("SELF_LEARNING_USER")
    monkeypatch.setenv("USER", "bob@corp")
    assert paths.user_slug() == "bob"


def test_repo_root_resolution(tmp_path, monkeypatch):
    from selflearn.storage import paths
    monkeypatch.delenv("SELF_LEARNING_REPO_ROOT")
    (tmp_path / "r" / ".git").mkdir(parents=True)
    (tmp_path / "r" / "a" / "b").mkdir(parents=True)
    assert paths.find_repo_root(cwd=str(tmp_path / "r" / "a" / "b")) == str(tmp_path / "r")
    skill = tmp_path / "plain" / ".github" / "skills" / "self-learning-skills" / "scripts"
    skill.mkdir(parents=True)
    assert paths.find_repo_root(cwd=str(skill)) == str(tmp_path / "plain")
    assert paths.find_repo_root(cwd=str(tmp_path / "plain")) == str(tmp_path / "plain")
    assert paths.find_repo_root("~/x") .endswith("/x")


def test_index_md_is_the_golden_file(run, store, monkeypatch):
    from pathlib import Path
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-03-01T12:00:00Z")
    record(run, {"aha_cards": CARDS, "recommendations": [{"id": "rec_a", "title": "Pin | pytest"}],
                 "event": {"id": "evt_1", "task_summary": "golden"}})
    run(["use", "--aha", "aha_pytest"])
    golden = Path(__file__).parent / "data" / "INDEX.golden.md"
    text = (store / "INDEX.md").read_text()
    assert text == golden.read_text()


def test_first_record_in_a_git_repo_ignores_the_store(run, repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    record(run, {"aha_cards": [{"title": "first"}]})
    assert (repo / ".gitignore").read_text().endswith(".agent-skills/\n")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    assert ".agent-skills" not in status


@pytest.mark.parametrize("a, b", [("indexing", "index"), ("indexes", "index"), ("exports", "export"),
                                  ("exported", "export"), ("running", "run"), ("caching", "cache"),
                                  ("files", "file"), ("installed", "install"), ("policies", "policy")])
def test_word_forms_meet(a, b):
    assert search.tokenize(a) == search.tokenize(b)


def test_short_words_and_codes_are_not_stemmed():
    assert search.tokenize("uses E0425 utf8 class") == ["uses", "e0425", "0425", "utf8", "utf", "class"]


def test_a_query_finds_cards_by_another_word_form(run):
    record(run, {"aha_cards": [{"id": "aha_idx", "title": "Rebuild the search index after a schema change"},
                               {"id": "aha_exp", "title": "New functions must be listed in __all__ to be exported"}]})
    assert [i["id"] for i in js(run, "list", "--query", "indexing")["items"]] == ["aha_idx"]
    assert [i["id"] for i in js(run, "list", "--query", "exports")["items"]] == ["aha_exp"]
