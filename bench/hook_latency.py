#!/usr/bin/env python3
"""Hook latency: median wall time of `hook` on a realistic PostToolUse payload.

Prints the hook's median next to `python3 -S -c pass` measured in the same
run, and their ratio (target: <= 1.3x), plus a second firing of each event
(a double registration: the twin check drops it). Each run is a new tool use.
``--event pre`` times PreToolUse instead, with a trigger table of 50 lessons of other
commands in the store (the hook reads it at every call: the lookup's cost, no match).
``--command-kb N`` makes the Bash command N KB long (``pip3 install requests requests …``, a
family the table has a lesson for, so the note at the call is matched in full: damage3-11 sent
10 MB). Runs against a throwaway repo. ``--against`` times another copy of the entry point in
the same loop (e.g. the code before a change: ``git archive HEAD scripts | tar -x -C DIR``).
Usage: python3 bench/hook_latency.py [--runs 200] [--event post|pre] [--command-kb N]
                                    [--against DIR/scripts/self_learning.py]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "self_learning.py")

PAYLOAD = {
    "session_id": "6222191a-a9ee-46dc-883b-2f8399a13900",
    "transcript_path": "/home/user/.claude/projects/-tmp-project/6222191a.jsonl",
    "cwd": "/tmp/project", "permission_mode": "default", "hook_event_name": "PostToolUse",
    "tool_name": "Bash", "tool_use_id": "toolu_01ABCDEF",
    "tool_input": {"command": "npm test -- --runInBand", "description": "Run the tests"},
    "tool_response": {"stdout": "PASS src/app.test.js\n" * 40 + "Tests: 40 passed, 40 total\n",
                      "stderr": "", "interrupted": False, "isImage": False},
}


def timed(cmd, stdin: bytes, env) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, check=False)
    return time.perf_counter() - start


def _table(root: str) -> None:
    """A trigger table of 50 lessons about other commands, as the learning step writes it."""
    store = os.path.join(root, ".agent-skills", "self-learning", "v1", "users", "bench")
    os.makedirs(store)
    with open(os.path.join(store, "triggers.jsonl"), "w") as fh:
        for n in range(50):
            fh.write(json.dumps({"family": f"tool{n} build", "id": f"aha_{n:04d}", "at": "call",
                                 "error": ["some", "error", "words"], "note": "x" * 400}) + "\n")
        fh.write(json.dumps({"family": "pip3 install", "id": "aha_pip3", "at": "call",
                             "needs": ["never-said"], "note": "x" * 400}) + "\n")


def _counted(cmd, stdin: bytes, env) -> int:
    """Instructions a command runs (callgrind; the interpreter itself, not a shim)."""
    real = os.path.realpath(sys.executable)
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           real, *cmd[1:]], input=stdin, capture_output=True, env=env, check=False)
    line = next(ln for ln in done.stderr.decode().splitlines() if "Collected" in ln)
    return int(line.split()[-1])


def _instructions(hooks, base_cmd, payload_of, scripts) -> None:
    base = _counted(base_cmd, b"", hooks[0][0])
    print(f"python {sys.version.split()[0]}, instructions (valgrind callgrind)")
    print(f"{'python3 -S -c pass':<40} {base:>12,}")
    for n, (env, cmd) in enumerate(hooks):
        payload = json.dumps(dict(payload_of, tool_use_id=f"toolu_ir{n}")).encode()
        count = _counted(cmd, payload, env)
        name = scripts[n] if n else f"hook ({payload_of['hook_event_name']})"
        print(f"{name:<40} {count:>12,}  {count / base:.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--against", help="another self_learning.py, timed interleaved")
    parser.add_argument("--event", choices=("post", "pre"), default="post")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions with valgrind's callgrind instead of timing "
                        "(repeatable on a busy machine; needs valgrind)")
    parser.add_argument("--command-kb", type=int, default=0,
                        help="a Bash command this many KB long (pip3 install requests …)")
    args = parser.parse_args()
    payload_of = PAYLOAD if args.event == "post" else {
        k: v for k, v in dict(PAYLOAD, hook_event_name="PreToolUse").items()
        if k != "tool_response"}
    if args.command_kb:
        command = "pip3 install" + " requests" * (args.command_kb * 1024 // 9)
        payload_of = dict(payload_of, tool_input={"command": command})
    runs, scripts = args.runs, [SCRIPT] + ([args.against] if args.against else [])
    with tempfile.TemporaryDirectory() as tmp:
        base_cmd = [sys.executable, "-S", "-c", "pass"]
        hooks = []  # (env, command) per script, each with its own store
        for n, script in enumerate(scripts):
            env = {**os.environ, "SELF_LEARNING_REPO_ROOT": os.path.join(tmp, str(n)),
                   "SELF_LEARNING_USER": "bench"}
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # agents run hooks with bytecode caching on
            os.mkdir(env["SELF_LEARNING_REPO_ROOT"])
            if args.event == "pre":
                _table(env["SELF_LEARNING_REPO_ROOT"])
            hooks.append((env, [sys.executable, "-S", script, "hook", "--agent", "claude"]))
            timed(hooks[-1][1], json.dumps(payload_of).encode(), env)  # warm the bytecode cache
        if args.instructions:
            _instructions(hooks, base_cmd, payload_of, scripts)
            return
        base, hook, twin = [], [[] for _ in hooks], [[] for _ in hooks]
        for i in range(runs):  # interleave so machine noise hits all alike
            payload = json.dumps(dict(payload_of, tool_use_id=f"toolu_{i:08d}")).encode()
            base.append(timed(base_cmd, b"", hooks[0][0]))
            for n, (env, cmd) in enumerate(hooks):
                hook[n].append(timed(cmd, payload, env))
                twin[n].append(timed(cmd, payload, env))  # the same event again: stored once
        lines = [open(os.path.join(env["SELF_LEARNING_REPO_ROOT"], ".agent-skills/self-learning/v1/"
                                   "users/bench/observations.jsonl")).read().count("\n")
                 for env, _ in hooks]
    b = statistics.median(base) * 1000
    print(f"python {sys.version.split()[0]} on {os.uname().machine}, {os.cpu_count()} cores, {runs} runs each")
    print(f"{'command':<40} {'median ms':>10}")
    print(f"{'python3 -S -c pass':<40} {b:>10.2f}")
    for n, script in enumerate(scripts):
        h, t = statistics.median(hook[n]) * 1000, statistics.median(twin[n]) * 1000
        if n:
            print(f"--against {script}")
        event = "PostToolUse" if args.event == "post" else "PreToolUse, 50 triggers"
        said = f"{args.command_kb} KB pip3 install" if args.command_kb else "npm test"
        print(f"{f'hook ({event}, Bash {said})':<40} {h:>10.2f}")
        print(f"{'same event again (second registration)':<40} {t:>10.2f}")
        print(f"ratio hook / bare interpreter: {h / b:.2f}x (target <= 1.30x); {lines[n]} "
              f"observations written for {runs + 1} events fired {2 * runs + 1} times")

if __name__ == "__main__":
    main()
