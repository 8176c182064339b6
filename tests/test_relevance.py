"""Which cards answer a query (``search.kept``), and the derived index giving the same answer
as a full read while reading only the cards that could be among them.

Stores of up to 40 cards of a small vocabulary, so that most cards name most query terms and
many tie; filters by skill, status and tag; FTS5 or a scan of the documents.
"""
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selflearn.storage.memory import Memory, Stores
from selflearn.surfacing import catalog, review, search, storeindex

NOW = "2026-03-01T12:00:00Z"
WORDS = ("pytest", "cache", "cacheprovider", "docker", "timeout", "read-only", "checkout", "CI",
         "fixture", "flaky", "x", "417")
TEXT = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
CARD = st.fixed_dictionaries({
    "ts": st.sampled_from(["2026-02-27T10:00:00Z", "2026-02-28T10:00:00Z"]), "v": st.just(1),
    "title": TEXT,
    "status": st.sampled_from(["accepted", "proposed", "candidate", "retired"]),
    "primary_skill": st.sampled_from(["docker", "python-testing"]),
}, optional={"problem": TEXT, "when_to_use": TEXT, "solution_steps": st.lists(TEXT, max_size=2),
             "tags": st.lists(st.sampled_from(WORDS), max_size=2)})
QUERIES = ("pytest cache", "cache", "docker timeout", "read-only checkout CI fixture", "x 417",
           "cacheprovider caches", "pytest docker timeout checkout flaky fixture x kubernetes")


def _write(store_dir: str, cards: list) -> None:
    os.makedirs(store_dir, exist_ok=True)
    with open(os.path.join(store_dir, "aha_cards.jsonl"), "a", encoding="utf-8") as fh:
        for i, card in enumerate(cards):
            fh.write(json.dumps({"id": card.get("id", f"aha_{i}"), **card}) + "\n")


def _lists(store_dir: str, query: str, skill, statuses, limit: int, tag=None) -> list:
    stores = Stores(Memory(store_dir), "tester")
    return [review.list_cards(stores, query=query, skill=skill, statuses=statuses, limit=limit,
                              tag=tag),
            review.review(Stores(Memory(store_dir), "tester"), query=query, skill=skill,
                          limit=limit)]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cards=st.lists(CARD, min_size=1, max_size=40), query=st.sampled_from(QUERIES),
       skill=st.sampled_from([None, "docker"]),
       statuses=st.sampled_from([[], ["accepted"], ["accepted", "candidate"], ["retired"]]),
       limit=st.sampled_from([1, 2, 5]), tag=st.sampled_from([None, "pytest"]),
       fts=st.booleans())
def test_a_list_query_from_the_index_equals_the_full_read(cards, query, skill, statuses, limit,
                                                         tag, fts, tmp_path_factory,
                                                         monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(storeindex, "FTS", fts)
    store_dir = str(tmp_path_factory.mktemp("store"))
    _write(store_dir, cards)
    monkeypatch.setenv("SELF_LEARNING_INDEX", "off")
    expected = _lists(store_dir, query, skill, statuses, limit, tag)
    monkeypatch.setenv("SELF_LEARNING_INDEX", "on")
    assert _lists(store_dir, query, skill, statuses, limit, tag) == expected


def _card(cid: str, title: str, **extra) -> dict:
    return {"id": cid, "ts": "2026-02-27T10:00:00Z", "v": 1, "title": title,
            "status": "accepted", **extra}


def _ids(store_dir: str, query: str) -> list:
    return [item["id"] for item in _lists(store_dir, query, None, [], 20)[0]["items"]]


def test_a_pasted_error_finds_its_lesson_among_many_words_no_card_holds(tmp_path, monkeypatch):
    """An error as a failing tool prints it: paths, numbers, a stack frame. The lesson shares
    a few rare words with it (the program, the error's name); a card sharing only common ones
    stays out, and so does everything for a question about something else."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    _write(str(tmp_path), [
        _card("aha_enoent", "`npm run build` fails with ENOENT on a missing .env file",
              solution_steps=["copy .env.example to .env"], tags=["npm", "build"]),
        _card("aha_test", "npm test fails after a branch switch",
              solution_steps=["run npm ci"], tags=["npm", "test"]),
        _card("aha_docker", "docker build is slow", tags=["docker"]),
        _card("aha_port", "dev server port 3000 is in use", tags=["node"])])
    error = ("Exit code 1\n> app@2.3.1 build /home/user/work/app\n> node scripts/build.mjs\n"
             "Error: ENOENT: no such file or directory, open '/home/user/work/app/.env'\n"
             "    at Object.openSync (node:fs:603:3)\n    at readEnv (scripts/env.mjs:14:21)\n"
             "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! app@2.3.1 build: failed")
    for switch in ("off", "on"):
        monkeypatch.setenv("SELF_LEARNING_INDEX", switch)
        assert _ids(str(tmp_path), error) == ["aha_enoent"]
        assert _ids(str(tmp_path), "how many vacation days do I have left") == []


def test_a_small_store_still_answers_a_word_most_of_its_cards_hold(tmp_path, monkeypatch):
    """Two of three cards say "pytest": the word tells them apart from what a store usually
    holds (``search.PRIOR``), and both answer; the other card does not."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    _write(str(tmp_path), [_card("aha_1", "pytest cache"), _card("aha_2", "docker"),
                           _card("aha_3", "pytest again")])
    for switch in ("off", "on"):
        monkeypatch.setenv("SELF_LEARNING_INDEX", switch)
        assert sorted(_ids(str(tmp_path), "pytest")) == ["aha_1", "aha_3"]


def test_only_cards_within_the_relative_floor_of_the_best_answer():
    views = [dict(_card(f"aha_{i}", title), score=0) for i, title in enumerate(
        ["pytest fixture scope", "pytest fixture", "pytest", "docker"])]
    ranked = catalog.rank(views, "pytest fixture scope")
    best = ranked[0]["relevance"]
    assert [v["id"] for v in ranked][0] == "aha_0"
    assert all(v["relevance"] >= search.RELATIVE * best for v in ranked)
    assert "aha_2" not in [v["id"] for v in ranked] and "aha_3" not in [v["id"] for v in ranked]


def test_needed_terms_are_those_the_weaker_ones_cannot_replace():
    weights = [3.0, 0.2, 1.0, 0.1]  # most: 6.6, 0.44, 2.2, 0.22
    assert search.needed(weights, 0.7) == [0, 2]  # 0.22 + 0.44 < 0.7: those two alone never
    assert search.needed(weights, 0.5) == [0, 1, 2]  # 0.22 + 0.44 would
    assert search.needed(weights, 0.1) == [0, 1, 2, 3]
    assert search.needed(weights, 100.0) == []  # nothing reaches it


def test_a_query_of_words_most_cards_hold_reads_no_document(tmp_path, monkeypatch):
    """Even all its terms together could not lift a card to the floor: nothing answers, and
    the index knows it from the term counts alone."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    _write(str(tmp_path), [_card(f"aha_{i}", f"pytest cache docker run {i}") for i in range(60)])
    ix = storeindex.open_index(Memory(str(tmp_path)))
    try:
        def refuse(*args, **kwargs):
            raise AssertionError("read documents")
        monkeypatch.setattr(ix, "naming", refuse)
        assert ix.scored(["pytest", "cach", "docker", "run"], "c.id", "FROM cards c", "1") \
            == ([], 60)
    finally:
        ix.close()
    assert _ids(str(tmp_path), "pytest cache docker run") == []
    assert _ids(str(tmp_path), "pytest cache docker run 17") == ["aha_17"]
