"""``hook``: one agent hook payload in, one redacted observation appended.

Contract with the agent: always exit 0, print nothing on events that do not
inject context (on session start and prompt events the ``inject`` callable that
the entry point passes in, surfacing's, may print learned notes, within the
advice budget: observation sits below surfacing and never imports it), never let an internal error reach the agent (it goes to
``<store>/errors.jsonl``, which ``doctor`` shows). A record is capped below
4 KiB and appended with one locked ``write()``; under that lock a second firing
of the same event (our hook registered twice) is dropped. The kill switch
(``SELF_LEARNING_DISABLE=1`` or the ``disabled`` marker) turns it into a no-op.

Import budget: ``sys``, ``time`` and the hook-path modules ``paths``,
``store``, ``fastjson``, ``posixfs``, ``observe`` (+ ``redact``); no ``os``
(1 ms), ``argparse``, ``json``, ``re`` or ``typing``.
"""

import sys
import time

from ..storage import fastjson, paths, store
from ..storage import posixfs as fs

MAX_STDIN = 32 * 1024 * 1024
MAX_RECORD = 3800  # bytes, newline included: well below the 4 KiB atomic-append size
PROJECT_DIR_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR")
AGENT_CHOICES = ("auto", "claude", "codex", "gemini", "copilot", "cursor")
# Events whose hook may print (surfacing): advice at session start and at a prompt, a lesson
# whose trigger fits at a tool call or right after a failure, a question at a turn's end.
INJECTING = ("session_start", "prompt", "pre_tool", "tool_failure", "stop")
LEARNING = ("stop", "session_end", "session_start")  # events after which learning may run
TRIGGERS = "triggers.jsonl"  # the lessons shown at a call (surfacing.jit owns the format)
HOOK_LOCK_WAIT = 1.0  # seconds a hook waits for another writer's lock (the client gives it 5)
TWIN_WINDOW = 2  # seconds: a second firing of the same payload this soon is the same event
# The largest prime below 2**30: one digit of Python's ints, so the modulo runs in C's fast path.
DIGEST_PRIME = 1073741789
CODEX_TAIL = 256 * 1024  # bytes of a Codex rollout file searched for a command's exit code


def _parse_args(argv: list) -> dict:
    """``--agent NAME`` and ``--event NAME``; unknown words are ignored, never fatal."""
    opts = {"agent": "auto", "event": ""}
    for i, word in enumerate(argv):
        for key in ("agent", "event"):
            if word == f"--{key}" and i + 1 < len(argv):
                opts[key] = argv[i + 1]
            elif word.startswith(f"--{key}="):
                opts[key] = word.split("=", 1)[1]
    if opts["agent"] not in AGENT_CHOICES:
        opts["agent"] = "auto"
    return opts


def _repo_root() -> str:
    explicit = fs.env("SELF_LEARNING_REPO_ROOT")
    if explicit:
        if not fs.isdir(fs.expanduser(explicit)):  # a typo: create nothing (doctor names it)
            raise ValueError("SELF_LEARNING_REPO_ROOT is not a folder")
        return paths.find_repo_root(explicit)
    for var in PROJECT_DIR_VARS:
        if fs.env(var):
            return paths.find_repo_root(cwd=fs.env(var))
    return paths.find_repo_root(script=__file__)


def _stamp() -> str:
    if fs.env("SELF_LEARNING_NOW"):  # the fake clock (tests, demos): stamps agree with commands
        from ..storage import model
        return model.iso()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _compact(stamp: str) -> str:
    return stamp.replace("-", "").replace(":", "")


def digest(data: bytes) -> str:
    """8 hex digits of ``data`` read as one number, modulo a prime (``hashlib`` or ``zlib``
    would cost 0.4-0.6 ms to import; this costs ~10 us per 4 KiB)."""
    return f"{int.from_bytes(data, 'little') % DIGEST_PRIME:08x}"


