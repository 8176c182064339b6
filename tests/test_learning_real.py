"""Learning from real tool output (issue 12): cause lines, fingerprints, compound commands,
protocol errors, fixes, failures from every agent's shape.

The outputs are real: taken from the public sessions under bench/learning/ (their sources in
bench/learning/manifest.json) or produced by running the tool on a broken example
(tests/data/real_failures.json says which, with the tool version).
"""
import json
import os

import pytest

from selflearn.learning import fingerprint, fix_shell, mine_base, mine_failures
from selflearn.observation import causes, observe
from selflearn.storage import model
from selflearn.storage import store as jsonl

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "real_failures.json")
with open(DATA, encoding="utf-8") as _fh:
    CASES = json.load(_fh)["cases"]


def case(command_start: str, nth: int = 0) -> dict:
    return [c for c in CASES if c["command"].startswith(command_start)][nth]


def failed(command: str, output: str, **extra) -> dict:
    """The observation the hook makes of a failed Bash call (Claude Code's payload)."""
    obs = observe.normalize({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                             "tool_input": {"command": command}, "error": output,
                             "session_id": "s", "tool_use_id": "toolu_x", **extra}, "claude")
    assert obs is not None and obs["event"] in ("tool_failure", "permission_denied")  # refused
    return obs


# --- 1. the cause line ----------------------------------------------------------------------

@pytest.mark.parametrize("item", CASES, ids=lambda c: c["command"][:30])
def test_the_cause_line_is_found_in_the_whole_output(item):
    line = causes.cause_line(item["output"])
    assert line == item["cause"]
    assert not causes.is_noise(line)
    for banner in ("Compiling ", "==> ", "Getting extensions", "Running ", "[lint] $", "$ ",
                   "Exit code", "To github.com", "From github.com"):
        assert not line.startswith(banner)


@pytest.mark.parametrize("command, expected", [
    ("cargo build", "error[E0425]: cannot find value `y` in this scope"),            # rustc
    ("make build", "b.h:1:9: error: expected expression"),                          # gcc, not the include chain
    ("node m.js", "Error: Cannot find module 'left-pad'"),                          # node, not the stack
    ("npm run lint", 'npm error Missing script: "lint"'),                           # npm
    ("python -m pytest", "E ModuleNotFoundError: No module named 'yaml'"),          # pytest E line
    ("cd /path/to/Demo/todo-app && npx tsc", "error TS2307: Cannot find module '@testing-library/react"),
    ("mise run test -- -run", "go: updates to go.mod needed; to update it: go mod tidy"),  # go
    ("mix test", "** (RuntimeError) no :secret_key_base configuration found"),     # mix, not "Compiling"
    ("git fetch origin main", "CONFLICT (content): Merge conflict in"),             # git, not "From ..."
    ("tree -L 2", "tree: command not found"),                                       # shell
    ("mise run lint", "is not checked (errcheck)"),                                 # golangci-lint
])
def test_runners_name_their_cause(command, expected):
    assert expected in causes.cause_line(case(command)["output"])


@pytest.mark.parametrize("banner", [
    "Ubuntu 24.04.4 LTS", "Welcome to Ubuntu 22.04.3 LTS (GNU/Linux 5.15.0-91-generic x86_64)",
    "Debian GNU/Linux 12", "Last login: Tue Feb 24 06:52:46 2026 from 10.0.0.2", "---"])
def test_a_remote_login_banner_or_a_separator_is_never_the_cause(banner):
    """safecast-map (held-out-6): `ssh host 'grep …'` found nothing and printed only the
    server's banner, which became the lesson "`ssh` fails with `Ubuntu 24.04.4 LTS`"."""
    assert causes.cause_line(f"{banner}\n---") == ""
    assert causes.cause_line(f"ls: cannot access '/etc/apache2/': No such file\n{banner}") == \
        "ls: cannot access '/etc/apache2/': No such file"
    assert not causes.is_noise("Ubuntu 22.04 is not supported by this installer")
    assert not causes.is_noise("ubuntu: command not found")


