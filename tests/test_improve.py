"""improve: guarded edits of guidance files, refusals, backups, the change log, duplicate scan."""
import json
import os
import stat

import pytest

from selflearn.graduation import guidance, improve
from selflearn.storage import model
from selflearn.storage.errors import SelfLearningError

BASE = 1767225600  # 2026-01-01T00:00:00Z
RULE = "- Run the tests with python3 tests/run.py before pushing."
DISTINCT = ["- Keep commits small and focused on one change.",
            "- Prefer the Makefile targets over raw compiler calls.",
            "- Document every public function with its reason.",
            "- Never commit generated files under build/ or dist/.",
            "- Pin dependency versions in requirements files.",
            "- Ask before deleting branches on the shared remote.",
            "- Use UTC everywhere timestamps are stored."]


def tree(root):
    """Every file below ``root`` with its bytes (symlinks as their target text)."""
    out = {}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            if name.startswith("index.sqlite3"):
                continue  # the store's derived index is a cache, not content
            path = os.path.join(here, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, root)] = fh.read()
    return out


def at(monkeypatch, seconds):
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(BASE + seconds))


def append(run, text=RULE, file="AGENTS.md", *extra):
    return run(["improve", "--file", file, "--append", text, "--rationale", "agents forgot",
                *extra])


def refused(run, repo, tmp_path, args, message):
    """The command fails with exactly ``message`` and nothing changes anywhere under tmp_path."""
    before = tree(tmp_path)
    code, out, err = run(args)
    assert (code, out) == (2, "")
    assert err == f"self_learning: error: {message}\n"
    assert tree(tmp_path) == before


# --- appending ----------------------------------------------------------------------------------

