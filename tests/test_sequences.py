"""mine --kind sequences: tool-sequence habits and long commands become proposals.

Sessions are synthetic: planted chains of commands (with reads and glue commands in
between) succeed in several sessions; noise sessions run random commands. The 72 h
window is checked against a fake clock (SELF_LEARNING_NOW).
"""
import json
import random

import pytest

from selflearn.learning import mine_sequences as seq
from selflearn.storage import model
from selflearn.storage import store as jsonl
from selflearn.learning.mine_base import Setup

BASE = 1772323200  # 2026-03-01T00:00:00Z
HOUR = 3600
CHAIN = ["npm run lint", "npm test", "git commit"]
OTHER = ["cargo fmt", "cargo clippy", "cargo test"]
LONG = "docker compose -f deploy/compose.yml up -d --build web"


class Sessions:
    """Writes whole sessions of observations (10 s apart) into the store's log."""

    def __init__(self, store):
        self.path = str(store / "observations.jsonl")
        self.n = 0
        self.records = []

    def obs(self, sid, t, event, **fields):
        self.n += 1
        record = {"v": 1, "id": f"obs_{self.n:06d}", "ts": model.iso(t), "agent": "claude",
                  "session_id": sid, "event": event, **fields}
        self.records.append(record)
        return record

    def session(self, sid, start, steps, prompt="release the app", end=True, stop_failure=False):
        """``steps``: a string is a succeeding shell command (its first two words are the
        family), ``("fail", cmd)`` a failing one, a dict a raw tool_success."""
        t = start
        self.obs(sid, t, "prompt", prompt=prompt)
        for step in steps:
            t += 10
            if isinstance(step, dict):
                self.obs(sid, t, "tool_success", **step)
                continue
            event, cmd = ("tool_failure", step[1]) if isinstance(step, tuple) else \
                ("tool_success", step)
            self.obs(sid, t, event, **shell(cmd))
        if stop_failure:
            self.obs(sid, t + 5, "stop_failure", reason="server_error")
        if end:
            self.obs(sid, t + 10, "session_end")
        return t + 10

    def flush(self):
        jsonl.append(self.path, self.records)
        self.records = []


def shell(cmd, family=None):
    words = cmd.split()
    family = family or " ".join(words[:3] if words[:2] == ["npm", "run"] else words[:2])
    return {"tool": "Bash", "tool_kind": "shell", "args": cmd, "family": family}


READ = {"tool": "Read", "tool_kind": "read", "file": "src/app.ts"}


def mine(run, monkeypatch, now, *args):
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(now))
    code, out, err = run(["mine", "--kind", "sequences", "--format", "json", *args])
    assert code == 0, err
    return json.loads(out)


def proposed(data, kind="skill"):
    return [e for e in data["proposals"] if e["action"] == "proposed" and e["kind"] == kind]


def with_glue(chain):
    """The chain as an agent runs it: reads, ls and git status between the steps."""
    out = []
    for cmd in chain:
        out += [READ, "ls -la", cmd, "git status"]
    return out


# --- the 72 h window, failures, quality -------------------------------------------------------

def test_three_sessions_within_72_hours_become_a_skill_proposal(run, store, monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * 30 * HOUR, with_glue(CHAIN), prompt=f"ship release {i}")
    log.flush()
    data = mine(run, monkeypatch, BASE + 61 * HOUR)
    [entry] = proposed(data)
    assert entry["sessions"] == 3 and entry["key"].startswith("mined:sequence:")
    assert set(entry) >= {"action", "id", "kind", "title", "sessions", "key"}
    assert entry["title"] == "Workflow: `npm run lint` \u2192 `npm test` \u2192 `git commit`"
    # the key is the order-normalized multiset of the tools: never the prompt
    assert entry["key"] == "mined:sequence:" + seq.digest("+".join(sorted(CHAIN)))


