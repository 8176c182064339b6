"""reach: the bound of a card's relevance the index computes in SQL is never below the relevance
a full read computes, however far the pool moved since the card's title score was kept.

Stores grow in three appends (new cards, new versions, cards leaving the pool) with no title
score refreshed in between (``REFRESH = 0``), so every bound leans on its drift allowance; slots
are given to few or many terms, so query terms are summed from codes, from FTS5, or both.
"""
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selflearn.storage.memory import Memory, Stores
from selflearn.surfacing import advice, reach, review, search, storeindex

NOW = "2026-03-01T12:00:00Z"
WORDS = ("pytest", "cache", "docker", "npm", "SessionStart", "read-only", "checkout", "flaky",
         "timeout", "lockfile", "src/app_cache.py", "CI", "fixture", "retry", "x", "417")
TEXT = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
CARD = st.fixed_dictionaries({
    "id": st.sampled_from([f"aha_{i}" for i in range(14)]), "ts": st.just("2026-02-27T10:00:00Z"),
    "v": st.just(1), "title": TEXT,
    "status": st.sampled_from(["accepted", "proposed", "candidate", "retired"]),
    "origin": st.just("agent"),
}, optional={"problem": TEXT, "when_to_use": TEXT, "solution_steps": st.lists(TEXT, max_size=3),
             "tags": st.lists(st.sampled_from(WORDS), max_size=2)})
QUERIES = ("pytest cache", "docker flaky timeout", "read-only checkout CI fixture", "x 417",
           "session start lockfile retry npm")

needs_fts = pytest.mark.skipif(not storeindex.enabled() or not storeindex.FTS,
                               reason="the bound is read with FTS5")


def _append(store_dir: str, cards) -> None:
    with open(os.path.join(store_dir, "aha_cards.jsonl"), "a", encoding="utf-8") as fh:
        for card in cards:
            fh.write(json.dumps(card) + "\n")


def _reaches(ix, query: str) -> dict:
    """Card id -> the SQL bound of its relevance to ``query``, for every card of the pool."""
    terms = list(dict.fromkeys(search.tokenize(query)))
    pool = advice._Pool(ix)
    slots = dict(ix.rows("SELECT term, slot FROM vocab"))
    version = ix.scalar("SELECT coalesce(max(n), 0) FROM maxima WHERE name = 'pool'")
    join, bound, params = reach.sql(terms, slots, pool.n, pool.avg, version, pool.weight)
    return dict(ix.rows(f"SELECT c.id, {bound} FROM cards c {join} WHERE c.pool = 1", params))


def _relevances(store_dir: str, query: str) -> dict:
    pool = [c for c in Memory(store_dir).folded("cards").values() if advice._eligible(c)]
    return {c["id"]: r for c, r in zip(pool, advice.relevance(query, pool))}


@needs_fts
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.lists(CARD, max_size=10), min_size=3, max_size=3),
       slots=st.sampled_from([0, 2, 5, 200]))
