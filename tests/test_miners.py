"""mine --kind bypass|denials|preferences: planted patterns are found, noise is not.

Each miner gets a synthetic observation log per seed: planted patterns (the same
bypass, denial or preference in several sessions, with varying files,
arguments and ids) mixed with realistic noise (unrelated edits and commands, one-session
coincidences, plain failures, approvals answered by failures, ...). Precision and recall
are computed over several seeds and printed.
"""
import os
import json
import random

import pytest

from selflearn.observation import observe
from selflearn.storage import config
from selflearn.learning import fingerprint, mine, mine_bypass, mine_denials
from selflearn.learning import mine_preferences
from selflearn.storage import model
from seeding import seed_record  # noqa: E402
from test_mine import Log, _ghij, cards, js, shell, snapshot

SEEDS = (1, 2, 3, 4, 5)


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                       "real_failures.json"), encoding="utf-8") as _fh:
    REAL = json.load(_fh)["cases"]


def real_noise(rng, n=8):
    """Failures with real tool output (tests/data/real_failures.json), as the hook stores them."""
    out = []
    # (not the planted noise's own "lint fails in one session only": a real `npm run lint`
    # failure would make it two sessions, a true preference)
    pool = [c for c in REAL if not c["command"].startswith("npm run lint")]
    for item in rng.sample(pool, n):
        obs = observe.normalize({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                                 "tool_input": {"command": item["command"]},
                                 "error": item["output"]}, "claude")
        out.append(("tool_failure", {k: v for k, v in obs.items() if k in (
            "tool", "tool_kind", "args", "family", "error", "exit_code", "hint")}))
    return out


def interleave(rng, sessions):
    """Per-session event lists merged in random order, each session's order kept; real tool
    output is added as noise to random sessions first."""
    names = sorted(sessions)
    for event in real_noise(rng):
        sessions[rng.choice(names)].append(event)
    merged, queues = [], {sid: list(ev) for sid, ev in sessions.items() if ev}
    while queues:
        sid = rng.choice(sorted(queues))
        merged.append((sid, *queues[sid].pop(0)))
        if not queues[sid]:
            del queues[sid]
    return merged


def new_sessions(rng, n=12):
    return {f"s{i:02d}-{_ghij(rng, 6)}": [] for i in range(n)}


def edit(path, old, new, event="tool_success"):
    return (event, {"tool": "Edit", "tool_kind": "edit", "file": path, "args": path,
                    "edit_old": old, "edit_new": new})


def write_config(repo, data):
    path = repo / config.CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def precision_recall(run, store, kind, make_log, expected, capsys):
    """Mine ``kind`` over a fresh log per seed; print mean precision and recall; return them
    with the seeds whose lessons differ from ``expected``."""
    rows, wrong = [], []
    for seed in SEEDS:
        for path in store.glob("*"):
            path.unlink()
        log = Log(store)
        log.append([log.obs(s, e, **f) for s, e, f in make_log(seed)])
        data = js(run, "--kind", kind)
        assert {e["kind"] for e in data["lessons"]} <= {kind}
        found = {e["fingerprint"] for e in data["lessons"] if e["action"] == "created"}
        hits = found & expected
        rows.append((len(hits) / len(found) if found else 1.0, len(hits) / len(expected)))
        if found != expected:
            wrong.append((seed, sorted(found - expected), sorted(expected - found)))
    precision = sum(r[0] for r in rows) / len(rows)
    recall = sum(r[1] for r in rows) / len(rows)
    with capsys.disabled():
        print(f"\n{kind}: precision {precision:.2f} recall {recall:.2f} over {len(rows)} seeds")
    return precision, recall, wrong


# --- edits: no miner -------------------------------------------------------------------------

def _safe_load(v):
    return [edit(f"/repo/src/{v}.py", "", f"import yaml\n{v} = yaml.load(fh)"),
            edit(f"/repo/src/{v}.py", f"{v} = yaml.load(fh)", f"{v} = yaml.safe_load(fh)")]


def test_an_edit_corrected_or_a_substitution_made_in_two_sessions_teaches_nothing(run, store):
    """The edits miner was deleted (references/LEARNING.md, "No miner of edits"): on real
    sessions its 4 lessons were 2 noise and 2 wrong. What the agent keeps correcting, and the
    substitutions it makes, are left to the agent to record."""
    log = Log(store)
    for sid in ("sa", "sb"):
        log.append([log.obs(sid, e, **f) for e, f in _safe_load("cfg_" + sid) + [
            edit(f"/repo/tests/test_{sid}.py", "self.assertEquals(total, 3)",
                 "self.assertEqual(total, 3)")]])
    data = js(run)
    assert "edits" not in data["kinds"] and data["lessons"] == [] and cards(store) == {}
    code, out, err = run(["mine", "--kind", "edits"])
    assert code == 2 and out == "" and err.startswith("self_learning: error: mine: unknown --kind")