def test_the_same_sessions_spread_over_more_than_72_hours_are_not_a_habit(run, store,
                                                                          monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * 40 * HOUR, with_glue(CHAIN))
    log.flush()
    assert proposed(mine(run, monkeypatch, BASE + 81 * HOUR)) == []  # no 72 h hold all 3
    # a third session within 72 h of two others completes it; s0 still counts as a success
    log.session("s3", BASE + 82 * HOUR, with_glue(CHAIN))
    log.flush()
    data = mine(run, monkeypatch, BASE + 83 * HOUR)
    [entry] = proposed(data)
    assert entry["sessions"] == 4


def test_the_window_ends_at_the_newest_observation_so_history_counts(run, store, monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * HOUR, with_glue(CHAIN))
    log.flush()
    # mined (or ingested from transcripts) weeks later: the sessions were 1 hour apart
    assert len(proposed(mine(run, monkeypatch, BASE + 30 * 24 * HOUR, "--dry-run"))) == 1
    assert len(proposed(mine(run, monkeypatch, BASE + 10 * HOUR))) == 1


def test_any_72_hours_count_whatever_comes_later(run, store, monkeypatch):
    """Three sessions inside 72 h stay a habit after an unrelated later session, and older
    history ingested after newer observations is judged by its own time."""
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * HOUR, with_glue(CHAIN))
    log.session("later", BASE + 200 * HOUR, ["make docs"])
    log.flush()
    assert len(proposed(mine(run, monkeypatch, BASE + 201 * HOUR, "--dry-run"))) == 1
    log.session("new", BASE + 300 * HOUR, ["make docs"])
    log.flush()
    mine(run, monkeypatch, BASE + 301 * HOUR)  # mined up to here ...
    for i in range(3):  # ... then older history comes in bulk (ingest-transcripts)
        log.session(f"old{i}", BASE - 500 * HOUR + i * HOUR, with_glue(OTHER))
    log.flush()
    [entry] = proposed(mine(run, monkeypatch, BASE + 302 * HOUR))
    assert entry["title"] == "Workflow: `cargo fmt` \u2192 `cargo clippy` \u2192 `cargo test`"


def test_a_session_where_the_workflows_own_step_failed_counts_against_it(run, store,
                                                                        monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"ok{i}", BASE + i * HOUR, with_glue(CHAIN))
    for i in range(2):  # lint passes, the tests fail and stay failed: the session ends there
        log.session(f"bad{i}", BASE + (3 + i) * HOUR, with_glue(CHAIN[:1]) + [("fail", CHAIN[1])])
    log.flush()
    assert proposed(mine(run, monkeypatch, BASE + 8 * HOUR)) == []  # quality 3 - 2 x 2 < 0


def test_a_filed_proposal_shows_the_failures_after_it(run, store, monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"ok{i}", BASE + i * HOUR, with_glue(CHAIN))
    log.flush()
    [entry] = proposed(mine(run, monkeypatch, BASE + 5 * HOUR))
    for i in range(2):  # the workflow ran whole, its last step failed
        log.session(f"bad{i}", BASE + (6 + i) * HOUR, CHAIN[:2] + [("fail", CHAIN[2])])
    log.flush()
    data = mine(run, monkeypatch, BASE + 10 * HOUR)
    assert [(e["action"], e["id"]) for e in data["proposals"]] == [("updated", entry["id"])]
    code, out, err = run(["proposals", "list", "--format", "json"])
    [item] = json.loads(out)["items"]
    assert (item["sessions"], item["failures"], item["quality"]) == (3, 2, -1)
    assert sum(e.startswith("failed ") for e in item["evidence"]) == 2


def test_a_failed_session_does_not_count(run, store, monkeypatch):
    log = Sessions(store)
    log.session("ok1", BASE, with_glue(CHAIN))
    log.session("ok2", BASE + HOUR, with_glue(CHAIN))
    log.session("bad", BASE + 2 * HOUR, with_glue(CHAIN) + [("fail", "npm run build")])
    log.flush()
    assert proposed(mine(run, monkeypatch, BASE + 5 * HOUR)) == []


