"""Read-side views of a store: cards and recommendations with scores attached.

One pass over signals (``score.tally``), one fold per file; every view is
a plain dict ready for JSON. ``list``, ``review`` and INDEX.md all start
here so they agree on what a score, a stale recommendation or a backport
candidate is.
"""

from typing import Dict, List, Optional, Tuple

from ..learning import corrections, lifecycle
from ..storage import fastjson, model
from . import listquery, reach, score, search, storeindex
from ..storage.memory import Stores

DAY = 86400.0
COVERAGE_FLOOR = listquery.COVERAGE_FLOOR  # a card must answer this share of the query


_public = storeindex.public


def card_view(card: dict, mine: Dict[str, int], ev, now: float, fixes) -> dict:
    """One card as ``list`` shows it: defaults, confidence now, corrections, score."""
    view = _public(card)
    view["confidence_base"] = lifecycle.base_confidence(card)
    view["confidence"] = lifecycle.confidence(card, ev, now)
    view["corrections"] = corrections.for_card(fixes, card)
    view["score"], view["score_explained"] = score.score(view, mine)
    view["signals"] = mine
    view["backport_ready"] = score.backport_ready(view, mine)
    return view


def card_views(stores: Stores, counts: Optional[Dict[str, Dict[str, int]]] = None) -> List[dict]:
    """Latest version of every card with ``score``, ``score_explained``, ``backport_ready``,
    ``confidence`` now (``lifecycle.confidence``; the stored base is ``confidence_base``) and
    the newest ``corrections`` (a full read of the store)."""
    counts = score.tally(stores.load("signals")) if counts is None else counts
    ev, now = lifecycle.evidence(stores.load("signals")), model.now()
    fixes = corrections.latest(stores)
    return [card_view(card, counts.get(card["id"], {}), ev.get(card["id"]), now, fixes)
            for card in stores.folded("cards").values()]


def last_touch(rec: dict, signal_ts: Dict[str, str]) -> str:
    """The later of the last manual change and the last signal; else creation time."""
    stamps = [t for t in (rec.get("last_touched_ts"), signal_ts.get(rec["id"])) if t]
    return max(stamps) if stamps else rec.get("created") or rec.get("ts", "")


def rec_views(stores: Stores, stale_days: float, now: float,
              counts: Optional[Dict[str, Dict[str, int]]] = None) -> List[dict]:
    """Latest version of every recommendation with priority, age and staleness."""
    ix = storeindex.of_stores(stores)
    if ix is not None:
        ix.check(["signals", "recs"])
        recs = ix.records("recs")
        touched = ix.touched()
        counts = ix.tallies(r["id"] for r in recs)
    else:
        recs, touched = list(stores.folded("recs").values()), {}
        signals = stores.load("signals")
        counts = score.tally(signals) if counts is None else counts
        for s in signals:
            rid = s.get("rec_id")
            if isinstance(rid, str) and s.get("kind") != "rec_reinforced":
                touched[rid] = max(touched.get(rid, ""), str(s.get("ts", "")))
    views = []
    for rec in recs:
        view = _public(rec)
        view["status"] = model.normalize_status(view["status"])
        view["priority"] = model.priority_of(view)
        touch = last_touch(view, touched)
        view["last_touch"] = touch
        view["idle_days"] = round(max(0.0, now - model.parse_ts(touch)) / DAY, 1)
        view["open"] = view["status"] in model.OPEN_REC_STATUSES
        view["stale"] = view["open"] and view["idle_days"] > stale_days
        view["untouched"] = not rec.get("last_touched_ts") and rec["id"] not in touched
        view["score"], view["score_explained"] = score.score(view, counts.get(rec["id"], {}))
        views.append(view)
    return views


def keep(view: dict, skill=None, tag=None, scope=None, statuses=None) -> bool:
    """Filters shared by list and review; hidden statuses only when asked for."""
    if statuses:
        if view.get("status") not in statuses:
            return False
    elif view.get("status") in model.HIDDEN_STATUSES:
        return False
    if skill and view.get("primary_skill") != skill:
        return False
    if scope and view.get("scope") != scope:
        return False
    return not tag or tag in (view.get("tags") or [])


def rank(views: List[dict], query: Optional[str]) -> List[dict]:
    """Best first: relevance (when a query is given), then score, then recency."""
    if query:
        for view, rel, share in zip(views, search.bm25(query, views),
                                    search.coverage(query, views)):
            view["relevance"] = rel if share >= COVERAGE_FLOOR else 0.0
        views = [v for v in views if v["relevance"] > 0]
    else:
        for view in views:
            view["relevance"] = None
    return sorted(views, key=lambda v: (v["relevance"] or 0, v["score"], v.get("ts", "")),
                  reverse=True)


# --- through the derived index ---------------------------------------------------------------

def _where(skill=None, scope=None, statuses=None):
    """``keep`` as SQL over the index's card columns (tags are checked in Python)."""
    clauses, params = [], []
    if statuses:
        clauses.append(f"status IN ({','.join('?' * len(statuses))})")
        params += list(statuses)
    else:
        clauses.append(f"(status IS NULL OR status NOT IN "
                       f"({','.join('?' * len(model.HIDDEN_STATUSES))}))")
        params += list(model.HIDDEN_STATUSES)
    if skill:
        clauses.append("skill = ?")
        params.append(skill)
    if scope:
        clauses.append("scope = ?")
        params.append(scope)
    return " AND ".join(clauses), params


def _tagged(tags, tag: str) -> bool:
    return tag in ((fastjson.loads(tags) if tags else None) or [])


