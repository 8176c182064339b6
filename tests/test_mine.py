"""mine: repeated failures become candidate cards; incremental checkpoint; dry run; --since.

Observation logs are synthetic: planted patterns (the same failure in several sessions,
with varying paths, numbers and temp names, sometimes followed by a succeeding variant)
mixed with noise (successes, one-off failures, failures in one session only, interrupts).
"""
import json
import os
import random
import types
import uuid

import pytest

from selflearn.learning import fingerprint, mine, mine_base, mine_failures
from selflearn.observation import causes, observe
from selflearn.storage import model
from selflearn.storage import store as jsonl
from seeding import seed_record  # noqa: E402

BASE = 1767225600  # 2026-01-01T00:00:00Z


class Log:
    """Builds observations in order (ids and times increase) and appends them to the store."""

    def __init__(self, store, start=BASE):
        self.path = str(store / "observations.jsonl")
        self.clock = start
        self.n = 0

    def obs(self, session, event="tool_success", **kw):
        self.n += 1
        self.clock += 7
        record = {"v": 1, "id": f"obs_{self.n:06d}", "ts": model.iso(self.clock),
                  "agent": "claude", "session_id": session, "event": event}
        if event in ("tool_success", "tool_failure"):
            record["outcome"] = "success" if event == "tool_success" else "failure"
        record.update(kw)
        return record

    def append(self, records):
        jsonl.append(self.path, records)
        return records


def shell(cmd, family, error=None, **kw):
    out = {"tool": "Bash", "tool_kind": "shell", "args": cmd, "family": family, **kw}
    if error is not None:
        out["error"] = error
    return out


def js(run, *args):
    code, out, err = run(["mine", *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def cards(store):
    path = store / "aha_cards.jsonl"
    return jsonl.fold(jsonl.read(str(path))[0]) if path.exists() else {}


def snapshot(store):
    return {p.name: p.read_bytes() for p in sorted(store.iterdir())
            if p.is_file() and not p.name.startswith("index.sqlite3")}  # derived cache


# --- the planted set --------------------------------------------------------------------------

def _rand(rng, n=6, alphabet="abcdefghijklmnopqrstuvwxyz0123456789"):
    return "".join(rng.choice(alphabet) for _ in range(n))


def _ghij(rng, n=8):  # letters no hex or temp-name rule touches: one-off words stay distinct
    return "".join(rng.choice("ghijklmnopqrstuvwxyz") for _ in range(n))


# name -> (failing observation, expected fingerprint, succeeding variant or None); each
# maker gets a random source so paths, numbers and temp names differ at every occurrence.
PLANTED = {
    "npm-module": (
        lambda r: shell(f"bash -lc 'cd /work/p{r.randint(1, 99)} && npm test'", "npm test",
                        f"Error: Cannot find module '{_rand(r)}'\nRequire stack:\n"
                        f"- /tmp/tmp{_rand(r)}/index.js", exit_code=1),
        "shell|Bash|npm test|Error: Cannot find module <X>",
        lambda r: shell(f"sh -c 'cd /work/p{r.randint(1, 99)} && npm test'", "npm test")),
    "pytest-conftest": (
        lambda r: shell(f"pytest tests/ -x -k case{r.randint(1, 50)}", "pytest",
                        f"ImportError while loading conftest '/tmp/pytest-of-u/pytest-"
                        f"{r.randint(1, 900)}/conftest.py'.", exit_code=4),
        "shell|Bash|pytest|ImportError while loading conftest <X>.",
        lambda r: shell(f"python3 -m pytest tests/ -x -k case{r.randint(1, 50)}",
                        "python3 -m pytest")),
    "git-push": (
        lambda r: shell(f"git push origin feature-{r.randint(1, 99)}", "git push",
                        "To github.com:acme/app.git\n! [rejected] main -> main (fetch first)\n"
                        "error: failed to push some refs to 'github.com:acme/app.git'"),
        "shell|Bash|git push|error: failed to push some refs to <X>",
        lambda r: [shell(f"git pull --rebase origin feature-{r.randint(1, 99)}", "git pull"),
                   shell(f"git push origin feature-{r.randint(1, 99)}", "git push")]),
    "make-build": (
        lambda r: shell("make build", "make build",
                        f"make: *** [Makefile:{r.randint(1, 300)}: build] Error 2"),
        "shell|Bash|make build|make: *** [Makefile:<n>: build] Error <n>", None),
    "yaml-missing": (
        lambda r: shell(f"python3 scripts/gen.py --seed {r.randint(1, 10**6)}", "python3 gen.py",
                        "Traceback (most recent call last):\nModuleNotFoundError: No module named "
                        "'yaml'"),
        "shell|Bash|python3 gen.py|ModuleNotFoundError: No module named <X>",
        lambda r: shell(f"uv run python3 scripts/gen.py --seed {r.randint(1, 10**6)}",
                        "uv run python3")),
    "port-in-use": (
        lambda r: shell("docker compose up -d", "docker compose",
                        f"Error response from daemon: driver failed on endpoint web_{r.randint(1, 9)}"
                        f" ({os.urandom(16).hex()}): Bind for 0.0.0.0:{r.randint(1024, 65000)} failed:"
                        " port is already allocated"),
        "shell|Bash|docker compose|Error response from daemon: driver failed on endpoint web_<n> "
        "(<hex>): Bind for <n>:<n> failed: port is already allocated", None),
    "edit-readonly": (
        lambda r: {"tool": "Edit", "tool_kind": "edit", "file": f"/repo/src/m{r.randint(1, 40)}.ts",
                   "error": f"EACCES: permission denied, open '/repo/src/m{r.randint(1, 40)}.ts'"},
        "edit|Edit||EACCES: permission denied, open <X>", None),
    "go-module": (
        lambda r: shell("go test ./...", "go test",
                        f"go: cannot find main module, but found .git/config in /tmp/tmp{_rand(r)}"),
        "shell|Bash|go test|go: cannot find main module, but found <path> in <path>",
        lambda r: shell(f"cd /work/p{r.randint(1, 9)}/svc && go test ./...", "go test")),
    "npm-lint": (
        lambda r: shell("npm run lint", "npm run lint",
                        f"npm ERR! code ELIFECYCLE\nnpm ERR! errno {r.randint(1, 3)}\n"
                        f"npm ERR! app@1.{r.randint(0, 9)}.0 lint: `eslint .`"),
        "shell|Bash|npm run lint|npm ERR! code ELIFECYCLE", None),
    "when-started": (
        lambda r: {"tool": "mcp__db__query", "tool_kind": "mcp", "family": "db/query",
                   "error": f"timeout after {r.randint(1000, 9000)}ms at "
                            f"2026-01-0{r.randint(1, 9)}T10:{r.randint(10, 59)}:00Z "
                            f"(request {uuid.UUID(int=r.getrandbits(128))})"},
        "mcp|mcp__db__query|db/query|timeout after <n>ms at <ts> (request <uuid>)", None),
}


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                       "real_failures.json"), encoding="utf-8") as _fh:
    REAL = [c for c in json.load(_fh)["cases"] if not causes.hints(c["output"])]


