"""Docs agree with code: SKILL.md frontmatter, referenced paths, runnable commands, help examples."""
import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from selflearn.cli import parser as cli

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "SKILL.md", REPO / "AGENTS.md", REPO / "README.md",
        *sorted((REPO / "references").glob("*.md"))]
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def frontmatter(text: str) -> dict:
    """Top-level keys of a YAML frontmatter block (values as raw strings), stdlib only."""
    lines = text.splitlines()
    assert lines[0] == "---", "SKILL.md must start with a --- frontmatter line"
    end = lines.index("---", 1)
    keys, current = {}, None
    for line in lines[1:end]:
        if line.startswith((" ", "\t")) and current:
            keys[current] += "\n" + line.strip()
            continue
        key, sep, value = line.partition(":")
        assert sep, f"frontmatter line is not 'key: value': {line!r}"
        current = key.strip()
        keys[current] = value.strip()
    return keys


def test_skill_frontmatter_is_spec_valid():
    meta = frontmatter((REPO / "SKILL.md").read_text())
    assert set(meta) <= ALLOWED_KEYS, set(meta) - ALLOWED_KEYS
    assert meta["name"] == "self-learning-skills"
    assert len(meta["name"]) <= 64 and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"])
    assert 1 <= len(meta["description"]) <= 1024
    assert "<" not in meta["description"] and ">" not in meta["description"]


def test_frontmatter_validator_rejects_bad_input():
    with pytest.raises(AssertionError):
        frontmatter("no frontmatter\n")
    assert set(frontmatter("---\nname: x\nauthor: y\n---\n")) - ALLOWED_KEYS == {"author"}


def test_skill_body_is_short():
    assert len((REPO / "SKILL.md").read_text().splitlines()) < 500


PATH_RE = re.compile(r"(?<![\w./<-])((?:scripts|references|tests|bench|hooks)/[\w./-]*\w)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_paths_named_in_docs_exist(doc):
    text = doc.read_text()
    missing = [p for p in PATH_RE.findall(text)
               if not (REPO / p).exists() and not re.search(r"<|\*", p)]
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


def fenced_commands(text: str):
    """Shell commands calling self_learning.py from ```bash fences (heredocs kept whole)."""
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, re.S):
        lines, i = block.splitlines(), 0
        while i < len(lines):
            cmd = lines[i]
            here = re.search(r"<<'?(\w+)'?\s*$", cmd)
            if here:
                end = lines.index(here.group(1), i + 1)
                cmd = "\n".join(lines[i:end + 1])
                i = end
            i += 1
            if "self_learning.py" in cmd:
                yield cmd.split("  #")[0] if not here else cmd


@pytest.fixture
def sandbox(tmp_path, repo):
    """A working dir where docs' relative paths resolve, a seeded store, and an isolated HOME."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "scripts").symlink_to(REPO / "scripts")
    skill = work / ".claude" / "skills"
    skill.mkdir(parents=True)
    (skill / "self-learning-skills").symlink_to(REPO)
    (work / "my-skill").mkdir()
    (work / "my-skill" / "SKILL.md").write_text("---\nname: my-skill\ndescription: demo\n---\n# My skill\n")
    (work / "payload.json").write_text(json.dumps({"aha_cards": [{"title": "from a file"}]}))
    seed = {"aha_cards": [{"id": "aha_example", "title": "Example card", "scope": "portable"}],
            "recommendations": [{"id": "rec_example", "title": "Example recommendation"}]}
    # the working dir is the repo: its .claude/skills/ links the skill folder, as a user's would
    env = {**os.environ, "SELF_LEARNING_REPO_ROOT": str(work), "HOME": str(tmp_path / "home"),
           "SELF_LEARNING_GLOBAL_DIR": str(tmp_path / "global"),
           "TMPDIR": str(tmp_path)}  # `demo`'s throwaway store goes with the test's folder
    subprocess.run([sys.executable, str(REPO / "scripts" / "self_learning.py"), "record"],
                   input=json.dumps(seed), text=True, env=env, check=True, capture_output=True)
    return work, env


def _bash(cmd: str, work: Path, env: dict):
    return subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


DOC_COMMANDS = [(doc.name, cmd) for doc in DOCS for cmd in fenced_commands(doc.read_text())]


@pytest.mark.parametrize("doc, cmd", DOC_COMMANDS, ids=[f"{d}:{c[:40]}" for d, c in DOC_COMMANDS])
def test_commands_in_docs_run(doc, cmd, sandbox):
    work, env = sandbox
    cmd = cmd.replace("<skill>", ".claude/skills/self-learning-skills")
    done = _bash(cmd, work, env)
    assert done.returncode == 0, f"{doc}: {cmd}\n{done.stderr}"


def subcommands():
    parser = cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in action._choices_actions}
    return [(name, sub, helps.get(name)) for name, sub in action.choices.items()]


SUBS = subcommands()


def test_doc_commands_were_found():
    assert any("record" in c for _, c in DOC_COMMANDS) and len(DOC_COMMANDS) >= 2


@pytest.mark.parametrize("name, sub, helptext", SUBS, ids=[s[0] for s in SUBS])
def test_every_command_has_help_and_runnable_examples(name, sub, helptext, sandbox):
    assert helptext, f"{name} has no help line"
    examples = [line.strip()[2:] for line in (sub.epilog or "").splitlines()
                if line.strip().startswith("$ ")]
    assert examples, f"{name} --help has no example"
    work, env = sandbox
    for example in examples:
        assert f" {name}" in example or name == "hook", example
        done = _bash(example, work, env)
        assert done.returncode == 0, f"{example}\n{done.stderr}"
        assert "Traceback" not in done.stderr


def test_generated_references_are_current():
    done = subprocess.run([sys.executable, str(REPO / "tests" / "render_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def stdlib_names() -> set:
    """Top-level standard-library module names (``sys.stdlib_module_names`` from 3.10 on)."""
    if hasattr(sys, "stdlib_module_names"):
        return set(sys.stdlib_module_names)
    import sysconfig  # 3.9: list the standard library's folders (the base install's, not a venv's)
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    names = set(sys.builtin_module_names)
    for folder in (base["stdlib"], os.path.join(base["platstdlib"], "lib-dynload")):
        names |= {entry.split(".")[0] for entry in os.listdir(folder)
                  if entry != "site-packages" and not entry.startswith("__")}
    return names


def test_stdlib_names_know_the_standard_library_and_nothing_else():
    names = stdlib_names()
    assert {"os", "sqlite3", "json", "fcntl", "posix", "argparse"} <= names
    assert not {"pytest", "hypothesis", "vermin", "selflearn"} & names


def test_scripts_import_only_the_standard_library():
    local = {p.stem for p in (REPO / "scripts").rglob("*.py")} | {"selflearn"}
    std = stdlib_names() | {"_sha2", "_sha256"}  # builtin hashes, version-dependent
    bad = []
    for path in (REPO / "scripts").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            bad += [f"{path.name}: {n}" for n in names
                    if n.split(".")[0] not in std | local | {"__future__"}]
    assert not bad


def test_scripts_run_on_python_3_9():
    vermin = Path(sys.executable).parent / "vermin"
    done = subprocess.run([str(vermin), "--target=3.9-", "--no-tips",
                           "--violations", "--eval-annotations", str(REPO / "scripts")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
