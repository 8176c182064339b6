#!/usr/bin/env python3
"""Recall of `list --query` on a labelled set: agent-phrased queries over cards with confusers.

bench/recall/cards.json holds 80 lessons (several per topic, so near misses compete);
bench/recall/queries.json holds 64 queries phrased as an agent would ask, each with the one
card that answers it, plus queries nothing in the store answers. The cards are ranked as
`list --query` ranks them (surfacing.catalog.rank); prints recall@5, MRR and how many
unanswerable queries returned nothing.
Usage: python3 bench/recall_quality.py [--format text|json] [--show]
"""
import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "bench", "recall")
sys.path.insert(0, os.path.join(REPO, "scripts"))

from selflearn.surfacing import catalog  # noqa: E402

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
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
