"""Issue 14: a damaged store or a hostile input never stops the tool or destroys a file.

The matrix runs every command that reads the store against every kind of damaged line or
file, in process; each must exit 0, 1 or 2 without a traceback and still serve the good card.
"""
import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from selflearn.cli import parser as cli
from selflearn.observation import hook
from selflearn.storage import model, store as jsonl
from selflearn.surfacing import injection

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "self_learning.py"
GOOD = {"v": 1, "id": "aha_20250101T000000Z_aaaaaa", "ts": "2025-01-01T00:00:00Z",
        "title": "Good card survives damage", "when_to_use": "build", "status": "accepted",
        "solution_steps": ["run make warm"], "tags": ["build"], "origin": "agent"}
REC_ID = "rec_20250101T000000Z_bbbbbb"
GOOD_FILES = {
    "aha_cards.jsonl": [GOOD],
    "recommendations.jsonl": [{"v": 1, "id": REC_ID,
                               "ts": "2025-01-01T00:00:00Z", "title": "Good rec"}],
    "events.jsonl": [{"v": 1, "id": "evt_1", "ts": "2025-01-01T00:00:00Z", "task_summary": "t"}],
    "signals.jsonl": [{"v": 1, "id": "sig_1", "ts": "2025-01-01T00:00:00Z", "kind": "aha_used",
                       "aha_id": GOOD["id"], "source": "manual"}],
    "observations.jsonl": [{"v": 1, "id": "obs_1", "ts": "2025-01-01T00:00:00Z",
                            "agent": "claude", "event": "tool_failure", "session_id": "s1",
                            "tool": "Bash", "tool_kind": "shell", "family": "make",
                            "error": "boom", "outcome": "failure"}],
    "surfacings.jsonl": [{"v": 1, "id": "srf_1", "ts": "2025-01-01T00:00:00Z",
                          "session_id": "s1", "lesson_ids": [GOOD["id"]], "chars": 10}],
}
# (file, bytes appended) or (file, whole new content); every one a way a store gets damaged
DAMAGE = {
    "v_float": ("aha_cards.jsonl", b'{"id": "aha_x", "v": 1.5, "title": "x"}\n'),
    "v_string": ("aha_cards.jsonl", b'{"id": "aha_x", "v": "1", "title": "x"}\n'),
    "v_bool": ("aha_cards.jsonl", b'{"id": "aha_x", "v": true, "title": "x"}\n'),
    "only_id": ("aha_cards.jsonl", b'{"id": "aha_x"}\n'),
    "number_stamp_status": ("aha_cards.jsonl", b'{"id": "aha_x", "title": "x", "ts": 5, '
                            b'"status": 7}\n'),
    "tags_number": ("aha_cards.jsonl", b'{"id": "aha_x", "title": "x", "tags": 3}\n'),
    "title_object": ("aha_cards.jsonl", b'{"id": "aha_x", "title": {"a": 1}}\n'),
    "id_number": ("aha_cards.jsonl", b'{"id": 5, "title": "x"}\n'),
    "id_path": ("aha_cards.jsonl", b'{"id": "../../etc", "title": "x"}\n'),
    "null_title": ("aha_cards.jsonl", b'{"id": "aha_x", "title": null}\n'),
    "nan_confidence": ("aha_cards.jsonl", b'{"id": "aha_x", "title": "x", "confidence": NaN}\n'),
    "internal_field": ("aha_cards.jsonl", b'{"id": "aha_x", "title": "x", "_versions": "a"}\n'),
    "partial_update_of_good": ("aha_cards.jsonl",
                               b'{"id": "%s", "status": 9}\n' % GOOD["id"].encode()),
    "duplicated_id": ("aha_cards.jsonl", (json.dumps(GOOD) + "\n").encode()),
    "mixed_versions": ("aha_cards.jsonl", b'{"id": "aha_y", "title": "no version"}\n'),
    "truncated": ("aha_cards.jsonl", b'{"id": "aha_t", "title": "tor'),
    "not_utf8": ("aha_cards.jsonl", b'{"id": "aha_u", "title": "\xff\xfe"}\n'),
    "deep": ("aha_cards.jsonl", b'{"id": "aha_d", "title": "d", "input_shape": '
             + b'{"a": ' * 3000 + b'1' + b'}' * 3001 + b'\n'),
    "nested_object": ("aha_cards.jsonl", b'{"id": "aha_o", "title": "o", "input_shape": {"a": '
                      + b'[' * 900 + b']' * 900 + b'}}\n'),
    "array_line": ("aha_cards.jsonl", b'[1, 2, 3]\n'),
    "null_line": ("signals.jsonl", b'null\n'),
    "signal_types": ("signals.jsonl", b'{"kind": 5, "aha_id": ["x"], "ts": 1}\n'),
    "event_types": ("events.jsonl", b'{"id": "evt_x", "notes": "abc", "tags": {"a": 1}}\n'),
    "rec_types": ("recommendations.jsonl", b'{"id": "rec_x", "title": "r", "priority": 1, '
                  b'"expected_impact": "high"}\n'),
    "deep_observation": ("observations.jsonl", b'{"event": "tool_failure", "x": '
                         + b'[' * 5000 + b']' * 5000 + b'}\n'),
    "observation_types": ("observations.jsonl", b'{"v": 1, "event": "tool_failure", '
                          b'"tool": 5, "session_id": ["s"], "ts": "2025-01-01T00:00:01Z"}\n'),
    "surfacing_types": ("surfacings.jsonl", b'{"session_id": 5, "lesson_ids": "abc"}\n'),
    "proposal_types": ("proposals.jsonl", b'{"id": "prop_x", "status": 5, "kind": ["skill"], '
                       b'"covers": "abc"}\n'),
    "correction_types": ("corrections.jsonl", b'{"id": "cor_x", "target": 5, "text": ["t"]}\n'),
    "backport_types": ("backports.jsonl", b'{"backport_id": 7, "added_card_ids": "aha_x", '
                       b'"applied": "yes"}\n'),
    "empty_file": ("signals.jsonl", None),
    "crlf": ("aha_cards.jsonl", "crlf"),
    "bom": ("aha_cards.jsonl", "bom"),
}
NEWER = ("aha_cards.jsonl", b'{"id": "aha_n", "v": 2, "title": "from the future"}\n')


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    """A day after the seeded records, so the good card is fresh."""
    monkeypatch.setenv("SELF_LEARNING_NOW", "2025-01-02T00:00:00Z")


