"""export-backport, backport-inspect, backport-remove: bundles, git patches, markers, escaping, safety."""
import json
import os
import re
import shlex
import subprocess

import pytest

from selflearn.graduation import backport, skillblocks
from selflearn.cli import parser as cli
from selflearn.storage import store as jsonl
from seeding import seed_record  # noqa: E402

SKILL_TEXT = b"---\nname: demo-skill\ndescription: a demo\n---\n# Demo\n\nDo the thing.\n"
REF = os.path.join("references", "self-learning-aha.md")


def card(cid, **kw):
    base = {"id": cid, "title": f"Lesson {cid}", "when_to_use": "when testing",
            "solution_steps": ["step one"], "scope": "portable"}
    base.update(kw)
    return base


@pytest.fixture
def seed(run):
    def _seed(*cards):
        code, _, err = seed_record(({"aha_cards": list(cards)}))
        assert code == 0, err
    return _seed


@pytest.fixture
def skill(tmp_path):
    """A skill folder holding only SKILL.md (not in a git repo)."""
    path = tmp_path / "skill"
    path.mkdir()
    (path / "SKILL.md").write_bytes(SKILL_TEXT)
    return path


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=str(cwd), capture_output=True, text=True)


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".git" not in p.parts
            and not p.name.startswith("index.sqlite3")}  # the derived index is a cache


def export(run, skill_path, ids, *flags):
    code, out, err = run(["export-backport", "--skill-path", str(skill_path), "--ids", ids,
                          "--format", "json", *flags])
    return code, (json.loads(out) if code == 0 else None), err


def lines(path):
    return jsonl.read(str(path))[0] if path.exists() else []


# --- bundle and dry run ----------------------------------------------------------------------

def test_dry_run_writes_bundle_and_provenance_but_not_the_skill(run, seed, skill, store):
    seed(card("aha_one"), card("aha_two"))
    before = snapshot(skill)
    code, data, err = export(run, skill, "aha_one,aha_two")
    assert code == 0, err
    assert snapshot(skill) == before
    bid = data["backport_id"]
    assert re.fullmatch(r"slbp_\d{8}T\d{6}Z_[0-9a-f]{6}", bid)
    bundle = store / "exports" / "backports" / f"demo-skill_{bid}"
    assert data["bundle_dir"] == str(bundle)
    assert sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()) == [
        "README.md", "manifest.json", "proposed/SKILL.md", f"proposed/{REF}"]
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["added_card_ids"] == ["aha_one", "aha_two"] and manifest["applied"] is False
    assert {(f["path"], f["change"]) for f in manifest["files"]} == {
        ("SKILL.md", "modified"), ("references/self-learning-aha.md", "created")}
    assert {(m["marker"], m["id"], m["action"]) for m in manifest["markers"]} >= {
        ("self-learning:backport", bid, "added"), ("self-learning:aha", "aha_one", "added")}
    proposed_skill = (bundle / "proposed" / "SKILL.md").read_bytes()
    assert proposed_skill.startswith(SKILL_TEXT)
    assert f"<!-- self-learning:backport:start id={bid} pad=1 -->".encode() in proposed_skill
    ref = (bundle / "proposed" / REF).read_text()
    assert f"<!-- self-learning:aha:start id=aha_one backport={bid} sha=" in ref
    readme = (bundle / "README.md").read_text()
    assert "--apply" in readme and f"backport-remove --skill-path {skill} --backport-id {bid}" in readme
    (record,) = lines(store / "backports.jsonl")
    assert record == {"v": 1, "id": bid, "ts": record["ts"], "backport_id": bid,
                      "target_skill": "demo-skill", "target_skill_path": str(skill),
                      "requested_card_ids": ["aha_one", "aha_two"],
                      "added_card_ids": ["aha_one", "aha_two"], "updated_card_ids": [],
                      "unchanged_card_ids": [], "result_card_ids": ["aha_one", "aha_two"],
                      "applied": False, "bundle_dir": str(bundle)}
    assert [c["status"] for c in jsonl.fold(lines(store / "aha_cards.jsonl")).values()] == \
        ["proposed", "proposed"]


