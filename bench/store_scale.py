#!/usr/bin/env python3
"""Store scale: wall time and peak memory of record, list, review, index and the advice hooks
on big stores.

Builds synthetic project stores in a temp dir (N aha cards, a fifth of them
with 2-3 versions; 10 N signals; 300 recommendations; N/10 events), written
as the JSONL lines the tool itself writes. Each command runs as a fresh child
of the real CLI; its peak RSS comes from os.wait4. Also times an empty store,
so growth can be read net of interpreter start-up, and ``python3 -c pass`` for the
ratio to start-up (``python3 -S -c pass`` for the hooks). The derived index (index.sqlite3)
is timed three ways: the first command after it was deleted (a rebuild), commands on a
caught-up index, and today's full read (``SELF_LEARNING_INDEX=off``) for comparison. Each card
names an error code of its own; one query per store names one card (its title and code). A
second, "mixed" store per size (``MIXED_STATUSES``: 10% accepted, every card portable and
shareable, created over three years, each citing another repository's script) times the
session-start and prompt hooks and the list queries again (``--no-mixed`` skips it).
``--keep DIR`` builds each store once under DIR and reuses it on later runs (a 100k store
takes minutes).
Usage: python3 bench/store_scale.py [--sizes 1000,10000,100000] [--runs 3] [--keep DIR] [--no-mixed]
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "self_learning.py")
USER = "bench"
STORE_PARTS = (".agent-skills", "self-learning", "v1", "users", USER)
DAY = 86400
RECS = 300
SIGNALS_PER_CARD = 10
MULTI_VERSION_SHARE = 0.2
QUERY = "pytest cache read-only checkout"
RARE = "417"  # as in an identifier: src/<object>_417.py
PROMPT = "the pytest fixture for the cache times out in CI again"  # advice_latency.py's
HOOK = ["hook", "--agent", "claude"]  # run with ``python3 -S``, as install-hooks registers it
NAMED = "{named}"  # stands for the store's ``named`` query

TOOLS = ("pytest", "npm", "jq", "git", "docker", "pip", "poetry", "cargo", "go", "make", "tsc",
         "eslint", "ruff", "mypy", "kubectl", "terraform", "gradle", "maven", "node", "bash",
         "curl", "rsync", "sqlite", "postgres", "redis", "webpack", "vite", "jest", "playwright",
         "uvicorn", "django", "flask", "react", "helm", "ansible", "gh", "awk", "sed", "ssh")
VERBS = ("run", "pin", "cache", "skip", "retry", "rebuild", "clear", "export", "mock", "split",
         "quote", "escape", "lock", "bump", "vendor", "patch", "reset", "stub", "serialize",
         "parallelize", "prefetch", "normalize", "invalidate", "rename", "wrap", "shard")
OBJECTS = ("cache", "lockfile", "fixture", "snapshot", "env var", "timeout", "path", "migration",
           "schema", "config", "token scope", "worker pool", "test database", "build artifact",
           "dependency", "submodule", "locale", "timezone", "encoding", "port", "socket", "hook",
           "plugin", "container image", "virtualenv", "node_modules", "wheel", "manifest",
           "checksum", "read-only checkout", "CI runner", "monorepo package", "feature flag")
SITUATIONS = ("on CI", "in read-only checkouts", "behind a proxy", "on macOS", "in Docker",
              "after a rebase", "with a shallow clone", "on Windows paths", "in a monorepo",
              "with flaky network", "under load", "on a fresh machine", "after upgrading Python",
              "with stale caches", "in parallel runs", "without network", "on ARM runners")
FILLER = ("the", "when", "because", "fails", "hangs", "slow", "silently", "error", "output",
          "first", "again", "before", "after", "every", "only", "instead", "check", "wrong",
          "missing", "exit", "code", "log", "line", "file", "step", "build", "test", "deploy",
          "job", "local", "remote", "branch", "module", "import", "version", "flag", "option")
SKILLS = ("unknown", "python-testing", "webapp-testing", "docker-builds", "git-workflows",
          "ci-debugging", "data-pipelines")
CONTEXTS = ("fixed flaky test", "ci run", "local debugging", "release prep", "code review",
            "onboarding", "refactor")
SIGNAL_KINDS = (("aha_used", 45), ("aha_recalled", 20), ("aha_reinforced", 10), ("aha_status", 5),
                ("aha_observed", 5), ("aha_promoted", 1), ("rec_used", 8), ("rec_touched", 5),
                ("rec_done", 1))
CARD_STATUSES = (("proposed", 70), ("accepted", 20), ("dormant", 4), ("retired", 3),
                 ("rejected", 2), ("deprecated", 1))
# The "mixed" store (#28, item 18): as a years-old global store may hold it, 10% of the cards
# accepted, every card portable and shareable, created over MIXED_YEARS, and (MIXED_CITES) each
# citing a script of the repository it was learned in, which this one lacks: the session-start
# hook of the code before #28 read every card of it (about 3 s at 100k).
MIXED_STATUSES = (("proposed", 70), ("accepted", 10), ("dormant", 10), ("retired", 6),
                  ("rejected", 3), ("deprecated", 1))
MIXED_YEARS, MIXED_CITES = 3, 1.0


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def new_id(prefix: str, epoch: float, rng: random.Random) -> str:
    return f"{prefix}_{iso(epoch).replace('-', '').replace(':', '')}_{rng.getrandbits(24):06x}"


def dumps(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"  # the separators fastjson writes


class Text:
    """Realistic card text from small vocabularies plus identifiers that widen them."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def words(self, n: int) -> str:
        return " ".join(self.rng.choices(FILLER + TOOLS + OBJECTS, k=n))

    def ident(self) -> str:
        r = self.rng
        return f"src/{r.choice(OBJECTS).replace(' ', '_')}_{r.randrange(1000)}.{r.choice(('py', 'ts', 'go', 'yml'))}"

    def title(self) -> str:
        r = self.rng
        return (f"{r.choice(VERBS).capitalize()} the {r.choice(TOOLS)} {r.choice(OBJECTS)} "
                f"{r.choice(SITUATIONS)} to avoid {self.words(r.randint(2, 4))}")

    def card(self) -> dict:
        r = self.rng
        card = {
            "title": self.title(),
            "when_to_use": f"{r.choice(TOOLS)} {self.words(r.randint(8, 14))} {r.choice(SITUATIONS)}",
            "problem": f"{self.words(r.randint(20, 35))} in {self.ident()}",
            "solution_steps": [f"{r.choice(VERBS)} {self.words(r.randint(6, 12))} ({self.ident()})"
                               for _ in range(r.randint(2, 4))],
            "tags": list(dict.fromkeys(r.choices(TOOLS + ("ci", "flaky", "perf", "windows"),
                                                 k=r.randint(2, 4)))),
        }
        if r.random() < 0.4:
            card["evidence"] = [f"{r.choice(TOOLS)} {self.words(4)}", self.ident()]
        if r.random() < 0.25:
            card["gotchas"] = [self.words(r.randint(8, 14))]
        if r.random() < 0.3:
            card["scope"] = "portable"
        return card


