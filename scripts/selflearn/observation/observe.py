"""Normalize one coding-agent hook payload into one flat observation.

Owns: telling which agent sent a payload (``detect_agent``) and mapping the
hook dialects of Claude Code, Codex CLI, Gemini CLI, GitHub Copilot and
Cursor onto one observation dict (``normalize``). Pure: no I/O, no clock; the
``hook`` command owns stdin, the kill switch and the locked append.

Every kept string passes through ``redact.redact_text`` before it is cut to
its limit; a cut field's full (redacted) value is remembered as a short
SHA-256 in ``hash[field]``. Keys whose value is empty are left out.

Import invariant: this module is on the hook path. It imports nothing at
module level, and the common path imports only ``redact``. ``json``, ``re``,
``hashlib``, ``argparse`` and ``datetime`` are never imported: JSON strings
inside payloads go through ``fastjson`` (the C scanner), hashes through the
builtin ``_sha2``/``_sha256`` module, each only in the branch that needs it.
Commands and exit codes are parsed with plain string methods.
"""

EVENTS = ("session_start", "session_end", "prompt", "pre_tool", "tool_success",
          "tool_failure", "permission_request", "permission_denied", "notification",
          "stop", "subagent_start", "subagent_stop", "compact", "stop_failure", "other")
AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")

_KINDS = {  # lower-cased tool name -> tool_kind
    "shell": ("bash", "shell", "powershell", "run_shell_command", "exec_command",
              "local_shell", "shell_command", "run_terminal_cmd", "terminal"),
    "edit": ("edit", "multiedit", "replace", "str_replace", "str_replace_editor",
             "str_replace_based_edit_tool", "apply_patch", "notebookedit", "edit_file",
             "search_replace", "delete", "delete_file"),
    "write": ("write", "create", "write_file", "create_file"),
    "read": ("read", "view", "read_file", "read_many_files", "notebookread"),
    "search": ("grep", "glob", "ls", "list_directory", "search_file_content", "grep_search",
               "glob_file_search", "codebase_search", "file_search", "toolsearch"),
    "web": ("webfetch", "websearch", "web_fetch", "web_search", "google_web_search"),
    "task": ("task", "agent"),
}
_KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}

_PRELUDE = {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", ":"}
_WRAPPERS = {"sudo", "time", "nohup", "env", "command", "exec", "nice", "builtin", "timeout"}
_SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "docker-compose",
    "kubectl", "pip", "pip3", "uv", "poetry", "pdm", "hatch", "gh", "dotnet", "mvn", "mvnw",
    "gradle", "gradlew", "terraform", "helm", "apt", "apt-get", "brew", "deno", "rustup",
    "composer", "bundle", "make", "conda", "npx", "bunx", "rake", "mix", "swift", "just",
    "mise", "task", "turbo", "nx", "pixi", "rye"}
_INTERPRETERS = {"python", "node", "ruby", "perl", "bash", "sh", "zsh", "php"}
_RUNNER_SUBS = {"run", "run-script", "exec", "x", "dlx"}
# Programs that run other programs: an error from another program is theirs to report.
RUNNERS = _SUBCOMMAND_TOOLS | _INTERPRETERS | _WRAPPERS | {"xargs", "find", "watch", "parallel"}
_OPTS_WITH_ARG = {"-C", "-c", "-f", "--prefix", "--manifest-path", "--filter", "-p", "-w"}
_FILE_KEYS = ("file_path", "path", "absolute_path", "filePath", "target_file", "notebook_path")
_PATTERN_KEYS = ("pattern", "query", "regex", "glob", "url", "dir_path", "path")
_SUMMARY_KEYS = ("command", "description", "query", "url", "pattern", "file_path", "path",
                 "prompt", "subagent_type", "name")


# --- shared helpers ---------------------------------------------------------

def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


def _first(mapping: dict, keys) -> str:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _loads(text: str):
    """A JSON string found inside a payload, parsed by the C scanner; None if not JSON."""
    from ..storage import fastjson
    try:
        return fastjson.loads(text)
    except ValueError:
        return None


def _hash(text: str) -> str:
    try:
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python <= 3.11
        except ImportError:  # pragma: no cover - builds without the builtin module
            from hashlib import sha256
    return sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


