"""analyze: rates per tool/family, environmental failures, denials, corrections, opportunities.

Observation logs are synthetic and written in order; the clock is fake (SELF_LEARNING_NOW),
so the window edges are exact. Git suppression runs against a real temporary repository.
"""
import json
import os
import subprocess

import pytest

from selflearn.learning import analyze
from selflearn.storage import model
from selflearn.storage import store as jsonl

NOW = 1767225600 + 30 * 86400  # 2026-01-31T00:00:00Z
DAY = 86400


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(NOW))


class Log:
    """Observations at given ages (seconds before NOW), appended to the store."""

    def __init__(self, store):
        self.path = str(store / "observations.jsonl")
        self.n = 0

    def add(self, event, age=3600, session="s1", **kw):
        self.n += 1
        record = {"v": 1, "id": f"obs_{self.n:06d}", "ts": model.iso(NOW - age), "agent": "claude",
                  "session_id": session, "event": event, **kw}
        jsonl.append(self.path, [record])
        return record

    def shell(self, family, event="tool_success", times=1, **kw):
        for _ in range(times):
            self.add(event, tool="Bash", tool_kind="shell", family=family, args=family, **kw)


@pytest.fixture
def log(store):
    return Log(store)


def js(run, *args):
    code, out, err = run(["analyze", *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def rows(data):
    return {r["name"]: r for r in data["rows"]}


def test_rates_keep_environmental_failures_and_denials_out_of_the_denominator(run, log):
    log.shell("npm test", times=3)
    log.shell("npm test", "tool_failure", times=4, error="Error: Cannot find module 'x'",
              exit_code=1)
    log.shell("npm test", "tool_failure", error="Exit code 130", exit_code=130)
    log.shell("npm test", "tool_failure", error="[Request interrupted by user]")
    log.shell("npm test", "tool_success", interrupted=True)
    log.shell("npm test", "tool_failure", error="Command timed out after 2m", exit_code=1)
    log.shell("npm test", "tool_failure", error="", exit_code=124)
    log.add("tool_failure", tool="Edit", tool_kind="edit", file="a.py",
            error="File has been modified since read, either by the user or by a linter")
    log.add("tool_failure", tool="Edit", tool_kind="edit", file="a.py",
            error="<tool_use_error>File has not been read yet. Read it first</tool_use_error>")
    log.add("permission_denied", tool="Bash", tool_kind="shell", family="npm test",
            reason="denied by policy")
    log.shell("npm test", "tool_failure", error="The user doesn't want to proceed with this "
              "tool use. The tool use was rejected")
    log.add("pre_tool", tool="Bash", tool_kind="shell", family="npm test")  # not a finished call
    log.add("prompt", prompt="please run the tests")
    log.add("tool_success")  # names no tool: not counted
    data = js(run)
    npm = rows(data)["npm test"]
    assert {k: npm[k] for k in ("calls", "ok", "failed", "env", "env_total", "denied", "rate")} == \
        {"calls": 14, "ok": 3, "failed": 4,
         "env": {"interrupted": 3, "stale_read": 0, "timeout": 2}, "env_total": 5, "denied": 2,
         "rate": round(3 / 7, 3)}
    assert npm["failure_classes"] == [{"error": "Error: Cannot find module <X>", "count": 4}]
    edit = rows(data)["Edit"]
    assert (edit["calls"], edit["env"]["stale_read"], edit["rate"]) == (2, 2, None)
    assert data["counted"] == 16 and data["read"] == 19


def test_provider_errors_are_counted_apart_from_tools(run, log):
    for reason, error in (("rate_limit", "rate_limit_error: too many tokens"),
                          ("rate_limit", "rate_limit_error: too many tokens"),
                          ("server_error", "API Error: 500 Internal server error")):
        log.add("stop_failure", reason=reason, error=error, outcome="failure")
    log.shell("npm test")
    data = js(run)
    assert list(rows(data)) == ["npm test"]
    assert data["provider_errors"] == {"count": 3, "reasons": [
        {"reason": "rate_limit", "count": 2, "error": "rate_limit_error: too many tokens"},
        {"reason": "server_error", "count": 1, "error": "API Error: 500 Internal server error"}]}
    code, out, err = run(["analyze"])
    assert out.splitlines()[-1] == ("provider errors (the model's service, not a tool): 3 "
                                    "(rate_limit 2x, server_error 1x)")


def test_outcome_classes():
    assert analyze.outcome({"event": "tool_success"}) == "ok"
    assert analyze.outcome({"event": "tool_failure", "exit_code": 143}) == "interrupted"
    assert analyze.outcome({"event": "tool_failure", "exit_code": 2}) == "failed"
    assert analyze.outcome({"event": "tool_failure", "error": "Permission to use Bash has been "
                            "denied."}) == "denied"
    assert analyze.outcome({"event": "tool_failure", "error": "bash: ./x: Permission denied"}) \
        == "failed"  # the OS said no: a real failure, not the agent's permission system
    assert analyze.outcome({"event": "session_start"}) is None


def test_window_edges_follow_the_fake_clock(run, log):
    log.shell("make", age=7 * DAY)          # exactly at the window start: in
    log.shell("make", age=7 * DAY + 1)      # one second earlier: out
    log.shell("make", age=0)                # now: in
    log.shell("make", age=-1)               # the future: out
    data = js(run)
    assert rows(data)["make"]["calls"] == 2
    assert (data["since"], data["until"]) == ("2026-01-24T00:00:00Z", "2026-01-31T00:00:00Z")
    assert rows(js(run, "--days", "8"))["make"]["calls"] == 3


@pytest.mark.parametrize("ok, failed, expected", [
    (3, 2, True),    # 5 calls, 60%
    (4, 1, False),   # 5 calls, exactly 80%: not below
    (0, 4, False),   # 4 calls: too few, however bad
    (7, 2, True),    # 9 calls, 77.8%
])
def test_opportunity_threshold(run, log, ok, failed, expected):
    log.shell("cargo build", times=ok)
    log.shell("cargo build", "tool_failure", times=failed, error="error[E0433]: failed to resolve")
    log.shell("cargo build", "tool_failure", times=3, exit_code=130)  # env: never counts
    assert [o["name"] for o in js(run)["opportunities"]] == (["cargo build"] if expected else [])


def test_opportunity_reason_and_text_table(run, log):
    log.shell("npm test", times=2)
    log.shell("npm test", "tool_failure", times=3, error="npm ERR! missing script: test")
    log.shell("git status", times=6)
    code, out, err = run(["analyze", "--days", "7"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == ("analyze: 11 finished tool call(s) from 2026-01-24T00:00:00Z to "
                        "2026-01-31T00:00:00Z (7 day(s))")
    assert lines[1].split() == ["tool/family", "calls", "ok", "failed", "env", "denied", "rate",
                                "corrections"]
    assert lines[2].split() == ["git", "status", "6", "6", "0", "0", "0", "100%", "0"]
    assert lines[3].split() == ["npm", "test", "5", "2", "3", "0", "0", "40%", "0"]
    assert "- npm test: 2 of 5 calls succeeded (40% < 80%) in the last 7 day(s); most frequent " \
           "failure: npm ERR! missing script: test (3x)" in lines


def test_self_corrections_count_edits_undoing_earlier_edits(run, log):
    def edit(old, new, session="s1", file="app.py"):
        log.add("tool_success", session=session, tool="Edit", tool_kind="edit", file=file,
                args=file, edit_old=old, edit_new=new)
    edit("def f(x):", "def f(x, y=None):")
    edit("def f(x, y=None):", "def f(x, y):")                 # undoes the previous edit
    edit("return x", "return x + y")
    edit("y=None", "y=0", file="other.py")                     # another file: not a correction
    edit("def f(x, y):", "def f(x, *ys):", session="s2")       # another session: not one
    edit("x + y", "x - y")                                     # too short to count
    edit("def f(x, y=None, z=1)\u2026", "def g():", file="long.py")
    edit("def f(x, y=None", "def h():", file="long.py")         # cut text: prefix of nothing
    data = js(run)
    assert rows(data)["Edit"]["self_corrections"] == 1
    assert rows(data)["Edit"]["corrections"] == 1


def test_recorded_corrections_are_counted_per_family(run, log, store):
    log.shell("pytest", times=2)
    jsonl.append(str(store / "corrections.jsonl"), [
        {"v": 1, "id": "cor_1", "ts": model.iso(NOW - DAY), "family": "pytest"},
        {"v": 1, "id": "cor_2", "ts": model.iso(NOW - DAY), "tool": "Write"},
        {"v": 1, "id": "cor_3", "ts": model.iso(NOW - 30 * DAY), "family": "pytest"},
        {"v": 1, "id": "cor_4", "ts": model.iso(NOW - DAY)}])
    data = js(run)
    assert rows(data)["pytest"]["recorded_corrections"] == 1
    assert (rows(data)["Write"]["calls"], rows(data)["Write"]["corrections"]) == (0, 1)


def test_bad_lines_are_skipped_with_a_warning_and_newer_records_refused(run, log, store):
    log.shell("make", times=1)
    with open(store / "observations.jsonl", "ab") as fh:
        fh.write(b'{"event": "tool_success", broken\n')
    code, out, err = run(["analyze", "--format", "json"])
    assert code == 0
    assert "observations.jsonl:2: not JSON" in err
    log.add("tool_success", tool="Bash", family="make", v=9)
    code, out, err = run(["analyze"])
    assert code == 1
    assert err.endswith("record format v9 was written by a newer self_learning; upgrade this "
                        "skill folder to read it\n")


def test_days_must_be_a_sane_whole_number(run):
    for bad in ("0", "3651"):
        code, out, err = run(["analyze", "--days", bad])
        assert (code, out) == (2, "")
        assert err == ("self_learning: error: analyze: --days must be a whole number from 1 to "
                       f"3650, got {bad}; e.g. --days 7\n")


def test_no_observations(run):
    code, out, err = run(["analyze"])
    assert code == 0
    assert out.splitlines()[-1].startswith("no tool calls in the window (")


# --- git-aware suppression -----------------------------------------------------------------------

def git(repo, *args, when=None):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def failing(log, family, n=5, age=5 * DAY):
    log.shell(family, times=1, age=age)
    log.shell(family, "tool_failure", times=n - 1, error="error: it broke", age=age)


def test_a_fix_commit_in_the_window_suppresses_the_opportunity(run, log, repo):
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Fixes cargo build on CI",
        when=NOW - 10 * DAY)                                   # before the window
    git(repo, "commit", "-q", "--allow-empty", "-m", "fix npm test flakiness", when=NOW - 3 * DAY)
    git(repo, "commit", "-q", "--allow-empty", "-m", "speed up\n\nfixed the make target",
        when=NOW - 2 * DAY)                                    # names "make", not "make test"
    git(repo, "commit", "-q", "--allow-empty", "-m", "refix-ish npm ci typo", when=NOW - DAY)
    for family in ("npm test", "cargo build", "make test", "npm ci"):
        failing(log, family)
    data = js(run)
    assert data["git"] == "checked"
    assert [o["name"] for o in data["opportunities"]] == ["cargo build", "make test", "npm ci"]
    (suppressed,) = data["suppressed"]
    assert suppressed["name"] == "npm test"
    assert suppressed["suppressed_by"]["subject"] == "fix npm test flakiness"
    sha = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%h",
                          "--grep=flakiness"], capture_output=True, text=True).stdout.strip()
    assert suppressed["suppressed_by"]["sha"] == sha
    code, out, err = run(["analyze"])
    assert f'- suppressed npm test: fixed by commit {sha} "fix npm test flakiness"' in out


def test_a_fix_commit_body_naming_a_tool_suppresses_it(run, log, repo):
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "edit retries\n\nThis fixes the Edit "
        "tool failing on CRLF files.", when=NOW - DAY)
    for _ in range(5):
        log.add("tool_failure", tool="Edit", tool_kind="edit", file="a.py", error="no match",
                age=2 * DAY)
    assert js(run)["suppressed"][0]["suppressed_by"]["subject"] == "edit retries"


