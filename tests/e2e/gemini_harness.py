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
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from claude_harness import default_cache_dir, npm_install

GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE = "@google/gemini-cli"
ROUTER_ANSWER = {"complexity_reasoning": "a scripted test", "complexity_score": 10}


def ensure_gemini(cache_dir: Union[str, Path, None] = None) -> Optional[Path]:
    """Install the pinned Gemini CLI into ``<cache>/gemini`` (once); its launcher, or None without npm."""
    cache = (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / "gemini"
    return npm_install(cache, GEMINI_PACKAGE, GEMINI_VERSION, cache / "node_modules" / ".bin" / "gemini")


def command(cmd: str) -> Dict[str, str]:
    return {"cmd": cmd}


class ScriptedGeminiServer:
    """``POST /v1beta/models/<model>:streamGenerateContent`` (and ``generateContent``) on 127.0.0.1.

    The turn served is chosen by how many function responses the request
    carries; past the script, ``final_text``. Requests with tools are the
    conversation (kept in :attr:`requests`); others get ``ROUTER_ANSWER``.
    """

    def __init__(self, script: Sequence[Union[str, Mapping[str, str]]] = (),
                 final_text: str = "Done.") -> None:
        self.script = [{"text": t} if isinstance(t, str) else dict(t) for t in script]
        self.final_text = final_text
        self.requests: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> "ScriptedGeminiServer":
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def texts(self) -> List[str]:
        with self._lock:
            return [json.dumps(r) for r in self.requests]

    def _answer(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        if not body.get("tools"):
            part: Dict[str, Any] = {"text": json.dumps(ROUTER_ANSWER)}
        else:
            with self._lock:
                self.requests.append(dict(body))
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

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, payload: bytes, ctype: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._send(b"{}", "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if "enerateContent" not in self.path:  # generateContent, streamGenerateContent
                    self._send(json.dumps({"totalTokens": 10}).encode(), "application/json")
                    return
                answer = json.dumps(server._answer(body if isinstance(body, dict) else {}))
                if "alt=sse" in self.path:
                    self._send(f"data: {answer}\r\n\r\n".encode(), "text/event-stream")
                else:
                    self._send(answer.encode(), "application/json")

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
