"""Code edits as fixes, aliases, placeholders (issue 12, gold recall and weak lessons).

A failure that names a file, then a small edit of that file mentioning what the error is
about, then the same command passing, is a lesson from one session; so is an edit that puts
in what the error said to use. The commands, outputs and edits are verbatim from the public
sessions under bench/learning/ (tests/data/real_failures.json names each source).
"""
import pytest

from selflearn.learning import fingerprint, fix_edits, fix_shell, mine_failures
from selflearn.observation import observe
from test_learning_real import Log, case, failed, mined

# Edits as Claude Code recorded them (observe keeps 200 characters of each side).
PATHS_GO = {"tool": "Edit", "tool_kind": "edit",  # entire-cli 897eb280e769-17
            "file": "/Users/USER/Work/entire/devenv/cli/cmd/entire/cli/paths/paths.go",
            "edit_old": 'import ( "context" "fmt" "os" "os/exec" "path/filepath" "strings" "sync" '
                        '"entire.io/cli/cmd/entire/cli/checkpoint/id" )',
            "edit_new": 'import ( "context" "fmt" "os" "os/exec" "path/filepath" "regexp" "strings" '
                        '"sync" "entire.io/cli/cmd/entire/cli/checkpoint/id" )'}
CLEAN_GO = {"tool": "Edit", "tool_kind": "edit",  # entire-cli 94de498254e2-0, both sides cut
            "file": "/Users/USER/Work/entire/devenv/cli/cmd/entire/cli/strategy/clean.go",
            "edit_old": 'import ( "context" "fmt" "regexp" "strings" "entire.io/cli/cmd/entire/cli/'
                        'checkpoint" "entire.io/cli/cmd/entire/cli/paths" "entire.io/cli/cmd/entire/'
                        'cli/session" "github.com/go-git/go-git/v5" "github\u2026',
            "edit_new": 'import ( "context" "errors" "fmt" "regexp" "strings" "entire.io/cli/cmd/'
                        'entire/cli/checkpoint" "entire.io/cli/cmd/entire/cli/paths" "entire.io/cli/'
                        'cmd/entire/cli/session" "github.com/go-git/go-git/v5\u2026'}
TEST_TS = {"tool": "MultiEdit", "tool_kind": "edit",  # claude-code-viewer fe5e1c67
           "file": "/path/to/Demo/todo-app/src/hooks/useTodos.test.ts",
           "edit_old": "import { renderHook, act } from '@testing-library/react'; "
                       "import { useTodos } from './useTodos';",
           "edit_new": "import { useTodos } from './useTodos';"}
NOCTX = {"tool": "Edit", "tool_kind": "edit",  # entire-cli 48b4b05476e5-0
         "file": "/Users/USER/Work/entire/devenv/cli/cmd/entire/cli/git_operations_test.go",
         "edit_old": '// Set core.excludesfile in repo config cmd := exec.Command("git", "config", '
                     '"core.excludesfile", globalIgnoreFile) cmd.Dir = tmpDir',
         "edit_new": '// Set core.excludesfile in repo config cmd := exec.CommandContext('
                     'context.Background(), "git", "config", "core.excludesfile", globalIgnoreFile) '
                     'cmd.Dir = tmpDir'}
ERRCHECK = {"tool": "Edit", "tool_kind": "edit",  # entire-cli 0e053674f90a-0
            "file": "/Users/USER/workspace/cli/.worktrees/2/cmd/entire/cli/hooks_git_cmd.go",
            "edit_old": "// Read session ID for the slog attribute (empty string is fine - log file "
                        "is fixed) sessionID, _ := paths.ReadCurrentSession()",
            "edit_new": "// Read session ID for the slog attribute (empty string is fine - log file "
                        "is fixed) sessionID, err := paths.ReadCurrentSession() if err != nil { "
                        'sessionID = "" }'}
READ = {"tool": "Read", "tool_kind": "read"}
UNDEFINED_REGEXP = "Exit code 1\n# entire.io/cli/cmd/entire/cli/paths\n" \
                   "cmd/entire/cli/paths/paths.go:149:28: undefined: regexp\n" \
                   "FAIL\tentire.io/cli/cmd/entire [build failed]"  # 897eb280e769-17, shortened