def test_a_store_from_before_keeps_working_without_the_edits_miner(run, store):
    """An older store has an `edits` checkpoint and mined `edits` cards: mining and the
    learning step go on, the checkpoint drops the kind, and its cards stay as they were."""
    log = Log(store)
    log.append([log.obs("sa", e, **f) for e, f in _safe_load("cfg")])
    state = {"v": 1, "kinds": {"edits": {"offset": 0, "line": 0, "agg": {"recent": {}}}}}
    (store / mine.STATE_FILE).write_text(json.dumps(state))
    code, _, err = seed_record({"aha_cards": [{
        "id": "aha_old", "title": "Write `safe_load` directly, not `load`", "origin": "mined",
        "status": "candidate", "confidence": 0.4, "key": "mined:edits:abc123",
        "trigger": "edit", "tags": ["mined", "edit", "correction"]}]})
    assert code == 0, err
    code, _, err = run(["maintain", "--force"])
    assert code == 0, err
    assert "edits" not in json.loads((store / mine.STATE_FILE).read_text())["kinds"]
    assert cards(store)["aha_old"]["key"] == "mined:edits:abc123"


# --- bypass -----------------------------------------------------------------------------------

BYPASS_RULES = [
    {"pattern": r"^\s*(npm|pnpm) publish\b", "skill": "release"},
    {"pattern": r"\bterraform apply\b", "skill": "infra-deploy",
     "hint": "the skill runs terraform plan first"},
    {"pattern": r"\balembic upgrade\b", "skill": "db-migrate"},
    {"pattern": r"\bkubectl delete\b", "skill": "k8s-ops"},
]


def _rule_fp(i):
    return f"{BYPASS_RULES[i]['skill']}|{BYPASS_RULES[i]['pattern']}"


def bypass_log(seed):
    """Rules 0 and 1 bypassed; rule 2 only after its skill ran; rule 3 never matched."""
    rng = random.Random(seed)
    sessions = new_sessions(rng)
    names = list(sessions)
    for sid in rng.sample(names, rng.randint(1, 3)):
        cmd = rng.choice(["npm publish --tag next", "pnpm publish", "npm publish"])
        sessions[sid].append(("tool_success", shell(cmd, " ".join(cmd.split()[:2]))))
    for sid in rng.sample(names, rng.randint(1, 3)):
        sessions[sid].append(("tool_failure", shell(f"cd infra/{_ghij(rng, 3)} && terraform apply "
                                                    "-auto-approve", "terraform apply",
                                                    "Error: No valid credential sources found")))
    for sid in rng.sample(names, 3):
        sessions[sid] += [("tool_success", {"tool": "Skill", "tool_kind": "other",
                                            "args": "db-migrate"}),
                          ("tool_success", shell("alembic upgrade head", "alembic"))]
    for _ in range(120):
        sid, roll = rng.choice(names), rng.random()
        if roll < 0.3:
            sessions[sid].append(("tool_success", shell("npm test", "npm test")))
        elif roll < 0.45:
            sessions[sid].append(("tool_success", shell("terraform plan", "terraform plan")))
        elif roll < 0.55:
            sessions[sid].append(("tool_success", shell("echo run npm publish later", "echo")))
        elif roll < 0.65:
            sessions[sid].append(("pre_tool", shell("npm publish", "npm publish")))
        elif roll < 0.75:
            sessions[sid].append(("tool_failure", shell("kubectl get pods", "kubectl get",
                                                        "error: no context")))
        elif roll < 0.85:
            sessions[sid].append(edit("/repo/deploy.md", "x", "kubectl delete pod x"))
        else:
            sessions[sid].append(("prompt", {"prompt": "please publish the release"}))
    return interleave(rng, sessions)


def test_bypass_planted_rules_are_found_and_noise_is_not(run, store, repo, capsys):
    write_config(repo, {"skill_bypass": BYPASS_RULES})
    expected = {_rule_fp(0), _rule_fp(1)}
    precision, recall, wrong = precision_recall(run, store, "bypass", bypass_log, expected, capsys)
    assert wrong == [] and (precision, recall) == (1.0, 1.0)


