"""store: one-write appends, latest-wins fold, torn lines reported and quarantined."""
import json
import os

import pytest

from selflearn.storage import store as jsonl
from selflearn.storage.errors import SelfLearningError


def test_append_and_read_roundtrip(tmp_path):
    path = str(tmp_path / "a.jsonl")
    jsonl.append(path, [{"id": "x", "n": 1}, {"id": "y", "text": "é\n\"q\""}])
    records, problems = jsonl.read(path)
    assert records == [{"id": "x", "n": 1}, {"id": "y", "text": "é\n\"q\""}]
    assert problems == []
    assert open(path, "rb").read().count(b"\n") == 2


def test_fold_latest_wins_and_partial_lines_update(tmp_path):
    records = [{"id": "a", "ts": "1", "status": "proposed", "title": "t"},
               {"id": "b", "ts": "2", "title": "other"},
               {"id": "a", "ts": "3", "status": "accepted"}]
    folded = jsonl.fold(records)
    assert folded["a"]["status"] == "accepted" and folded["a"]["title"] == "t"
    assert folded["a"]["_versions"] == 2 and folded["a"]["_first_ts"] == "1"
    assert folded["b"]["_versions"] == 1


def test_corrupt_and_torn_lines_are_reported_not_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "a"}\nnot json\n[1]\n\xff\xfe\n{"id": "b"}\n{"id": "c", "ti')
    records, problems = jsonl.read(str(path))
    assert [r["id"] for r in records] == ["a", "b"]
    assert [(p.line, p.reason.split(" (")[0]) for p in problems] == [
        (2, "not JSON"), (3, "not a JSON object"), (4, "not UTF-8"), (6, "torn last line")]
    assert str(problems[-1]) == "a.jsonl:6: torn last line (no newline)"


def test_append_after_torn_tail_keeps_new_record_whole(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b", "ti')
    jsonl.append(str(path), [{"id": "c"}])
    records, problems = jsonl.read(str(path))
    assert [r["id"] for r in records] == ["a", "c"]
    assert [p.line for p in problems] == [2]


def test_quarantine_moves_bad_lines_with_numbers(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "a"}\ngarbage\n{"id": "b"}\n{"id": "c", "ti')
    moved = jsonl.quarantine(str(path), str(tmp_path / "q"), "20260101T000000Z")
    assert [p.line for p in moved] == [2, 4]
    assert jsonl.read(str(path)) == ([{"id": "a"}, {"id": "b"}], [])
    q = [json.loads(line) for line in (tmp_path / "q" / "a.jsonl.20260101T000000Z.jsonl").read_text().splitlines()]
    assert [(r["line"], r["raw"]) for r in q] == [(2, "garbage"), (4, '{"id": "c", "ti')]


def test_large_record_is_one_line(tmp_path):
    path = str(tmp_path / "a.jsonl")
    big = {"id": "big", "text": "x" * 70000}
    jsonl.append(path, [big])
    assert jsonl.read(path) == ([big], [])


def test_atomic_write_replaces(tmp_path):
    (tmp_path / "w").mkdir()
    path = str(tmp_path / "w" / "f.md")
    jsonl.atomic_write(path, "one")
    jsonl.atomic_write(path, b"two")
    assert open(path).read() == "two"
    assert os.listdir(tmp_path / "w") == ["f.md"]


def test_future_version_is_refused(run, store):
    store.mkdir(parents=True)
    (store / "aha_cards.jsonl").write_text(json.dumps({"id": "aha_f", "title": "t", "v": 2}) + "\n")
    code, out, err = run(["list"])
    assert code == 1 and out == ""
    assert err == (f"self_learning: error: {store / 'aha_cards.jsonl'}:1: record format v2 was written "
                   "by a newer self_learning; upgrade this skill folder to read it\n")


def test_reader_warns_about_corrupt_lines_on_stderr(run, store):
    store.mkdir(parents=True)
    (store / "aha_cards.jsonl").write_text('{"id": "aha_a", "title": "ok card"}\n{broken\n')
    code, out, err = run(["list"])
    assert code == 0 and "ok card" in out
    assert err == (f"self_learning: warning: {store / 'aha_cards.jsonl'}:2: not JSON (Expecting "
                   "property name enclosed in double quotes: line 1 column 2 (char 1)); "
                   "run `repair --apply` to move it to quarantine/\n")
