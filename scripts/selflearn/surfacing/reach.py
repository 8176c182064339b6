"""How relevant a card can at most be to a query, from a few numbers the index keeps per card.

advice's relevance is BM25 of the query against a card divided by the card's BM25 for its own
title (``advice.relevance``). A prompt of common words names most cards, and reading every
such card's document to score it made the prompt hook slow. So the index keeps, per card:

- ``code0``...: how often its document holds each of the pool's common terms, ``CODE`` bits a
  term (``vocab`` gives each its slot: at most ``SLOTS`` terms, each in at least a
  ``SHARE``-th of advice's pool when given one): the term's frequency up to ``MOST``, which
  stands for ``MOST`` or more; 0 where the document lacks it. ``listquery`` ranks with them;
  here they say which terms a card holds;
- ``fmax``: its highest term frequency, which no query term can exceed;
- ``ref``: its title score, and beside it what bounds that score's drift (``refg``, the sum of
  the title terms' saturations; ``refr``, each of them over the term's document frequency plus
  0.5) as of pool version ``refver``, when the pool's average length was ``refavg``.

From these, ``sql`` bounds a card's relevance without its document: the query terms it holds
(codes, and an FTS5 sum for terms without one), each at the saturation of ``fmax``, over the
least its title score can be now. Each pool change moves the pool's size and any document
frequency by at most one, so ``d`` changes since ``refver`` lower a title term's idf by at most
``d * (1/(N-2d+1) + 1/(df+0.5))``; a smaller average length lowers each saturation at most in
proportion. Rounding and floating point are covered by ``MARGIN``.
Must not import advice, storeindex or cli.
"""

import math
from itertools import repeat
from typing import Dict, List, Sequence, Tuple

from . import search

CODE = 3                 # bits of a term's code
MOST = (1 << CODE) - 1   # the highest code (all its bits set): this frequency or more
PER_COLUMN = 20          # codes in one column (60 bits: SQLite integers are signed 64-bit)
COLUMNS = tuple(f"code{i}" for i in range(10))
SLOTS = PER_COLUMN * len(COLUMNS)  # terms with a code
_FULL = (1 << (CODE * PER_COLUMN)) - 1
_KEYED = 32              # frequencies up to this are looked up (``keyed``); more are computed
SHARE = 64         # a term earns a slot once at least 1/SHARE of advice's pool holds it...
MIN_DF = 16        # ...and at least this many cards: a code then spares reading many documents
NEW_SLOTS = 2      # slots given per catch-up (each is set through FTS5: cost ~ its cards)
REFRESH = 32       # cards whose title score is computed again per catch-up that changed the pool
MARGIN = 1e-4      # relevance is rounded to 4 places; bounds keep this much room


def average(n: int, total: float) -> float:
    """The pool's average document length, as advice's relevance reads it."""
    return (total / n) or 1.0 if n else 1.0


def idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def earns_slot(df: int, n: int) -> bool:
    return df >= max(MIN_DF, n / SHARE)


def keyed(slots: Dict[str, int]) -> Dict[Tuple[str, float], int]:
    """Each ``(term, frequency)`` of a term with a slot, up to ``_KEYED``, and the value it
    adds to the codes of a document (in one wide integer): a document's pairs are then summed
    in C (``codes_of``)."""
    return {(term, float(f)): min(f, MOST) << (CODE * slot)
            for term, slot in slots.items() for f in range(1, _KEYED + 1)}


def codes_of(doc: Dict[str, float], slots: Dict[str, int],
             pairs: Dict[Tuple[str, float], int], fmax: float) -> List[int]:
    """The ``COLUMNS`` values of a document (term -> frequency, whole numbers, the highest
    ``fmax``), where ``pairs`` is ``keyed(slots)``."""
    wide = sum(map(pairs.get, doc.items(), repeat(0)))  # each pair looked up once, in C
    if fmax > _KEYED:  # rare: a frequency too high to be looked up
        for term in slots.keys() & {t for t, f in doc.items() if f > _KEYED}:
            wide |= MOST << (CODE * slots[term])
    return [(wide >> (CODE * PER_COLUMN * i)) & _FULL for i in range(len(COLUMNS))]


