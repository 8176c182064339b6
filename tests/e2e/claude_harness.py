"""End-to-end harness: run the real Claude Code client offline.

The real ``claude`` binary (pinned npm package ``@anthropic-ai/claude-code``)
is pointed at a scripted Messages API server on 127.0.0.1 through
``ANTHROPIC_BASE_URL``.  The server plays back a script of assistant turns
(text or ``tool_use`` blocks) as proper SSE streams, so the client executes
its real tools and fires the real hooks from ``<project>/.claude/settings.json``.

Stdlib only.  Typical use::

    binary = ensure_claude()
    if binary is None:
        pytest.skip("npm not on PATH")
    with ScriptedAnthropicServer([
        tool_use("Bash", {"command": "exit 3"}),
        "All done.",
    ]) as server:
        proc = run_claude(binary, project, "do it", server, home)
    assert any("exit 3" in json.dumps(r.body) for r in server.requests)
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

CLAUDE_CODE_VERSION = "2.1.197"
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CACHE_ENV = "SELF_LEARNING_E2E_CACHE"
DEFAULT_CACHE = Path("~/.cache/self-learning-skills/e2e")

# Platform package that ships the native binary, relative to node_modules.
_PLATFORM_BINARY = Path("@anthropic-ai") / "claude-code-linux-x64" / "claude"
# Same binary, as placed by the main package (hard link in 2.1.197).
_WRAPPER_BINARY = Path("@anthropic-ai") / "claude-code" / "bin" / "claude.exe"

_install_lock = threading.Lock()

REPO = Path(__file__).resolve().parents[2]


def copy_skill(dest: Path) -> Path:
    """The skill to ``dest`` as the README tells a user to copy it (``install-skill``)."""
    subprocess.run([sys.executable, str(REPO / "scripts" / "self_learning.py"), "install-skill",
                    "--to", str(dest)], check=True, capture_output=True)
    return dest


# --------------------------------------------------------------------------
# Installing the client
# --------------------------------------------------------------------------

def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else DEFAULT_CACHE.expanduser()


def _find_binary(cache_dir: Path) -> Optional[Path]:
    nm = cache_dir / "node_modules"
    others = sorted((nm / "@anthropic-ai").glob("claude-code-*/claude"))
    for cand in [nm / _PLATFORM_BINARY, *others, nm / _WRAPPER_BINARY]:
        if cand.is_file() and os.access(cand, os.X_OK) and cand.stat().st_size > 1_000_000:
            return cand
    return None


def ensure_claude(cache_dir: Union[str, Path, None] = None, *, timeout: float = 600) -> Optional[Path]:
    """Install the pinned Claude Code into ``cache_dir`` (once); return the binary.

    Returns ``None`` only when ``npm`` is not on PATH.  Raises
    ``RuntimeError`` when npm is there but the install fails (a real error
    the test run should show, not hide).
    """
    cache = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    return npm_install(cache, CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION,
                       lambda: _find_binary(cache), timeout)


def npm_install(cache: Path, package: str, version: str, find: Callable[[], Optional[Path]],
                timeout: float = 600) -> Optional[Path]:
    """``package@version`` into ``cache`` (once, under a lock); what ``find()`` then returns.

    Returns ``None`` only when ``npm`` is not on PATH; raises ``RuntimeError``
    when npm is there but the install fails.
    """
    def installed() -> Optional[Path]:
        pkg = cache / "node_modules" / package / "package.json"
        try:
            same = json.loads(pkg.read_text()).get("version") == version
        except (OSError, ValueError):
            return None
        return find() if same else None
    if installed():
        return installed()
    npm = shutil.which("npm")
    if npm is None:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    with _install_lock, open(cache / ".install.lock", "w") as lock:
        try:  # serialise concurrent installs (e.g. pytest-xdist workers)
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)
        except (ImportError, OSError):
            pass
        if installed():
            return installed()
        if not (cache / "package.json").exists():
            (cache / "package.json").write_text(json.dumps(
                {"name": "self-learning-skills-e2e", "private": True}, indent=2) + "\n")
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save",
                               "--loglevel=error", f"{package}@{version}"], cwd=str(cache),
                              capture_output=True, text=True, timeout=timeout)
        binary = installed()
        if proc.returncode != 0 or binary is None:
            raise RuntimeError(f"npm install of {package}@{version} into {cache} failed "
                               f"(rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return binary


def existing(path: Path) -> Callable[[], Optional[Path]]:
    """A ``find`` for :func:`npm_install`: ``path`` once it exists."""
    return lambda: path if path.exists() else None


# --------------------------------------------------------------------------
# Script model
# --------------------------------------------------------------------------

@dataclass
class ToolUse:
    name: str
    input: Dict[str, Any]
    id: Optional[str] = None


@dataclass
class Turn:
    """One assistant message: optional text followed by zero or more tool uses."""
    text: str = ""
    tool_uses: List[ToolUse] = field(default_factory=list)

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_uses else "end_turn"


@dataclass
class ApiError:
    """A script item answered with an HTTP error instead of a message.

    4xx other than 408/409/429 are not retried by the client, so
    ``ApiError(400)`` ends the turn at once (fires ``StopFailure``).
    """
    status: int = 400
    error_type: str = "invalid_request_error"
    message: str = "scripted error"


def tool_use(name: str, input: Optional[Dict[str, Any]] = None, *, text: str = "") -> Turn:
    """A turn that calls a single tool."""
    return Turn(text=text, tool_uses=[ToolUse(name, dict(input or {}))])


def tool_uses(*calls: Sequence[Any], text: str = "") -> Turn:
    """A turn calling several tools in parallel: ``tool_uses(("Read", {...}), ...)``."""
    return Turn(text=text, tool_uses=[ToolUse(n, dict(i)) for n, i in calls])


ScriptItem = Union[str, Turn, ToolUse, "ApiError", Mapping[str, Any], Sequence[Any]]


@dataclass
class Reply:
    """A turn written from the request it answers: ``make(body)`` returns a script item
    (a scripted agent that reads what a hook told it)."""
    make: Callable[[Mapping[str, Any]], Any]


def _to_turn(item: ScriptItem) -> "Union[Turn, ApiError, Reply]":
    if isinstance(item, (Turn, ApiError, Reply)):
        return item
    if isinstance(item, str):
        return Turn(text=item)
    if isinstance(item, ToolUse):
        return Turn(tool_uses=[item])
    if isinstance(item, Mapping):
        if "name" in item:  # a single tool use {"name":..., "input":...}
            return Turn(tool_uses=[ToolUse(item["name"], dict(item.get("input") or {}),
                                           item.get("id"))])
        calls = item.get("tool_use") or item.get("tool_uses") or []
        if isinstance(calls, Mapping):
            calls = [calls]
        return Turn(text=item.get("text", ""),
                    tool_uses=[c if isinstance(c, ToolUse) else
                               ToolUse(c["name"], dict(c.get("input") or {}), c.get("id"))
                               for c in calls])
    # a sequence of tool uses
    turns = [_to_turn(x) for x in item]
    return Turn(tool_uses=[tu for t in turns for tu in t.tool_uses])


# --------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------

@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: Dict[str, str]
    body: Any  # parsed JSON, raw text, or None
    kind: str = "other"  # "main", "side", "count_tokens", "other"
    turn_index: Optional[int] = None  # script turn served to a "main" request

    def text(self) -> str:
        """The JSON body as a string, for substring assertions."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body)


