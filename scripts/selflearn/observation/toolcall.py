"""One tool call as observation fields: the observation under construction, the call, its result.

Owns ``Obs`` (a dict whose ``put`` redacts, shapes, cuts and hashes each field; a cut field's
full value is remembered as a short SHA-256 in ``hash[field]``), the tool-name table
(``tool_kind``), what a call's input says (``put_tool``: args, file, the two sides of an
edit) and what its response says (``put_result``: success, or a failure with exit code, the
error head with its cause line first, hints). On the hook path: string methods only, no
``json``/``re``/``hashlib`` (JSON strings inside payloads go through ``fastjson``, hashes
through the builtin ``_sha2``/``_sha256``, each only when needed). Must not import anything
above observation.
"""

from .commands import command_family, refine_family, uncommented

READERS = ("cat", "head", "tail", "tac", "less", "more", "bat")  # print a file
MAX_COMMAND = 16 * 1024  # characters of a shell command read at all (split, matched, stored
                         # cut further): a 10 MB command took the hook 8 s, this bound ~30 ms

def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


def first(mapping: dict, keys) -> str:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def loads(text: str):
    """A JSON string found inside a payload, parsed by the C scanner; None if not JSON."""
    from ..storage import fastjson
    try:
        return fastjson.loads(text)
    except ValueError:
        return None


def short_hash(text: str) -> str:
    try:
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python <= 3.11
        except ImportError:  # pragma: no cover - builds without the builtin module
            from hashlib import sha256
    return sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


META = ("exit code", "wall time", "command:", "directory:", "chunk id", "signal:",
         "original token count", "process exited", "process group", "background pids",
         "error: (none)", "output: (empty)", "output:",
         "<untrusted_context>", "</untrusted_context>",  # Gemini CLI wraps tool output in these
         "<shellid:")  # Copilot CLI ends shell output with <shellId: N completed with exit code N>


def error_head(text: str):
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
        elif low.startswith(META):
            continue
        if line:
            lines.append(line)
    given = lines
    cause = causes.cause_line("\n".join(lines))
    if cause and cause not in lines[:1]:  # (a cause may join two lines: rustc's `--> file`)
        lines = [cause] + [ln for ln in lines if ln not in cause and not causes.is_noise(ln)]
    head = "\n".join(lines[:3]) or " ".join(text.split())[:300]
    return head, any(ln not in head for ln in given)


# Fields that name rather than say (a tool, an id, a mode): a short one-word value holds no
# secret to redact; the redaction of each field is most of a hook's own work.
NAMES = frozenset(("tool", "tool_kind", "session_id", "tool_use_id", "prompt_id",
                   "permission_mode", "model", "source", "trigger", "phase"))


class Obs(dict):
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
        full = value if key in NAMES and len(value) <= 80 and " " not in value \
            else self._redact(value)
        if shape == "head":
            text, cut = error_head(full)
        else:
            text, cut = full.strip() if shape == "block" else " ".join(full.split()), False
        if limit and len(text) > limit:
            text, cut = text[:limit - 1].rstrip() + "\u2026", True
        if not text:
            return
        if cut:
            self.setdefault("hash", {})[key] = short_hash(full)
        self[key] = text

    def put_error(self, text: str, first_line_code: bool = False) -> None:
        """Error head (``Exit code N`` lines left out) plus the exit code they carry."""
        text = as_str(text)
        code = exit_code(text, first_line_code)
        if code is not None:
            self.put("exit_code", code)
        self.put_failure_text(text)

    def put_failure_text(self, text: str) -> None:
        """``error`` (cause first), the fixes the output suggests (``hint``), and the family
        of the part of a compound command that the error names."""
        from . import causes
        if text.startswith(WRAPPED[0]) and WRAPPED[1] in text:  # Claude Code's markup
            text = text[len(WRAPPED[0]):text.rfind(WRAPPED[1])].strip()
        if printed_credentials(self.command):
            text = "\n".join(line for line in text.splitlines() if " " in line.strip())
        full = self._redact(text)
        self.put("error", text, 300, "head")
        self.put("hint", "\n".join(causes.hints(full)), 300, "block")
        refine_family(self, full)


WRAPPED = ("<tool_use_error>", "</tool_use_error>")  # Claude Code's, around a tool's error


def printed_credentials(command: str) -> bool:
    """The command prints a file of credentials: one whose name says so (``~/.netrc``) or one
    the same command hands to a password-file option (``cat auth.txt && openvpn
    --auth-user-pass auth.txt``). Such a file's lines are bare words (a user, a password)
    that no secret format recognises; its output keeps only lines with a space (log lines)."""
    if not any(reader + " " in command for reader in READERS):  # string scans first
        return False
    import re
    read = set(re.findall(r"(?:^|[;&|(`]|\s)(?:" + "|".join(READERS) +
                          r")\s+(?:-\S+\s+)*([^\s;&|)`]+)", command))
    handed = re.findall(r"--(?:auth-user-pass|askpass|password-file|passwd-file|pass-?file|"
                        r"secret-file|token-file|netrc-file|client-secret-file)[=\s]+"
                        r"([^\s;&|)`]+)", command)
    from ..storage.programs import credential
    return bool(read & set(handed)) or any(credential(p) for p in read)


def exit_code(text: str, first_only: bool = False):
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
                 "prompt", "subagent_type", "name", "skill")


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
        command = as_str(command)[:MAX_COMMAND]  # a longer one: its tail is never read
        obs.command = command  # for the segment a failure names, the note at the call (not stored)
        obs.put("args", uncommented(command), 200)  # one line: a comment would hide the rest
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
