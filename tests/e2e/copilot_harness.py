"""End-to-end harness: run the real GitHub Copilot CLI offline.

Copilot CLI's offline mode (``COPILOT_OFFLINE=true``) talks only to a custom
model provider (BYOK, ``COPILOT_PROVIDER_BASE_URL``); with
``COPILOT_PROVIDER_WIRE_API=responses`` that is the scripted Responses API of
``codex_harness``, whose shell turns call Copilot's ``bash`` tool.
``COPILOT_ALLOW_ALL=true`` trusts the working folder, so Copilot loads
``.github/hooks/*.json`` and fires them. Stdlib only.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping, Optional, Union

from claude_harness import default_cache_dir, existing, npm_install
from codex_harness import ScriptedResponsesServer, command  # noqa: F401 - re-exported

COPILOT_VERSION = "1.0.102"
COPILOT_PACKAGE = "@github/copilot"
TOOL, ARG = "bash", "command"  # Copilot's shell tool, for ScriptedResponsesServer


def ensure_copilot(cache_dir: Union[str, Path, None] = None) -> Optional[Path]:
    """Install the pinned Copilot CLI into ``<cache>/copilot`` (once); its launcher, or None without npm."""
    cache = (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / "copilot"
    return npm_install(cache, COPILOT_PACKAGE, COPILOT_VERSION,
                       existing(cache / "node_modules" / ".bin" / "copilot"))


def server(script) -> ScriptedResponsesServer:
    return ScriptedResponsesServer(script, tool=TOOL, arg=ARG)


def run_copilot(launcher: Path, project: Path, prompt: str, server: ScriptedResponsesServer,
                home: Path, extra_env: Optional[Mapping[str, str]] = None,
                timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    """``copilot -p PROMPT --allow-all-tools`` in ``project``, offline against ``server``."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("COPILOT_", "GH_", "GITHUB_")) and "PROXY" not in k.upper()}
    env.update({"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"),
                "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": server.base_url,
                "COPILOT_PROVIDER_WIRE_API": "responses",
                "COPILOT_PROVIDER_API_KEY": "scripted-offline-key", "COPILOT_MODEL": "gpt-5.4",
                "COPILOT_ALLOW_ALL": "true", "COPILOT_AUTO_UPDATE": "false",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra_env or {})
    return subprocess.run([str(launcher), "-p", prompt, "--allow-all-tools"], cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
