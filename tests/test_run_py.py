"""tests/run.py: which Pythons it finds, when a run is a selection, how it reports each."""
import importlib.util
import sys
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("run_py", Path(__file__).with_name("run.py"))
run_py = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_py)


def test_finds_this_python_and_only_3_9_or_newer_that_run():
    found = run_py.interpreters()
    here = sys.version_info[:2]
    assert here in found and found[here][1] == "%d.%d.%d" % sys.version_info[:3]
    assert all(key >= (3, 9) for key in found) and list(found) == sorted(found)


def test_a_refusing_shim_is_not_an_interpreter(tmp_path):
    shim = tmp_path / "python3.42"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.42: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    assert run_py._probe(str(shim)) is None


@pytest.mark.parametrize("args, selection", [
    (["tests", "-q"], False), (["-q", "-x"], False), (["-q", "-x", "-k", "hook"], True),
    (["-kinstall"], True), (["tests/test_hook.py"], True), (["tests/test_hook.py::test_x"], True),
])
def test_a_selection_runs_on_this_python_only(args, selection):
    assert run_py._is_selection(args) is selection


def test_python_option_is_ours_and_the_rest_goes_to_pytest():
    assert run_py._split_args(["--python", "3.9", "-q", "-k", "x"]) == ("3.9", ["-q", "-k", "x"])
    assert run_py._split_args(["--python=all", "-x"]) == ("all", ["-x"])
    assert run_py._split_args(["-q"]) == (None, ["-q"])


def test_summary_is_pytests_last_line():
    out = "....\nFAILED tests/test_a.py::t - boom\n==== 1 failed, 9 passed in 3.2s ====\n"
    assert run_py._summary(out) == "1 failed, 9 passed in 3.2s"


def test_counts_add_failures_and_errors():
    assert run_py.counts("..\n==== 1 failed, 9 passed, 2 errors in 3.2s ====\n") == (9, 3)
    assert run_py.counts("==== 12 passed, 1 skipped in 1.0s ====") == (12, 0)
    assert run_py.counts("Traceback: no pytest here") == (0, 0)


def test_an_unknown_version_is_a_one_line_error(capsys):
    assert run_py.main(["--python", "3.99", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tests/run.py: error: no working python3.99 found (found: ")
    assert len(err.splitlines()) == 1
