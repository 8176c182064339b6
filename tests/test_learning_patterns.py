"""The failures miner as an episode finder (issue 26): a lesson only where the fix is certain.

Each test plants one pattern of issue 26's list ("the patterns behind the misses") as the
hooks would record it: synthetic commands and outputs shaped like the tools print them
(lint-staged, pnpm, go, cargo, rustc, pytest, gh), written here, not copied from a session.
"""
import json

import pytest

from selflearn.learning import fingerprint, fix_edits, fix_shell, mine_base, mine_failures
from selflearn.observation import causes, observe
from selflearn.storage import model
from selflearn.storage import store as jsonl
from test_learning_real import Log, failed, mined

LINT_STAGED = """[STARTED] Preparing lint-staged...
[COMPLETED] Preparing lint-staged...
[STARTED] Running tasks for staged files...
[FAILED] markdownlint-cli2 --fix [FAILED]
[SKIPPED] Skipped because of errors from tasks.
[STARTED] Reverting to original state because of errors...
[COMPLETED] Reverting to original state because of errors...

\u2716 markdownlint-cli2 --fix:
Summary: 1 error(s)
docs/setup.md:14 MD040/fenced-code-language Fenced code blocks should have a language specified [Context: "```"]
husky - pre-commit script failed (code 1)"""
PNPM = """ ERR_PNPM_UNEXPECTED_STORE  Unexpected store location

The dependencies at "/w/app/node_modules" are currently linked from the store at "/a/store/v3".

If you want to use the new store location, reinstall your dependencies with "pnpm install".

(This error happened while installing the dependencies of api@0.1.0)"""
GO_BUILD = """# example.com/app/pkg [example.com/app/pkg.test]
pkg/parse_test.go:31:9: not enough arguments in call to Parse
\thave (string)
\twant (string, Options)
FAIL\texample.com/app/pkg [build failed]
FAIL"""
CARGO_TEST = """running 2 tests
test tests::parses ... ok
test tests::rejects ... FAILED

failures:

---- tests::rejects stdout ----
thread 'tests::rejects' panicked at src/lib.rs:40:9:
assertion `left == right` failed

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out

error: test failed, to rerun pass `--lib`"""
PYTEST = """============================= test session starts ==============================
collected 4 items

tests/test_cli.py ...F                                                   [100%]
=============================== warnings summary ===============================
  /w/.venv/lib/python3.12/site-packages/_pytest/config/__init__.py:1441: PytestConfigWarning: Unknown config option: asyncio_mode
=========================== short test summary info ============================
FAILED tests/test_cli.py::test_exit_code - assert 1 == 0
==================== 1 failed, 3 passed, 1 warning in 0.21s ===================="""
E0133 = """   Compiling app v0.1.0 (/w/app)
warning: unused import: `std::io`
 --> src/main.rs:1:5
error[E0133]: call to unsafe function `std::env::set_var` is unsafe and requires unsafe block
  --> src/config.rs:18:9
   |
18 |         std::env::set_var("APP_MODE", "test");
   |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ call to unsafe function
error: could not compile `app` (lib) due to 1 previous error"""


BIOME = """$ biome check --error-on-warnings
 at src/a.test.ts format \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501

  \u00d7 Formatter would have printed the following content:

    12 12 \u2502   it("parses", () => {
    13    \u2502 - \u2192 expect(parse(
    ······· \u2502
       13 \u2502 + \u2192 expect(parse("a")).toBe(1);

Checked 40 files in 20ms. No fixes applied.
Found 1 error.
check \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501

  \u00d7 Some errors were emitted while running checks.

error: script "lint" exited with code 1"""


def fmt_check(colour: bool, line: str) -> str:
    """``cargo fmt --check`` output for one file, with or without terminal colours."""
    bold, red, reset = ("\x1b[1m", "\x1b[31m", "\x1b[0m") if colour else ("", "", "")
    return (f"{bold}Diff in /w/app/src/lib.rs at line 12:{reset}\n"
            f" fn parse() {{\n{red}-    let x = Err(Error::Invalid);{reset}\n"
            f"+    {line}\n }}\n")


def edit(path: str, old: str, new: str, kind: str = "edit") -> dict:
    tool = "Edit" if kind == "edit" else "Write"
    return {"tool": tool, "tool_kind": kind, "file": path, "args": path,
            "edit_old": old, "edit_new": new}


def steps(run) -> list:
    return [card.get("solution_steps", []) for card in mined(run)]


# --- the line that names the cause ---------------------------------------------------------

