"""listquery: ``list --query`` and ``review --query`` from the index, which reads only the cards
whose relevance bound can beat the k-th, give what a full read gives.

Stores of up to 40 cards of a small vocabulary, so that most cards name most query terms and many
tie; words held inside longer words ("cache" in "cacheprovider"); filters by skill and status;
few or many terms read from codes; a first read of one card per card shown; and a slack so wide
that SQL leaves many cards to the reads that decide them as ``catalog`` does.
"""
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selflearn.storage.memory import Memory, Stores
from selflearn.surfacing import listquery, reach, review

NOW = "2026-03-01T12:00:00Z"
WORDS = ("pytest", "cache", "cacheprovider", "pycache", "docker", "timeout", "read-only",
         "readonly", "ready", "checkout", "CI", "fixture", "flaky", "x", "417")
TEXT = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
CARD = st.fixed_dictionaries({
    "ts": st.sampled_from(["2026-02-27T10:00:00Z", "2026-02-28T10:00:00Z"]), "v": st.just(1),
    "title": TEXT,
    "status": st.sampled_from(["accepted", "proposed", "candidate", "retired"]),
    "primary_skill": st.sampled_from(["docker", "python-testing"]),
}, optional={"problem": TEXT, "when_to_use": TEXT, "solution_steps": st.lists(TEXT, max_size=2),
             "tags": st.lists(st.sampled_from(WORDS), max_size=2)})
QUERIES = ("pytest cache", "cache", "docker timeout", "read-only checkout CI fixture", "x 417",
           "readonly caches", "cach pytest docker timeout checkout flaky fixture x")


def _write(store_dir: str, cards: list) -> None:
    os.makedirs(store_dir, exist_ok=True)
    with open(os.path.join(store_dir, "aha_cards.jsonl"), "w", encoding="utf-8") as fh:
        for i, card in enumerate(cards):
            fh.write(json.dumps({"id": f"aha_{i}", **card}) + "\n")


def _lists(store_dir: str, query: str, skill, statuses, limit: int) -> list:
    stores = Stores(Memory(store_dir), "tester")
    return [review.list_cards(stores, query=query, skill=skill, statuses=statuses, limit=limit),
            review.review(Stores(Memory(store_dir), "tester"), query=query, skill=skill,
                          limit=limit)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cards=st.lists(CARD, min_size=1, max_size=40), query=st.sampled_from(QUERIES),
       skill=st.sampled_from([None, "docker"]),
       statuses=st.sampled_from([[], ["accepted"], ["accepted", "candidate"], ["retired"]]),
       limit=st.sampled_from([1, 2, 3, 5]), slots=st.sampled_from([0, 3, 200]),
       first=st.sampled_from([1, 4]), doubt=st.booleans())
def test_a_list_query_from_the_index_equals_the_full_read(cards, query, skill, statuses, limit,
                                                         slots, first, doubt, tmp_path_factory,
                                                         monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(reach, "MIN_DF", 1)
    monkeypatch.setattr(reach, "SHARE", 1)
    monkeypatch.setattr(reach, "SLOTS", slots)
    monkeypatch.setattr(listquery, "FIRST", first)
    if doubt:  # room enough for many cards on either side of a floor: reads decide them
        monkeypatch.setattr(listquery, "SLACK", 0.2)
    store_dir = str(tmp_path_factory.mktemp("store"))
    _write(store_dir, cards)
    monkeypatch.setenv("SELF_LEARNING_INDEX", "off")
    expected = _lists(store_dir, query, skill, statuses, limit)
    monkeypatch.setenv("SELF_LEARNING_INDEX", "on")
    assert _lists(store_dir, query, skill, statuses, limit) == expected


def _query(idf, longest: float = 10.0, avg: float = 10.0) -> listquery.Query:
    q = object.__new__(listquery.Query)
    q.idf, q.whole, q.longest, q.avg = idf, sum(idf), longest, avg
    return q


def test_sql_is_unsure_only_where_rounding_could_put_a_card_on_either_side_of_a_floor():
    assert not _query([1.0, 1.0, 1.0])._unsure()  # shares of 1/3, 2/3, 1: far from 0.3
    assert _query([0.29995, 0.70005])._unsure()  # one term's share rounds to exactly 0.3
    assert _query([1.0] * 13)._unsure()  # too many terms to try every set
    # a term in nearly every card of a large pool, in a long document, rounds to 0
    assert _query([2e-5, 1.0], longest=1000.0)._unsure()


def test_a_term_inside_a_word_one_letter_longer_counts_for_coverage(tmp_path, monkeypatch):
    """"read" inside "ready": the card answers two of five equally rare terms, enough to be
    kept; counting "checkout" alone (a fifth) would leave it out."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    cards = [{"ts": "2026-02-27T10:00:00Z", "v": 1, "title": title, "status": "accepted"}
             for title in ("ready checkout", "fixture docker", "flaky npm", "pytest lockfile")]
    _write(str(tmp_path), cards)
    query = "read checkout fixture flaky pytest"
    monkeypatch.setenv("SELF_LEARNING_INDEX", "off")
    expected = _lists(str(tmp_path), query, None, [], 5)
    assert "aha_0" in [item["id"] for item in expected[0]["items"]]
    monkeypatch.setenv("SELF_LEARNING_INDEX", "on")
    assert _lists(str(tmp_path), query, None, [], 5) == expected


def test_a_frequency_above_what_a_code_says_is_bounded_by_the_highest_one(tmp_path,
                                                                          monkeypatch):
    """"pytest" 9 times in one card, 7 in the other: both codes say 7 or more, so the bound
    of the first must be its highest frequency, or the second, read first, would hide it."""
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)
    monkeypatch.setattr(reach, "MIN_DF", 1)
    monkeypatch.setattr(reach, "SHARE", 1)
    monkeypatch.setattr(listquery, "FIRST", 1)
    card = {"ts": "2026-02-27T10:00:00Z", "v": 1, "status": "accepted"}
    _write(str(tmp_path), [{**card, "title": "pytest pytest pytest"},
                           {**card, "title": "pytest pytest", "problem": "pytest"}])
    monkeypatch.setenv("SELF_LEARNING_INDEX", "off")
    expected = _lists(str(tmp_path), "pytest", None, [], 1)
    assert [item["id"] for item in expected[0]["items"]] == ["aha_0"]
    monkeypatch.setenv("SELF_LEARNING_INDEX", "on")
    assert _lists(str(tmp_path), "pytest", None, [], 1) == expected