def commands(tmp: Path):
    skill = tmp / "skill"
    skill.mkdir(exist_ok=True)
    (tmp / "none").mkdir(exist_ok=True)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\n# Skill\n")
    return [["list", "--format", "json"], ["review"], ["repair"], ["advice"],
            ["index"], ["doctor"], ["mine"], ["maintain"], ["decay"], ["analyze"],
            ["feedback"], ["report", "--html", str(tmp / "r.html")],
            ["export-rules", "--agent", "agents-md", "--dry-run"], ["proposals", "list"],
            ["suggest-skills"], ["promote"], ["reinforce"],
            ["use", "--aha", GOOD["id"]], ["aha-status", "--id", GOOD["id"], "--status",
                                           "accepted"],
            ["export-backport", "--skill-path", str(skill), "--ids", GOOD["id"]],
            ["backport-inspect", "--skill-path", str(skill)], ["paths"],
            ["rec-status", "--id", REC_ID, "--status", "done"],
            ["signal", "--kind", "aha_helped", "--aha-id", GOOD["id"]],
            ["correct", "--lesson", GOOD["id"], "--text", "run make warm twice"],
            ["ingest-transcripts", str(tmp / "none")], ["improve", "--scan-duplicates"],
            ["suggest-hooks"], ["export-rules", "--agent", "agents-md"]]


def seed(store: Path, damage=None) -> None:
    store.mkdir(parents=True, exist_ok=True)
    for name, records in GOOD_FILES.items():
        (store / name).write_bytes(b"".join(jsonl.encode(r) for r in records))
    if damage is None:
        return
    name, data = damage
    path = store / name
    if data is None:
        path.write_bytes(b"")
    elif data == "crlf":
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    elif data == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    else:
        with open(path, "ab") as fh:
            fh.write(data)