def test_append_creates_a_known_file_and_logs_the_change(run, repo, store, monkeypatch):
    at(monkeypatch, 0)
    code, out, err = run(["improve", "--file", "AGENTS.md", "--append", RULE,
                          "--rationale", "agents pushed untested changes", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert (data["written"], data["created"], data["backup"]) == (True, True, None)
    assert (repo / "AGENTS.md").read_text() == RULE + "\n"
    log = (store / "improvements.md").read_text()
    assert log == ("## 2026-01-01T00:00:00Z append AGENTS.md\n\n- source: cli\n"
                   "- rationale: agents pushed untested changes\n- backup: none (file created)\n\n"
                   f"> {RULE}\n\n")
    assert (store / "INDEX.md").exists()  # a write refreshes the index


def test_append_separates_paragraphs_and_joins_list_items(run, repo):
    (repo / "AGENTS.md").write_text("# Rules\n\n- Keep commits small and focused.")
    assert append(run)[0] == 0
    para = "Prefer the project's Makefile targets over raw compiler calls."
    assert append(run, para)[0] == 0
    assert (repo / "AGENTS.md").read_text() == (
        "# Rules\n\n- Keep commits small and focused.\n" + RULE + "\n\n" + para + "\n")


def test_append_keeps_crlf_files_crlf_and_the_file_mode(run, repo):
    path = repo / "CLAUDE.md"
    path.write_bytes(b"# Rules\r\n\r\nBe specific about the test command.\r\n")
    path.chmod(0o640)
    assert append(run, "Always run the linters before committing code.", "CLAUDE.md")[0] == 0
    assert path.read_bytes() == (b"# Rules\r\n\r\nBe specific about the test command.\r\n\r\n"
                                 b"Always run the linters before committing code.\r\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_dry_run_writes_nothing(run, repo, tmp_path):
    before = tree(tmp_path)
    code, out, err = append(run, RULE, "AGENTS.md", "--dry-run")
    assert code == 0, err
    assert out.startswith("dry run: would append to AGENTS.md (new file):\n")
    assert out.endswith("dry run: nothing written\n")
    assert tree(tmp_path) == before


def test_secrets_are_redacted_before_writing(run, repo, store):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    code, out, err = append(run, f"- Authenticate with GITHUB_TOKEN={secret} before cloning.")
    assert code == 0, err
    assert secret not in (repo / "AGENTS.md").read_text()
    assert "[REDACTED" in (repo / "AGENTS.md").read_text()
    assert secret not in (store / "improvements.md").read_text()
    assert "secrets in the text were redacted" in out


def test_existing_text_files_may_be_edited_but_unknown_ones_are_not_created(run, repo, tmp_path):
    (repo / "docs").mkdir()
    (repo / "docs" / "rules.md").write_text("# Team rules\n")
    assert append(run, RULE, "docs/rules.md")[0] == 0
    assert (repo / "docs" / "rules.md").read_text().endswith(RULE + "\n")
    refused(run, repo, tmp_path, ["improve", "--file", "docs/other.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: docs/other.md does not exist and is not a known guidance file (AGENTS.md, "
            "CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, …); create it first")
    (repo / "setup.py").write_text("print('x')\n")
    refused(run, repo, tmp_path, ["improve", "--file", "setup.py", "--append", RULE,
                                  "--rationale", "r"],
            "improve: setup.py is not a guidance file (known: AGENTS.md, CLAUDE.md, GEMINI.md, "
            ".github/copilot-instructions.md, …, or a .md/.mdc/.txt file)")


def test_known_names_in_folders_and_rule_dirs_are_created(run, repo):
    assert append(run, RULE, ".github/copilot-instructions.md")[0] == 0
    assert append(run, RULE, "packages/api/AGENTS.md")[0] == 0
    assert append(run, RULE, ".cursor/rules/testing.mdc")[0] == 0
    for rel in (".github/copilot-instructions.md", "packages/api/AGENTS.md",
                ".cursor/rules/testing.mdc"):
        assert (repo / rel).read_text() == RULE + "\n"


# --- refusals -------------------------------------------------------------------------------------

PYTEST_OUTPUT = """\
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________
    def test_add():
>       assert add(1, 2) == 4
E       assert 3 == 4
tests/test_math.py:3: AssertionError"""
NPM_OUTPUT = """\
npm ERR! code ELIFECYCLE
npm ERR! errno 1
npm ERR! my-app@1.0.0 test: `jest --ci`
npm ERR! Exit status 1"""
NPM_NEW_OUTPUT = "npm error code 1\nnpm error path /work/app\nnpm error command failed"
TRACEBACK = ('Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
             "    main()\nValueError: bad value")


@pytest.mark.parametrize("text, why", [
    (PYTEST_OUTPUT, "test runner output"),
    ("E       assert 3 == 4 when running the math tests", "test runner output"),
    ("FAILED tests/test_math.py::test_add - assert 3 == 4", "test runner output"),
    ("tests/test_math.py:3: AssertionError raised by the add helper", "compiler output"),
    ("src/main.c:10:5: error: expected ';' before 'return'", "compiler output"),
    (NPM_OUTPUT, "npm error output"),
    (NPM_NEW_OUTPUT, "npm error output"),
    (TRACEBACK, "a Python traceback"),
    ('  File "app.py", line 3, in <module> raised again', "a Python traceback"),
    ("2026-01-01T10:00:00Z deploy started for the api service", "a timestamp"),
    ("The job failed at 10:42:13 with the usual flaky network", "a timestamp"),
    ("ERROR could not connect to the database on port 5432", "a log-level prefix"),
    ("[WARN] cache directory is not writable by the build user", "a log-level prefix"),
    ("    at Object.<anonymous> (/app/index.js:10:15)", "a stack frame"),
    ("Segfault at address 0x7ffd5e8c2a10 in the worker process", "a long hex or number"),
    ("Commit 3f9a0c1d2e4b5a6978 broke the build of the api", "a long hex or number"),
    ("- a\n- b\n- c\n- d\n- e\n- f\n- g\n- h\n- i\n- j done", "10 lines > 8"),
    ("ports 8080 8081 8082 8083 9090 9091 9092 used", "digits"),
])
def test_log_shaped_rules_are_refused(run, repo, tmp_path, text, why):
    if why == "digits":
        dense = "".join(text.split())
        why = f"{sum(c.isdigit() for c in dense)} of {len(dense)} characters are digits"
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", text,
                                  "--rationale", "r"],
            f"improve: rule for AGENTS.md looks like tool output ({why}); state the lesson in "
            "your own words; nothing was written")


@pytest.mark.parametrize("text", [
    "- Run `npm test -- --runInBand` when jest hangs on CI.",
    "- Python 3.9 is the oldest supported version; avoid match statements.",
    "- If `npm ERR! code ERESOLVE` appears, install with --legacy-peer-deps.",
    "- Use UTC timestamps (e.g. 2026-01-31) in changelog entries.",
    "Keep functions short:\n- one concern each\n- docstrings say why",
])
def test_plain_rules_pass_the_log_check(text):
    assert guidance.log_shape(text) is None


def test_trivial_and_oversized_rules_are_refused(run, repo, tmp_path):
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", " be careful ",
                                  "--rationale", "r"],
            "improve: rule for AGENTS.md is trivial (10 characters < 15); write a specific, "
            "actionable rule; nothing was written")
    long = "- " + "Prefer small focused commits with clear messages. " * 13
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", long,
                                  "--rationale", "r"],
            f"improve: rule for AGENTS.md is oversized ({len(long.strip())} characters > 600); "
            "link a reference file instead; nothing was written")