def setting(slot: int) -> Tuple[str, int]:
    """The column holding ``slot``'s code, and the shift of that code in it."""
    return COLUMNS[slot // PER_COLUMN], CODE * (slot % PER_COLUMN)


def holds(slot: int, card: str = "c") -> str:
    """SQL: whether the card holds the term of ``slot`` (its code is not 0)."""
    column, shift = setting(slot)
    return f"({card}.{column} & {MOST << shift} != 0)"


def frequency(slot: int, card: str = "c") -> str:
    """SQL: the frequency of ``slot``'s term in the card, as far as its code tells (``MOST``
    stands for ``MOST`` or more)."""
    column, shift = setting(slot)
    return f"(({card}.{column} >> {shift}) & {MOST})"


def _held(term: str, slot: int, weight) -> str:
    return f"{holds(slot)} * {weight(term)!r}"


def title_reach(length: float, tdoc: Sequence[Tuple[str, float]], avg: float,
                weight) -> Tuple[float, float, float]:
    """``(ref, refg, refr)`` of a card of document length ``length`` whose title terms and their
    frequencies are ``tdoc``; ``weight(term)`` is ``(idf, 1 / (df + 0.5))`` in the pool now."""
    lift = search.K1 + 1
    norm = search.K1 * (1 - search.B + search.B * length / avg)
    ref = refg = refr = 0.0
    for term, f in tdoc:
        sat = f * lift / (f + norm)
        w, r = weight(term)
        ref += w * sat
        refg += sat
        refr += sat * r
    return ref, refg, refr


def sql(terms: List[str], slots: Dict[str, int], n: int, avg: float, version: int,
        weight) -> Tuple[str, str, list]:
    """``(join, reach, params)``: a ``LEFT JOIN`` (or "") giving ``x.s``, the idf sum of the
    query terms without a slot each card holds, and the expression of an upper bound of the
    card ``c``'s relevance (above 1 means no bound), with their parameters in order."""
    k1, b, lift = search.K1, search.B, search.K1 + 1
    held = " + ".join(_held(t, slots[t], weight) for t in terms if t in slots)
    rare = [t for t in terms if t not in slots]
    join, params = "", []
    if rare:
        join = ("LEFT JOIN (SELECT rid, sum(w) AS s FROM (" + " UNION ALL ".join(
            ["SELECT rowid AS rid, ? AS w FROM cardterms WHERE cardterms MATCH ?"] * len(rare))
            + ") GROUP BY rid) x ON x.rid = c.rid")
        for t in rare:
            params += [weight(t), f'"{t}"']  # terms are [a-z0-9]+
    said = f"(({held or '0'}) + {'coalesce(x.s, 0)' if rare else '0'}) * c.fmax * {lift!r} / " \
           f"(c.fmax + {k1!r} * (1 - {b!r} + {b!r} * c.doclen / {avg!r}))"
    drift = f"({version} - c.refver)"
    least = (f"min(1.0, {avg!r} / c.refavg) * (c.ref - {drift} * (c.refg / "
             f"({n} - 2 * {drift} + 1) + c.refr))")
    reach = (f"CASE WHEN c.fmax IS NULL OR c.ref IS NULL OR c.refavg <= 0 "
             f"OR {n} - 2 * {drift} + 1 <= 0 THEN 2.0 ELSE "
             f"coalesce({said} / nullif(max(0.0, {least}), 0.0), 2.0) END")
    return join, reach, params


def floor_test(reach: str, query_floor: float, candidate_floor: float) -> str:
    """SQL keeping the rows whose reach clears advice's relevance floor for their status."""
    return (f"{reach} >= CASE c.raw_status WHEN 'candidate' THEN {candidate_floor - MARGIN!r} "
            f"ELSE {query_floor - MARGIN!r} END")


def ceiling(reach: float) -> float:
    """The most relevance a card of this reach can have (relevance is at most 1)."""
    return min(1.0, reach + MARGIN)
