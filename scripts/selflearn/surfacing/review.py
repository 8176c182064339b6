"""``list`` and ``review``: what the store knows, best first, and what to do next.

Both return data only; the CLI renders text or JSON. Each list holds at most
``limit`` rows in text and JSON alike (``list --limit``, ``review --limit``; 0 = all), so
a big store's output, and its cost, follow what is shown; ``total``/``totals`` count
everything.
"""

from typing import List, Optional, Sequence, Tuple

from . import catalog, score, storeindex
from ..storage.text import clean
from ..storage import model, verdicts
from ..storage.memory import Stores

SHOW = 5  # rows per list review shows unless --limit says otherwise
EMPTY = "Nothing is recorded yet. After a task, record what you learned with `record` (see SKILL.md)."


def list_cards(stores: Stores, query: Optional[str] = None, skill: Optional[str] = None,
               tag: Optional[str] = None, statuses: Sequence[str] = (), limit: int = 20) -> dict:
    ix = storeindex.of_stores(stores)
    if ix is not None:  # the derived index: only the cards shown are built
        ix.check(["signals", "cards"])
        order, total = catalog.order(ix, query, skill, tag, None, statuses,
                                     limit if limit > 0 else None)
        items = catalog.views_of(ix, stores, order)
        data = {"count": len(items), "total": total, "items": items}
        kept = bool(order) or bool(query and catalog.any_kept(ix, skill, tag, None, statuses))
        return _message(data, ix.scalar("SELECT count(*) FROM cards") > 0, bool(order), kept,
                        query)
    views = catalog.card_views(stores)
    kept = [v for v in views if catalog.keep(v, skill, tag, None, statuses)]
    matched = catalog.rank(kept, query, catalog.listed(views))
    items = matched[:limit] if limit > 0 else matched
    data = {"count": len(items), "total": len(matched), "items": items}
    return _message(data, bool(views), bool(matched), bool(kept), query)


def _message(data: dict, any_card: bool, matched: bool, kept: bool, query) -> dict:
    if not any_card:
        data["message"] = EMPTY
    elif not matched and query and kept:
        data["message"] = (f"No card answers {query!r}: nothing stored is about it "
                           "(no card holds enough of its rarer words).")
    elif not matched:
        data["message"] = "No card matches these filters."
    return data


def render_list(data: dict) -> List[str]:
    if not data["items"]:
        return [data.get("message", "No card matches.")]
    lines = []
    for item in data["items"]:
        rel = f" rel {item['relevance']:.2f}" if item.get("relevance") else ""
        lines.append(f"{item['id']}  [{item['status']}, {item['scope']}, score {item['score']}, "
                     f"conf {item['confidence']}{rel}]{_where(item)}  {item['title']}")
        if item.get("when_to_use"):
            lines.append(f"    when: {item['when_to_use']}")
        lines += [f"    correction: {c}" for c in (item.get("corrections") or [])[:3]]
    if data["total"] > data["count"]:
        lines.append(f"({data['total'] - data['count']} more; raise --limit or narrow with --query)")
    return lines


def _where(item: dict) -> str:
    """`` (global)``, or whose committed store a teammate's card is in and whether it was
    accepted here."""
    if item.get("owner"):
        return f" ({item['owner']}'s, {item.get('provenance', 'imported')})"
    return " (global)" if item["store"] == "global" else ""


def _window_start(days: Optional[float], since: Optional[str], now: float) -> float:
    if since:
        start = model.parse_ts(since)
        if not start:
            from ..storage.errors import UsageError
            raise UsageError(f"review: --since {since!r} is not an ISO date like 2026-01-31")
        return start
    return now - (7 if days is None else days) * catalog.DAY