def test_a_stop_failure_fails_the_session_and_a_recovered_failure_does_not(run, store,
                                                                           monkeypatch):
    log = Sessions(store)
    log.session("ok1", BASE, with_glue(CHAIN))
    log.session("stopped", BASE + HOUR, with_glue(CHAIN), stop_failure=True)
    log.session("recovered", BASE + 2 * HOUR,
                [("fail", "npm run lint")] + with_glue(CHAIN))  # lint failed, then passed
    log.flush()
    assert proposed(mine(run, monkeypatch, BASE + 5 * HOUR)) == []  # 2 successes, 1 failure
    log.session("ok2", BASE + 3 * HOUR, with_glue(CHAIN))
    log.session("ok3", BASE + 4 * HOUR, with_glue(CHAIN))
    log.flush()
    [entry] = proposed(mine(run, monkeypatch, BASE + 6 * HOUR))
    assert entry["sessions"] == 4  # ok1, recovered, ok2, ok3; quality 4 - 2 x 1 = 2


@pytest.mark.parametrize("successes, failures, expected", [(3, 1, 1), (4, 2, 0), (5, 2, 1),
                                                           (3, 2, 0)])
def test_quality_must_be_positive(run, store, monkeypatch, successes, failures, expected):
    log = Sessions(store)
    for i in range(successes):
        log.session(f"ok{i}", BASE + i * 600, with_glue(CHAIN))
    for i in range(failures):
        log.session(f"bad{i}", BASE + 5 * HOUR + i * 600, with_glue(CHAIN) + [("fail", "make x")])
    log.flush()
    assert len(proposed(mine(run, monkeypatch, BASE + 10 * HOUR))) == expected


def test_order_is_normalized_and_the_dominant_order_is_proposed(run, store, monkeypatch):
    log = Sessions(store)
    log.session("a", BASE, CHAIN)
    log.session("b", BASE + HOUR, CHAIN)
    log.session("c", BASE + 2 * HOUR, [CHAIN[1], CHAIN[0], CHAIN[2]])
    log.flush()
    [entry] = proposed(mine(run, monkeypatch, BASE + 5 * HOUR))
    assert entry["sessions"] == 3 and "`npm run lint` \u2192 `npm test`" in entry["title"]


def test_glue_and_file_tools_are_not_habits(run, store, monkeypatch):
    log = Sessions(store)
    for i in range(4):
        log.session(f"s{i}", BASE + i * HOUR, [READ, "ls -la", "git status", "cat x", READ,
                                              "git diff", "grep -r foo ."])
    log.flush()
    data = mine(run, monkeypatch, BASE + 6 * HOUR)
    assert data["proposals"] == []


def test_overlapping_trigrams_of_the_same_sessions_are_one_chain(run, store, monkeypatch):
    chain = CHAIN + ["gh pr create"]
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * HOUR, with_glue(chain))
    log.flush()
    data = mine(run, monkeypatch, BASE + 5 * HOUR)
    [entry] = proposed(data)
    assert entry["title"].count("\u2192") == 3 and entry["title"].endswith("`gh pr`")
    assert len(data["proposals"]) == 1  # the second trigram is covered, not deferred