def test_bypass_card_hint_recurs_and_one_session_suffices(run, store, repo):
    write_config(repo, {"skill_bypass": BYPASS_RULES})
    log = Log(store)
    (obs,) = log.append([log.obs("a", "tool_failure", **shell(
        "terraform apply -auto-approve", "terraform apply", "Error: token=abc"))])
    (lesson,) = js(run)["lessons"]
    card = lesson["card"]
    assert card["title"] == "Use skill `infra-deploy` instead of running `terraform apply`"
    assert card["solution_steps"] == ["use the `infra-deploy` skill instead of running "
                                      "`terraform apply` yourself",
                                      "the skill runs terraform plan first"]
    assert card["confidence"] == 0.4 and "1 of them failing" in card["problem"]
    assert card["trigger"] == "terraform apply"
    assert f"seen {obs['ts']} in session a ({obs['id']})" in card["evidence"]
    digest = card["key"].split(":")[-1]
    assert mine_bypass.recurs(obs) == digest
    assert mine_bypass.recurs(obs, {"skill_bypass": BYPASS_RULES}) == digest
    assert mine_bypass.recurs(log.obs("b", **shell("terraform plan", "terraform plan"))) is None
    assert mine_bypass.recurs(obs, {}) is None


def test_bypass_config_change_mines_again_from_the_start(run, store, repo):
    write_config(repo, {"skill_bypass": BYPASS_RULES[:1]})
    log = Log(store)
    log.append([log.obs("a", "tool_success", **shell("kubectl delete pod web-1",
                                                     "kubectl delete"))])
    assert js(run, "--kind", "bypass")["lessons"] == []
    assert js(run, "--kind", "bypass")["full"] is False
    write_config(repo, {"skill_bypass": BYPASS_RULES})
    data = js(run, "--kind", "bypass")
    assert data["full"] and data["full_reason"] == "\"skill_bypass\" in config.json changed"
    assert [e["fingerprint"] for e in data["lessons"]] == [_rule_fp(3)]


@pytest.mark.parametrize("value, message", [
    ({"pattern": "x"}, "\"skill_bypass\" must be a list of {\"pattern\", \"skill\", \"hint\"} "
                       "objects, got dict"),
    (["npm publish"], "skill_bypass[0] must be an object with \"pattern\" and \"skill\", got str"),
    ([{"pattern": "(npm", "skill": "release"}],
     "skill_bypass[0]: \"pattern\" '(npm' is not a valid regular expression (missing ), "
     "unterminated subpattern at position 0)"),
    ([BYPASS_RULES[0], {"pattern": "x"}], "skill_bypass[1]: \"skill\" must be a non-empty string"),
    ([{"pattern": "x", "skill": "s", "hint": 3}], "skill_bypass[0]: \"hint\" must be a string"),
    ([{"pattern": "^(a+)+$", "skill": "release"}],  # damage3-17: hung session-end learning
     "skill_bypass[0]: \"pattern\" '^(a+)+$' repeats a group that itself repeats, which can "
     "take hours on one command; rewrite it without the inner repeat"),
])
def test_bypass_config_errors_are_one_line_and_write_nothing(run, store, repo, value, message):
    write_config(repo, {"skill_bypass": value})
    log = Log(store)
    log.append([log.obs("a", "tool_success", **shell("npm publish", "npm publish"))])
    before = snapshot(store)
    code, out, err = run(["mine"])
    assert code != 0 and out == ""
    assert err == f"self_learning: error: {config.path(str(repo))}: {message}\n"
    assert snapshot(store) == before


@pytest.mark.parametrize("pattern, nested", [
    ("(x*y)*", True), ("(?:npm|pnpm +)+publish", True), (r"(\w+\s?){2,}", True),
    (r"^\s*(npm|pnpm) publish\b", False), ("(ab)+", False), ("(a{2})+c*", False),
    (r"\(a+\)+", False), ("[(]a+[)]+", False), ("[^]a(]+(b)+", False), (r"[\])]+(b)*", False),
])
def test_bypass_refuses_a_repeat_inside_a_repeated_group(pattern, nested):
    """The shape that backtracks exponentially, read past escapes and character classes."""
    assert mine_bypass.nested_repeat(pattern) is nested


# --- denials ----------------------------------------------------------------------------------

REJECT = ("The user doesn't want to proceed with this tool use. The tool use was rejected "
          "(eg. if it was a file edit, the new_string was NOT written to the file).")
HOOK = "PreToolUse:Bash hook error: [./guard.sh]: Blocked: network access is not allowed"


def _request(cmd, family, use_id):
    return ("permission_request", shell(cmd, family, tool_use_id=use_id))