@pytest.mark.parametrize("output, cause", [
    (LINT_STAGED, 'docs/setup.md:14 MD040/fenced-code-language Fenced code blocks should have '
                  'a language specified [Context: "```"]'),  # not lint-staged's [SKIPPED] line
    (PNPM, "ERR_PNPM_UNEXPECTED_STORE Unexpected store location"),  # not pnpm's footnote
    (GO_BUILD, "pkg/parse_test.go:31:9: not enough arguments in call to Parse"),  # not [build failed]
    (E0133, "error[E0133]: call to unsafe function `std::env::set_var` is unsafe and requires "
            "unsafe block --> src/config.rs:18:9"),  # the file rustc points to, not the footer
    (PYTEST, "FAILED tests/test_cli.py::test_exit_code - assert 1 == 0"),  # not a warning
    ("a.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.", "a.py:1:8: F401 [*] `os` "
                                                                    "imported but unused"),
    (BIOME, "\u00d7 Formatter would have printed the following content:"),  # not its count line
    ("Found 2 errors.\nsrc/a.ts\n  error  'x' is never reassigned  prefer-const",
     "error 'x' is never reassigned prefer-const"),
    # bun prints what a passing test throws on purpose; the failing test is the cause
    ("89 |   throw new Error(\"Item 3 failed\");\nerror: Item 3 failed\n      at <anonymous>\n"
     "(pass) limiter > keeps going [0.4ms]\n537 |   expect(res.status).toBe(200);\n"
     "error: expect(received).toBe(expected)\n(fail) routes > respects limit [0.29ms]\n"
     " 1 fail\nerror: script \"test\" exited with code 1",
     "error: expect(received).toBe(expected)"),
])
def test_the_cause_is_the_line_that_names_the_error_not_a_wrapper_or_a_footer(output, cause):
    assert causes.cause_line(output) == cause


def test_a_formatter_finding_is_one_failure_however_many_files_it_counts(run, store):
    """The cause is the finding, not ``Found N errors.``: one lesson, however many files."""
    log = Log(store)
    for sid, count in (("s1", "Found 4 errors."), ("s2", "Found 1 error.")):
        log.add(sid, failed("bun run lint 2>&1", BIOME.replace("Found 1 error.", count)), ok=False)
        log.add(sid, "bun run lint:fix 2>&1")
        log.add(sid, "bun run lint 2>&1")
    (card,) = mined(run)
    assert card["title"] == "`bun run lint` fails with `\u00d7 Formatter would have printed the " \
                            "following content:`"
    assert card["solution_steps"][0].startswith("run `bun run lint:fix` before `bun run lint")


def test_a_count_printed_by_the_agents_own_script_names_no_cause(run, store):
    """oh-my-posh (held-out-11, fresh): a PowerShell line of the agent's own printed the
    number of findings; taken for the cause, it made "use `--fix` over every file" a lesson
    (the fix was a lint config and hand edits; `--fix` damaged the docs)."""
    log = Log(store)
    lint = 'npx -y markdownlint-cli2 --config .markdownlint-cli2.yaml "docs/**/*.mdx"'
    log.add("s1", failed(lint + ' 2>&1 | Out-File "$env:TEMP\\md.txt"; "total: $((Get-Content '
                         '"$env:TEMP\\md.txt").Count)"', "Exit code 1\ntotal: 1589"), ok=False)
    log.add("s1", lint.replace(" --config", " --fix --config"))
    assert mined(run) == []
    assert causes.summary("total: 1589") and causes.summary("Errors: 3")
    assert not causes.summary("bind: address already in use: 5432")


def test_other_code_run_the_same_way_is_no_fix(run, store):
    """oh-my-posh (held-out-11, fresh): a `python3 - <<'PY'` script failed on its own regex and
    passed with the backslashes doubled: the code under work was fixed, not how it runs.
    Running it another way (`uv run python`) still is a variant."""
    log = Log(store)
    regex = ('Traceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
             're.PatternError: incomplete escape \\u at position 0')
    script = "python3 - <<'PY'\nimport glob,re\nesc=re.compile(r'\\u[eE][0-9a-f]{3}')\nPY"
    log.add("s1", failed(script, regex), ok=False)
    log.add("s1", script.replace("\\u", "\\\\u"))
    assert mined(run) == []
    assert fix_shell.code_changed("python3 -c 'import yaml'", "python3 -c 'import yaml, sys'")
    assert not fix_shell.code_changed("python -c 'import yaml'", "uv run python -c 'import yaml'")
    assert not fix_shell.code_changed("git commit -F - <<'E' a E", "git commit -F - <<'E' b E")


def test_a_diff_with_or_without_colours_is_one_failure():
    a = failed("cargo fmt --check", fmt_check(True, "let x=Err(Error::Invalid);"))
    b = failed("cargo fmt --check", fmt_check(False, "let x =Err( Error::Invalid );"))
    assert fingerprint.of_failure(a)[1] == fingerprint.of_failure(b)[1]
    assert fingerprint.of_failure(a)[2] == "Diff in /w/app/src/lib.rs at line 12:"


def test_a_rule_code_is_kept_in_the_fingerprint():
    text = fingerprint.of_failure(failed("git commit -m 'docs: setup'", LINT_STAGED))[0]
    assert "MD040/fenced-code-language" in text and "<path>:<n> MD040" in text


@pytest.mark.parametrize("output", [CARGO_TEST, PYTEST, "error: Item 3 failed\n"
                                    "(fail) routes > respects limit [0.29ms]\n 1 fail"])
def test_a_failing_test_is_the_code_under_work_not_a_lesson(output):
    obs = failed("cargo test" if output is CARGO_TEST else "pytest -q", output)
    assert mine_failures.recurs(obs) is None


def test_a_test_that_cannot_import_is_no_verdict():
    assert not causes.test_verdict("FAILED tests/test_a.py::test_b - ModuleNotFoundError: "
                                      "No module named 'yaml'")