def call(args, capsys, monkeypatch, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def check_commands(argvs, capsys, monkeypatch, served: bool = True) -> None:
    """Each command: exit 0 (damage is skipped, never fatal), no traceback, good card served."""
    for args in argvs:
        code, out, err = call(args, capsys, monkeypatch)
        assert "Traceback" not in err, (args, err)
        names_good = GOOD["id"] in args or REC_ID in args
        reported = args[0] == "doctor" and code == 1 and "problem: " in out  # damage found
        assert code == 0 or reported or (not served and names_good and code == 2), (args, err)
        if served and args[0] in ("list", "advice", "review"):
            assert "Good card survives damage" in out, (args, out, err)


def repaired_and_clean(capsys, monkeypatch) -> None:
    assert call(["repair", "--apply"], capsys, monkeypatch)[0] == 0
    code, out, err = call(["list"], capsys, monkeypatch)
    assert (code, err) == (0, "") and "Good card survives damage" in out


CORE = [["list", "--format", "json"], ["advice"], ["use", "--aha", GOOD["id"]]]


@pytest.fixture
def no_fsync(monkeypatch):
    """Durability is not what the matrix tests; fsync would make it slow."""
    monkeypatch.setattr(jsonl.fs, "fsync", lambda fd: None)
    monkeypatch.setattr(os, "fsync", lambda fd: None)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_each_damage_alone(kind, store, tmp_path, capsys, monkeypatch, no_fsync):
    """Every damage on its own: the core commands (all commands: SELF_LEARNING_FULL_MATRIX=1)."""
    seed(store, DAMAGE[kind])
    full = os.environ.get("SELF_LEARNING_FULL_MATRIX") == "1"
    check_commands(commands(tmp_path) if full else CORE, capsys, monkeypatch,
                   served=True)
    repaired_and_clean(capsys, monkeypatch)


def test_every_command_on_every_damage_at_once(store, tmp_path, capsys, monkeypatch, no_fsync):
    """All line damages in their files at once (the torn line last), CRLF line ends in the
    cards and a BOM before the recommendations: every command still serves the good card."""
    seed(store)
    lines = [d for k, d in sorted(DAMAGE.items(), key=lambda kd: kd[0] == "truncated")
             if isinstance(d[1], bytes)]
    for name, data in lines:
        with open(store / name, "ab") as fh:
            fh.write(data)
    cards = store / "aha_cards.jsonl"
    cards.write_bytes(cards.read_bytes().replace(b"\n", b"\r\n"))
    recs = store / "recommendations.jsonl"
    recs.write_bytes(b"\xef\xbb\xbf" + recs.read_bytes())
    check_commands(commands(tmp_path), capsys, monkeypatch)
    repaired_and_clean(capsys, monkeypatch)


def test_every_command_on_empty_files(store, tmp_path, capsys, monkeypatch, no_fsync):
    store.mkdir(parents=True)
    for name in GOOD_FILES:
        (store / name).write_bytes(b"")
    check_commands(commands(tmp_path), capsys, monkeypatch, served=False)


@pytest.mark.parametrize("line, why", [
    ({"id": "aha_o", "title": "o", "input_shape": {"a": [[[[[[1]]]]]]}},
     "field input_shape is nested deeper than 6 levels or over a size limit"),
    ({"id": "aha_o", "title": "o", "confidence": float("inf")},
     "field confidence must be a finite number"),
    ({"id": "aha_o", "title": "o", "status": "nope"},
     "field status has unknown value 'nope' (one of: " + ", ".join(model.CARD_STATUSES) + ")"),
    ({"id": "aha_o", "title": "o", "v": 1, "_store": "x"},
     "internal field '_store' in a stored line"),
    ({"title": "o"}, "no id"),
    ({"id": "aha o", "title": "o"}, "field id 'aha o' is outside the id shape (" + model.ID_SHAPE
     + ")"),
])
def test_why_a_stored_card_line_is_refused(line, why):
    assert model.LineCheck("cards").problem(line) == why


def test_a_damaged_line_is_one_warning_per_command(run, store):
    seed(store, DAMAGE["tags_number"])
    code, out, err = run(["review"])
    assert code == 0
    assert err == (f"self_learning: warning: {store / 'aha_cards.jsonl'}:2: field tags must be "
                   "an array of strings, got int; run `repair --apply` to move it to "
                   "quarantine/\n")


@pytest.mark.parametrize("value", ["1.5", '"1"', "true", "0", "-3", "null"])
def test_an_odd_version_is_a_bad_line_not_a_newer_format(run, store, value):
    seed(store)
    with open(store / "aha_cards.jsonl", "a") as fh:
        fh.write('{"id": "aha_x", "title": "x", "v": %s}\n' % value)
    code, out, err = run(["list"])
    assert code == 0 and "Good card" in out
    assert f"aha_cards.jsonl:2: field v must be a whole number >= 1, got {json.loads(value)!r}" \
        in err and "newer" not in err


def test_a_newer_format_is_named_as_such_and_repair_keeps_it(run, store):
    seed(store, NEWER)
    code, out, err = run(["list"])
    assert (code, out) == (1, "")
    assert err == (f"self_learning: error: {store / 'aha_cards.jsonl'}:2: record format v2 was "
                   "written by a newer self_learning; upgrade this skill folder to read it\n")
    code, out, err = run(["repair", "--apply"])
    assert code == 0 and "aha_cards.jsonl:2: record format v2" in out and "kept" in out
    assert b'"v": 2' in (store / "aha_cards.jsonl").read_bytes()


def test_repair_quarantines_the_original_bytes_and_then_all_is_clean(run, store):
    seed(store)
    bad = [b'{"id": "aha_u", "title": "\xff"}', b'{"id": "aha_x", "tags": 3, "title": "t"}']
    with open(store / "aha_cards.jsonl", "ab") as fh:
        fh.write(b"\n".join(bad) + b"\n")
    code, out, err = run(["repair"])
    out = "".join(line + "\n" for line in out.splitlines() if "lets others in" not in line)
    assert code == 0 and out.splitlines() == [
        "aha_cards.jsonl:2: not UTF-8 — would be quarantined",
        "aha_cards.jsonl:3: field tags must be an array of strings, got int — would be "
        "quarantined", "Run `repair --apply` to do this."]
    assert run(["repair", "--apply"])[0] == 0
    (moved,) = (store / "quarantine").iterdir()
    entries = [json.loads(line) for line in moved.read_text().splitlines()]
    import base64
    assert base64.b64decode(entries[0]["raw_base64"]) == bad[0]
    assert entries[1]["raw"].encode() == bad[1] and entries[1]["line"] == 3
    for args in (["list"], ["review"], ["advice"], ["repair"]):
        code, out, err = run(args)
        assert (code, err) == (0, ""), args
    assert run(["repair"])[1] == "Store is healthy: nothing to repair.\n"


def test_session_start_advice_works_on_a_damaged_store_and_doctor_names_the_line(
        store, monkeypatch, capsys):
    """The hook skips the damaged line and logs no error of its own (every session would log
    it again): `doctor` reads the store and names the line, `repair --apply` moves it."""
    seed(store, NEWER)
    with open(store / "aha_cards.jsonl", "ab") as fh:
        fh.write(DAMAGE["only_id"][1])
    payload = {"hook_event_name": "SessionStart", "session_id": "s9", "source": "startup"}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    assert hook.main(["--agent", "claude"], injection.inject) == 0
    out, err = capsys.readouterr()
    assert "Good card survives damage" in out and err == ""
    assert not (store / "errors.jsonl").exists()
    from selflearn.observation import doctor
    from selflearn.storage.memory import Memory
    problems = doctor.check(Memory(str(store)), str(store))["problems"]
    assert "aha_cards.jsonl:3: first line of aha_x has no title" in problems


# --- writing ------------------------------------------------------------------------------

def _snapshot(store: Path) -> dict:
    return {p.name: p.read_bytes() for p in store.glob("*.jsonl") if p.is_file()}


FULL_PAYLOAD = {"event": {"task_summary": "t"}, "aha_cards": [{"title": "new card"}],
                "recommendations": [{"title": "new rec"}], "used_aha_ids": [GOOD["id"]]}


@pytest.mark.parametrize("failing", ["events.jsonl", "aha_cards.jsonl",
                                     "recommendations.jsonl", "signals.jsonl"])
def test_record_is_all_or_nothing_when_any_file_fails(failing, run, store, monkeypatch):
    seed(store)
    before = _snapshot(store)
    real_write, opened = jsonl.fs.write, {}
    real_open = jsonl.fs.open_fd

    def open_fd(path, *a):
        fd = real_open(path, *a)
        opened[fd] = os.path.basename(path)
        return fd

    def write(fd, data):
        if opened.get(fd) == failing:
            real_write(fd, bytes(data[:7]))  # a torn start, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(store / failing))
        return real_write(fd, data)
    monkeypatch.setattr(jsonl.fs, "open_fd", open_fd)
    monkeypatch.setattr(jsonl.fs, "write", write)
    code, out, err = run(["record"], json.dumps(FULL_PAYLOAD))
    assert (code, out) == (1, "")
    assert err == (f"self_learning: error: {store / failing}: No space left on device; the disk "
                   "is full; free some space and run the command again\n")
    assert _snapshot(store) == before


def test_a_failed_single_append_leaves_no_torn_line(store, monkeypatch):
    seed(store)
    before = _snapshot(store)
    real_write = jsonl.fs.write

    def write(fd, data):
        real_write(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(jsonl.fs, "write", write)
    with pytest.raises(OSError):
        jsonl.append(str(store / "signals.jsonl"), [{"kind": "aha_used"}])
    assert _snapshot(store) == before


def test_a_file_size_limit_stops_record_with_one_line_and_nothing_torn(tmp_path, repo, store):
    seed(store)
    before = _snapshot(store)
    payload = json.dumps({"aha_cards": [{"title": "big", "problem": "p" * 3000}]})
    proc = subprocess.run(["bash", "-c", f"ulimit -f 2; exec {sys.executable} {SCRIPT} record"],
                          input=payload.encode(), capture_output=True, check=False)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().endswith("File too large; a file-size limit (ulimit -f) "
                                         "stopped the write; raise the limit and run the "
                                         "command again\n")
    assert proc.stderr.count(b"\n") == 1 and _snapshot(store) == before


@pytest.mark.parametrize("code_errno,fix", [
    (errno.EROFS, "the file system is read-only; point SELF_LEARNING_REPO_ROOT at a writable "
                  "folder"),
    (errno.EACCES, "it must be yours, readable and writable (chmod u+rw), or point "
                   "SELF_LEARNING_REPO_ROOT at a copy you own")])
def test_a_read_only_store_is_one_line_naming_path_and_fix(run, store, monkeypatch, code_errno,
                                                            fix):
    seed(store)
    before = _snapshot(store)

    def refuse(path, flags, *a):
        raise OSError(code_errno, os.strerror(code_errno), path)
    monkeypatch.setattr(jsonl.fs, "open_fd", lambda p, f, *a: refuse(p, f) if f & os.O_CREAT
                        else os.open(p, f, *a))
    code, out, err = run(["use", "--aha", GOOD["id"]])
    assert code == 1 and err == (f"self_learning: error: {store / 'signals.jsonl'}: "
                                 f"{os.strerror(code_errno)}; {fix}\n")
    assert _snapshot(store) == before


def test_a_folder_where_a_store_file_belongs_is_one_line(run, store):
    seed(store)
    (store / "signals.jsonl").unlink()
    (store / "signals.jsonl").mkdir()
    where = store / "signals.jsonl"
    for args, stdin, message in (
            (["list"], None, f"{where} is a folder, not a regular file; move it away (e.g. "
             "rename it to signals.jsonl.bak) and run the command again"),
            (["record"], json.dumps(FULL_PAYLOAD), f"{where}: Is a directory; a folder sits "
             "where a file belongs; move it away and run the command again")):
        before = _snapshot(store)
        code, out, err = run(args, stdin)
        assert (code, out) == (1, "")
        assert err == f"self_learning: error: {message}\n"
        assert _snapshot(store) == before


def test_a_file_where_the_store_folder_belongs_is_named(run, store):
    store.parent.mkdir(parents=True)
    store.write_text("not a folder\n")
    for args, stdin in ((["list"], None), (["record"], json.dumps(FULL_PAYLOAD))):
        code, out, err = run(args, stdin)
        assert (code, out) == (1, "")
        assert err == (f"self_learning: error: {store} is a file where a folder belongs; move "
                       "it away and run the command again\n")
    assert store.read_text() == "not a folder\n"


REJECTED = {
    "nan": ('{"aha_cards": [{"title": "t", "confidence": NaN}]}',
            "record: standard input is not valid JSON (NaN is not a JSON number; use a string "
            "or null); nothing was written"),
    "infinity": ('{"aha_cards": [{"title": "t", "confidence": -Infinity}]}',
                 "record: standard input is not valid JSON (-Infinity is not a JSON number; use "
                 "a string or null); nothing was written"),
    "field_size": (json.dumps({"aha_cards": [{"title": "t", "problem": "x" * 70000}]}),
                   "record: aha_cards[0].problem: 70000 characters, over the limit of 65536"),
    "list_size": (json.dumps({"aha_cards": [{"title": "t", "tags": ["a"] * 201}]}),
                  "record: aha_cards[0].tags: 201 items, over the limit of 200"),
    "payload_size": (json.dumps({"aha_cards": [{"title": "t", "problem": "x" * 60000}
                                               for _ in range(20)]}),
                     "record: standard input is over the payload limit of 1048576 bytes; split "
                     "it; nothing was written"),
    "unknown_card": (json.dumps({"aha_cards": [{"title": "t", "colour": "red"}]}),
                     "record: aha_cards[0].colour: unknown field (see references/FORMAT.md)"),
    "internal_card": (json.dumps({"aha_cards": [{"title": "t", "_versions": 3}]}),
                      "record: aha_cards[0]._versions: internal field; fields starting with _ "
                      "are the tool's own"),
    "unknown_rec": (json.dumps({"recommendations": [{"title": "t", "owner": "me"}]}),
                    "record: recommendations[0].owner: unknown field (see references/FORMAT.md)"),
    "internal_event": (json.dumps({"event": {"task_summary": "t", "_store": "global"}}),
                       "record: event._store: internal field; fields starting with _ are the "
                       "tool's own"),
    "id_shape": (json.dumps({"aha_cards": [{"title": "t", "id": "../../x"}]}),
                 "record: aha_cards[0].id: id '../../x' is outside the id shape (1-96 "
                 "characters of letters, digits and `_ . : -`, starting with a letter or digit, "
                 "without `..`)"),
    "depth": (json.dumps({"aha_cards": [{"title": "t", "input_shape": {"a": {"b": {"c": {
        "d": {"e": {"f": 1}}}}}}}]}),
              "record: aha_cards[0].input_shape.a.b.c.d.e: nested deeper than 6 levels"),
    # Python 3.13's json parses 5000 levels (older ones hit RecursionError): then the field check
    # names where it goes too deep. Either way one line, exit 2, nothing written.
    "very_deep": ('{"aha_cards": [{"title": "t", "input_shape": ' + '{"a": ' * 5000 + "1"
                  + "}" * 5001 + "]}",
                  "record: standard input is nested deeper than 6 levels; nothing was written"
                  if sys.version_info < (3, 13) else
                  "record: aha_cards[0].input_shape.a.a.a.a.a: nested deeper than 6 levels"),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_record_rejects_with_one_clear_line_and_exit_2(name, run, store):
    seed(store)
    before = _snapshot(store)
    payload, message = REJECTED[name]
    code, out, err = run(["record"], payload)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith(f"self_learning: error: {message}")
    assert err.rstrip().endswith("nothing was written") or \
        err.rstrip().endswith("nothing was written (fields: references/FORMAT.md)")
    assert _snapshot(store) == before


def test_notes_and_contexts_have_the_field_limit_too(run, store):
    seed(store)
    before = _snapshot(store)
    code, _, err = run(["use", "--aha", GOOD["id"], "--context", "x" * 70000])
    assert code == 2 and err == ("self_learning: error: use: --context has 70000 characters, "
                                 "over the limit of 65536; nothing was written\n")
    code, _, err = run(["aha-status", "--id", GOOD["id"], "--status", "accepted",
                        "--note", "x" * 70000])
    assert code == 2 and err.startswith("self_learning: error: aha-status: --note has 70000")
    assert _snapshot(store) == before


def test_record_rejects_invalid_utf8_on_stdin_and_in_files(repo, store, tmp_path):
    seed(store)
    before = _snapshot(store)
    bad = b'{"aha_cards": [{"title": "caf\xe9"}]}'
    (tmp_path / "p.json").write_bytes(bad)
    for args, stdin, where in ((["record"], bad, "standard input"),
                               (["record", "--json", str(tmp_path / "p.json")], b"",
                                str(tmp_path / "p.json"))):
        proc = subprocess.run([sys.executable, str(SCRIPT)] + args, input=stdin,
                              capture_output=True, check=False)
        assert proc.returncode == 2
        assert proc.stderr.decode() == (f"self_learning: error: record: {where} is not UTF-8 "
                                        "(byte 29); nothing was written\n")
    assert _snapshot(store) == before


def test_fifos_are_refused_at_once(run, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run(["ingest-transcripts", str(fifo)])
    assert code == 2 and err == (f"self_learning: error: ingest-transcripts: {fifo} is a FIFO; "
                                 "pass transcript .jsonl files (regular files) or folders\n")
    code, _, err = run(["record", "--json", str(fifo)])
    assert code == 2 and err == (f"self_learning: error: record: {fifo} is a FIFO; give a "
                                 "regular file\n")


def test_a_fifo_in_place_of_a_store_or_config_file_is_an_error_not_a_hang(repo, store):
    seed(store)
    config = repo / ".agent-skills" / "self-learning" / "config.json"
    for fifo, args in ((store / "aha_cards.jsonl", ["list"]), (config, ["advice"]),
                       (store / "feedback.md", ["feedback"])):
        if fifo.exists():
            fifo.unlink()
        os.mkfifo(fifo)
        proc = subprocess.run([sys.executable, str(SCRIPT)] + args, capture_output=True,
                              timeout=30, check=False)
        assert proc.returncode in (1, 2) and proc.stdout == b"", args
        assert proc.stderr.decode().endswith(f"{fifo} is a FIFO, not a regular file; move it "
                                             f"away (e.g. rename it to {fifo.name}.bak) and run "
                                             "the command again\n"), proc.stderr
        fifo.unlink()


# --- output files ----------------------------------------------------------------------------

def test_report_never_overwrites_a_file_it_did_not_create(run, repo, store):
    seed(store)
    (repo / "README.md").write_text("mine\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[core]\n")
    outside = repo.parent / "outside.html"
    (repo / "link.html").symlink_to(outside)
    for target, why in (("README.md", "exists and was not created by self_learning (no marker); "
                         "choose another name or move it away; nothing was written"),
                        (".git/config", "is inside a .git folder; write somewhere else; nothing "
                         "was written"),
                        (".git/new.html", "is inside a .git folder; write somewhere else; "
                         "nothing was written"),
                        ("link.html", f"goes through a symbolic link to {outside}, outside the "
                         f"repository {repo}; nothing was written")):
        code, _, err = run(["report", "--html", str(repo / target)])
        assert code == 2 and err == f"self_learning: error: report: --html {repo / target} {why}\n"
    assert (repo / "README.md").read_text() == "mine\n" and not outside.exists()
    assert (repo / ".git" / "config").read_text() == "[core]\n"
    assert run(["report", "--html", str(repo / "mine.html")])[0] == 0
    assert run(["report", "--html", str(repo / "mine.html")])[0] == 0  # ours: replaced


def test_export_rules_remove_deletes_a_file_it_created_once_empty(run, repo, store):
    seed(store)
    assert run(["export-rules", "--agent", "agents-md"])[0] == 0
    assert "Good card survives damage" in (repo / "AGENTS.md").read_text()
    code, out, _ = run(["export-rules", "--agent", "agents-md", "--remove"])
    assert code == 0 and out.startswith("deleted AGENTS.md")
    assert not (repo / "AGENTS.md").exists()
    (repo / "AGENTS.md").write_text("# Ours\n")
    assert run(["export-rules", "--agent", "agents-md"])[0] == 0
    assert run(["export-rules", "--agent", "agents-md", "--remove"])[0] == 0
    assert (repo / "AGENTS.md").read_text() == "# Ours\n"


def test_install_hooks_refuses_a_settings_symlink_leaving_the_repo(run, repo, tmp_path,
                                                                  skill_in_repo):
    elsewhere = tmp_path / "shared-settings.json"
    elsewhere.write_text("{}\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").symlink_to(elsewhere)
    code, _, err = run(["install-hooks", "--agent", "claude"])
    assert code == 2 and err == (f"self_learning: error: {repo / '.claude' / 'settings.json'} is "
                                 f"a symbolic link to {elsewhere}, outside the repository; pass "
                                 "--follow-symlinks to change that file anyway - nothing was "
                                 "written\n")
    assert elsewhere.read_text() == "{}\n"
    assert run(["install-hooks", "--agent", "claude", "--follow-symlinks"])[0] == 0
    assert "hook" in elsewhere.read_text()


# --- every card field, any JSON value ---------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids,
                                                              max_size=3), max_leaves=8)
CARD_LINE = st.dictionaries(st.sampled_from([f.name for f in model.CARD_FIELDS] + ["_x"]),
                            JSONISH, max_size=6)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=CARD_LINE, in_payload=st.booleans())
def test_any_json_value_in_any_card_field(line, in_payload, store, tmp_path, capsys, monkeypatch):
    seed(store)
    if in_payload:
        code, out, err = call(["record"], capsys, monkeypatch,
                              json.dumps({"aha_cards": [line]}, allow_nan=True))
        assert code in (0, 2) and "Traceback" not in err
    else:
        with open(store / "aha_cards.jsonl", "ab") as fh:
            fh.write(json.dumps(line, allow_nan=True).encode("utf-8", "surrogatepass") + b"\n")
    for args in (["list"], ["review"], ["advice"], ["index"], ["repair"]):
        code, out, err = call(args, capsys, monkeypatch)
        assert code in (0, 1, 2) and "Traceback" not in err, (args, err)
        if code == 0 and args[0] in ("list", "advice"):
            assert "Good card survives damage" in out


def test_documented_limits_are_the_enforced_ones():
    text = (Path(__file__).resolve().parents[1] / "references" / "FORMAT.md").read_text()
    section = text.split("## Limits", 1)[1].split("\n## ", 1)[0]
    for value in (model.MAX_PAYLOAD_BYTES, model.MAX_FIELD_CHARS, model.MAX_LIST_ITEMS,
                  f"{model.MAX_DEPTH} levels", f"1-{model.MAX_ID_CHARS} characters"):
        assert str(value) in section, value
    assert model.ID_SHAPE.replace("1-96 characters of ", "") in section


def test_a_skill_folder_inside_git_is_refused(run, repo, store):
    seed(store)
    skill = repo / ".git" / "skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    code, _, err = run(["export-backport", "--skill-path", str(skill), "--ids", GOOD["id"],
                        "--apply"])
    assert code == 2 and err == (f"self_learning: error: export-backport: --skill-path {skill} "
                                 "is inside a .git folder; point it at a skill folder of the "
                                 "working tree\n")
    assert os.listdir(skill) == ["SKILL.md"]