def test_mcp_web_and_task_steps_make_chains_and_noise_events_are_ignored(run, store,
                                                                         monkeypatch):
    log = Sessions(store)
    steps = [{"tool": "mcp__github__list_issues", "tool_kind": "mcp"}, {"tool": "WebFetch",
             "tool_kind": "web", "args": "https://example.com/docs"},
             {"tool": "mcp__db__query", "tool_kind": "mcp", "family": "db/query"},
             {"tool": "Task", "tool_kind": "task"}]
    for i in range(3):
        end = log.session(f"s{i}", BASE + i * HOUR, steps, end=False)
        log.obs(f"s{i}", end, "tool_failure", tool="Bash", tool_kind="shell", family="make test",
                error="Command interrupted by user", interrupted=True)  # ignored: no failure
        log.obs("", end, "tool_failure", tool="Bash", tool_kind="shell", family="make test")
        log.obs(f"s{i}", end, "notification", args="waiting")
        log.obs(f"s{i}", end + 1, "session_end")
    log.flush()
    [entry] = proposed(mine(run, monkeypatch, BASE + 5 * HOUR))
    assert entry["title"] == ("Workflow: `mcp:mcp__github__list_issues` \u2192 `web` \u2192 "
                              "`mcp:db/query` \u2192 `task`")


def test_sessions_stay_open_across_runs_and_close_when_idle(run, store, monkeypatch):
    log = Sessions(store)
    log.session("a", BASE, CHAIN[:2], end=False)
    log.session("b", BASE + 60, CHAIN, end=False)
    log.flush()
    mine(run, monkeypatch, BASE + 600)
    state = json.loads((store / "mine_state.json").read_text())["kinds"]["sequences"]["agg"]
    assert set(state["open"]) == {"a", "b"}  # still running: judged later
    log.obs("a", BASE + 700, "tool_success", **shell(CHAIN[2]))
    log.session("c", BASE + 800, CHAIN)
    log.flush()
    data = mine(run, monkeypatch, BASE + 3 * HOUR)  # a and b idle for > 2 h: closed
    [entry] = proposed(data)
    assert entry["sessions"] == 3
    state = json.loads((store / "mine_state.json").read_text())["kinds"]["sequences"]["agg"]
    assert state["open"] == {}


def test_state_stays_bounded(monkeypatch):
    monkeypatch.setattr(seq, "MAX_OPEN", 5)
    monkeypatch.setattr(seq, "MAX_PATTERNS", 20)
    monkeypatch.setattr(seq, "MAX_PER_PATTERN", 4)
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(BASE + 10 * HOUR))
    agg = {}
    run = seq.miner(agg, Setup("", {}))
    rng = random.Random(3)
    for i in range(60):
        sid = f"s{i}"
        for j in range(5):
            run.feed({"id": f"o{i}-{j}", "ts": model.iso(BASE + i * 60 + j), "session_id": sid,
                      "event": "tool_success", **shell(f"tool{rng.randint(1, 30)} go")})
        for j, step in enumerate(("lint go", "check go", "ship go")):  # one habit everywhere
            run.feed({"id": f"h{i}-{j}", "ts": model.iso(BASE + i * 60 + 6 + j),
                      "session_id": sid, "event": "tool_success", **shell(step)})
        assert len(agg["open"]) <= 5
    run.lessons()
    assert len(agg["patterns"]) <= 20
    assert all(len(p["ok"]) <= 4 for p in agg["patterns"].values())
    habit = [f for f in run.lessons() if f["proposal"]["steps"][-3:] == ["lint go", "check go",
                                                                      "ship go"]]
    assert habit and habit[0]["sessions"] == 4  # the latest 4 sessions are remembered


# --- long commands ---------------------------------------------------------------------------

def test_a_long_command_run_in_three_sessions_becomes_a_command_proposal(run, store,
                                                                         monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"s{i}", BASE + i * HOUR, [READ, LONG, "make help", "ls"])
    log.flush()
    data = mine(run, monkeypatch, BASE + 5 * HOUR)
    [entry] = proposed(data, "command")
    assert entry["key"] == "mined:command:" + seq.digest(LONG) and entry["sessions"] == 3
    assert proposed(data) == []  # one real step a session: no chain