def planted_log(seed=7, sessions_per_pattern=(2, 4), noise_sessions=12):
    """Per-session event lists (planted patterns and noise), interleaved at random."""
    rng = random.Random(seed)
    sessions = {f"s{i:02d}-{_rand(rng, 8)}": [] for i in range(noise_sessions)}
    names = list(sessions)
    noise_count = 0
    for name, (fail, _, fix) in PLANTED.items():
        for sid in rng.sample(names, rng.randint(*sessions_per_pattern)):
            for _ in range(rng.randint(1, 2)):
                sessions[sid].append(("tool_failure", fail(rng)))
                if fix:
                    for _ in range(rng.randint(0, 2)):  # the agent looks around first
                        sessions[sid].append(("tool_success", {"tool": "Read", "tool_kind": "read",
                                                               "args": "README.md"}))
                    done = fix(rng)
                    sessions[sid] += [("tool_success", f) for f in (
                        done if isinstance(done, list) else [done])]
    while noise_count < 200:
        sid = rng.choice(names)
        roll = rng.random()
        if roll < 0.55:
            event = ("tool_success", shell(f"ls -la /tmp/{_rand(rng)}", "ls"))
        elif roll < 0.65:
            event = ("pre_tool", shell("npm test", "npm test"))
        elif roll < 0.75:  # a one-off failure, its own words, often in a planted family
            family = rng.choice(["npm test", "git push", "go test", _ghij(rng, 5)])
            event = ("tool_failure", shell(f"{family} --check", family,
                                           f"Error: {_ghij(rng)} {_ghij(rng)} broke"))
        elif roll < 0.82:  # the same failure three times, but in one session only
            word = _ghij(rng)
            for _ in range(3):
                sessions[sid].append(("tool_failure", shell("cargo build", "cargo build",
                                                            f"error: could not find `{word}`x{word}")))
            noise_count += 2
            continue
        elif roll < 0.88:  # interrupted in many sessions: environmental
            event = ("tool_failure", shell("make -j8 test", "make test",
                                           "Command interrupted by user", interrupted=True))
        elif roll < 0.92:
            event = ("tool_failure", shell("sleep 100", "sleep", "Exit code 130", exit_code=130))
        elif roll < 0.96:
            event = ("tool_failure", {"tool": "Edit", "tool_kind": "edit", "file": "/a/b.py",
                                      "error": "<tool_use_error>File has not been read yet. Read it "
                                               "first before writing to it.</tool_use_error>"})
        elif roll < 0.98:  # real output (tests/data/real_failures.json), once, nothing fixes it
            item = REAL[rng.randrange(len(REAL))]
            obs = observe.normalize(
                {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": item["output"],
                 "tool_input": {"command": item["command"] + f" # {_ghij(rng)}"}}, "claude")
            event = ("tool_failure", {k: v for k, v in obs.items() if k in (
                "tool", "tool_kind", "args", "family", "error", "exit_code", "hint")})
        elif roll < 0.99:  # the Read tool's protocol, verbatim from real sessions, everywhere
            event = ("tool_failure", {"tool": "Read", "tool_kind": "read", "file": "/a/c.py",
                                      "error": "File does not exist."})
        else:
            event = ("prompt", {"prompt": "fix the build please"})
        sessions[sid].append(event)
        noise_count += 1
    merged = []
    queues = {sid: list(events) for sid, events in sessions.items() if events}
    while queues:
        sid = rng.choice(sorted(queues))
        merged.append((sid, *queues[sid].pop(0)))
        if not queues[sid]:
            del queues[sid]
    return merged, noise_count


