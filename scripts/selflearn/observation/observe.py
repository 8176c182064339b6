"""Normalize one coding-agent hook payload into one flat observation.

Owns telling which agent sent a payload (``detect_agent``) and mapping the hook dialects of
Claude Code, Codex CLI, Gemini CLI, GitHub Copilot and Cursor onto one observation dict
(``normalize``): event names and payload shapes. What one tool call says is read by
``toolcall`` (``Obs``, kind, args, result, error head); shell command lines by ``commands``.
Pure: no I/O, no clock; the ``hook`` command owns stdin, the kill switch and the locked
append. Import invariant: on the hook path, so it imports only those two at module level
(``redact`` when a payload is normalized); ``json``, ``re``, ``hashlib``, ``argparse``,
``typing`` and ``datetime`` are never imported.
"""

from .commands import RUNNERS, command_family, refine_family, segments  # noqa: F401 (API)
from .toolcall import Obs, as_dict, as_str, first, loads, put_result, put_tool  # noqa: F401
from .toolcall import WRAPPED, tool_kind  # noqa: F401 (API)

EVENTS = ("session_start", "session_end", "prompt", "pre_tool", "tool_success",
          "tool_failure", "permission_request", "permission_denied", "notification",
          "stop", "subagent_start", "subagent_stop", "compact", "stop_failure", "other")
AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")



SKIPPED = {"MessageDisplay", "FileChanged", "InstructionsLoaded",
            "BeforeModel", "AfterModel", "BeforeToolSelection", "afterAgentThought",
            "beforeTabFileRead", "afterTabFileEdit"}
# Gemini CLI fires PreCompress before every model turn and only then checks whether the history
# is long enough to compress; no hook reports the outcome. A /compress (trigger "manual") always
# compresses: that one is a compaction, the automatic ones are questions.
ASKS_ONLY = ("PreCompress", "auto")
# A permission request is not a decision: it gets no outcome. The decision is the call's result,
# or a refusal: what a refused call's result starts with (Claude Code's interactive prompt, its
# headless runs with nobody to ask, a deny rule; Codex's prompt).
OUTCOMES = {"tool_success": "success", "tool_failure": "failure", "stop_failure": "failure",
            "permission_denied": "denial"}
REFUSALS = ("The user doesn't want to proceed with this tool use",
            "This command requires approval", "Claude requested permissions to ",
            "exec command rejected by user", "patch rejected by user")


