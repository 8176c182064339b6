"""topk: the rank key bounds advice's priority at any moment, and the walk yields exactly the
order a full sort gives while reading only the rows that could still beat what it yields."""
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from selflearn.learning import lifecycle
from selflearn.storage import model
from selflearn.surfacing import topk

NOW = model.parse_ts("2026-03-01T12:00:00Z")
DAY = lifecycle.DAY


def _evidence(used: int, helped: int, violated: int, last: str):
    if not (used or helped or violated):
        return None
    ev = lifecycle.Evidence()
    ev.used, ev.helped, ev.violated, ev.last = used, helped, violated, last
    return ev


@settings(max_examples=400, deadline=None)
@given(status=st.sampled_from(["accepted", "proposed", "candidate"]), base=st.floats(0, 1),
       used=st.integers(0, 6), helped=st.integers(0, 6), violated=st.integers(0, 9),
       age=st.floats(-40 * DAY, 900 * DAY), later=st.floats(0, 400 * DAY),
       relevance=st.floats(0, 1))
def test_the_rank_key_bounds_the_priority_at_any_moment(status, base, used, helped, violated,
                                                         age, later, relevance):
    last = model.iso(NOW - age)
    ev = _evidence(used, helped, violated, last)
    key = topk.rank_key(status, base, ev, last)
    for now in (NOW, NOW + later):  # the key is written once; time moves on
        stamp = model.parse_ts(last)
        conf = lifecycle.confidence_at(base, ev, last, now, stamp)
        p = topk.priority(relevance, conf, topk.recency(now - stamp), status, violated)
        if key is None:  # never surfaced: below the confidence floor unviolated, or priority 0
            assert p == 0 or (conf < topk.MIN_CONFIDENCE and not violated)
        else:
            assert p <= topk.bound(key, now, topk.slack_for(violated))


@settings(max_examples=400, deadline=None)
@given(base=st.floats(0, 1), used=st.integers(0, 6), helped=st.integers(0, 6),
       violated=st.integers(0, 2), age=st.floats(-40 * DAY, 400 * DAY))
def test_a_card_expires_exactly_when_its_confidence_falls_below_the_floor(base, used, helped,
                                                                         violated, age):
    last = model.iso(NOW - 100 * DAY)
    ev = _evidence(used, helped, violated, last)
    expires = topk.expiry(base, ev, last)
    now = NOW - 100 * DAY + age
    below = lifecycle.confidence_at(base, ev, last, now) < topk.MIN_CONFIDENCE
    if expires is None:
        assert violated
    else:  # never before it falls below (advice would miss it), at most a second after
        assert below or now < expires
        assert not below or now >= expires or age < 0 or expires - now <= 1.0


def test_no_key_outside_the_pool_or_without_a_readable_time():
    assert topk.rank_key("dormant", 0.9, None, "2026-02-01T00:00:00Z") is None
    assert topk.rank_key(None, 0.9, None, "2026-02-01T00:00:00Z") is None
    assert topk.rank_key("accepted", 0.9, None, "not a time") is None
    assert topk.rank_key("accepted", 0.2, None, "2026-02-01T00:00:00Z") is None  # < floor
    violated = _evidence(0, 0, 1, "2026-02-01T00:00:00Z")
    assert topk.rank_key("accepted", 0.2, violated, "2026-02-01T00:00:00Z") is not None


def test_a_later_last_evidence_raises_the_key_by_its_half_lives():
    a = topk.rank_key("accepted", 0.7, None, "2026-01-01T00:00:00Z")
    b = topk.rank_key("accepted", 0.7, None, "2026-01-31T00:00:00Z")
    assert math.isclose(b - a, 1.0)


ROWS = st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3)), max_size=30)


class Counted:
    """An iterator that counts what was read from it."""

    def __init__(self, rows):
        self.rows, self.read = rows, 0

    def __iter__(self):
        for row in self.rows:
            self.read += 1
            yield row


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, k=st.integers(0, 8))
def test_the_walk_yields_the_full_sort_and_reads_only_rows_that_could_beat_the_kth(rows, k):
    """Rows ``(ceiling, shortfall)``: priority = ceiling - shortfall (ties by id); priority 0
    does not clear the floors. Rows come in descending ceiling, as the index reads them."""
    table = [(c, c - s, f"id{i:02d}") for i, (c, s) in enumerate(rows)]
    table.sort(key=lambda r: -r[0])
    expected = sorted([(p, cid) for _, p, cid in table if p > 0], key=lambda r: (-r[0], r[1]))
    source = Counted(table)
    walked = topk.walk(source, lambda r: r[0], lambda r: (r[1], r[2], (r[1], r[2])) if r[1] > 0
                       else None, float)
    got = [item for _, item in zip(range(k), walked)]
    assert got == expected[:k]
    if k and len(expected) >= k:  # it stopped at the first row whose ceiling is below the k-th
        needed = sum(1 for c, _, _ in table if c >= expected[k - 1][0])
        assert source.read <= needed + 1


def test_a_tie_waits_for_every_row_that_could_still_win_on_its_id():
    rows = [(5, 5, "b"), (5, 5, "a"), (4, 4, "c")]
    source = Counted(rows)
    walked = topk.walk(source, lambda r: r[0], lambda r: (r[1], r[2], r[2]), float)
    assert next(walked) == "a" and source.read == 3  # "b" could not go before "a" was read


def test_replay_reads_the_source_once_and_replays_it():
    source = Counted([1, 2, 3])
    replay = topk.Replay(source)
    assert next(iter(replay)) == 1 and source.read == 1
    assert list(replay) == [1, 2, 3] and list(replay) == [1, 2, 3] and source.read == 3


@settings(max_examples=500, deadline=None)
@given(stamp=st.one_of(
    st.datetimes().map(lambda d: d.isoformat(timespec="seconds") + "Z"),
    st.datetimes().map(lambda d: d.isoformat()),
    st.text(alphabet="0123456789-T:Z .", max_size=22),
    st.sampled_from(["2026-02-27", "2026-02-30T10:00:00Z", "2026-02-27T24:00:00Z",
                     "2026-02-27T10:00:60Z", " 2026-02-27T10:00:00Z", "1970-01-01T00:00:05Z",
                     "0000-01-01T00:00:00Z", "2026-02-27 10:00:00", "２０２６-02-27T10:00:00Z"])))
def test_epoch_reads_a_stamp_as_parse_ts_does(stamp):
    assert topk.epoch(stamp) == model.parse_ts(stamp)