def write_log(log, events):
    return log.append([log.obs(sid, event, **fields) for sid, event, fields in events])


# --- fingerprints and constants ---------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("Error: Cannot find module 'left-pad' from /tmp/tmpab12cd/x.js:12:5",
     "Error: Cannot find module <X> from <path>:<n>:<n>"),
    ("failed at 2025-01-02T10:11:12Z, job 6222191a-a9ee-46dc-883b-2f8399a13900",
     "failed at <ts>, job <uuid>"),
    ("commit deadbeef12 at 0x7ffd1a2b in tmpk3j_x9a1", "commit <hex> at <hex> in <tmp>"),
    ('FAILED tests/test_x.py::test_3 - assert "a" == `b`', "FAILED <path>::test_<n> - assert <X> == <X>"),
    ("C:\\Users\\me\\app.js  and ~/x   and ./y", "<path> and <path> and <path>"),
    ("python3 and utf8 stay; 10:02:03 and 3.14 go", "python3 and utf8 stay; <ts> and <n> go"),
    # a dated file name is one path, not a timestamp and the rest of its name
    (".planning/todos/2026-02-22-crdt-inbox.md:26 error MD040/fenced-code-language",
     "<path>:<n> error MD040/fenced-code-language"),
])
def test_normalize(raw, expected):
    assert fingerprint.normalize(raw) == expected


def test_key_line_prefers_the_line_naming_the_error():
    assert fingerprint.key_line("To x\n! [rejected]\nerror: failed to push") == "error: failed to push"
    assert fingerprint.key_line("Usage: foo\ncould not open bar") == "could not open bar"
    assert fingerprint.key_line("just text\nmore") == "just text"
    assert fingerprint.of_failure({"tool": "Bash", "tool_kind": "shell", "exit_code": 2})[0] == \
        "shell|Bash||exit code 2"


def test_confidence_starts_grows_with_diminishing_returns_and_stays_below_one():
    values = [mine_base.confidence(n) for n in range(2, 30)]
    assert values[0] == mine_base.CONFIDENCE_START
    steps = [b - a for a, b in zip(values, values[1:])]
    assert all(s >= 0 for s in steps) and steps[0] > steps[1] > steps[2]
    assert max(values) <= mine_base.CONFIDENCE_CAP < 1
    assert mine_base.confidence(2, has_fix=True) == mine_base.CONFIDENCE_START + mine_base.FIX_BONUS


# --- what is found ----------------------------------------------------------------------------