def put_shared(obs: Obs, p: dict, event: str, name: str, get) -> None:
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
        obs.put("args", as_str(get("agentName", "agent_name")) or first(
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


def refusal(text: str) -> str:
    """The reason, when a call's result says the permission system refused it; else ''."""
    line = text.strip().split("\n", 1)[0]
    if line.startswith(REFUSALS) or (line.startswith("Permission to ") and " has been denied" in line):
        return line.split(". ", 1)[0].rstrip(".")
    return ""


def _reported(p: dict, name: str):
    """A Claude Code or Codex payload as the result it reports: a call that was refused as
    the PermissionDenied it is, one the client turned down as the failure it is.

    Claude Code fires no hook for a call refused at its prompt: PostToolBatch lists it
    (``tool_calls``, with every other call of the batch) with the refusal as its result
    (``ingest-transcripts`` hands a transcript's refusal on the same way). A PostToolUse or
    PostToolUseFailure whose result reads like a refusal is a tool's output, and keeps no more
    than the refusal's line; and the hook keeps no refusal PostToolBatch lists for a call that
    came to a result of its own (``hook._answered``). A call the client turned down before it
    ran (``<tool_use_error>Unknown skill: commit</tool_use_error>``: no PreToolUse, no
    PostToolUseFailure) is only in PostToolBatch too: it comes back as the PostToolUseFailure
    it is. Other batches are skipped (None); other payloads come back as they are.
    """
    calls = p.get("tool_calls") if name == "PostToolBatch" else [p]
    calls = [as_dict(c) for c in calls] if isinstance(calls, list) else []
    texts = [as_str(c.get("error")) or as_str(c.get("tool_response")) for c in calls]
    for call, text in zip(calls, texts):
        reason = refusal(text)
        if reason:  # the client's listing keeps the whole text: the person's words after "the
            # user said:" teach most; a tool's result that reads like a refusal keeps its reason
            return dict(p, hook_event_name="PermissionDenied", reason=reason, error=text if
                        name == "PostToolBatch" else reason, **_call(call))
    if name != "PostToolBatch":
        return p
    return next((dict(p, hook_event_name="PostToolUseFailure", error=text, **_call(call))
                 for call, text in zip(calls, texts) if text.startswith(WRAPPED[0])), None)


def _call(call: dict) -> dict:
    return {k: call.get(k) for k in ("tool_name", "tool_input", "tool_use_id")}


def _claude(p: dict, obs: Obs, name: str) -> str:
    """Claude Code (sdk.d.ts ``*HookInput``); Codex CLI sends the same shape."""
    event = _CLAUDE_EVENTS.get(name, "other")
    obs.put("prompt_id", as_str(p.get("prompt_id") or p.get("turn_id")))
    obs.put("tool_use_id", as_str(p.get("tool_use_id")))
    put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"),
              server=as_str(as_dict(p.get("mcp_server")).get("name")))
    obs.put("duration_ms", p.get("duration_ms"))
    if event == "tool_success":
        event = put_result(obs, p.get("tool_response"), trusted=obs["agent"] == "claude")
    elif event == "tool_failure":
        obs.put("interrupted", p.get("is_interrupt"))
        obs.put_error(as_str(p.get("error")), first_line_code=True)
    elif event == "stop_failure":
        obs.put("reason", as_str(p.get("error")), 200)
        obs.put_error(as_str(p.get("error_details")) or as_str(p.get("error")))
    elif event == "other":
        obs.put("args", first(p, ("task_subject", "command_name", "teammate_name",
                                   "mcp_server_name", "name", "worktree_path", "directory",
                                   "file_path", "to_model")), 200)
        obs.put("trigger", as_str(p.get("trigger")))
    if event == "permission_denied":
        obs.put("error", as_str(p.get("error")), 300, "block")
    if event in ("session_start", "session_end", "permission_denied", "prompt"):
        obs.put("reason", as_str(p.get("reason")), 200)
        obs.put("source", as_str(p.get("source")))
    obs.put("last_message", as_str(p.get("last_assistant_message")), 300, "block")
    if event == "stop" and p.get("stop_hook_active") is True:  # we asked to go on already
        obs.put("stop_hook_active", True)
    return event


_GEMINI_EVENTS = {"BeforeTool": "pre_tool", "AfterTool": "tool_success",
                  "BeforeAgent": "prompt", "AfterAgent": "stop", "SessionStart": "session_start",
                  "SessionEnd": "session_end", "PreCompress": "compact",
                  "Notification": "notification"}


def _gemini(p: dict, obs: Obs, name: str) -> str:
    """Gemini CLI (``.gemini/settings.json`` hooks; docs/hooks/reference.md)."""
    event = _GEMINI_EVENTS.get(name, "other")
    mcp = as_dict(p.get("mcp_context"))
    put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"), mcp=bool(mcp))
    if mcp:
        obs.put("family", "/".join(x for x in (as_str(mcp.get("server_name")), as_str(
            mcp.get("tool_name")) or as_str(p.get("tool_name"))) if x), 120)
    if event == "tool_success":
        event = put_result(obs, p.get("tool_response"))
    obs.put("last_message", as_str(p.get("prompt_response")), 300, "block")
    if event == "stop" and p.get("stop_hook_active") is True:  # we asked to go on already
        obs.put("stop_hook_active", True)
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


def _copilot(p: dict, obs: Obs, name: str) -> str:
    """GitHub Copilot CLI / coding agent (``.github/hooks/*.json``), both payload casings."""
    get = lambda camel, snake: p.get(camel, p.get(snake))  # noqa: E731
    event = _COPILOT_EVENTS.get(name.lower()) or next(
        (ev for keys, ev in _COPILOT_SHAPES if any(k in p for k in keys)), "other")
    if not name and event == "pre_tool" and "error" in p:
        event = "tool_failure"
    if not name and event in ("subagent_start", "stop") and "stopReason" in p:
        event = "subagent_stop" if "agentName" in p else "stop"
    obs.put("session_id", as_str(get("sessionId", "session_id")))
    put_tool(obs, as_str(get("toolName", "tool_name")), get("toolArgs", "tool_input"))
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
        event = put_result(obs, text)
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


def _cursor(p: dict, obs: Obs, name: str) -> str:
    """Cursor agent hooks (``.cursor/hooks.json``; cursor.com/docs/hooks)."""
    event = _CURSOR_EVENTS.get(name, "other")
    obs.put("session_id", as_str(p.get("session_id") or p.get("conversation_id")))
    obs.put("prompt_id", as_str(p.get("generation_id")))
    roots = p.get("workspace_roots")
    if not p.get("cwd") and isinstance(roots, list) and roots:
        obs.put("cwd", as_str(roots[0]), 300)
    obs.put("tool_use_id", as_str(p.get("tool_use_id")))
    if name.endswith("ShellExecution"):
        put_tool(obs, "Shell", {"command": p.get("command")})
    elif name.endswith("MCPExecution"):
        put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"), mcp=True,
                  server=as_str(p.get("server_name")))
    elif name in ("beforeReadFile", "afterFileEdit"):
        put_tool(obs, "Read" if name == "beforeReadFile" else "Edit",
                  {"file_path": p.get("file_path"), "edits": p.get("edits")})
    else:
        put_tool(obs, as_str(p.get("tool_name")), p.get("tool_input"))
    obs.put("duration_ms", p.get("duration_ms", p.get("duration")))
    if event == "tool_success":
        out = p.get("tool_output", p.get("result_json", p.get("output")))
        if isinstance(out, str) and out[:1] == "{":
            out = loads(out) or out
        code = p.get("exit_code", p.get("exitCode"))
        if code is not None:
            out = dict(as_dict(out) or {"output": out}, exitCode=code)
        event = put_result(obs, out)
    elif event == "tool_failure":
        failure = as_str(p.get("failure_type"))
        event = "permission_denied" if failure == "permission_denied" else event
        obs.put("reason", failure, 200)
        obs.put("interrupted", p.get("is_interrupt"))
        obs.put_error(as_str(p.get("error_message") or p.get("error")))
    if event in ("stop", "session_end"):
        obs.put("reason", as_str(p.get("status") or p.get("reason")), 200)
    if event == "stop" and isinstance(p.get("loop_count"), int) and p["loop_count"] > 0:
        obs.put("stop_hook_active", True)  # Cursor: a follow-up message already went on
    if name == "afterAgentResponse":
        obs.put("last_message", as_str(p.get("text")), 300, "block")
    return event