_META = ("exit code", "wall time", "command:", "directory:", "chunk id", "signal:",
         "original token count", "process exited", "process group", "background pids",
         "error: (none)", "output: (empty)", "output:",
         "<untrusted_context>", "</untrusted_context>",  # Gemini CLI wraps tool output in these
         "<shellid:")  # Copilot CLI ends shell output with <shellId: N completed with exit code N>


def _error_head(text: str):
    """The line naming the cause (searched in the whole output, see ``causes``), then the
    first non-empty lines, whitespace collapsed, skipping the ``Exit code:``/``Output:``
    header lines shells wrap output in; 3 lines at most; flags whether anything was dropped."""
    from . import causes
    lines = []
    for line in text.splitlines():
        line = " ".join(line.split())
        low = line.lower()
        if low.startswith("output: ") and low != "output: (empty)":
            line = line[8:]
        elif low.startswith(_META):
            continue
        if line:
            lines.append(line)
    total = len(lines)
    cause = causes.cause_line("\n".join(lines))
    if cause and cause not in lines[:1]:
        lines = [cause] + [ln for ln in lines if ln != cause and not causes.is_noise(ln)]
    head = "\n".join(lines[:3]) or " ".join(text.split())[:300]
    return head, total > min(3, len(lines))


class _Obs(dict):
    """The observation under construction; ``put`` redacts, shapes, cuts and hashes."""

    def __init__(self, agent: str, redact_text):
        super().__init__(agent=agent)
        self._redact = redact_text
        self.command = ""

    def put(self, key: str, value, limit: int = 0, shape: str = "line") -> None:
        """Store ``value``: numbers as they are; strings redacted, then shaped as one
        ``line``, a stripped ``block`` or an error ``head``, then cut to ``limit``."""
        if isinstance(value, (bool, int, float)):
            self[key] = value
            return
        if not isinstance(value, str) or not value:
            return
        full = self._redact(value)
        if shape == "head":
            text, cut = _error_head(full)
        else:
            text, cut = full.strip() if shape == "block" else " ".join(full.split()), False
        if limit and len(text) > limit:
            text, cut = text[:limit - 1].rstrip() + "\u2026", True
        if not text:
            return
        if cut:
            self.setdefault("hash", {})[key] = _hash(full)
        self[key] = text

    def put_error(self, text: str, first_line_code: bool = False) -> None:
        """Error head (``Exit code N`` lines left out) plus the exit code they carry."""
        text = as_str(text)
        code = _exit_code(text, first_line_code)
        if code is not None:
            self.put("exit_code", code)
        self.put_failure_text(text)

    def put_failure_text(self, text: str) -> None:
        """``error`` (cause first), the fixes the output suggests (``hint``), and the family
        of the part of a compound command that the error names."""
        from . import causes
        full = self._redact(text)
        self.put("error", text, 300, "head")
        self.put("hint", "\n".join(causes.hints(full)), 300, "block")
        refine_family(self, full)


def _exit_code(text: str, first_only: bool = False):
    """The int after ``Exit code``/``Exit Code:``/``exit status``/``Process exited with code``
    (also inside Copilot CLI's ``<shellId: 0 completed with exit code 1>``)."""
    for line in text.splitlines()[:1] if first_only else text.splitlines():
        low = line.strip().lower()
        if low.startswith("<shellid:") and " exit code " in low:  # Copilot CLI's last line
            low = low[low.index(" exit code ") + 1:].rstrip(">")
        for prefix in ("exit code", "process exited with code", "exit status"):
            if low.startswith(prefix):
                word = (low[len(prefix):].lstrip(" :=").split() or [""])[0].rstrip(".,;)")
                if word.lstrip("-").isdigit():
                    return int(word)
    return None


# --- commands and tools -----------------------------------------------------

def _segments(command: str) -> list:
    """Split a shell line at ``&&``, ``||``, ``;``, ``|`` and newlines outside quotes (``2>&1``
    and ``&>`` are redirections, not separators)."""
    parts, buf, quote, i = [], [], "", 0
    while i < len(command):
        ch = command[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "&" and (command[i - 1:i] == ">" or command[i + 1:i + 2] == ">"):
            pass  # a redirection (2>&1, &>file), not a separator
        elif ch in ";|&\n":
            parts.append("".join(buf))
            buf = []
            i += 2 if command[i:i + 2] in ("&&", "||") else 1
            continue
        buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()]