def test_the_hook_stores_the_cause_first_and_the_hints():
    push = case("git push", 1)  # generated: real git on a branch without upstream
    obs = failed(push["command"], push["output"])
    assert obs["error"].splitlines()[0] == "fatal: The current branch feature-x has no upstream branch."
    assert obs["hint"] == "git push --set-upstream origin feature-x"
    tidy = case("mise run test -- -run")
    assert failed(tidy["command"], tidy["output"])["hint"] == "go mod tidy"
    npm = case("npm run lint")
    assert causes.hints(npm["output"]) == ["npm link", "npm run"]  # "did you mean", "run:"


# --- 2. fingerprint apart from display ------------------------------------------------------

def test_the_same_failure_on_other_branches_is_one_fingerprint_shown_raw():
    spotter, generated = case("git push", 0), case("git push", 1)
    a, b = failed(spotter["command"], spotter["output"]), failed(generated["command"],
                                                                 generated["output"])
    fa, fb = fingerprint.of_failure(a), fingerprint.of_failure(b)
    assert fa[1] == fb[1]
    assert fa[0].endswith("fatal: The current branch <ref> has no upstream branch.")
    assert fa[2] == "fatal: The current branch spotter-gqc has no upstream branch."
    assert fingerprint.normalize("git push --set-upstream origin spotter-gqc") == \
        fingerprint.normalize("git push --set-upstream origin feature-x")


def test_lint_findings_cluster_on_the_rule_and_show_the_message():
    a = failed("mise run lint", case("mise run lint")["output"])
    b = failed("mise run lint", "Exit code 1\n[lint] $ golangci-lint run ./...\ncmd/entire/cli/strategy/"
               "manual_commit_attribution_test.go:771:11: Error return value of `blob.Writer` is "
               "not checked (errcheck)\n\t_, _ = w\n[lint] ERROR task failed")
    assert fingerprint.of_failure(a)[1] == fingerprint.of_failure(b)[1]
    assert mine_failures.shown_line(fingerprint.of_failure(a)[2]) == \
        "Error return value of `paths.ReadCurrentSession` is not checked (errcheck)"


# --- 3. compound commands -------------------------------------------------------------------

@pytest.mark.parametrize("command, output, family", [
    ("cd /tmp/runx && make && ./run", "Exit code 127\nstarting\n./run: line 3: frobnicate: "
     "command not found", "run"),
    (case("git add .beads/issues.jsonl &&")["command"],
     case("git add .beads/issues.jsonl &&")["output"], "git commit"),
    (case("mise run fmt && mise run lint")["command"],
     case("mise run fmt && mise run lint")["output"], "mise run lint"),
    (case("cd cmd/entire/cli/strategy")["command"], case("cd cmd/entire/cli/strategy")["output"],
     "cd"),
    (case("git fetch origin main")["command"], case("git fetch origin main")["output"],
     "git merge"),
    (case("git add .beads/issues.jsonl assets")["command"],  # one segment: unchanged
     case("git add .beads/issues.jsonl assets")["output"], "git add"),
])
def test_the_segment_the_error_names_owns_the_failure(command, output, family):
    assert failed(command, output)["family"] == family


def test_a_leading_cd_or_export_is_context_when_the_error_does_not_name_it():
    obs = failed("cd /repo && export CI=1 && npm test", "Exit code 1\nError: Cannot find module 'x'")
    assert obs["family"] == "npm test"