DIALECTS = {"claude": _claude, "codex": _claude, "gemini": _gemini, "copilot": _copilot,
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
    obs = observe(payload, agent, event)
    return None if obs is None else dict(obs)


def observe(payload: dict, agent: str, event: str = ""):
    """``normalize``'s observation as an ``Obs``, which also keeps the shell command (``command``,
    its first ``toolcall.MAX_COMMAND`` characters, never stored) for what the hook matches at
    the call."""
    from ..storage import redact
    p = as_dict(payload)
    if agent not in DIALECTS or (agent == "claude" and "timestamp" in p):
        agent = detect_agent(p)  # Copilot runs .claude/settings.json hooks too, stamping them
    name = as_str(p.get("hook_event_name")) or event
    if agent in ("claude", "codex") and name in ("PostToolUse", "PostToolUseFailure",
                                                  "PostToolBatch"):
        p = _reported(p, name)
        if p is None:
            return None
        name = p["hook_event_name"]
    if name in SKIPPED or not (name or agent == "copilot") \
            or (name, p.get("trigger", "auto")) == ASKS_ONLY:
        return None
    obs = Obs(agent, redact.redact_text)
    obs.put("session_id", as_str(p.get("session_id")))
    kind = obs["event"] = DIALECTS[agent](p, obs, name)
    get = lambda camel, snake: p.get(camel, p.get(snake))  # noqa: E731
    put_shared(obs, p, kind, name, get)
    obs.put("cwd", as_str(p.get("cwd")), 300)
    obs.put("permission_mode", as_str(p.get("permission_mode")))
    obs.put("model", as_str(p.get("model")), 120)
    if kind in OUTCOMES:
        obs.setdefault("outcome", OUTCOMES[kind])
    return obs
