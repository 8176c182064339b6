#!/usr/bin/env python3
"""The tuning / held-out split of the real recall set, decided by session before any query was read.

Every session of sessions/held-out/ (project entire-cli-heldout) is held out. For each other
project, its sessions are grouped (a subagent transcript `<id>-agent-<x>` goes with its parent
`<id>`, so a parent and its subagent never straddle the split), the groups are sorted, and one
random.Random(27), walked over the projects in sorted order, samples round(groups / 3) of them.
Writes split.json beside this file; never change the result afterwards.
Usage: python3 bench/recall/real/split.py [--check]
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "..", "learning", "manifest.json")
SEED = 27
# the projects the recall set was drawn from; sessions added to the manifest later (other
# held-out sets of the learning benchmark) are not part of it
PROJECTS = ("agentlogs", "claude-code-viewer", "entire-cli", "entire-cli-heldout", "spotter")


def group(session: str) -> str:
    return session.split("/", 1)[1].split("-agent-")[0]


def compute() -> dict:
    with open(MANIFEST, encoding="utf-8") as fh:
        sessions = [s for s in json.load(fh)["sessions"] if s["project"] in PROJECTS]
    by_project, held = {}, []
    for s in sessions:
        if s.get("set") == "held-out":
            held.append(s["session"])
        else:
            by_project.setdefault(s["project"], []).append(s["session"])
    rng = random.Random(SEED)
    picked = {}
    for project in sorted(by_project):
        groups = sorted({group(x) for x in by_project[project]})
        picked[project] = sorted(rng.sample(groups, round(len(groups) / 3)))
    out = {}
    for s in sessions:
        name = s["session"]
        if s.get("set") == "held-out" or group(name) in picked.get(s["project"], ()):
            out[name] = "held-out"
        else:
            out[name] = "tuning"
    return {"schema": 1, "seed": SEED, "held_out_groups": picked, "sessions": out}


def main() -> int:
    data = compute()
    path = os.path.join(HERE, "split.json")
    if "--check" in sys.argv:
        with open(path, encoding="utf-8") as fh:
            return 0 if json.load(fh) == data else 1
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
