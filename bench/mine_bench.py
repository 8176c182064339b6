#!/usr/bin/env python3
"""mine (every kind): a full run over N observations, then an incremental run after 1,000 more.

Builds a synthetic observations.jsonl in a throwaway store (a few hundred
interleaved sessions; prompts, pre_tool, successes, one-off failures and
planted failures repeated across sessions, some followed by a fix; edits and
their corrections; permission requests, approvals and denials; npm/pnpm runs;
commands a config.json skill_bypass rule maps to a skill), runs `mine` as a
subprocess twice and prints both wall times, their ratio, each run's peak
memory (max RSS from wait4's rusage) and the clusters kept per kind.
Usage: python3 bench/mine_bench.py [--n 1000000] [--sessions 300] [--keep]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "self_learning.py")
sys.path.insert(0, os.path.join(REPO, "scripts"))

from selflearn.storage import fastjson, model  # noqa: E402

PLANTED = [  # (command, family, error with {n} varying parts, fix or "")
    ("bash -lc 'cd /work/p{n} && npm test'", "npm test",
     "Error: Cannot find module 'm{n}'\n- /tmp/tmpa{n}b/index.js", "sh -c 'cd /work/p{n} && npm test'"),
    ("pytest tests/test_{n}.py", "pytest", "ImportError while loading conftest '/tmp/t{n}/conftest.py'.",
     "python3 -m pytest tests/test_{n}.py"),
    ("git push origin f{n}", "git push", "error: failed to push some refs to 'origin{n}'",
     "git pull --rebase origin f{n}"),
    ("make build", "make build", "make: *** [Makefile:{n}: build] Error 2", ""),
    ("go test ./...", "go test", "go: cannot find main module in /tmp/tmp{n}x", "cd svc{n} && go test ./..."),
] + [(f"tool{i} run --id {{n}}", f"tool{i} run", f"Error: resource r{i} busy since {{n}}s", "")
     for i in range(15)]


class Gen:
    """Observations in file order: sessions interleaved, ids and times increasing."""

    def __init__(self, seed: int, sessions: int, start: float):
        self.rng = random.Random(seed)
        self.sessions = [f"{self.rng.getrandbits(128):032x}" for _ in range(sessions)]
        self.clock, self.n, self.queue = start, 0, []

    def obs(self, sid: str, event: str, **kw) -> dict:
        self.n += 1
        self.clock += 0.25
        return {"v": 1, "id": f"obs_{self.n:08d}", "ts": model.iso(self.clock), "agent": "claude",
                "session_id": sid, "event": event, **kw}

    def turn(self, sid: str) -> list:
        """A short burst of one session: a prompt or a few tool calls."""
        rng, r = self.rng, self.rng.random()
        n = rng.randint(1, 10 ** 6)
        if r < 0.08:
            return [self.obs(sid, "prompt", prompt=f"please fix issue {n} in module {n % 97}")]
        if r < 0.105:  # a planted failure, sometimes fixed right after
            cmd, family, error, fix = PLANTED[rng.randrange(len(PLANTED))]
            out = [self.obs(sid, "pre_tool", tool="Bash", tool_kind="shell",
                            args=cmd.format(n=n), family=family),
                   self.obs(sid, "tool_failure", tool="Bash", tool_kind="shell", outcome="failure",
                            args=cmd.format(n=n), family=family, error=error.format(n=n), exit_code=1)]
            if fix and rng.random() < 0.7:
                out.append(self.obs(sid, "tool_success", tool="Bash", tool_kind="shell",
                                    outcome="success", args=fix.format(n=n), family=family))
            return out
        if r < 0.115:
            return self.other_kinds(sid, n)
        if r < 0.13:  # a one-off failure
            word = "".join(rng.choice("ghijklmnopqrstuvwxyz") for _ in range(10))
            return [self.obs(sid, "tool_failure", tool="Bash", tool_kind="shell", outcome="failure",
                             args=f"{word} --check", family=word, error=f"fatal: {word} broke",
                             exit_code=2)]
        kind = rng.choice(("shell", "shell", "read", "edit", "search"))
        fields = ({"tool": "Bash", "tool_kind": "shell", "args": f"ls -la src/{n}",
                   "family": "ls"} if kind == "shell" else
                  {"tool": kind.title(), "tool_kind": kind, "args": f"/repo/src/file_{n}.py",
                   "file": f"/repo/src/file_{n}.py"})
        return [self.obs(sid, "pre_tool", **fields),
                self.obs(sid, "tool_success", outcome="success", duration_ms=n % 5000,
                         cwd="/repo", **fields)]

    def other_kinds(self, sid: str, n: int) -> list:
        """A correction of the agent's own edit, a permission asked or refused, a package
        manager that fails next to one that works, or a command mapped to a skill."""
        rng, shell = self.rng, {"tool": "Bash", "tool_kind": "shell"}
        r, path = rng.random(), f"/repo/src/m{n % 500}.py"
        if r < 0.3:
            old, new = rng.choice((("load", "safe_load"), ("assertEquals", "assertEqual"),
                                   (f"v{n}", f"w{n}")))
            edit = {"tool": "Edit", "tool_kind": "edit", "file": path, "args": path,
                    "outcome": "success"}
            return [self.obs(sid, "tool_success", edit_old="", edit_new=f"x{n} = y.{old}(f)",
                             **edit),
                    self.obs(sid, "tool_success", edit_old=f"x{n} = y.{old}(f)",
                             edit_new=f"x{n} = y.{new}(f)", **edit)]
        if r < 0.5:
            uid = f"toolu_{n:08d}"
            return [self.obs(sid, "permission_request", args="pnpm install",
                             family="pnpm install", tool_use_id=uid, **shell),
                    self.obs(sid, "tool_success", args="pnpm install", family="pnpm install",
                             tool_use_id=uid, outcome="success", **shell)]
        if r < 0.65:
            return [self.obs(sid, "permission_denied", args=f"rm -rf build{n}", family="rm",
                             reason="destructive command", **shell)]
        if r < 0.9:
            ok = rng.random() < 0.6
            return [self.obs(sid, "tool_success" if ok else "tool_failure",
                             args="pnpm test" if ok else "npm test",
                             family="pnpm test" if ok else "npm test",
                             outcome="success" if ok else "failure",
                             **({} if ok else {"error": "npm ERR! lockfile", "exit_code": 1}),
                             **shell)]
        return [self.obs(sid, "tool_success", args=f"npm publish --tag t{n}",
                         family="npm publish", outcome="success", **shell)]

    def lines(self, count: int):
        """``count`` encoded lines, sessions interleaved eight at a time."""
        out, active = [], self.rng.sample(self.sessions, 8)
        while len(out) < count:
            if self.rng.random() < 0.002:  # a session ends, another starts
                active[self.rng.randrange(8)] = self.rng.choice(self.sessions)
            for record in self.turn(self.rng.choice(active)):
                out.append((fastjson.dumps(record) + "\n").encode())
        return out[:count]


def run_mine(env: dict):
    """Wall seconds, peak RSS in MiB (this child's own, from wait4) and the JSON output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, SCRIPT, "mine", "--format", "json"], env=env,
                                stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            sys.exit(f"mine failed: {err.read().decode()}")
        return elapsed, usage.ru_maxrss / 1024, json.loads(out.read())  # KiB on Linux


def build(path: str, n: int, sessions: int, append: bool) -> None:
    """Write ``n`` observations to ``path`` (``append``: from 20 new sessions, later ids and times)."""
    gen = Gen(2 if append else 1, sessions, model.parse_ts("2027-01-01" if append else "2026-01-01"))
    if append:
        gen.sessions = [f"new{i:029x}" for i in range(20)]  # new sessions: cards get reinforced
        gen.n = 10 ** 8
    with open(path, "ab" if append else "wb") as fh:
        while n:
            chunk = gen.lines(min(n, 50_000))
            fh.write(b"".join(chunk))
            n -= len(chunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="observations in the log")
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--keep", action="store_true", help="keep the temp store and print it")
    parser.add_argument("--build", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--append", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:  # a child of its own, so the measuring parent stays small
        build(args.build, args.n, args.sessions, args.append)
        return
    repo = tempfile.mkdtemp(prefix="mine-bench-")
    try:
        env = {**os.environ, "SELF_LEARNING_REPO_ROOT": repo, "SELF_LEARNING_USER": "bench"}
        store = os.path.join(repo, ".agent-skills", "self-learning", "v1", "users", "bench")
        os.makedirs(store)
        with open(os.path.join(repo, ".agent-skills", "self-learning", "config.json"), "w") as fh:
            json.dump({"skill_bypass": [{"pattern": r"^npm publish\b", "skill": "release"}]}, fh)
        path = os.path.join(store, "observations.jsonl")
        me = [sys.executable, os.path.abspath(__file__), "--build", path,
              "--sessions", str(args.sessions)]
        t0 = time.perf_counter()
        subprocess.run(me + ["--n", str(args.n)], check=True)
        built = time.perf_counter() - t0
        size = os.path.getsize(path)
        full, peak_full, data_full = run_mine(env)
        subprocess.run(me + ["--n", "1000", "--append"], check=True)
        incr, peak_incr, data_incr = run_mine(env)
        state = os.path.getsize(os.path.join(store, "mine_state.json"))
        created = sum(e["action"] == "created" for e in data_full["lessons"])
        reinforced = sum(e["action"] == "reinforced" for e in data_incr["lessons"])
        print(f"python {sys.version.split()[0]} on {os.uname().machine}, {os.cpu_count()} cores")
        print(f"log: {args.n:,} observations, {size / 2**20:.1f} MiB, {args.sessions} sessions "
              f"(built in {built:.1f} s)")
        print(f"{'run':<34} {'wall s':>8} {'read':>10} {'parsed':>8} {'written':>8}")
        print(f"{'full mine':<34} {full:>8.2f} {data_full['observations_read']:>10,} "
              f"{data_full['parsed']:>8,} {created:>8}")
        print(f"{'incremental (+1,000 observations)':<34} {incr:>8.3f} "
              f"{data_incr['observations_read']:>10,} {data_incr['parsed']:>8,} {reinforced:>8}"
              f"  ({data_incr['unchanged']} already up to date)")
        print(f"ratio full / incremental: {full / incr:.0f}x; peak RSS of the mine runs: "
              f"{peak_full:.0f} MiB (full), {peak_incr:.0f} MiB (incremental); "
              f"checkpoint {state / 1024:.0f} KiB")
        print("clusters kept: " + ", ".join(f"{kind} {n:,}" for kind, n in
                                            data_incr["clusters"].items()))
        kinds = {}
        for e in data_full["lessons"]:
            kinds[e["kind"]] = kinds.get(e["kind"], 0) + (e["action"] == "created")
        print("cards created by the full run: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    finally:
        if args.keep:
            print(f"kept {repo}")
        else:
            shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