def review(stores: Stores, days: Optional[float] = None, since: Optional[str] = None,
           scope: Optional[str] = None, skill: Optional[str] = None,
           statuses: Sequence[str] = (), query: Optional[str] = None,
           stale_days: float = 7, limit: Optional[int] = None) -> dict:
    """The dashboard: open recommendations, top cards, backport candidates, next actions.

    ``limit`` cuts every list (``totals`` keeps their lengths); None keeps them whole.
    """
    now = model.now()
    start = _window_start(days, since, now)
    ix = storeindex.of_stores(stores)
    if ix is not None:
        return _review_indexed(ix, stores, start, now, scope, skill, statuses, query,
                               stale_days, limit)
    counts = score.tally(stores.load("signals"))
    views = catalog.card_views(stores, counts)
    cards = catalog.rank([v for v in views if catalog.keep(v, skill, None, scope, statuses)],
                         query, catalog.listed(views))
    recs = [v for v in catalog.rec_views(stores, stale_days, now, counts)
            if catalog.keep(v, skill, None, scope, statuses)]
    recs = catalog.rank(recs, query)
    open_recs = sorted((r for r in recs if r["open"]),
                       key=lambda r: (model.PRIORITIES.index(r["priority"]), not r["stale"],
                                      r["last_touch"]))
    candidates = [c for c in cards if c["backport_ready"]]
    mined = [c for c in cards if c["status"] == "candidate"]
    from ..learning import reinforce
    proposed = next((c["id"] for c in cards if c["status"] == "proposed"), None)
    return _assemble(stores, start, now, _counts(stores, cards, recs, start), open_recs,
                     [cards, candidates, mined], proposed, reinforce.effectiveness(stores.project),
                     limit)


def _assemble(stores: Stores, start: float, now: float, counts: dict, open_recs: List[dict],
              lists: List[List[dict]], proposed: Optional[str], effectiveness: dict,
              limit: Optional[int], totals: Optional[List[int]] = None) -> dict:
    from ..learning import proposals
    names = ("top_cards", "backport_candidates", "mined_candidates")
    totals = [len(x) for x in lists] if totals is None else totals
    held, unscreened = flagged(stores)
    rest = {"open_recommendations": open_recs, "proposals": proposals.pending(stores.project),
            "flagged": held}
    data = {
        "window": {"since": model.iso(start), "until": model.iso(now)},
        "counts": counts,
        **{name: rows[:limit] for name, rows in zip(names, lists)},
        **{name: rows[:limit] for name, rows in rest.items()},
        "totals": {**dict(zip(names, totals)), **{k: len(v) for k, v in rest.items()}},
        "first_proposed": proposed,
        "effectiveness": effectiveness,
        "unscreened": unscreened,
    }
    data["next_actions"] = next_actions(data, stores)
    return data


def _review_indexed(ix, stores: Stores, start: float, now: float, scope, skill, statuses, query,
                    stale_days: float, limit: Optional[int]) -> dict:
    """``review`` from the derived index: views only for the cards it lists."""
    ix.check(["signals", "cards", "recs", "events", "surfacings"])
    # top cards, backport candidates, mined candidates (``limit`` each, and how many there
    # are) and the best proposed card: only the rows shown are read
    picks, totals = map(list, zip(*(
        catalog.order(ix, query, skill, None, scope, statuses, limit, subset)
        for subset in (None, ("ready", 1), ("status", "candidate")))))
    best = catalog.order(ix, query, skill, None, scope, statuses, 1, ("status", "proposed"))[0]
    first = best[0][0] if best else None
    lists = [catalog.views_of(ix, stores, rows) for rows in picks]
    recs = [v for v in catalog.rec_views(stores, stale_days, now)
            if catalog.keep(v, skill, None, scope, statuses)]
    recs = catalog.rank(recs, query)
    open_recs = sorted((r for r in recs if r["open"]),
                       key=lambda r: (model.PRIORITIES.index(r["priority"]), not r["stale"],
                                      r["last_touch"]))
    proposed = None if first is None else \
        ix.scalar("SELECT id FROM cards WHERE rid=?", (first,))
    since = model.iso(start)
    counts = {"cards": totals[0], "recommendations": len(recs),
              "open_recommendations": sum(1 for r in recs if r["open"]),
              "stale_recommendations": sum(1 for r in recs if r["stale"]),
              "events_in_window": ix.since("events", since),
              "card_versions_in_window": ix.since("cards", since),
              "signals_in_window": ix.since("signals", since)}
    from ..learning import reinforce
    ev = ix.evidence(where="helped > 0 OR violated > 0")
    facts = (lambda aid: ix.record("cards", aid), ev, ix.surfaced(ev), ix.lines("surfacings"),
             ix.scalar("SELECT count(*) FROM surfaced"))
    return _assemble(stores, start, now, counts, open_recs, lists, proposed,
                     reinforce.effectiveness(stores.project, facts=facts), limit, totals)


