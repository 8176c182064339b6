"""Fingerprints of failures: the same mistake looks the same across sessions.

Owns: normalizing an error head (paths, temp names, timestamps, UUIDs, hex,
numbers and quoted values become placeholders), picking its most telling
line, and the fingerprint ``kind|tool|family|normalized line`` with its short
digest. Pure functions, no I/O; used by the miners. Must not import cli.
Changing a rule changes fingerprints, so mined cards made before the change
start new clusters; note such changes in references/LEARNING.md.
"""

import hashlib
import re

from ..observation import causes

# Order matters: a rule must not see what an earlier one already replaced.
_RULES = (
    (re.compile(r"</?tool_use_error>"), ""),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`"
                r"|\u2018[^\u2019\n]{0,200}\u2019"), "<X>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
     "<uuid>"),
    (re.compile(r"(?:[A-Za-z]:\\|~/|\.{1,2}/)[^\s:'\"`,;()\[\]{}<>]*"
                r"|(?<![\w.-])/[^\s:'\"`,;()\[\]{}<>]+"
                r"|(?<![\w.@+-])(?![A-Z]{1,4}\d{3,5}/)[\w.@+-]+(?:/[\w.@+-]+)+/?"), "<path>"),
    # (a linter's rule such as MD040/fenced-code-language is no path)
    (re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
                r"(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<ts>"),
    (re.compile(r"\btmp[._-]?(?=[A-Za-z_]*\d)[A-Za-z0-9_]{5,}\b"), "<tmp>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<hex>"),
    (re.compile(r"(?<![A-Za-z<\d])\d+(?:\.\d+)*"), "<n>"),
)
# A branch, tag or remote named after these words varies between sessions ("The current
# branch fix-42 has no upstream branch"); the words that follow them in prose stay.
_REF = re.compile(r"(?<![-\w])(branch|tag|remote|ref|worktree|origin|upstream)\s+(?!<)"
                  r"(\w(?:[\w.+@-]*\w)?)", re.I)
_PROSE = {"has", "have", "is", "was", "to", "from", "the", "a", "an", "of", "and", "or", "name",
          "names", "already", "does", "not", "with", "for", "in", "on", "that", "which", "you",
          "set", "called", "named", "exists", "upstream", "tracking", "branch", "origin"}
def normalize(text: str) -> str:
    """``text`` with its variable parts as placeholders, whitespace collapsed."""
    for pattern, placeholder in _RULES:
        text = pattern.sub(placeholder, text)
    text = _REF.sub(lambda m: m.group(0) if m.group(2).lower() in _PROSE
                    else f"{m.group(1)} <ref>", text)
    return " ".join(text.split())


def placeholders(text: str, error: str) -> str:
    """``text`` with the branch, tag or remote names that ``error`` mentions as placeholders
    (``git push --set-upstream origin fix-42`` -> ``... origin <branch>``): a lesson shown
    for every branch must not carry the one of the session it was seen in."""
    for m in _REF.finditer(error or ""):
        kind, name = m.group(1).lower(), m.group(2)
        if name.lower() in _PROSE or len(name) < 3:
            continue
        holder = "<remote>" if kind in ("origin", "upstream") else f"<{kind}>"
        text = re.sub(r"(?<![\w./-])" + re.escape(name) + r"(?![\w/-])", holder, text)
    return text


def key_line(error: str) -> str:
    """The line of an error that names its cause (``causes.cause_line``: runner-aware, over
    the whole text, banners and progress lines never chosen), else its first line."""
    return causes.cause_line(error or "")


def command_word(obs: dict) -> str:
    """What ran: the shell family (``npm test``), an MCP family, else the tool name."""
    return str(obs.get("family") or obs.get("tool") or "?")


def of_failure(obs: dict):
    """``(fingerprint text, digest, raw key line)`` of one tool_failure observation: the
    fingerprint clusters on the normalized line, the raw line (already redacted) is shown."""
    raw = key_line(str(obs.get("error") or ""))
    head = normalize(raw)[:200] or f"exit code {obs.get('exit_code', '?')}"
    text = "|".join((str(obs.get("tool_kind") or "other"), str(obs.get("tool") or "?"),
                     str(obs.get("family") or ""), head))
    return text, digest(text), raw


def digest(text: str, fold_case: bool = True) -> str:
    """12 hex digits of the SHA-256 of a fingerprint: short, stable, case-blind unless
    ``fold_case`` is False (an edit from ``Foo`` to ``foo`` is not one from ``foo`` to ``Foo``)."""
    text = text.lower() if fold_case else text
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def head_of(text: str) -> str:
    """The normalized error part of a fingerprint text."""
    return text.split("|", 3)[-1]


def normalize_args(args: str) -> str:
    """A command with its variable parts as placeholders, to tell variants from retries."""
    return normalize(args or "")