def test_transcripts_give_the_failing_segment_from_the_whole_command(tmp_path, run, store):
    item = case("git add .beads/issues.jsonl &&")
    lines = [{"type": "assistant", "sessionId": "s1", "timestamp": "2026-02-11T10:00:00Z",
              "message": {"role": "assistant", "content": [
                  {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                   "input": {"command": item["command"] + " " + "x" * 300}}]}},
             {"type": "user", "sessionId": "s1", "timestamp": "2026-02-11T10:00:05Z",
              "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                   "content": item["output"]}]}}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert run(["ingest-transcripts", str(path)])[0] == 0
    (obs,) = [o for o in jsonl.read(str(store / "observations.jsonl"))[0]
              if o["event"] == "tool_failure"]
    assert obs["family"] == "git commit" and obs["hint"].splitlines()[0] == "mix format"
    assert not any(k.startswith("_") for k in obs)


# --- 4. the agent's own protocol -------------------------------------------------------------

@pytest.mark.parametrize("tool, kind, error", [  # verbatim from the bench sessions
    ("Read", "read", "File does not exist."),
    ("Read", "read", "File does not exist. Did you mean .golangci.yaml?"),
    ("Edit", "edit", "String to replace not found in file.\nString:   defp do_setup do"),
    ("Edit", "edit", "File has not been read yet. Read it first before writing to it."),
    ("Read", "read", "EISDIR: illegal operation on a directory, read"),
    ("Read", "read", "File content (85812 tokens) exceeds maximum allowed tokens (25000). "
                     "Please use offset and limit parameters"),
    ("Bash", "shell", "Sibling tool call errored"),
    ("Task", "task", "InputValidationError: Task failed due to the following issue:\nThe "
                     "required parameter `prompt` is missing"),
])
def test_built_in_tool_protocol_errors_are_never_lessons(tool, kind, error):
    obs = {"event": "tool_failure", "tool": tool, "tool_kind": kind, "error": error}
    assert mine_base.ignored(obs) and mine_failures.recurs(obs) is None


def test_the_clients_notice_of_a_deleted_working_folder_is_no_lesson():
    """git-sync (held-out-5, read): the checkout was renamed for a while; the client said so.
    A passing state of the machine, not a path to remember."""
    obs = {"event": "tool_failure", "tool": "Bash", "tool_kind": "shell", "family": "pwd",
           "error": 'Working directory "/w/devenv/git-sync" was deleted; shell cwd recovered to '
                    '"/Users/USER". Re-issue your command (it will run from the recovered '
                    'directory).'}
    assert mine_base.ignored(obs) and mine_failures.recurs(obs) is None


def test_a_shell_missing_file_is_project_knowledge():
    obs = {"event": "tool_failure", "tool": "Bash", "tool_kind": "shell", "family": "cat",
           "error": "cat: config/settings.yaml: No such file or directory"}
    assert not mine_base.ignored(obs) and mine_failures.recurs(obs)


def test_a_failing_tests_verdict_is_not_a_lesson():
    obs = {"event": "tool_failure", "tool": "Bash", "tool_kind": "shell", "family": "mix test",
           "error": "Assertion with =~ failed\ncode: assert html =~ \"subagent\""}
    assert mine_failures.recurs(obs) is None


# --- 5. the fix -------------------------------------------------------------------------------

class Log:
    def __init__(self, store):
        self.path, self.n, self.clock = str(store / "observations.jsonl"), 0, 1_770_000_000.0

    def add(self, sid, obs_or_command, ok=True, **kw):
        self.n += 1
        self.clock += 30
        if isinstance(obs_or_command, dict):
            obs = dict(obs_or_command)
        else:
            obs = {"tool": "Bash", "tool_kind": "shell", "args": obs_or_command,
                   "family": observe.command_family(obs_or_command)}
        obs.update(kw)
        obs.update({"v": 1, "id": f"obs_{self.n:04d}", "ts": model.iso(self.clock),
                    "agent": "claude", "session_id": sid,
                    "event": "tool_success" if ok else "tool_failure"})
        obs.pop("hash", None)
        jsonl.append(self.path, [obs])


def mined(run) -> list:
    code, out, err = run(["mine", "--kind", "failures", "--format", "json"])
    assert code == 0, err
    return [lesson["card"] for lesson in json.loads(out)["lessons"]]


def test_the_hinted_fix_teaches_in_one_session(run, store):
    item = case("git push", 0)
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    log.add("s1", "git status")
    log.add("s1", "git push --set-upstream origin spotter-gqc 2>&1")
    (card,) = mined(run)
    assert card["title"] == "`git push` fails with `fatal: The current branch spotter-gqc has no " \
                            "upstream branch.`"
    assert card["solution_steps"] == ["run `git push --set-upstream origin <branch>` (the error "
                                      "suggests it) after `git push 2>&1` fails"]  # any branch
    assert card["confidence"] == mine_failures.HINTED_CONFIDENCE


def test_the_steps_before_a_rerun_that_no_longer_fails_that_way_are_the_fix(run, store):
    lazy, secret = case("mix test", 1), case("mix test", 0)
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed(lazy["command"], lazy["output"]), ok=False)
        log.add(sid, {"tool": "Read", "tool_kind": "read", "file": "/w/mix.exs"})
        log.add(sid, {"tool": "Edit", "tool_kind": "edit", "file": "/w/mix.exs"})
        log.add(sid, "mix deps.get 2>&1 | tail -5")  # hidden: proves nothing, not a step
        log.add(sid, "mix deps.get")
        log.add(sid, failed(lazy["command"], secret["output"]), ok=False)  # fails otherwise
    lessons = {c["title"]: c for c in mined(run)}
    card = next(c for t, c in lessons.items() if "lazy_html" in t)
    assert card["solution_steps"][0].startswith("edit `mix.exs`, then run `mix deps.get` before `mix test")


def test_what_fixed_a_later_other_failure_is_not_the_fix_of_the_first(run, store):
    """held-out-3 (read): the same command failing otherwise ends the wait; the step before the
    final success fixed that other failure. A part before it failing is not "otherwise"."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("doppler run -- bun run deploy", "Doppler Error: The fallback file "
                            "does not exist\nDoppler Error: You must specify a project"), ok=False)
        log.add(sid, "doppler setup --project web --config ci --no-interactive")
        log.add(sid, failed("doppler run -- bun run deploy 2>&1", "Failed: @acme/docs#deploy\n"
                            "\u2718 [ERROR] Unknown internal error occurred."), ok=False)
        log.add(sid, "bun update wrangler --latest 2>&1")
        log.add(sid, "doppler run -- bun run deploy 2>&1")
    titles = [c["title"] for c in mined(run)]
    assert titles == ["`doppler` fails with `Failed: @acme/docs#deploy`"]  # its own fix


def test_a_part_before_the_command_failing_does_not_end_the_wait(run, store):
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("uv venv", "error: Failed to create virtual environment"), ok=False)
        log.add(sid, failed("rm -rf .venv && uv venv", "rm: cannot remove '.venv/lib64': Value "
                            "too large for defined data type"), ok=False, family="rm")
        log.add(sid, "uv venv /tmp/review-venv")
    assert [c["title"] for c in mined(run)] == [
        "`uv venv` fails with `error: Failed to create virtual environment`"]


def test_a_shells_own_name_in_its_error_is_no_relative_path(run, store):
    """held-out-4 (read): Git Bash rewrote an absolute /mnt/c path; the fix is the variant."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, "cd /d/omp && ls", cwd="/d/omp")  # where the shell was: no matter here
        log.add(sid, failed('wsl -e bash "/mnt/c/tmp/run.sh"', "bash: C:/Program Files/Git/mnt/"
                            "c/tmp/run.sh: No such file or directory"), ok=False)
        log.add(sid, "MSYS_NO_PATHCONV=1 wsl -e bash /mnt/c/tmp/run.sh")
    (card,) = mined(run)
    assert card["solution_steps"] == ["use `MSYS_NO_PATHCONV=1 wsl -e bash /mnt/c/tmp/run.sh` "
                                      "instead of `wsl -e bash \"/mnt/c/tmp/run.sh\"`"]


def test_what_a_windows_session_got_wrong_is_no_fix():
    """held-out-4's other wrong lessons (read): a quoting slip is no missing program; another
    interpreter, or a heredoc naming the missing one, does not do its job; a look after `;`
    hides the status of the line's core; a multi-line `zsh -c` script is zsh's."""
    assert not mine_base.missing({"error": '/bin/bash: line 1: world\\": command not found'})
    assert mine_base.missing({"error": "/usr/bin/bash: line 1: zsh: command not found"})
    assert mine_base.missing({"error": "(eval):1: command not found: golangci-lint"})
    assert fix_shell.other_language("zsh", "bash") and fix_shell.other_language("python3", "node")
    assert not fix_shell.other_language("npm test", "bash")
    heredoc = "gh pr comment 7 --body-file - <<'X'\nzsh -n checks it\nX"
    assert not fix_shell.resembles("zsh", "gh pr", heredoc)
    assert not fix_shell.same_job(heredoc, "zsh -c 'zsh -n x'", "zsh")
    assert causes.hidden_success("npx markdownlint-cli2 a.md > /tmp/a 2>&1; diff /tmp/b /tmp/a")
    assert observe.command_family("zsh -c '\nBUFFER=\"cat <<EOF\nhi\nEOF\"\n'") == "zsh"
    assert observe.command_family("bash -c 'npm test'") == "npm test"


def test_a_step_that_undoes_the_failed_commands_own_prelude_is_no_fix(run, store):
    log = Log(store)
    log.add("s1", failed("git stash && bun test packages/cli/src/flags.test.ts 2>&1",
                         "Saved working directory and index state WIP on main: 30d2ec2 x\n"
                         "bun test v1.3.9 (cf6cdbbb)\nThe following filters did not match any "
                         "test files in --cwd=\"/w\":"), ok=False)
    log.add("s1", "git stash pop")
    log.add("s1", "bun test ./packages/cli/src/bin/flags.test.ts")
    (card,) = mined(run)
    assert card["title"].startswith("`bun test` fails with `The following filters did not match")
    assert "git stash pop" not in " ".join(card["solution_steps"])


@pytest.mark.parametrize("fix", [
    "mise run test 2>&1 | grep -A 5 TestResetCmd",   # success hidden by the pipe
    "mise run test || true",
    "git push --force origin main",                  # riskier than what failed
    "sudo mise run test",
])
def test_a_hidden_or_riskier_success_is_never_a_fix(run, store, fix):
    item = case("mise run test -- -run")
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("mise run test -- -run TestResetCmd", item["output"]), ok=False)
        log.add(sid, fix)
    assert mined(run) == []  # no certain fix: no lesson