segments = _segments  # public: the miners split compound commands the same way


def _is_assignment(token: str) -> bool:
    return "=" in token and token.split("=", 1)[0].isidentifier()


def command_family(command: str) -> str:
    """The command's family: ``npm run build``, ``git push``, ``python3 -m pytest``, ``make``."""
    segments = _segments(command)
    chosen = next((s for s in segments if s.split()[0] not in _PRELUDE),
                  segments[0] if segments else "")
    tokens = [t.strip("'\"") for t in chosen.split()]
    while tokens and (_is_assignment(tokens[0]) or tokens[0] in _WRAPPERS
                      or tokens[0].startswith("-") or tokens[0].replace(".", "").isdigit()):
        tokens.pop(0)
    if not tokens:
        return ""
    prog = tokens[0].rsplit("/", 1)[-1]
    rest = tokens[1:]
    if prog in ("bash", "sh", "zsh") and rest[:1] in (["-c"], ["-lc"]):
        inner = chosen.split(rest[0], 1)[1].strip().strip("'\"")
        return command_family(inner) or prog
    if prog.rstrip("0123456789.") in _INTERPRETERS and rest:
        if rest[0] == "-m" and len(rest) > 1:
            return f"{prog} -m {rest[1]}"
        return f"{prog} {rest[0] if rest[0].startswith('-') else rest[0].rsplit('/', 1)[-1]}"
    if prog not in _SUBCOMMAND_TOOLS:
        return prog
    words, skip = [prog], False
    for token in rest:
        if skip or token.startswith("+") or _is_assignment(token) or token.isdigit():
            skip = False
            continue
        if token.startswith("-"):
            skip = token in _OPTS_WITH_ARG
            continue
        words.append(token)
        if len(words) == 3 or words[1] not in _RUNNER_SUBS or prog == "npx":
            break
    return " ".join(words[:3 if len(words) > 2 and words[1] in _RUNNER_SUBS else 2])


def tool_kind(name: str, mcp: bool = False) -> str:
    low = name.lower()
    if mcp or low.startswith(("mcp__", "mcp:", "mcp_")):
        return "mcp"
    return _KIND_OF.get(low, "other")


def _mcp_family(name: str) -> str:
    if name.startswith("mcp__"):
        parts = name.split("__", 2)
        return "/".join(p for p in parts[1:] if p)
    if name.lower().startswith("mcp:"):
        return "/".join(p for p in name.split(":")[1:] if p)
    return name


def _put_tool(obs: _Obs, name: str, tool_input, mcp: bool = False, server: str = "") -> None:
    """tool, tool_kind, family, args, file and edit_old/edit_new from a tool call."""
    if not name:
        return
    obs.put("tool", name, 200)
    kind = tool_kind(name, mcp or bool(server))
    obs.put("tool_kind", kind)
    if isinstance(tool_input, str):
        parsed = _loads(tool_input) if tool_input[:1] in "{[" else None
        tool_input = parsed if isinstance(parsed, dict) else {"command" if kind == "shell"
                                                              else "input": tool_input}
    ti = as_dict(tool_input)
    if kind == "shell":
        command = ti.get("command") or ti.get("cmd")
        if isinstance(command, list):  # argv form, e.g. ["bash", "-lc", "npm test"]
            command = command[-1] if command[:1] in (["bash"], ["sh"], ["zsh"]) else " ".join(
                str(c) for c in command)
        command = as_str(command)
        obs.command = command  # whole, for the segment a failure names (not stored)
        obs.put("args", command, 200)
        obs.put("family", command_family(command), 120)
        return
    if kind == "mcp":
        family = _mcp_family(name)
        obs.put("family", family if family != name or not server else server + "/" + name, 120)
    path = _first(ti, _FILE_KEYS)
    patch = as_str(ti.get("input") or ti.get("patch") or ti.get("command"))
    if not path and name == "apply_patch":
        path = next((ln.split(":", 1)[1].strip() for ln in patch.splitlines()
                     if ln.startswith(("*** Update File:", "*** Add File:"))), "")
    if kind in ("edit", "write", "read"):
        obs.put("file", path, 300)
        obs.put("args", path, 200)
        if kind == "edit":
            edit = as_dict((ti.get("edits") or [None])[0]) if isinstance(ti.get("edits"), list) else ti
            obs.put("edit_old", _first(edit, ("old_string", "old_str", "oldString")), 200)
            obs.put("edit_new", _first(edit, ("new_string", "new_str", "newString")), 200)
    elif kind in ("search", "web"):
        obs.put("args", _first(ti, _PATTERN_KEYS), 200)
    else:
        obs.put("args", _first(ti, _SUMMARY_KEYS) or patch, 200)