def denials_log(seed):
    """Denied: rm -rf, git push --force (rejected), curl -s (hook), docker run --privileged
    (denied, approved less); approved: pnpm install. Noise must give nothing else."""
    rng = random.Random(seed)
    sessions = new_sessions(rng)
    names = list(sessions)
    ids = iter(range(10 ** 6))

    def uid():
        return f"toolu_{next(ids):06d}"

    def plant(count, events):
        for sid in rng.sample(names, count):
            sessions[sid] += events()

    plant(rng.randint(2, 4), lambda: [("permission_denied", shell(
        f"rm -rf build/{_ghij(rng, 3)}", "rm", reason="Auto mode classifier denied: "
        "destructive command"))])
    plant(rng.randint(2, 3), lambda: [("tool_failure", shell(
        "git push --force origin main", "git push", REJECT))])
    plant(rng.randint(2, 3), lambda: [("tool_failure", shell(
        f"curl -s https://example.com/{_ghij(rng, 4)}", "curl", HOOK, exit_code=2))])
    refused = rng.sample(names, 2)
    for sid in refused:
        sessions[sid] += [("permission_denied", shell("docker run --privileged x", "docker run",
                                                      reason="Denied by the user"))]
    for _ in range(4):  # approved in other sessions too (in the same one it would lift the
        u = uid()       # refusal), but fewer than DENIAL_WEIGHT x denials
        sessions[rng.choice([n for n in names if n not in refused])] += [
            _request("docker run --privileged x", "docker run", u),
            ("tool_success", shell("docker run --privileged x", "docker run", tool_use_id=u))]
    for sid in rng.sample(names, 3):  # approvals answered by the same tool_use_id
        for _ in range(rng.randint(1, 2)):
            u = uid()
            sessions[sid] += [_request("pnpm install", "pnpm install", u),
                              ("tool_success", shell("ls", "ls", tool_use_id=uid())),
                              ("tool_success", shell("pnpm install", "pnpm install",
                                                     tool_use_id=u))]
    noise_sid, pip_sid = rng.sample(names, 2)
    sessions[noise_sid] += [("permission_denied", shell("make deploy", "make deploy",
                                                        reason="no"))] * 3  # one session only
    for _ in range(130):
        sid, roll = rng.choice(names), rng.random()
        if roll < 0.3:
            sessions[sid].append(("tool_success", shell("npm test", "npm test")))
        elif roll < 0.4:  # a plain failure saying "permission denied" is no refusal
            sessions[sid].append(("tool_failure", shell("cat /etc/shadow", "cat",
                                                        "cat: /etc/shadow: Permission denied")))
        elif roll < 0.5:  # asked, then the command ran and failed: not an approval
            u = uid()
            sessions[sid] += [_request("cargo publish", "cargo publish", u),
                              ("tool_failure", shell("cargo publish", "cargo publish",
                                                     "error: no token", tool_use_id=u))]
        elif roll < 0.58:  # approved, then succeeded: approvals of a family denied once
            u = uid()
            sessions[sid] += [_request("make deploy", "make deploy", u),
                              ("tool_success", shell("make deploy", "make deploy", tool_use_id=u))]
        elif roll < 0.65:  # interrupted, not refused
            sessions[sid].append(("tool_failure", shell("sleep 60", "sleep", "Command "
                                                        "interrupted by user", interrupted=True)))
        elif roll < 0.7:  # asked and approved again and again, in one session only
            sessions[pip_sid] += [_request("pip install -e .", "pip install", None),
                              ("tool_success", shell("pip install -e .", "pip install"))] * 3
        else:
            sessions[sid].append(("tool_success", {"tool": "Read", "tool_kind": "read",
                                                   "args": "README.md"}))
    return interleave(rng, sessions)


DENIED = {"denied|rm -rf", "denied|git push --force", "denied|curl -s",
          "denied|docker run --privileged"}


def test_denials_planted_are_found_and_noise_is_not(run, store, capsys):
    expected = DENIED | {"approved|pnpm install"}
    precision, recall, wrong = precision_recall(run, store, "denials", denials_log, expected,
                                                capsys)
    assert wrong == [] and (precision, recall) == (1.0, 1.0)