def test_another_file_is_another_job_not_the_fix(run, store):
    """Reading the example config after the real one was missing does another job: it is no
    fix, and an uncertain lesson is worse than none (the episode stays for the agent)."""
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed("cat config/settings.yaml",
                            "Exit code 1\ncat: config/settings.yaml: No such file or directory"),
                ok=False)
        log.add(sid, "cat config/settings.example.yaml")
    assert mined(run) == []


def test_other_quoted_text_or_the_failing_part_alone_is_a_retry_and_no_lesson(run, store):
    fmt = case("mise run fmt && mise run lint")
    log = Log(store)
    for sid in ("s1", "s2"):
        log.add(sid, failed('git commit -m "feat: a"', "Exit code 1\nerror: gpg failed to sign "
                            "the data\nfatal: failed to write commit object"), ok=False)
        log.add(sid, 'git commit -m "feat: b"')
        log.add(sid, failed(fmt["command"], fmt["output"]), ok=False)
        log.add(sid, "mise run lint")
    assert mined(run) == []  # a retry that passed proves no fix
    state = json.loads((store / "mine_state.json").read_text())
    clusters = state["kinds"]["failures"]["agg"]["clusters"].values()
    assert sorted(c["retries"] for c in clusters) == [2, 2]  # kept as the episode's evidence