def test_dry_run_text_says_what_would_change(run, seed, skill):
    seed(card("aha_one"))
    code, out, _ = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_one"])
    assert code == 0
    assert "dry run, nothing there was changed" in out
    assert "  would add aha_one\n" in out and "references/self-learning-aha.md: would be created" in out
    assert out.rstrip().endswith("to write it: run the same command with --apply")


# --- git apply --------------------------------------------------------------------------------

@pytest.mark.parametrize("where", [".", "tools/skills/demo"])
def test_patch_applies_with_git_in_the_target_repo(run, seed, tmp_path, where):
    repo = tmp_path / "target"
    folder = repo / where
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(SKILL_TEXT.rstrip(b"\n"))  # no final newline on purpose
    assert git(repo, "init", "-q").returncode == 0
    git(repo, "add", "-A")
    assert git(repo, "commit", "-qm", "init").returncode == 0
    seed(card("aha_one"), card("aha_two", gotchas=["a trap"]))
    code, data, err = export(run, folder, "aha_one,aha_two", "--make-diff")
    assert code == 0, err
    assert data["patch"] == os.path.join(data["bundle_dir"], "backport.patch")
    prefix = "" if where == "." else where + "/"
    assert f"+++ b/{prefix}SKILL.md" in open(data["patch"]).read()
    check = git(repo, "apply", "--check", data["patch"])
    assert check.returncode == 0, check.stderr
    assert git(repo, "apply", data["patch"]).returncode == 0
    proposed = os.path.join(data["bundle_dir"], "proposed")
    assert (folder / "SKILL.md").read_bytes() == open(os.path.join(proposed, "SKILL.md"), "rb").read()
    assert (folder / REF).read_bytes() == open(os.path.join(proposed, REF), "rb").read()
    code, again, _ = export(run, folder, "aha_one,aha_two", "--make-diff")
    assert again["unchanged_card_ids"] == ["aha_one", "aha_two"] and again["patch"] is None


# --- apply, idempotence, in-place update ------------------------------------------------------

def test_apply_backs_up_marks_cards_and_a_second_run_changes_nothing(run, seed, skill, store):
    (skill / "references").mkdir()
    (skill / REF).write_bytes(b"# Notes kept by hand\n")
    seed(card("aha_one"))
    code, data, err = export(run, skill, "aha_one", "--apply")
    assert code == 0, err
    bundle = data["bundle_dir"]
    assert open(os.path.join(bundle, "backup", "SKILL.md"), "rb").read() == SKILL_TEXT
    assert open(os.path.join(bundle, "backup", REF), "rb").read() == b"# Notes kept by hand\n"
    assert (skill / REF).read_bytes().startswith(b"# Notes kept by hand\n\n<!-- self-learning:")
    assert jsonl.fold(lines(store / "aha_cards.jsonl"))["aha_one"]["status"] == "backported"
    signals = [(s["kind"], s["aha_id"], s["source"]) for s in lines(store / "signals.jsonl")]
    assert signals == [("aha_backported", "aha_one", "backport")]
    files, cards_before = snapshot(skill), len(lines(store / "aha_cards.jsonl"))
    code, again, _ = export(run, skill, "aha_one", "--apply", "--make-diff")
    assert (again["added_card_ids"], again["updated_card_ids"], again["unchanged_card_ids"]) == \
        ([], [], ["aha_one"])
    assert snapshot(skill) == files
    assert len(lines(store / "aha_cards.jsonl")) == cards_before
    assert len(lines(store / "signals.jsonl")) == 1
    assert not os.path.exists(os.path.join(again["bundle_dir"], "backport.patch"))
    assert not os.path.exists(os.path.join(again["bundle_dir"], "backup"))
    assert [r["applied"] for r in lines(store / "backports.jsonl")] == [True, True]


