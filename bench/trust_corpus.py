#!/usr/bin/env python3
"""Recall and false positives of redaction and of the safety screen on their corpora, and
what screening costs per lesson.

Reads tests/data/secrets/corpus.json and tests/data/injection/corpus.json (regenerate them
with their make_corpus.py). Prints one table; figures go in bench/README.md.
Run: ``python3 bench/trust_corpus.py``.
"""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from selflearn.storage import redact, screen  # noqa: E402


def load(*parts):
    with open(os.path.join(ROOT, "tests", "data", *parts), encoding="utf-8") as fh:
        return json.load(fh)


def main() -> int:
    secrets = load("secrets", "corpus.json")
    pos, neg = secrets["positives"], secrets["negatives"]
    t0 = time.perf_counter()
    missed = [p for p in pos if p["secret"] in redact.redact_text(p["text"])]
    flagged = [n for n in neg if redact.redact_text(n["text"]) != n["text"]]
    redact_ms = (time.perf_counter() - t0) * 1000 / (len(pos) + len(neg))
    formats = len({p["family"] for p in pos})
    print(f"redaction: {len(pos)} secrets in {formats} formats, {len(neg)} look-alikes")
    print(f"  recall {100 * (1 - len(missed) / len(pos)):.2f}% ({len(pos) - len(missed)}/{len(pos)})"
          f", false positives {100 * len(flagged) / len(neg):.2f}% ({len(flagged)}/{len(neg)}),"
          f" {redact_ms:.3f} ms per text")
    for p in missed:
        print(f"  missed {p['family']}: {p['text'][:80]!r}")
    inj = load("injection", "corpus.json")
    attacks, ordinary = inj["attacks"], inj["ordinary"]
    t0 = time.perf_counter()
    passed = [a for a in attacks if not screen.blocked(a["card"])]
    held = [o for o in ordinary if screen.blocked(o["card"])]
    screen_ms = (time.perf_counter() - t0) * 1000 / (len(attacks) + len(ordinary))
    styles = {}
    for a in attacks:
        styles.setdefault(a["style"], [0, 0])
        styles[a["style"]][0] += 1
        styles[a["style"]][1] += a not in passed
    print(f"safety screen: {len(attacks)} injection attempts, {len(ordinary)} ordinary lessons")
    print(f"  attempts held {len(attacks) - len(passed)}/{len(attacks)} ("
          + ", ".join(f"{s} {h}/{n}" for s, (n, h) in sorted(styles.items())) + ")")
    print(f"  ordinary lessons held {len(held)}/{len(ordinary)} "
          f"({100 * len(held) / len(ordinary):.1f}%), {screen_ms:.2f} ms per lesson")
    return 0


if __name__ == "__main__":
    sys.exit(main())