def test_a_linters_finding_that_says_what_it_expected_is_no_test_verdict():
    """markdownlint prints ``[Expected: h2; Actual: h3]``: a rule broken, not a test failing."""
    line = "docs/a.md:16 error MD001/heading-increment Heading levels should only increment " \
           "by one level at a time [Expected: h2; Actual: h3]"
    assert not causes.test_verdict(line) and causes.test_verdict("Expected: 2, got 3")


@pytest.mark.parametrize("command, error", [
    ("curl -s https://api.example.test/items | jq '.items[] | .name'",
     "jq: error (at <stdin>:131): Cannot iterate over null (null)"),
    ("aws cloudfront list-cache-policies --query \"Items[?contains(Name, 'Caching')]\"",
     "In function contains(), invalid type for value: None, expected one of: ['array', "
     "'string'], received: \"null\""),
    ("ls build | head -5", "/bin/bash: line 1: head: command not found"),
])
def test_a_probe_of_data_or_a_shell_that_lost_its_path_is_no_lesson(command, error):
    """A filter failing on the data it explores, or a shell that cannot find `head` (the
    session broke PATH): what worked next is no fix to keep."""
    assert mine_failures.recurs(failed(command, error)) is None
    assert mine_failures.recurs(failed("go build ./...", "/bin/bash: line 1: go: command not "
                                       "found")) is not None  # a program missing here is
    assert not mine_base.verdict("jq: error: syntax error, unexpected INVALID_CHARACTER")


def test_a_conflict_resolved_by_hand_keeps_the_edit_in_front_of_the_hinted_command():
    """cipher-box (held-out-7): `git add .planning/STATE.md && git rebase --continue`, as git's
    hint says, after the conflicted file was edited; without the edit the step would stage the
    conflict markers. A file in a folder whose name starts with a dot is the file named."""
    edit = {"event": "tool_success", "tool_kind": "edit", "file": "/w/.planning/STATE.md"}
    assert fix_edits.edits_named(edit, ".planning/STATE.md")
    assert fix_edits.edits_named(dict(edit, file="/w/docs/a.md"), "./docs/a.md")
    assert not fix_edits.edits_named(dict(edit, file="/w/planning/STATE.md"), ".planning/STATE.md")
    fix = {"how": "hint", "args": "git add .planning/STATE.md && git rebase --continue",
           "failed": "git rebase origin/main", "before": "edit `STATE.md` (the file the error names)"}
    assert mine_failures._step(fix) == (
        "edit `STATE.md` (the file the error names), then run `git add .planning/STATE.md && git "
        "rebase --continue` (the error suggests it) after `git rebase origin/main` fails")


PNPM_STORE = ("ERR_PNPM_UNEXPECTED_STORE Unexpected store location\n"
              "Run \"pnpm install\" to recreate the modules directory.")


def test_a_hinted_command_run_with_a_fallback_is_no_fix(run, store):
    """cipher-box (held-out-7): the hinted `pnpm install` ran with a fallback (`|| …`), then
    with its status cut by `| tail` and run again otherwise: it had failed underneath, and
    what fixed it came last. A hint run with its output cut counts once the next call moves
    on: the error asked for it, and nothing shows it fell short."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("pnpm --filter e2e add -D x", PNPM_STORE), ok=False)
        log.add(sid, "pnpm install --frozen-lockfile 2>&1 || pnpm install 2>&1 | tail -5")
        log.add(sid, "CI=true pnpm install 2>&1 | tail -5")
        log.add(sid, "CI=true pnpm install --no-frozen-lockfile 2>&1 | tail -5")
        log.add(sid, "git status")
    steps = [step for c in mined(run) for step in c["solution_steps"]]
    assert [s for s in steps if "suggests it" in s] == [
        "run `CI=true pnpm install --no-frozen-lockfile` (the error suggests it) after `pnpm "
        "--filter e2e add -D x` fails"]


def test_a_hinted_command_with_its_status_cut_is_the_fix_when_nothing_reruns_it(run, store):
    """`pnpm api:generate | tail -5` as the error asked, then only edits until the window
    closes: nothing showed the hint fell short, so it is the fix."""
    log = Log(store)
    log.add("s1", failed("pnpm --filter e2e add -D x", PNPM_STORE), ok=False)
    log.add("s1", "pnpm install 2>&1 | tail -5")
    for n in range(mine_failures.FIX_WINDOW):
        log.add("s1", edit(f"/w/src/f{n}.ts", "a", "b"))
    assert [s for c in mined(run) for s in c["solution_steps"] if "suggests it" in s] == [
        "run `pnpm install` (the error suggests it) after `pnpm --filter e2e add -D x` fails"]


TSC_HOOK = ("src/a.test.ts(12,5): error TS2739: Type '{ n: number; }' is missing the "
            "following properties\nhusky - pre-commit script failed (code 2)")


def test_a_commit_that_got_through_with_less_staged_is_no_fix(run, store):
    """context-evaluator (held-out-10): the hook's type check failed on a file another session
    had staged; unstaging it let the commit through, but it fixed nothing (the check reads the
    files on disk) and took another session's work out. A step that leaves files out of the
    commit is no fix; a step that changes what is committed is."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("git add src/b.ts && git commit -m x", TSC_HOOK), ok=False)
        log.add(sid, "git reset HEAD src/a.test.ts")
        log.add(sid, "git add src/b.ts && git commit -m x")
    assert mined(run) == []
    for sid in ("s3", "s4"):
        log.add(sid, failed("git add src/c.ts && git commit -m y", TSC_HOOK), ok=False)
        log.add(sid, "bun run typecheck:fix")
        log.add(sid, "git add src/c.ts && git commit -m y")
    assert any("typecheck:fix" in step for c in mined(run) for step in c["solution_steps"])