def test_planted_patterns_are_found_and_noise_is_not(run, store, capsys):
    log = Log(store)
    events, noise = planted_log()
    write_log(log, events)
    data = js(run, "--kind", "failures")  # the other kinds: tests/test_miners.py
    found = {e["fingerprint"] for e in data["lessons"] if e["action"] == "created"}
    expected = {fp for _, fp, fix in PLANTED.values() if fix}  # unfixed: episodes, no lesson
    state = json.loads((store / "mine_state.json").read_text())["kinds"]["failures"]["agg"]
    assert {fp for _, fp, _ in PLANTED.values()} <= {c["fingerprint"] for c in
                                                     state["clusters"].values()}
    hits = found & expected
    precision, recall = len(hits) / len(found), len(hits) / len(expected)
    fixes_expected = {fp for _, fp, fix in PLANTED.values() if fix}
    by_fp = {e["fingerprint"]: e for e in data["lessons"]}
    fixed = {fp for fp in fixes_expected if fp in by_fp and by_fp[fp]["card"].get("solution_steps")}
    with capsys.disabled():
        print(f"\nmine precision {precision:.2f} recall {recall:.2f} over {len(expected)} planted "
              f"patterns + {noise} noise events ({len(events)} observations); succeeding variant "
              f"found for {len(fixed)}/{len(fixes_expected)}")
    assert found - expected == set(), "noise became a lesson"
    assert expected - found == set(), "a planted pattern was missed"
    assert precision == 1.0 and recall == 1.0
    assert fixed == fixes_expected
    assert not any(fp for fp in found if fp not in expected)
    assert len(cards(store)) == len(expected)


def test_repeated_failure_card_cites_evidence_and_the_succeeding_variant(run, store):
    log = Log(store)
    rng = random.Random(1)
    fail, fp_text, fix = PLANTED["npm-module"]
    written = []
    for sid in ("sess-a", "sess-b"):
        written += log.append([log.obs(sid, "tool_failure", **fail(rng)),
                               log.obs(sid, "tool_success", tool="Read", tool_kind="read"),
                               log.obs(sid, "tool_success", **fix(rng))])
    (lesson,) = js(run)["lessons"]
    (card,) = cards(store).values()
    assert lesson["fingerprint"] == fp_text and lesson["sessions"] == 2
    assert lesson["id"] == card["id"] and lesson["action"] == "created"
    # shown with the raw line of its first occurrence: the module name stays readable
    module = fail(random.Random(1))["error"].split("'")[1]
    assert card["title"] == f"`npm test` fails with `Error: Cannot find module '{module}'`"
    assert card["when_to_use"] == \
        f"`npm test` (Bash) fails with: `Error: Cannot find module '{module}'`"
    assert card["problem"].endswith(f"with: `Error: Cannot find module '{module}'`")  # quoted
    assert (card["origin"], card["status"], card["scope"]) == ("mined", "candidate", "project")
    assert card["key"] == "mined:failure:" + fingerprint.digest(fp_text)
    assert card["confidence"] == mine_base.confidence(2, has_fix=True)
    (step,) = card["solution_steps"]
    assert step.startswith("use `sh -c 'cd /work/p") and "instead of `bash -lc 'cd /work/p" in step
    first, second = written[0], written[3]
    assert card["evidence"][0].startswith("example (npm test): `bash -lc 'cd /work/p")
    assert "failed with: `Error: Cannot find module '" in card["evidence"][0]
    assert f"seen {first['ts']} in session sess-a ({first['id']})" in card["evidence"]
    assert f"seen {second['ts']} in session sess-b ({second['id']})" in card["evidence"]
    assert any(e.startswith(f"fix seen {written[2]['ts']} in session sess-a ({written[2]['id']})")
               for e in card["evidence"])
    stored = {k: v for k, v in card.items() if not k.startswith("_")}  # fold bookkeeping
    assert model.check("card", stored, "card") == []
    assert "mined" in card["tags"] and "failure" in card["tags"]
    assert card["trigger"] == "npm test"  # the shell family whose use puts it at stake


def test_failure_trigger_is_the_tool_off_the_shell_and_reaches_older_cards(run, store):
    key = "mined:failure:" + mine_failures.recurs({"event": "tool_failure", **shell(
        "npm test", "npm test", "Error: Cannot find module 'x'")})
    older = {"title": "`npm test` fails", "key": key, "origin": "mined", "status": "candidate",
             "confidence": 0.4}  # as mined before cards had a trigger
    assert seed_record(({"aha_cards": [older]}))[0] == 0
    _two_sessions(Log(store))
    (lesson,) = js(run)["lessons"]
    assert (lesson["action"], lesson["card"]["trigger"]) == ("reinforced", "npm test")
    assert cards(store)[lesson["id"]]["trigger"] == "npm test"
    assert mine_failures.trigger({"kind": "read", "tool": "Read", "family": ""}) == "Read"