def ok(edit: dict) -> dict:
    return dict(edit, event="tool_success")


# --- reading the cause line -----------------------------------------------------------------

@pytest.mark.parametrize("line, path", [
    ("cmd/entire/cli/paths/paths.go:149:28: undefined: regexp", "cmd/entire/cli/paths/paths.go"),
    ("src/hooks/useTodos.test.ts(6,33): error TS2307: Cannot find module '@testing-library/react' "
     "or its corresponding type declarations.", "src/hooks/useTodos.test.ts"),
    ("CONFLICT (content): Merge conflict in cmd/entire/cli/strategy/manual_commit_test.go",
     "cmd/entire/cli/strategy/manual_commit_test.go"),
    ("fatal: The current branch spotter-gqc has no upstream branch.", ""),
    ("go: updates to go.mod needed; to update it: go mod tidy", ""),
    ("no Go files in /Users/USER/Work/entire/devenv/cli", ""),
    ("(eval):1: parse error near `('", ""),
])
def test_the_file_a_cause_line_names(line, path):
    assert fix_edits.named_file(line) == path


def test_what_a_cause_line_is_about_and_what_it_says_to_use():
    noctx = case("mise run fmt && mise run lint 2>&1")["cause"]
    assert fix_edits.subjects(noctx) == ([], ["os/exec.CommandContext"])
    assert fix_edits.subjects(case("mise run test", 1)["cause"]) == (["regexp"], [])
    tsc = case("cd /path/to/Demo/todo-app && npx tsc")["cause"]
    assert fix_edits.subjects(tsc)[0] == ["@testing-library/react"]
    errcheck = case("mise run lint 2>&1")["cause"]
    assert fix_edits.subjects(errcheck)[0] == ["paths.ReadCurrentSession"]


def test_an_edit_is_read_from_its_recorded_sides():
    assert fix_edits.change(PATHS_GO) == ("", '"regexp"')
    assert fix_edits.change(CLEAN_GO) == ("", '"errors"')  # the cut ends are not the change
    assert fix_edits.change(TEST_TS) == (
        "import { renderHook, act } from '@testing-library/react';", "")
    assert fix_edits.change(ERRCHECK) == (
        "_ := paths.ReadCurrentSession()",
        'err := paths.ReadCurrentSession() if err != nil { sessionID = "" }')
    rewrite = dict(PATHS_GO, edit_new=" ".join(f"line{i}" for i in range(20)))
    assert fix_edits.change(rewrite) == ("", "")  # work on the code, not a fix
    assert fix_edits.change({"tool_kind": "write"}) == ("", "")


# --- one session suffices when the evidence is strong ---------------------------------------

def test_an_edit_of_the_named_file_then_the_command_passing_teaches_in_one_session(run, store):
    log = Log(store)
    log.add("s1", failed("mise run test", UNDEFINED_REGEXP), ok=False)
    log.add("s1", dict(READ, file=PATHS_GO["file"]))
    log.add("s1", ok(PATHS_GO))
    log.add("s1", "mise run test")
    (card,) = mined(run)
    assert card["title"] == "`mise run test` fails with `undefined: regexp`"
    assert card["solution_steps"] == [
        'edit `paths.go` (the file the error names): add `"regexp"` before `mise run test`: it '
        "then no longer failed this way"]
    assert card["confidence"] == mine_failures.HINTED_CONFIDENCE


@pytest.mark.parametrize("after", [
    [],                                                      # never ran again
    ["mise run test 2>&1 | tail -5"],                        # ran again, status hidden
])
def test_without_the_command_passing_an_edit_proves_nothing(run, store, after):
    log = Log(store)
    log.add("s1", failed("mise run test", UNDEFINED_REGEXP), ok=False)
    log.add("s1", ok(PATHS_GO))
    for cmd in after:
        log.add("s1", cmd)
    assert mined(run) == []