def test_denial_and_approval_cards(run, store):
    log = Log(store)
    for sid in ("a", "b"):
        log.append([log.obs(sid, "permission_denied", **shell("rm -rf build", "rm",
                                                              reason="destructive command")),
                    log.obs(sid, "tool_failure", **shell("curl x", "curl", HOOK)),
                    log.obs(sid, "permission_request", **shell("pnpm install", "pnpm install")),
                    log.obs(sid, "tool_success", **shell("pnpm install", "pnpm install")),
                    log.obs(sid, "permission_request", **shell("pnpm install", "pnpm install")),
                    log.obs(sid, "tool_success", **shell("pnpm install", "pnpm install"))])
    lessons = {e["fingerprint"]: e["card"] for e in js(run, "--kind", "denials")["lessons"]}
    rm, curl = lessons["denied|rm -rf"], lessons["denied|curl"]
    ok = lessons["approved|pnpm install"]
    assert rm["title"] == "Don't propose `rm -rf build` here: denied 2 time(s)"
    assert rm["problem"] == ("`rm -rf build` was refused 2 time(s) in 2 sessions (denied at the "
                             "permission prompt 2x); reason: destructive command")
    assert "reason (2x): destructive command" in rm["evidence"]
    assert "blocked" in curl["tags"] and "Blocked: network access" in curl["problem"]
    assert ok["title"] == "`pnpm install` is approved here (4 approvals, no denial)"
    assert ok["confidence"] == min(mine_denials.APPROVED_CONFIDENCE, rm["confidence"])
    assert "approved" in ok["tags"]
    assert (rm["trigger"], curl["trigger"], ok["trigger"]) == ("rm", "curl", "pnpm install")
    assert all(model.check("card", c, "card") == [] for c in lessons.values())
    denied_obs = log.obs("c", "permission_denied", **shell("rm -rf x", "rm", reason="no"))
    assert mine_denials.recurs(denied_obs) == rm["key"].split(":")[-1]
    assert mine_denials.recurs(log.obs("c", "tool_failure", **shell("rm x", "rm", "rm: x: No "
                                                                    "such file"))) is None


def test_denials_outweigh_approvals(run, store):
    log = Log(store)
    weight = mine_denials.DENIAL_WEIGHT
    for sid in ("a", "b"):
        log.append([log.obs(sid, "permission_denied", **shell("git push", "git push"))])
    for i in range(2 * weight):
        log.append([log.obs("c", "permission_request", **shell("git push", "git push")),
                    log.obs("c", "tool_success", **shell("git push", "git push"))])
    (lesson,) = js(run, "--kind", "denials")["lessons"]
    assert lesson["fingerprint"] == "denied|git push"
    assert lesson["card"]["gotchas"] == [f"it was also approved {2 * weight} time(s): one denial "
                                         f"outweighs {weight} approvals"]
    log.append([log.obs("d", "permission_request", **shell("git push", "git push")),
                log.obs("d", "tool_success", **shell("git push", "git push"))])
    assert js(run, "--kind", "denials")["lessons"] == []  # mixed now: no new evidence for it


SAID = REJECT + " To tell you how to proceed, the user said:\n"


def test_a_plan_or_question_turned_down_is_a_review_not_a_denial(run, store):
    """cc-backend (bench/learning, held-out-2): the user turned 8 plans down, 6 with feedback
    ("Only implement fix 6"), then approved the revised one: plan review, no ban."""
    log = Log(store)
    for sid in ("a", "b", "c"):
        log.append([log.obs(sid, "permission_denied", tool="ExitPlanMode", tool_kind="other",
                            error=SAID + "Only implement fix 6"),
                    log.obs(sid, "permission_denied", tool="AskUserQuestion", tool_kind="other",
                            error=REJECT),
                    log.obs(sid, "tool_failure", tool="exit_plan_mode", tool_kind="other",
                            error=REJECT)])
    assert js(run, "--kind", "denials")["lessons"] == []


def test_words_asking_for_something_else_correct_the_call_and_ban_nothing(run, store):
    log = Log(store)
    for sid in ("a", "b"):  # the user wants another change first: the push is not refused
        log.append([log.obs(sid, "tool_failure", **shell(
            "git push origin main", "git push", SAID + "oh wait, deal with the conflicts first"))])
    assert js(run, "--kind", "denials")["lessons"] == []
    for sid in ("c", "d"):  # words that name what was refused: a refusal of it
        log.append([log.obs(sid, "tool_failure", **shell(
            "git push origin main", "git push", SAID + "never push from this machine"))])
    (lesson,) = js(run, "--kind", "denials")["lessons"]
    assert lesson["card"]["title"] == "Don't propose `git push origin main` here: denied 2 time(s)"