def _response_text(response) -> str:
    """The text of a tool response: Bash stdout/stderr, Gemini llmContent, plain strings."""
    if isinstance(response, str):
        return response
    r = as_dict(response)
    if "stdout" in r or "stderr" in r:
        return "\n".join(x for x in (as_str(r.get("stderr")), as_str(r.get("stdout"))) if x)
    if isinstance(r.get("content"), list):  # MCP CallToolResult
        return "\n".join(as_str(as_dict(c).get("text")) for c in r["content"][:3])
    return _first(r, ("error", "llmContent", "output", "textResultForLlm",
                      "text_result_for_llm", "returnDisplay"))


def _put_result(obs: _Obs, response, trusted: bool = False) -> str:
    """The event of a finished tool call: ``tool_failure`` on a shell exit code != 0 or an
    error result, unless the agent reports failures separately (``trusted``)."""
    r = as_dict(response)
    if isinstance(r.get("interrupted"), bool):
        obs.put("interrupted", r["interrupted"])
    code = next((r[k] for k in ("exit_code", "exitCode", "returnCode")
                 if isinstance(r.get(k), int) and not isinstance(r.get(k), bool)), None)
    if trusted and not (code or r.get("isError") is True or r.get("error")):
        return "tool_success"  # an agent that reports failures apart: only explicit ones count
    text = _response_text(response)
    if code is None and not trusted and obs.get("tool_kind") == "shell" and "stdout" not in r:
        code = _exit_code(text)
    if code is not None:
        obs.put("exit_code", code)
    if not (code or r.get("isError") is True or r.get("error")):
        return "tool_success"
    err = r.get("error")
    obs.put_failure_text(as_str(as_dict(err).get("message") or err) or text)
    return "tool_failure"


def refine_family(obs: dict, output: str = "") -> None:
    """A failed compound shell command belongs to the segment its error names
    (``cd x && make && ./run`` failing with ``./run: ...`` is a failure of ``./run``)."""
    output = output or str(obs.get("error") or "")
    command = getattr(obs, "command", "") or str(obs.get("args") or "")
    if obs.get("tool_kind") != "shell" or not command or not output:
        return
    from . import causes
    segments = _segments(command)
    families = [s.split()[0] if s.split()[0] in _PRELUDE else command_family(s) for s in segments]
    at = causes.failing_segment(segments, families, output)
    if at >= 0 and families[at]:
        obs["family"] = obs._redact(families[at])[:120] if isinstance(obs, _Obs) \
            else families[at][:120]


# --- dialects ---------------------------------------------------------------

_SKIPPED = {"MessageDisplay", "PostToolBatch", "FileChanged", "InstructionsLoaded",
            "BeforeModel", "AfterModel", "BeforeToolSelection", "afterAgentThought",
            "beforeTabFileRead", "afterTabFileEdit"}
_OUTCOMES = {"tool_success": "success", "tool_failure": "failure", "stop_failure": "failure",
             "permission_request": "approval", "permission_denied": "denial"}


def _put_shared(obs: _Obs, p: dict, event: str, name: str, get) -> None:
    """Fields every dialect fills the same way once its event is known."""
    if event == "prompt":
        obs.put("prompt", as_str(p.get("prompt")), 500, "block")
    elif event == "compact":
        obs.put("trigger", as_str(p.get("trigger")))
        obs.put("phase", "post" if name.lower().startswith("post") else "pre")
    elif event == "notification":
        obs.put("reason", as_str(p.get("notification_type")), 200)
        obs.put("args", as_str(p.get("message")), 200)
    elif event in ("subagent_start", "subagent_stop"):
        obs.put("args", as_str(get("agentName", "agent_name")) or _first(
            p, ("agent_type", "subagent_type", "description", "task")), 200)
    elif event == "other" and "reason" not in obs:
        obs.put("reason", name, 200)


