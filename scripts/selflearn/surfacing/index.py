"""INDEX.md: the store summarized for a person, regenerated after every write.

Derived data only (counts, open recommendations, top cards, backport
candidates, recent activity); always replaced atomically and safe to delete.
"""

import heapq
import os
from typing import List

from . import catalog, score, storeindex
from ..storage import model, store, verdicts
from ..storage.memory import Memory, Stores
from ..storage.text import cell as _cell, document

TOP = 10
WARM = 10    # lessons screened per refresh at most (a refresh follows every write)


def _facts(stores: Stores, now: float, stale_days: float) -> dict:
    """What INDEX.md shows, from a full read of the store."""
    counts = score.tally(stores.load("signals"))
    cards = sorted(catalog.card_views(stores, counts), key=lambda v: (v["score"], v.get("ts", "")),
                   reverse=True)
    by_status: dict = {}
    for card in cards:
        by_status[card["status"]] = by_status.get(card["status"], 0) + 1
    return {"cards": len(cards), "by_status": by_status,
            "top": [c for c in cards if c["status"] not in model.HIDDEN_STATUSES][:TOP],
            "ready": [c for c in cards if c["backport_ready"]][:TOP],
            "recs": catalog.rec_views(stores, stale_days, now, counts),
            "events": len(stores.load("events")), "signals": len(stores.load("signals")),
            "recent": _recent(stores)}


def _indexed_facts(ix, stores: Stores, now: float, stale_days: float) -> dict:
    """The same from the derived index: counts, and only the rows INDEX.md lists."""
    ix.check(["signals", "cards", "recs", "events"])
    hidden = ",".join("?" * len(model.HIDDEN_STATUSES))
    rank = "ORDER BY score DESC, ts DESC, rid LIMIT ?"
    top = ix.rows(f"SELECT rid FROM cards WHERE status IS NULL OR status NOT IN ({hidden}) {rank}",
                  (*model.HIDDEN_STATUSES, TOP))
    ready = ix.rows(f"SELECT rid FROM cards WHERE ready = 1 {rank}", (TOP,))
    return {"cards": ix.scalar("SELECT count(*) FROM cards"),
            "by_status": dict(ix.rows("SELECT status, count(*) FROM cards GROUP BY status")),
            "top": catalog.views_of(ix, stores, top), "ready": catalog.views_of(ix, stores, ready),
            "recs": catalog.rec_views(stores, stale_days, now),
            "events": ix.lines("events"), "signals": ix.lines("signals"),
            "recent": [f"- {ts[:16]} {label}: {what}" for ts, label, what in ix.recent()]}


def render(stores: Stores, stale_days: float = 7) -> str:
    now = model.now()
    ix = storeindex.of_stores(stores)
    facts = _facts(stores, now, stale_days) if ix is None else \
        _indexed_facts(ix, stores, now, stale_days)
    recs, by_status = facts["recs"], facts["by_status"]
    open_recs = sorted((r for r in recs if r["open"]),
                       key=lambda r: (model.PRIORITIES.index(r["priority"]), not r["stale"]))
    lines: List[str] = [
        f"# Self-learning memory: {stores.user}",
        "",
        f"Regenerated {model.iso(now)} by `scripts/self_learning.py`; edits here are overwritten.",
        "",
    ]
    if os.path.exists(os.path.join(stores.project.root, "report.html")):  # written by `report`
        lines += ["Charts: [report.html](report.html) (refresh with `report`).", ""]
    lines += [
        "## Counts",
        "",
        f"- cards: {facts['cards']}" + (" (" + ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) + ")"
                                    if by_status else ""),
        f"- recommendations: {len(recs)} ({len(open_recs)} open, "
        f"{sum(1 for r in open_recs if r['stale'])} stale)",
        f"- events: {facts['events']}, signals: {facts['signals']}",
        "",
        "## Open recommendations",
        "",
    ]
    lines += [f"- [{r['priority']}] `{r['id']}` {_cell(r['title'])} ({r['status']}"
              f"{', stale' if r['stale'] else ''})" for r in open_recs[:TOP]] or ["- none"]
    lines += ["", "## Top cards", "", "| score | id | title | status | scope |", "|---|---|---|---|---|"]
    lines += [f"| {c['score']} | `{c['id']}` | {_cell(c['title'])} | {c['status']} | {c['scope']} |"
              for c in facts["top"]]
    lines += ["", "## Backport candidates", ""]
    lines += [f"- `{c['id']}` {_cell(c['title'])}" for c in facts["ready"]] \
        or ["- none yet (portable, shareable, and used or accepted)"]
    from ..learning import proposals
    waiting = proposals.pending(stores.project)
    if waiting:  # shown until decided: `proposals apply|reject`
        lines += ["", "## Proposals waiting for a decision", ""]
        lines += [f"- `{p['id']}` [{p['kind']}] {_cell(p['title'])}" for p in waiting[:TOP]]
    lines += ["", "## Recent activity", ""]
    lines += facts["recent"] or ["- nothing yet"]
    return "\n".join(lines) + "\n"


def _recent(stores: Stores) -> List[str]:
    """The latest lines of every file, newest first, without sorting the whole store."""
    def rows():
        for name, label in (("events", "event"), ("cards", "card"), ("recs", "rec"),
                            ("signals", "signal")):
            for r in stores.project.load(name):
                what = r.get("title") or r.get("task_summary") or \
                    f"{r.get('kind', '')} {r.get('aha_id') or r.get('rec_id') or ''}".strip()
                yield str(r.get("ts", "")), label, _cell(what)
    return [f"- {ts[:16]} {label}: {what}" for ts, label, what in heapq.nlargest(TOP, rows())]


def refresh(memory: Memory, user: str) -> str:
    """Rewrite ``INDEX.md`` of the project store, and judge up to ``WARM`` lessons the
    safety screen has not seen (so hooks find their verdicts); returns its path."""
    stores = Stores(memory, user)
    path = os.path.join(memory.root, "INDEX.md")
    store.atomic_write(path, document(render(stores)))
    warm(memory)
    return path


def warm(memory: Memory, limit: int = 0) -> int:
    """Screen the live cards without a verdict yet (at most ``limit or WARM``: those advice
    may say first, newest first) and remember the verdicts (in the derived index, else in
    ``<store>/screened.json``); returns how many were screened."""
    limit = limit or WARM
    ix = storeindex.of(memory)
    if ix is not None:
        ix.check(["cards"])
        cards = (ix.record("cards", cid) for cid, _ in ix.unjudged(limit=limit))
        return _judge(verdicts.Verdicts(memory.root, table=ix), cards, limit)
    cards = storeindex.judge_order(memory.folded("cards").values())
    return _judge(verdicts.Verdicts(memory.root), cards, limit)


def _judge(judged: verdicts.Verdicts, cards, limit: int) -> int:
    """Screen ``cards`` not judged yet, until ``limit`` were; save the verdicts."""
    done = 0
    for card in cards:
        if done >= limit:
            break
        if not judged.known(card):  # the same content may have been judged a moment ago
            judged.blocked(card)
            done += 1
    judged.save()
    return done
