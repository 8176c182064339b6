"""One registration whatever the path: install-hooks and doctor know when Claude Code loads the
folder as a plugin (skills folder or installed), and doctor reports hooks registered twice."""
import json
from pathlib import Path

import pytest

MANIFEST = {"name": "self-learning-skills", "version": "0.1.0"}


def js(run, *args):
    code, out, err = run([*args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)  # ~/.claude, ~/.claude.json
    return home


def place_skill(folder: Path, monkeypatch, manifest=True) -> Path:
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "self_learning.py").write_text("# stub entry point\n")
    if manifest:
        (folder / ".claude-plugin").mkdir()
        (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(MANIFEST))
    monkeypatch.setattr("selflearn.cli.hooks.SKILL_DIR", str(folder))
    return folder


def ours_in(path: Path) -> int:
    if not path.exists():
        return 0
    doc = json.loads(path.read_text())
    return sum("self_learning.py hook" in h.get("command", "")
               for groups in doc.get("hooks", {}).values() for g in groups for h in g["hooks"])


def test_project_skills_folder_plugin_gets_no_second_set(run, repo, home, monkeypatch):
    place_skill(repo / ".claude" / "skills" / "self-learning-skills", monkeypatch)
    code, out, err = run(["install-hooks", "--agent", "claude"])
    assert code == 0 and err == ""
    assert out.startswith("Claude Code loads this folder as the plugin "
                          "self-learning-skills@skills-dir (project skills folder ")
    assert "adds none" in out and "trusted" in out and "manual step" not in out
    assert not (repo / ".claude" / "settings.json").exists()
    data = js(run, "install-hooks", "--agent", "claude", "--dry-run")
    assert data["plugin"]["id"] == "self-learning-skills@skills-dir" and data["changes"] == []


def test_install_takes_out_an_earlier_settings_set_and_doctor_sees_the_double(run, repo, home,
                                                                              monkeypatch):
    place_skill(repo / ".claude" / "skills" / "self-learning-skills", monkeypatch)
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"model": "x"}))
    js(run, "install-hooks", "--agent", "claude", "--ignore-plugin")
    assert ours_in(settings) == 11
    doctor = js(run, "doctor", "--report-only")  # not trusted yet: the plugin does not load, no double
    assert doctor["agents"]["claude"]["registrations"] == ["project settings"]
    assert doctor["agents"]["claude"]["plugins_waiting_for_trust"] == [
        "self-learning-skills@skills-dir"]
    assert "plugin self-learning-skills@skills-dir loads once the workspace is trusted" in \
        run(["doctor"])[1]
    (home / ".claude.json").write_text(json.dumps(
        {"projects": {str(repo.parent): {"hasTrustDialogAccepted": True}}}))  # a folder above
    doctor = js(run, "doctor", "--report-only")
    assert doctor["agents"]["claude"]["registrations"] == [
        "plugin self-learning-skills@skills-dir", "project settings"]
    (double,) = [p for p in doctor["problems"] if "registered" in p]
    assert double.startswith("claude: hooks registered 2 times (plugin "
                             "self-learning-skills@skills-dir, project settings)")
    assert "install-hooks --agent claude --scope project" in double
    data = js(run, "install-hooks", "--agent", "claude")
    assert "remove 11 claude hook entries" in data["changes"][0]["summary"]
    assert ours_in(settings) == 0 and json.loads(settings.read_text()) == {"model": "x"}
    doctor = js(run, "doctor", "--report-only")
    assert doctor["agents"]["claude"]["registrations"] == ["plugin self-learning-skills@skills-dir"]
    assert not [p for p in doctor["problems"] if "registered" in p]


def test_a_disabled_plugin_gets_the_settings_entries(run, repo, home, monkeypatch):
    place_skill(repo / ".claude" / "skills" / "self-learning-skills", monkeypatch)
    local = repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"enabledPlugins": {"self-learning-skills@skills-dir": False}}))
    data = js(run, "install-hooks", "--agent", "claude")
    assert data["plugin"] is None and ours_in(repo / ".claude" / "settings.json") == 11


def test_user_skills_folder_and_installed_plugins_count_too(run, repo, home, monkeypatch):
    place_skill(home / ".claude" / "skills" / "self-learning-skills", monkeypatch)
    data = js(run, "install-hooks", "--agent", "claude", "--scope", "user")
    assert data["plugin"]["id"] == "self-learning-skills@skills-dir"
    assert data["plugin"]["how"].startswith("user skills folder") and data["changes"] == []
    assert not data["plugin"]["needs_trust"]


def test_a_marketplace_install_of_the_plugin_counts(run, repo, home, monkeypatch):
    place_skill(repo / "vendor" / "self-learning-skills", monkeypatch)
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"self-learning-skills@team-tools": [{"scope": "user"}],
                                   "other@team-tools": [{"scope": "user"}]}}))
    data = js(run, "install-hooks", "--agent", "claude")
    assert data["plugin"] == {"id": "self-learning-skills@team-tools", "how": "installed plugin",
                              "enabled": True, "needs_trust": False, "trusted": True}
    assert not (repo / ".claude" / "settings.json").exists()


def test_without_a_manifest_it_is_a_plain_skill_folder(run, repo, home, monkeypatch):
    place_skill(repo / ".claude" / "skills" / "self-learning-skills", monkeypatch, manifest=False)
    data = js(run, "install-hooks", "--agent", "claude")
    assert data["plugin"] is None and ours_in(repo / ".claude" / "settings.json") == 11


def test_doctor_reports_project_and_user_hooks_of_one_agent(run, repo, home, monkeypatch):
    place_skill(repo / "vendor" / "self-learning-skills", monkeypatch)
    js(run, "install-hooks", "--agent", "codex")
    js(run, "install-hooks", "--agent", "codex", "--scope", "user")
    doctor = js(run, "doctor", "--report-only")
    (double,) = [p for p in doctor["problems"] if "registered" in p]
    assert double.startswith("codex: hooks registered 2 times (project settings, user settings)")
    assert double.endswith("uninstall-hooks --agent codex --scope user`")
    assert doctor["healthy"] is False
    js(run, "uninstall-hooks", "--agent", "codex", "--scope", "user")
    assert not [p for p in js(run, "doctor", "--report-only")["problems"] if "registered" in p]


def test_suggest_hooks_counts_the_plugin_as_hooks(run, repo, home, monkeypatch):
    place_skill(repo / ".claude" / "skills" / "self-learning-skills", monkeypatch)
    monkeypatch.setattr("selflearn.cli.share.SKILL_DIR",
                        str(repo / ".claude" / "skills" / "self-learning-skills"))
    data = js(run, "suggest-hooks")
    (row,) = [r for r in data["hook_agents"] if r["agent"] == "claude"]
    assert (row["hooks"], row["plugin"], row["command"]) == (
        "plugin", "self-learning-skills@skills-dir", "")
    assert "claude: hooks registered by the plugin self-learning-skills@skills-dir" in \
        run(["suggest-hooks"])[1]
