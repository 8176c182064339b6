"""install-hooks / uninstall-hooks: merging into each agent's config, called directly."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from selflearn.observation import install  # noqa: E402
from selflearn.storage.errors import UsageError  # noqa: E402

AGENTS = list(install.AGENTS)

# An unrelated hook per agent, in that agent's own shape, that must survive untouched.
OTHER_HOOK = {
    "nested": {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo other", "timeout": 7}]},
    "flat": {"type": "command", "command": "echo other", "bash": "echo other", "timeoutSec": 7},
}


def make_skill(root: Path) -> Path:
    script = root / install.SCRIPT
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("# entry point\n")
    return root


@pytest.fixture
def env(tmp_path):
    repo = tmp_path / "repo"
    home = tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    skill = make_skill(repo / ".claude" / "skills" / "self-learning-skills")
    return {"repo": repo, "home": home, "skill": skill, "backups": tmp_path / "backups"}


def run(env, agent, scope="project", uninstall=False, skill=None):
    changes = install.plan(agent, scope, env["repo"], skill or env["skill"], env["home"], uninstall=uninstall)
    install.apply(changes, env["backups"])
    return changes


def target(env, agent, scope="project"):
    return install.config_path(agent, scope, env["repo"], env["home"])


def ours(doc, agent):
    """Event -> list of our handlers, in file order."""
    spec = install.AGENTS[agent]
    out = {}
    for event, items in doc.get("hooks", {}).items():
        for item in items:
            for h in (item["hooks"] if spec.shape == "nested" else [item]):
                if install.is_ours(h):
                    out.setdefault(event, []).append(h)
    return out


def existing_config(agent):
    spec = install.AGENTS[agent]
    first_event = spec.events[2][0]  # a tool event every agent has
    doc = dict(spec.skeleton)
    doc.update({"model": "x", "permissions": {"allow": ["Read"]}, "hooks": {
        first_event: [OTHER_HOOK[spec.shape]],
        "SomeOtherEvent": [OTHER_HOOK[spec.shape]],
    }, "zzz_last": [1, 2, 3]})
    return doc


@pytest.mark.parametrize("agent", AGENTS)
def test_install_into_empty_repo(env, agent):
    changes = run(env, agent)
    assert len(changes) == 1 and changes[0].before is None
    path = target(env, agent)
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith("{\n  \"")  # 2-space indent, trailing newline
    doc = json.loads(text)
    spec = install.AGENTS[agent]
    found = ours(doc, agent)
    assert list(found) == [e for e, _, _ in spec.events]
    for event, timeout, matcher in spec.events:
        (h,) = found[event]
        expected = timeout * 1000 if spec.timeout_ms else timeout
        assert h[spec.timeout_key] == expected
        cmd = h[spec.command_key]
        assert cmd.startswith("python3 -S ") and install.MARKER in cmd and cmd.endswith(f"--agent {agent}")
    for key, value in spec.skeleton:
        assert doc[key] == value
    assert not env["backups"].exists()  # nothing existed, nothing to back up


def test_command_paths_per_agent(env):
    cmds = {}
    for agent in AGENTS:
        run(env, agent)
        doc = json.loads(target(env, agent).read_text())
        h = next(iter(ours(doc, agent).values()))[0]
        cmds[agent] = (h[install.AGENTS[agent].command_key], h.get("cwd"))
    rel = ".claude/skills/self-learning-skills/scripts/self_learning.py hook"
    assert cmds["claude"] == (f'python3 -S "$CLAUDE_PROJECT_DIR"/{rel} --agent claude', None)
    assert cmds["gemini"] == (f'python3 -S "$GEMINI_PROJECT_DIR"/{rel} --agent gemini', None)
    assert cmds["cursor"] == (f'python3 -S "$CURSOR_PROJECT_DIR"/{rel} --agent cursor', None)
    assert cmds["copilot"] == (f"python3 -S {rel} --agent copilot", ".")
    top = '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"'
    assert cmds["codex"] == (f"python3 -S {top}/{rel} --agent codex", None)


@pytest.mark.parametrize("agent", AGENTS)
def test_project_files_never_hold_this_machines_path(env, tmp_path, agent):
    run(env, agent)
    text = target(env, agent).read_text()
    for machine_path in (str(tmp_path), str(tmp_path.resolve()), str(Path.home())):
        assert machine_path not in text


@pytest.mark.parametrize("agent", AGENTS)
def test_the_project_command_finds_the_skill_from_the_repo_top(env, agent):
    """Run the written command as the agent would: from a subfolder, with its variables set."""
    import subprocess
    import os
    (env["skill"] / install.SCRIPT).write_text("import sys; print('ran', *sys.argv[1:])\n")
    run(env, agent)
    doc = json.loads(target(env, agent).read_text())
    handler = next(iter(ours(doc, agent).values()))[0]
    cmd = handler[install.AGENTS[agent].command_key]
    sub = env["repo"] / "src" / "deep"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=env["repo"], check=True)
    cwd = env["repo"] / handler["cwd"] if "cwd" in handler else sub
    variables = {"CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR"}
    done = subprocess.run(["sh", "-c", cmd], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**{k: v for k, v in os.environ.items() if k not in variables},
                               **{v: str(env["repo"]) for v in variables}})
    assert (done.returncode, done.stdout) == (0, f"ran hook --agent {agent}\n"), done.stderr


def test_a_skill_folder_linked_into_the_repo_counts_as_inside(env, tmp_path):
    shared = make_skill(tmp_path / "src" / "self-learning-skills")
    link = env["repo"] / ".agents" / "skills" / "sls"
    link.parent.mkdir(parents=True)
    link.symlink_to(shared)
    run(env, "claude", skill=shared)
    doc = json.loads(target(env, "claude").read_text())
    assert doc["hooks"]["Stop"][0]["hooks"][0]["command"] == \
        'python3 -S "$CLAUDE_PROJECT_DIR"/.agents/skills/sls/scripts/self_learning.py hook --agent claude'


def test_skill_outside_repo_is_refused_in_project_scope_and_quoted_in_user_scope(env, tmp_path):
    skill = make_skill(tmp_path / "my skills" / "sls")
    with pytest.raises(UsageError, match="outside the repository .*--scope user"):
        install.plan("claude", "project", env["repo"], skill, env["home"])
    assert not target(env, "claude").exists()
    run(env, "claude", scope="user", skill=skill)
    doc = json.loads(target(env, "claude", "user").read_text())
    cmd = doc["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert cmd == f"python3 -S '{skill.as_posix()}'/scripts/self_learning.py hook --agent claude"
    import shlex
    assert shlex.split(cmd)[2] == f"{skill.as_posix()}/scripts/self_learning.py"


@pytest.mark.parametrize("agent", AGENTS)
def test_merge_keeps_other_keys_and_hooks_in_order(env, agent):
    path = target(env, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = existing_config(agent)
    path.write_text(json.dumps(original, indent=2) + "\n")
    run(env, agent)
    doc = json.loads(path.read_text())
    assert list(doc) == list(original)  # top-level keys and their order
    for key in original:
        if key != "hooks":
            assert doc[key] == original[key]
    spec = install.AGENTS[agent]
    first_event = spec.events[2][0]
    assert doc["hooks"][first_event][0] == OTHER_HOOK[spec.shape]  # the other hook stays first
    assert doc["hooks"]["SomeOtherEvent"] == [OTHER_HOOK[spec.shape]]
    assert list(doc["hooks"])[:2] == [first_event, "SomeOtherEvent"]
    assert len(ours(doc, agent)) == len(spec.events)


@pytest.mark.parametrize("agent", AGENTS)
def test_second_install_is_byte_identical(env, agent):
    run(env, agent)
    first = target(env, agent).read_bytes()
    assert install.plan(agent, "project", env["repo"], env["skill"], env["home"]) == []
    run(env, agent)
    assert target(env, agent).read_bytes() == first


@pytest.mark.parametrize("agent", AGENTS)
def test_moved_skill_updates_in_place(env, agent, tmp_path):
    path = target(env, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(existing_config(agent), indent=2) + "\n")
    run(env, agent)
    before = json.loads(path.read_text())
    moved = make_skill(env["repo"] / ".agents" / "skills" / "self-learning-skills")
    run(env, agent, skill=moved)
    after = json.loads(path.read_text())
    found = ours(after, agent)
    assert all(len(v) == 1 for v in found.values()) and len(found) == len(install.AGENTS[agent].events)
    spec = install.AGENTS[agent]
    for h in (h for hs in found.values() for h in hs):
        assert ".agents/skills/self-learning-skills" in h[spec.command_key]
    # Same events in the same places: only our command strings changed.
    assert list(after["hooks"]) == list(before["hooks"])
    flat = json.dumps(after).replace(".agents/skills", ".claude/skills")
    assert json.loads(flat) == before


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_restores_original(env, agent):
    path = target(env, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = existing_config(agent)
    path.write_text(json.dumps(original, indent=2) + "\n")
    run(env, agent)
    changes = run(env, agent, uninstall=True)
    assert len(changes) == 1
    assert json.loads(path.read_text()) == original
    assert run(env, agent, uninstall=True) == []  # nothing left to remove


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_from_empty_repo_removes_created_file(env, agent):
    run(env, agent)
    changes = run(env, agent, uninstall=True)
    assert changes[0].after is None
    assert not target(env, agent).exists()
    assert list(env["backups"].iterdir())  # the removed file was backed up


@pytest.mark.parametrize("agent", AGENTS)
def test_invalid_json_refused_nothing_written(env, agent):
    path = target(env, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"hooks": {,}\n')
    listing = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(UsageError) as err:
        install.plan(agent, "project", env["repo"], env["skill"], env["home"])
    assert str(path) in str(err.value) and "not valid JSON" in str(err.value)
    assert path.read_text() == '{"hooks": {,}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == listing
    assert not env["backups"].exists()


def test_non_object_json_and_bad_hooks_refused(env):
    path = target(env, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[1, 2]\n")
    with pytest.raises(UsageError):
        install.plan("claude", "project", env["repo"], env["skill"], env["home"])
    path.write_text('{"hooks": []}\n')
    with pytest.raises(UsageError):
        install.plan("claude", "project", env["repo"], env["skill"], env["home"])


@pytest.mark.parametrize("agent", AGENTS)
def test_backup_written(env, agent):
    path = target(env, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    original_text = json.dumps(existing_config(agent), indent=2) + "\n"
    path.write_text(original_text)
    run(env, agent)
    backups = list(env["backups"].iterdir())
    assert len(backups) == 1 and backups[0].read_text() == original_text
    assert path.name in backups[0].name


@pytest.mark.parametrize("agent", AGENTS)
def test_user_scope_uses_given_home(env, agent):
    run(env, agent, scope="user")
    path = target(env, agent, "user")
    assert env["home"] in path.parents and path.is_file()
    assert not (env["repo"] / install.AGENTS[agent].project_file).exists()
    h = next(iter(ours(json.loads(path.read_text()), agent).values()))[0]
    cmd = h[install.AGENTS[agent].command_key]
    assert env["skill"].resolve().as_posix() in cmd and "$" not in cmd and "cwd" not in h
    st = install.status(env["repo"], env["home"])[agent]
    assert st["user"]["installed"] and not st["project"]["installed"]
    assert st["user"]["file"] == str(path)


def test_unknown_agent_and_scope(env):
    with pytest.raises(UsageError):
        install.plan("vim", "project", env["repo"], env["skill"], env["home"])
    with pytest.raises(UsageError):
        install.plan("claude", "global", env["repo"], env["skill"], env["home"])
    with pytest.raises(UsageError):
        install.plan("claude", "project", env["repo"], env["repo"] / "nope", env["home"])


def test_indentation_of_existing_file_kept(env):
    path = target(env, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model": "x"}, indent=4) + "\n")
    run(env, "claude")
    assert path.read_text().startswith('{\n    "model"')


def test_shared_group_keeps_other_handlers(env):
    path = target(env, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    run(env, "claude")
    doc = json.loads(path.read_text())
    doc["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "echo mine"})
    path.write_text(json.dumps(doc, indent=2) + "\n")
    run(env, "claude", uninstall=True)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}


def test_duplicate_entries_collapse_to_one(env):
    run(env, "cursor")
    path = target(env, "cursor")
    doc = json.loads(path.read_text())
    doc["hooks"]["stop"].append(dict(doc["hooks"]["stop"][0]))
    path.write_text(json.dumps(doc, indent=2) + "\n")
    run(env, "cursor")
    assert len(json.loads(path.read_text())["hooks"]["stop"]) == 1


def test_apply_refuses_file_changed_since_plan(env):
    changes = install.plan("claude", "project", env["repo"], env["skill"], env["home"])
    path = target(env, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    with pytest.raises(install.SelfLearningError):
        install.apply(changes, env["backups"])
    assert path.read_text() == "{}\n"


def test_status_reports_project_install(env):
    run(env, "gemini")
    st = install.status(env["repo"], env["home"])
    assert set(st) == set(AGENTS)
    g = st["gemini"]["project"]
    assert g["installed"] and g["missing_events"] == [] and len(g["commands"]) == 1
    assert not st["claude"]["project"]["installed"] and not st["claude"]["project"]["exists"]
    target(env, "claude").parent.mkdir(parents=True, exist_ok=True)
    target(env, "claude").write_text("{oops")
    assert "not valid JSON" in install.status(env["repo"], env["home"])["claude"]["project"]["error"]


def test_plugin_hooks_match_claude_installer(env):
    on_disk = (ROOT / "hooks" / "hooks.json").read_text()
    assert on_disk == install.render_json(install.plugin_hooks_document())
    plugin = json.loads(on_disk)["hooks"]
    run(env, "claude")
    installed = json.loads(target(env, "claude").read_text())["hooks"]
    assert list(plugin) == list(installed)
    for event in plugin:
        (p_group,) = plugin[event]
        (i_group,) = installed[event]
        assert p_group.get("matcher") == i_group.get("matcher")
        assert p_group["hooks"][0]["timeout"] == i_group["hooks"][0]["timeout"]
        assert "${CLAUDE_PLUGIN_ROOT}/scripts/self_learning.py" in p_group["hooks"][0]["command"]
        assert install.is_ours(p_group["hooks"][0])


def test_plugin_manifest():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "self-learning-skills" and manifest["version"] == "0.1.0"
    assert manifest["description"]
    # the shape `claude plugin init` scaffolds (tests/e2e/test_plugin_e2e.py validates it strictly)
    assert manifest["$schema"] == "https://anthropic.com/claude-code/plugin.schema.json"
    assert manifest["author"]["name"] and manifest["skills"] == ["./"]
    skill_md = (ROOT / "SKILL.md").read_text()
    assert f"\nname: {manifest['name']}\n" in skill_md and (ROOT / "SKILL.md").is_file()
    assert "hooks" not in manifest  # hooks/hooks.json is loaded by default; naming it again duplicates it


def test_summaries_and_diff(env):
    (change,) = install.plan("copilot", "project", env["repo"], env["skill"], env["home"])
    assert change.summary.startswith("create ") and "9 copilot hook entries" in change.summary
    diff = install.render_diff(change)
    assert diff.startswith("--- /dev/null") and '+  "version": 1,' in diff
    install.apply([change], env["backups"])
    (change,) = install.plan("copilot", "project", env["repo"], env["skill"], env["home"], uninstall=True)
    assert change.summary.startswith("delete ") and change.after is None