def test_settings_and_rules_files_that_are_fifos_are_refused_at_once(run, repo, store):
    seed(store)
    (repo / ".claude").mkdir()
    settings_fifo = repo / ".claude" / "settings.json"
    os.mkfifo(settings_fifo)
    code, _, err = run(["install-hooks", "--agent", "claude"])
    assert code == 2 and err == (f"self_learning: error: {settings_fifo} is not a regular file; "
                                 "move it away first - nothing was written\n")
    os.mkfifo(repo / "AGENTS.md")
    code, _, err = run(["export-rules", "--agent", "agents-md"])
    assert code == 1 and err == (f"self_learning: error: export-rules: {repo / 'AGENTS.md'} is "
                                 "not a regular file; nothing was written\n")


# --- issue #25: damage that reached a traceback or served wrong data ---------------------------

def _raw_card(store: Path, **fields) -> None:
    jsonl.append(str(store / "aha_cards.jsonl"), [{**GOOD, "id": "aha_raw", "title": "Raw card",
                                                    **fields}])


def test_a_card_stamped_in_2200_leaves_advice_working_and_repair_says_so(run, store):
    run(["record"], json.dumps({"aha_cards": [{"id": "aha_fine", "title": "Fine lesson"}]}))
    _raw_card(store, ts="2200-01-01T00:00:00Z", last_seen="9999-12-31T23:59:59Z")
    code, out, err = run(["advice", "--format", "json"])
    assert code == 0 and "aha_fine" in out, err
    code, out, _ = run(["repair", "--format", "json"])
    fixes = {f["id"]: f["set"] for f in json.loads(out)["fixes"]}
    assert set(fixes["aha_raw"]) == {"ts", "last_seen"}
    assert run(["repair", "--apply"])[0] == 0 and json.loads(
        run(["repair", "--format", "json"])[1])["fixes"] == []