def test_a_missing_program_teaches_what_did_the_job(run, store):
    item = case("tree /home")
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"], tool_response=None), ok=False)
    log.add("s1", "find /home/USER/projects/spotter-worktrees/spotter-0rt/lib -type d | sort")
    (card,) = mined(run)
    assert card["solution_steps"] == ["the program is not installed here; `find ~/projects/"
                                      "spotter-worktrees/spotter-0rt/lib -type d` did the job instead"]


# --- 7. failures from every agent's shape ------------------------------------------------------

@pytest.mark.parametrize("agent, payload", [
    ("claude", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "s",
                "tool_input": {"command": "cargo build"},
                "tool_response": {"stdout": "", "stderr": case("cargo build")["output"],
                                  "exitCode": 101}}),
    ("claude", {"hook_event_name": "PostToolUse", "tool_name": "mcp__db__query", "session_id": "s",
                "tool_input": {}, "tool_response": {"isError": True, "content": [
                    {"type": "text", "text": "timeout after 3000ms"}]}}),
    ("codex", {"hook_event_name": "PostToolUse", "tool_name": "shell", "session_id": "s",
               "turn_id": "t", "tool_input": {"command": ["bash", "-lc", "make build"]},
               "tool_response": {"exit_code": 2, "output": case("make build")["output"]}}),
    ("gemini", {"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                "session_id": "s", "tool_input": {"command": "npm run lint"},
                "tool_response": {"error": case("npm run lint")["output"]}}),
])
def test_a_result_with_an_exit_code_or_an_error_is_a_failure_whatever_the_agent(agent, payload):
    obs = observe.normalize(payload, agent)
    assert obs["event"] == "tool_failure" and obs["outcome"] == "failure"
    assert obs["error"]