def test_a_failure_off_the_shell_without_a_fix_is_an_episode_not_a_lesson(run, store):
    read = dict(tool="Read", tool_kind="read", args="/repo/a.py",
                error="EACCES: permission denied, open '/repo/a.py'")
    log = Log(store)
    log.append([log.obs(sid, "tool_failure", **read) for sid in ("a", "b")])
    data = js(run)
    assert data["lessons"] == [] and data["clusters"]["failures"] == 1


def test_fix_must_resemble_and_come_within_the_window(run, store):
    log = Log(store)
    for sid in ("a", "b"):
        log.append([log.obs(sid, "tool_failure", **shell("npm test", "npm test", "Error: boom")),
                    *[log.obs(sid, "tool_success", tool="Read", tool_kind="read")
                      for _ in range(mine_failures.FIX_WINDOW)],
                    log.obs(sid, "tool_success", **shell("npm test --ci", "npm test")),
                    log.obs(sid, "tool_failure", **shell("make x", "make x", "Error: other")),
                    log.obs(sid, "tool_success", **shell("ls", "ls"))])
    assert js(run)["lessons"] == []  # no fix within the window, none that resembles


def test_plain_retry_is_not_a_fix_but_a_gotcha(run, store):
    log = Log(store)
    for sid in ("a", "b", "c"):
        log.append([log.obs(sid, "tool_failure", **shell("npm test", "npm test", "Error: flaky")),
                    log.obs(sid, "tool_success", **shell("npm test" + (" --ci" if sid == "c" else ""),
                                                         "npm test"))])
    (lesson,) = js(run)["lessons"]  # a lesson only once a variant fixed it (in session c)
    assert lesson["card"]["solution_steps"] == ["use `npm test --ci` instead of `npm test`"]
    assert "flaky" in lesson["card"]["gotchas"][0]


def test_failures_in_one_session_or_environmental_are_not_lessons(run, store):
    log = Log(store)
    log.append([log.obs("only", "tool_failure", **shell("npm test", "npm test", "Error: x"))
                for _ in range(5)])
    for sid in ("a", "b", "c"):
        log.append([
            log.obs(sid, "tool_failure", **shell("make", "make", "Command interrupted by user",
                                                 interrupted=True)),
            log.obs(sid, "tool_failure", **shell("sleep 9", "sleep", "killed", exit_code=143)),
            log.obs(sid, "tool_failure", **shell("rm x", "rm", "The user doesn't want to proceed "
                                                 "with this tool use.")),
            log.obs(sid, "tool_success", **shell("ls", "ls"))])
    data = js(run, "--kind", "failures")  # denials learns the rejection
    assert data["lessons"] == [] and data["clusters"]["failures"] == 1
    assert not (store / "aha_cards.jsonl").exists()


# --- incremental ------------------------------------------------------------------------------

def _two_sessions(log, error="Error: Cannot find module 'x'", sids=("a", "b"),
                  fix=("npm test --ci",)):
    """The same failure in each session, each time followed by a variant that passed (a
    certain fix: without one a failure is an episode, not a lesson)."""
    return log.append([log.obs(s, event, **shell(cmd, observe.command_family(cmd), err))
                       for s in sids for event, cmd, err in [("tool_failure", "npm test", error)]
                       + [("tool_success", f, None) for f in fix]])


def test_second_run_reads_nothing_and_writes_nothing(run, store):
    log = Log(store)
    _two_sessions(log)
    first = js(run)
    assert first["lessons"][0]["action"] == "created" and first["checkpoint_written"]
    before = snapshot(store)
    again = js(run)
    assert (again["observations_read"], again["lessons"], again["checkpoint_written"]) == (0, [], False)
    assert again["from_offset"] == first["checkpoint"]["offset"] == os.path.getsize(log.path)
    assert snapshot(store) == before