def test_a_lone_surrogate_is_refused_by_record_and_survived_by_readers(run, store):
    payload = '{"aha_cards": [{"title": "broken \\ud800 title"}]}'
    code, out, err = run(["record"], payload)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "lone surrogate" in err
    assert not (store / "aha_cards.jsonl").exists()
    run(["record"], json.dumps({"aha_cards": [{"id": "aha_fine", "title": "Fine lesson"}]}))
    with open(store / "aha_cards.jsonl", "a") as fh:  # a line written by hand or an old tool
        fh.write(json.dumps({**GOOD, "id": "aha_sur", "title": "x \ud800 y"}) + "\n")
    for args in (["list"], ["review"], ["advice"], ["index"], ["list", "--format", "json"]):
        code, out, err = run(args)
        assert code == 0, (args, err)
    from selflearn.storage import text
    assert text.terminal("a\ud800b") == "a\\ud800b" and "\ud800" not in text.escape_json("\ud800")


@pytest.mark.parametrize("limit", [str(10 ** 30), str(10 ** 400)])
def test_list_with_a_huge_limit_lists_everything(run, store, limit):
    run(["record"], json.dumps({"aha_cards": [{"title": "one lesson"}]}))
    code, out, err = run(["list", "--limit", limit])
    assert code == 0 and "one lesson" in out, err
    code, _, err = run(["list", "--limit", "-" + limit])
    assert code == 2 and err.startswith("self_learning: error: list: --limit must be a number")