def test_a_claude_result_without_an_explicit_failure_stays_a_success():
    obs = observe.normalize({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "session_id": "s", "tool_input": {"command": "ls"},
                             "tool_response": {"stdout": "Exit code 1 is in this file name",
                                               "stderr": "", "interrupted": False}}, "claude")
    assert obs["event"] == "tool_success"


# --- 8. the most specific step first -----------------------------------------------------------

def test_the_fix_comes_before_a_diagnostic_however_often_that_ran():
    item = case("git fetch origin main")
    obs = failed(item["command"], item["output"])
    text, digest, raw = fingerprint.of_failure(obs)
    seen = ["obs_1", "s1", "2026-02-09T10:00:00Z"]
    cluster = {"fingerprint": text, "tool": "Bash", "kind": "shell", "family": "git merge",
               "example": {"args": item["command"], "error": raw}, "count": 2,
               "sessions": ["s1", "s2"], "seen": [seen], "first": seen[2], "last": seen[2],
               "fixes": {"a": {"args": "git diff --name-only --diff-filter=U", "failed": "git merge",
                               "same_family": False, "how": "diagnostic", "count": 5, "seen": seen},
                         "b": {"args": "git merge --abort && git rebase origin/main",
                               "failed": "git merge", "same_family": True, "how": "variant",
                               "count": 1, "seen": seen}}}
    card = mine_failures._lesson(digest, cluster)["card"]
    assert card["solution_steps"] == [
        "use `git merge --abort && git rebase origin/main` instead of `git merge`",
        "to see what failed: `git diff --name-only --diff-filter=U`"]


