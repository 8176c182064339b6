"""Just in time: the lesson whose trigger a tool call matches, at that call or its failure.

The learning step keeps ``<store>/triggers.jsonl`` (``surfacing.triggers`` writes it after
``maintain``, ``record`` and status changes; derived, rebuildable, safe to delete): one
line per lesson that may be shown at its trigger, already screened and rendered::

    {"family": "git push", "id": …, "at": "call", "tool": "Bash", "needs": [words],
     "skip": [words], "folder": "web", "error": [words], "also": [[words], …],
     "note": "<learned-notes> block"}

At a tool call (``pre_tool``) a line with ``at: call`` (a lesson that changes the call
itself: what to add, where to run it, what the person refuses) matches when the family is
one of the call's (every segment of a shell line, and ``<program> *`` of each: a lesson
about a program missing here concerns any call of it), the call names every ``needs`` word,
does not already carry every ``skip`` word (the fix), and runs in ``folder`` when one is
given. At a failure (``tool_failure``) any line of the family matches whose ``error`` words
(or those of an error its lesson quotes, ``also``) the error mostly holds (and ``needs``,
``folder`` as above): the fix that worked before. A line of another family, or of none,
matches when the error holds almost all of one of those lists (``by_error``), or when the
call names every path the line ``needs`` and its error mostly holds the line's words (the
same file failing through another tool: ``by_subject``). A failure
also gets the shell's folder when that explains a path not found (``surfacing.elsewhere``,
loaded at failures only). Each lesson is shown at most once per session (read from the tail
of ``surfacings.jsonl``), two at most per call. A shell command is read as far as
``toolcall.MAX_COMMAND`` characters (the observation cuts it before anything here splits or
matches it). The no-match path reads one
small file: this module is on the hook path and imports only ``fastjson``, ``posixfs``,
``store`` and ``shown`` (no ``re``, ``typing``, ``os``).
"""

from ..observation.commands import families_of, folder, words
from ..storage import fastjson, store
from ..storage import posixfs as fs
from . import shown

FILE = "triggers.jsonl"
MAX_BYTES = 256 * 1024    # a larger table is not read (the writer keeps it far below)
MAX_NEW = 4 * 1024 * 1024  # cards appended since the table was built that a match still reads
PER_CALL = 2              # lessons shown at one call
TRIGGERS = ("pre_tool", "tool_failure")  # a lesson is said once a session at these; what the
# session start or a prompt said of it (one line among others, maybe cut before its fix) is
# no reason to keep quiet at the call or failure it is about
STRONG = 0.8              # share of a trigger's error words that shows it at a failure of
                          # any family (the error says it all: pip3, pip, python -m pip)
ERROR_SHARE = 0.5         # share of a trigger's error words a failure must contain
# Words of errors of every kind, and the shell's own (its name, "line 7", zsh's "(eval):1"):
# made only of them (and the call's own words), an error says nothing about which failure it
# is ("ls: x: No such file or directory", "bash: line 7: /tmp/x: No such file or directory").
GENERIC = {"such", "file", "files", "directory", "command", "found", "permission", "denied",
           "exist", "exists", "invalid", "option", "unknown", "missing", "unexpected",
           "argument", "line", "usage", "any", "match", "enoent", "eacces", "open", "access",
           "bash", "sh", "zsh", "eval", "bin/bash", "usr/bin/bash", "bin/sh", "bin/zsh"}
# (agent, event) -> the hookSpecificOutput event name that carries additionalContext there;
# missing: that agent shows nothing of that hook to the model (references/SURFACING.md).
SHAPES = {("claude", "pre_tool"): "PreToolUse", ("claude", "tool_failure"): "PostToolUseFailure",
          ("codex", "pre_tool"): "PreToolUse", ("codex", "tool_failure"): "PostToolUse",
          ("gemini", "tool_failure"): "AfterTool"}


