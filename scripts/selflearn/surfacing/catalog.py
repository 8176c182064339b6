"""Read-side views of a store: cards and recommendations with scores attached.

One pass over signals (``score.tally``), one fold per file; every view is
a plain dict ready for JSON. ``list``, ``review`` and INDEX.md all start
here so they agree on what a score, a stale recommendation or a backport
candidate is.
"""

from typing import Dict, List, Optional, Tuple

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


def rank(views: List[dict], query: Optional[str],
         population: Optional[List[dict]] = None) -> List[dict]:
    """Best first: relevance (when a query is given: BM25 over ``population``, the views
    themselves when None; only the views that answer it, ``search.kept``), then score, then
    recency, then their order."""
    if not query:
        for view in views:
            view["relevance"] = None
        return sorted(views, key=lambda v: (v["score"], v.get("ts", "")), reverse=True)
    chosen = search.answers(query, views, population)
    for points, i in chosen:
        views[i]["relevance"] = round(points, 4)
    return [views[i] for _, i in sorted(chosen, key=lambda c: (c[0], views[c[1]]["score"],
                                                              views[c[1]].get("ts", "")),
                                        reverse=True)]


def listed(views: List[dict]) -> List[dict]:
    """The views a query's idf counts over: cards not hidden (as the index keeps them)."""
    return [v for v in views if v.get("status") not in model.HIDDEN_STATUSES]


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
    of the index and its value), ranked as ``rank`` ranks them (relevance, only the cards
    that answer the query; score; recency; fold order), as ``(rid, relevance or None, status,
    ready)``; and how many there are."""
    where, params = _where(skill, scope, statuses)
    if not query:
        if subset:
            where, params = f"{where} AND {subset[0]} = ?", [*params, subset[1]]
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
    rows, n = ix.scored(terms, "c.rid, c.score, c.ts, c.status, c.ready, c.tags",
                        "FROM cards c", where, params)
    if tag:
        rows = [row for row in rows if _tagged(row[6], tag)]
    rows = search.kept(sorted(rows, key=lambda row: row[1]), n, len(terms))  # ties: fold order
    if subset:  # of the cards that answer the query, as ``rank``'s lists are
        rows = [row for row in rows if row[{"status": 4, "ready": 5}[subset[0]]] == subset[1]]
    rows.sort(key=lambda row: (row[0], row[2], row[3]), reverse=True)
    return [(rid, round(rel, 4), status, ready) for rel, rid, _, _, status, ready, _ in
            rows[:limit]], len(rows)


_BY_SCORE = "ORDER BY score DESC, ts DESC, rid"


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