def any_kept(ix, skill=None, tag=None, scope=None, statuses=None) -> bool:
    """Whether ``keep`` lets any card through (``order`` without a query, stopping at one)."""
    where, params = _where(skill, scope, statuses)
    if not tag:
        return ix.scalar(f"SELECT EXISTS (SELECT 1 FROM cards WHERE {where})", params) == 1
    return any(_tagged(tags, tag) for tags, in ix.each(
        f"SELECT tags FROM cards WHERE {where} AND tags IS NOT NULL", params))


def order(ix, query=None, skill=None, tag=None, scope=None, statuses=None,
          limit: Optional[int] = None, subset: Optional[Tuple[str, object]] = None
          ) -> Tuple[List[tuple], int]:
    """The best ``limit`` (all when None) cards ``keep`` lets through (and ``subset``, a column
    of the index and its value), ranked as ``rank`` ranks them (relevance, kept when the card
    covers COVERAGE_FLOOR of the query; score; recency; fold order), as ``(rid, relevance or
    None, status, ready)``; and how many there are."""
    where, params = _where(skill, scope, statuses)
    if subset:
        where, params = f"{where} AND {subset[0]} = ?", [*params, subset[1]]
    if not query:
        if tag:
            rows = [(rid, None, status, ready) for rid, tags, status, ready in ix.each(
                f"SELECT rid, tags, status, ready FROM cards WHERE {where} {_BY_SCORE}", params)
                if _tagged(tags, tag)]
            return rows[:limit], len(rows)
        return ([(rid, None, status, ready) for rid, status, ready in ix.rows(
            f"SELECT rid, status, ready FROM cards WHERE {where} {_BY_SCORE} LIMIT ?",
            [*params, -1 if limit is None else limit])],
            ix.scalar(f"SELECT count(*) FROM cards WHERE {where}", params))
    terms = list(dict.fromkeys(search.tokenize(query)))
    if not terms:
        return [], 0
    if ix.fts and not tag and not set(statuses or ()) & set(model.HIDDEN_STATUSES):
        pool, pooled = _where(skill, scope, statuses) if skill or scope or statuses else ("", [])
        return listquery.top(ix, terms, pool, pooled, subset, limit)
    rows = _ranked(ix, terms, skill, tag, scope, statuses)
    if subset:
        at = {"status": 2, "ready": 3}[subset[0]]
        rows = [row for row in rows if row[at] == subset[1]]
    return rows[:limit], len(rows)


_BY_SCORE = "ORDER BY score DESC, ts DESC, rid"


def _ranked(ix, terms: List[str], skill, tag, scope, statuses) -> List[tuple]:
    """``order`` of a query, every document naming a query term read (no FTS5 to find the
    longer words holding a term, a tag or hidden cards asked for)."""
    where, params = _where(skill, scope, statuses)
    if tag:
        pool = [(rid, n) for rid, tags, n in ix.rows(
            f"SELECT rid, tags, doclen FROM cards WHERE {where}", params) if _tagged(tags, tag)]
        n, total = len(pool), sum(length for _, length in pool)
        allowed = {rid for rid, _ in pool}
    else:
        n, total = ix.rows(f"SELECT count(*), total(doclen) FROM cards WHERE {where}", params)[0]
        allowed = None
    if not n:
        return []
    avg = reach.average(n, total)
    rows = _naming(ix, where, params, terms, allowed)
    df = [sum(1 for r in rows if r[6][i] is not None) for i in range(len(terms))]
    idf = [reach.idf(n, d) for d in df]
    whole = sum(dict(zip(terms, idf)).values()) or 1.0
    ranked = []
    for rid, points, ts, status, ready, length, freqs, held in rows:
        rel = listquery.relevance(idf, freqs, length, avg, held, whole)
        if rel is not None:
            ranked.append((rel, points, ts, rid, status, ready))
    ranked.sort(key=lambda r: r[:3], reverse=True)
    return [(rid, rel, status, ready) for rel, _, _, rid, status, ready in ranked]


def _naming(ix, where: str, params: list, terms: List[str], allowed) -> List[tuple]:
    """The cards ``where`` keeps (and ``allowed``, when given) naming a query term, as
    ``(rid, score, ts, status, ready, doclen, frequencies, held)``: ``held`` says, per term,
    whether the card holds it for ``search.coverage`` (as a word, or inside a longer one).
    Documents are read one at a time and not kept (a broad query names most cards)."""
    keys = storeindex.keys_of(terms)
    rows = []
    for row in ix.naming("rid, score, ts, status, ready, doclen", "FROM cardsd", where, params,
                         terms, "ORDER BY rid"):
        if allowed is not None and row[0] not in allowed:
            continue
        freqs = storeindex.frequencies(row[6], keys)
        rows.append((*row[:6], freqs, listquery.held_of(terms, row[6], freqs)))
    return rows


def views_of(ix, stores: Stores, picked: List[tuple]) -> List[dict]:
    """Full card views (as ``card_views`` and ``rank`` make them) for ``order`` rows."""
    if not picked:
        return []
    rids = [row[0] for row in picked]
    cards = {}
    for start in range(0, len(rids), 500):
        chunk = rids[start:start + 500]
        for rid, data in ix.rows(f"SELECT rid, data FROM cardwide WHERE rid IN "
                                 f"({','.join('?' * len(chunk))})", chunk):
            card = fastjson.loads(data)
            card["_store"] = ix.memory.origin
            cards[rid] = card
    ids = [cards[r]["id"] for r in rids]
    counts, ev = ix.tallies(ids), ix.evidence(ids)
    fixes, now = corrections.latest(stores), model.now()
    out = []
    for row in picked:
        card, rel = cards[row[0]], (row[1] if len(row) > 1 else None)
        view = card_view(card, counts.get(card["id"], {}), ev.get(card["id"]), now, fixes)
        view["relevance"] = rel
        out.append(view)
    return out
