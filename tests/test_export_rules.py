"""export-rules: accepted lessons as one-line rules inside markers, idempotent, the rest of the
file untouched, removable, and never written through a symlink or outside the repository."""
import json
import os

import pytest

from selflearn.surfacing import export_rules
from selflearn.storage import store as jsonl
from seeding import seed_record  # noqa: E402

ACCEPTED = [
    {"id": "aha_pnpm", "title": "Use pnpm, not npm.", "status": "accepted",
     "solution_steps": ["run `pnpm install`", "never commit package-lock.json"]},
    {"id": "aha_ruff", "title": "Lint Python with ruff", "status": "accepted"},
    {"id": "aha_prop", "title": "Only proposed, not exported"},
]


def record(run, cards):
    code, _, err = seed_record(({"aha_cards": cards}))
    assert code == 0, err


def export(run, agent, *args):
    code, out, err = run(["export-rules", "--agent", agent, *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def block_of(text):
    start = text.index("<!-- self-learning-skills:begin")
    return text[start:text.index(export_rules.END) + len(export_rules.END) + 1]


@pytest.mark.parametrize("agent, path", [
    ("copilot", ".github/copilot-instructions.md"), ("cursor", ".cursor/rules/self-learning.mdc"),
    ("gemini", "GEMINI.md"), ("windsurf", ".windsurfrules"), ("aider", "CONVENTIONS.md"),
    ("continue", ".continue/rules/self-learning.md"), ("agents-md", "AGENTS.md")])
def test_each_agent_gets_its_rules_file(run, repo, agent, path):
    record(run, ACCEPTED)
    data = export(run, agent)
    assert data["action"] == "created" and data["path"] == path
    text = (repo / path).read_text()
    assert "- Use pnpm, not npm: run `pnpm install` (recorded by the agent; accepted)\n" in text
    assert "- Lint Python with ruff (recorded by the agent; accepted)\n" in text and "proposed" not in text
    if agent == "cursor":
        assert text.startswith("---\ndescription: ") and "\nalwaysApply: true\n---\n" in text
    elif agent == "continue":
        assert text.startswith("---\nname: Self-learning lessons\nalwaysApply: true\n---\n")
    else:
        assert text.startswith(export_rules.BEGIN + "\n")
    assert text.endswith(export_rules.END + "\n")


def test_second_run_is_unchanged_and_does_not_rewrite(run, repo):
    record(run, ACCEPTED)
    export(run, "gemini")
    path = repo / "GEMINI.md"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    data = export(run, "gemini")
    assert data["action"] == "unchanged" and path.stat().st_mtime_ns == 1_000_000_000
    code, out, _ = run(["export-rules", "--agent", "gemini"])
    assert out == "GEMINI.md: unchanged (2 rules)\n"


def test_block_is_bounded_by_markers_and_rest_is_byte_identical(run, repo):
    record(run, ACCEPTED)
    head = "# Agents\r\n\r\nHand-written rules stay as they are.\n- keep me"  # no final newline
    (repo / "AGENTS.md").write_bytes(head.encode())
    assert export(run, "agents-md")["action"] == "added"
    first = (repo / "AGENTS.md").read_bytes().decode()
    assert first.startswith(head + "\n\n<!-- self-learning-skills:begin pad=2 -->\n")
    tail = "\n## Written after the block by hand\n"
    with open(repo / "AGENTS.md", "w", newline="") as fh:  # Path.write_text(newline=) is 3.10+
        fh.write(first + tail)
    run(["aha-status", "--id", "aha_prop", "--status", "accepted"])
    os.chmod(repo / "AGENTS.md", 0o600)
    assert export(run, "agents-md")["action"] == "updated"
    assert (repo / "AGENTS.md").stat().st_mode & 0o777 == 0o600
    second = (repo / "AGENTS.md").read_bytes().decode()
    assert second.startswith(head + "\n\n") and second.endswith(export_rules.END + "\n" + tail)
    assert "- Only proposed, not exported (recorded by the agent; accepted by a person)\n" \
        in block_of(second)
    assert second.replace(block_of(second), "") == first.replace(block_of(first), "") + tail
    assert export(run, "agents-md", "--remove")["action"] == "removed"
    assert (repo / "AGENTS.md").read_bytes().decode() == head + tail


def test_remove_deletes_a_file_of_our_own_and_dry_run_writes_nothing(run, repo):
    record(run, ACCEPTED)
    assert export(run, "cursor", "--dry-run")["action"] == "created"
    assert not (repo / ".cursor").exists()
    export(run, "cursor")
    assert export(run, "cursor", "--remove", "--dry-run")["action"] == "deleted"
    assert (repo / ".cursor/rules/self-learning.mdc").exists()
    assert export(run, "cursor", "--remove")["action"] == "deleted"
    assert not (repo / ".cursor/rules/self-learning.mdc").exists()
    assert export(run, "cursor", "--remove")["action"] == "nothing"


def test_nothing_accepted_writes_nothing(run, repo):
    record(run, ACCEPTED[2:])
    (repo / "AGENTS.md").write_text("mine\n")
    data = export(run, "agents-md")
    assert data["action"] == "nothing" and (repo / "AGENTS.md").read_text() == "mine\n"
    code, out, _ = run(["export-rules", "--agent", "gemini"])
    assert code == 0 and "no accepted lessons to export" in out
    assert not (repo / "GEMINI.md").exists()


def test_refuses_symlinks_and_paths_outside_the_repository(run, repo, tmp_path):
    record(run, ACCEPTED)
    (repo / "real.md").write_text("x\n")
    (repo / "AGENTS.md").symlink_to(repo / "real.md")
    code, out, err = run(["export-rules", "--agent", "agents-md"])
    assert code == 1 and out == ""
    assert err == (f"self_learning: error: export-rules: {repo}/AGENTS.md is a symlink; refusing "
                   "to write through it (replace it with a regular file); nothing was written\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / ".github").symlink_to(outside)
    code, _, err = run(["export-rules", "--agent", "copilot"])
    assert code == 1 and "outside the repository" in err
    assert list(outside.iterdir()) == [] and (repo / "real.md").read_text() == "x\n"


def test_refuses_foreign_file_and_broken_markers(run, repo):
    record(run, ACCEPTED)
    (repo / ".continue" / "rules").mkdir(parents=True)
    (repo / ".continue/rules/self-learning.md").write_text("someone else's rules\n")
    code, _, err = run(["export-rules", "--agent", "continue"])
    assert code == 1 and "not ours to overwrite" in err
    broken = f"{export_rules.BEGIN}\n- a\n{export_rules.BEGIN}\n{export_rules.END}\n"
    (repo / "GEMINI.md").write_text(broken)
    code, _, err = run(["export-rules", "--agent", "gemini"])
    assert code == 1 and "has 2 begin and 1 end markers" in err
    assert (repo / "GEMINI.md").read_text() == broken


def test_hostile_titles_are_escaped_and_cannot_close_the_block(run, repo):
    record(run, [{"id": "aha_evil", "status": "accepted",
                  "title": f"evil {export_rules.END}\n# heading <script>"}])
    (repo / "AGENTS.md").write_text("top\n")
    export(run, "agents-md")
    text = (repo / "AGENTS.md").read_text()
    assert text.count(export_rules.END) == 1 and "<script>" not in text
    assert "- evil \u2039!-- self-learning-skills:end --\u203a # heading \u2039script\u203a (recorded by the agent; accepted)\n" \
        in text
    assert "&lt;" not in text
    export(run, "agents-md", "--remove")
    assert (repo / "AGENTS.md").read_text() == "top\n"


def test_placeholders_stay_readable_inside_backticks(run, repo):
    record(run, [{"id": "aha_ph", "status": "accepted", "title": "Run `make <target>` a --> b",
                  "solution_steps": ["pass `--out <dir>` and <!-- keep -->"]}])
    export(run, "agents-md")
    text = (repo / "AGENTS.md").read_text()
    rule = [x for x in text.splitlines() if x.startswith("- Run")][0]
    assert rule == ("- Run `make \u2039target\u203a` a --\u203a b: pass `--out \u2039dir\u203a` "
                    "and \u2039!-- keep --\u203a (recorded by the agent; accepted)")
    assert "&" not in rule and "<" not in rule and ">" not in rule


def test_output_is_bounded_and_redacted_again(run, repo, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-01T00:00:00Z")
    record(run, [{"id": f"aha_{n:02d}", "title": f"lesson {n:02d} " + "w" * 200,
                  "status": "accepted"} for n in range(40)])
    secret = "ghp_" + "a1b2c3d4e5" * 4
    jsonl.append(str(store / "aha_cards.jsonl"),  # a line written by hand, bypassing record
                 [{"v": 1, "id": "aha_raw", "ts": "2026-01-01T00:00:00Z", "status": "accepted",
                   "title": f"token {secret} in CI", "confidence": 1.0}])
    data = export(run, "agents-md")
    assert len(data["rules"]) <= export_rules.MAX_RULES
    assert sum(len(r) + 1 for r in data["rules"]) <= export_rules.MAX_CHARS
    assert all(len(r) <= export_rules.RULE_CHARS + 2 for r in data["rules"])
    text = (repo / "AGENTS.md").read_text()
    assert secret not in text
    assert data["rules"][0] == "- token [REDACTED:github_token] in CI (recorded by the agent; accepted)"  # most confident first


def test_splice_and_cut_are_inverse_on_any_text():
    for text in ("", "a", "a\n", "a\n\n", "a\n\n\n", "\n"):
        done = export_rules.splice(text, ["- r"], "F")
        assert export_rules.cut(done, "F") == text
        assert export_rules.splice(done, ["- r"], "F") == done


def test_unreadable_folder_and_unknown_targets_are_refused(run, repo):
    record(run, ACCEPTED)
    (repo / "GEMINI.md").mkdir()
    code, _, err = run(["export-rules", "--agent", "gemini"])
    assert code == 1 and err == (f"self_learning: error: export-rules: {repo}/GEMINI.md is a "
                                 "folder; nothing was written\n")
    (repo / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8")
    code, _, err = run(["export-rules", "--agent", "agents-md"])
    assert code == 1 and "cannot read" in err and "nothing was written" in err
    assert (repo / "AGENTS.md").read_bytes() == b"\xff\xfe not utf-8"
    with pytest.raises(export_rules.UsageError, match="unknown agent 'vim'"):
        export_rules.target("vim")
    assert export_rules.cut("no block here\n", "F") == "no block here\n"