def test_a_fix_commit_before_the_failures_hides_nothing(run, log, repo):
    """A fix commit suppresses the failures before it; failing after it, the row stays."""
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "fix npm test flakiness", when=NOW - 3 * DAY)
    failing(log, "npm test", age=2 * DAY)
    data = js(run)
    assert data["suppressed"] == []
    [opp] = data["opportunities"]
    assert opp["failed_after"]["subject"] == "fix npm test flakiness"
    assert opp["last_failure"] == model.iso(NOW - 2 * DAY)
    code, out, err = run(["analyze"])
    assert (f'- npm test: 1 of 5 calls succeeded (20% < 80%) in the last 7 day(s); most '
            f'frequent failure: error: it broke (4x); it failed again after fix commit '
            f'{opp["failed_after"]["sha"]} "fix npm test flakiness"') in out
    log.shell("npm test", "tool_failure", error="error: it broke", age=4 * DAY)
    assert js(run)["suppressed"] == []  # failures on both sides of the fix: not fixed


def test_without_git_the_opportunities_stay(run, log, repo, monkeypatch):
    failing(log, "npm test")
    data = js(run)
    assert data["git"] == "skipped (not a git repository or no commits)"
    assert [o["name"] for o in data["opportunities"]] == ["npm test"]
    monkeypatch.setenv("PATH", str(repo))  # no git on the PATH
    data = js(run)
    assert data["git"] == "skipped (FileNotFoundError)"
    assert [o["name"] for o in data["opportunities"]] == ["npm test"]