@pytest.mark.parametrize("step, out", [
    ("git reset HEAD src/a.test.ts", True), ("git reset HEAD", True),
    ("git reset -- src/a.ts", True), ("git restore --staged a.ts", True),
    ("git reset HEAD~1", False),  # undoes a commit: what is staged grows
    ("git reset --soft HEAD~1", False), ("git status && git reset HEAD^", False)])
def test_unstaging_is_taking_files_out_of_the_index(step, out):
    assert fix_shell.unstages(step) is out

# --- the fix is the step that changed the outcome ------------------------------------------

MISSING_DOCKER = "Exit code 127\n(eval):1: command not found: docker"


def test_a_command_that_merely_succeeded_next_does_not_replace_a_missing_program(run, store):
    log = Log(store)
    log.add("s1", failed("docker compose up -d postgres", MISSING_DOCKER), ok=False)
    log.add("s1", "pnpm --filter api dev")
    log.add("s2", failed("nvcc --version", "Exit code 127\nbash: nvcc: command not found"),
            ok=False)
    log.add("s2", "gcc --version")
    assert mined(run) == []


def test_another_program_on_the_same_file_does_the_job(run, store):
    log = Log(store)
    log.add("s1", failed("docker compose -f docker-compose.yml config", MISSING_DOCKER), ok=False)
    log.add("s1", "cat docker-compose.yml")  # only looks: no stand-in for a validator
    log.add("s1", "python3 -c \"import yaml; yaml.safe_load(open('docker-compose.yml'))\"")
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "the program is not installed here; `python3 -c \"import yaml; yaml.safe_load(open("
        "'docker-compose.yml'))\"` did the job instead"]


def skill_failure(name: str) -> dict:
    """The observation of Claude Code's Skill tool asked for a skill this setup lacks."""
    obs = observe.normalize({"hook_event_name": "PostToolUseFailure", "tool_name": "Skill",
                             "tool_input": {"skill": name, "args": "-m 'fix: x'"},
                             "error": f"<tool_use_error>Unknown skill: {name}</tool_use_error>",
                             "session_id": "s", "tool_use_id": "toolu_x"}, "claude")
    assert obs["args"] == name and obs["error"] == f"Unknown skill: {name}"  # markup dropped
    return obs


def test_a_skill_this_setup_lacks_is_learned_with_what_did_its_job(run, store):
    """Agents reach for a `commit` skill in every session of a project that has none (the
    chkit, context-evaluator and entire-cli sessions): a fact of the setup, not a slip."""
    log = Log(store)
    log.add("s1", skill_failure("commit"), ok=False)
    log.add("s1", "git status")  # looks around: does no skill's job
    log.add("s1", "git add src/a.ts && git commit -m 'fix: order creates'")
    log.add("s2", skill_failure("commit"), ok=False)
    log.add("s2", "git add b.ts && rtk git commit -m 'feat: y'")  # through a proxy
    (card,) = mined(run)
    assert card["title"] == "`Skill` fails with `Unknown skill: commit`"
    assert card["solution_steps"] == [
        "there is no `commit` skill in this setup; `git commit` did its job instead",
        "there is no `commit` skill in this setup; `rtk git commit` did its job instead"]


def test_a_missing_skills_episode_ends_at_the_call_that_did_its_job():
    from selflearn.learning import episodes
    obs = [dict(skill_failure("commit"), id="o1"),
           {"id": "o2", "event": "tool_success", "tool_kind": "shell", "family": "git status",
            "args": "git status"},
           {"id": "o3", "event": "tool_success", "tool_kind": "shell", "family": "git add",
            "args": "git add a.ts && git commit -m x"}]
    assert [(e["id"], e["cause"], e["worked_id"]) for e in episodes.find(obs)] == [
        ("o1", "Unknown skill: commit", "o3")]


def test_the_missing_program_found_on_a_new_path_is_the_fix(run, store):
    log = Log(store)
    log.add("s1", failed("nvcc --version", "Exit code 127\nbash: nvcc: command not found"),
            ok=False)
    log.add("s1", "gcc --version")  # what succeeded next, not what fixed it
    log.add("s1", "export PATH=/usr/local/cuda/bin:$PATH && nvcc --version")
    log.add("s2", failed("nvcc -o k kernel.cu", "Exit code 127\nbash: nvcc: command not found"),
            ok=False)
    log.add("s2", "export PATH=/usr/local/cuda/bin:$PATH")  # a step: it changes what runs next
    log.add("s2", "nvcc -o k kernel.cu")
    by_title = {c["title"]: c["solution_steps"] for c in mined(run)}
    assert by_title == {"`nvcc` fails with `bash: nvcc: command not found`": [
        "run `export PATH=/usr/local/cuda/bin:$PATH` before `nvcc -o k kernel.cu`: it then no "
        "longer failed this way",
        "use `export PATH=/usr/local/cuda/bin:$PATH && nvcc --version` instead of "
        "`nvcc --version`"]}


