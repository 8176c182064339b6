#!/usr/bin/env python3
"""Injection latency: the hook on SessionStart and UserPromptSubmit, which print advice.

These are the only hook events that read the store (to rank learned notes);
every other event only appends. Builds the synthetic stores of
``store_scale.py`` (10 signals per card) at each size and prints, per size,
the median wall time of both events next to ``python3 -S -c pass`` and a
PostToolUse hook measured in the same run, and the characters injected; then the
ratio to start-up and the peak RSS of each event. ``--keep DIR`` reuses the stores
``store_scale.py --keep DIR`` built (the first hook run catches their index up, untimed).
Usage: python3 bench/advice_latency.py [--sizes 200,2000,20000] [--runs 15] [--keep DIR] [--cold]
"""
import argparse
import resource
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hook_latency import PAYLOAD, SCRIPT, timed  # noqa: E402
from store_scale import build_apart, reuse_or_build, run_child  # noqa: E402

EVENTS = {
    "SessionStart (startup)": {"hook_event_name": "SessionStart", "source": "startup"},
    "UserPromptSubmit": {"hook_event_name": "UserPromptSubmit",
                         "prompt": "the pytest fixture for the cache times out in CI again"},
    "PostToolUse (no advice)": {k: v for k, v in PAYLOAD.items() if k != "session_id"},
}


def payload(fields: dict) -> bytes:
    """One hook payload; every call is a session of its own, since the hook drops a second
    firing of the same event within ``TWIN_WINDOW`` seconds (it would print nothing)."""
    return json.dumps({"session_id": str(uuid.uuid4()), "cwd": "/tmp/project",
                       "transcript_path": "/tmp/t.jsonl", **fields}).encode()


def injected(cmd, stdin: bytes, env) -> int:
    out = subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False).stdout
    return len(out.decode("utf-8"))


def timed_cpu(cmd, stdin: bytes, env):
    """Wall and CPU seconds (user + system) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, stdin, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def peak_rss(cmd, stdin: bytes, env, scratch: str) -> float:
    """Peak RSS in MB of one run of ``cmd`` with ``stdin``."""
    path = os.path.join(scratch, "payload.json")
    with open(path, "wb") as fh:
        fh.write(stdin)
    return run_child(cmd, env, path, scratch)[1]


def measure(size: int, runs: int, keep=None, warm: bool = True) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        repo = reuse_or_build(keep, size)[0] if keep else scratch
        env = {**os.environ, "SELF_LEARNING_REPO_ROOT": repo, "SELF_LEARNING_USER": "bench"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # agents run hooks with bytecode caching on
        env.pop("SELF_LEARNING_NOW", None)
        if not keep:
            build_apart(repo, size)
        if warm:  # the safety screen's verdicts of the lessons these events print are known,
            # as in a store whose lessons were screened when written (`index` screens at most
            # 100 per run, in status and id order; `advice` remembers what it judged)
            prompt = EVENTS["UserPromptSubmit"]["prompt"]
            for args in (["index"], ["advice"], ["advice", "--query", prompt]):
                subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True,
                               check=True)
        hook = [sys.executable, "-S", SCRIPT, "hook", "--agent", "claude"]
        base = [sys.executable, "-S", "-c", "pass"]
        row = {"size": size, "base": [], **{name: [] for name in EVENTS}}
        cpu = {"base": [], **{name: [] for name in EVENTS}}
        chars = {name: injected(hook, payload(f), env) for name, f in EVENTS.items()}
        for _ in range(runs):  # interleaved so machine noise hits all alike
            for name, cmd, stdin in [("base", base, b"")] + [
                    (name, hook, payload(fields)) for name, fields in EVENTS.items()]:
                wall, spent = timed_cpu(cmd, stdin, env)
                row[name].append(wall)
                cpu[name].append(spent)
        row = {k: (statistics.median(v) * 1000 if isinstance(v, list) else v)
               for k, v in row.items()}
        row["cpu"] = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
        row["chars"] = chars
        row["rss"] = {name: peak_rss(hook, payload(f), env, scratch) for name, f in EVENTS.items()}
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000,20000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", metavar="DIR", help="reuse (or build once) stores under DIR")
    parser.add_argument("--cold", action="store_true",
                        help="no screen verdicts remembered (<store>/screened.json absent)")
    args = parser.parse_args()
    started = time.time()
    rows = [measure(int(s), args.runs, args.keep, not args.cold) for s in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]} on {os.uname().machine}, {os.cpu_count()} cores, "
          f"{args.runs} runs each; medians in ms (characters printed)")
    names = list(EVENTS)
    print(f"{'cards':>7} {'python3 -S':>11} " + " ".join(f"{n:>26}" for n in names))
    for r in rows:
        cells = " ".join(f"{r[n]:>17.1f} ({r['chars'][n]:>5})" for n in names)
        print(f"{r['size']:>7} {r['base']:>11.1f} {cells}")
    print("ratio to python3 -S -c pass (peak RSS MB):")
    for r in rows:
        cells = " ".join(f"{r[n] / r['base']:>17.1f}x ({r['rss'][n]:>5.0f})" for n in names)
        print(f"{r['size']:>7} {'':>11} {cells}")
    print("CPU time (user + system), medians in ms (ratio to python3 -S -c pass):")
    for r in rows:
        c = r["cpu"]
        cells = " ".join(f"{c[n]:>17.1f} ({c[n] / max(c['base'], 0.1):>4.1f}x)" for n in names)
        print(f"{r['size']:>7} {c['base']:>11.1f} {cells}")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = last["SessionStart (startup)"] / first["SessionStart (startup)"]
        print(f"SessionStart grows {growth:.1f}x for a {last['size'] // first['size']}x store; "
              f"{time.time() - started:.0f} s in all")


if __name__ == "__main__":
    main()