def test_edited_card_updates_its_block_in_place(run, seed, skill):
    seed(card("aha_one"), card("aha_two"))
    _, first, _ = export(run, skill, "aha_one,aha_two", "--apply")
    text = (skill / REF).read_text()
    one = text[text.index("<!-- self-learning:aha:start id=aha_one"):
               text.index("<!-- self-learning:aha:start id=aha_two")]
    seed({"id": "aha_two", "title": "Lesson two, sharper", "solution_steps": ["step two"]})
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill), "--format", "json"])
    states = {b["aha_id"]: (b["state"], b["reasons"]) for b in json.loads(out)["blocks"]}
    assert states == {"aha_one": ("current", []),
                      "aha_two": ("drifted", ["card changed since export"])}
    code, second, _ = export(run, skill, "aha_one,aha_two", "--apply")
    assert (second["updated_card_ids"], second["unchanged_card_ids"]) == (["aha_two"], ["aha_one"])
    new = (skill / REF).read_text()
    assert new.count("self-learning:aha:start") == 2 and one in new
    assert new.startswith(text[:text.index("<!-- self-learning:aha:start id=aha_two")])
    assert "### Lesson two, sharper" in new and "Lesson aha_two" not in new
    assert f"id=aha_two backport={second['backport_id']}" in new
    assert (skill / "SKILL.md").read_text().count("self-learning:backport:start") == 1
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill)])
    assert f"aha_two  current  from {second['backport_id']}" in out
    assert f"aha_one  current  from {first['backport_id']}" in out


def test_inspect_reports_hand_edits_and_unknown_cards(run, seed, skill, monkeypatch):
    seed(card("aha_one"), card("aha_two"))
    _, data, _ = export(run, skill, "aha_one,aha_two", "--apply")
    ref = skill / REF
    ref.write_text(ref.read_text().replace("- **When to use:** when testing", "- edited", 1))
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill), "--format", "json"])
    report = json.loads(out)
    assert report["pointer"]["id"] == data["backport_id"]
    assert [(b["aha_id"], b["state"], b["reasons"]) for b in report["blocks"]] == [
        ("aha_one", "drifted", ["block edited by hand"]), ("aha_two", "current", [])]
    assert report["counts"] == {"current": 1, "drifted": 1, "unknown": 0}
    assert report["blocks"][1]["backport"]["applied"] is True
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill), "--aha-id", "aha_two",
                        "--user", "someone-else", "--format", "json"])
    (only,) = json.loads(out)["blocks"]
    assert (only["aha_id"], only["state"], only["reasons"]) == \
        ("aha_two", "unknown", ["card not in the store"])
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill), "--backport-id", "slbp_x",
                        "--format", "json"])
    assert json.loads(out)["blocks"] == []


# --- escaping ----------------------------------------------------------------------------------

HOSTILE = card(
    "aha_evil", title="# Title <!-- self-learning:aha:end --> <b>bold</b>",
    when_to_use="---", problem="===\n# injected heading\n<!-- self-learning:aha:start id=x -->",
    solution_steps=["```sh", "<script>alert(1)</script>", "1. nested list", "~~~",
                    "-->", "[ref]: http://example.com"],
    gotchas=["> quote", "| a | b |"], evidence=["<!--"], links=["## two"])