_CLAUDE_EVENTS = {
    "PreToolUse": "pre_tool", "PostToolUse": "tool_success",
    "PostToolUseFailure": "tool_failure", "PermissionRequest": "permission_request",
    "PermissionDenied": "permission_denied", "UserPromptSubmit": "prompt",
    "SessionStart": "session_start", "SessionEnd": "session_end", "Stop": "stop",
    "StopFailure": "stop_failure", "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop", "PreCompact": "compact", "PostCompact": "compact",
    "Notification": "notification"}


def _claude(p: dict, obs: _Obs, name: str) -> str:
    """Claude Code (sdk.d.ts ``*HookInput``); Codex CLI sends the same shape."""
    event = _CLAUDE_EVENTS.get(name, "other")
    obs.put("prompt_id", as_str(p.get("prompt_id") or p.get("turn_id")))
    obs.put("tool_use_id", as_str(p.get("tool_use_id")))
    _put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"),
              server=as_str(as_dict(p.get("mcp_server")).get("name")))
    obs.put("duration_ms", p.get("duration_ms"))
    if event == "tool_success":
        event = _put_result(obs, p.get("tool_response"), trusted=obs["agent"] == "claude")
    elif event == "tool_failure":
        obs.put("interrupted", p.get("is_interrupt"))
        obs.put_error(as_str(p.get("error")), first_line_code=True)
    elif event == "stop_failure":
        obs.put("reason", as_str(p.get("error")), 200)
        obs.put_error(as_str(p.get("error_details")) or as_str(p.get("error")))
    elif event == "other":
        obs.put("args", _first(p, ("task_subject", "command_name", "teammate_name",
                                   "mcp_server_name", "name", "worktree_path", "directory",
                                   "file_path", "to_model")), 200)
        obs.put("trigger", as_str(p.get("trigger")))
    if event in ("session_start", "session_end", "permission_denied", "prompt"):
        obs.put("reason", as_str(p.get("reason")), 200)
        obs.put("source", as_str(p.get("source")))
    obs.put("last_message", as_str(p.get("last_assistant_message")), 300, "block")
    return event


_GEMINI_EVENTS = {"BeforeTool": "pre_tool", "AfterTool": "tool_success",
                  "BeforeAgent": "prompt", "AfterAgent": "stop", "SessionStart": "session_start",
                  "SessionEnd": "session_end", "PreCompress": "compact",
                  "Notification": "notification"}


def _gemini(p: dict, obs: _Obs, name: str) -> str:
    """Gemini CLI (``.gemini/settings.json`` hooks; docs/hooks/reference.md)."""
    event = _GEMINI_EVENTS.get(name, "other")
    mcp = as_dict(p.get("mcp_context"))
    _put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"), mcp=bool(mcp))
    if mcp:
        obs.put("family", "/".join(x for x in (as_str(mcp.get("server_name")), as_str(
            mcp.get("tool_name")) or as_str(p.get("tool_name"))) if x), 120)
    if event == "tool_success":
        event = _put_result(obs, p.get("tool_response"))
    obs.put("last_message", as_str(p.get("prompt_response")), 300, "block")
    obs.put("source", as_str(p.get("source")))
    if event == "session_end":
        obs.put("reason", as_str(p.get("reason")), 200)
    return event


_COPILOT_EVENTS = {  # camelCase and VS Code-compatible PascalCase names
    "sessionstart": "session_start", "sessionend": "session_end",
    "userpromptsubmitted": "prompt", "userpromptsubmit": "prompt", "pretooluse": "pre_tool",
    "posttooluse": "tool_success", "posttoolusefailure": "tool_failure",
    "agentstop": "stop", "stop": "stop", "subagentstart": "subagent_start",
    "subagentstop": "subagent_stop", "erroroccurred": "stop_failure", "precompact": "compact",
    "notification": "notification", "permissionrequest": "permission_request"}
