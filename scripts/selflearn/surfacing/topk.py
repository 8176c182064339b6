"""Advice's priority formula, its time-independent upper bound, and the top-k walk over it.

Owns the constants of ``priority = relevance x confidence x recency x status weight x
(1 + ESCALATION x violations)``, the rank key the derived index stores per card (log2 of an
upper bound of that priority, plus its last evidence time in half-lives: ordering by it is
ordering by the bound at any moment), when a card's confidence expires, and ``walk``: the k
best of rows read in key order, stopping once no unread row can reach the k-th. Must not
import advice, storeindex or cli.
"""

import heapq
import math
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from ..learning import lifecycle
from ..storage import model

STATUS_WEIGHT = {"accepted": 1.0, "proposed": 0.8, "candidate": 0.6}  # accepted ranks first
MIN_CONFIDENCE = 0.3       # below this a card is not surfaced (unless it was violated)
HALF_LIFE_DAYS = 30.0      # recency halves every this many days since the last evidence
ESCALATION = 0.5           # each violation multiplies priority by (1 + ESCALATION x violations)
HALF_LIFE = HALF_LIFE_DAYS * lifecycle.DAY
# Rounding: confidence is rounded to 3 places, recency to 4, priority to 6; each rounding
# may raise a value by half a unit, which the bound allows for.
CONF_SLACK, RECENCY_SLACK, PRIORITY_SLACK = 0.0005, 0.00005, 0.0000005


def recency(age: float) -> float:
    """0.5 per HALF_LIFE_DAYS since the last evidence (1 for a time in the future)."""
    return round(0.5 ** (max(0.0, age) / HALF_LIFE), 4)


def priority(relevance: float, confidence: float, recent: float, status: str,
             violations: int) -> float:
    return round(relevance * confidence * recent * STATUS_WEIGHT[status]
                 * (1 + ESCALATION * violations), 6)


def rank_key(status, base: float, ev: Optional[lifecycle.Evidence], last: str) -> Optional[float]:
    """log2(the card's highest possible confidence x weight x escalation) + its last evidence
    time in half-lives; None when no moment gives it a priority above 0 or a confidence
    advice keeps (no readable time, or below MIN_CONFIDENCE without a violation).

    ``2 ** (key - now / HALF_LIFE)`` bounds the priority at ``now`` up to the rounding of
    recency (``bound``): confidence only decays, relevance is at most 1.
    """
    weight = STATUS_WEIGHT.get(status) if isinstance(status, str) else None
    stamp = epoch(last)
    if weight is None or not stamp:
        return None
    c = lifecycle.undecayed(base, ev)
    violations = ev.violated if ev is not None else 0
    best = round(max(0.0, min(1.0, c)), 3)
    if best <= 0 or (best < MIN_CONFIDENCE and not violations):
        return None
    cap = min(1.0, c + CONF_SLACK) * weight * (1 + ESCALATION * violations)
    return math.log2(cap) + stamp / HALF_LIFE


def expiry(base: float, ev: Optional[lifecycle.Evidence], last: str) -> Optional[float]:
    """When the card's confidence falls below MIN_CONFIDENCE for good (it decays by whole weeks
    since ``last``, ``lifecycle.confidence_at``), a second late so a rounded clock never drops
    a card early; None when it never does (a violated card is kept below the floor). Advice
    skips expired cards in SQL: a store whose lessons have all gone stale reads none of them."""
    stamp = epoch(last)
    if (ev is not None and ev.violated) or not stamp:
        return None
    c, decay = lifecycle.undecayed(base, ev), lifecycle.DECAY_PER_WEEK
    weeks = max(0, int((c - MIN_CONFIDENCE) / decay) - 1)
    while round(max(0.0, min(1.0, c - decay * weeks)), 3) >= MIN_CONFIDENCE:
        weeks += 1
    return stamp + weeks * 7 * lifecycle.DAY + 1.0


_DAYS: Dict[str, float] = {}  # "YYYY-MM-DD" -> its midnight, as model.parse_ts reads it
_DIGITS = frozenset("0123456789")


def epoch(text) -> float:
    """``model.parse_ts(text)``, reading a stamp this tool writes (``YYYY-MM-DDTHH:MM:SS…``)
    with its day parsed once: a rebuild keys every card, and their days repeat."""
    head = text[:19] if isinstance(text, str) else ""
    if len(head) == 19 and head[10] == "T" and head[13] == ":" and head[16] == ":" and \
            _DIGITS.issuperset(head[11:13] + head[14:16] + head[17:19]) and \
            _DIGITS.issuperset(head[0:4] + head[5:7] + head[8:10]) and \
            head[4] == "-" and head[7] == "-":
        h, m, s = int(head[11:13]), int(head[14:16]), int(head[17:19])
        day = _DAYS.get(head[:10])
        if day is None:
            day = _DAYS[head[:10]] = model.parse_ts(head[:10] + "T00:00:00")
        if day and h <= 23 and m <= 59 and s <= 59:
            return day + h * 3600 + m * 60 + s
    return model.parse_ts(text)


def bound(key: float, now: float, slack: float) -> float:
    """The highest priority a card of rank key ``key`` can have at ``now``; ``slack`` is
    ``slack_for`` of the most escalated card (recency's rounding scales with it)."""
    # a stamp far in the future (a damaged line) must not overflow: 2 ** 64 still bounds any
    # priority (a capped confidence times recency, which a future stamp leaves at 1)
    return 2.0 ** min(key - now / HALF_LIFE, 64.0) + slack


def slack_for(violations: int) -> float:
    """What recency's and priority's rounding may add to a bound, for cards violated at
    most ``violations`` times (plus a margin for floating-point error)."""
    return RECENCY_SLACK * (1 + ESCALATION * violations) + PRIORITY_SLACK + 1e-9


def walk(rows: Iterable[tuple], key_of: Callable[[tuple], float],
         rank_of: Callable[[tuple], Optional[Tuple[float, str, object]]],
         ceiling: Callable[[float], float]) -> Iterator[object]:
    """Items best first (priority, then id) from ``rows`` read in descending ``key_of`` order:
    ``rank_of`` gives a row's ``(priority, id, item)`` or None when it does not clear the
    floors, ``ceiling`` the highest priority a row of that key can have. An item is yielded
    once the next row's ceiling is below its priority (an equal one could still win on its
    id), so a consumer that stops after k items has read only the rows that could beat them."""
    pending: List[Tuple[float, str, int, object]] = []  # a heap, best first
    for n, row in enumerate(rows):
        top = ceiling(key_of(row))
        while pending and -pending[0][0] > top:
            yield heapq.heappop(pending)[3]
        ranked = rank_of(row)
        if ranked is not None:
            heapq.heappush(pending, (-ranked[0], ranked[1], n, ranked[2]))
    while pending:
        yield heapq.heappop(pending)[3]


class Replay:
    """An iterator read lazily once and replayed from the start on every pass (``advise``
    chooses again for a smaller budget when a hook's JSON envelope does not fit)."""

    def __init__(self, items: Iterable[object]):
        self._source, self._read = iter(items), []

    def __iter__(self) -> Iterator[object]:
        i = 0
        while True:
            if i == len(self._read):
                try:
                    self._read.append(next(self._source))
                except StopIteration:
                    return
            yield self._read[i]
            i += 1
