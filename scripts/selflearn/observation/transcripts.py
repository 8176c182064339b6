"""Backfill observations from Claude Code session transcripts (``ingest-transcripts``).

Owns: finding a repo's transcripts (``~/.claude/projects/<root with each
non-alphanumeric as ->/*.jsonl``), reading the bytes appended since the last run (cursors in
``<store>/ingest_state.json``), pairing each tool_use with its tool_result, and
turning entries into observations through ``observe.normalize`` so they have the
hook's exact shape, plus ``v``, ``id``, ``ts`` (the entry's) and ``via: "transcript"``.
Invariants: a complete line is read once unless its file shrank or was replaced;
a line without its newline is left for the next run; an observation whose key
(tool_use_id, session, prompt id) is already in observations.jsonl is not added
again; observations are appended before the state is replaced. Must not import cli.
"""

import os
from typing import Callable, Dict, List, Optional

from ..storage import cursors, fastjson, model, store
from ..storage import posixfs as fs
from . import hook, observe
from ..storage.errors import UsageError
from .observe import as_dict, as_str

STATE_FILE = "ingest_state.json"
_TOOL_KEYS = ("tool", "tool_kind", "args", "family", "file", "edit_old", "edit_new", "hash")
_NOT_PROMPT = ("<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
               "[Request interrupted by user", "<system-reminder>", "Caveat: The messages below")
_INTERRUPTED = "[Request interrupted by user"
_TYPES = ("user", "assistant", "system", "summary")  # entry types of a Claude Code transcript
_MAX_PENDING = 200  # tool calls never answered (a killed session) must not grow the state forever
# Folder levels searched below a folder given: ~/.claude/projects/<project>/<session>/subagents/
MAX_DEPTH = 3


# --- where transcripts are -----------------------------------------------------------------

def projects_home() -> str:
    """Claude Code's ``projects`` folder; ``CLAUDE_CONFIG_DIR`` moves it as it moves Claude."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(os.path.expanduser(base), "projects")


def project_dir(repo_root: str) -> str:
    """Claude Code names a project's folder after its path, each non-[A-Za-z0-9] char as '-'."""
    root = os.path.abspath(repo_root)
    return os.path.join(projects_home(), "".join(c if c.isascii() and c.isalnum() else "-"
                                                 for c in root))


def _in_folder(folder: str, depth: int = MAX_DEPTH) -> List[str]:
    """The ``.jsonl`` files of ``folder``, then those of its folders, ``depth`` levels down
    (a project's sessions, then their subagents'; a folder of projects, project by project).
    Links to folders are not followed."""
    found, below = [], []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".jsonl") and os.path.isfile(path):
            found.append(path)
        elif depth and os.path.isdir(path) and not os.path.islink(path):
            below.append(path)
    for path in below:
        found += _in_folder(path, depth - 1)
    return found


def discover(given: List[str], repo_root: str, empty: Optional[List[str]] = None) -> List[str]:
    """Transcript files named by ``given`` (files or folders), else the repo's project folder;
    the folders given that hold none go to ``empty``."""
    missing = [p for p in given if not os.path.exists(p)]
    if missing:
        raise UsageError(f"ingest-transcripts: {missing[0]} does not exist; pass transcript "
                         ".jsonl files or folders, or nothing to read " + project_dir(repo_root))
    if not given:
        folder = project_dir(repo_root)
        return _in_folder(folder) if os.path.isdir(folder) else []
    files: List[str] = []
    for path in given:
        if os.path.isdir(path):
            inside = _in_folder(path)
            if not inside and empty is not None:
                empty.append(path)
            files += inside
            continue
        kind = fs.kind_of(os.stat(path).st_mode)
        if kind != "file":  # a FIFO or a device would block the read or never end
            raise UsageError(f"ingest-transcripts: {path} is a {kind}; pass transcript "
                             ".jsonl files (regular files) or folders")
        files.append(path)
    return list(dict.fromkeys(os.path.abspath(f) for f in files))


# --- entries to observations ---------------------------------------------------------------