_REDACTED_HEADERS = {"authorization", "x-api-key", "cookie", "proxy-authorization"}


# The compaction request (``/compact`` or auto-compact) is sent *with* the
# full tool list (it runs as a forked agent), so it is recognised by its
# instruction text in the last user message instead.
_COMPACTION_MARKERS = ("create a detailed summary of the conversation",
                       "Respond with TEXT ONLY. Do NOT call any tools")


def _last_user_text(body: Mapping[str, Any]) -> str:
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict))
    return ""


def _is_subagent(body: Mapping[str, Any]) -> bool:
    """Subagent (Agent tool) requests mark the billing header system block."""
    system = body.get("system")
    if isinstance(system, str):
        return "cc_is_subagent=true" in system
    return any(isinstance(b, dict) and "cc_is_subagent=true" in str(b.get("text", ""))
               for b in system or [])


def _is_compaction(body: Mapping[str, Any]) -> bool:
    text = _last_user_text(body)
    return any(marker in text for marker in _COMPACTION_MARKERS)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class ScriptedAnthropicServer:
    """A scripted Anthropic Messages API on 127.0.0.1 (port chosen by the OS).

    ``script`` is a list of assistant turns served, in order, to the *main
    conversation* requests (``POST /v1/messages`` carrying ``tools``).  Each
    item is a string (text turn), a :class:`Turn`, a :class:`ToolUse`, a
    ``{"name":..., "input":...}`` dict, or a list of those (parallel tool
    uses).  The turn served is chosen by how many assistant messages the
    request already holds, so client retries get the same answer.  When the
    script is exhausted a final text turn (``final_text``) is served.
    Subagent requests (Agent tool; their system prompt carries
    ``cc_is_subagent=true``) are served ``subagent_script`` the same way,
    then ``subagent_text``.

    Requests that are not the main conversation get a plain text reply:
    compaction requests (``compact_text``, becomes PostCompact's
    ``compact_summary``), tool-less side queries such as titles or quota
    checks (``side_text``);
    ``/count_tokens`` gets a token estimate; anything else a ``{}`` 200.
    Every request is recorded in :attr:`requests`.
    """

    def __init__(self, script: Iterable[ScriptItem] = (), *,
                 final_text: str = "Done.", side_text: str = "Scripted session",
                 compact_text: str = ("<analysis>scripted</analysis>\n"
                                      "<summary>Scripted compaction summary.</summary>"),
                 subagent_script: Iterable[ScriptItem] = (),
                 subagent_text: str = "Subagent finished.",
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.script: List[Union[Turn, ApiError]] = [_to_turn(x) for x in script]
        self.subagent_script: List[Union[Turn, ApiError]] = [_to_turn(x) for x in subagent_script]
        self.subagent_text = subagent_text
        self.final_text = final_text
        self.side_text = side_text
        self.compact_text = compact_text
        self.requests: List[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle ---------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ScriptedAnthropicServer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever,
                                            name="scripted-anthropic", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> "ScriptedAnthropicServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- queries for tests --------------------------------------------------
    @property
    def main_requests(self) -> List[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == "main"]

    def bodies_containing(self, needle: str) -> List[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if needle in r.text()]

    # -- classification / responses -----------------------------------------
    @staticmethod
    def classify(path: str, body: Any) -> str:
        """``main``|``subagent``|``compact``|``side``|``count_tokens``|``other``."""
        p = path.split("?", 1)[0].rstrip("/")
        if p.endswith("/count_tokens"):
            return "count_tokens"
        if p.endswith("/v1/messages") and isinstance(body, dict):
            if _is_compaction(body):
                return "compact"
            if _is_subagent(body):
                return "subagent"
            return "main" if body.get("tools") else "side"
        return "other"

    def turn_for(self, body: Mapping[str, Any], *, subagent: bool = False
                 ) -> "tuple[int, Union[Turn, ApiError]]":
        """Script turn for a request: indexed by its count of assistant messages."""
        msgs = body.get("messages") or []
        idx = sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "assistant")
        script = self.subagent_script if subagent else self.script
        if idx < len(script):
            turn = script[idx]
            return idx, _to_turn(turn.make(body)) if isinstance(turn, Reply) else turn
        return idx, Turn(text=self.subagent_text if subagent else self.final_text)

    def _message_events(self, turn: Turn, model: str, turn_index: Optional[int]) -> List[bytes]:
        msg_id = f"msg_e2e_{next(self._ids):04d}"
        events = [_sse("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})]
        index = 0
        if turn.text or not turn.tool_uses:
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
            events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta",
                                                                 "text": turn.text or self.final_text}}))
            events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        for k, tu in enumerate(turn.tool_uses):
            tid = tu.id or f"toolu_e2e_{turn_index if turn_index is not None else 'x'}_{k}"
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "tool_use", "id": tid,
                                                                         "name": tu.name, "input": {}}}))
            payload = json.dumps(tu.input)
            # split the JSON in two chunks to exercise partial accumulation
            mid = len(payload) // 2
            for chunk in (payload[:mid], payload[mid:]):
                if chunk:
                    events.append(_sse("content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": chunk}}))
            events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        events.append(_sse("message_delta", {"type": "message_delta",
                                             "delta": {"stop_reason": turn.stop_reason,
                                                       "stop_sequence": None},
                                             "usage": {"output_tokens": 20}}))
        events.append(_sse("message_stop", {"type": "message_stop"}))
        return events

    def _message_json(self, turn: Turn, model: str, turn_index: Optional[int]) -> Dict[str, Any]:
        content: List[Dict[str, Any]] = []
        if turn.text or not turn.tool_uses:
            content.append({"type": "text", "text": turn.text or self.final_text})
        for k, tu in enumerate(turn.tool_uses):
            content.append({"type": "tool_use",
                            "id": tu.id or f"toolu_e2e_{turn_index}_{k}",
                            "name": tu.name, "input": tu.input})
        return {"id": f"msg_e2e_{next(self._ids):04d}", "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": turn.stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 20}}

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "ScriptedAnthropic/1.0"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _read_body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if not raw:
                    return None
                try:
                    return json.loads(raw)
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _record(self, body: Any) -> RecordedRequest:
                headers = {k.lower(): ("<redacted>" if k.lower() in _REDACTED_HEADERS else v)
                           for k, v in self.headers.items()}
                rec = RecordedRequest(self.command, self.path, headers, body,
                                      server.classify(self.path, body))
                with server._lock:
                    server.requests.append(rec)
                return rec

            def _send(self, status: int, payload: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_e2e_{next(server._ids):04d}")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
                self.wfile.flush()

            def _json(self, obj: Any, status: int = 200) -> None:
                self._send(status, json.dumps(obj).encode(), "application/json")

            def do_HEAD(self) -> None:
                self._record(None)
                self._send(200, b"", "text/plain")

            def do_GET(self) -> None:
                self._record(None)
                self._json({})

            def do_POST(self) -> None:
                body = self._read_body()
                rec = self._record(body)
                if rec.kind == "count_tokens":
                    est = max(1, len(rec.text()) // 4)
                    self._json({"input_tokens": est})
                    return
                if rec.kind not in ("main", "subagent", "side", "compact"):
                    self._json({})
                    return
                model = body.get("model") or "claude-sonnet-4-5"
                if rec.kind in ("main", "subagent"):
                    idx, turn = server.turn_for(body, subagent=rec.kind == "subagent")
                    rec.turn_index = idx
                    if isinstance(turn, ApiError):
                        self._json({"type": "error", "error": {"type": turn.error_type,
                                                               "message": turn.message}},
                                   status=turn.status)
                        return
                elif rec.kind == "compact":
                    idx, turn = None, Turn(text=server.compact_text)
                else:
                    idx, turn = None, Turn(text=server.side_text)
                if body.get("stream"):
                    self._send(200, b"".join(server._message_events(turn, model, idx)),
                               "text/event-stream")
                else:
                    self._json(server._message_json(turn, model, idx))

        return Handler


# --------------------------------------------------------------------------
# Running the client
# --------------------------------------------------------------------------

_STRIP_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_BEARER", "VERTEX", "MCP_")
_STRIP_NAMES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "CLAUDECODE", "DISABLE_PROMPT_CACHING"}


def claude_env(server: ScriptedAnthropicServer, home: Union[str, Path],
               extra_env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Environment for an offline, isolated client run."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_STRIP_PREFIXES) and k not in _STRIP_NAMES}
    home = str(home)
    env.update({
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-e2e-offline-test-key",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "IS_SANDBOX": "1",  # allows --dangerously-skip-permissions as root
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        # fail fast on scripted 5xx/429 instead of backing off for minutes
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "CI": env.get("CI", "true"),
        "TERM": "dumb",
    })
    if extra_env:
        env.update(extra_env)
    return env


def run_claude(binary: Union[str, Path], project_dir: Union[str, Path], prompt: str,
               server: ScriptedAnthropicServer, home: Union[str, Path],
               extra_env: Optional[Mapping[str, str]] = None, timeout: float = 120,
               extra_args: Sequence[str] = (),
               skip_permissions: bool = True) -> "subprocess.CompletedProcess[str]":
    """Run ``claude -p PROMPT`` in ``project_dir`` against ``server``.

    ``home`` becomes ``$HOME`` (the transcript lands in
    ``home/.claude/projects/<mangled project path>/<session>.jsonl``). Without
    ``skip_permissions`` a call that needs permission is refused: nobody is there to ask.
    """
    Path(home).mkdir(parents=True, exist_ok=True)
    skip = ["--dangerously-skip-permissions"] if skip_permissions else []
    cmd = [str(binary), "-p", prompt, *skip, "--output-format", "text", *extra_args]
    return subprocess.run(cmd, cwd=str(project_dir), env=claude_env(server, home, extra_env),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def find_transcripts(home: Union[str, Path]) -> List[Path]:
    """All transcript files the client wrote under ``home/.claude/projects``."""
    root = Path(home) / ".claude" / "projects"
    return sorted(root.rglob("*.jsonl")) if root.is_dir() else []


# --------------------------------------------------------------------------
# Hook logging helpers
# --------------------------------------------------------------------------

#: Hook events Claude Code 2.1.197 is known to fire in print mode with the
#: scripted server (see tests/data/hooks/claude-real/).  ``HOOK_EVENTS`` in
#: the agent SDK lists more (Notification, PermissionRequest, ...), which need
#: interactive/permission modes and never fire here.
OBSERVED_EVENTS = (
    "SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "CwdChanged",
    "TaskCreated", "SubagentStart", "SubagentStop", "MessageDisplay", "PreCompact",
    "PostCompact", "Stop", "StopFailure", "SessionEnd",
)

#: Every event name in the SDK's ``HOOK_EVENTS`` (sdk.d.ts, agent SDK 0.3.330).
ALL_HOOK_EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
    "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop",
    "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
    "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup",
    "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult",
    "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged",
    "FileChanged", "DirectoryAdded", "MessageDisplay",
)


def hook_logger_command(log_dir: Union[str, Path], event: str, echo: Optional[str] = None) -> str:
    """Shell command that appends its stdin (one JSON line) to ``log_dir/<event>.jsonl``.

    With ``echo``, the command then prints that text on stdout (for
    SessionStart / UserPromptSubmit this becomes model context).
    """
    import shlex
    target = str(Path(log_dir) / f"{event}.jsonl")
    code = ("import sys,json;raw=sys.stdin.read();"
            "line=json.dumps(json.loads(raw)) if raw.strip() else '{}';"
            f"open({target!r},'a').write(line+chr(10))")
    cmd = f"{shlex.quote(sys_executable())} -c {shlex.quote(code)}"
    if echo is not None:
        cmd += f" && printf '%s\\n' {shlex.quote(echo)}"
    return cmd


def sys_executable() -> str:
    import sys
    return sys.executable or shutil.which("python3") or "python3"


def hook_logger_settings(log_dir: Union[str, Path], events: Iterable[str] = ALL_HOOK_EVENTS,
                         echo: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """A ``.claude/settings.json`` dict logging every payload of ``events``."""
    echo = echo or {}
    return {"hooks": {ev: [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook_logger_command(log_dir, ev, echo.get(ev)),
         "timeout": 30}]}] for ev in events}}


