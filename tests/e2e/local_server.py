"""A scripted model API on 127.0.0.1 for the e2e harnesses of clients other than Claude Code.

``ScriptedServer`` owns the HTTP server, its thread and the recorded request
bodies; a subclass gives ``_handler()``, whose ``do_POST`` answers from the
script. Stdlib only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List


class ScriptedServer:
    """Start with ``with``; ``root_url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, body: Dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(dict(body))

    def texts(self) -> List[str]:
        """The recorded request bodies as JSON text, for substring assertions."""
        with self._lock:
            return [json.dumps(r) for r in self.requests]

    def _handler(self) -> type:
        raise NotImplementedError


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no log lines, a JSON body reader and a one-call sender."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def body(self) -> Dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def send(self, payload: bytes, ctype: str = "application/json", status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.send(b"{}")
