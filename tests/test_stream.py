"""learning.stream: the one pass over observations.jsonl that mine and analyze share.

The lines are observations as `ingest-transcripts` writes them from a real session
(bench/learning/sessions/entire-cli/897eb280e769-17.jsonl: a failed `mise run test`, the
edit that fixed it, the re-run), plus the damage a log can carry.
"""
import json

import pytest

from selflearn.learning import stream
from selflearn.storage.errors import SelfLearningError

FAILED = {"v": 1, "id": "obs_20260125T104817Z_0a1b2c", "ts": "2026-01-25T10:48:17Z",
          "agent": "claude", "session_id": "f736da47-b2ca-4f86-bb32-a1bbe582e464",
          "tool": "Bash", "tool_kind": "shell", "args": "mise run test", "family": "mise run test",
          "exit_code": 1, "error": "cmd/entire/cli/paths/paths.go:149:28: undefined: regexp",
          "event": "tool_failure", "outcome": "failure", "via": "transcript"}
EDIT = {"v": 1, "id": "obs_20260125T104822Z_cdffb6", "ts": "2026-01-25T10:48:22Z",
        "agent": "claude", "session_id": "f736da47-b2ca-4f86-bb32-a1bbe582e464", "tool": "Edit",
        "tool_kind": "edit", "file": "/Users/USER/Work/entire/devenv/cli/cmd/entire/cli/paths/paths.go",
        "edit_new": 'import ( "context" "regexp" )', "event": "tool_success", "via": "transcript"}


def write(tmp_path, lines):
    path = tmp_path / "observations.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def line(obs) -> bytes:
    return (json.dumps(obs) + "\n").encode()


def test_lines_come_with_their_number_and_offsets_and_only_wanted_ones_are_parsed(tmp_path):
    raws = [line(FAILED), line(EDIT), line(dict(FAILED, id="obs_20260125T104830Z_0a1b2d"))]
    path = write(tmp_path, raws)
    warnings = []
    with open(path, "rb") as fh:
        lines = stream.Stream(fh, warnings, line=40)
        seen = []
        for raw in lines:
            seen.append((lines.line, lines.at, lines.pos))
            if b"tool_failure" in raw:
                assert lines.parse(raw)["error"].endswith("undefined: regexp")
    starts = [0, len(raws[0]), len(raws[0]) + len(raws[1])]
    assert seen == [(41 + i, s, s + len(r)) for i, (s, r) in enumerate(zip(starts, raws))]
    assert lines.read == 3 and warnings == []


def test_a_line_still_being_written_is_left_for_the_next_run(tmp_path):
    path = write(tmp_path, [line(FAILED), line(EDIT)[:-30]])
    with open(path, "rb") as fh:
        lines = stream.Stream(fh, [], whole_lines=True)
        assert [lines.parse(raw)["id"] for raw in lines] == [FAILED["id"]]
    assert lines.pos == len(line(FAILED)) and lines.line == 1


def test_bad_lines_are_skipped_with_at_most_ten_warnings(tmp_path):
    bad = [b"{not json\n", line({"id": "obs_x", "v": 1, "ts": 5}), line([1, 2])] * 5
    path = write(tmp_path, bad + [line(EDIT)])
    warnings = []
    with open(path, "rb") as fh:
        lines = stream.Stream(fh, warnings)
        kept = [obs for obs in map(lines.parse, lines) if obs]
    assert kept == [EDIT]
    assert len(warnings) == stream.MAX_WARNINGS
    assert warnings[0] == f"{path}:1: not JSON (Expecting property name enclosed in double " \
                          "quotes: line 1 column 2 (char 1)); skipped"
    assert warnings[2] == f"{path}:3: not a JSON object; skipped"


def test_a_line_left_out_by_the_caller_is_not_judged(tmp_path):
    path = write(tmp_path, [line({"id": "obs_x", "v": 1, "ts": 5}), line(EDIT)])
    warnings = []
    with open(path, "rb") as fh:
        lines = stream.Stream(fh, warnings)
        kept = [lines.parse(raw, keep=lambda o: o.get("tool") == "Edit") for raw in lines]
    assert kept == [None, EDIT] and warnings == []


def test_a_line_of_a_newer_format_stops_the_command(tmp_path):
    path = write(tmp_path, [line(dict(EDIT, v=99))])
    with open(path, "rb") as fh:
        lines = stream.Stream(fh, [])
        with pytest.raises(SelfLearningError, match=r"observations.jsonl:1: .*newer"):
            [lines.parse(raw) for raw in lines]