def test_a_refusal_the_same_call_then_passes_is_lifted(run, store):
    """orpheus (bench/learning, held-out-2): a hook refused the first Edit of each workflow
    file, and the same Edit then went through: a one-time reminder, not "don't use Edit"."""
    log = Log(store)
    hook = ("PreToolUse:Edit hook error: [python3 hooks/security_reminder_hook.py]: You are "
            "editing a GitHub Actions workflow file.")

    def edit_of(sid, name, event="tool_success", **kw):
        path = f"/w/.github/workflows/{name}"
        return log.obs(sid, event, tool="Edit", tool_kind="edit", file=path, args=path, **kw)
    for sid in ("a", "b"):
        log.append([edit_of(sid, "ci.yml", "tool_failure", error=hook),
                    edit_of(sid, "release.yml"),  # another file passing lifts nothing
                    edit_of(sid, "ci.yml")])
    assert js(run, "--kind", "denials")["lessons"] == []
    for sid in ("c", "d"):  # refused and never passed: these stand, but edits of other files
        log.append([edit_of(sid, "nightly.yml", "tool_failure", error=hook),  # were judged,
                    edit_of(sid, "release.yml")])                            # not the tool
    assert js(run, "--kind", "denials")["lessons"] == []


def test_edits_refused_on_different_files_ban_no_tool_but_one_file_refused_is_a_lesson(
        run, store):
    """git-sync (bench/learning, held-out-5, read after its labels): Edit refused on two files
    in two sessions became "Don't propose `Edit` here", said at every session start and edit.
    A person refusing changes reviews them; a file refused again and again is the lesson."""
    log = Log(store)
    for sid, name in (("a", "sync.go"), ("b", "pack.go")):
        log.append([log.obs(sid, "permission_denied", tool="Edit", tool_kind="edit",
                            file=f"/w/{name}", args=f"/w/{name}")])
    assert js(run, "--kind", "denials")["lessons"] == []
    for sid in ("c", "d"):
        log.append([log.obs(sid, "permission_denied", tool="Write", tool_kind="write",
                            file="/w/.env", args="/w/.env")])
    (lesson,) = js(run, "--kind", "denials")["lessons"]
    assert lesson["card"]["title"] == "Don't propose `Write /w/.env` here: denied 2 time(s)"


def test_denials_are_grouped_by_what_was_denied_not_the_family(run, store):
    """2 denied force pushes beside 4 approved pushes: the force push is the lesson, and the
    approvals of other pushes neither outweigh it nor make it "don't propose git push"."""
    log = Log(store)
    for sid in ("a", "b"):
        log.append([log.obs(sid, "permission_denied", **shell(
            f"git push --force origin {sid}-topic", "git push", reason="force push"))])
    for sid in ("c", "c", "d", "d"):
        log.append([log.obs(sid, "permission_request", **shell("git push origin main",
                                                               "git push")),
                    log.obs(sid, "tool_success", **shell("git push origin main", "git push"))])
    for sid in ("e", "f"):  # a target denied, the same command elsewhere approved
        log.append([log.obs(sid, "tool_failure", **shell("rm -rf /srv/data", "rm", REJECT)),
                    log.obs(sid, "permission_request", **shell("rm -rf build", "rm")),
                    log.obs(sid, "tool_success", **shell("rm -rf build", "rm"))])
    lessons = {e["fingerprint"]: e["card"] for e in js(run, "--kind", "denials")["lessons"]}
    assert sorted(lessons) == ["approved|git push", "denied|git push --force", "denied|rm -rf"]
    push, rm = lessons["denied|git push --force"], lessons["denied|rm -rf"]
    assert push["title"] == "Don't propose `git push --force origin` here: denied 2 time(s)"
    assert push["trigger"] == "git push" and "gotchas" not in push
    assert rm["title"] == "Don't propose `rm -rf /srv/data` here: denied 2 time(s)"
    assert "gotchas" not in rm  # approvals of `rm -rf build` are no approvals of /srv/data
    assert lessons["approved|git push"]["title"] == (
        "`git push origin main` is approved here (4 approvals, no denial)")
    refused = log.obs("g", "permission_denied", **shell("git push -f origin x", "git push"))
    assert mine_denials.recurs(refused) != push["key"].split(":")[-1]
    refused["args"] = "git push origin x --force"
    assert mine_denials.recurs(refused) == push["key"].split(":")[-1]
    # what a subject is made of: no redirection, no quoted text, inside `bash -lc '…'` too
    for args, family, expected in (
            ("sudo rm -rf build/ > /dev/null 2>&1", "rm", ("rm", ["-rf"], ["build/"])),
            ('git commit --amend -m "fix it"', "git commit", ("git commit", ["--amend", "-m"], [])),
            ("bash -lc 'cd x && git push -f origin main'", "git push",
             ("git push", ["-f"], ["origin", "main"]))):
        assert mine_denials.subject({"tool_kind": "shell", "args": args,
                                     "family": family}) == expected


