"""The proposals inbox: filing, one per kind per run, apply/reject, rules from lessons, LLM
provider, CLI errors."""
import json
import os
import sys

import pytest

from selflearn.storage import model
from selflearn.learning import proposals, skilldraft
from selflearn.storage import store as jsonl
from selflearn.storage.memory import Memory
from test_docs import ALLOWED_KEYS, frontmatter
from test_sequences import BASE, CHAIN, HOUR, LONG, READ, Sessions, mine, proposed, with_glue
from seeding import seed_record  # noqa: E402

OTHER = ["cargo fmt", "cargo clippy", "cargo test"]


def habit(store, chain=CHAIN, n=3, start=BASE, prefix="s"):
    log = Sessions(store)
    for i in range(n):
        log.session(f"{prefix}{i}", start + i * HOUR, with_glue(chain), prompt=f"ship release {i}")
    log.flush()


def filed(run, store, monkeypatch):
    """The one skill proposal ``mine`` files for three sessions of the same habit."""
    habit(store)
    mine(run, monkeypatch, BASE + 5 * HOUR)
    return one(run)


def cli(run, *args):
    code, out, err = run(["proposals", *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def one(run, status="proposed", kind=None):
    data = cli(run, "list", "--status", status, *(["--kind", kind] if kind else []))
    assert data["count"] == 1, data
    return data["items"][0]


def records(store, name):
    path = store / name
    return jsonl.read(str(path))[0] if path.exists() else []


def fail_line(run, args):
    code, out, err = run(args)
    assert out == "" and "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("self_learning: error: ")
    return code, err.strip()


# --- filing ---------------------------------------------------------------------------------

def test_a_skill_proposal_cites_evidence_and_logs_a_skill_suggested_event(run, store, monkeypatch):
    p = filed(run, store, monkeypatch)
    assert p["kind"] == "skill" and p["status"] == "proposed" and p["source"] == "template"
    assert p["name"] == "npm-lint-test-git-commit" and p["target"].endswith(p["name"])
    assert len(p["evidence"]) == 3 and all("obs_" in e and "session s" in e for e in p["evidence"])
    assert "ship release 2" in p["body"] and "src/app.ts" in p["body"]
    [event] = records(store, "events.jsonl")
    assert event["tags"][0] == "skill_suggested" and f"proposal {p['id']}" in event["notes"]
    assert event["task_summary"] == "skill suggested: npm-lint-test-git-commit"
    assert [x["id"] for x in proposals.pending(Memory(str(store)))] == [p["id"]]


def test_the_draft_passes_the_frontmatter_checks_of_our_own_skill(run, store, monkeypatch):
    habit(store)
    mine(run, monkeypatch, BASE + 5 * HOUR)
    body = one(run)["body"]
    meta = frontmatter(body)
    assert set(meta) <= ALLOWED_KEYS and meta["name"] == "npm-lint-test-git-commit"
    description = json.loads(meta["description"])
    assert 1 <= len(description) <= 1024 and "<" not in description and ">" not in description
    assert "ship release" in description and "3 sessions" in description
    assert 'created_by: "self-learning-skills"' in meta["metadata"]
    assert 'weight: "0.8"' in meta["metadata"] and 'origin: "basal-ganglia"' in meta["metadata"]
    assert 'tags: "shell npm git"' in meta["metadata"]
    assert skilldraft.check(body) == []


def test_at_most_one_new_proposal_per_kind_per_run(run, store, monkeypatch):
    habit(store, CHAIN)
    habit(store, OTHER, start=BASE + 10 * HOUR, prefix="r")
    log = Sessions(store)
    for i in range(3):
        log.session(f"c{i}", BASE + 20 * HOUR + i * HOUR, [LONG])
    log.flush()
    data = mine(run, monkeypatch, BASE + 30 * HOUR)
    actions = sorted((e["kind"], e["action"]) for e in data["proposals"])
    assert actions == [("command", "proposed"), ("skill", "deferred (one new skill proposal per run)"),
                       ("skill", "proposed")]
    again = mine(run, monkeypatch, BASE + 31 * HOUR)
    assert [(e["kind"], e["action"]) for e in again["proposals"]] == [("skill", "proposed")]
    assert mine(run, monkeypatch, BASE + 32 * HOUR)["proposals"] == []
    assert cli(run, "list")["count"] == 3


def test_a_rejected_proposal_is_never_proposed_again(run, store, monkeypatch):
    pid = filed(run, store, monkeypatch)["id"]
    code, out, err = run(["proposals", "reject", "--id", pid, "--reason", "we use make release"])
    assert code == 0 and "archived" in out
    habit(store, start=BASE + 6 * HOUR, prefix="later")  # the habit goes on
    data = mine(run, monkeypatch, BASE + 12 * HOUR)
    assert [e["action"] for e in data["proposals"]] == ["skipped (rejected)"]
    assert cli(run, "list")["count"] == 0
    rejected = one(run, "rejected")
    assert rejected["reason"] == "we use make release" and rejected["decided_ts"]


def test_a_pending_proposal_gains_evidence_but_keeps_its_body(run, store, monkeypatch):
    habit(store)
    mine(run, monkeypatch, BASE + 5 * HOUR)
    first = one(run)
    habit(store, start=BASE + 6 * HOUR, prefix="more", n=1)
    data = mine(run, monkeypatch, BASE + 9 * HOUR)
    assert [e["action"] for e in data["proposals"]] == ["updated"]
    now = one(run)
    assert now["sessions"] == 4 and now["body"] == first["body"] and len(now["evidence"]) == 4
    assert mine(run, monkeypatch, BASE + 10 * HOUR)["proposals"] == []  # nothing new: silent


def test_dry_run_files_nothing_and_calls_no_provider(run, store, monkeypatch, tmp_path):
    marker = tmp_path / "called"
    monkeypatch.setenv(skilldraft.ENV_CMD, f"touch {marker}; cat")
    habit(store)
    data = mine(run, monkeypatch, BASE + 5 * HOUR, "--dry-run")
    assert [e["action"] for e in data["proposals"]] == ["proposed"]
    assert not (store / "proposals.jsonl").exists() and not marker.exists()


# --- the LLM provider ---------------------------------------------------------------------------

def provider(tmp_path, body):
    script = tmp_path / "provider.py"
    script.write_text(body)
    return f"{sys.executable} {script}"


def test_the_provider_writes_the_body(run, store, monkeypatch, tmp_path):
    seen = tmp_path / "prompt.txt"
    monkeypatch.setenv(skilldraft.ENV_CMD, provider(tmp_path, (
        "import sys\n"
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        "print('# Release the app\\n\\n## Steps\\n\\n1. Lint, test, commit.')\n")))
    habit(store)
    data = mine(run, monkeypatch, BASE + 5 * HOUR)
    assert data["proposals"][0]["warning"] == ""
    p = one(run)
    assert p["source"] == "llm" and "1. Lint, test, commit." in p["body"]
    assert skilldraft.check(p["body"]) == [] and frontmatter(p["body"])["name"] == p["name"]
    prompt = seen.read_text()
    assert "npm run lint -> npm test -> git commit" in prompt and "ship release 1" in prompt


@pytest.mark.parametrize("script, why", [
    ("import sys; sys.stderr.write('no key\\n'); sys.exit(3)", "exit 3: no key"),
    ("print('   ')", "empty output"),
    ("import time; time.sleep(5)", "timed out after 0.5 s"),
])
def test_a_failing_provider_falls_back_to_the_template_and_says_so(run, store, monkeypatch,
                                                                   tmp_path, script, why):
    monkeypatch.setattr(skilldraft, "LLM_TIMEOUT", 0.5)
    monkeypatch.setenv(skilldraft.ENV_CMD, provider(tmp_path, script))
    habit(store)
    data = mine(run, monkeypatch, BASE + 5 * HOUR)
    warning = f"provider failed ({why}); used the template"
    assert data["proposals"][0]["warning"] == warning
    p = one(run)
    assert p["source"] == "template" and p["warnings"] == [warning] and "## Steps" in p["body"]


# --- apply and reject -----------------------------------------------------------------------

def test_apply_writes_a_spec_valid_skill_and_refuses_to_overwrite(run, store, repo, monkeypatch):
    p = filed(run, store, monkeypatch)
    data = cli(run, "apply", "--id", p["id"])
    skill = repo / ".claude" / "skills" / p["name"] / "SKILL.md"
    assert data["written"] == str(skill.parent) and skill.read_text() == p["body"]
    meta = frontmatter(skill.read_text())
    assert set(meta) <= ALLOWED_KEYS and meta["name"] == skill.parent.name
    assert one(run, "applied")["applied_to"] == str(skill.parent)
    assert fail_line(run, ["proposals", "apply", "--id", p["id"]]) == (
        2, f"self_learning: error: proposals apply: {p['id']} is already applied "
           f"({one(run, 'applied')['decided_ts']}); a decided proposal stays decided")


def test_apply_refuses_an_existing_folder_or_symlink_and_bad_names(run, store, repo, monkeypatch,
                                                                    tmp_path):
    p = filed(run, store, monkeypatch)
    home = repo / ".claude" / "skills"
    home.mkdir(parents=True)
    (home / p["name"]).mkdir()
    code, err = fail_line(run, ["proposals", "apply", "--id", p["id"]])
    assert code == 2 and err == (f"self_learning: error: proposals apply: {home / p['name']} "
                                 "already exists; nothing was written (pass another --name, or "
                                 "--skills-dir)")
    (home / "linked").symlink_to(tmp_path)
    assert "already exists" in fail_line(run, ["proposals", "apply", "--id", p["id"], "--name",
                                               "linked"])[1]
    for bad in ("../escape", "/abs", "Upper", "a--b", "-lead", "trail-", "x" * 65, "a/b"):
        code, err = fail_line(run, ["proposals", "apply", "--id", p["id"], f"--name={bad}"])
        assert code == 2 and f"skill name {bad!r}" in err and "nothing was written" in err
    assert sorted(os.listdir(home)) == ["linked", p["name"]]
    assert one(run)["status"] == "proposed"


def test_apply_with_another_name_and_an_existing_folder_outside(run, store, monkeypatch,
                                                                 tmp_path):
    p = filed(run, store, monkeypatch)
    outside = tmp_path / "skills"
    for bad in (str(outside), "../skills"):  # outside: absolute and existing only
        code, err = fail_line(run, ["proposals", "apply", "--id", p["id"], "--skills-dir", bad])
        assert code == 2 and f"--skills-dir {bad!r} is outside the repository" in err
    assert not outside.exists()
    outside.mkdir()
    cli(run, "apply", "--id", p["id"], "--skills-dir", str(outside), "--name", "ship-it")
    text = (outside / "ship-it" / "SKILL.md").read_text()
    assert frontmatter(text)["name"] == "ship-it" and skilldraft.check(text) == []


def test_a_relative_skills_dir_is_taken_from_the_repo_root(run, store, repo, monkeypatch,
                                                          tmp_path):
    p = filed(run, store, monkeypatch)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    data = cli(run, "apply", "--id", p["id"], "--skills-dir", "tools/skills")
    assert data["written"] == str(repo / "tools" / "skills" / p["name"])
    assert (repo / "tools" / "skills" / p["name"] / "SKILL.md").read_text() == p["body"]
    assert os.listdir(elsewhere) == []


def test_a_failed_write_removes_the_folders_it_created(run, store, repo, monkeypatch):
    p = filed(run, store, monkeypatch)
    real_write = jsonl.atomic_write

    def failing(path, text, private=True):
        if str(path).endswith("SKILL.md"):
            raise OSError(28, "No space left on device")
        return real_write(path, text, private)

    monkeypatch.setattr(jsonl, "atomic_write", failing)
    code, err = fail_line(run, ["proposals", "apply", "--id", p["id"]])
    home = repo / ".claude" / "skills" / p["name"]
    assert code == 1 and err == (f"self_learning: error: proposals apply: cannot write {home} "
                                 "(No space left on device); nothing was written")
    assert not (repo / ".claude").exists() and one(run)["status"] == "proposed"
    monkeypatch.setattr(jsonl, "atomic_write", real_write)
    assert cli(run, "apply", "--id", p["id"])["written"] == str(home)


def test_a_command_proposal_applies_as_a_skill_running_the_command(run, store, repo,
                                                                    monkeypatch):
    log = Sessions(store)
    for i in range(3):
        log.session(f"c{i}", BASE + i * HOUR, [LONG])
    log.flush()
    mine(run, monkeypatch, BASE + 5 * HOUR)
    p = one(run, kind="command")
    assert p["body"] == LONG and p["name"] == "docker-compose-up"
    cli(run, "apply", "--id", p["id"])
    text = (repo / ".claude" / "skills" / "docker-compose-up" / "SKILL.md").read_text()
    assert f"```bash\n{LONG}\n```" in text and skilldraft.check(text) == []


@pytest.mark.parametrize("reason", [None, "", "  \n "])
def test_reject_needs_a_reason(run, store, monkeypatch, reason):
    pid = filed(run, store, monkeypatch)["id"]
    before = (store / "proposals.jsonl").read_bytes()
    args = ["proposals", "reject", "--id", pid] + ([] if reason is None else ["--reason", reason])
    assert fail_line(run, args) == (2, "self_learning: error: proposals reject: --reason is "
                                       "required; say why (kept with the archived proposal)")
    assert (store / "proposals.jsonl").read_bytes() == before


def test_reject_redacts_the_reason(run, store, monkeypatch):
    pid = filed(run, store, monkeypatch)["id"]
    cli(run, "reject", "--id", pid, "--reason", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert "ghp_abc" not in one(run, "rejected")["reason"]


# --- rules from proven lessons ----------------------------------------------------------------

def mined_card(run, store, confidence, status="candidate", origin="mined", key="mined:failure:abc",
               **extra):
    card = {"title": "`npm test` fails with `Cannot find module <X>`", "origin": origin,
            "status": status, "confidence": confidence, "key": key,
            "solution_steps": ["run `npm ci` before `npm test` in a fresh checkout"],
            "problem": "npm test failed 6 times in 5 sessions", **extra}
    code, _, err = seed_record(({"aha_cards": [card]}))
    assert code == 0, err
    log = Sessions(store)  # mine needs some observations to run at all
    log.obs("x", BASE, "prompt", prompt="hello")
    log.flush()
    return next(c["id"] for c in records(store, "aha_cards.jsonl")[::-1] if c.get("key") == key)


def set_status(run, card_id, status):
    code, _, err = run(["aha-status", "--id", card_id, "--status", status, "--note", "checked"])
    assert code == 0, err


def test_a_confident_mined_lesson_becomes_a_rule_and_applies_through_the_guard(run, store, repo,
                                                                               monkeypatch):
    mined_card(run, store, 0.85)
    mined_card(run, store, 0.5, key="mined:failure:unsure")
    mined_card(run, store, 0.95, origin="agent", key="mined:failure:agent")
    data = mine(run, monkeypatch, BASE)
    assert [(e["kind"], e["action"]) for e in data["proposals"]] == [("rule", "proposed")]
    p = one(run, kind="rule")
    assert p["body"] == ("- When `npm test` fails with `Cannot find module \u2039X\u203a`: run `npm ci` "
                         "before `npm test` in a fresh checkout.")
    assert records(store, "events.jsonl")[-1]["tags"][0] == "rule_suggested"
    cli(run, "apply", "--id", p["id"])
    assert (repo / "AGENTS.md").read_text() == \
        p["body"] + " (mined; applied by a person)\n"


def test_an_accepted_mined_lesson_becomes_a_rule_for_another_file(run, store, repo, monkeypatch):
    mined_card(run, store, 0.4, status="accepted")
    mine(run, monkeypatch, BASE)
    p = one(run, kind="rule")
    cli(run, "apply", "--id", p["id"], "--file", "CLAUDE.md")
    assert "npm ci" in (repo / "CLAUDE.md").read_text() and not (repo / "AGENTS.md").exists()


def test_a_rule_the_guard_refuses_stays_pending(run, store, repo, monkeypatch):
    mined_card(run, store, 0.9)
    mine(run, monkeypatch, BASE)
    p = one(run, kind="rule")
    code, err = fail_line(run, ["proposals", "apply", "--id", p["id"], "--file", ".git/x.md"])
    assert code == 2 and "which improve never writes" in err
    assert one(run, kind="rule")["status"] == "proposed"


def test_a_rule_the_file_already_holds_is_applied_as_present(run, store, repo, monkeypatch):
    mined_card(run, store, 0.9)
    mine(run, monkeypatch, BASE)
    p = one(run, kind="rule")
    said = "# Rules\n\n- when npm test fails with Cannot find module X, run npm ci before npm " \
           "test in a fresh checkout\n"
    (repo / "AGENTS.md").write_text(said)
    code, out, err = run(["proposals", "apply", "--id", p["id"]])
    assert (code, err) == (0, "") and out == (f"applied {p['id']} (rule): already present in "
                                              "AGENTS.md line 3; nothing written\n")
    done = one(run, "applied", kind="rule")
    assert done["present"] == "AGENTS.md line 3"
    assert done["applied_to"] == str(repo / "AGENTS.md")
    assert (repo / "AGENTS.md").read_text() == said and not (store / "improvements.md").exists()
    assert "already present: AGENTS.md line 3" in run(["proposals", "show", "--id", p["id"]])[1]


def test_rule_sessions_come_from_the_card_and_evidence_stays_stable(run, store, monkeypatch):
    seen = [f"seen 2026-02-0{i}T10:00:00Z in session {sid} (obs_{i})"
            for i, sid in enumerate(["s1", "s2", "s1", "s3"], 1)]
    card_id = mined_card(run, store, 0.85, evidence=seen, observations=9)
    mined_card(run, store, 0.9, key="mined:failure:noses", observations=7,
               title="`make` fails with `No rule to make target <X>`")
    data = mine(run, monkeypatch, BASE, "--kind", "failures")
    assert sorted(e["sessions"] for e in data["proposals"]) == [3, 7]
    mine(run, monkeypatch, BASE + HOUR // 2)  # files the one deferred (one per kind per run)
    rules = cli(run, "list", "--kind", "rule")["items"]
    assert sorted(p["sessions"] for p in rules) == [3, 7]
    p = next(r for r in rules if r["card"] == card_id)
    assert p["evidence"] == [f"card {card_id}"] + seen[:3]
    lines = len(records(store, "proposals.jsonl"))
    set_status(run, card_id, "accepted")
    data = mine(run, monkeypatch, BASE + HOUR)
    assert [e["action"] for e in data["proposals"] if e["id"] == p["id"]] == []
    assert len(records(store, "proposals.jsonl")) == lines
    assert cli(run, "show", "--id", p["id"])["proposal"]["evidence"] == p["evidence"]


@pytest.mark.parametrize("status", ["rejected", "deprecated", "retired"])
def test_a_pending_rule_whose_card_is_hidden_is_closed(run, store, monkeypatch, status):
    card_id = mined_card(run, store, 0.9)
    mine(run, monkeypatch, BASE)
    p = one(run, kind="rule")
    set_status(run, card_id, status)
    data = mine(run, monkeypatch, BASE + HOUR)
    assert [(e["id"], e["action"]) for e in data["proposals"]] == [
        (p["id"], f"rejected (card {card_id} is {status})")]
    assert one(run, "rejected", kind="rule")["reason"] == f"card {card_id} is {status}"
    assert mine(run, monkeypatch, BASE + 2 * HOUR)["proposals"] == []


def test_a_hidden_card_is_never_proposed_as_a_rule(run, store, monkeypatch):
    mined_card(run, store, 0.95, status="deprecated")
    assert mine(run, monkeypatch, BASE)["proposals"] == []


def test_an_exported_lesson_is_not_proposed_and_closes_a_pending_rule(run, store, repo,
                                                                     monkeypatch):
    card_id = mined_card(run, store, 0.9)
    mine(run, monkeypatch, BASE)
    p = one(run, kind="rule")
    set_status(run, card_id, "accepted")
    assert run(["export-rules", "--agent", "agents-md"])[0] == 0
    text = (repo / "AGENTS.md").read_text()
    n = next(i for i, line in enumerate(text.splitlines(), 1) if "npm ci" in line)
    assert "<!-- self-learning-skills:begin" in "\n".join(text.splitlines()[:n - 1])
    data = mine(run, monkeypatch, BASE + HOUR)
    assert [(e["id"], e["action"]) for e in data["proposals"]] == [
        (p["id"], f"applied (AGENTS.md line {n})")]
    done = one(run, "applied", kind="rule")
    assert (done["present"], done["applied_to"]) == (f"AGENTS.md line {n}", "AGENTS.md")
    mined_card(run, store, 0.9, status="accepted", key="mined:failure:other",
               title="`make` fails with `No rule to make target <X>`")
    assert run(["export-rules", "--agent", "agents-md"])[0] == 0
    assert "`make` fails with" in (repo / "AGENTS.md").read_text()
    assert mine(run, monkeypatch, BASE + 2 * HOUR)["proposals"] == []


# --- show, corrections, CLI errors -------------------------------------------------------------

def test_show_lists_evidence_and_corrections_newest_first(run, store, monkeypatch):
    p = filed(run, store, monkeypatch)
    for text in ("run the lint step with --fix first", "commit with the release template"):
        assert run(["correct", "--pattern", p["key"], "--text", text])[0] == 0
    shown = cli(run, "show", "--id", p["id"])["proposal"]
    assert shown["corrections"] == ["commit with the release template",
                                    "run the lint step with --fix first"]
    code, out, _ = run(["proposals", "show", "--id", p["id"]])
    assert "corrections (newest first):" in out and out.index("commit with") < out.index("--fix")
    assert "evidence:" in out and "---\nname: npm-lint-test-git-commit" in out
    assert "2 correction(s)" in run(["proposals", "list"])[1]


def test_corrections_of_a_skill_pattern_reach_its_skill_md(run, store, repo, monkeypatch):
    """Corrections made before `apply` are written with the skill; one made after it is
    written into the applied SKILL.md (the agent reads it there), newest first."""
    p = filed(run, store, monkeypatch)
    assert run(["correct", "--pattern", p["covers"][-1], "--text",
                "run the lint step with --fix first"])[0] == 0
    data = cli(run, "apply", "--id", p["id"])
    skill = repo / ".claude" / "skills" / p["name"] / "SKILL.md"
    text = skill.read_text()
    assert text.startswith(p["body"]) and text.endswith(
        "\n## Corrections\n\nPeople corrected this workflow (newest first); follow them over "
        "the steps above.\n\n- run the lint step with --fix first\n"
        "<!-- self-learning-skills:corrections:end -->\n")
    assert data["written"] == str(skill.parent)
    code, out, err = run(["correct", "--pattern", p["key"], "--text",
                          "commit with the release template"])
    assert code == 0 and out.splitlines()[-1] == f"written into {skill}"
    text = skill.read_text()
    assert text.count("## Corrections") == 1 and text.index("release template") < \
        text.index("--fix first") and text.startswith(p["body"])
    assert skilldraft.check(text) == []
    skill.write_text(text.replace(skilldraft.OWNED, 'created_by: "alice"'))  # hers now
    code, out, err = run(["correct", "--pattern", p["key"], "--text", "one more correction"])
    assert code == 0 and "was not created by self_learning" in out.splitlines()[-1]


@pytest.mark.parametrize("args, message", [
    (["proposals", "show", "--id", "prop_nope"],
     "proposals show: no proposal with id 'prop_nope' (see `proposals list --status all`)"),
    (["proposals", "apply", "--id", "prop_nope"],
     "proposals apply: no proposal with id 'prop_nope' (see `proposals list --status all`)"),
    (["proposals", "reject", "--id", "prop_nope", "--reason", "not ours"],
     "proposals reject: no proposal with id 'prop_nope' (see `proposals list --status all`)"),
    (["proposals", "apply"], "proposals apply: --id is required (see `proposals list`)"),
    (["proposals", "list", "--reason", "x"],
     "proposals list: --reason does not apply here (see `proposals --help`)"),
    (["proposals", "show", "--id", "x", "--status", "all"],
     "proposals show: --status does not apply here (see `proposals --help`)"),
    (["suggest-skills", "--propose", "mined:sequence:nope"],
     "suggest-skills: no candidate with key 'mined:sequence:nope' (see `suggest-skills`; run "
     "`mine` first to count new sessions)"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(run, store, args, message):
    code, err = fail_line(run, args)
    assert (code, err) == (2, f"self_learning: error: {message}")
    assert not store.exists()


def test_kind_mismatched_apply_flags_are_refused(run, store, monkeypatch):
    habit(store)
    mined_card(run, store, 0.9)
    mine(run, monkeypatch, BASE + 5 * HOUR)
    skill, rule = one(run, kind="skill"), one(run, kind="rule")
    assert "--file is for rule proposals" in fail_line(
        run, ["proposals", "apply", "--id", skill["id"], "--file", "CLAUDE.md"])[1]
    assert "--skills-dir and --name are for skill" in fail_line(
        run, ["proposals", "apply", "--id", rule["id"], "--name", "x"])[1]


def test_list_text_and_empty_inbox(run, store, monkeypatch):
    assert run(["proposals", "list"])[1].startswith("no pending proposals")
    habit(store)
    mine(run, monkeypatch, BASE + 5 * HOUR)
    out = run(["proposals", "list"])[1]
    assert "[skill, proposed] Workflow: `npm run lint`" in out and "proposals apply --id" in out


# --- suggest-skills -------------------------------------------------------------------------------

def test_suggest_skills_lists_pending_and_candidates_below_the_bar(run, store, monkeypatch):
    habit(store, n=3)
    habit(store, OTHER, n=2, start=BASE + 3 * HOUR, prefix="r")
    mine(run, monkeypatch, BASE + 8 * HOUR)
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(BASE + 8 * HOUR))
    pending = one(run)
    assert run(["correct", "--pattern", pending["key"], "--text", "tag the release first"])[0] == 0
    code, out, err = run(["suggest-skills", "--format", "json"])
    data = json.loads(out)
    assert data["pending"][0]["corrections"] == ["tag the release first"]
    assert [p["name"] for p in data["pending"]] == ["npm-lint-test-git-commit"]
    [cand] = data["candidates"]
    assert cand["sessions"] == 2 and cand["needed"] == 3 and "`cargo fmt`" in cand["title"]
    assert cand["accept"] == f"suggest-skills --propose {cand['key']}"
    text = run(["suggest-skills"])[1]
    assert f"accept: `proposals apply --id {data['pending'][0]['id']}`" in text
    assert "    correction: tag the release first" in text
    assert "(2/3 sessions" in text and f"`suggest-skills --propose {cand['key']}`" in text
    code, out, err = run(["suggest-skills", "--propose", cand["key"], "--format", "json"])
    assert code == 0, err
    filed = json.loads(out)
    assert filed["filed"][0]["action"] == "proposed" and filed["candidates"] == []
    assert len(filed["pending"]) == 2


def test_suggest_skills_on_an_empty_store(run, store):
    code, out, err = run(["suggest-skills"])
    assert code == 0 and out == "No pending skill proposals.\n"


def test_review_and_index_show_a_proposal_until_it_is_decided(run, store, monkeypatch):
    pid = filed(run, store, monkeypatch)["id"]
    code, out, _ = run(["review"])
    assert code == 0 and f"  {pid} [skill] " in out and f"proposals show --id {pid}" in out
    assert f"`{pid}` [skill]" in (store / "INDEX.md").read_text()
    assert run(["proposals", "reject", "--id", pid, "--reason", "not a habit"])[0] == 0
    code, out, _ = run(["review", "--format", "json"])
    assert json.loads(out)["proposals"] == [] and pid not in (store / "INDEX.md").read_text()


def test_apply_never_writes_a_skill_inside_git(run, store, repo, monkeypatch):
    p = filed(run, store, monkeypatch)
    (repo / ".git").mkdir(exist_ok=True)
    code, err = fail_line(run, ["proposals", "apply", "--id", p["id"], "--skills-dir", ".git/x"])
    assert code == 2 and err == (f"self_learning: error: proposals apply: "
                                 f"{repo / '.git' / 'x' / p['name']} is inside "
                                 "a .git folder; write somewhere else; nothing was written")
    assert os.listdir(repo / ".git") == []


def test_apply_writes_the_skill_body_inert_whatever_the_stored_draft_holds(run, store, repo,
                                                                           monkeypatch):
    """Issue #25: a draft stored with raw HTML or a remote image (written by hand, or before
    drafts were made inert) still renders as text in the SKILL.md that apply writes."""
    p = filed(run, store, monkeypatch)
    rows = records(store, "proposals.jsonl")
    row = dict(next(r for r in rows if r["id"] == p["id"]))
    row["body"] += "\n<script>x()</script> ![b](https://t.example/p.png)\n"
    jsonl.append(str(store / "proposals.jsonl"), [row])
    cli(run, "apply", "--id", p["id"])
    body = (repo / ".claude" / "skills" / p["name"] / "SKILL.md").read_text()
    assert "<script>" not in body and "![b]" not in body and "\u2039script\u203a" in body