def identity(raw: bytes, payload: dict, obs: dict, event: str) -> str:
    """What makes two firings of our hook one event, as a digest.

    A payload the agent stamps (Copilot, Gemini) is its instant, session, event and
    arguments: Copilot fires one event at our Copilot entry and, cased for VS Code, at our
    Claude Code entry. Otherwise (Claude Code, Codex: a call id instead) the bytes the agent
    sent, and ``--event``. Two tool calls differ either way.
    """
    sent = payload.get("timestamp")
    if isinstance(sent, int) and not isinstance(sent, bool):  # Copilot: milliseconds
        sent = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(sent // 1000))}.{sent % 1000:03d}Z"
    if not isinstance(sent, str) or not sent:
        return digest(raw + event.encode())
    return digest("\0".join((sent, obs["event"], obs.get("session_id", ""),
                              obs.get("args", ""))).encode("utf-8", "replace"))


def fit_record(record: dict) -> bytes:
    """Encode, halving the longest text field until the line fits ``MAX_RECORD``."""
    line = store.encode(record)
    while len(line) > MAX_RECORD:
        texts = [(len(v), k) for k, v in record.items() if isinstance(v, str) and len(v) > 40]
        if not texts:
            record = {k: record[k] for k in ("v", "id", "ts", "agent", "event") if k in record}
            record["truncated"] = True
            return store.encode(record)
        _, key = max(texts)
        record[key] = record[key][: len(record[key]) // 2] + "\u2026"
        record["truncated"] = True
        line = store.encode(record)
    return line


def observe_payload(raw: bytes, opts: dict, store_dir: str):
    """Parse, normalize, redact and append one payload; the record, or None (raises on bad input)."""
    from . import observe
    try:
        payload = fastjson.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("payload is not UTF-8") from None
    if not isinstance(payload, dict):
        raise ValueError(f"payload is a JSON {type(payload).__name__}, not an object")
    if opts["agent"] == "codex":
        _codex_exit_code(payload)
    obs = observe.observe(payload, opts["agent"], opts["event"])
    if obs is None:
        return None
    stamp, sign = _stamp(), identity(raw, payload, obs, opts["event"])
    record = {"v": 1, "id": f"obs_{_compact(stamp)}_{sign}", "ts": stamp, **obs}
    line = fit_record(record)
    unless = _twin_check(sign)
    if payload.get("hook_event_name") == "PostToolBatch":  # a call only it lists
        unless = _answered(record.get("tool_use_id") or "", record.get("session_id") or "",
                           unless)
    if not store.append_bytes(fs.join(store_dir, paths.FILES["observations"]), line,
                              unless=unless):
        return None  # a second registration fired the same payload, or (PostToolBatch) the
        # call came to a result of its own already: a tool's output reading like a refusal
    # not stored: the command (its first ``toolcall.MAX_COMMAND`` characters) and the client's
    # event name, for what is shown at a call
    record["_command"], record["_hook"] = obs.command, payload.get("hook_event_name") or ""
    return record


def _twin_check(sign: str):
    """A test for the store's tail: does it hold this payload, stored in the last ``TWIN_WINDOW`` s?

    An observation's id ends with its event's digest (``identity``), so two registrations
    of our hook (plugin and settings, project and user), which fire within milliseconds
    of each other, make the same id; its ``ts`` follows it on the line.
    """
    if fs.env("SELF_LEARNING_NOW"):
        stamps = {_stamp().encode()}  # the fake clock stands still
    else:
        now = time.time()
        stamps = {time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - k)).encode()
                  for k in range(TWIN_WINDOW + 1)}
    needle = f'_{sign}", "ts": "'.encode()

    def seen(tail: bytes) -> bool:
        at = tail.find(needle)
        while at >= 0:  # one search of the tail; a digest is rarely there at all
            at += len(needle)
            if tail[at:at + 20] in stamps:
                return True
            at = tail.find(needle, at)
        return False
    return seen


RESULTS = (b'"event": "tool_success"', b'"event": "tool_failure"',
           b'"event": "permission_denied"')  # what a call came to (not its request or its start)


def _answered(tool_use_id: str, session: str, twin):
    """``twin``, or a test for the store's tail: did this call of this session come to a
    result of its own (PostToolUse, PostToolUseFailure, PermissionDenied)? Claude Code fires
    none of them for a call the person refused or one it turned down before it ran, and lists
    every call of a batch in PostToolBatch: one that came to a result and reads like a refusal
    there is a tool's output (a file that starts with the refusal's words) or a classifier's
    denial, not the person."""
    needle = b'"tool_use_id": ' + fastjson.dumps(tool_use_id).encode("utf-8") + b","
    mine = b'"session_id": ' + fastjson.dumps(session).encode("utf-8") + b","

    def seen(tail: bytes) -> bool:
        if twin(tail):
            return True
        at = tail.find(needle) if tool_use_id else -1
        while at >= 0:
            line = tail[tail.rfind(b"\n", 0, at) + 1:tail.find(b"\n", at)]
            if mine in line and any(event in line for event in RESULTS):
                return True
            at = tail.find(needle, at + len(needle))
        return False
    return seen