def test_a_cards_file_rewritten_in_place_with_its_mtime_restored_is_read_again(run, store):
    run(["record"], json.dumps({"aha_cards": [{"id": "aha_same", "title": "Alpha lesson"}]}))
    assert "Alpha lesson" in run(["list"])[1]  # the index has read it
    path = store / "aha_cards.jsonl"
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Alpha lesson", b"Omega lesson"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p and rsync -t do
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert "Omega lesson" in run(["list"])[1]


def test_record_behind_another_writers_lock_waits_a_bounded_time(run, store, monkeypatch):
    import fcntl
    run(["record"], json.dumps({"aha_cards": [{"title": "first lesson"}]}))
    monkeypatch.setattr(jsonl, "LOCK_WAIT", 0.05)
    before = (store / "aha_cards.jsonl").read_bytes()
    with open(store / "aha_cards.jsonl", "ab") as holder:  # another open file: another lock
        fcntl.flock(holder, fcntl.LOCK_EX)
        code, out, err = run(["record"], json.dumps({"aha_cards": [{"title": "second"}]}))
    assert (code, out) == (1, "") and err.count("\n") == 1
    assert "is locked by another process for more than 0.05 s; nothing was written" in err
    assert (store / "aha_cards.jsonl").read_bytes() == before


def test_record_matches_and_appends_under_the_store_folders_lock(run, store, monkeypatch):
    """An agent's retry racing its first record must see the card it wrote: the dedup read
    and the append are one step under the folder's lock (round 3, damage3-25)."""
    import fcntl
    run(["record"], json.dumps({"aha_cards": [{"title": "first lesson"}]}))
    monkeypatch.setattr(jsonl, "LOCK_WAIT", 0.05)
    before = (store / "aha_cards.jsonl").read_bytes()
    holder = os.open(store, os.O_RDONLY)  # as mine, compact or another record holds it
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        code, out, err = run(["record"], json.dumps({"aha_cards": [{"title": "first lesson"}]}))
    finally:
        os.close(holder)
    assert (code, out) == (1, "") and "is locked by another process" in err
    assert (store / "aha_cards.jsonl").read_bytes() == before