SCREEN_MAX = 100  # lessons review screens for the first time per run (verdicts are kept)


def flagged(stores: Stores) -> Tuple[List[dict], int]:
    """Live cards the safety screen holds back, with the reasons (a person decides each),
    and how many live cards are not screened yet. At most ``SCREEN_MAX`` lessons without a
    remembered verdict are screened per run (a big store is judged over a few runs, every
    write judges more, and advice screens whatever it is about to say)."""
    out = []
    ix = storeindex.of_stores(stores)
    if ix is not None:
        return _flagged_indexed(ix, verdicts.Verdicts(stores.project.root, table=ix))
    judged = verdicts.Verdicts(stores.project.root)
    fresh = 0
    for card in storeindex.judge_order(stores.folded("cards").values()):
        if not judged.known(card):
            fresh += 1
            if fresh > SCREEN_MAX:
                continue
        _hold(out, card, judged.blocked(card))
    judged.save()
    return sorted(out, key=lambda c: c["id"]), max(0, fresh - SCREEN_MAX)


def _hold(out: List[dict], card: dict, reasons: List[str]) -> None:
    """One held-lesson row for ``flagged``, when the screen gave reasons."""
    if reasons:
        out.append({"id": card["id"], "title": card.get("title", ""),
                    "status": card.get("status", "proposed"),
                    "origin": card.get("origin", "agent"), "reasons": reasons})


def _flagged_indexed(ix, judged) -> Tuple[List[dict], int]:
    """``flagged`` from the derived index: each card knows whether its content was judged
    and held (``cards.verdict``), so only cards held back or not judged yet are read, and
    those beyond ``SCREEN_MAX`` are counted in SQL."""
    ix.check(["cards"])
    todo = [r[0] for r in ix.rows("SELECT id FROM cards INDEXED BY cards_held WHERE "
                                  "listed = 1 AND sok = 0 AND verdict = 1")]
    fresh, seen, screening, rows = 0, 0, set(), [None]
    while rows and fresh < SCREEN_MAX:  # in judge order, as the full read screens them
        rows = ix.unjudged(seen, 2 * SCREEN_MAX)
        for cid, key in rows:
            if key not in screening:
                if fresh == SCREEN_MAX:
                    break
                fresh += 1
                screening.add(key)
            todo.append(cid)
            seen += 1
    # the rest is counted in SQL; a card whose content is judged in this run counts as judged
    read = set(todo)
    again = [cid for cid in ix.unjudged_of(screening) if cid not in read]
    todo += again
    fresh += ix.scalar(f"SELECT count(*) {storeindex.UNJUDGED}") - seen - len(again)
    out: List[dict] = []
    for cid in todo:
        card = ix.record("cards", cid)
        _hold(out, card, judged.blocked(card))
    judged.save()
    return sorted(out, key=lambda c: c["id"]), max(0, fresh - SCREEN_MAX)


def _counts(stores: Stores, cards: List[dict], recs: List[dict], start: float) -> dict:
    since = model.iso(start)  # ISO UTC stamps order as strings: no parsing per line

    def recent(rows):
        return sum(1 for r in rows if str(r.get("ts", "")) >= since)
    return {"cards": len(cards), "recommendations": len(recs),
            "open_recommendations": sum(1 for r in recs if r["open"]),
            "stale_recommendations": sum(1 for r in recs if r["stale"]),
            "events_in_window": recent(stores.load("events")),
            "card_versions_in_window": recent(stores.load("cards")),
            "signals_in_window": recent(stores.load("signals"))}


