#!/usr/bin/env python3
"""Recall of `list --query` on a labelled set: agent-phrased queries over cards with confusers.

bench/recall/cards.json holds 80 lessons (several per topic, so near misses compete);
bench/recall/queries.json holds 64 queries phrased as an agent would ask, each with the one
card that answers it, plus queries nothing in the store answers. The cards are ranked as
`list --query` ranks them (surfacing.catalog.rank); prints recall@5, MRR and how many
unanswerable queries returned nothing.

`--set real` measures the real set instead (bench/recall/real/: 355 queries taken verbatim from
the sessions of bench/learning/, labelled, a held-out half; cards written from the gold lessons
plus 101 confusers) and reports, by set (tuning / held-out) and by kind, recall@5 and MRR@5 of
the expected card, how many cards come back for the queries no card answers, and the ceiling:
recall@5 of plain BM25 with no floor at all, which no floor or cut can exceed.
Usage: python3 bench/recall_quality.py [--set old|real|both] [--format text|json] [--show]
"""
import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "bench", "recall")
sys.path.insert(0, os.path.join(REPO, "scripts"))

from selflearn.surfacing import catalog, search  # noqa: E402

# Questions about things no card covers: the answer must be "nothing".
UNANSWERABLE = ("kubernetes helm chart values override", "translate the app into french",
                "how many vacation days do I have", "draw a diagram of the architecture",
                "ios simulator keyboard does not appear")


def load(name: str) -> list:
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        return json.load(fh)[name.split(".")[0]]


def ranked(query: str, cards: list) -> list:
    views = [dict(c, score=0.0) for c in cards]
    return [v["id"] for v in catalog.rank(views, query)]


