"""One tool call as observation fields: its kind, family, arguments and result.

Owns the tool-name table (``tool_kind``), what a call's input says (``put_tool``: args, file,
the two sides of an edit) and what its response says (``put_result``: success, or a failure
with exit code, cause and hints). On the hook path: string methods only; must not import
anything above observation.
"""

from .commands import command_family
from .fields import Obs, as_dict, as_str, exit_code, first, loads

KINDS = {  # lower-cased tool name -> tool_kind
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
KIND_OF = {name: kind for kind, names in KINDS.items() for name in names}
FILE_KEYS = ("file_path", "path", "absolute_path", "filePath", "target_file", "notebook_path")
PATTERN_KEYS = ("pattern", "query", "regex", "glob", "url", "dir_path", "path")
SUMMARY_KEYS = ("command", "description", "query", "url", "pattern", "file_path", "path",
                 "prompt", "subagent_type", "name")


def tool_kind(name: str, mcp: bool = False) -> str:
    low = name.lower()
    if mcp or low.startswith(("mcp__", "mcp:", "mcp_")):
        return "mcp"
    return KIND_OF.get(low, "other")


def mcp_family(name: str) -> str:
    if name.startswith("mcp__"):
        parts = name.split("__", 2)
        return "/".join(p for p in parts[1:] if p)
    if name.lower().startswith("mcp:"):
        return "/".join(p for p in name.split(":")[1:] if p)
    return name


def put_tool(obs: Obs, name: str, tool_input, mcp: bool = False, server: str = "") -> None:
    """tool, tool_kind, family, args, file and edit_old/edit_new from a tool call."""
    if not name:
        return
    obs.put("tool", name, 200)
    kind = tool_kind(name, mcp or bool(server))
    obs.put("tool_kind", kind)
    if isinstance(tool_input, str):
        parsed = loads(tool_input) if tool_input[:1] in "{[" else None
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
        family = mcp_family(name)
        obs.put("family", family if family != name or not server else server + "/" + name, 120)
    path = first(ti, FILE_KEYS)
    patch = as_str(ti.get("input") or ti.get("patch") or ti.get("command"))
    if not path and name == "apply_patch":
        path = next((ln.split(":", 1)[1].strip() for ln in patch.splitlines()
                     if ln.startswith(("*** Update File:", "*** Add File:"))), "")
    if kind in ("edit", "write", "read"):
        obs.put("file", path, 300)
        obs.put("args", path, 200)
        if kind == "edit":
            edit = as_dict((ti.get("edits") or [None])[0]) if isinstance(ti.get("edits"), list) else ti
            obs.put("edit_old", first(edit, ("old_string", "old_str", "oldString")), 200)
            obs.put("edit_new", first(edit, ("new_string", "new_str", "newString")), 200)
    elif kind in ("search", "web"):
        obs.put("args", first(ti, PATTERN_KEYS), 200)
    else:
        obs.put("args", first(ti, SUMMARY_KEYS) or patch, 200)


def response_text(response) -> str:
    """The text of a tool response: Bash stdout/stderr, Gemini llmContent, plain strings."""
    if isinstance(response, str):
        return response
    r = as_dict(response)
    if "stdout" in r or "stderr" in r:
        return "\n".join(x for x in (as_str(r.get("stderr")), as_str(r.get("stdout"))) if x)
    if isinstance(r.get("content"), list):  # MCP CallToolResult
        return "\n".join(as_str(as_dict(c).get("text")) for c in r["content"][:3])
    return first(r, ("error", "llmContent", "output", "textResultForLlm",
                      "text_result_for_llm", "returnDisplay"))


def put_result(obs: Obs, response, trusted: bool = False) -> str:
    """The event of a finished tool call: ``tool_failure`` on a shell exit code != 0 or an
    error result, unless the agent reports failures separately (``trusted``)."""
    r = as_dict(response)
    if isinstance(r.get("interrupted"), bool):
        obs.put("interrupted", r["interrupted"])
    code = next((r[k] for k in ("exit_code", "exitCode", "returnCode")
                 if isinstance(r.get(k), int) and not isinstance(r.get(k), bool)), None)
    if trusted and not (code or r.get("isError") is True or r.get("error")):
        return "tool_success"  # an agent that reports failures apart: only explicit ones count
    text = response_text(response)
    if code is None and not trusted and obs.get("tool_kind") == "shell" and "stdout" not in r:
        code = exit_code(text)
    if code is not None:
        obs.put("exit_code", code)
    if not (code or r.get("isError") is True or r.get("error")):
        return "tool_success"
    err = r.get("error")
    obs.put_failure_text(as_str(as_dict(err).get("message") or err) or text)
    return "tool_failure"