def matches(entry: dict, event: str, said: set, where: str, error_words: set) -> bool:
    """Whether one trigger line fits this call (the family was matched by the caller)."""
    if not all(names(said, w) for w in entry.get("needs") or []):
        return False
    if entry.get("folder") and entry["folder"] != where:
        return False
    if event == "pre_tool":
        skip = entry.get("skip") or []
        return entry.get("at") == "call" and not (skip and all(w in said for w in skip))
    if not entry.get("error"):
        return True
    return any(sum(1 for w in want if w in error_words) >= max(1, int(len(want) * ERROR_SHARE + 0.5))
               for want in _errors(entry))


def names(said: set, need: str) -> bool:
    """Whether a call's words name ``need``: the word itself, or a path ending in it (the
    lesson's ``src/x.go`` from the root, the call's ``/home/me/repo/src/x.go``)."""
    return need in said or ("/" in need and any(w.endswith("/" + need) for w in said))


def _errors(entry: dict) -> list:
    """The word lists a failure may match: the cause first seen, then the errors the lesson
    quotes (``also``)."""
    also = entry.get("also")
    return [entry.get("error")] + (also if isinstance(also, list) else [])


def failure_words(error: str) -> set:
    """A failure's words, the rule code of a ``code/name`` word (``md040``), and
    ``missing:<program>`` when the shell could not run a program, however it says so (``go:
    command not found``, zsh's ``no such file or directory: /usr/local/bin/go``): what a
    lesson about a rule or a program missing here matches."""
    from ..observation.causes import MISSING, missing_program
    program = missing_program(error)
    said = set(words(error))
    codes = {w.split("/", 1)[0] for w in said if "/" in w and _code(w.split("/", 1)[0])}
    return said | codes | ({MISSING + program.lower()} if program else set())


def _code(word: str) -> bool:
    """A linter's or compiler's rule code (`md040` of `MD040/fenced-code-language`)."""
    letters = len(word) - len(word.lstrip("abcdefghijklmnopqrstuvwxyz"))
    return 1 <= letters <= 4 and 3 <= len(word) - letters <= 5 and word[letters:].isdigit()


def table(store_dir: str) -> bytes:
    """The trigger table's bytes (empty when there is none)."""
    try:
        fd = fs.open_fd(fs.join(store_dir, FILE), fs.O_RDONLY | fs.O_NOFOLLOW)
    except OSError:
        return b""
    try:
        return fs.pread(fd, MAX_BYTES, 0)
    finally:
        fs.close(fd)


def candidates(table: bytes, families: list) -> list:
    """The parsed lines of ``table`` whose family is one of ``families`` (others unparsed)."""
    out = []
    for family in families:
        needle = b'{"family": ' + fastjson.dumps(family).encode("utf-8") + b","
        at = table.find(needle)
        while at >= 0:
            end = table.find(b"\n", at)
            line = table[at:end if end >= 0 else len(table)]
            try:
                entry = fastjson.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                entry = None
            if isinstance(entry, dict) and isinstance(entry.get("note"), str):
                out.append(entry)
            at = table.find(needle, end if end >= 0 else len(table))
    return out


def _others(table: bytes, needle: bytes, found: list) -> list:
    """The parsed lines holding ``needle`` whose lesson is not in ``found``."""
    out, known = [], {e["id"] for e in found}
    for line in table.split(b"\n"):
        if needle not in line:
            continue
        try:
            entry = fastjson.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(entry, dict) and entry.get("id") not in known:
            out.append(entry)
    return out


def by_error(table: bytes, errors: set, found: list, said: set) -> list:
    """Lines not in ``found`` whose error words the failure holds almost all of: the same
    failure reached through another command, or on another file or folder than the one
    first seen. They need no family, ``needs`` or folder, but a word that is neither one
    every error has nor one of the call (``ls``'s own "No such file or directory")."""
    return [dict(entry, needs=[], folder="", strong=True)
            for entry in _others(table, b'"error": [', found)
            if any(isinstance(want, list) and len(want) >= 3 and set(want) - GENERIC - said and
                   sum(1 for w in want if w in errors) >= STRONG * len(want)
                   for want in _errors(entry))]


