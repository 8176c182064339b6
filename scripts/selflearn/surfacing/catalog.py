"""Read-side views of a store: cards and recommendations with scores attached.

One pass over signals (``score.tally``), one fold per file; every view is
a plain dict ready for JSON. ``list``, ``review`` and INDEX.md all start
here so they agree on what a score, a stale recommendation or a backport
candidate is.
"""

from typing import Dict, List, Optional

from ..learning import corrections, lifecycle
from ..storage import model
from . import score, search
from ..storage.memory import Stores

DAY = 86400.0
COVERAGE_FLOOR = 0.3  # a card must answer this share of what the query asks (idf-weighted)


def _public(record: dict) -> dict:
    """A folded record without bookkeeping keys, with its defaults and origin."""
    out = {k: v for k, v in record.items() if not k.startswith("_")}
    out.setdefault("status", "proposed")
    out.setdefault("primary_skill", "unknown")
    out.setdefault("scope", "project")
    out["store"] = record.get("_store", "project")
    if record.get("_tracked"):  # a store git tracks: its provenance is imported
        out["provenance"] = "imported" if record.get("_imported") else "imported, accepted here"
    out["created"] = record.get("_first_ts") or record.get("ts", "")
    out["versions"] = record.get("_versions", 1)
    return out


def card_views(stores: Stores, counts: Optional[Dict[str, Dict[str, int]]] = None) -> List[dict]:
    """Latest version of every card with ``score``, ``score_explained``, ``backport_ready``,
    ``confidence`` now (``lifecycle.confidence``; the stored base is ``confidence_base``) and
    the newest ``corrections``."""
    counts = score.tally(stores.load("signals")) if counts is None else counts
    ev, now = lifecycle.evidence(stores.load("signals")), model.now()
    fixes = corrections.latest(stores)
    views = []
    for card in stores.folded("cards").values():
        view = _public(card)
        view["confidence_base"] = lifecycle.base_confidence(card)
        view["confidence"] = lifecycle.confidence(card, ev.get(card["id"]), now)
        view["corrections"] = corrections.for_card(fixes, card)
        mine = counts.get(card["id"], {})
        view["score"], view["score_explained"] = score.score(view, mine)
        view["signals"] = mine
        view["backport_ready"] = score.backport_ready(view, mine)
        views.append(view)
    return views


def last_touch(rec: dict, signal_ts: Dict[str, str]) -> str:
    """The later of the last manual change and the last signal; else creation time."""
    stamps = [t for t in (rec.get("last_touched_ts"), signal_ts.get(rec["id"])) if t]
    return max(stamps) if stamps else rec.get("created") or rec.get("ts", "")


def rec_views(stores: Stores, stale_days: float, now: float,
              counts: Optional[Dict[str, Dict[str, int]]] = None) -> List[dict]:
    """Latest version of every recommendation with priority, age and staleness."""
    signals = stores.load("signals")
    counts = score.tally(signals) if counts is None else counts
    touched: Dict[str, str] = {}
    for s in signals:
        rid = s.get("rec_id")
        if isinstance(rid, str) and s.get("kind") != "rec_reinforced":
            touched[rid] = max(touched.get(rid, ""), str(s.get("ts", "")))
    views = []
    for rec in stores.folded("recs").values():
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