def test_hostile_card_text_cannot_form_markers_headings_html_or_fences(run, seed, skill):
    seed(HOSTILE, card("aha_ok"))
    code, data, err = export(run, skill, "aha_evil,aha_ok", "--apply")
    assert code == 0, err
    text = (skill / REF).read_text()
    markers = [line for line in text.splitlines() if line.startswith("<!--")]
    assert len(markers) == 6 and all(skillblocks.MARKER.match(m) for m in markers)
    body = text[text.index("id=aha_evil"):text.index("<!-- self-learning:aha:start id=aha_ok")]
    body = body.split("\n", 1)[1].rsplit("<!-- self-learning:aha:end -->", 1)[0]
    assert "<" not in body and ">" not in body
    headings = [line for line in body.splitlines() if line.startswith(("#", "=", "-", "`", "~"))
                and not line.startswith("- **")]
    assert headings == ["### \\# Title \u2039!-- self-learning:aha:end --\u203a \u2039b\u203abold"
                        "\u2039/b\u203a"]
    for line in body.splitlines():
        content = re.sub(r"^(?:### |- \*\*[A-Za-z ]+:\*\* ?|  \d+\. |  - )", "", line)
        assert not re.match(r"[#=`~>|\[-]|\d+[.)]|<", content), line
    assert "\n\n# " not in body and "injected heading" in body
    code, out, _ = run(["backport-inspect", "--skill-path", str(skill), "--format", "json"])
    assert [b["state"] for b in json.loads(out)["blocks"]] == ["current", "current"]


@pytest.mark.parametrize("raw, expected", [
    ("<!-- x -->", "\u2039!-- x --\u203a"), ("# h", "\\# h"), ("---", "\\---"), ("===", "\\==="),
    ("```py", "\\```py"), ("12. item", "12\\. item"), ("a\n# b", "a # b"),
    ("<div>", "\u2039div\u203a"), ("plain text", "plain text"), ("+ x", "\\+ x"),
    ("a < b", "a &lt; b"), ("![b](https://t.example/p.png)", "! [b](https://t.example/p.png)"),
    ("[x](javascript:alert(1))", "\\[x](javascript\ua789alert(1))"),
])
def test_escape(raw, expected):
    assert skillblocks.escape(raw) == expected


# --- refusals ------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra, why", [
    ({"shareable": False}, "is not shareable (shareable: false)"),
    ({"status": "rejected"}, "is rejected"),
    ({"status": "deprecated"}, "is deprecated"),
    ({"status": "retired"}, "is retired"),
])
def test_refused_cards_write_nothing_unless_forced(run, seed, skill, store, extra, why):
    seed(card("aha_bad", **extra))
    before = snapshot(store)
    code, out, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_bad",
                          "--apply"])
    assert (code, out) == (2, "")
    assert err == (f"self_learning: error: export-backport: card aha_bad {why}; use --force to "
                   "export it anyway\nself_learning: error: export-backport: nothing was written\n")
    assert snapshot(store) == before and snapshot(skill) == {"SKILL.md": SKILL_TEXT}
    code, data, err = export(run, skill, "aha_bad", "--force")
    assert code == 0
    assert f"self_learning: warning: export-backport: card aha_bad {why}; exported because of " \
           "--force\n" in err


@pytest.mark.parametrize("args, message", [
    (["--ids", "aha_nope"], "export-backport: unknown card id 'aha_nope' (see `list`)\n"
                            "self_learning: error: export-backport: nothing was written"),
    (["--ids", ","], "export-backport: give card ids with --ids a,b (see `list`)"),
])
def test_bad_ids(run, seed, skill, args, message):
    seed(card("aha_one"))
    code, _, err = run(["export-backport", "--skill-path", str(skill), *args])
    assert code == 2
    assert err == f"self_learning: error: {message}\n"


def test_id_that_cannot_go_into_a_marker_never_reaches_a_skill(run, seed, skill, store):
    code, _, err = run(["record"], json.dumps({"aha_cards": [card("aha one")]}))
    assert code == 2 and "aha_cards[0].id: id 'aha one' is outside the id shape" in err
    seed(card("aha_ok"))
    with open(store / "aha_cards.jsonl", "a") as fh:  # written by hand: skipped on read
        fh.write(json.dumps(card("aha one")) + "\n")
    code, _, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha one", "--force"])
    assert code == 2 and "unknown card id 'aha one'" in err
    assert "aha_cards.jsonl:2: field id 'aha one' is outside the id shape" in err