@pytest.mark.parametrize("text", [
    "- Run the tests before pushing.\n- Keep commits small and focused.",
    "## Testing\nRun python3 tests/run.py before pushing.",
    "Run python3 tests/run.py\r\nbefore pushing any change.",
])
def test_append_takes_a_single_line(run, repo, tmp_path, text):
    (repo / "AGENTS.md").write_text("# Rules\n")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", text,
                                  "--rationale", "r"],
            "improve: --append takes one line (a rule), got 2; use --update-section with --text "
            "for a block; nothing was written")


@pytest.mark.parametrize("text, marker", [
    ("<!-- self-learning-skills:begin --> run the tests first", "self-learning-skills:begin"),
    ("- Run the tests first self-learning-skills:end please", "self-learning-skills:end"),
    ("- Run the tests first <!-- hidden note for nobody -->", "<!--"),
    ("- Run the tests first, then close the comment -->", "-->"),
])
def test_export_markers_and_html_comments_are_refused(run, repo, tmp_path, text, marker):
    (repo / "AGENTS.md").write_text("# Rules\n\n## Testing\n\nold\n")
    message = (f"improve: rule for AGENTS.md holds {marker!r} (export-rules markers and HTML "
               "comments are not rules); nothing was written")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", text,
                                  "--rationale", "r"], message)
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--update-section", "Testing",
                                  "--text", text, "--rationale", "r"], message)


def test_the_help_shows_single_percent_signs():
    from selflearn.learning import analyze
    from selflearn.cli import parser as cli
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest and hasattr(a, "choices")
               and isinstance(a.choices, dict) and "improve" in a.choices).choices
    improve_help, analyze_help = sub["improve"].format_help(), sub["analyze"].format_help()
    assert "%%" not in improve_help + analyze_help
    assert f"> {guidance.DUPLICATE_OVERLAP:.0%} token overlap" in " ".join(improve_help.split())
    assert f"< {analyze.MIN_RATE:.0%} success" in " ".join(analyze_help.split())


def test_the_boundaries_of_rule_length(run, repo):
    assert append(run, "x" * 14 + " ")[0] == 2
    assert append(run, "Use uv for envs")[0] == 0  # exactly 15
    assert append(run, "b" * 600)[0] == 0
    assert append(run, "c" * 601)[0] == 2


def test_duplicates_of_an_existing_line_are_refused(run, repo, tmp_path):
    (repo / "AGENTS.md").write_text(f"# Rules\n\n{RULE}\n")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append",
                                  "* run the tests with `python3 tests/run.py` before pushing!",
                                  "--rationale", "r"],
            "improve: rule duplicates AGENTS.md line 3 (100% token overlap > 70%): "
            f"{RULE}; nothing was written")
    # 6 shared of 10 words (60%) is a different rule
    assert append(run, "- run tests with python3 tests/run.py before you push.")[0] == 0