def measure() -> dict:
    cards, queries = load("cards.json"), load("queries.json")
    rows = []
    for q in queries:
        ids = ranked(q["query"], cards)
        rank = ids.index(q["expected"]) + 1 if q["expected"] in ids else 0
        rows.append({"query": q["query"], "expected": q["expected"], "rank": rank, "top": ids[:3]})
    n = len(rows)
    silent = [q for q in UNANSWERABLE if not ranked(q, cards)]
    return {"schema": 1, "cards": len(cards), "queries": n,
            "recall_at_5": round(sum(1 for r in rows if 0 < r["rank"] <= 5) / n, 3),
            "mrr": round(sum(1 / r["rank"] for r in rows if r["rank"]) / n, 3),
            "unanswerable": len(UNANSWERABLE), "unanswerable_silent": len(silent), "rows": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--show", action="store_true", help="list the queries not ranked first")
    parser.add_argument("--set", choices=("old", "real", "both"), default="old",
                        help="old: the agent-phrased set (default); real: bench/recall/real/")
    args = parser.parse_args(argv)
    if args.set != "old":
        return main_real(args)
    data = measure()
    if args.format == "json":
        print(json.dumps(data, indent=1))
        return 0
    print(f"{data['queries']} queries over {data['cards']} cards: recall@5 {data['recall_at_5']:.3f}, "
          f"MRR {data['mrr']:.3f}; {data['unanswerable_silent']}/{data['unanswerable']} "
          "unanswerable queries returned nothing")
    if args.show:
        for r in data["rows"]:
            if r["rank"] != 1:
                print(f"  rank {r['rank'] or '-'}: {r['query']!r} -> {r['expected']} (top {r['top']})")
    return 0


# ---- the real set (bench/recall/real/)

REAL = os.path.join(DATA, "real")
KINDS = ("error", "command", "prompt", "task", "unanswerable")
SETS = ("tuning", "held-out")
TOP = 5


def load_real() -> tuple:
    """The real cards (with the old set's 80 as confusers) and the real queries."""
    with open(os.path.join(REAL, "cards.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    cards = list(doc["cards"])
    if doc.get("confusers_from"):
        with open(os.path.join(REAL, doc["confusers_from"]), encoding="utf-8") as fh:
            cards += [dict(c, source="confuser") for c in json.load(fh)["cards"]]
    with open(os.path.join(REAL, "queries.json"), encoding="utf-8") as fh:
        queries = json.load(fh)["queries"]
    return cards, queries


def _group(rows: list) -> dict:
    answerable = [r for r in rows if r["expected"]]
    silent = [r for r in rows if not r["expected"]]
    out = {"queries": len(rows), "answerable": len(answerable), "null": len(silent)}
    if answerable:
        n = len(answerable)
        out["recall_at_5"] = round(sum(1 for r in answerable if 0 < r["rank"] <= TOP) / n, 3)
        out["mrr_at_5"] = round(sum(1 / r["rank"] for r in answerable if 0 < r["rank"] <= TOP) / n, 3)
        out["recall_at_5_any"] = round(sum(1 for r in answerable if 0 < r["rank_any"] <= TOP) / n, 3)
        out["returned_mean"] = round(sum(r["returned"] for r in answerable) / n, 2)
        out["ceiling_at_5"] = round(sum(1 for r in answerable if 0 < r["ceiling"] <= TOP) / n, 3)
    if silent:
        n = len(silent)
        out["null_returned_mean"] = round(sum(r["returned"] for r in silent) / n, 2)
        out["null_silent"] = round(sum(1 for r in silent if not r["returned"]) / n, 3)
    return out


def ceiling(query: str, expected: str, cards: list) -> int:
    """The expected card's rank under plain BM25 with no floor and no cut (every card holding
    a word of the query comes back, 0 when it holds none): how far any floor could reach."""
    scores = search.bm25(query, cards)
    if not expected or not any(c["id"] == expected and s > 0 for c, s in zip(cards, scores)):
        return 0
    best = next(s for c, s in zip(cards, scores) if c["id"] == expected)
    return 1 + sum(1 for s in scores if s > best)


def measure_real() -> dict:
    """Rank the real cards for every real query as `list --query` ranks them (catalog.rank)."""
    cards, queries = load_real()
    shaped = [{k: v for k, v in c.items() if k != "source"} for c in cards]
    rows = []
    for q in queries:
        ids = ranked(q["query"], shaped)
        wanted = ([q["expected"]] if q["expected"] else []) + q.get("also", [])
        ranks = [ids.index(w) + 1 for w in wanted if w in ids]
        rank = ids.index(q["expected"]) + 1 if q["expected"] in ids else 0
        rows.append({"session": q["session"], "set": q["set"], "kind": q["kind"], "from": q["from"],
                     "expected": q["expected"], "also": q.get("also", []), "rank": rank,
                     "ceiling": ceiling(q["query"], q["expected"], shaped),
                     "rank_any": min(ranks) if ranks else 0, "returned": len(ids), "top": ids[:3],
                     "query": q["query"]})
    groups = []
    for name in SETS + ("all",):
        in_set = [r for r in rows if name in ("all", r["set"])]
        for kind in KINDS + ("all",):
            sel = [r for r in in_set if kind in ("all", r["kind"])]
            if sel:
                groups.append(dict({"set": name, "kind": kind}, **_group(sel)))
        for source in ("tool_result", "tool_use", "user_prompt", "subagent_prompt", "assistant_text"):
            sel = [r for r in in_set if not r["expected"] and r["from"] == source]
            if sel:
                groups.append(dict({"set": name, "kind": "null from " + source}, **_group(sel)))
    return {"schema": 1, "cards": len(cards),
            "gold_cards": sum(1 for c in cards if c.get("source") != "confuser"),
            "queries": len(rows), "top": TOP, "groups": groups, "rows": rows}


def _cell(value, fmt: str) -> str:
    return format(value, fmt) if value is not None else "-"


def print_real(data: dict, show: bool) -> None:
    print(f"real set: {data['queries']} queries over {data['cards']} cards "
          f"({data['gold_cards']} from gold lessons, {data['cards'] - data['gold_cards']} confusers)")
    print(f"{'set':<9} {'kind':<26} {'n':>4} {'ans':>4} {'R@5':>6} {'MRR@5':>6} {'R@5any':>6} "
          f"{'ceil':>6} {'ret':>6} {'null':>4} {'nullret':>7} {'silent':>6}")
    for g in data["groups"]:
        print(f"{g['set']:<9} {g['kind']:<26} {g['queries']:>4} {g['answerable']:>4} "
              f"{_cell(g.get('recall_at_5'), '.3f'):>6} {_cell(g.get('mrr_at_5'), '.3f'):>6} "
              f"{_cell(g.get('recall_at_5_any'), '.3f'):>6} {_cell(g.get('ceiling_at_5'), '.3f'):>6} "
              f"{_cell(g.get('returned_mean'), '.1f'):>6} "
              f"{g['null']:>4} {_cell(g.get('null_returned_mean'), '.1f'):>7} "
              f"{_cell(g.get('null_silent'), '.3f'):>6}")
    print("R@5, MRR@5: the expected card in the top 5 (reciprocal rank); R@5any: the expected card or "
          "one of `also`; ceil: R@5 of plain BM25 with no floor or cut (what any floor could reach); "
          "ret: cards returned for answerable queries; nullret, silent: cards returned "
          "for queries whose expected is null, and the share that returned nothing.")
    if show:
        for r in data["rows"]:
            if r["expected"] and r["rank"] != 1:
                print(f"  rank {r['rank'] or '-'} [{r['set']} {r['kind']}] {r['session']} -> {r['expected']} "
                      f"(top {r['top']}): {r['query'][:90]!r}")
            elif not r["expected"] and r["returned"]:
                print(f"  null returned {r['returned']} [{r['set']} {r['kind']}] {r['session']} "
                      f"(top {r['top']}): {r['query'][:90]!r}")


def main_real(args) -> int:
    data = {}
    if args.set == "both":
        data["old"] = measure()
    data["real"] = measure_real()
    if args.format == "json":
        print(json.dumps(data if args.set == "both" else data["real"], indent=1, ensure_ascii=False))
        return 0
    if "old" in data:
        old = data["old"]
        print(f"old set: {old['queries']} queries over {old['cards']} cards: recall@5 {old['recall_at_5']:.3f}, "
              f"MRR {old['mrr']:.3f}; {old['unanswerable_silent']}/{old['unanswerable']} "
              "unanswerable queries returned nothing")
    print_real(data["real"], args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