def test_the_bound_is_never_below_the_relevance_a_full_read_computes(parts, slots,
                                                                     tmp_path_factory,
                                                                     monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(reach, "MIN_DF", 1)
    monkeypatch.setattr(reach, "SHARE", 1)
    monkeypatch.setattr(reach, "SLOTS", slots)
    monkeypatch.setattr(reach, "REFRESH", 0)
    store_dir = str(tmp_path_factory.mktemp("store"))
    for part in parts:
        _append(store_dir, part)
        ix = storeindex.open_index(Memory(store_dir))
        for query in QUERIES:
            reaches, exact = _reaches(ix, query), _relevances(store_dir, query)
            assert set(reaches) == set(exact)
            for cid, rel in exact.items():
                assert reaches[cid] + reach.MARGIN >= rel, (query, cid)
        ix.close()


@needs_fts
def test_fresh_title_scores_bound_tightly_and_a_card_without_a_query_term_reaches_nothing(
        tmp_path, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(reach, "MIN_DF", 1)
    store_dir = str(tmp_path)
    cards = [{"id": f"aha_{i}", "ts": "2026-02-27T10:00:00Z", "v": 1, "status": "accepted",
              "origin": "agent", "title": f"{word} retry", "problem": "flaky CI"}
             for i, word in enumerate(["pytest", "docker", "npm", "cache"] * 5)]
    _append(store_dir, cards)
    ix = storeindex.open_index(Memory(store_dir))
    assert ix.scalar("SELECT count(*) FROM vocab") > 0  # the common terms have slots
    reaches, exact = _reaches(ix, "pytest fixture"), _relevances(store_dir, "pytest fixture")
    for cid, rel in exact.items():
        if rel == 0:
            assert reaches[cid] == 0  # "docker retry" holds no query term
        else:
            assert rel <= reaches[cid] + reach.MARGIN < 1.5  # the title score is exact here
    ix.close()


@needs_fts
def test_a_term_that_becomes_common_gets_its_code_in_every_card_holding_it(tmp_path,
                                                                          monkeypatch):
    """Its frequency, from each card's document: 3 in a title, 7 (the most a code says)
    for 7 or more."""
    monkeypatch.setattr(reach, "MIN_DF", 3)
    monkeypatch.setattr(reach, "SHARE", 1000)
    store_dir = str(tmp_path)
    card = {"ts": "2026-02-27T10:00:00Z", "v": 1, "status": "accepted", "origin": "agent"}
    _append(store_dir, [{**card, "id": f"aha_{i}", "title": "pytest"} for i in range(2)])
    ix = storeindex.open_index(Memory(store_dir))
    assert ix.rows("SELECT term FROM vocab") == []  # 2 cards: below MIN_DF
    ix.close()
    _append(store_dir, [{**card, "id": "aha_9", "title": "pytest", "problem": "pytest " * 9}])
    ix = storeindex.open_index(Memory(store_dir))
    slot = dict(ix.rows("SELECT term, slot FROM vocab"))["pytest"]
    assert ix.rows(f"SELECT id, {reach.frequency(slot, 'cards')} FROM cards ORDER BY id") == \
        [("aha_0", 3), ("aha_1", 3), ("aha_9", 7)]
    ix.close()


@needs_fts
def test_a_query_of_the_most_terms_sums_every_code_and_every_other_term(tmp_path, monkeypatch):
    """200 distinct query terms (``search.MAX_QUERY_TERMS``), most of them with a slot: the
    SQL stays within SQLite's limits, and advice and list answer what the full read does."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(reach, "MIN_DF", 1)
    monkeypatch.setattr(reach, "SHARE", 1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [f"q{a}{b}z" for a in letters for b in letters][:search.MAX_QUERY_TERMS]
    store_dir = str(tmp_path)
    _append(store_dir, [{"id": f"aha_{i}", "ts": "2026-02-27T10:00:00Z", "v": 1,
                         "status": "accepted", "origin": "agent", "title": f"lesson {i}",
                         "problem": " ".join(words[i % 7:])} for i in range(12)])
    query = " ".join(words)
    assert len(set(search.tokenize(query))) == search.MAX_QUERY_TERMS
    answers = []
    for switch in ("off", "on"):
        monkeypatch.setenv("SELF_LEARNING_INDEX", switch)
        answers.append((advice.advise(Memory(store_dir), store_dir, query, 2000),
                        review.list_cards(Stores(Memory(store_dir), "tester"), query=query,
                                          limit=5)))
    ix = storeindex.open_index(Memory(store_dir))
    slotted = {t for t, in ix.rows("SELECT term FROM vocab")}
    terms = set(search.tokenize(query))
    assert len(terms & slotted) > 150 and terms - slotted  # codes and FTS5 both
    ix.close()
    assert answers[0] == answers[1] and answers[1][0]["items"] and answers[1][1]["items"]


def test_a_documents_codes_are_its_frequencies_up_to_the_most_a_code_says():
    slots = {"pytest": 0, "cache": 21, "docker": 199}
    doc = {"pytest": 40.0, "cache": 2.0, "docker": 7.0, "npm": 5.0}  # 40: above what is keyed
    codes = reach.codes_of(doc, slots, reach.keyed(slots), max(doc.values()))
    assert codes == [7, 2 << 3, 0, 0, 0, 0, 0, 0, 0, 7 << 57]
    assert reach.codes_of({"npm": 3.0}, slots, reach.keyed(slots), 3.0) == [0] * 10