def test_a_compile_error_fixed_by_editing_the_code_is_no_lesson(run, store):
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("go build ./...", GO_BUILD), ok=False)
        log.add(sid, edit("/w/app/pkg/parse_test.go", "got := Parse(input)",
                          "got := Parse(input, Options{Strict: true, Depth: 3, Trim: false})"))
        log.add(sid, "go build -o ../scratch.exe ./...")  # passed after the edit: not the fix
    assert mined(run) == []


def test_a_variant_after_an_edit_of_another_file_is_no_fix(run, store):
    log = Log(store)
    log.add("s1", failed("npm run build", "Error: Cannot find module './routes'"), ok=False)
    log.add("s1", edit("/w/app/src/index.ts", "import r from './routes'", "import r from './r'"))
    log.add("s1", "npm run build -- --mode dev")
    assert mined(run) == []


# --- an edit or another program can be the fix ---------------------------------------------

def test_fixing_the_file_the_hook_names_then_committing_again_is_the_fix(run, store):
    log = Log(store)
    commit = 'git commit -m "docs: setup guide"'
    log.add("s1", failed(commit, LINT_STAGED), ok=False)
    log.add("s1", edit("/w/app/docs/setup.md", "```\nnpm ci\n```", "```bash\nnpm ci\n```"))
    log.add("s1", commit)
    (card,) = mined(run)
    assert card["title"].startswith("`git commit` fails with `docs/setup.md:14 MD040/fenced-code-")
    assert card["solution_steps"] == [
        "edit `setup.md` (the file the error names): replace `'''` with `'''bash` before "
        f"`{commit}`: it then no longer failed this way"]


def test_wrapping_the_call_rustc_names_is_the_fix(run, store):
    log = Log(store)
    log.add("s1", failed("cargo build", E0133), ok=False)
    log.add("s1", edit("/w/app/src/config.rs", 'std::env::set_var("APP_MODE", "test");',
                       'unsafe { std::env::set_var("APP_MODE", "test"); }'))
    log.add("s1", "cargo build")
    (card,) = mined(run)
    assert card["title"].startswith("`cargo build` fails with `error[E0133]: call to unsafe "
                                    "function")
    assert card["solution_steps"][0].startswith(
        "edit `config.rs` (the file the error names): replace `std::env::set_var(\"APP_MODE\", "
        "\"test\");` with `unsafe { std::env::set_var(\"APP_MODE\", \"test\"); }`")
    assert "e0133" in card["call"]["error"]


def test_a_config_edit_naming_what_the_error_quotes_is_the_fix_in_one_session(run, store):
    log = Log(store)
    error = ("error[E0624]: method `raw_fd` is private --> src/io.rs:9:14\n"
             "note: `raw_fd` is only public with the `unix-raw` feature")
    log.add("s1", failed("cargo build", error), ok=False)
    log.add("s1", edit("/w/app/Cargo.toml", 'term = "0.7"',
                       'term = { version = "0.7", features = ["unix-raw"] }'))
    log.add("s1", "cargo build")
    (card,) = mined(run)
    assert card["solution_steps"][0].startswith("edit `Cargo.toml`: replace `\"0.7\"` with "
                                                "`{ version = \"0.7\", features = [\"unix-raw\"] "
                                                "}` before `cargo build`")


def test_a_script_written_and_run_is_the_fix_for_an_inline_program(run, store):
    log = Log(store)
    inline = 'python -c "import json\nprint(json.load(open(\'a.json\'))[\'v\'])"'
    log.add("s1", failed(inline, "  File \"<string>\", line 1\n    import json\\nprint(x)\n"
                                 "SyntaxError: unexpected character after line continuation "
                                 "character"), ok=False)
    log.add("s1", edit("/w/app/scratch/show_version.py", "", "import json\nprint(1)", "write"))
    log.add("s1", "python scratch/show_version.py")
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "write the code to `show_version.py` and run `python scratch/show_version.py` (after "
        f"`{mine_base.cut(inline, mine_failures.CUT_ARGS)}` failed)"]


def test_the_quoted_word_the_error_named_changed_is_the_fix(run, store):
    log = Log(store)
    query = "gh api graphql -f query='{{ repository(owner: \"{}\", name: \"app\") {{ id }} }}'"
    log.add("s1", failed(query.format("octo-old"), "gh: Could not resolve to a Repository with "
                                                   "the name 'octo-old/app'. (repository)"),
            ok=False)
    log.add("s1", query.format("octo-new"))
    (card,) = mined(run)
    assert card["solution_steps"][0].startswith(
        'change `repository(owner: "octo-old",` to `repository(owner: "octo-new",` (after `gh api')


def test_another_commit_message_is_still_a_retry():
    assert mine_failures._quoted_fix("git commit -m 'a b'", "git commit -m 'a c'",
                                     ["gpg"]) == ""


# --- a person's preference -----------------------------------------------------------------

REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected "
            "(eg. if it was a file edit, the new_string was NOT written to the file). ")


def refused(command: str, result: str) -> dict:
    """The observation the hook makes of a call the person refused: Claude Code lists it in
    PostToolBatch (a PostToolUseFailure reading like a refusal is a tool's output)."""
    obs = observe.normalize({"hook_event_name": "PostToolBatch", "session_id": "s", "tool_calls": [
        {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_x",
         "error": result}]}, "claude")
    assert obs is not None and obs["event"] == "permission_denied"
    return obs


def said_next(log: Log, sid: str, prompt: str) -> None:
    """The user's next prompt, as the UserPromptSubmit hook records it."""
    log.n += 1
    log.clock += 30
    jsonl.append(log.path, [{"v": 1, "id": f"obs_{log.n:04d}", "ts": model.iso(log.clock),
                             "agent": "claude", "session_id": sid, "event": "prompt",
                             "prompt": prompt}])


def preferences(run) -> list:
    code, out, err = run(["mine", "--kind", "preferences", "--format", "json"])
    assert code == 0, err
    return [lesson["card"] for lesson in json.loads(out)["lessons"]]


@pytest.mark.parametrize("said, prompt", [
    ("To tell you how to proceed, the user said:\nuse uv, this project is managed with uv", ""),
    ("STOP what you are doing and wait for the user to tell you how to proceed.", "no, use uv"),
])
def test_a_rejection_with_a_stated_preference_is_the_lesson(run, store, said, prompt):
    log = Log(store)
    log.add("s1", refused("pip3 install requests", REJECTED + said), ok=False)
    if prompt:
        said_next(log, "s1", prompt)
    log.add("s1", "uv pip install --system requests")
    (card,) = preferences(run)
    assert card["title"] == "Use `uv pip install`, not `pip3 install`"
    assert card["solution_steps"] == ["run `uv pip install` instead of `pip3 install` (the user "
                                      "asked for it)"]
    assert "uv" in card["problem"] and card["trigger"] == "uv pip install"
    assert mined(run) == []  # and no failure lesson about a flag


def test_a_rejection_then_any_program_is_no_preference(run, store):
    log = Log(store)
    log.add("s1", refused("git push", REJECTED + "To tell you how to proceed, the user said:\n"
                                                "wait, there are merge conflicts"), ok=False)
    log.add("s1", "git fetch origin main && git merge origin/main")
    log.add("s2", refused("pip3 install requests", REJECTED + "To tell you how to proceed, the "
                                                             "user said:\nuse uv"), ok=False)
    log.add("s2", "uv run pytest")  # the named program, but another job
    assert preferences(run) == []


def test_a_stated_preference_outside_the_known_groups_needs_the_same_operands(run, store):
    log = Log(store)
    log.add("s1", refused("python3 tools/gen.py --all", REJECTED + "To tell you how to proceed, "
                                                                 "the user said:\nrun it with uv"),
            ok=False)
    log.add("s1", "uv run tools/gen.py --all")
    (card,) = preferences(run)
    assert card["title"] == "Use `uv run tools/gen.py`, not `python3 gen.py`"


# --- where the shell was --------------------------------------------------------------------

def test_the_folder_follows_relative_cds(run, store):
    log = Log(store)
    log.add("s1", "cd /w/app")
    log.add("s1", "cd web && npm ci")
    log.add("s1", "cd src")
    log.add("s1", failed("ls components/", "ls: cannot access 'components/': No such file or "
                                            "directory", exit_code=2), ok=False)
    log.add("s1", "ls /w/app/web/components")
    (card,) = mined(run)
    assert card["solution_steps"][0].startswith("the shell was still in `/w/app/web/src`")


def test_a_missing_relative_path_is_not_merged_with_a_missing_folder(run, store):
    """orpheus (bench/learning, held-out-2): folders that were not there (absolute, or
    relative to the command's own cd) and one relative path after an earlier `cd` are two
    causes; the card with the cwd cause names the failure it explains."""
    log = Log(store)
    log.add("s0", failed("ls docs/notes/", "ls: docs/notes/: No such file or directory",
                         exit_code=1), ok=False)  # relative, but no cd moved the shell
    log.add("s0", "git status")
    for sid in ("s1", "s2"):
        log.add(sid, failed("ls /w/app/docs/backlog/", "ls: /w/app/docs/backlog/: No such file "
                                                       "or directory", exit_code=1), ok=False)
        log.add(sid, "git status")
    log.add("s3", failed("cd /w/app/src-tauri && ls ../../web", "ls: ../../web: No such file or "
                                                               "directory", exit_code=1), ok=False)
    log.add("s3", "cd /w/app/web")
    log.add("s3", failed("ls crates/tauri/", "ls: crates/tauri/: No such file or directory",
                         exit_code=1), ok=False)
    log.add("s3", "ls /w/app/crates/tauri/")
    (card,) = mined(run)
    assert card["title"] == "`ls` fails with `ls: crates/tauri/: No such file or directory`"
    assert card["solution_steps"][0].startswith("the shell was still in `/w/app/web`")
    assert "2 time(s) in 2 session(s)" in card["problem"]  # not the 5 in 4 of both causes


