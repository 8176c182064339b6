"""``list --query`` and ``review --query`` from the derived index, without reading every card
that names a query term.

``catalog.rank`` keeps a card when it covers ``COVERAGE_FLOOR`` of the query (the idf of the
terms it holds, as a word or inside a longer one, over the idf of all of them) and its BM25
relevance, rounded to 4 places, is above 0; it ranks the kept cards by relevance, score, time.
A query of common words names most cards, and reading each one's document made it slow. Here
SQLite decides coverage over a covering index of the listed cards (``cards_listed``), from the
codes of common terms (``reach.COLUMNS``) and FTS5 for the rest, "inside a longer word" being
"holding a longer word of the listed cards' vocabulary that contains it", and counts the kept
cards. It bounds each one's relevance twice: cheaply, every term it holds at its highest
frequency (``fmax``), and tightly, each common term at the frequency its code gives. The best
by the tight bound of every ``SAMPLE``-th card are read first: the k-th relevance among them is
a floor no card of a lower bound can reach, and only the cards whose bounds reach it are read.
Where rounding could put a card on either side of a floor, SQLite leaves it to a read, which
decides it as ``catalog`` does.
Must not import catalog, review, advice or cli.
"""

import heapq
from itertools import combinations
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from . import reach, search, storeindex

COVERAGE_FLOOR = 0.3  # catalog's: a card must answer this share of the query (idf-weighted)
ROUNDED = 0.00005     # a value below a floor by less than this still rounds up to it (4 places)
SLACK = 1e-9          # floating point: SQL sums in another order than Python
FIRST = 4             # the first read is this many times the cards asked for...
SAMPLE = 8            # ...from every SAMPLE-th card (all of them when that gives too few)
SCAN = "FROM cards c INDEXED BY cards_listed"  # the listed cards' covering index