def by_subject(table: bytes, errors: set, found: list, said: set) -> list:
    """Lines not in ``found`` whose every ``needs`` is a path this call names, whose error
    words the failure mostly holds: the same file or folder failing the same way through
    another command or tool (``cat mise-tasks/lint``, then a Read of it)."""
    out = []
    for entry in _others(table, b'"needs": [', found):
        need = entry.get("needs")
        if isinstance(need, list) and need and all(
                isinstance(w, str) and "/" in w and names(said, w) for w in need) and \
                matches(dict(entry, folder=""), "tool_failure", said, "", errors):
            out.append(dict(entry, folder=""))
    return out


def current(store_dir: str, table: bytes, chosen: list) -> list:
    """``chosen`` minus the lessons whose card changed since the table was built, so a note a
    person rejected or the agent rewrote is not said from an old table. The table's first line
    names the cards file as it was; lines appended since are searched for the lessons' ids;
    a file edited in place, replaced or compacted shows nothing until learning rebuilds it."""
    if not table.startswith(b'{"cards": '):
        return chosen  # a table from before the first line was written: as it says
    try:
        dev, ino, size, ctime = fastjson.loads(table[:table.find(b"\n")].decode("utf-8"))["cards"]
        fd = fs.open_fd(fs.join(store_dir, "aha_cards.jsonl"), fs.O_RDONLY | fs.O_NOFOLLOW)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return []
    try:
        st = fs.fstat(fd)
        if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < size or \
                st.st_size - size > MAX_NEW or (st.st_size == size and st.st_ctime_ns != ctime):
            return []
        new = fs.pread(fd, st.st_size - size, size) if st.st_size > size else b""
    finally:
        fs.close(fd)
    return [e for e in chosen if fastjson.dumps(e["id"]).encode("utf-8") not in new]


def at_call(record: dict, repo_root: str, store_dir: str, command: str = "",
            hook_event: str = "") -> str:
    """What the hook prints for a tool call or a failure ("" when no lesson's trigger fits
    and, at a failure, the shell's folder explains nothing: ``surfacing.elsewhere``)."""
    event, agent = record.get("event", ""), record.get("agent", "")
    shape = SHAPES.get((agent, event))
    if shape is None:
        return ""
    command = command or str(record.get("args") or "")
    session = str(record.get("session_id") or "")
    chosen = _fitting(record, repo_root, store_dir, command, session)
    hint = ""
    if event == "tool_failure" and record.get("error"):
        from .elsewhere import hint as folder_hint
        hint = folder_hint(record, repo_root, command)
    if not chosen and not hint:
        return ""
    text = hint + "".join(e["note"].rstrip("\n") + "\n" for e in chosen)
    if agent == "codex" and event == "tool_failure":
        shape = "PostToolUse"
    elif agent == "claude" and event == "tool_failure" and hook_event in ("PostToolUse",
                                                                          "PostToolBatch"):
        shape = hook_event  # a failure the client reported as a finished call, or in its list
        # of a batch's calls (one it turned down before it ran: an unknown skill)
    out = fastjson.dumps({"hookSpecificOutput": {"hookEventName": shape,
                                                 "additionalContext": text}}) + "\n"
    shown.append(fs.join(store_dir, shown.FILE), session, agent, event, [e["id"] for e in chosen],
                 len(out), call=str(record.get("tool_use_id") or ""),
                 obs=str(record.get("id") or "") if chosen else "")  # (a lesson covers it)
    return out


def _fitting(record: dict, repo_root: str, store_dir: str, command: str, session: str) -> list:
    """The table's lessons whose trigger fits this call, not yet shown in the session, the
    best ``PER_CALL``."""
    event = record.get("event", "")
    lines = table(store_dir)
    if not lines:
        return []
    errors = failure_words(str(record.get("error") or "")) if event == "tool_failure" else set()
    found = candidates(lines, families_of(record, command))
    said = set(words(command)) if found or errors else set()
    if found:
        where = folder(str(record.get("cwd") or ""), command, repo_root)
        found = [e for e in found if matches(e, event, said, where, errors)]
    fit = found + by_error(lines, errors, found, said) + by_subject(lines, errors, found, said) \
        if errors else found
    if not fit:
        return []
    seen = shown.in_session(fs.join(store_dir, shown.FILE), session, TRIGGERS)
    chosen = [e for e in dict((e["id"], e) for e in fit if e["id"] not in seen).values()]
    return current(store_dir, lines, chosen)[:PER_CALL]