def _codex_exit_code(payload: dict) -> None:
    """Codex's PostToolUse gives a command's output but not its exit code (0.169); the session's
    rollout file (``transcript_path``) holds it in the command's ``item_completed`` line. Put it
    in front of the output as the ``Exit code: N`` header older Codex releases sent."""
    response, call = payload.get("tool_response"), payload.get("tool_use_id")
    path = payload.get("transcript_path")
    if payload.get("hook_event_name") != "PostToolUse" or not isinstance(response, str) \
            or not isinstance(call, str) or not call or not isinstance(path, str) or not path \
            or response.lstrip()[:40].lower().startswith(("exit code", "process exited")):
        return
    try:
        fd = fs.open_fd(path, fs.O_RDONLY)
    except OSError:
        return
    try:
        size = fs.fstat(fd).st_size
        tail = fs.pread(fd, min(size, CODEX_TAIL), max(0, size - CODEX_TAIL))
    finally:
        fs.close(fd)
    needle = f'"id":"{call}"'.encode("utf-8", "replace")
    end = len(tail)
    while True:  # the last line naming the call that carries an exit code
        at = tail.rfind(needle, 0, end)
        if at < 0:
            return
        start, stop = tail.rfind(b"\n", 0, at) + 1, tail.find(b"\n", at)
        line = tail[start:stop if stop >= 0 else len(tail)]
        key = line.find(b'"exit_code":')
        if key >= 0:
            digits = line[key + 12:key + 24].split(b",")[0].split(b"}")[0].strip()
            if digits.lstrip(b"-").isdigit():
                payload["tool_response"] = f"Exit code: {int(digits)}\nOutput:\n{response}"
            return
        end = start


def triggered(record: dict, store_dir: str) -> bool:
    """Whether the trigger table (``triggers.jsonl``, which the learning step keeps; FORMAT.md)
    has a line for a family of this call. Most calls match none, and this answer costs one
    file read here instead of loading surfacing, which decides the rest."""
    try:
        fd = fs.open_fd(fs.join(store_dir, TRIGGERS), fs.O_RDONLY | fs.O_NOFOLLOW)
    except OSError:
        return False
    try:
        table = fs.read(fd, 256 * 1024)
    finally:
        fs.close(fd)
    from .commands import families_of  # what surfacing.jit matches the table with
    command = record.get("_command") or str(record.get("args") or "")
    return any(b'{"family": ' + fastjson.dumps(name).encode("utf-8", "replace") + b"," in table
               for name in families_of(record, command))


def log_error(store_dir: str, opts: dict, exc: BaseException) -> None:
    """One line in errors.jsonl; silent if even that fails."""
    try:
        from ..storage import redact
        message = redact.redact_text(f"{type(exc).__name__}: {exc}")[:500]
        record = {"v": 1, "ts": _stamp(), "where": "hook", "agent": opts.get("agent", "auto"),
                  "event": opts.get("event", ""), "error": message}
        store.append_bytes(fs.join(store_dir, "errors.jsonl"), store.encode(record))
    except Exception:  # noqa: BLE001 - the agent must never see our failure
        pass


def _print(text: str) -> None:
    """UTF-8 whatever the locale (a budget counts characters, not bytes)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write(text.encode("utf-8", "replace"))  # a lone surrogate costs one character
    sys.stdout.flush()


def main(argv: list, inject=None, learn=None) -> int:
    """Observe one payload; on ``INJECTING`` events print what ``inject`` returns; after
    ``LEARNING`` events let ``learn`` start the learning step (it never waits for it)."""
    opts = {"agent": "auto", "event": ""}
    store_dir = ""
    store.LOCK_WAIT = HOOK_LOCK_WAIT  # a hook never holds the agent up for long
    try:
        opts = _parse_args(argv)
        root = _repo_root()
        if paths.kill_switch(root):
            return 0
        store_dir = paths.project_store(root, paths.user_slug())
        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.read(MAX_STDIN + 1) if stream else sys.stdin.read(MAX_STDIN + 1).encode()
        if len(raw) > MAX_STDIN:
            raise ValueError(f"payload larger than {MAX_STDIN} bytes; not stored")
        if not raw.strip():
            raise ValueError("empty payload on stdin")
        record = observe_payload(raw, opts, store_dir)
        if inject is not None and record is not None and record.get("event") in INJECTING \
                and (record["event"] != "pre_tool" or triggered(record, store_dir)):
            text = inject(record, root, store_dir)
            if text:
                _print(text)
        if learn is not None and record is not None and record.get("event") in LEARNING:
            learn(record, root, store_dir)
    except BaseException as exc:  # noqa: BLE001 - hooks never fail the agent
        if store_dir:
            log_error(store_dir, opts, exc)
    return 0