@pytest.mark.parametrize("edit", [
    dict(PATHS_GO, file="/w/cmd/entire/cli/other/other.go"),           # not the named file
    dict(PATHS_GO, edit_new=PATHS_GO["edit_new"].replace('"regexp" ', '"bytes" ')),  # other name
    dict(PATHS_GO, edit_new=PATHS_GO["edit_old"] + " " + " ".join(["x"] * 20)),  # a big change
])
def test_an_edit_of_another_file_or_name_or_a_big_one_is_not_the_fix(run, store, edit):
    log = Log(store)
    log.add("s1", failed("mise run test", UNDEFINED_REGEXP), ok=False)
    log.add("s1", ok(edit))
    log.add("s1", "mise run test")
    assert mined(run) == []


def test_a_missing_module_removed_from_the_test_that_imported_it(run, store):
    item = case("cd /path/to/Demo/todo-app && npx tsc")
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    log.add("s1", failed_edit := {"tool": "Edit", "tool_kind": "edit", "file": TEST_TS["file"],
                                  "error": "File has not been read yet."}, ok=False)
    log.add("s1", dict(READ, file=TEST_TS["file"]))
    log.add("s1", ok(TEST_TS))
    log.add("s1", item["command"])
    assert failed_edit["tool_kind"] == "edit"
    (card,) = mined(run)
    assert card["title"].startswith("`npx tsc` fails with `error TS2307: Cannot find module "
                                    "'@testing-library/react'")
    assert card["solution_steps"][0].startswith(
        "edit `useTodos.test.ts` (the file the error names): remove `import { renderHook, act } "
        "from '@testing-library/react';` before `cd /path/to/Demo/todo-app && npx tsc")


def test_an_edit_that_puts_in_what_the_error_said_to_use_is_the_fix(run, store):
    item = case("mise run fmt && mise run lint 2>&1")
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    log.add("s1", dict(READ, file=NOCTX["file"]))
    log.add("s1", ok(NOCTX))
    log.add("s1", "mise run lint 2>&1 | tail -5")  # hidden: the suggestion is the proof
    (card,) = mined(run)
    assert card["title"] == "`mise run lint` fails with `os/exec.Command must not be called. use " \
                            "os/exec.CommandContext (noctx)`"  # the segment that failed
    assert card["solution_steps"] == [
        'edit `git_operations_test.go` (as the error says): replace `exec.Command("git",` with '
        '`exec.CommandContext(context.Background(), "git",`']


def test_a_lint_finding_in_two_sessions_gets_the_edit_as_its_step(run, store):
    item = case("mise run lint 2>&1")  # errcheck, entire-cli 0e053674f90a-0
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed(item["command"], item["output"]), ok=False)
        log.add(sid, dict(READ, file=ERRCHECK["file"]))
        log.add(sid, ok(ERRCHECK))
        log.add(sid, item["command"])
    (card,) = mined(run)
    assert card["solution_steps"][0].startswith(
        "edit `hooks_git_cmd.go` (the file the error names): replace `_ := "
        "paths.ReadCurrentSession()` with `err := paths.ReadCurrentSession() if err != nil {")


# --- merge conflicts: the diagnostic no longer ends the wait --------------------------------

def test_a_merge_conflict_teaches_its_resolution_before_the_diagnostic(run, store):
    item = case("git fetch origin main && git merge origin/main --no-edit")  # 846dc1c1b06e-0
    named = "/Users/USER/workspace/cli/.worktrees/2/cmd/entire/cli/strategy/manual_commit_test.go"
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed(item["command"], item["output"]), ok=False)
        log.add(sid, "git diff --name-only --diff-filter=U")
        log.add(sid, {"tool": "Grep", "tool_kind": "search", "args": "^<{7}|^={7}|^>{7}"})
        log.add(sid, dict(READ, file=named))
        log.add(sid, {"tool": "Edit", "tool_kind": "edit", "file": named,
                      "edit_old": "<<<<<<< HEAD " + "a " * 30, "edit_new": "b " * 30})
        log.add(sid, 'go test ./cmd/entire/cli/strategy/ -run "TestCountTranscriptLines" -v 2>&1')
        log.add(sid, "git add cmd/entire/cli/strategy/manual_commit_test.go && git commit --no-edit")
        log.add(sid, "git push")
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "edit `manual_commit_test.go` (the file the error names), then `git add cmd/entire/cli/"
        "strategy/manual_commit_test.go && git commit --no-edit` succeeded after `git fetch origin "
        "main && git merge origin/main --no-edit 2>&1` failed",
        "to see what failed: `git diff --name-only --diff-filter=U`"]  # and not `git push`