def test_a_checkpoint_of_the_older_format_is_mined_again(run, store):
    log = Log(store)
    item = case("git push", 0)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    assert mined(run) == []  # one session, no fix yet
    state_path = store / "mine_state.json"
    state = json.loads(state_path.read_text())
    agg = state["kinds"]["failures"]["agg"]
    del agg["version"]  # as written before: pending entries had 5 fields
    agg["pending"] = {"s1": [[k, "git push", "git push", "git push", 5] for k in agg["clusters"]]}
    state_path.write_text(json.dumps(state))
    log.add("s1", "git push --set-upstream origin spotter-gqc")
    code, out, err = run(["mine", "--kind", "failures", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["full"] and "older format" in data["full_reason"]
    (lesson,) = data["lessons"]
    assert lesson["card"]["solution_steps"][0].startswith("run `git push --set-upstream origin")


def test_a_cd_that_fails_because_the_shell_is_already_there_teaches_it(run, store):
    item = case("cd cmd/entire/cli/strategy")  # entire-cli session e577a6f39913-0, verbatim
    log = Log(store)
    log.add("s1", failed(item["command"], item["output"]), ok=False)
    log.add("s1", failed("go test -v -run TestPromptAttribution_CapturesPrePromptEdits",
                         "Exit code 1\n=== RUN   TestPromptAttribution_CapturesPrePromptEdits\n"
                         "--- FAIL: TestPromptAttribution_CapturesPrePromptEdits (0.03s)"), ok=False)
    (card,) = mined(run)
    assert card["title"].startswith("`cd` fails with `(eval):cd:1: no such file or directory")
    assert card["solution_steps"] == [
        "the shell already was in that folder (a `cd` lasts from one call to the next): run "
        "`go test -v -run TestPromptAttribution_CapturesPrePromptEdits` without the `cd`, or use "
        "paths from the repo root"]


def test_jest_names_the_missing_module_and_a_failing_test_is_a_verdict():
    assert causes.cause_line(case("npx jest")["output"]) == \
        "Cannot find module 'left-pad' from 'src/fmt.js'"
    verdict = case("npx jest src/math.test.js")
    assert causes.cause_line(verdict["output"]) == "\u25cf adds"
    obs = failed(verdict["command"], verdict["output"])
    assert mine_failures.recurs({**obs, "event": "tool_failure"}) is None
    obs = failed("bun test src/plugin.test.ts", "error: expect(received).toBe(expected)\n"
                 "bun test v1.3.5 (1e86cebd)\nsrc/plugin.test.ts:")  # bun's matcher verdict
    assert mine_failures.recurs({**obs, "event": "tool_failure"}) is None


def test_a_relative_path_missed_after_an_earlier_cd_names_the_folder(run, store):
    # claude-code-viewer session fe5e1c67 (bench/learning), verbatim commands and output
    log = Log(store)
    log.add("s1", "cd /path/to/Demo/todo-app")
    log.add("s1", "pnpm add lucide-react")
    log.add("s1", failed("ls -la types/", "ls: cannot access 'types/': No such file or directory",
                         exit_code=2), ok=False)
    log.add("s1", "ls -la /path/to/Demo")  # another folder: a look around, not the fix
    assert mined(run) == []
    log.add("s1", "cd /path/to/Demo && ls -la types/")  # the same folder, from where it is
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "the shell was still in `/path/to/Demo/todo-app` (a `cd` lasts from one call to the "
        "next): relative paths resolve there; use absolute paths",
        "use `cd /path/to/Demo && ls -la types/` instead of `ls -la types/`"]


def test_a_program_found_once_path_is_set_was_out_of_reach_not_missing(run, store):
    """safecast-map (held-out-6): a program "not found" in the Bash tool's shell, then found
    by the call that put its folder on PATH first, was out of reach, not missing: "not
    installed here" would be wrong. `head` "not found" is a PATH the session broke (every
    POSIX system has it): no lesson at all."""
    log = Log(store)
    log.add("s1", failed("cd test && go run web.go 2>&1 | jq .", "Exit code 127\n/bin/bash: "
                         "line 1: jq: command not found", exit_code=127), ok=False)
    log.add("s1", 'export PATH="/opt/tools/bin:$PATH" && cd test && go build -o /tmp/web web.go')
    (card,) = mined(run)
    assert card["solution_steps"] == [
        "the program is not on this shell's PATH; `export PATH=\"/opt/tools/bin:$PATH\" && "
        "cd test && go build -o /tmp/web web.go` (setting PATH) worked"]
    log.add("s2", failed("cd test && go run web.go 2>&1 | head -5", "Exit code 127\n/bin/bash: "
                         "line 1: head: command not found", exit_code=127), ok=False)
    log.add("s2", 'export PATH="/usr/local/go/bin:/usr/bin:$PATH" && cd test && go build '
                  "-o /tmp/web web.go")
    assert mined(run) == []  # (the jq lesson was mined already; nothing of head)


def test_an_absolute_missing_path_or_a_relative_cd_says_nothing_of_the_folder(run, store):
    log = Log(store)
    log.add("s1", "cd src")  # relative: where it went is not known
    log.add("s1", failed("cat config/a.yaml", "cat: config/a.yaml: No such file or directory"),
            ok=False)
    log.add("s1", "cat config/b.yaml")
    log.add("s2", "cd /repo")
    log.add("s2", failed("cat /etc/app.yaml", "cat: /etc/app.yaml: No such file or directory"),
            ok=False)
    log.add("s2", "cat /etc/app.yml")
    assert all(not s.startswith("the shell was still in")
               for card in mined(run) for s in card.get("solution_steps", []))
