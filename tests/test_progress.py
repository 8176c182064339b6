"""mine and maintain report progress on a terminal for long runs, and only there."""
import io
import json
import sys

import pytest

from selflearn.cli import common, parser as cli
from selflearn.learning import mine


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def observed(store):
    store.mkdir(parents=True)
    lines = [{"v": 1, "id": f"obs_{i}", "ts": "2026-03-02T10:00:00Z", "agent": "claude",
              "session_id": f"s{i % 7}", "event": "tool_failure", "tool": "Bash",
              "args": "npm test", "family": "npm test", "exit_code": 1,
              "error": "Error: Cannot find module 'left-pad'"} for i in range(3000)]
    (store / "observations.jsonl").write_text("".join(json.dumps(o) + "\n" for o in lines))
    return store


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(common.TtyProgress, "DELAY", 0.0)
    monkeypatch.setattr(mine, "PROGRESS_EVERY", 0.0)
    monkeypatch.setattr(mine, "PROGRESS_LINES", 1000)


def run_on(stream, monkeypatch, *argv):
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    return cli.main(list(argv))


def test_mine_reports_how_far_it_read_and_wipes_the_line(observed, fast, monkeypatch):
    err = Terminal()
    assert run_on(err, monkeypatch, "mine", "--dry-run") == 0
    text = err.getvalue()
    reports = [r for r in text.split("\r") if r.startswith("self_learning: mine: read ")]
    assert len(reports) == 3  # lines 1000, 2000 and 3000
    size = (observed / "observations.jsonl").stat().st_size / 1e6
    assert reports[-1] == f"self_learning: mine: read {size:.1f} of {size:.1f} MB of " \
                          "observations (100%)\033[K"
    assert text.endswith("\r\033[K")


def test_maintain_names_each_step(observed, fast, monkeypatch):
    err = Terminal()
    assert run_on(err, monkeypatch, "maintain", "--dry-run") == 0
    steps = [r[len("self_learning: maintain: "):-3] for r in err.getvalue().split("\r")
             if r.startswith("self_learning: maintain: ")]
    assert steps[:2] == ["mine", "reinforce"] and len(steps) > 2


def test_short_runs_and_pipes_get_no_progress(observed, monkeypatch):
    monkeypatch.setattr(common.TtyProgress, "DELAY", 3600.0)
    monkeypatch.setattr(mine, "PROGRESS_EVERY", 0.0)
    err = Terminal()  # a terminal, but the run ends before the delay
    assert run_on(err, monkeypatch, "mine", "--dry-run") == 0
    assert err.getvalue() == ""
    monkeypatch.setattr(common.TtyProgress, "DELAY", 0.0)
    pipe = io.StringIO()  # not a terminal
    assert run_on(pipe, monkeypatch, "maintain", "--dry-run", "--force") == 0
    assert "\r" not in pipe.getvalue()