def test_project_scope_card_is_exported_with_a_warning(run, seed, skill):
    seed(card("aha_local", scope="project"))
    code, data, err = export(run, skill, "aha_local")
    assert code == 0 and data["added_card_ids"] == ["aha_local"]
    assert err == ("self_learning: warning: export-backport: card aha_local has scope project "
                   "(meant for this repo); exported anyway; re-record it with \"scope\": "
                   "\"portable\" if it holds elsewhere\n")


def test_skill_path_must_hold_skill_md(run, seed, tmp_path):
    seed(card("aha_one"))
    code, _, err = run(["export-backport", "--skill-path", str(tmp_path), "--ids", "aha_one"])
    assert code == 2
    assert err == (f"self_learning: error: export-backport: {tmp_path} has no SKILL.md; point "
                   "--skill-path at a skill folder (the one holding SKILL.md)\n")
    code, _, err = run(["backport-inspect", "--skill-path", str(tmp_path / "nope")])
    assert code == 2
    assert err == (f"self_learning: error: backport-inspect: --skill-path {tmp_path / 'nope'} is "
                   "not a directory; point it at a skill folder (the one holding SKILL.md)\n")


@pytest.mark.parametrize("layout", ["references-dir", "reference-file", "skill-md", "dotdot"])
def test_links_leading_outside_the_skill_are_refused(run, seed, tmp_path, store, layout):
    seed(card("aha_one"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_bytes(b"outside\n")
    (outside / "self-learning-aha.md").write_bytes(b"outside\n")
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "references").mkdir()
    if layout == "skill-md":
        (skill / "SKILL.md").symlink_to(outside / "SKILL.md")
        link = skill / "SKILL.md"
    else:
        (skill / "SKILL.md").write_bytes(SKILL_TEXT)
    if layout == "references-dir":
        (skill / "references").rmdir()
        (skill / "references").symlink_to(outside)
        link = skill / "references"
    elif layout == "reference-file":
        link = skill / REF
        link.symlink_to(outside / "self-learning-aha.md")
    elif layout == "dotdot":
        (skill / "references").rmdir()
        os.symlink("../outside", str(skill / "references"))
        link = skill / "references"
    outside_before = snapshot(outside)
    code, out, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_one",
                          "--apply"])
    assert code == 2 and out == ""
    assert err == (f"self_learning: error: export-backport: {link} leads to "
                   f"{os.path.realpath(link)}, outside the skill folder {skill}; refusing to "
                   f"touch it (replace the link with a real "
                   f"{'folder' if layout in ('references-dir', 'dotdot') else 'file'})\n")
    assert snapshot(outside) == outside_before
    assert not (store / "backports.jsonl").exists()


def test_links_inside_the_skill_are_followed(run, seed, skill):
    (skill / "docs").mkdir()
    os.symlink("docs", str(skill / "references"))
    seed(card("aha_one"))
    code, data, err = export(run, skill, "aha_one", "--apply")
    assert code == 0, err
    assert (skill / "references").is_symlink()
    assert "aha_one" in (skill / "docs" / "self-learning-aha.md").read_text()


def test_skill_path_with_dotdot_inside_is_fine(run, seed, skill):
    seed(card("aha_one"))
    code, data, _ = export(run, skill / ".." / "skill", "aha_one")
    assert code == 0 and data["target_skill_path"] == str(skill)