def test_short_glue_or_cut_commands_are_not_command_proposals(run, store, monkeypatch):
    log = Sessions(store)
    cut = LONG + " && echo done"
    for i in range(3):
        log.session(f"s{i}", BASE + i * HOUR, ["make build", "ls -la /very/long/path/to/some/folder/x",
                                               {**shell(cut), "hash": {"args": "abc"}}])
    log.flush()
    assert mine(run, monkeypatch, BASE + 5 * HOUR)["proposals"] == []


# --- precision and recall over seeds -----------------------------------------------------------

VOCAB = [f"{tool} {verb}" for tool in ("cargo", "go", "mvn", "gradle", "terraform", "helm",
                                       "kubectl", "poetry", "pnpm", "deno")
         for verb in ("build", "check", "fmt", "plan", "apply", "lint")]


def planted_world(seed):
    """Planted chains (3–5 successful sessions within 72 h), decoys (2 sessions; 3 with a
    failure; 3 spread over 5 days) and noise sessions of random commands."""
    rng = random.Random(seed)
    pool = rng.sample(VOCAB, 30)
    chains = [pool[i * 3:i * 3 + 3] for i in range(10)]
    planted, decoys = chains[:5], chains[5:]
    sessions, t = [], BASE + 4 * 24 * HOUR
    for chain in planted:
        for _ in range(rng.randint(3, 5)):
            sessions.append((t - rng.randint(0, 60) * HOUR, chain, False))
    for i, chain in enumerate(decoys):
        if i % 3 == 0:
            sessions += [(t - rng.randint(0, 60) * HOUR, chain, False) for _ in range(2)]
        elif i % 3 == 1:
            sessions += [(t - rng.randint(0, 60) * HOUR, chain, n == 2) for n in range(3)]
        else:
            sessions += [(t - n * 40 * HOUR, chain, False) for n in range(3)]
    for _ in range(60):
        noise = [rng.choice(VOCAB) for _ in range(rng.randint(3, 6))]
        sessions.append((t - rng.randint(0, 70) * HOUR, noise, rng.random() < 0.2))
    return planted, sessions, t


def test_planted_chains_are_found_and_noise_is_not(monkeypatch, capsys):
    scores = []
    for seed in range(5):
        planted, sessions, now = planted_world(seed)
        rng = random.Random(seed)
        monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(now + HOUR))
        agg = {}
        miner = seq.miner(agg, Setup("", {}))
        n = 0
        for i, (start, chain, fails) in enumerate(sorted(sessions, key=lambda s: s[0])):
            sid = f"s{i}"
            steps = [s for cmd in chain for s in (READ, "ls", cmd)]
            if rng.random() < 0.3:  # some noise before the chain
                steps = [rng.choice(VOCAB)] + steps
            if fails:
                steps.append(("fail", "make deploy"))
            for j, step in enumerate(steps):
                n += 1
                fields = step if isinstance(step, dict) else shell(step[1] if isinstance(
                    step, tuple) else step)
                event = "tool_failure" if isinstance(step, tuple) else "tool_success"
                miner.feed({"id": f"o{n}", "ts": model.iso(start + j), "session_id": sid,
                            "event": event, **fields})
            miner.feed({"id": f"e{i}", "ts": model.iso(start + 99), "session_id": sid,
                        "event": "session_end"})
        found = {tuple(f["proposal"]["steps"]) for f in miner.lessons()
                 if f["proposal"]["kind"] == "skill" and not f["proposal"]["below"]}
        expected = {tuple(c) for c in planted}
        hits = found & expected
        scores.append((len(hits) / max(1, len(found)), len(hits) / len(expected)))
    precision = sum(p for p, _ in scores) / len(scores)
    recall = sum(r for _, r in scores) / len(scores)
    with capsys.disabled():
        print(f"\nsequences precision {precision:.2f} recall {recall:.2f} over 5 seeds "
              f"(5 planted chains, 5 decoys and 60 noise sessions each)")
    assert precision >= 0.95 and recall == 1.0


def test_recurs_is_none_for_single_observations():
    assert seq.recurs({"event": "tool_success", **shell("npm test")}) is None
