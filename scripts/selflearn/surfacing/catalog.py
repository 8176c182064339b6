"""Read-side views of a store: cards and recommendations with scores attached.

One pass over signals (``score.tally``), one fold per file; every view is
a plain dict ready for JSON. ``list``, ``review`` and INDEX.md all start
here so they agree on what a score, a stale recommendation or a backport
candidate is.
"""

import math
from typing import Dict, List, Optional

from ..learning import corrections, lifecycle
from ..storage import fastjson, model
from . import score, search, storeindex
from ..storage.memory import Stores

DAY = 86400.0


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
        for view, rel in zip(views, search.bm25(query, views)):
            view["relevance"] = rel
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


def order(ix, query=None, skill=None, tag=None, scope=None, statuses=None,
          top: int = 0) -> List[tuple]:
    """Every card ``keep`` lets through, ranked as ``rank`` ranks them (relevance, score,
    recency, then fold order), as ``(rid, relevance or None, status, ready)``. With ``top``
    (and a query, no filter) only the first ``top`` are exact, the rest are placeholders
    ``(None, …)`` that only count."""
    where, params = _where(skill, scope, statuses)
    if not query:
        rows = ix.rows(f"SELECT rid, tags, status, ready FROM cards WHERE {where} "
                       "ORDER BY score DESC, ts DESC, rid", params)
        return [(rid, None, status, ready) for rid, tags, status, ready in rows
                if not tag or _tagged(tags, tag)]
    terms = list(dict.fromkeys(search.tokenize(query)))
    if not terms:
        return []
    if top and not (skill or tag or scope or statuses):
        found = _top_by_query(ix, terms, top)
        if found is not None:
            return found
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
    avg = (total / n) or 1.0
    names = ["rid", "score", "ts", "status", "ready", "doclen"]
    sql, sql_params = storeindex.with_terms(names, names, f"FROM cardsd WHERE {where}",
                                            params, terms)
    rows = [r for r in ix.rows(sql + " ORDER BY rid", sql_params)
            if allowed is None or r[0] in allowed]
    df = [sum(1 for r in rows if r[6 + i]) for i in range(len(terms))]
    idf = [math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df]
    ranked = []
    for rid, points, ts, status, ready, length, *freqs in rows:
        rel = 0.0
        for weight, f in zip(idf, freqs):
            if f:
                rel += weight * f * (search.K1 + 1) / (f + search.K1 * (
                    1 - search.B + search.B * length / avg))
        rel = round(rel, 4)
        if rel > 0:
            ranked.append((rel, points, ts, rid, status, ready))
    ranked.sort(key=lambda r: r[:3], reverse=True)
    return [(rid, rel, status, ready) for rel, _, _, rid, status, ready in ranked]


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


MARGIN = 2e-4     # raw BM25 this close to the cut may round (4 places) to a tie or past it
EXTRA_ROWS = 50   # rows fetched past the ones shown, to settle near-ties at the cut


def _top_by_query(ix, terms: List[str], top: int) -> Optional[List[tuple]]:
    """``order`` for a query over the cards listed by default, computed in SQL: the pool's
    document frequencies are kept in the index, SQLite sums each card's BM25 with the very
    operations ``search.bm25`` does (bit for bit) and returns only the best rows; Python then
    rounds and breaks ties exactly as ``rank`` does. None when near-ties at the cut would need
    more rows (the caller then ranks every match)."""
    n, total = ix.rows("SELECT count(*), total(doclen) FROM cards WHERE listed = 1")[0]
    if not n:
        return []
    avg = (total / n) or 1.0
    df = dict(ix.rows("SELECT term, n FROM pooldf WHERE pool = 'list' AND term IN "
                      f"({','.join('?' * len(terms))})", terms))
    idf = [math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms]
    names = ["rid", "score", "ts", "status", "ready", "doclen"]
    inner, params = storeindex.with_terms(names, names, "FROM cardsd WHERE listed = 1", [], terms)
    k1 = search.K1
    raw = " + ".join(f"coalesce(? * f{i} * ? / (f{i} + ? * (? + ? * doclen / ?)), 0.0)"
                     for i in range(len(terms)))
    raw_params = [x for weight in idf for x in (weight, k1 + 1, k1, 1 - search.B, search.B, avg)]
    scored = f"SELECT rid, score, ts, status, ready, {raw} AS raw FROM ({inner})"
    rows = ix.rows(f"SELECT *, count(*) OVER (), total(raw < 0.0001) OVER () FROM ({scored}) "
                   "ORDER BY raw DESC LIMIT ?", (*raw_params, *params, top + EXTRA_ROWS))
    if not rows:
        return []
    matched, lows = rows[0][6], rows[0][7]
    complete = len(rows) == matched
    if not complete and (rows[-1][5] >= rows[min(top, len(rows)) - 1][5] - MARGIN or lows):
        return None  # near-ties run past the rows fetched, or some may round to 0
    ranked = []
    for rid, points, ts, status, ready, value, _, _ in rows:
        rel = round(value, 4)
        if rel > 0:
            ranked.append((rel, points, ts, rid, status, ready))
    if complete:
        matched = len(ranked)
    ranked.sort(key=lambda r: (r[0], r[1], r[2], -r[3]), reverse=True)
    best = [(rid, rel, status, ready) for rel, _, _, rid, status, ready in ranked[:top]]
    return best + [(None, None, None, None)] * (matched - len(best))