def test_a_hook_block_makes_one_card(run, store):
    log = Log(store)
    for sid in ("a", "b"):
        log.append([log.obs(sid, "tool_failure", **shell("curl https://x.example", "curl", HOOK,
                                                         exit_code=2))])
    lessons = js(run)["lessons"]
    assert [e["fingerprint"] for e in lessons] == ["denied|curl"]


# --- preferences ------------------------------------------------------------------------------

EQUIV = {"equivalents": [["make test", "just test"]]}
PREFERRED = {"npm run|test|npm test -> pnpm test", "python|gen.py|python gen.py -> python3 gen.py",
             "docker compose|up|docker-compose up -> docker compose up",
             "make test||just test -> make test"}


def preferences_log(seed):
    rng = random.Random(seed)
    sessions = new_sessions(rng)
    names = list(sessions)

    def side(count, sess, make):
        chosen = rng.sample(names, sess)
        for i in range(count):
            sessions[chosen[i % sess]].append(make())

    for good, bad, g_fam, b_fam, error in (
            ("pnpm test", "npm test", "pnpm test", "npm test",
             "npm ERR! Cannot read properties of null (reading 'matches')"),
            ("python3 scripts/gen.py", "python scripts/gen.py", "python3 gen.py", "python gen.py",
             "bash: python: command not found"),
            ("docker compose up -d", "docker-compose up -d", "docker compose", "docker-compose up",
             "bash: docker-compose: command not found"),
            ("make test", "just test", "make test", "just test", "just: command not found")):
        side(rng.randint(3, 6), 2, lambda: ("tool_success", shell(good, g_fam)))
        side(rng.randint(2, 4), 2, lambda: ("tool_failure", shell(bad, b_fam, error,
                                                                  exit_code=127)))
    # noise: both pytest variants fail now and then; lint fails in one session only;
    # yarn is refused once and succeeds otherwise
    for cmd, fam in (("pytest -x", "pytest"), ("python3 -m pytest -x", "python3 -m pytest")):
        for i in range(8):
            sessions[rng.choice(names)].append(
                ("tool_failure", shell(cmd, fam, "FAILED tests/test_a.py::test_x", exit_code=1))
                if i < 2 else ("tool_success", shell(cmd, fam)))
    lint_sid = rng.choice(names)
    sessions[lint_sid] += [("tool_failure", shell("npm run lint", "npm run lint",
                                                  "npm ERR! lint"))] * 3
    side(4, 2, lambda: ("tool_success", shell("pnpm run lint", "pnpm run lint")))
    side(3, 2, lambda: ("tool_success", shell("yarn build", "yarn build")))
    sessions[rng.choice(names)].append(("permission_denied", shell("npm run build",
                                                                   "npm run build")))
    for _ in range(120):
        sid, roll = rng.choice(names), rng.random()
        fam = rng.choice(["git status", "ls", "cargo build", "go test"])
        sessions[sid].append(("tool_failure", shell(fam, fam, "error: x")) if roll < 0.3
                             else ("tool_success", shell(fam, fam)))
    return interleave(rng, sessions)


def test_preferences_planted_are_found_and_noise_is_not(run, store, repo, capsys):
    write_config(repo, EQUIV)
    precision, recall, wrong = precision_recall(run, store, "preferences", preferences_log,
                                                PREFERRED, capsys)
    assert wrong == [] and (precision, recall) == (1.0, 1.0)


def test_preference_card_and_recurs(run, store):
    log = Log(store)
    for sid in ("a", "b"):
        log.append([log.obs(sid, "tool_failure", **shell("npm test", "npm test", "npm ERR! x")),
                    log.obs(sid, "permission_denied", **shell("npm test", "npm test",
                                                              reason="not here")),
                    *[log.obs(sid, "tool_success", **shell("pnpm test", "pnpm test"))] * 2])
    (lesson,) = js(run, "--kind", "preferences")["lessons"]
    card = lesson["card"]
    assert card["title"] == "Use `pnpm test`, not `npm test`"
    assert card["problem"] == ("`npm test` failed or was refused 4 time(s) in 2 sessions "
                               "(2 refused), while `pnpm test` succeeded 4 time(s) in 2 sessions")
    assert card["evidence"][:2] == ["`npm test` failed with: `npm ERR! x`", "`pnpm test` succeeded"]
    assert card["confidence"] == 0.45 and lesson["sessions"] == 2
    assert card["trigger"] == "pnpm test"  # obeying the lesson runs it: see LEARNING.md
    digest = card["key"].split(":")[-1]
    assert mine_preferences.recurs(log.obs("c", **shell("npm test -- -u", "npm test"))) == digest
    assert mine_preferences.recurs(log.obs("c", **shell("pnpm test", "pnpm test"))) != digest
    assert mine_preferences.recurs(log.obs("c", **shell("ls", "ls"))) is None
    assert mine_preferences.recurs(log.obs("c", "prompt", prompt="npm test")) is None