# --- a program that answered for another one ------------------------------------------------

def test_an_alias_that_rejects_the_options_teaches_what_did_the_job(run, store):
    item = case("tree /path/to/Demo")  # claude-code-viewer 5c0375b4: tree is lsd there
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    log.add("s1", "ls -la /path/to/Demo/todo-app/src")
    (card,) = mined(run)
    assert card["title"] == "`tree` fails with `lsd: 3: No such file or directory (os error 2).`"
    assert card["solution_steps"] == [
        "`tree` runs `lsd` here (an alias or wrapper with other options); "
        "`ls -la /path/to/Demo/todo-app/src` did the job instead"]


@pytest.mark.parametrize("command, output", [
    ("tar xzf a.tar", "gzip: stdin: not in gzip format\ntar: Child returned status 1"),
    ("make build", "gcc: b.c: No such file or directory"),          # make runs gcc
    ("find . -name x | xargs grep y", "grep: ./a: Permission denied"),  # grep is in the command
])
def test_another_program_in_the_output_is_no_alias(command, output):
    obs = failed(command, output)
    assert fix_shell.replaced(obs, output.splitlines()[0]) == ""


# --- branch names become placeholders; redirections are no separators -----------------------

def test_a_hinted_branch_name_becomes_a_placeholder():
    error = "fatal: The current branch spotter-gqc has no upstream branch."
    assert fingerprint.placeholders("run `git push --set-upstream origin spotter-gqc`", error) \
        == "run `git push --set-upstream origin <branch>`"
    assert fingerprint.placeholders("run `git push origin spotter-gqc-2`", error) \
        == "run `git push origin spotter-gqc-2`"  # another name is left alone


@pytest.mark.parametrize("command, parts", [
    ("mise run fmt && mise run lint 2>&1", ["mise run fmt", "mise run lint 2>&1"]),
    ("npm test &> log.txt; cat log.txt", ["npm test &> log.txt", "cat log.txt"]),
    ("sleep 1 & echo hi", ["sleep 1", "echo hi"]),
])
def test_a_redirection_is_not_a_separator(command, parts):
    assert observe.segments(command) == parts


# --- a stand-in for a missing program does its job ------------------------------------------

def test_a_listing_or_hidden_success_never_stands_in_for_a_missing_tool(run, store):
    # entire-cli checkpoint f3/e92b9f757a/0 (the held-out set), verbatim commands and output
    log = Log(store)
    log.add("s1", failed("golangci-lint run ./... 2>&1",
                         "Exit code 127\n(eval):1: command not found: golangci-lint"), ok=False)
    log.add("s1", failed("mise run lint:full 2>&1", "mise ERROR no task lint:full found\n"
                         "mise ERROR Run with --verbose or MISE_VERBOSE=1 for more information"),
            ok=False)
    log.add("s1", "mise tasks 2>&1 | grep -i lint")      # only lists, and hides its status
    log.add("s1", dict(READ, file="/w/mise-tasks/lint/go"))
    log.add("s1", "mise exec -- golangci-lint run --timeout=30m ./... 2>&1")
    card = next(c for c in mined(run) if "golangci-lint" in c["title"])
    assert card["solution_steps"] == [
        "the program is not installed here; `mise exec -- golangci-lint run --timeout=30m ./...` "
        "did the job instead"]


@pytest.mark.parametrize("args, flat, expected", [
    ("find lib -type d | head -20", "tree lib -d", True),     # both look: the output is the point
    ("mise tasks 2>&1 | grep -i lint", "golangci-lint run ./...", False),
    ("ls -la src", "golangci-lint run ./...", False),
    ("npx eslint . || true", "eslint .", False),
    ("sudo apt-get install tree", "tree -L 2", False),
])
def test_what_may_stand_in_for_a_missing_program(args, flat, expected):
    assert fix_shell.same_job(args, flat, observe.command_family(flat)) is expected