def test_new_session_reinforces_reading_only_new_bytes(run, store):
    log = Log(store)
    _two_sessions(log)
    first = js(run, "--kind", "failures")
    (card,) = cards(store).values()
    size = os.path.getsize(log.path)
    new = log.append([log.obs("c", "tool_success", **shell("ls", "ls")),
                      log.obs("c", "tool_failure", **shell("npm test", "npm test",
                                                           "Error: Cannot find module 'y'"))])
    data = js(run, "--kind", "failures")
    assert data["from_offset"] == size and data["observations_read"] == len(new)
    assert data["parsed"] == 1  # a success with no failure waiting in its session stays unparsed
    (lesson,) = data["lessons"]
    assert (lesson["action"], lesson["id"], lesson["sessions"]) == ("reinforced", card["id"], 3)
    (after,) = cards(store).values()
    assert after["confidence"] > card["confidence"] == first["lessons"][0]["confidence"]
    assert set(card["evidence"]) < set(after["evidence"])
    assert f"seen {new[1]['ts']} in session c ({new[1]['id']})" in after["evidence"]
    assert after["_versions"] == 2 and after["status"] == "candidate"
    signals = jsonl.read(str(store / "signals.jsonl"))[0]
    assert [(s["kind"], s["aha_id"], s["source"]) for s in signals] == \
        [("aha_observed", card["id"], "miner")]
    # the same failure again in a known session changes nothing worth a version
    log.append([log.obs("c", "tool_failure", **shell("npm test", "npm test", "Error: Cannot "
                                                     "find module 'z'"))])
    data = js(run, "--kind", "failures")
    assert data["lessons"] == [] and cards(store)[card["id"]]["_versions"] == 2


def test_status_set_by_a_person_survives_and_rejected_is_left_alone(run, store):
    log = Log(store)
    _two_sessions(log)
    js(run)
    (card,) = cards(store).values()
    run(["aha-status", "--id", card["id"], "--status", "accepted"])
    _two_sessions(log, sids=("c",))
    assert js(run)["lessons"][0]["action"] == "reinforced"
    assert cards(store)[card["id"]]["status"] == "accepted"
    run(["aha-status", "--id", card["id"], "--status", "rejected"])
    _two_sessions(log, sids=("d",))
    assert js(run)["lessons"][0]["action"] == "skipped (rejected)"
    assert cards(store)[card["id"]]["status"] == "rejected"