def test_duplicate_overlap_is_token_jaccard_over_rule_lines():
    existing = [(1, "- Run the tests before pushing any change"), (2, "- Keep commits small")]
    assert guidance.duplicate_of("Run the tests before pushing any change!", existing) == \
        {"line": 1, "text": existing[0][1], "overlap": 1.0}
    # 7 of 8 words shared: 0.875 > 0.7
    assert guidance.duplicate_of("Run the tests before pushing any big change", existing)[
        "overlap"] == 0.875
    # 2 of 3 rule lines repeated: 0.67 is not more than 0.7
    assert guidance.duplicate_of("Run the tests before pushing any change\nKeep commits small\n"
                                 "Document every public function", existing) is None
    assert guidance.duplicate_of("Run the tests before pushing any change\n"
                                 "Keep commits small", existing)["line"] == 1


def test_non_text_and_non_regular_files_are_refused(run, repo, tmp_path):
    (repo / "AGENTS.md").write_bytes(b"# Rules\n\x00\x01binary")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: AGENTS.md is not a UTF-8 text file; nothing was written")
    (repo / "CLAUDE.md").write_bytes(b"# R\xe9gles\n")
    refused(run, repo, tmp_path, ["improve", "--file", "CLAUDE.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: CLAUDE.md is not a UTF-8 text file; nothing was written")
    (repo / "GEMINI.md").mkdir()
    refused(run, repo, tmp_path, ["improve", "--file", "GEMINI.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: GEMINI.md is not a regular file; name a guidance file")


def test_oversized_files_are_refused(run, repo, tmp_path, monkeypatch):
    monkeypatch.setattr(guidance, "MAX_FILE_BYTES", 10)
    (repo / "AGENTS.md").write_text("# Rules for agents\n")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: AGENTS.md is larger than 10 bytes; not an instruction file")


# --- the path guard (issue #7) --------------------------------------------------------------------

@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "AGENTS.md").write_text("outside\n")
    return folder


@pytest.mark.parametrize("file, message", [
    ("../outside/AGENTS.md", "improve: --file '../outside/AGENTS.md' leaves the repository "
     "('..'); name a file inside it, e.g. --file AGENTS.md"),
    ("docs/../../outside/AGENTS.md", "improve: --file 'docs/../../outside/AGENTS.md' leaves the "
     "repository ('..'); name a file inside it, e.g. --file AGENTS.md"),
    (".git/AGENTS.md", "improve: --file '.git/AGENTS.md' is inside '.git', which improve never "
     "writes; name a guidance file such as AGENTS.md"),
    (".agent-skills/self-learning/AGENTS.md", "improve: --file "
     "'.agent-skills/self-learning/AGENTS.md' is inside '.agent-skills', which improve never "
     "writes; name a guidance file such as AGENTS.md"),
    ("", "improve: --file is empty; name a guidance file, e.g. --file AGENTS.md"),
])
def test_traversal_is_refused(run, repo, tmp_path, outside, file, message):
    refused(run, repo, tmp_path, ["improve", "--file", file, "--append", RULE,
                                  "--rationale", "r"], message)


def test_absolute_paths_outside_are_refused_and_inside_accepted(run, repo, tmp_path, outside):
    target = str(outside / "AGENTS.md")
    refused(run, repo, tmp_path, ["improve", "--file", target, "--append", RULE,
                                  "--rationale", "r"],
            f"improve: --file {target!r} is outside the repository {repo}; give a path relative "
            "to the repository root")
    code, out, err = run(["improve", "--file", str(repo / "AGENTS.md"), "--append", RULE,
                          "--rationale", "r", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["file"] == "AGENTS.md"
    assert (outside / "AGENTS.md").read_text() == "outside\n"


def test_symlinks_out_of_the_repository_are_refused(run, repo, tmp_path, outside):
    (repo / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: --file 'AGENTS.md' is a symlink; edit the file it points to by its own "
            "path inside the repository")
    (repo / "docs").symlink_to(outside)
    refused(run, repo, tmp_path, ["improve", "--file", "docs/AGENTS.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: --file 'docs/AGENTS.md' goes through the symlink 'docs', which points "
            "outside the repository")
    refused(run, repo, tmp_path, ["improve", "--file", "docs/new/CLAUDE.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: --file 'docs/new/CLAUDE.md' goes through the symlink 'docs', which points "
            "outside the repository")


def test_symlinks_are_refused_even_inside_and_folder_links_inside_are_followed(run, repo,
                                                                             tmp_path):
    (repo / "real.md").write_text("# Real\n")
    (repo / "CLAUDE.md").symlink_to(repo / "real.md")
    refused(run, repo, tmp_path, ["improve", "--file", "CLAUDE.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: --file 'CLAUDE.md' is a symlink; edit the file it points to by its own "
            "path inside the repository")
    (repo / "pkg").mkdir()
    (repo / "alias").symlink_to(repo / "pkg")
    assert append(run, RULE, "alias/AGENTS.md")[0] == 0
    assert (repo / "pkg" / "AGENTS.md").read_text() == RULE + "\n"
    (repo / "meta").symlink_to(repo / ".agent-skills", target_is_directory=True)
    refused(run, repo, tmp_path, ["improve", "--file", "meta/AGENTS.md", "--append", RULE,
                                  "--rationale", "r"],
            "improve: --file 'meta/AGENTS.md' is inside '.agent-skills', which improve never "
            "writes; name a guidance file such as AGENTS.md")


# --- update-section -------------------------------------------------------------------------------

DOC = ("# Project\r\n\r\nIntro line.\r\n\r\n## Testing\r\n\r\nOld testing advice here.\r\n"
       "### Details\r\nnested detail\r\n```bash\r\n## not a heading\r\n```\r\n\r\n"
       "## Style\r\n\r\n- Keep functions short and named for what they do.\r\n")


def test_update_section_changes_only_that_section(run, repo, store):
    (repo / "AGENTS.md").write_bytes(DOC.encode())
    body = "Use python3 tests/run.py -q; never call pytest directly."
    code, out, err = run(["improve", "--file", "AGENTS.md", "--update-section", "## testing",
                          "--text", body, "--rationale", "pytest misses the venv"])
    assert code == 0, err
    new = (repo / "AGENTS.md").read_bytes()
    head, tail = DOC.split("## Testing\r\n")[0], DOC[DOC.index("### Details"):]
    assert new.startswith((head + "## Testing\r\n").encode())
    assert new.endswith(tail.encode())
    assert new == (head + "## Testing\r\n\r\n" + body + "\r\n\r\n" + tail).encode()
    assert b"### Details\r\nnested detail\r\n" in new  # a subsection is not the body
    backups = list((store / "backups" / "AGENTS.md").iterdir())
    assert [b.read_bytes() for b in backups] == [DOC.encode()]
    assert '## ' in (store / "improvements.md").read_text()
    assert 'update-section "testing" AGENTS.md' in (store / "improvements.md").read_text()


def update(run, title, text, file="AGENTS.md"):
    return run(["improve", "--file", file, "--update-section", title, "--text", text,
                "--rationale", "r"])


# Per shape: the old body of "Testing", then what follows it, which may not change.
SHAPES = {
    "a subsection": ("old advice\n", "### Details\n\nnested detail\n\n## Style\n\nkeep\n"),
    "a fence holding the other fence": ("```text\n~~~\n## not a heading\n```\n",
                                        "## Style\n\nkeep\n"),
    "a longer fence": ("````md\n```\n## not a heading\n````\n", "## Style\n\nkeep\n"),
    "an HTML comment holding a heading": ("<!--\n## not a heading\n-->\n",
                                          "## Style\n\nkeep\n"),
    "export-rules' block": ("old advice\n", "<!-- self-learning-skills:begin -->\n"
                            "## Lessons learned (self-learning-skills)\n\n- rule\n"
                            "<!-- self-learning-skills:end -->\n"),
    "a setext heading": ("old advice\n", "Style\n-----\n\nkeep\n"),
    "an indented heading": ("old advice\n", "  ## Style\n\nkeep\n"),
    "an empty heading": ("old advice\n", "##\n\nkeep\n"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_update_section_loses_no_line_after_its_body(run, repo, shape):
    """The body ends at the next heading of any level, or at export-rules' block; what a
    code fence, an HTML comment or front matter holds is no heading."""
    head = "---\ndescription: rules\n---\n# P\n\n## Testing\n"
    old, rest = SHAPES[shape]
    (repo / "AGENTS.md").write_text(f"{head}\n{old}\n{rest}")
    body = "Use python3 tests/run.py -q; never call pytest directly."
    assert update(run, "Testing", body)[0] == 0
    assert (repo / "AGENTS.md").read_text() == f"{head}\n{body}\n\n{rest}"


def test_update_section_finds_setext_and_indented_headings(run, repo):
    (repo / "AGENTS.md").write_text("Testing\n=======\nold\n\n   ## Style #\nold style\n")
    for title, text in (("testing", RULE), ("style", DISTINCT[0])):
        assert update(run, title, text)[0] == 0
    assert (repo / "AGENTS.md").read_text() == (
        f"Testing\n=======\n\n{RULE}\n\n   ## Style #\n\n{DISTINCT[0]}\n")


def test_update_section_of_the_last_section_and_without_final_newline(run, repo):
    (repo / "AGENTS.md").write_text("# P\n\n## Style\nold style")
    body = "- Keep functions short and named for what they do."
    assert update(run, "Style", body)[0] == 0
    assert (repo / "AGENTS.md").read_text() == f"# P\n\n## Style\n\n{body}\n"


def test_update_section_appends_a_missing_section(run, repo):
    (repo / "CLAUDE.md").write_text("# Project\n\nIntro line.\n")
    body = "Use python3 tests/run.py -q; never call pytest directly."
    code, out, err = run(["improve", "--file", "CLAUDE.md", "--update-section", "Testing",
                          "--text", body, "--rationale", "r"])
    assert code == 0, err
    assert out.startswith('did add section "Testing" in CLAUDE.md:')
    assert (repo / "CLAUDE.md").read_text() == f"# Project\n\nIntro line.\n\n## Testing\n\n{body}\n"


def test_update_section_with_the_same_body_writes_nothing(run, repo, tmp_path):
    body = "Use python3 tests/run.py -q; never call pytest directly."
    (repo / "AGENTS.md").write_text(f"# P\n\n## Testing\n\n{body}\n")
    before = tree(tmp_path)
    code, out, err = run(["improve", "--file", "AGENTS.md", "--update-section", "Testing",
                          "--text", body, "--rationale", "r"])
    assert (code, err) == (0, "")
    assert out == 'AGENTS.md: section "Testing" already says this; nothing written\n'
    assert tree(tmp_path) == before


def test_update_section_checks_duplicates_outside_the_section_only(run, repo, tmp_path):
    (repo / "AGENTS.md").write_text(f"# P\n\n{RULE}\n\n## Testing\n\nold advice on tests\n")
    refused(run, repo, tmp_path, ["improve", "--file", "AGENTS.md", "--update-section",
                                  "Testing", "--text", RULE, "--rationale", "r"],
            f"improve: rule duplicates AGENTS.md line 3 (100% token overlap > 70%): {RULE}; "
            "nothing was written")
    (repo / "CLAUDE.md").write_text(f"# P\n\n## Testing\n\n{RULE}\n")
    assert run(["improve", "--file", "CLAUDE.md", "--update-section", "Testing", "--text",
                RULE + " Always.", "--rationale", "r"])[0] == 0


# --- backups --------------------------------------------------------------------------------------

def backups(store, name="AGENTS.md"):
    return sorted(p.name for p in (store / "backups" / name).iterdir())


def test_backups_keep_the_newest_five(run, repo, store, monkeypatch):
    (repo / "AGENTS.md").write_text("# Rules\n")
    for i in range(7):
        at(monkeypatch, i * 3600)
        assert append(run, DISTINCT[i])[0] == 0
    assert backups(store) == [f"20260101T{h:02d}0000Z.bak" for h in range(2, 7)]
    newest = (store / "backups" / "AGENTS.md" / "20260101T060000Z.bak").read_text()
    assert newest == "# Rules\n\n" + "\n".join(DISTINCT[:6]) + "\n"  # before the 7th write


def test_the_only_backup_of_lost_lines_outlives_later_writes(run, repo, store, monkeypatch):
    """Backups whose every line a later version still holds rotate out first."""
    old = "# Rules\n\n## Testing\n\n- Run make check before pushing anything.\n"
    (repo / "AGENTS.md").write_text(old)
    at(monkeypatch, 0)
    assert update(run, "Testing", RULE)[0] == 0
    for i in range(6):
        at(monkeypatch, (i + 1) * 3600)
        assert append(run, DISTINCT[i])[0] == 0
    assert backups(store) == ["20260101T000000Z.bak"] + [
        f"20260101T{h:02d}0000Z.bak" for h in range(3, 7)]
    assert (store / "backups" / "AGENTS.md" / "20260101T000000Z.bak").read_text() == old


def test_backups_older_than_seven_days_are_deleted_but_never_the_new_one(run, repo, store,
                                                                        monkeypatch):
    (repo / "AGENTS.md").write_text("# Rules\n")
    day = 86400
    for i, when in enumerate((0, day, 8 * day - 1)):
        at(monkeypatch, when)
        assert append(run, DISTINCT[i])[0] == 0
    # at day 8 - 1s: day 0 is older than 7 days, day 1 is not
    assert backups(store) == ["20260102T000000Z.bak", "20260108T235959Z.bak"]
    at(monkeypatch, 30 * day)
    assert append(run, DISTINCT[3])[0] == 0
    assert backups(store) == ["20260131T000000Z.bak"]


def test_same_second_backups_get_a_counter_and_a_clock_going_back_keeps_the_new_one(
        run, repo, store, monkeypatch):
    (repo / "AGENTS.md").write_text("# Rules\n")
    at(monkeypatch, 3600)
    for i in range(6):
        assert append(run, DISTINCT[i])[0] == 0
    assert backups(store) == ["20260101T010000Z.1.bak", "20260101T010000Z.2.bak",
                              "20260101T010000Z.3.bak", "20260101T010000Z.4.bak",
                              "20260101T010000Z.5.bak"]
    at(monkeypatch, 0)  # the clock went back an hour: the new backup still stays
    assert append(run, DISTINCT[6])[0] == 0
    assert backups(store) == ["20260101T000000Z.bak", "20260101T010000Z.2.bak",
                              "20260101T010000Z.3.bak", "20260101T010000Z.4.bak",
                              "20260101T010000Z.5.bak"]


def test_backup_folder_names_are_flat_and_safe(store):
    assert improve.backup_dir(str(store), ".github/copilot-instructions.md") == \
        str(store / "backups" / ".github__copilot-instructions.md")
    assert improve.backup_dir(str(store), "a b/c:d.md") == str(store / "backups" / "a_b__c_d.md")


# --- improvements.md and the API ----------------------------------------------------------------

def test_improvements_log_is_append_only(run, repo, store, monkeypatch):
    (repo / "AGENTS.md").write_text("# Rules\n")
    at(monkeypatch, 0)
    assert append(run)[0] == 0
    first = (store / "improvements.md").read_bytes()
    at(monkeypatch, 60)
    assert run(["improve", "--file", "AGENTS.md", "--update-section", "Style", "--text",
                "Prefer small, focused functions.\nName them for what they do.",
                "--rationale", "reviews kept asking"])[0] == 0
    log = (store / "improvements.md").read_bytes()
    assert log.startswith(first)
    assert log[len(first):].decode() == (
        '## 2026-01-01T00:01:00Z update-section "Style" AGENTS.md\n\n- source: cli\n'
        "- rationale: reviews kept asking\n- backup: backups/AGENTS.md/20260101T000100Z.bak\n\n"
        "> Prefer small, focused functions.\n> Name them for what they do.\n\n")


def test_append_rule_api_writes_and_refuses(repo, store, tmp_path):
    data = improve.append_rule(str(repo), "AGENTS.md", RULE, "seen in 3 sessions",
                               source="proposal prop_1")
    assert data["written"] and (repo / "AGENTS.md").read_text() == RULE + "\n"
    assert "- source: proposal prop_1\n" in (store / "improvements.md").read_text()
    before = tree(tmp_path)
    with pytest.raises(SelfLearningError) as err:
        improve.append_rule(str(repo), "AGENTS.md", RULE, "again", source="proposal prop_2")
    assert "\n" not in str(err.value) and str(err.value).startswith("improve: rule duplicates")
    with pytest.raises(improve.DuplicateRule) as dup:
        improve.append_rule(str(repo), "AGENTS.md", RULE + "!", "again", source="proposal p")
    assert (dup.value.path, dup.value.where) == (str(repo / "AGENTS.md"), "AGENTS.md line 1")
    with pytest.raises(SelfLearningError, match="takes one line"):
        improve.append_rule(str(repo), "AGENTS.md", "- One rule for agents.\n- And another one.",
                            "why", source="proposal prop_4")
    with pytest.raises(SelfLearningError, match="is empty"):
        improve.append_rule(str(repo), "AGENTS.md", "- A different rule for the agents.", " ",
                            source="proposal prop_3")
    assert tree(tmp_path) == before


# --- arguments -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--append", RULE, "--rationale", "r"], "improve: --file is required; e.g. --file AGENTS.md"),
    (["--file", "AGENTS.md", "--append", RULE],
     "improve: --rationale is required; say why the rule helps (logged in improvements.md)"),
    (["--file", "AGENTS.md", "--update-section", "Testing", "--rationale", "r"],
     "improve: --update-section needs --text with the new section body"),
    (["--file", "AGENTS.md", "--append", RULE, "--text", "x", "--rationale", "r"],
     "improve: --text goes with --update-section; give the rule to --append"),
    (["--scan-duplicates", "--file", "AGENTS.md"], "improve: --scan-duplicates takes no --file"),
    (["--file", "AGENTS.md", "--update-section", "#", "--text", RULE, "--rationale", "r"],
     "improve: --update-section is empty; give the section title"),
    (["--file", "AGENTS.md", "--update-section", "H" * 101, "--text", RULE, "--rationale", "r"],
     "improve: --update-section heading is longer than 100 characters; name the section by its "
     "title"),
])
def test_bad_arguments_are_one_line_errors(run, repo, tmp_path, args, message):
    refused(run, repo, tmp_path, ["improve", *args], message)


# --- duplicate scan ------------------------------------------------------------------------------

def test_scan_proposes_removals_keeping_the_canonical_copy(run, repo, tmp_path, outside):
    (repo / "CLAUDE.md").write_text(
        f"# Claude\n\n{RULE}\n- Keep commits small and focused please.\n")
    (repo / "AGENTS.md").write_text(f"# Agents\n\n- Keep commits small and focused.\n{RULE}\n"
                                    "```\n- Keep commits small and focused.\n```\n")
    (repo / ".github").mkdir()
    (repo / ".github" / "copilot-instructions.md").write_text(
        "- Write docstrings that say why, not what.\n- Be brief.\n"
        "- write docstrings that say why, not what!\n- Be brief.\n")
    (repo / "GEMINI.md").symlink_to(outside / "AGENTS.md")
    before = tree(tmp_path)
    code, out, err = run(["improve", "--scan-duplicates", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["files"] == ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"]
    assert [(r["file"], r["line"], r["keep"]["file"], r["keep"]["line"])
            for r in data["removals"]] == [("CLAUDE.md", 3, "AGENTS.md", 4),
                                           ("CLAUDE.md", 4, "AGENTS.md", 3),
                                           (".github/copilot-instructions.md", 3,
                                            ".github/copilot-instructions.md", 1)]
    assert data["removals"][1]["overlap"] == 0.833
    assert data["warnings"] == ["improve: --file 'GEMINI.md' is a symlink; edit the file it "
                                "points to by its own path inside the repository"]
    assert tree(tmp_path) == before
    code, out, err = run(["improve", "--scan-duplicates"])
    assert out.splitlines()[1] == ("- remove CLAUDE.md:3 (100% overlap; keep AGENTS.md:4): "
                                   + RULE)
    assert out.splitlines()[-1] == "3 proposed removal(s); nothing was changed"


def test_scan_without_duplicates(run, repo):
    (repo / "AGENTS.md").write_text("- Keep commits small and focused.\n")
    (repo / ".cursor" / "rules").mkdir(parents=True)
    (repo / ".cursor" / "rules" / "style.mdc").write_text(
        "- Prefer pure functions where possible.\n")
    code, out, err = run(["improve", "--scan-duplicates"])
    assert out == ("scanned 2 guidance file(s): AGENTS.md, .cursor/rules/style.mdc\n"
                   "no duplicate lines\n")