def key(obs: dict):
    """What makes an observation the same one whether a hook or a transcript saw it."""
    event, sid = obs.get("event"), obs.get("session_id")
    if event in ("tool_success", "tool_failure", "permission_denied") and obs.get("tool_use_id"):
        return ("tool", obs["tool_use_id"])
    if event == "session_start":
        return (event, sid)
    if event in ("prompt", "stop") and obs.get("prompt_id"):
        return (event, sid, obs["prompt_id"])
    return (event, sid, obs.get("ts"), obs.get("tool_use_id"))


def _text(content) -> str:
    """A message or tool_result content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(as_str(as_dict(b).get("text")) for b in blocks if as_dict(b).get("type") == "text")


def _between(text: str, tag: str) -> str:
    start = text.find(f"<{tag}>")
    end = text.find(f"</{tag}>", start)
    return text[start + len(tag) + 2:end].strip() if start >= 0 and end >= 0 else ""


def _prompt(entry: dict, content) -> str:
    """The text the user typed, or "" for meta lines, command output and sidechain tasks."""
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return ""
    if isinstance(content, list):
        texts = (_text([block]) for block in content)
        content = "\n".join(t for t in texts if not t.startswith(_NOT_PROMPT))
    text = as_str(content).strip()
    if "<command-name>" in text:  # a slash command: the hook sees it as typed
        return f"{_between(text, 'command-name')} {_between(text, 'command-args')}".strip()
    return "" if text.startswith(_NOT_PROMPT) else text


def _payloads(entry: dict, cur: dict) -> list:
    """``(hook payload, tool fields)`` pairs for one entry; updates the cursor ``cur``."""
    message = as_dict(entry.get("message"))
    content = message.get("content")
    blocks = [as_dict(b) for b in content] if isinstance(content, list) else []
    base = {"session_id": cur.get("session_id"), "cwd": entry.get("cwd"),
            "permission_mode": cur.get("permission_mode"), "prompt_id": cur.get("prompt_id")}
    out = []
    kind = entry.get("type")
    if kind == "user":
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for block in results:
            tid = as_str(block.get("tool_use_id"))
            fields = cur["pending"].pop(tid, {})
            text = _text(block.get("content"))
            response = entry.get("toolUseResult") if len(results) == 1 else None
            interrupted = as_dict(response).get("interrupted") is True or text.startswith(_INTERRUPTED)
            payload = dict(base, tool_use_id=tid)
            if block.get("is_error") and observe.refusal(text):  # the client's, as its hook
                payload.update(hook_event_name="PostToolBatch", tool_calls=[  # lists it
                    {"tool_use_id": tid, "error": text}])
            elif block.get("is_error"):
                payload.update(hook_event_name="PostToolUseFailure", error=text,
                               is_interrupt=interrupted)
                if fields.get("tool_kind") == "shell":  # the hook sees the command too: the
                    payload.update(tool_name=fields.get("tool"),  # error may name a segment
                                   tool_input={"command": fields.get("_command")
                                               or fields.get("args", "")})
            else:
                payload.update(hook_event_name="PostToolUse", tool_response=response or text)
            out.append((payload, fields))
        prompt = "" if results else _prompt(entry, content)
        if prompt:
            out.append((dict(base, hook_event_name="UserPromptSubmit", prompt=prompt), {}))
    elif kind == "assistant":
        for block in blocks:
            if block.get("type") == "tool_use" and as_str(block.get("id")):
                pre = observe.normalize({"hook_event_name": "PreToolUse", "tool_name": as_str(
                    block.get("name")), "tool_input": block.get("input")}, "claude") or {}
                fields = {k: pre[k] for k in _TOOL_KEYS if k in pre}
                command = as_dict(block.get("input")).get("command")
                if pre.get("tool_kind") == "shell" and isinstance(command, str):
                    fields["_command"] = command[:2000]  # for a failure's owner segment only
                cur["pending"][block["id"]] = fields
        said = _text(blocks)
        if message.get("stop_reason") == "end_turn" and said and not entry.get("isSidechain"):
            out.append((dict(base, hook_event_name="Stop", last_assistant_message=said), {}))
    elif kind == "system" and entry.get("subtype") == "compact_boundary":
        trigger = as_str(as_dict(entry.get("compactMetadata")).get("trigger"))
        out.append((dict(base, hook_event_name="PostCompact", trigger=trigger), {}))
    return out


def _with_tool(obs: dict, fields: dict) -> dict:
    """The tool fields of the answered tool_use, placed where the hook puts them."""
    fields = {k: v for k, v in fields.items() if not k.startswith("_")}
    if not fields:
        return obs
    out: dict = {}
    for name, value in obs.items():
        out[name] = value
        if name == "tool_use_id":
            out.update((k, v) for k, v in fields.items() if k != "hash")
    if "hash" in fields:
        out["hash"] = {**fields["hash"], **out.get("hash", {})}
    return out


def _finish(obs: dict, ts: float) -> dict:
    stamp = model.iso(ts)
    compact = stamp.replace("-", "").replace(":", "")
    return {"v": model.SCHEMA_VERSION, "id": f"obs_{compact}_{os.urandom(3).hex()}", "ts": stamp,
            **obs, "via": "transcript"}


# --- reading files incrementally ----------------------------------------------------------

def ingest(memory, repo_root: str, given: List[str], since: Optional[str] = None,
           dry_run: bool = False, progress: Optional[Callable[[str], None]] = None) -> dict:
    """Read new transcript bytes and append their observations (unless ``dry_run``)."""
    since_ts = model.parse_ts(since) if since else 0.0
    if since and not since_ts:
        raise UsageError(f"ingest-transcripts: --since {since!r} is not an ISO date; "
                         "use e.g. 2025-01-31 or 2025-01-31T12:00:00Z")
    empty: List[str] = []
    files = discover(given, repo_root, empty)
    run = _Run(memory, since_ts, dry_run, progress)
    run.data["searched"] = [] if given else [project_dir(repo_root)]
    run.data["warnings"] = [f"ingest-transcripts: no .jsonl file in {path} or the {MAX_DEPTH} "
                            "levels of folders below it; pass Claude Code transcripts (files, a "
                            "project's folder or a folder of them, as ~/.claude/projects/ is), "
                            "or nothing to read " + project_dir(repo_root) for path in empty]
    if not files:
        return run.data
    redo = "re-read every transcript (observations already stored are not duplicated)"
    with cursors.exclusive(memory.root, enabled=not dry_run):
        state = cursors.load(run.data["state"], "files", "ingest-transcripts", redo)
        run.cursors = state["files"]
        run.seen = {key(r) for r in store.read(memory.path("observations"),
                                              check=model.LineCheck("observations").problem)[0]}
        for path in files:
            run.file(path)
        if not dry_run:
            store.atomic_write(run.data["state"], fastjson.dumps(state) + "\n")
    return run.data


class _Run:
    """One ingest: the cursors per file, the keys already stored, and the report."""

    def __init__(self, memory, since: float, dry_run: bool, progress):
        self.memory, self.since, self.dry_run, self.progress = memory, since, dry_run, progress
        self.cursors: Dict[str, dict] = {}
        self.seen: set = set()
        self.shaped = 0  # lines of this file shaped like a transcript's (a session id or type)
        self.data = {"dry_run": dry_run, "state": memory.path(STATE_FILE), "searched": [],
                     "files": [], "files_read": 0, "files_unchanged": 0, "added": {},
                     "added_total": 0, "skipped_duplicates": 0, "skipped_before_since": 0,
                     "errors": []}

    def file(self, path: str) -> None:
        """Read one file from its cursor (or from the start if it shrank or was replaced)."""
        prev, data = self.cursors.get(path), self.data
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                reread = bool(prev) and (prev["inode"] != st.st_ino or st.st_size < prev["offset"]
                                         or prev["head"] != cursors.head(fh, prev["offset"]))
                if prev and not reread and (prev["size"], prev["mtime"]) == (st.st_size,
                                                                             st.st_mtime):
                    data["files_unchanged"] += 1
                    return
                cur = dict(prev) if prev and not reread else {"offset": 0, "line": 0,
                                                              "pending": {}}
                start, self.shaped = cur["offset"], 0
                found = self._lines(fh, path, cur)
                cur.update(size=st.st_size, mtime=st.st_mtime, inode=st.st_ino,
                           head=cursors.head(fh, cur["offset"]))
        except OSError as exc:
            data["errors"].append(f"{path}: unreadable ({exc.strerror or exc}); skipped")
            return
        self.cursors[path] = cur
        if found and not self.dry_run:  # capped like the hook's records, one locked write
            store.append_bytes(self.memory.path("observations"),
                               b"".join(hook.fit_record(o) for o in found), durable=True)
        for obs in found:
            data["added"][obs["event"]] = data["added"].get(obs["event"], 0) + 1
        data["added_total"] += len(found)
        data["files_read"] += 1
        data["files"].append({"path": path, "from": start, "to": cur["offset"],
                              "added": len(found), "reread": reread,
                              "transcript": self.shaped > 0 or cur["offset"] == start})
        if self.progress:
            self.progress(f"{path}: {len(found)} new observation(s)"
                          + (" (re-read from the start: truncated or replaced)" if reread else ""))

    def _lines(self, fh, path: str, cur: dict) -> List[dict]:
        """New observations from the complete lines after ``cur["offset"]``; advances ``cur``."""
        found: List[dict] = []
        fh.seek(cur["offset"])
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # still being written: the next run reads it whole
            cur["offset"] += len(raw)
            cur["line"] += 1
            if not raw.strip():
                continue
            try:
                entry = fastjson.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                self.data["errors"].append(f"{path}:{cur['line']}: not JSON ({exc})")
                continue
            if not isinstance(entry, dict):
                self.data["errors"].append(f"{path}:{cur['line']}: not a JSON object")
                continue
            self.shaped += "sessionId" in entry or entry.get("type") in _TYPES
            found += self._entry(entry, cur)
        while len(cur["pending"]) > _MAX_PENDING:
            cur["pending"].pop(next(iter(cur["pending"])))
        return found

    def _entry(self, entry: dict, cur: dict) -> List[dict]:
        ts = model.parse_ts(as_str(entry.get("timestamp")))
        if not ts:
            return []  # summaries, snapshots, last-prompt: no time, nothing observed
        cur["session_id"] = as_str(entry.get("sessionId")) or cur.get("session_id")
        cur["permission_mode"] = as_str(entry.get("permissionMode")) or cur.get("permission_mode")
        if entry.get("type") == "user" and as_str(entry.get("promptId")):
            cur["prompt_id"] = entry["promptId"]
        pairs = _payloads(entry, cur)
        if not cur.get("started") and cur.get("session_id"):
            cur["started"] = True
            if not entry.get("isSidechain"):  # a subagent's file is not a session of its own
                pairs.insert(0, ({"hook_event_name": "SessionStart", "cwd": entry.get("cwd"),
                                  "session_id": cur["session_id"]}, {}))
        out = []
        for payload, fields in pairs:
            obs = observe.normalize(payload, "claude")
            if obs is None:  # pragma: no cover - every payload built here names a kept event
                continue
            obs = _finish(_with_tool(obs, fields), ts)
            if self.since and ts < self.since:
                self.data["skipped_before_since"] += 1
            elif key(obs) in self.seen:
                self.data["skipped_duplicates"] += 1
            else:
                self.seen.add(key(obs))
                out.append(obs)
        return out


def render(data: dict) -> List[str]:
    """Text lines for people: one per file read, errors, then the totals."""
    lines = []
    for f in data["files"]:
        note = "; re-read from the start: the file shrank or was replaced" if f["reread"] else ""
        lines.append(f"{f['path']}: {f['added']} new observation(s), "
                     f"bytes {f['from']}-{f['to']}{note}")
        if not f.get("transcript", True):
            lines.append(f"  no line of it looks like a Claude Code transcript's (JSON lines with "
                         f"\"sessionId\" and \"type\": \"user\" or \"assistant\", as under "
                         f"~/.claude/projects/); is it the right file?")
    lines += [f"unreadable: {e}" for e in data["errors"]]
    if not data["files"] and data["searched"]:
        lines.append(f"no new transcript lines in {data['searched'][0]}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(data["added"].items()))
    verb = "would add" if data["dry_run"] else "added"
    lines.append(f"{verb} {data['added_total']} observation(s)" + (f" ({counts})" if counts else "")
                 + f" from {data['files_read']} file(s); {data['skipped_duplicates']} already "
                 "recorded" + (f", {data['skipped_before_since']} before --since"
                               if data["skipped_before_since"] else ""))
    if data["dry_run"]:
        lines.append("dry run: nothing written")
    return lines
