"""The folder as a Claude Code plugin: the real client validates the manifest strictly, and a
trusted workspace lists the skill once (as the plugin's skill, not twice)."""
import subprocess

import pytest

import claude_harness as ch

pytestmark = pytest.mark.e2e

DESCRIPTION = "Gives the agent a memory across runs"


def test_claude_plugin_validate_strict_passes(claude_binary, tmp_path):
    done = subprocess.run([str(claude_binary), "plugin", "validate", "--strict", str(ch.REPO)],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout and "warning" not in done.stdout.lower()


@pytest.mark.parametrize("workspace", ["trusted"], indirect=True)
def test_the_skill_is_listed_once_and_the_plugin_is_enabled(claude_binary, workspace):
    listed = subprocess.run([str(claude_binary), "plugin", "list", "--json"], cwd=workspace.project,
                            capture_output=True, text=True, timeout=60, check=False,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(workspace.home)})
    assert '"id": "self-learning-skills@skills-dir"' in listed.stdout, listed.stderr
    assert '"enabled": true' in listed.stdout
    with ch.ScriptedAnthropicServer(["Nothing to do."]) as server:
        proc = ch.run_claude(claude_binary, workspace.project, "hello", server, workspace.home,
                             timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert server.main_requests[0].text().count(DESCRIPTION) == 1
