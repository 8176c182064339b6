"""``improve``: guarded edits of always-loaded guidance files (AGENTS.md, CLAUDE.md, …).

Owns: appending a rule or replacing one ``## heading`` section (the rest of the
file stays byte-identical), the backup before every write
(``<store>/backups/<file>/<UTC stamp>.bak``, pruned to BACKUPS_KEEP and
BACKUPS_MAX_DAYS), and the change log ``<store>/improvements.md`` (append-only,
one locked write per entry). Every check runs before the first write, so a
refusal writes nothing. ``append_rule`` is the entry point for the proposals
inbox. Path guard and rule checks: ``guidance``. Must not import cli.
"""

import os
import re
import time
from typing import List, Optional

from . import guidance
from ..storage import model, paths, redact, screen, store
from ..storage.errors import UsageError
from ..storage.text import inert

BACKUPS_DIR = "backups"      # under the store: one folder per guidance file
BACKUPS_KEEP = 5             # newest backups kept per file
BACKUPS_MAX_DAYS = 7         # older backups are deleted (never the one just written)
LOG_FILE = "improvements.md"  # change log in the store, appended to, never rewritten
MAX_RATIONALE = 300          # characters of rationale kept (one line)
MAX_HEADING = 100            # characters a section heading may have
STAMP = "%Y%m%dT%H%M%SZ"     # UTC second in backup names; a same-second backup gets .1, .2
_BACKUP = re.compile(r"^(\d{8}T\d{6}Z)(?:\.(\d+))?\.bak$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


class DuplicateRule(UsageError):
    """The rule repeats a line of the file: ``path`` (absolute) ``where`` (``<rel> line N``)."""

    def __init__(self, message: str, path: str, where: str):
        super().__init__(message)
        self.path, self.where = path, where


def append_rule(repo_root: str, file: str, text: str, rationale: str, source: str,
                store_root: Optional[str] = None) -> dict:
    """Append one rule to a guidance file (used when a rule proposal is applied).

    Raises ``SelfLearningError`` (one line) on refusal; nothing is written then.
    """
    root = store_root or paths.project_store(repo_root, paths.user_slug())
    return improve(root, repo_root, file, text, rationale, source=source)


def improve(store_root: str, repo_root: str, file: str, text: str, rationale: str,
            heading: Optional[str] = None, source: str = "cli", dry_run: bool = False) -> dict:
    """Check, back up, write and log one change; ``heading`` switches to update-section."""
    path, rel = guidance.resolve(repo_root, file)
    rationale = _one_line(rationale, "--rationale", "why this rule helps")[:MAX_RATIONALE]
    guidance.check_rule(redact.redact_text(_tidy(text)), rel)  # refusals read it as written
    clean = _clean(text)
    flags = [f.reason for f in screen.text_findings(clean + "\n" + (heading or ""))]
    if flags:
        raise UsageError(f"improve: the safety screen holds this text back ({'; '.join(flags)}); "
                         f"{rel} is loaded into every session, so nothing was written (a person "
                         "who means it edits the file by hand)")
    if heading is None and "\n" in clean:
        raise UsageError(f"improve: --append takes one line (a rule), got "
                         f"{len(clean.splitlines())}; use --update-section with --text for a "
                         "block; nothing was written")
    old = guidance.read(path, rel)
    lines = (old or "").splitlines(keepends=True)
    if heading is None:
        new, found, others = _appended(old or "", clean), None, list(enumerate(lines, 1))
    else:
        heading = _one_line(heading.lstrip("#"), "--update-section", "the section title")
        if len(heading) > MAX_HEADING:
            raise UsageError(f"improve: --update-section heading is longer than {MAX_HEADING} "
                             "characters; name the section by its title")
        new, found, others = _section_update(old or "", lines, heading, clean)
    dup = guidance.duplicate_of(clean, [(n, line) for n, line in others if line.strip()])
    if dup:
        raise DuplicateRule(f"improve: rule duplicates {rel} line {dup['line']} "
                            f"({dup['overlap']:.0%} token overlap > "
                            f"{guidance.DUPLICATE_OVERLAP:.0%}): {dup['text'][:80]}; "
                            "nothing was written", path, f"{rel} line {dup['line']}")
    data = {"file": rel, "path": path, "action": "append" if heading is None else
            "update-section", "section": heading, "section_found": found,
            "created": old is None, "text": clean,
            "redacted": clean != inert(_tidy(text)),
            "rationale": rationale, "source": source, "dry_run": dry_run,
            "changed": new != (old or ""), "written": False, "backup": None, "pruned": [],
            "log": os.path.join(store_root, LOG_FILE)}
    if dry_run or not data["changed"]:
        return data
    store.guard(path, below=os.path.dirname(path))  # a hard link: refused before the backup
    if old is not None:
        data["backup"], data["pruned"] = backup(store_root, rel, old, new)
    mode = os.stat(path).st_mode & 0o7777 if old is not None else None
    store.atomic_write(path, new, private=False)
    if mode is not None:
        os.chmod(path, mode)
    data["written"] = True
    _log(store_root, data)
    return data


def _one_line(value, flag: str, what: str) -> str:
    text = " ".join(str(value or "").split())
    if not text:
        raise UsageError(f"improve: {flag} is empty; give {what}")
    return inert(redact.redact_text(text))


def _tidy(text: str) -> str:
    """Trailing spaces and surrounding blank lines dropped; inner lines kept."""
    return "\n".join(line.rstrip() for line in str(text or "").splitlines()).strip("\n")


def _clean(text: str) -> str:
    """The text as written to a guidance file: redacted and inert (no tag, comment, remote
    image or script link renders from it)."""
    return inert(redact.redact_text(_tidy(text)))


def _newline(old: str) -> str:
    return "\r\n" if "\r\n" in old else "\n"


def _appended(old: str, text: str) -> str:
    """``old`` plus the rule; a blank line between, unless both are list items."""
    nl = _newline(old)
    body = nl.join(text.split("\n")) + nl
    if not old.strip():
        return old + body
    tail = old if old.endswith(("\n", "\r")) else old + nl
    last = old.rstrip().splitlines()[-1]
    joined = _LIST_ITEM.match(last) and _LIST_ITEM.match(text)
    return tail + ("" if joined or tail.endswith(nl + nl) else nl) + body


def _section_update(old: str, lines: List[str], heading: str, text: str):
    """``(new text, section found, other numbered lines)``: only the section body changes."""
    nl = _newline(old)
    where = guidance.section(lines, heading)
    body = nl.join(text.split("\n")) + nl
    if where is None:
        return _appended(old, f"## {heading}\n\n{text}"), False, list(enumerate(lines, 1))
    start, first, end = where
    head = "".join(lines[start:first])
    head += "" if head.endswith(("\n", "\r")) else nl
    new = "".join(lines[:start]) + head + nl + body + (nl if end < len(lines) else "") \
        + "".join(lines[end:])
    others = [(n, line) for n, line in enumerate(lines, 1) if not first < n <= end]
    return new, True, others


# --- backups and the change log -------------------------------------------------------------

def backup_dir(store_root: str, rel: str) -> str:
    """``<store>/backups/<rel with / as __>``: one flat folder per guidance file."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", rel.replace("/", "__"))
    return os.path.join(store_root, BACKUPS_DIR, safe)


def backup(store_root: str, rel: str, content: str, later: str = ""):
    """Write ``content`` as the newest backup, prune the folder; ``(backup, pruned names)``.

    ``later`` is what the file holds after the write: a backup whose lines it still holds
    can go before one holding the only copy of lines the write removed."""
    folder = backup_dir(store_root, rel)
    stamp = time.strftime(STAMP, time.gmtime(model.now()))
    name, n = f"{stamp}.bak", 0
    while os.path.exists(os.path.join(folder, name)):
        n += 1
        name = f"{stamp}.{n}.bak"
    path = os.path.join(folder, name)
    store.atomic_write(path, content.encode("utf-8"))
    return os.path.relpath(path, store_root), prune(folder, name, later)


def prune(folder: str, keep: str, later: str = "") -> List[str]:
    """Delete backups older than BACKUPS_MAX_DAYS, and past the newest BACKUPS_KEEP; never
    ``keep``, the one just written. Past the count, a backup every line of which a newer one
    (or ``later``, the file now) still holds goes first, so the only copy of lines an update
    removed is not rotated out by the writes after it."""
    found = []
    for name in os.listdir(folder):
        m = _BACKUP.match(name)
        if m:
            when = model.timegm(time.strptime(m.group(1), STAMP))
            found.append((when, int(m.group(2) or 0), name))
    # the one just written counts first, even when the clock went back
    found.sort(key=lambda f: (f[2] == keep, f[:2]), reverse=True)
    cutoff = model.now() - BACKUPS_MAX_DAYS * 86400
    gone = [name for when, _, name in found if name != keep and when < cutoff]
    kept = [name for _, _, name in found if name not in gone]
    seen, unique = _lines(later), set()
    for name in kept:
        lines = _lines(_read(os.path.join(folder, name)))
        if lines - seen:
            unique.add(name)
        seen |= lines
    # drop from the oldest: first the backups nothing is lost without, then the others
    older = [name for name in reversed(kept) if name != keep]
    order = [n for n in older if n not in unique] + [n for n in older if n in unique]
    gone += order[:max(0, len(kept) - BACKUPS_KEEP)]
    for name in gone:
        os.unlink(os.path.join(folder, name))
    return gone


def _lines(text: str) -> set:
    return {line.strip() for line in text.splitlines() if line.strip()}


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _log(store_root: str, data: dict) -> None:
    """One entry in improvements.md: when, what, why, the backup and the text."""
    action = data["action"] + (f" \"{data['section']}\"" if data["section"] else "")
    quoted = "\n".join(f"> {line}" if line else ">" for line in data["text"].split("\n"))
    entry = (f"## {model.iso()} {action} {data['file']}\n\n"
             f"- source: {data['source']}\n- rationale: {data['rationale']}\n"
             f"- backup: {data['backup'] or 'none (file created)'}\n\n{quoted}\n\n")
    store.append_bytes(data["log"], entry.encode("utf-8"), durable=True)


def scan_duplicates(repo_root: str) -> dict:
    return guidance.scan(repo_root)


# --- rendering --------------------------------------------------------------------------------

def render(data: dict) -> List[str]:
    """What was (or would be) written, where the backup went; or the duplicate scan."""
    if "removals" in data:
        return _render_scan(data)
    what = "append to" if data["action"] == "append" else \
        f"{'replace' if data['section_found'] else 'add'} section \"{data['section']}\" in"
    if not data["changed"]:
        return [f"{data['file']}: section \"{data['section']}\" already says this; nothing written"]
    lines = [("dry run: would " if data["dry_run"] else "did ") + what + " " + data["file"]
             + (" (new file)" if data["created"] else "") + ":"]
    lines += [f"  {line}" for line in data["text"].split("\n")]
    if data["redacted"]:
        lines.append("secrets in the text were redacted")
    if data["written"]:
        lines.append(f"backup: {data['backup'] or 'none (file created)'}; logged in {data['log']}")
        lines += [f"pruned old backup {name}" for name in data["pruned"]]
    elif data["dry_run"]:
        lines.append("dry run: nothing written")
    return lines


def _render_scan(data: dict) -> List[str]:
    lines = [f"scanned {len(data['files'])} guidance file(s): {', '.join(data['files']) or '-'}"]
    for r in data["removals"]:
        lines.append(f"- remove {r['file']}:{r['line']} ({r['overlap']:.0%} overlap; keep "
                     f"{r['keep']['file']}:{r['keep']['line']}): {r['text'][:100]}")
    lines.append(f"{len(data['removals'])} proposed removal(s); nothing was changed"
                 if data["removals"] else "no duplicate lines")
    return lines