def test_replaced_or_shrunk_file_is_mined_again_from_the_start(run, store):
    log = Log(store)
    _two_sessions(log)
    js(run)
    content = open(log.path, "rb").read()
    jsonl.atomic_write(log.path, content)  # same bytes, new inode (what repair --apply does)
    data = js(run)
    assert data["full"] and data["full_reason"] == "observations.jsonl was replaced (new inode)"
    assert data["from_offset"] == 0 and data["observations_read"] == 4
    assert data["lessons"] == [] and data["unchanged"] == 1 and len(cards(store)) == 1
    code, out, _ = run(["mine"])
    assert code == 0 and "full re-mine" not in out
    with open(log.path, "r+b") as fh:
        fh.truncate(len(content) // 2 - 5)
        fh.seek(0, 2)
        fh.write(b"\n")
    code, out, _ = run(["mine"])
    assert out.startswith("full re-mine: observations.jsonl shrank below the checkpoint\n")
    with open(log.path, "wb") as fh:  # rewritten in place, same size or larger
        fh.write(content.replace(b'"a"', b'"q"') + content)
    assert js(run)["full_reason"] == "observations.jsonl was rewritten (its first bytes changed)"


def test_torn_last_line_is_left_for_the_next_run(run, store):
    log = Log(store)
    _two_sessions(log)
    whole = os.path.getsize(log.path)
    line = jsonl.encode(log.obs("c", "tool_failure", **shell("npm test", "npm test", "Error: q")))
    with open(log.path, "ab") as fh:
        fh.write(line[:-10])
    assert js(run)["checkpoint"]["offset"] == whole
    with open(log.path, "ab") as fh:
        fh.write(line[-10:])
    data = js(run)
    assert data["observations_read"] == 1 and data["from_offset"] == whole


def test_dry_run_writes_nothing_and_returns_the_lessons(run, store):
    log = Log(store)
    _two_sessions(log)
    before = snapshot(store)
    data = js(run, "--dry-run")
    (lesson,) = data["lessons"]
    assert (lesson["action"], lesson["id"]) == ("created", None)
    assert lesson["card"]["status"] == "candidate" and lesson["card"]["origin"] == "mined"
    assert snapshot(store) == before
    code, out, _ = run(["mine", "--dry-run"])
    assert "created (new card): `npm test` fails with" in out and out.endswith("dry run: nothing written\n")
    js(run)
    _two_sessions(log, sids=("c",))
    before = snapshot(store)
    assert js(run, "--dry-run")["lessons"][0]["action"] == "reinforced"
    assert snapshot(store) == before


def test_since_considers_only_later_observations_and_keeps_the_checkpoint(run, store):
    log = Log(store)
    steps = ("npm install", "npm test")  # a fix that needs two sessions
    _two_sessions(log, error="Error: early", sids=("a",), fix=steps)
    log.clock += 86400 * 3
    later = _two_sessions(log, error="Error: early", sids=("b",), fix=steps)
    _two_sessions(log, error="Error: late", fix=steps)
    since = later[0]["ts"]
    data = js(run, "--since", since)
    assert data["since"] == since and not data["checkpoint_written"]
    assert [e["fingerprint"] for e in data["lessons"]] == ["shell|Bash|npm test|Error: late"]
    assert not (store / mine.STATE_FILE).exists()
    data = js(run)  # without --since: the early one too; the late one is already there
    assert [(e["fingerprint"], e["action"]) for e in data["lessons"]] == \
        [("shell|Bash|npm test|Error: early", "created")] and data["unchanged"] == 1
    data = js(run, "--since", since[:10])
    assert data["from_offset"] == 0 and data["observations_read"] == len(jsonl.read(log.path)[0])


def test_clusters_and_waiting_sessions_stay_bounded(run, store, monkeypatch):
    monkeypatch.setattr(mine_failures, "MAX_CLUSTERS", 10)
    monkeypatch.setattr(mine_failures, "MAX_PENDING_SESSIONS", 3)
    log = Log(store)
    _two_sessions(log, error="Error: planted")
    log.append([log.obs(f"s{i}", "tool_failure", **shell("npm test", "npm test", f"Error: {w}"))
                for i, w in enumerate(_ghij(random.Random(i), 10) for i in range(40))])
    _two_sessions(log, error="Error: planted", sids=("c",))
    monkeypatch.setattr(mine_failures, "MAX_FIXES_KEPT", 1)
    log.append([log.obs("c", e, **shell(args, "npm test", "Error: planted"))
                for variant in ("-x", "-y")
                for e, args in (("tool_failure", "npm test"), ("tool_success", f"npm test {variant}"))])
    data = js(run)
    assert data["lessons"][0]["card"]["solution_steps"] == ["use `npm test --ci` instead of `npm test`"]
    assert data["clusters"]["failures"] <= 10
    assert data["lessons"][0]["sessions"] == 3
    state = json.loads((store / mine.STATE_FILE).read_text())
    assert len(state["kinds"]["failures"]["agg"]["pending"]) <= 3


# --- CLI output and errors --------------------------------------------------------------------

def test_text_output(run, store):
    log = Log(store)
    _two_sessions(log)
    code, out, err = run(["mine"])
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"read 4 new observation(s) from byte 0 to {os.path.getsize(log.path)} ({', '.join(mine.MINERS)})"
    assert lines[1].startswith("created aha_") and lines[1].endswith(
        ": `npm test` fails with `Error: Cannot find module 'x'` (2 sessions, confidence 0.45)")
    assert lines[2] == f"checkpoint: byte {os.path.getsize(log.path)} in {store / 'mine_state.json'}"
    assert "`npm test` fails with" in (store / "INDEX.md").read_text()
    code, out, _ = run(["mine"])
    assert out.splitlines()[1:] == ["no new or reinforced lessons"]


def test_json_contract(run, store):
    _two_sessions(Log(store))
    data = js(run, "--kind", "failures", "--kind", "failures,failures")
    assert data["schema"] == 1 and data["kinds"] == ["failures"]
    for key in ("dry_run", "since", "observations", "state", "full", "full_reason",
                "observations_read", "parsed", "from_offset", "checkpoint", "clusters", "lessons",
                "unchanged", "warnings", "checkpoint_written"):
        assert key in data, key
    assert set(data["checkpoint"]) == {"offset", "inode", "line"}
    assert set(data["lessons"][0]) >= {"id", "title", "action", "sessions", "confidence", "key",
                                       "fingerprint", "occurrences", "card", "kind"}


def test_no_observations_yet(run, store):
    code, out, err = run(["mine"])
    assert code == 0 and out.startswith("no observations yet at ") and "install-hooks" in out
    assert not store.exists()


def test_unreadable_line_is_a_warning(run, store):
    log = Log(store)
    _two_sessions(log)
    with open(log.path, "ab") as fh:
        fh.write(b'{"event": "tool_failure", nope\n["tool_failure"]\n')
    code, out, err = run(["mine"])
    assert code == 0 and "created" in out
    assert err.startswith(f"self_learning: warning: {log.path}:5: not JSON (")


KNOWN = "failures, bypass, denials, preferences, sequences"


@pytest.mark.parametrize("args, message", [
    (["--kind", "edit"], f"mine: unknown --kind 'edit' (known: {KNOWN})"),
    (["--kind", "failures,bogus"], f"mine: unknown --kind 'bogus' (known: {KNOWN})"),
    (["--since", "yesterday"], "mine: --since 'yesterday' is not an ISO date; use e.g. "
                               "2025-01-31 or 2025-01-31T12:00:00Z"),
])
def test_bad_arguments_are_one_line_exit_2(run, store, args, message):
    _two_sessions(Log(store))
    code, out, err = run(["mine", *args])
    assert (code, out, err) == (2, "", f"self_learning: error: {message}\n")
    assert not (store / "aha_cards.jsonl").exists()


def test_corrupt_checkpoint_is_one_line_exit_2(run, store):
    _two_sessions(Log(store))
    (store / mine.STATE_FILE).write_text("{nope")
    code, out, err = run(["mine"])
    assert code == 2 and out == ""
    assert err.startswith(f"self_learning: error: mine: {store / mine.STATE_FILE} is not JSON (")
    assert err.endswith("delete it to mine every observation again (mined cards are reinforced, "
                        "not duplicated)\n") and len(err.splitlines()) == 1


def test_checkpoint_of_another_shape_starts_over(run, store):
    _two_sessions(Log(store))
    (store / mine.STATE_FILE).write_text("[]")
    assert js(run)["lessons"][0]["action"] == "created"


def test_observation_from_a_newer_version_stops(run, store):
    log = Log(store)
    log.append([{**log.obs("a", "tool_failure", error="x"), "v": 9}])
    code, out, err = run(["mine"])
    assert code == 1 and out == ""
    assert err == (f"self_learning: error: {log.path}:1: record format v9 was written by a newer "
                   "self_learning; upgrade this skill folder to read it\n")


def test_lines_written_by_another_json_writer_are_still_read(run, store):
    log = Log(store)
    lines = []
    for sid in ("a", 'b"\\q'):
        lines += [log.obs(sid, "tool_failure", **shell("npm test", "npm test", "Error: x")),
                  log.obs(sid, "tool_success", **shell("npm test --ci", "npm test"))]
    store.mkdir(parents=True)
    with open(log.path, "w") as fh:  # compact separators, ASCII escapes
        fh.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines[:2]))
        fh.write("".join(json.dumps(r) + "\n" for r in lines[2:]))
    (lesson,) = js(run)["lessons"]
    assert lesson["card"]["solution_steps"] == ["use `npm test --ci` instead of `npm test`"]
    assert lesson["sessions"] == 2