_COPILOT_SHAPES = (  # camelCase payloads carry no event name: the first key found decides
    (("toolResult", "tool_result"), "tool_success"), (("toolName", "tool_name"), "pre_tool"),
    (("errorContext", "error_context", "error"), "stop_failure"), (("prompt",), "prompt"),
    (("agentName", "agent_name"), "subagent_start"), (("stopReason", "stop_reason"), "stop"),
    (("trigger",), "compact"), (("source",), "session_start"), (("reason",), "session_end"),
    (("notification_type",), "notification"))


def _copilot(p: dict, obs: _Obs, name: str) -> str:
    """GitHub Copilot CLI / coding agent (``.github/hooks/*.json``), both payload casings."""
    get = lambda camel, snake: p.get(camel, p.get(snake))  # noqa: E731
    event = _COPILOT_EVENTS.get(name.lower()) or next(
        (ev for keys, ev in _COPILOT_SHAPES if any(k in p for k in keys)), "other")
    if not name and event == "pre_tool" and "error" in p:
        event = "tool_failure"
    if not name and event in ("subagent_start", "stop") and "stopReason" in p:
        event = "subagent_stop" if "agentName" in p else "stop"
    obs.put("session_id", as_str(get("sessionId", "session_id")))
    _put_tool(obs, as_str(get("toolName", "tool_name")), get("toolArgs", "tool_input"))
    result = as_dict(get("toolResult", "tool_result"))
    kind = as_str(result.get("resultType") or result.get("result_type"))
    text = as_str(result.get("textResultForLlm") or result.get("text_result_for_llm"))
    error = get("error", "error")
    if kind == "denied":
        event = "permission_denied"
        obs.put("reason", text, 200)
    elif event == "tool_success" and kind in ("failure", "error"):
        event = "tool_failure"
        obs.put_error(text)
    elif event == "tool_success" and obs.get("tool_kind") == "shell":
        event = _put_result(obs, text)
    elif event == "tool_failure":
        obs.put_error(as_str(error))
    elif event == "stop_failure":
        context = as_str(get("errorContext", "error_context"))
        if context and context != "model_call":
            event, obs["outcome"] = "other", "failure"
        obs.put("reason", context or as_str(as_dict(error).get("name")), 200)
        obs.put_error(as_str(as_dict(error).get("message")) or as_str(error))
    elif event == "session_start":
        obs.put("source", as_str(p.get("source")))
        obs.put("prompt", as_str(get("initialPrompt", "initial_prompt")), 500, "block")
    if event in ("session_end", "stop", "subagent_stop"):
        obs.put("reason", as_str(p.get("reason") or get("stopReason", "stop_reason")), 200)
    return event


_CURSOR_EVENTS = {
    "sessionStart": "session_start", "sessionEnd": "session_end", "preToolUse": "pre_tool",
    "postToolUse": "tool_success", "postToolUseFailure": "tool_failure",
    "beforeShellExecution": "pre_tool", "afterShellExecution": "tool_success",
    "beforeMCPExecution": "pre_tool", "afterMCPExecution": "tool_success",
    "beforeReadFile": "pre_tool", "afterFileEdit": "tool_success",
    "beforeSubmitPrompt": "prompt", "stop": "stop", "subagentStart": "subagent_start",
    "subagentStop": "subagent_stop", "preCompact": "compact"}