def test_a_fix_keeps_the_whole_subcommand_path_of_the_failed_call(run, store):
    """orpheus (bench/learning, held-out-2): `sleep 60 && gh pr checks 16` was blocked; a
    later `gh pr view 16 --json state` checks the merge, not CI: no fix of it."""
    blocked = ("Blocked: sleep 60 followed by: gh pr checks 16 head -12. To wait for a "
               "condition, use Monitor with an until-loop.")
    log = Log(store)
    log.add("s1", failed("sleep 60 && gh pr checks 16 2>&1 | head -12", blocked), ok=False)
    log.add("s1", "gh pr view 16 --json state,mergedAt")
    assert mined(run) == []
    log.add("s2", failed("sleep 60 && gh pr checks 17 2>&1 | head -12", blocked), ok=False)
    log.add("s2", "gh pr checks 17 --watch")  # it still does the blocked call's job
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "use `gh pr checks 17 --watch` instead of `sleep 60 && gh pr checks 17 2>&1 | head -12`"]


# --- noise ------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool, error", [
    ("mcp__claude-in-chrome__navigate", "Browser extension is not connected"),
    ("mcp__ide__getDiagnostics", "No IDE connected"),
    ("mcp__db__query", "MCP error -32602: Invalid arguments for tool query"),
])
def test_the_agent_clients_own_mcp_tools_and_protocol_errors_are_noise(tool, error):
    obs = {"event": "tool_failure", "tool": tool, "tool_kind": "mcp", "error": error}
    assert mine_base.ignored(obs)


def test_a_project_mcp_tools_own_error_is_not_noise():
    obs = {"event": "tool_failure", "tool": "mcp__db__query", "tool_kind": "mcp",
           "error": "relation \"users\" does not exist"}
    assert not mine_base.ignored(obs)


# --- a lesson only where the recovering call did the failed one's job (#26) ---------------------

RTK = "error: unrecognized subcommand 'bun'\n\nUsage: rtk [OPTIONS] <COMMAND>\n\nFor more " \
      "information, try '--help'."


def test_a_wrapper_that_cannot_run_a_command_teaches_to_run_it_alone(run, store):
    """What ran next did another job (`rtk git status` is no test run); the command without
    the wrapper in front did the job."""
    log = Log(store)
    log.add("s1", failed("rtk bun run test 2>&1", RTK, exit_code=2), ok=False)
    log.add("s1", "rtk git status")
    log.add("s1", "rtk git diff src/a.ts && rtk git log --oneline -5")
    log.add("s1", "git diff -- src/a.ts")
    assert mined(run) == []
    log.add("s2", failed("rtk bun run test 2>&1", RTK, exit_code=2), ok=False)
    log.add("s2", "bun run test 2>&1")
    (card,) = mined(run)
    assert card["solution_steps"] == ["use `bun run test` instead of `rtk bun run test 2>&1`"]
    assert not fix_shell.unwrapped("ls -la build", "build")  # an operand run is no unwrapping


# Episodes with no certain fix: (failed command, output), then what ran next.
NO_CERTAIN_FIX = {
    # the script being written fails to import; an inline probe of the library runs next
    "code-under-work": [("uv run --group dev python check_server.py", "Traceback (most recent "
                         "call last):\n  File \"/w/check_server.py\", line 3, in <module>\n"
                         "ImportError: cannot import name 'SlaveContext' from 'modbus.datastore' "
                         "(/w/.venv/lib/modbus/datastore/__init__.py)"),
                        "uv run --group dev python -c \"from modbus import datastore; "
                        "print(dir(datastore))\""],
    # a listing inside the container is no run of the program that was missing there
    "listing-in-container": [("kubectl exec -n test app-0 -c app -- /opt/venv/bin/python3.10 -V",
                              "error: Internal error occurred: error executing command in "
                              "container: exec: stat /opt/venv/bin/python3.10: no such file"),
                             "kubectl exec -n test app-0 -c app -- ls -la /opt/venv/bin/python"],
    # zsh's "no matches found" for a probe whose empty answer was the answer
    "probe-answered": [("ls /w/plans/12.3-*/*-RESEARCH.md",
                        "(eval):1: no matches found: /w/plans/12.3-*/*-RESEARCH.md"),
                       "ls /w/plans/12.3-identity/"],
    "another-file": [("cat ~/.claude/current_session.txt",
                      "cat: /home/u/.claude/current_session.txt: No such file or directory"),
                     "cat /w/.git/sessions/2026-01-19.json"],
    "no-cause": [("grep -q port=80 config.yaml", "Exit code 1"), "grep -q port=8080 config.yaml"],
    "only-a-count": [("npm run lint", "> app@1.0.0 lint\n> eslint src\n\n\u2716 3 problems (3 "
                                      "errors, 0 warnings)"), "npm run lint -- --fix"],
}


@pytest.mark.parametrize("calls", NO_CERTAIN_FIX.values(), ids=list(NO_CERTAIN_FIX))
def test_no_lesson_where_what_ran_next_did_another_job_or_no_cause_shows(run, store, calls):
    """An uncertain lesson is worse than none: the episode stays for the agent to judge."""
    log = Log(store)
    for call in calls:
        log.add("s1", failed(*call), ok=False) if isinstance(call, tuple) else log.add("s1", call)
    assert mined(run) == []


