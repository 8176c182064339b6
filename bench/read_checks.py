#!/usr/bin/env python3
"""What checking every store line against its kind's schema costs on read (issue 14).

Builds the synthetic store of ``store_scale.py`` and measures the CPU time of loading
every JSONL file and folding cards and recommendations, with the read checks on and
with them replaced by a no-op, in the same process; prints medians and the per-line cost.
Usage: python3 bench/read_checks.py [--cards 10000] [--runs 7]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
from store_scale import build_store  # noqa: E402

from selflearn.storage import model, paths  # noqa: E402
from selflearn.storage.memory import Memory  # noqa: E402

NAMES = ("cards", "recs", "signals", "events", "observations", "surfacings")


def load_all(root: str) -> int:
    memory = Memory(root)
    lines = sum(len(memory.load(name)) for name in NAMES)
    memory.folded("cards")
    memory.folded("recs")
    return lines


def cpu(root: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        load_all(root)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as repo:
        build_store(repo, args.cards)
        root = paths.project_store(repo, "bench")
        lines = load_all(root)
        checked = model.LineCheck.problem
        on = cpu(root, args.runs)
        model.LineCheck.problem = lambda self, record: None
        off = cpu(root, args.runs)
        model.LineCheck.problem = checked
    print(f"python {sys.version.split()[0]}, {args.cards} cards, {lines} lines, "
          f"{args.runs} runs, CPU medians")
    print(f"read + fold, checks off   {off * 1000:8.0f} ms")
    print(f"read + fold, checks on    {on * 1000:8.0f} ms")
    print(f"cost: {(on - off) / lines * 1e6:.2f} us per line, {100 * (on / off - 1):.0f}% of the "
          "read")


if __name__ == "__main__":
    main()