def _cursor(p: dict, obs: _Obs, name: str) -> str:
    """Cursor agent hooks (``.cursor/hooks.json``; cursor.com/docs/hooks)."""
    event = _CURSOR_EVENTS.get(name, "other")
    obs.put("session_id", as_str(p.get("session_id") or p.get("conversation_id")))
    obs.put("prompt_id", as_str(p.get("generation_id")))
    roots = p.get("workspace_roots")
    if not p.get("cwd") and isinstance(roots, list) and roots:
        obs.put("cwd", as_str(roots[0]), 300)
    obs.put("tool_use_id", as_str(p.get("tool_use_id")))
    if name.endswith("ShellExecution"):
        _put_tool(obs, "Shell", {"command": p.get("command")})
    elif name.endswith("MCPExecution"):
        _put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"), mcp=True,
                  server=as_str(p.get("server_name")))
    elif name in ("beforeReadFile", "afterFileEdit"):
        _put_tool(obs, "Read" if name == "beforeReadFile" else "Edit",
                  {"file_path": p.get("file_path"), "edits": p.get("edits")})
    else:
        _put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"))
    obs.put("duration_ms", p.get("duration_ms", p.get("duration")))
    if event == "tool_success":
        out = p.get("tool_output", p.get("result_json", p.get("output")))
        if isinstance(out, str) and out[:1] == "{":
            out = _loads(out) or out
        code = p.get("exit_code", p.get("exitCode"))
        if code is not None:
            out = dict(as_dict(out) or {"output": out}, exitCode=code)
        event = _put_result(obs, out)
    elif event == "tool_failure":
        failure = as_str(p.get("failure_type"))
        event = "permission_denied" if failure == "permission_denied" else event
        obs.put("reason", failure, 200)
        obs.put("interrupted", p.get("is_interrupt"))
        obs.put_error(as_str(p.get("error_message") or p.get("error")))
    if event in ("stop", "session_end"):
        obs.put("reason", as_str(p.get("status") or p.get("reason")), 200)
    if name == "afterAgentResponse":
        obs.put("last_message", as_str(p.get("text")), 300, "block")
    return event


_DIALECTS = {"claude": _claude, "codex": _claude, "gemini": _gemini, "copilot": _copilot,
             "cursor": _cursor}
_GEMINI_ONLY = {"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "PreCompress",
                "BeforeModel", "AfterModel", "BeforeToolSelection"}
_COPILOT_KEYS = ("sessionId", "toolName", "toolArgs", "toolResult", "errorContext",
                 "initialPrompt", "transcriptPath", "agentName", "stopReason", "tool_result",
                 "error_context", "initial_prompt", "stop_reason", "agent_name")


def detect_agent(payload: dict) -> str:
    """Which agent sent ``payload``, from its field names, casing and event names."""
    p = as_dict(payload)
    name = as_str(p.get("hook_event_name"))
    if "conversation_id" in p or "generation_id" in p or "workspace_roots" in p \
            or "cursor_version" in p or (name[:1].islower() and name in _CURSOR_EVENTS
                                         and "timestamp" not in p):
        return "cursor"
    if name in _GEMINI_ONLY or "mcp_context" in p:
        return "gemini"
    if any(k in p for k in _COPILOT_KEYS) or (name[:1].islower() and name):
        return "copilot"
    if isinstance(p.get("timestamp"), str):  # Gemini and Copilot's VS Code form stamp events
        shared = name in ("SessionStart", "SessionEnd", "Notification")
        return "gemini" if shared and "transcript_path" in p else "copilot"
    transcript, tool_use_id = as_str(p.get("transcript_path")), as_str(p.get("tool_use_id"))
    if "prompt_id" in p or "/.claude/" in transcript or tool_use_id.startswith("toolu_"):
        return "claude"
    if "turn_id" in p or ("transcript_path" in p and p["transcript_path"] is None) \
            or "/.codex/" in transcript or tool_use_id.startswith("call_"):
        return "codex"
    return "claude"


def normalize(payload: dict, agent: str, event: str = ""):
    """One observation from one hook payload, or None when it carries nothing worth storing.

    ``agent`` is one of ``AGENTS`` or ``auto``; ``event`` optionally names the
    hook event when the payload does not (Copilot's camelCase payloads).
    """
    from ..storage import redact
    p = as_dict(payload)
    if agent not in _DIALECTS:
        agent = detect_agent(p)
    name = as_str(p.get("hook_event_name")) or event
    if name in _SKIPPED or not (name or agent == "copilot"):
        return None
    obs = _Obs(agent, redact.redact_text)
    obs.put("session_id", as_str(p.get("session_id")))
    kind = obs["event"] = _DIALECTS[agent](p, obs, name)
    get = lambda camel, snake: p.get(camel, p.get(snake))  # noqa: E731
    _put_shared(obs, p, kind, name, get)
    obs.put("cwd", as_str(p.get("cwd")), 300)
    obs.put("permission_mode", as_str(p.get("permission_mode")))
    obs.put("model", as_str(p.get("model")), 120)
    if kind in _OUTCOMES:
        obs.setdefault("outcome", _OUTCOMES[kind])
    return dict(obs)