def test_broken_markers_are_a_runtime_error(run, seed, skill):
    (skill / "references").mkdir()
    (skill / REF).write_text("<!-- self-learning:aha:start id=aha_x backport=b sha=s -->\nno end\n")
    seed(card("aha_one"))
    code, _, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_one"])
    assert code == 1
    assert err == (f"self_learning: error: {skill / REF}:1: "
                   "self-learning:aha:start has no end marker; fix the markers by hand (backups "
                   "sit in the export bundles), then run it again\n")
    (skill / REF).write_text("text\n<!-- self-learning:aha:end -->\n")
    code, _, err = run(["backport-inspect", "--skill-path", str(skill)])
    assert (code, err) == (1, f"self_learning: error: {skill / REF}:2: unexpected "
                              "self-learning:aha:end marker; fix the markers by hand (backups sit "
                              "in the export bundles), then run it again\n")


# --- remove ----------------------------------------------------------------------------------------

def test_remove_leaves_every_other_byte_as_it_was(run, seed, skill):
    skill_bytes = b"---\nname: demo-skill\n---\r\n# Demo\r\n\r\nno final newline"
    ref_bytes = b"# My own notes\n\nKeep me.\n\n\n"
    (skill / "SKILL.md").write_bytes(skill_bytes)
    (skill / "references").mkdir()
    (skill / REF).write_bytes(ref_bytes)
    seed(card("aha_one"), card("aha_two"), card("aha_three"))
    _, first, _ = export(run, skill, "aha_one,aha_two", "--apply")
    _, second, _ = export(run, skill, "aha_three", "--apply")
    with open(skill / "SKILL.md", "ab") as fh:
        fh.write(b"\nA line the user added later.\n")
    skill_bytes += b"\nA line the user added later.\n"  # expected to survive as well
    dry = snapshot(skill)
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_two"])
    assert code == 0 and out.startswith("would remove aha_two (from ")
    assert snapshot(skill) == dry
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_two",
                        "--apply", "--format", "json"])
    data = json.loads(out)
    assert data["remaining_card_ids"] == ["aha_one", "aha_three"]
    assert open(os.path.join(data["backup_dir"], REF), "rb").read() == dry[REF]
    before = dry[REF].decode()
    two = before[before.index("<!-- self-learning:aha:start id=aha_two"):
                 before.index("<!-- self-learning:aha:start id=aha_three")]
    assert (skill / REF).read_text() == before.replace(two, "")
    assert (skill / "SKILL.md").read_bytes() == dry["SKILL.md"]
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--backport-id",
                        first["backport_id"], "--apply"])
    assert code == 0 and "removed aha_one" in out
    assert "SKILL.md" not in out  # aha_three is still there, so the pointer stays
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--backport-id",
                        second["backport_id"], "--apply"])
    assert "  SKILL.md: modified" in out
    assert (skill / REF).read_bytes() == ref_bytes
    assert (skill / "SKILL.md").read_bytes() == skill_bytes


def test_remove_all_restores_original_files_byte_for_byte(run, seed, skill):
    skill_bytes = b"# Demo\r\n\r\nno final newline"
    (skill / "SKILL.md").write_bytes(skill_bytes)
    (skill / "references").mkdir()
    (skill / "references" / "other.md").write_bytes(b"other\n")
    (skill / REF).write_bytes(b"# Mine\n")
    seed(card("aha_one"), card("aha_two"))
    _, data, _ = export(run, skill, "aha_one,aha_two", "--apply")
    assert (skill / "SKILL.md").read_bytes() != skill_bytes
    code, out, err = run(["backport-remove", "--skill-path", str(skill), "--backport-id",
                          data["backport_id"], "--apply"])
    assert code == 0, err
    assert snapshot(skill) == {"SKILL.md": skill_bytes, "references/other.md": b"other\n",
                               REF: b"# Mine\n"}


def test_remove_deletes_the_reference_file_it_created(run, seed, skill):
    seed(card("aha_one"))
    export(run, skill, "aha_one", "--apply")
    assert (skill / REF).exists()
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_one",
                        "--apply"])
    assert code == 0 and "references/self-learning-aha.md: deleted" in out
    assert snapshot(skill) == {"SKILL.md": SKILL_TEXT}
    assert not (skill / "references").exists()


