"""End-to-end harness: run the real Gemini CLI offline.

The pinned ``@google/gemini-cli`` is pointed at a scripted Gemini API on
127.0.0.1 through ``GOOGLE_GEMINI_BASE_URL`` (API-key auth, chosen in
``~/.gemini/settings.json``). The server plays a script of turns: a shell
command (the ``run_shell_command`` tool) or a final text; tool-less side
requests (the model router's complexity check) get a fixed JSON answer. The
project folder is trusted in ``~/.gemini/trustedFolders.json``, so Gemini reads
``<project>/.gemini/settings.json`` and fires its hooks. Stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from claude_harness import default_cache_dir, existing, npm_install
from local_server import QuietHandler, ScriptedServer

GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE = "@google/gemini-cli"
ROUTER_ANSWER = {"complexity_reasoning": "a scripted test", "complexity_score": 10}


def ensure_gemini(cache_dir: Union[str, Path, None] = None) -> Optional[Path]:
    """Install the pinned Gemini CLI into ``<cache>/gemini`` (once); its launcher, or None without npm."""
    cache = (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / "gemini"
    return npm_install(cache, GEMINI_PACKAGE, GEMINI_VERSION,
                       existing(cache / "node_modules" / ".bin" / "gemini"))


def command(cmd: str) -> Dict[str, str]:
    return {"cmd": cmd}


class ScriptedGeminiServer(ScriptedServer):
    """``POST /v1beta/models/<model>:streamGenerateContent`` (and ``generateContent``) on 127.0.0.1.

    The turn served is chosen by how many function responses the request
    carries; past the script, ``final_text``. Requests with tools are the
    conversation (kept in :attr:`requests`); others get ``ROUTER_ANSWER``.
    """

    def __init__(self, script: Sequence[Union[str, Mapping[str, str]]] = (),
                 final_text: str = "Done.") -> None:
        self.script = [{"text": t} if isinstance(t, str) else dict(t) for t in script]
        self.final_text = final_text
        super().__init__()

    @property
    def base_url(self) -> str:
        return self.root_url

    def _answer(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        if not body.get("tools"):
            part: Dict[str, Any] = {"text": json.dumps(ROUTER_ANSWER)}
        else:
            self.record(dict(body))
            done = sum(1 for c in body.get("contents") or [] for p in c.get("parts") or []
                       if isinstance(p, dict) and "functionResponse" in p)
            turn = self.script[done] if done < len(self.script) else {"text": self.final_text}
            part = ({"functionCall": {"name": "run_shell_command",
                                      "args": {"command": turn["cmd"], "description": "run"}}}
                    if "cmd" in turn else {"text": turn["text"]})
        return {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15}}

    def _handler(self) -> type:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.body()
                if "enerateContent" not in self.path:  # generateContent, streamGenerateContent
                    self.send(json.dumps({"totalTokens": 10}).encode())
                    return
                answer = json.dumps(server._answer(body))
                if "alt=sse" in self.path:
                    self.send(f"data: {answer}\r\n\r\n".encode(), "text/event-stream")
                else:
                    self.send(answer.encode())

        return Handler


def prepare_home(home: Path, project: Path) -> None:
    """API-key auth and a trusted ``project``, as answering Gemini's prompts would leave them."""
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    (gemini / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    (gemini / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))


def run_gemini(launcher: Path, project: Path, prompt: str, server: ScriptedGeminiServer,
               home: Path, extra_env: Optional[Mapping[str, str]] = None,
               timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    """``gemini -p PROMPT --yolo`` in ``project`` against ``server``."""
    prepare_home(home, project)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GEMINI_", "GOOGLE_")) and "PROXY" not in k.upper()}
    env.update({"HOME": str(home), "GEMINI_API_KEY": "scripted-offline-key",
                "GOOGLE_GEMINI_BASE_URL": server.base_url, "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost"})
    env.update(extra_env or {})
    return subprocess.run([str(launcher), "-p", prompt, "--yolo"], cwd=str(project), env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