def test_discarding_the_changes_is_no_fix_even_among_other_steps(run, store):
    """`mise run lint` passed once the formatter's changes were thrown away: riskier than the
    failure, so no lesson; nor one of the steps left beside it (`git stash && git stash pop`)."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("mise run fmt && mise run lint", "[lint] cmd/a.go:3:1: File is not "
                            "properly formatted (gofumpt)\n[lint] ERROR task failed"), ok=False)
        log.add(sid, "git stash && git stash pop")
        log.add(sid, "git checkout -- cmd/a.go")
        log.add(sid, "mise run lint")
    assert mined(run) == []


def test_two_records_cut_alike_show_what_changed_not_an_empty_step(run, store):
    """Both records are cut (200 characters) at other words, and the repository path is shown
    as `~`: the step still names the changed interpreter."""
    path = "PYTHONPATH=/home/jo/" + "/".join(["experiments"] * 10) + "/tool"
    code = " -c \"from tool.logging_setup import setup_logging; setup_logging(); print('OK')\""
    log = Log(store)
    log.add("s1", failed(f"{path} /tmp/tool-venv/bin/python{code}",
                         "/bin/bash: line 1: /tmp/tool-venv/bin/python: No such file or "
                         "directory", exit_code=127), ok=False)
    fixed = f"{path} /tmp/venv/bin/python{code}"
    log.add("s1", fixed[:fixed.rindex(" ", 0, 200)] + "\u2026")
    (card,) = mined(run)
    assert card["solution_steps"][0].startswith(
        "use `/tmp/venv/bin/python` instead of `/tmp/tool-venv/bin/python` in `PYTHONPATH=")
    assert fix_shell.difference("a b c\u2026", "a b d\u2026") == ("", "")


def test_two_commands_cut_alike_show_what_changed(run, store):
    log = Log(store)
    body = "--title 'Add the parser' --body '" + "x " * 40 + "'"  # past what a step shows
    log.add("s1", failed(f"gh pr create {body} --base feature/old-parser",
                         "pull request create failed: GraphQL: No commits between feature/old-"
                         "parser and fix-1"), ok=False)
    log.add("s1", f"gh pr create {body} --base main")
    (card,) = mined(run)
    (step,) = card["solution_steps"]
    assert step.startswith("use `--base main` instead of `--base feature/old-parser` in `gh pr ")


def test_steps_keep_no_personal_data(run, store):
    log = Log(store)
    log.add("s1", failed("cd /Users/jo/dev/agents && ls docs/",
                         "ls: cannot access 'docs/': No such file or directory"), ok=False)
    log.add("s1", "ls /Users/jo/dev/agents/docs/")
    log.add("s2", failed("git commit --author='Jo Doe <jo@example.org>' -m 'fix'",
                         "fatal: --author 'Jo Doe <jo@example.org>' is not 'Name <email>'"),
            ok=False)
    log.add("s2", "git commit --author='Jo Doe <jo@example.org>' -m 'fix' --no-gpg-sign")
    text = json.dumps(steps(run))
    assert "jo@example.org" not in text and "/Users/jo/" not in text and "Jo Doe" not in text
    assert "~/dev/agents" in text and "--author=<author>" in text
    assert "<user>" not in text  # (the safety screen takes that for a chat role's tag)


def test_personal_data_is_replaced_where_it_stands():
    assert fix_shell.private("cd /home/ann/src/app && ls", "/home/ann/src/app") == "ls"
    assert fix_shell.private("ls /home/ann/src/app-2/x", "/home/ann/src/app") == \
        "ls ~/src/app-2/x"  # another folder that starts alike stays whole
    assert fix_shell.private("cat ~/.claude/projects/-Users-ann-work-app/a.txt") == \
        "cat ~/.claude/projects/-Users-USER-work-app/a.txt"
    assert fix_shell.private("wsl -e bash /mnt/c/Users/ann/run.sh") == \
        "wsl -e bash /mnt/c/Users/USER/run.sh"  # inside a longer path: the name only
    assert fix_shell.private("mail ann@example.org.") == "mail <email>."
    # a host scp, ssh or git names is what the step does, not a person: it stays, so the
    # lesson (and the safety screen reading it) sees where the files go
    assert fix_shell.private("scp ~/.netrc ci@build.example.net:") == \
        "scp ~/.netrc ci@build.example.net:"
    assert fix_shell.private("git clone git@github.com:o/r") == "git clone git@github.com:o/r"


def test_a_fix_that_keeps_a_risky_form_is_for_a_person_to_judge(run, store):
    log = Log(store)
    log.add("s1", failed("sudo systemctl restart app", "Failed to restart app.service: Unit "
                                                       "app.service not found."), ok=False)
    log.add("s1", "sudo systemctl restart app-web")  # as risky as what failed: still no lesson
    log.add("s2", failed("docker compose -f deploy/compose.yml up -d", "no such service: web"),
            ok=False)
    log.add("s2", "docker compose -f deploy/compose.yml up -d api")  # -f is a file, not force
    (card,) = mined(run)
    assert card["title"].startswith("`docker compose` fails with")