def test_remove_with_nothing_matching_says_so(run, seed, skill):
    seed(card("aha_one"))
    export(run, skill, "aha_one", "--apply")
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_zzz",
                        "--apply"])
    assert code == 0
    assert out == (f"nothing to remove in {skill}: no card block matches (blocks there: aha_one; "
                   "see `backport-inspect`)\n")


def test_remove_needs_one_selector(run, skill):
    code, _, err = run(["backport-remove", "--skill-path", str(skill)])
    assert code == 2
    assert err == ("self_learning: error: one of the arguments --backport-id --aha-id is "
                   "required (see `self_learning backport-remove --help`)\n")
    with pytest.raises(Exception) as info:
        backport.remove(None, str(skill))
    assert str(info.value) == ("backport-remove: give exactly one of --backport-id or --aha-id "
                               "(see `backport-inspect`)")


# --- help examples ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["export-backport", "backport-inspect", "backport-remove",
                                     "promote"])
def test_help_examples_run(run, seed, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-skill").mkdir()
    (tmp_path / "my-skill" / "SKILL.md").write_bytes(SKILL_TEXT)
    seed(card("aha_example"))
    run(["record"], json.dumps({"recommendations": [{"id": "rec_example", "title": "r"}]}))
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    examples = [line.split("$ ", 1)[1] for line in sub.epilog.splitlines() if "$ " in line]
    assert examples
    for example in examples:
        argv = shlex.split(example)
        assert argv[:2] == ["python3", "scripts/self_learning.py"]
        code, _, err = run(argv[2:])
        assert code == 0, (example, err)


# --- edge cases ------------------------------------------------------------------------------------

def test_blocks_at_a_file_end_without_newline_keep_their_padding(run, seed, skill):
    seed(card("aha_one"), card("aha_two"))
    export(run, skill, "aha_one", "--apply")
    hand = (skill / REF).read_bytes().rstrip(b"\n")  # someone dropped the final newline
    (skill / REF).write_bytes(hand)
    code, data, _ = export(run, skill, "aha_two", "--apply")
    text = (skill / REF).read_text()
    assert f"id=aha_two backport={data['backport_id']} sha=" in text and " pad=2 -->" in text
    seed({"id": "aha_two", "title": "Lesson two, edited"})
    code, data, _ = export(run, skill, "aha_two", "--apply")
    assert data["updated_card_ids"] == ["aha_two"] and " pad=2 -->" in (skill / REF).read_text()
    run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_two", "--apply"])
    assert (skill / REF).read_bytes() == hand


def test_hand_edited_block_is_replaced_with_a_warning(run, seed, skill):
    seed(card("aha_one"))
    _, first, _ = export(run, skill, "aha_one", "--apply")
    edited = (skill / REF).read_text().replace("step one", "my own step")
    (skill / REF).write_text(edited)
    code, data, err = export(run, skill, "aha_one", "--apply")
    assert data["updated_card_ids"] == ["aha_one"]
    assert err == ("self_learning: warning: export-backport: the block of aha_one in "
                   "references/self-learning-aha.md was edited by hand; the export replaces it "
                   "(the old file goes to the bundle's backup/ with --apply)\n")
    assert open(os.path.join(data["bundle_dir"], "backup", REF)).read() == edited
    assert "my own step" not in (skill / REF).read_text()


def test_references_that_is_a_file_is_refused(run, seed, skill):
    (skill / "references").write_text("not a folder")
    seed(card("aha_one"))
    code, _, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_one"])
    assert (code, err) == (2, f"self_learning: error: export-backport: {skill / 'references'} is "
                              "not a folder; move it aside and run it again\n")


def test_skill_name_falls_back_to_the_folder_name(run, seed, skill):
    (skill / "SKILL.md").write_text("---\ndescription: no name here\n---\n# Skill\n")
    seed(card("aha_one"))
    assert export(run, skill, "aha_one")[1]["target_skill"] == "skill"
    (skill / "SKILL.md").write_text("# No front matter\n")
    assert export(run, skill, "aha_one")[1]["target_skill"] == "skill"


def test_read_and_write_failures_are_one_line(run, seed, skill, tmp_path, monkeypatch):
    with pytest.raises(skillblocks.SelfLearningError) as info:
        skillblocks.read_text(str(tmp_path), "backport-inspect")
    assert str(info.value) == f"backport-inspect: cannot read {tmp_path}: Is a directory"
    seed(card("aha_one"))

    def refuse(path, text):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(backport, "write_text", refuse)
    code, _, err = run(["export-backport", "--skill-path", str(skill), "--ids", "aha_one", "--apply"])
    assert code == 1
    assert re.fullmatch(r"self_learning: error: export-backport: cannot write \S+: Permission "
                        r"denied; originals are in \S+/backup\n", err)


def test_remove_gives_the_card_back_its_status_before_the_backport(run, seed, skill, store,
                                                                   tmp_path):
    seed(card("aha_one"), card("aha_two"))
    assert run(["aha-status", "--id", "aha_two", "--status", "rejected"])[0] == 0
    other = tmp_path / "other-skill"
    other.mkdir()
    (other / "SKILL.md").write_bytes(SKILL_TEXT)
    export(run, skill, "aha_one,aha_two", "--apply", "--force")
    export(run, other, "aha_one", "--apply")
    status = lambda cid: jsonl.fold(lines(store / "aha_cards.jsonl"))[cid]["status"]  # noqa: E731
    assert (status("aha_one"), status("aha_two")) == ("backported", "backported")
    versions = len(lines(store / "aha_cards.jsonl"))
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_two"])
    assert "  card aha_two: would be rejected (no longer backported)\n" in out
    assert len(lines(store / "aha_cards.jsonl")) == versions  # a dry run writes nothing
    code, out, err = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_two",
                          "--apply"])
    assert code == 0, err
    assert "  card aha_two: now rejected (no longer backported)\n" in out
    assert status("aha_two") == "rejected"
    # aha_one leaves this skill but the other one still holds it: it stays backported
    code, out, _ = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_one",
                        "--apply", "--format", "json"])
    assert json.loads(out)["status_changes"] == [] and status("aha_one") == "backported"
    code, out, _ = run(["backport-remove", "--skill-path", str(other), "--aha-id", "aha_one",
                        "--apply", "--format", "json"])
    assert json.loads(out)["status_changes"] == [
        {"aha_id": "aha_one", "from": "backported", "to": "proposed"}]
    assert status("aha_one") == "proposed"
    history = [c["status"] for c in lines(store / "aha_cards.jsonl") if c["id"] == "aha_one"]
    assert history == ["proposed", "backported", "proposed"]  # appended, never rewritten
    kinds = [(s["kind"], s["aha_id"], s["context"].split(":")[0])
             for s in lines(store / "signals.jsonl") if s["kind"] == "aha_status"]
    assert kinds[-2:] == [("aha_status", "aha_two", "backported -> rejected"),
                          ("aha_status", "aha_one", "backported -> proposed")]


def test_remove_that_cannot_write_the_skill_keeps_the_card_backported(run, seed, skill, store,
                                                                      monkeypatch):
    seed(card("aha_one"))
    export(run, skill, "aha_one", "--apply")
    before = snapshot(skill)

    def refuse(path, text):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(backport, "write_text", refuse)
    code, out, err = run(["backport-remove", "--skill-path", str(skill), "--aha-id", "aha_one",
                          "--apply"])
    assert (code, out) == (1, "")
    assert re.fullmatch(r"self_learning: error: backport-remove: cannot write \S+/SKILL.md: "
                        r"Permission denied; the files as they were are in \S+/backup\n", err)
    assert snapshot(skill) == before
    assert jsonl.fold(lines(store / "aha_cards.jsonl"))["aha_one"]["status"] == "backported"