class Query:
    """A query's terms against the listed cards ``where`` keeps (SQL over ``cards c``, or ""
    for all of them): each term's idf in that pool, and SQL telling per card whether it holds
    a term as a word (``exact``) or at all (``held``)."""

    def __init__(self, ix, terms: List[str], where: str, params: Sequence):
        self.ix, self.terms = ix, terms
        self.where = "c.listed = 1" + (f" AND {where}" if where else "")
        self.params = list(params)
        slots = dict(ix.rows("SELECT term, slot FROM vocab"))
        self.exact = [self._exact(t, slots) for t in terms]
        longer = self._longer()
        self.held = [self._held(e, longer[t], slots) for t, e in zip(terms, self.exact)]
        self.coded = [reach.frequency(slots[t]) if t in slots else None for t in terms]
        self.n, self.avg, self.longest, df = self._stats(not where)
        self.idf = [reach.idf(self.n, d) for d in df]
        self.whole = sum(self.idf) or 1.0

    @staticmethod
    def _found(terms: Iterable[str]) -> str:
        """SQL: whether FTS5 finds the card holding one of ``terms`` (a match of the card's
        rowid, listed once where SQLite first needs it: a card holding the term as a word
        never looks)."""
        match = " OR ".join(f'"{t}"' for t in terms)  # terms are [a-z0-9]+: a safe literal
        return f"(c.rid IN (SELECT rowid FROM cardterms WHERE cardterms MATCH '{match}'))"

    def _exact(self, term: str, slots: Dict[str, int]) -> str:
        if term in slots:
            return reach.holds(slots[term])
        return self._found([term])

    def _longer(self) -> Dict[str, List[str]]:
        """Per query term of 4 letters or more (``search.coverage`` finds those inside longer
        words), the longer words of the listed cards' vocabulary holding it: one pass over
        the vocabulary for all of them."""
        wanted = [t for t in self.terms if len(t) >= 4]
        out: Dict[str, List[str]] = {t: [] for t in self.terms}
        if not wanted:
            return out
        for word, in self.ix.each(
                "SELECT term FROM pooldf WHERE pool = 'list' AND n > 0 AND length(term) > ? AND "
                f"({' OR '.join(['instr(term, ?) > 0'] * len(wanted))})",
                (min(map(len, wanted)), *wanted)):
            for term in wanted:
                if term in word and len(word) > len(term):
                    out[term].append(word)
        return out

    def _held(self, exact: str, longer: List[str], slots: Dict[str, int]) -> str:
        """``search.coverage``'s hold: the term as a word (``exact``), or as one of the
        ``longer`` words holding it."""
        masks: Dict[str, int] = {}
        for word in (w for w in longer if w in slots):
            column, shift = reach.setting(slots[word])
            masks[column] = masks.get(column, 0) | reach.MOST << shift
        parts = [exact] + [f"(c.{column} & {mask} != 0)" for column, mask in masks.items()]
        rest = [w for w in longer if w not in slots]
        if rest:
            parts.append(self._found(rest))
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def _source(self, drive: bool = True) -> str:
        """``FROM`` the cards: when every term is found by FTS5 (and its matches may
        ``drive``), the cards it finds holding one (a rare term's are few); else the listed
        cards' covering index."""
        fts = [t for t, e in zip(self.terms, self.exact) if e.startswith("(c.rid IN")]
        if drive and len(fts) == len(self.terms):
            match = " OR ".join(f'"{t}"' for t in fts)
            return (f"FROM (SELECT rowid AS rid FROM cardterms WHERE cardterms MATCH "
                    f"'{match}') x CROSS JOIN cards c ON c.rid = x.rid")
        return SCAN

    def _stats(self, listed: bool) -> Tuple[int, float, float, List[int]]:
        """The pool's size, average and longest document length, and each term's document
        frequency (kept for the listed cards; counted when filters narrow them)."""
        if listed:
            n, total = self.ix.pool("list")
            longest = self.ix.scalar("SELECT coalesce(max(n), 0) FROM maxima WHERE name = "
                                     "'list_longest'")
            df = [self.ix.scalar("SELECT coalesce(max(n), 0) FROM pooldf WHERE pool = 'list' "
                                 "AND term = ?", (t,)) for t in self.terms]
        else:
            sums = "".join(f", total({e})" for e in self.exact)
            n, total, longest, *df = self.ix.rows(
                f"SELECT count(*), total(c.doclen), max(c.doclen){sums} "
                f"{self._source(drive=False)} WHERE {self.where}", self.params)[0]
            df = [int(d) for d in df]
        return n, reach.average(n, total), longest or 0.0, df

    def _unsure(self) -> bool:
        """Whether SQL may meet a card it cannot decide: its coverage within rounding of the
        floor (some set of the terms covers about that share), or its relevance within
        rounding of 0 (the least idf, at a frequency of 1, in the longest document)."""
        norm = search.K1 * (1 - search.B + search.B * self.longest / self.avg)
        if min((w for w in self.idf if w > 0), default=0.0) * (search.K1 + 1) / (1 + norm) \
                < ROUNDED + 2 * SLACK:
            return True
        if len(self.idf) > 12:
            return True
        floor = COVERAGE_FLOOR - ROUNDED
        return any(abs(sum(ws) / self.whole - floor) <= 2 * SLACK
                   for size in range(1, len(self.idf) + 1)
                   for ws in combinations(self.idf, size))

    def scan(self, subset: str, more: Sequence, columns: str, tail: str = "",
             extra: Sequence = (), sample: int = 1) -> Iterable[tuple]:
        """``columns`` (and ``tail``, then its ``extra`` parameters) over the kept cards of
        ``subset`` (SQL and its ``more`` parameters; every ``sample``-th row only), as
        ``rid``, ``bound`` and ``tight`` (bounds of the card's relevance: every term it holds
        at its highest frequency, cheap; each at the frequency its code gives) and ``sure``
        (its coverage and relevance clear their floors beyond rounding)."""
        k1, b, lift = search.K1, search.B, search.K1 + 1
        said = " + ".join(f"{e} * {w!r}" for e, w in zip(self.exact, self.idf))
        covered = " + ".join(f"{h} * {w!r}" for h, w in zip(self.held, self.idf))
        highest = ", ".join(  # each term's frequency at most
            f"{e} * c.fmax AS g{i}" if f is None else
            f"CASE {f} WHEN {reach.MOST} THEN c.fmax ELSE {f} END AS g{i}"
            for i, (e, f) in enumerate(zip(self.exact, self.coded)))
        floor = COVERAGE_FLOOR - ROUNDED
        unsure = self._unsure()
        inner = (f"SELECT c.rid AS rid, ({said}) AS said, ({covered}) / {self.whole!r} AS cov, "
                 f"c.fmax AS fmax, {k1 * (1 - b)!r} + {k1 * b / self.avg!r} * c.doclen "
                 f"AS norm, {highest} {self._source()} WHERE {self.where}{subset} AND "
                 + (f"c.rid % {sample} = 0 AND " if sample > 1 else "")  # first: cheap
                 + f"({' OR '.join(self.exact)}) AND ({covered}) / {self.whole!r} >= "
                 f"{floor - (SLACK if unsure else 0)!r}")
        bound = f"said * fmax * {lift!r} / (fmax + norm)"
        tight = " + ".join(f"{w * lift!r} * (1 - norm / (g{i} + norm))"  # g{i} once: a CASE
                           for i, w in enumerate(self.idf))
        sure = (f"(cov >= {floor + SLACK!r} AND said * {lift!r} / (1 + norm) >= "
                f"{ROUNDED + SLACK!r})") if unsure else "1"
        small = f" WHERE {bound} >= {ROUNDED - SLACK!r}" if unsure else ""
        middle = (f"SELECT rid, {bound} AS bound, {tight} AS tight, {sure} AS sure "
                  f"FROM ({inner}){small}")
        return self.ix.each(f"SELECT {columns} FROM ({middle}) {tail}",
                            [*self.params, *more, *extra])

    def read(self, rids: Iterable[int], sure: bool) -> Iterable[tuple]:
        """``(rid, relevance or None, score, ts, status, ready)`` of cards, from their
        documents (``relevance``; coverage is not checked again when ``sure``), in row order
        (neighbouring rows share pages)."""
        rids, keys = sorted(rids), storeindex.keys_of(self.terms)
        for start in range(0, len(rids), 500):
            chunk = rids[start:start + 500]
            for rid, score, ts, status, ready, length, doc in self.ix.each(
                    "SELECT c.rid, c.score, c.ts, c.status, c.ready, c.doclen, d.doc FROM cards c "
                    f"JOIN carddoc d ON d.rid = c.rid WHERE c.rid IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                freqs = storeindex.frequencies(doc or "", keys)
                held = None if sure else held_of(self.terms, doc or "", freqs)
                yield (rid, relevance(self.idf, freqs, length, self.avg, held, self.whole),
                       score, ts, status, ready)


def held_of(terms: List[str], doc: str, freqs: List[Optional[float]]) -> List[bool]:
    """Per term, whether a card holds it for ``search.coverage``: as a word (its frequency in
    the encoded document ``doc``), or, 4 letters or more, inside a longer word."""
    return [f is not None or (len(t) >= 4 and storeindex.inside(doc, t))
            for t, f in zip(terms, freqs)]


def relevance(idf: List[float], freqs: List[Optional[float]], length: float, avg: float,
              held: Optional[List[bool]] = None, whole: float = 1.0) -> Optional[float]:
    """``catalog.rank``'s relevance of one card from its query terms' frequencies, term for
    term in the same order; None when the card is left out: it rounds to 0, or (checked when
    ``held`` is given, ``whole`` being the idf of all the terms) covers too little."""
    if held is not None and \
            round(sum(w for w, h in zip(idf, held) if h) / whole, 4) < COVERAGE_FLOOR:
        return None
    rel, lift = 0.0, search.K1 + 1
    norm = search.K1 * (1 - search.B + search.B * length / avg)
    for weight, f in zip(idf, freqs):
        if f:
            rel += weight * f * lift / (f + norm)
    rel = round(rel, 4)
    return rel if rel > 0 else None


def top(ix, terms: List[str], where: str, params: Sequence,
        subset: Optional[Tuple[str, object]], limit: Optional[int]) -> Tuple[List[tuple], int]:
    """The best ``limit`` (all when None) kept cards among the listed ones ``where`` keeps
    (``Query``), and ``subset`` of them (a column and its value), as ``(rid, relevance,
    status, ready)``; and how many are kept."""
    q = Query(ix, terms, where, params)
    if not q.n:
        return [], 0
    extra, more = (f" AND c.{subset[0]} = ?", [subset[1]]) if subset else ("", [])
    best: List[tuple] = []  # a heap of the best read: (rel, score, ts, -rid, row)
    seen: Dict[int, Optional[float]] = {}

    def take(rows: Iterable[tuple]) -> None:
        for rid, rel, score, ts, status, ready in rows:
            seen[rid] = rel
            if rel is None:
                continue
            item = (rel, score, ts, -rid, (rid, rel, status, ready))
            if limit is None or len(best) < limit:
                heapq.heappush(best, item)
            elif item > best[0]:
                heapq.heapreplace(best, item)
    floor = -1.0 if limit is None else 1e308 if limit == 0 else None
    for sample in (SAMPLE, 1) if floor is None else ():
        # the best of every ``sample``-th card by their tight bound, read: the k-th of them
        # is a first floor (every card whose bound is below it is never read)
        first = list(q.scan(extra, more, "rid, sure", "ORDER BY tight DESC LIMIT ?",
                            [FIRST * limit], sample))
        take(q.read((r for r, sure in first if sure and r not in seen), True))
        take(q.read((r for r, sure in first if not sure and r not in seen), False))
        if len(best) >= limit:
            floor = best[0][0] - ROUNDED - SLACK
            break
    floor = -1.0 if floor is None else floor
    (kept, unsure, above, doubt), = q.scan(
        extra, more, f"count(*), total(NOT sure), group_concat(CASE WHEN bound >= {floor!r} "
        f"AND tight >= {floor!r} AND sure THEN rid END), "
        "group_concat(CASE WHEN NOT sure THEN rid END)")
    take(q.read((r for r in _rids(above) if r not in seen), True))
    if unsure:  # decided by reading, as catalog decides
        doubt = _rids(doubt)
        take(q.read((r for r in doubt if r not in seen), False))
        kept -= sum(1 for r in doubt if seen[r] is None)
    return [item[4] for item in sorted(best, reverse=True)], kept


def _rids(concatenated: Optional[str]) -> List[int]:
    return [int(r) for r in concatenated.split(",")] if concatenated else []