def next_actions(data: dict, stores: Stores) -> List[str]:
    actions = []
    if not (data["top_cards"] or data["open_recommendations"] or data["proposals"]):
        return [EMPTY]
    for rec in data["open_recommendations"]:
        if rec["stale"]:
            actions.append(f"rec {rec['id']} has been idle {rec['idle_days']:g} days: "
                           f"`rec-status --id {rec['id']} --status in_progress|done|rejected`")
            break
    if data["flagged"]:
        first = data["flagged"][0]["id"]
        actions.append(f"{data['totals']['flagged']} lesson(s) held by the safety screen: read them "
                       f"(`list --format json`), then `aha-status --id {first} --status rejected`"
                       f" or, if safe, `--status accepted --accept-flagged`")
    held = {c["id"] for c in data["flagged"]}
    ready = [c["id"] for c in data["backport_candidates"] if c["id"] not in held][:SHOW]
    if ready:
        actions.append("graduate proven portable cards: `export-backport --skill-path <skill> "
                       f"--ids {','.join(ready)}`")
    if data["proposals"]:
        actions.append(f"decide {data['totals']['proposals']} proposal(s): "
                       f"`proposals show --id {data['proposals'][0]['id']}`")
    if data["effectiveness"]["keep_failing"]:
        worst = data["effectiveness"]["keep_failing"][0]
        actions.append(f"{worst['id']} was surfaced and recurred {worst['violated']}x: rewrite it "
                       f"(`correct --lesson {worst['id']} --text …`) or reject it")
    if data["totals"]["mined_candidates"]:
        actions.append(f"{data['totals']['mined_candidates']} mined candidate(s): "
                       "`promote --dry-run` shows which have earned acceptance")
    new = data["first_proposed"]
    if new in held:
        actions.append(f"accept or reject new cards, e.g. `aha-status --id {new} --status "
                       "rejected`, or (the safety screen holds it: read it first) `--status "
                       "accepted --accept-flagged`")
    elif new:  # not screened yet when too many lessons waited: the command will say
        actions.append(f"accept or reject new cards, e.g. `aha-status --id {new} "
                       "--status accepted`" + (" (it names `--accept-flagged` if the safety "
                                               "screen holds the card)"
                                               if data.get("unscreened") else ""))
    if stores.warnings:
        actions.append("some lines are unreadable: run `repair` then `repair --apply`")
    return actions or ["nothing needs attention"]


def render_review(data: dict) -> List[str]:
    c = data["counts"]
    lines = [f"Review {data['window']['since'][:10]} .. {data['window']['until'][:10]}: "
             f"{c['cards']} cards, {c['open_recommendations']} open recommendations "
             f"({c['stale_recommendations']} stale), {c['events_in_window']} events, "
             f"{c['signals_in_window']} signals in window"]
    if data["open_recommendations"]:
        lines.append("Open recommendations:")
        for r in data["open_recommendations"]:
            flags = ", ".join(f for f in ("stale" if r["stale"] else "",
                                          "untouched" if r["untouched"] else "") if f)
            lines.append(f"  [{r['priority']}] {r['id']} {r['title']} ({r['status']}, idle "
                         f"{r['idle_days']:g}d{', ' + flags if flags else ''})")
    if data["top_cards"]:
        lines.append("Top cards:")
        for card in data["top_cards"]:
            lines.append(f"  {card['score']:>3} {card['id']} {card['title']}  "
                         f"[{card['score_explained']}; conf {card['confidence']}]")
    if data["backport_candidates"]:
        lines.append("Backport candidates: " + ", ".join(
            c["id"] for c in data["backport_candidates"]))
    if data["flagged"]:
        lines.append("Held by the safety screen (never surfaced, promoted or exported until a "
                     "person accepts):")
        lines += [f"  {c['id']} {clean(c['title'])[:80]} ({clean(c['reasons'][0])[:120]})"
                  for c in data["flagged"]]
    if data.get("unscreened"):
        lines.append(f"Not screened yet: {data['unscreened']} lesson(s) (run `review` again; "
                     "advice screens whatever it is about to say)")
    if data["proposals"]:
        lines.append("Proposals waiting for a decision:")
        lines += [f"  {p['id']} [{p['kind']}] {p['title']}" for p in data["proposals"]]
    eff = data["effectiveness"]
    if eff["helped_most"] or eff["keep_failing"]:
        from ..learning import reinforce
        lines.append("Surfaced lessons:")
        lines += ["  " + line for line in reinforce.render_effectiveness(eff)[1:]]
    lines.append("Next: " + "; ".join(data["next_actions"]))
    more = [f"{n - len(data[k])} more {k.replace('_', ' ')}" for k, n in data["totals"].items()
            if n > len(data[k])]
    lines.append(f"More: {', '.join(more)} (raise --limit); " if more else "More: ")
    lines[-1] += "`list --format json`, `review --format json`, or INDEX.md in the store."
    return lines