@pytest.mark.parametrize("family, args, expected", [
    ("npm run build", "npm run build", ("npm run", "build", "npm run")),
    ("yarn build", "yarn build", ("npm run", "build", "yarn")),
    ("python3 -m pytest", "python3 -m pytest -x", ("pytest", "", "python3 -m pytest")),
    ("python -m pip", "python -m pip install -U x", ("pip", "install", "python -m pip")),
    ("uv pip", "uv pip sync r.txt", ("pip", "sync", "uv pip")),
    ("docker compose", "docker compose up -d --build", ("docker compose", "up",
                                                             "docker compose")),
    ("cargo test", "cargo test", None),
    # bun's own test runner and bundler, not the package's `test` or `build` script
    ("bun test", "bun test src/a.test.ts", None),
    ("bun build", "bun build ./index.ts --outdir out", None),
    ("bun run test", "bun run test", ("npm run", "test", "bun run")),
    ("bun lint", "bun lint", ("npm run", "lint", "bun")),
])
def test_job_of_maps_interchangeable_families(family, args, expected):
    table = mine_preferences.groups({})
    assert mine_preferences.job_of({"family": family, "args": args}, table) == expected


@pytest.mark.parametrize("value, message", [
    ("npm=pnpm", "\"equivalents\" must be a list of lists of command families, got str"),
    ([["make test"]], "equivalents[0] must list 2 or more command families (non-empty strings), "
                      "e.g. [\"make test\", \"just test\"]"),
    ([["a", "b"], ["x", ""]], "equivalents[1] must list 2 or more command families (non-empty "
                              "strings), e.g. [\"make test\", \"just test\"]"),
])
def test_preferences_config_errors_are_one_line(run, store, repo, value, message):
    write_config(repo, {"equivalents": value})
    log = Log(store)
    log.append([log.obs("a", "tool_success", **shell("npm test", "npm test"))])
    before = snapshot(store)
    code, out, err = run(["mine", "--kind", "preferences"])
    assert (code != 0, out) == (True, "")
    assert err == f"self_learning: error: {config.path(str(repo))}: {message}\n"
    assert snapshot(store) == before


# --- all kinds together -----------------------------------------------------------------------

def test_incremental_runs_find_what_one_run_finds_and_dry_run_writes_nothing(
        run, store, repo, tmp_path, monkeypatch):
    setup = {"skill_bypass": BYPASS_RULES, **EQUIV}
    write_config(repo, setup)
    events = bypass_log(9) + denials_log(9) + preferences_log(9)
    log = Log(store)
    records = [log.obs(s, e, **f) for s, e, f in events]
    thirds = len(records) // 3
    log.append(records[:thirds])
    before = snapshot(store)
    dry = js(run, "--dry-run")
    assert snapshot(store) == before and dry["lessons"] and not dry["checkpoint_written"]
    js(run)
    log.append(records[thirds:2 * thirds])
    js(run)
    log.append(records[2 * thirds:])
    assert js(run)["from_offset"] > 0
    incremental = {c["key"]: c["observations"] for c in cards(store).values()}
    other = tmp_path / "one-run"  # the same log mined at once in another repository
    other.mkdir()
    monkeypatch.setenv("SELF_LEARNING_REPO_ROOT", str(other))
    write_config(other, setup)
    other_store = other / store.relative_to(repo)
    Log(other_store).append(records)
    js(run)
    at_once = {c["key"]: c["observations"] for c in cards(other_store).values()}
    assert incremental == at_once
    assert {k.split(":")[1] for k in at_once} >= {"bypass", "denials", "preferences"}


def test_kind_denials_alone_leaves_the_other_kinds_unread(run, store, repo):
    write_config(repo, {"skill_bypass": BYPASS_RULES})
    log = Log(store)
    log.append([log.obs(s, e, **f) for s, e, f in denials_log(3) + bypass_log(3)])
    data = js(run, "--kind", "denials")
    assert data["kinds"] == ["denials"] and set(data["clusters"]) == {"denials"}
    assert {e["kind"] for e in data["lessons"]} == {"denials"}
    state = json.loads((store / mine.STATE_FILE).read_text())["kinds"]
    assert set(state) == {"denials"}
    data = js(run, "--kind", "bypass")
    assert data["from_offset"] == 0 and {e["kind"] for e in data["lessons"]} == {"bypass"}