def test_the_same_card_recorded_by_three_processes_at_once_is_stored_once(run, store):
    from conftest import SCRIPTS
    run(["record"], json.dumps({"aha_cards": [{"title": "keep"}]}))
    payload = json.dumps({"aha_cards": [{"title": "Same card at once", "solution_steps": ["make"]}]})
    procs = [subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "self_learning.py"), "record"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    assert all(p.communicate(payload)[0] for p in procs)
    ids = {json.loads(line)["id"] for line in (store / "aha_cards.jsonl").read_text().splitlines()
           if "Same card at once" in line}
    assert len(ids) == 1


@pytest.mark.parametrize("claim", ["human", "Human ", "lifecycle", "promote", "miner",
                                   "HU\u200bMAN", "\u0440erson"])  # zero width, Cyrillic р
def test_a_payload_never_claims_a_persons_use(run, store, claim):
    """Only a person's command and the tool's own steps write these sources."""
    run(["record"], json.dumps({"aha_cards": [{"id": "aha_u", "title": "a lesson"}]}))
    code, _, err = run(["record"], json.dumps({"used_aha_ids": ["aha_u"], "usage_source": claim}))
    assert code == 2 and "usage_source" in err and "nothing was written" in err
    signals = jsonl.read(str(store / "signals.jsonl"))[0] if (store / "signals.jsonl").exists() \
        else []
    assert not any(s.get("source") == claim for s in signals)