def read_hook_log(log_dir: Union[str, Path]) -> Dict[str, List[Dict[str, Any]]]:
    """``{event: [payload, ...]}`` from a directory written by the logger hooks."""
    out: Dict[str, List[Dict[str, Any]]] = {}
    for f in sorted(Path(log_dir).glob("*.jsonl")):
        out[f.stem] = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return out


# --------------------------------------------------------------------------
# Fixture capture:  python3 tests/e2e/claude_harness.py --capture [REPO_ROOT]
# --------------------------------------------------------------------------

def _stabilize(text: str, root: Path, home: Path) -> str:
    """Replace temp paths: home -> /home/user, root -> /tmp (project -> /tmp/project)."""
    import re
    mangled_root = re.sub(r"[^A-Za-z0-9]", "-", str(root))
    text = text.replace(sys_executable(), "python3")
    text = text.replace(str(home), "/home/user")
    text = text.replace(mangled_root + "-project", "-tmp-project")
    return text.replace(str(root), "/tmp")


def capture_fixtures(repo_root: Union[str, Path], cache_dir: Union[str, Path, None] = None) -> Dict[str, Any]:
    """Run scripted sessions; write real hook payloads and a real transcript.

    Writes ``tests/data/hooks/claude-real/<Event>.json`` (one payload per
    observed event) and ``tests/data/transcripts/claude-real-session.jsonl``.
    """
    import tempfile
    repo_root = Path(repo_root)
    binary = ensure_claude(cache_dir)
    if binary is None:
        raise SystemExit("npm not on PATH")
    root = Path(tempfile.mkdtemp(prefix="clcap"))
    project, home, log = root / "project", root / "home", root / "hooklog"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / "sub").mkdir()
    log.mkdir()
    (project / "CLAUDE.md").write_text("# Project notes\nUse python3 for scripts.\n")
    (project / ".claude" / "commands" / "greet.md").write_text("Say hello to $ARGUMENTS.\n")
    settings = hook_logger_settings(log, ALL_HOOK_EVENTS,
                                    echo={"SessionStart": "session-start context line"})
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    notes = str(project / "notes.txt")
    sessions = [
        # (script, prompt, extra args) -- the first one's transcript is kept
        ([tool_use("Bash", {"command": "exit 3", "description": "Fail on purpose"}),
          tool_use("Write", {"file_path": notes, "content": "hello\nworld\n"}),
          tool_use("Edit", {"file_path": notes, "old_string": "world", "new_string": "there"}),
          tool_use("Read", {"file_path": notes}),
          "All done: notes.txt now says hello there."],
         "Try the failing command, then write, edit and read notes.txt", ()),
        ([tool_use("TaskCreate", {"subject": "Tidy notes", "description": "Tidy the notes file"}),
          tool_use("Bash", {"command": "cd sub && pwd", "description": "Enter sub"}),
          tool_use("Agent", {"description": "Look around", "prompt": "List the files.",
                             "subagent_type": "general-purpose"}),
          "Finished."],
         "Create a task, enter sub and ask an agent", ()),
        ([], "/compact", ("--continue",)),
        (["Hello, world!"], "/greet world", ()),
        ([ApiError(500, "api_error", "Internal server error")], "This request fails", ()),
        (["Initialised."], "Run setup", ("--init",)),
    ]
    timings = []
    first_transcript: Optional[Path] = None
    for script, prompt, args in sessions:
        before = set(find_transcripts(home))
        with ScriptedAnthropicServer(script) as server:
            t0 = time.monotonic()
            run_claude(binary, project, prompt, server, home, extra_args=args)
            timings.append(round(time.monotonic() - t0, 2))
        if first_transcript is None:
            new = [p for p in find_transcripts(home) if p not in before and "subagents" not in p.parts]
            first_transcript = new[0] if new else None
    logged = read_hook_log(log)
    prefer = {"PostToolUse": lambda p: p.get("tool_name") == "Edit",
              "SubagentStop": lambda p: p.get("agent_type") == "general-purpose"}
    out_dir = repo_root / "tests" / "data" / "hooks" / "claude-real"
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for event, payloads in logged.items():
        pick = next((p for p in payloads if prefer.get(event, lambda _: True)(p)), payloads[0])
        text = _stabilize(json.dumps(pick, indent=2, ensure_ascii=False), root, home)
        (out_dir / f"{event}.json").write_text(text + "\n")
        written.append(event)
    if first_transcript is not None:
        tdir = repo_root / "tests" / "data" / "transcripts"
        tdir.mkdir(parents=True, exist_ok=True)
        (tdir / "claude-real-session.jsonl").write_text(
            _stabilize(first_transcript.read_text(), root, home))
    shutil.rmtree(root, ignore_errors=True)
    return {"events": sorted(written), "timings_s": timings,
            "transcript": str(first_transcript) if first_transcript else None}


if __name__ == "__main__":  # pragma: no cover - developer tool
    import sys
    if len(sys.argv) >= 2 and sys.argv[1] == "--capture":
        repo = sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2]
        print(json.dumps(capture_fixtures(repo), indent=2))
    else:
        print(f"usage: {sys.argv[0]} --capture [REPO_ROOT]")


def wait_for_learning(store: Path, after: float, timeout: float = 90.0) -> dict:
    """The store's learning state once a run the hooks started in the background, later than
    ``after`` (epoch seconds, as the fake clock stamps it), has ended: nobody types a command."""
    import fcntl
    import time
    path = Path(store) / "maintain_state.json"
    deadline = time.time() + timeout
    while time.time() < deadline:
        state = json.loads(path.read_text()) if path.exists() else {}
        if state.get("last_run_epoch", 0) > after:
            try:
                fd = os.open(str(Path(store) / "maintain.lock"), os.O_RDONLY)
            except FileNotFoundError:
                return state
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return state
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.2)
    raise AssertionError(f"no learning run after {after} in {store}")