def pick(rng: random.Random, weighted) -> str:
    return rng.choices([k for k, _ in weighted], [w for _, w in weighted])[0]


def error_code(i: int) -> str:
    """The error code card ``i`` names (each card one of its own, as a lesson names the error
    it answers): queries that answer need a word few cards hold."""
    return f"E{(i * 7919) % 999983:06d}"


def build_store(root: str, cards: int, seed: int = 1, mixed: bool = False) -> dict:
    """Write the store's JSONL files; returns line counts, bytes on disk and ``named``, a query
    that names one card (its title and error code). ``mixed``: the store ``MIXED_STATUSES``
    describes."""
    rng = random.Random(seed)
    text = Text(rng)
    folder = os.path.join(root, *STORE_PARTS)
    os.makedirs(folder)
    end = time.time() - 3600
    start = end - (MIXED_YEARS if mixed else 1) * 365 * DAY
    dt = (end - start) / max(cards, 1)

    card_lines, card_ids = [], []
    for i in range(cards):
        created = start + i * dt + rng.random() * dt
        body = text.card()
        body["problem"] += f" (error {error_code(i)})"
        if i == cards // 2:
            named = f"{body['title']} ({error_code(i)})"
        status = pick(rng, MIXED_STATUSES if mixed else CARD_STATUSES)
        mined = rng.random() < 0.1
        record = {**body, "v": 1, "id": new_id("aha", created, rng), "ts": iso(created),
                  "status": "candidate" if mined and status == "proposed" else status,
                  "origin": "mined" if mined else "agent",
                  "primary_skill": rng.choice(SKILLS), "scope": body.get("scope", "project"),
                  "shareable": rng.random() > 0.05}
        if mixed:
            record.update(scope="portable", shareable=True)
            if rng.random() < MIXED_CITES:  # its fix runs a script of another repository
                script = f"./scripts/{rng.choice(OBJECTS).replace(' ', '_')}_{rng.randrange(99)}.sh"
                record["solution_steps"] = [f"run {script} first", *record["solution_steps"]]
        if mined:
            record["confidence"] = round(rng.uniform(0.4, 0.95), 2)
        card_ids.append(record["id"])
        card_lines.append((created, i, dumps(record)))
        if rng.random() < MULTI_VERSION_SHARE:  # 2 or 3 versions: a status change, a merge
            when = created
            for _ in range(rng.randint(1, 2)):
                when = min(end, when + rng.uniform(0.1, 30) * DAY)
                record = dict(record, ts=iso(when))
                if rng.random() < 0.5:
                    record.update(status=rng.choice(("accepted", "dormant", "retired")),
                                  last_touched_ts=iso(when))
                else:
                    record["solution_steps"] = record["solution_steps"] + [text.words(8)]
                    record["tags"] = list(dict.fromkeys(record["tags"] + [rng.choice(TOOLS)]))
                card_lines.append((when, i, dumps(record)))
    card_lines.sort(key=lambda t: (t[0], t[1]))

    rec_ids, rec_lines = [], []
    for i in range(RECS):
        created = start + i * (end - start) / RECS
        rec = {"title": f"Add a {rng.choice(TOOLS)} {rng.choice(OBJECTS)} check to the skill",
               "why": text.words(rng.randint(10, 20)),
               "implementation_hint": f"edit {text.ident()}: {text.words(8)}",
               "expected_impact": {"speed": rng.choice(("high", "medium", "low")),
                                   "quality": rng.choice(("high", "medium", "low"))},
               "v": 1, "id": new_id("rec", created, rng), "ts": iso(created),
               "status": rng.choice(("proposed", "proposed", "accepted", "in_progress", "done")),
               "primary_skill": rng.choice(SKILLS), "scope": "project", "shareable": True}
        rec_ids.append(rec["id"])
        rec_lines.append(dumps(rec))

    n_signals = cards * SIGNALS_PER_CARD
    kinds, weights = [k for k, _ in SIGNAL_KINDS], [w for _, w in SIGNAL_KINDS]
    signal_lines = []
    for j in range(n_signals):  # in time order; a signal names a card or rec that exists by then
        when = start + (j + rng.random()) * (end - start) / n_signals
        kind = rng.choices(kinds, weights)[0]
        made = max(1, int((when - start) / dt))
        if kind.startswith("aha"):
            target = {"aha_id": card_ids[min(cards - 1, int(made * rng.random() ** 0.5))]}
        else:
            target = {"rec_id": rec_ids[min(RECS - 1, int((when - start) / (end - start) * RECS))]}
        signal = {"kind": kind, **target, "source": rng.choice(("record", "manual", "cli", "hook"))}
        if rng.random() < 0.3:
            signal["context"] = rng.choice(CONTEXTS)
        signal.update(v=1, id=new_id("sig", when, rng), ts=iso(when))
        signal_lines.append(dumps(signal))

    event_lines = []
    for k in range(cards // 10):
        when = start + (k + 0.5) * (end - start) / max(cards // 10, 1)
        event_lines.append(dumps({
            "task_summary": f"{rng.choice(VERBS)} {text.words(8)}",
            "notes": [text.words(10) for _ in range(rng.randint(1, 3))],
            "outcome": rng.choice(("success", "partial", "failed")),
            "v": 1, "id": new_id("evt", when, rng), "ts": iso(when),
            "primary_skill": rng.choice(SKILLS)}))

    files = {"aha_cards.jsonl": [line for _, _, line in card_lines],
             "recommendations.jsonl": rec_lines, "signals.jsonl": signal_lines,
             "events.jsonl": event_lines}
    size = 0
    for name, lines in files.items():
        data = "".join(lines).encode("utf-8")
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(data)
        size += len(data)
    return {"card_lines": len(card_lines), "signals": n_signals, "recs": RECS,
            "events": len(event_lines), "mb": size / 1e6, "named": named}


def build_apart(root: str, cards: int, mixed: bool = False) -> dict:
    """``build_store`` in a child process, so this one stays small: a command spawned later
    starts out in this process's memory (posix_spawn), and its peak RSS would count it."""
    import multiprocessing
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(build_store, (root, cards, 1, mixed))


def reuse_or_build(parent: str, size: int, mixed: bool = False):
    """The store of ``size`` cards under ``parent`` (built once; ``built.json`` marks it):
    ``<size>``, or ``<size>-mixed`` for the mixed store."""
    root = os.path.join(parent, f"{size}-mixed" if mixed else str(size))
    marker = os.path.join(root, "built.json")
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as fh:
            info = json.load(fh)
        if "named" in info:  # else built by an older version of this script: again
            return root, info
    if os.path.exists(root):
        import shutil
        shutil.rmtree(root)
    info = build_apart(root, size, mixed)
    with open(marker, "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    return root, info


def run_child(argv, env, stdin_path: str, out_dir: str):
    """Wall seconds and peak RSS (MB) of one fresh child; fails loudly on a non-zero exit."""
    out, err = os.path.join(out_dir, "stdout"), os.path.join(out_dir, "stderr")
    actions = [(os.POSIX_SPAWN_OPEN, 0, stdin_path, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    begin = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - begin
    with open(err, encoding="utf-8", errors="replace") as fh:
        talk = fh.read()
    if status != 0 or "warning" in talk:
        sys.exit(f"store_scale: {' '.join(argv[2:])} failed (status {status}):\n{talk}")
    # Linux reports ru_maxrss in KiB, macOS in bytes
    rss = usage.ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)
    return seconds, rss


COMMANDS = (
    ("rebuild", "first command after index.sqlite3 was deleted (list --query; rebuilds it)",
     ["list", "--query", QUERY]),
    ("record", "record (one card via stdin; also regenerates INDEX.md)", ["record"]),
    ("list", f"list --query {QUERY!r}", ["list", "--query", QUERY]),
    ("rare", f"list --query {RARE!r} (a word in under 1% of the cards; the words above are in "
             "50-80% each)", ["list", "--query", RARE]),
    ("review", "review", ["review"]),
    ("review-json", "review --format json", ["review", "--format", "json"]),
    ("index", "index (INDEX.md regeneration)", ["index"]),
    ("fullread", "list --query with SELF_LEARNING_INDEX=off (today's full read)",
     ["list", "--query", QUERY]),
    ("named", "list --query <one card's title and error code> (a query that answers)",
     ["list", "--query", NAMED]),
    ("start", "session-start hook (Claude Code SessionStart: the workspace advice)", HOOK),
    ("prompt", f"prompt hook (UserPromptSubmit {PROMPT!r})", HOOK),
    ("prompted", "prompt hook (UserPromptSubmit <one card's title and error code>)", HOOK),
)
# On the mixed store (``MIXED_STATUSES``): the hooks, whose walk depends on the statuses, and
# the list queries.
MIXED_COMMANDS = ("start", "prompt", "prompted", "list", "named")
HOOK_EVENTS = {"start": {"hook_event_name": "SessionStart", "source": "startup"},
               "prompt": {"hook_event_name": "UserPromptSubmit", "prompt": PROMPT},
               "prompted": {"hook_event_name": "UserPromptSubmit", "prompt": NAMED}}


def drop_index(root: str) -> None:
    folder = os.path.join(root, *STORE_PARTS)
    for name in os.listdir(folder):
        if name.startswith("index.sqlite3"):
            os.unlink(os.path.join(folder, name))


def measure(root: str, runs: int, env, scratch: str, label: int, names=None,
            named: str = "") -> dict:
    """Median seconds and max peak RSS of each command (of ``names``, else all) on the store
    under ``root``; ``named`` stands in for ``NAMED``."""
    out = {}
    for name, _, args in COMMANDS:
        if names is not None and name not in names:
            continue
        args = [named if a == NAMED else a for a in args]
        if name == "start":  # the lessons the hooks print were screened (as `record` does
            for warm in (["advice"], ["advice", "--query", PROMPT]):  # when they are written)
                subprocess.run([sys.executable, SCRIPT, *warm, "--repo-root", root], env=env,
                               capture_output=True, check=True)
        times, rss = [], []
        for n in range(runs):
            if name == "rebuild":
                drop_index(root)
            stdin = os.path.join(scratch, "stdin.json")
            with open(stdin, "w", encoding="utf-8") as fh:
                if name == "record":  # a new card each run, so it is created, not reinforced
                    card = Text(random.Random(n)).card()
                    card["title"] = f"Bench {label} run {n}: {card['title']}"
                    json.dump({"aha_cards": [card]}, fh)
                elif name in HOOK_EVENTS:  # a session of its own: a twin would print nothing
                    event = {k: named if v == NAMED else v for k, v in HOOK_EVENTS[name].items()}
                    json.dump({"session_id": f"bench-{label}-{name}-{n}-{random.random()}",
                               "cwd": root, **event}, fh)
            if name in HOOK_EVENTS:
                argv = [sys.executable, "-S", SCRIPT, *args]
                child_env = {**env, "SELF_LEARNING_REPO_ROOT": root}
            else:
                argv = [sys.executable, SCRIPT, *args, "--repo-root", root]
                child_env = {**env, "SELF_LEARNING_INDEX": "off"} if name == "fullread" else env
            seconds, peak = run_child(argv, child_env, stdin, scratch)
            times.append(seconds)
            rss.append(peak)
        out[name] = (statistics.median(times), max(rss))
    return out


def verdict(exponent: float) -> str:
    """Words for the growth exponent k in time ~ n^k (net of start-up)."""
    for limit, words in ((0.9, "sub-linear"), (1.05, "~linear"), (1.2, "mildly super-linear")):
        if exponent < limit:
            return f"{words} (n^{exponent:.2f})"
    return f"super-linear (n^{exponent:.2f})"


def report(results: dict, sizes, startup: float, bare: float, mixed: bool = False) -> None:
    """One table per command; hooks divide by ``bare`` (``python3 -S -c pass``), commands by
    ``startup``; ``mixed``: the rows of the mixed stores (``results[(size, "mixed")]``)."""
    base = results[0]
    for name, title, _ in COMMANDS:
        if mixed and name not in MIXED_COMMANDS:
            continue
        startup_of = bare if name in HOOK_EVENTS else startup
        print(f"\n{title}" + (" on the mixed store" if mixed else "")
              + (" ('x start': python3 -S)" if name in HOOK_EVENTS else ""))
        print(f"{'cards':>9} {'median s':>9} {'peak MB':>8} {'x start':>7} {'x time':>7} "
              f"{'x net':>7} {'x RSS':>6}  growth vs previous size")
        t0, m0 = base[name]
        print(f"{'empty':>9} {t0:>9.3f} {m0:>8.1f} {t0 / startup_of:>7.1f} {'':>7} {'':>7} {'':>6}  "
              "(empty store; 'x net' subtracts it)")
        prev = None
        for size in sizes:
            t, m = results[(size, "mixed") if mixed else size][name]
            cols = ["", "", ""]
            note = ""
            if prev:
                ps, pt, pm = prev
                ratio = size / ps
                net_prev, net = pt - t0, t - t0
                cols = [f"{t / pt:.1f}", "", f"{m / pm:.1f}"]
                if net_prev > 0.02 and net > 0:
                    cols[1] = f"{net / net_prev:.1f}"
                    note = f"{ratio:g}x cards: " + verdict(math.log(net / net_prev) / math.log(ratio))
                else:
                    note = f"{ratio:g}x cards: previous size too close to start-up to judge"
            print(f"{size:>9,} {t:>9.3f} {m:>8.1f} {t / startup_of:>7.1f} {cols[0]:>7} {cols[1]:>7} "
                  f"{cols[2]:>6}  {note}".rstrip())
            prev = (size, t, m)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="card counts, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs per command and size; the median is shown (default 3)")
    parser.add_argument("--keep", metavar="DIR",
                        help="build each store once under DIR and reuse it on later runs")
    parser.add_argument("--no-mixed", dest="mixed", action="store_false",
                        help="skip the mixed store (10%% accepted, all portable and shareable)")
    args = parser.parse_args()
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()} - {0})
    if not sizes or args.runs < 1:
        parser.error("give --sizes as positive card counts and --runs >= 1")

    env = {**os.environ, "SELF_LEARNING_USER": USER}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run with bytecode caching on
    for name in ("SELF_LEARNING_REPO_ROOT", "SELF_LEARNING_GLOBAL_DIR", "SELF_LEARNING_NOW",
                 "SELF_LEARNING_DISABLE"):
        env.pop(name, None)
    print(f"python {sys.version.split()[0]} on {os.uname().sysname} {os.uname().machine}, "
          f"{os.cpu_count()} cores; sizes {', '.join(f'{s:,}' for s in sizes)} cards; "
          f"{SIGNALS_PER_CARD} signals per card, {RECS} recommendations, 1 event per 10 cards; "
          f"median of {args.runs} runs, load average {os.getloadavg()[0]:.2f}")
    results, stores = {}, {}
    with tempfile.TemporaryDirectory(prefix="sl-store-scale-") as tmp:
        startup, bare = (statistics.median(
            run_child([sys.executable, *flags, "-c", "pass"], env, os.devnull, tmp)[0]
            for _ in range(max(5, args.runs * 3))) for flags in ([], ["-S"]))
        empty = os.path.join(tmp, "empty")
        os.makedirs(os.path.join(empty, *STORE_PARTS))
        measure(empty, 1, env, tmp, 0, named="E000000")  # warm the bytecode cache, untimed
        results[0] = measure(empty, args.runs, env, tmp, 0, named="E000000")
        for size in sizes:
            began = time.perf_counter()
            root, stores[size] = reuse_or_build(args.keep or tmp, size)
            print(f"store {size:,} cards: {stores[size]['card_lines']:,} card lines, "
                  f"{stores[size]['mb']:.0f} MB; ready in {time.perf_counter() - began:.1f} s",
                  file=sys.stderr, flush=True)
            results[size] = measure(root, args.runs, env, tmp, size,
                                    named=stores[size]["named"])
            print(f"  measured in {time.perf_counter() - began:.1f} s total", file=sys.stderr,
                  flush=True)
            roots = [root]
            if args.mixed:
                root, stores[(size, "mixed")] = reuse_or_build(args.keep or tmp, size, True)
                drop_index(root)  # its first command rebuilds the index, untimed
                run_child([sys.executable, SCRIPT, "index", "--repo-root", root], env,
                          os.devnull, tmp)
                results[(size, "mixed")] = measure(root, args.runs, env, tmp, size,
                                                   MIXED_COMMANDS,
                                                   stores[(size, "mixed")]["named"])
                roots.append(root)
                print(f"  mixed store measured in {time.perf_counter() - began:.1f} s total",
                      file=sys.stderr, flush=True)
            for root in roots if not args.keep else ():
                for name in os.listdir(os.path.join(root, *STORE_PARTS)):
                    os.unlink(os.path.join(root, *STORE_PARTS, name))  # free the disk as we go
        print(f"python3 -c pass: {startup * 1000:.1f} ms, python3 -S -c pass: {bare * 1000:.1f} ms "
              "(medians; 'x start' divides by the first, by the second for hooks)")
    for size in sizes:
        info = stores[size]
        print(f"store {size:,} cards: {info['card_lines']:,} card lines, {info['signals']:,} signals, "
              f"{info['recs']} recommendations, {info['events']:,} events, {info['mb']:.1f} MB")
    report(results, sizes, startup, bare)
    if args.mixed:
        print("\nThe mixed store: statuses " + ", ".join(f"{k} {w}%" for k, w in MIXED_STATUSES)
              + " (a fifth of the cards get 2-3 versions, some changing status), every card "
              f"portable and shareable, created over {MIXED_YEARS} years, {MIXED_CITES:.0%} citing "
              "a script of another repository (held back as stale here)")
        report(results, sizes, startup, bare, mixed=True)
    print("\nx time, x RSS: ratio to the previous size; x net: the same for time minus the "
          "empty-store start-up;\nn^k: the k with x net = (x cards)^k (~linear below 1.05, mildly "
          "super-linear below 1.2).\nrecord appends one card, then regenerates INDEX.md: it reads "
          "aha_cards.jsonl twice and\nevery other file once, so it costs about index plus one "
          f"card fold.\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