def test_every_kind_is_a_module_in_the_registry():
    assert ", ".join(mine.MINERS) == KNOWN
    for kind, module in mine.MINERS.items():
        assert module.KIND == kind and callable(module.miner) and callable(module.recurs)
        assert module.recurs({"event": "prompt", "prompt": "hi"}) is None


def test_a_new_kind_is_one_module_and_one_registry_entry(run, store, monkeypatch):
    def miner(agg, setup):  # a toy miner: counts prompts, never proposes a lesson
        agg.setdefault("prompts", 0)

        def feed(obs):
            agg["prompts"] += obs.get("event") == "prompt"
        return mine_base.Run(lambda raw: b"prompt" in raw, feed, lambda: [])

    toy = types.SimpleNamespace(KIND="prompts", miner=miner, recurs=lambda obs: None)
    monkeypatch.setitem(mine.MINERS, toy.KIND, toy)
    log = Log(store)
    log.append([log.obs("a", "prompt", prompt="hi")])
    _two_sessions(log)
    assert js(run, "--kind", "failures")["clusters"] == {"failures": 1}
    log.append([log.obs("b", "prompt", prompt="again")])
    data = js(run, "--kind", "failures,prompts")  # prompts starts at byte 0, failures later
    assert data["kinds"] == ["failures", "prompts"] and data["from_offset"] == 0
    assert data["lessons"] == [] and data["observations_read"] == 6
    state = json.loads((store / mine.STATE_FILE).read_text())["kinds"]
    assert state["prompts"]["agg"] == {"prompts": 2}
    assert state["failures"]["offset"] == state["prompts"]["offset"] == os.path.getsize(log.path)
