"""End-to-end harness: run the real Codex CLI offline.

The pinned ``@openai/codex`` client is pointed, through a custom model provider
in ``$CODEX_HOME/config.toml`` (``wire_api = "responses"``), at a scripted
Responses API server on 127.0.0.1. The server plays a script of turns: a shell
command (Codex's ``exec_command`` tool) or a final text. Codex runs the
commands for real and fires the hooks of ``<project>/.codex/hooks.json``
(``--trust`` trusts the project, ``--dangerously-bypass-hook-trust`` skips the
per-hook review a person gives in ``/hooks``). Stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from claude_harness import default_cache_dir, existing, npm_install
from local_server import QuietHandler, ScriptedServer

CODEX_VERSION = "0.169.0"
CODEX_PACKAGE = "@openai/codex"
MODEL = "gpt-scripted"
KEY_ENV = "SCRIPTED_RESPONSES_KEY"


def ensure_codex(cache_dir: Union[str, Path, None] = None) -> Optional[Path]:
    """Install the pinned Codex CLI into ``<cache>/codex`` (once); its launcher, or None without npm."""
    cache = (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / "codex"
    launcher = cache / "node_modules" / ".bin" / "codex"
    return npm_install(cache, CODEX_PACKAGE, CODEX_VERSION, existing(launcher))


def command(cmd: str) -> Dict[str, str]:
    """A turn that runs ``cmd`` through Codex's shell tool."""
    return {"cmd": cmd}


class ScriptedResponsesServer(ScriptedServer):
    """A scripted OpenAI Responses API (``POST /v1/responses``, streamed) on 127.0.0.1.

    Shell turns call ``tool`` with the command as ``arg`` (Codex: ``exec_command``/``cmd``;
    Copilot CLI: ``bash``/``command``). The turn served is chosen by how many tool
    results the request already carries, so a retry gets the same answer; past the
    script, ``final_text``. Every request body is kept in :attr:`requests`.
    """

    def __init__(self, script: Sequence[Union[str, Mapping[str, str]]] = (),
                 final_text: str = "Done.", tool: str = "exec_command",
                 arg: str = "cmd") -> None:
        self.script = [{"text": t} if isinstance(t, str) else dict(t) for t in script]
        self.final_text = final_text
        self.tool, self.arg = tool, arg  # the client's shell tool and its command argument
        super().__init__()

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def _events(self, body: Mapping[str, Any]) -> bytes:
        done = sum(1 for item in body.get("input") or []
                   if isinstance(item, dict) and item.get("type") == "function_call_output")
        turn = self.script[done] if done < len(self.script) else {"text": self.final_text}
        if "cmd" in turn:
            item = {"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}",
                    "name": self.tool, "arguments": json.dumps({self.arg: turn["cmd"]})}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{done}",
                    "content": [{"type": "output_text", "text": turn["text"]}]}
        response = {"id": f"resp_{done}", "object": "response", "status": "in_progress",
                    "output": []}
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                 "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens_details": {"reasoning_tokens": 0}}
        events = [("response.created", {"response": response}),
                  ("response.output_item.done", {"output_index": 0, "item": item}),
                  ("response.completed", {"response": dict(response, status="completed",
                                                           output=[item], usage=usage)})]
        return b"".join(f"event: {name}\ndata: {json.dumps(dict(data, type=name))}\n\n".encode()
                        for name, data in events)

    def _handler(self) -> type:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.body()
                server.record(body)
                if not self.path.rstrip("/").endswith("/responses"):
                    self.send(b"{}")
                    return
                self.send(server._events(body), "text/event-stream")

        return Handler


def write_config(codex_home: Path, server: ScriptedResponsesServer) -> None:
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{MODEL}"\nmodel_provider = "scripted"\n\n'
        "[model_providers.scripted]\n"
        f'name = "scripted"\nbase_url = "{server.base_url}"\nenv_key = "{KEY_ENV}"\n'
        'wire_api = "responses"\n')


def run_codex(launcher: Path, project: Path, prompt: str, server: ScriptedResponsesServer,
              codex_home: Path, extra_env: Optional[Mapping[str, str]] = None,
              timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    """``codex exec PROMPT`` in ``project`` against ``server``, hooks trusted for this run."""
    write_config(codex_home, server)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "CODEX_")) and "PROXY" not in k.upper()}
    env.update({"CODEX_HOME": str(codex_home), KEY_ENV: "scripted-offline-key",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra_env or {})
    cmd = [str(launcher), "exec", "--trust", "--dangerously-bypass-hook-trust",
           "--dangerously-bypass-approvals-and-sandbox", "--color", "never", prompt]
    return subprocess.run(cmd, cwd=str(project), env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
