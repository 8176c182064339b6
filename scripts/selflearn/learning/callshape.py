"""The shape of the call a lesson is about: what a later call must look like to get it.

A lesson's ``call`` (card field) says when it matters: ``tool``, ``family`` (``git push``),
``needs`` (the words of the failed call that the error itself names: the argument or path
that mattered), ``skip`` (the words a fix of the same command added: a call that already
carries them follows the lesson), ``folder`` (where the failure ran, relative to the
repository, when running elsewhere was the fix) and ``error`` (the distinctive words of the
cause line, to know the same failure when it comes back). ``surfacing.jit`` matches calls
against it through ``triggers.jsonl``. Pure; must not import cli or surfacing.
"""

import re
from typing import List, Optional

from ..observation import causes, commands
from ..observation.causes import missing_program
from ..observation.commands import words
from . import fingerprint

MAX_WORDS = 10
PLACEHOLDERS = {"x", "n", "path", "hex", "ts", "uuid", "tmp", "ref"}
COMMON = {"the", "a", "an", "to", "of", "in", "is", "not", "no", "for", "on", "and", "or",
          "with", "be", "was", "it", "this", "that", "at", "by", "as", "error", "failed",
          "fatal", "from", "are", "has", "have", "did", "does", "could", "cannot", "can't"}


def _segment(args: str, family: str) -> str:
    """The part of a shell line that has the family (else the whole line)."""
    for seg in commands.segments(args or ""):
        if commands.command_family(seg) == family:
            return seg
    return args or ""


def _operands(segment: str, family: str) -> List[str]:
    """The segment's words after its family's words that are not options or quoted text."""
    out = []
    said = family.split()
    for token in segment.split():
        token = token.strip("'\"")
        if said and token.rsplit("/", 1)[-1] == said[0]:
            said.pop(0)
            continue
        if not token or token.startswith(("-", "$", "<", ">", "|", "&")) or "=" in token:
            continue
        out.append(token)
    return out


def needs(args: str, family: str, error: str) -> List[str]:
    """Paths among the failed call's operands that the error names (``config/settings.yaml``):
    the argument that mattered. A plain word an error repeats (``add``) is no such thing."""
    low = (error or "").lower()
    found = []
    for token in _operands(_segment(args, family), family):
        bare = token.lower().rstrip("/")
        bare = bare[2:] if bare.startswith("./") else bare
        if len(bare) > 3 and ("/" in bare or "." in bare.strip(".")) and bare in low:
            found += [w for w in words(token) if w not in found]
    return found[:MAX_WORDS]


def skip(failed: str, fix: str, family: str) -> List[str]:
    """Words a fix of the same family added to the failed call (``--set-upstream``), outside
    quoted text: what a quoted argument holds (the remote command of ``ssh host '…'``, a
    query, a message) is what the call was about, not how the fix ran it."""
    before = set(words(_segment(failed, family)))
    segment = " ".join(t for t in _segment(fix, family).split() if not t.startswith("<"))
    if commands.command_family(segment) != family:
        return []
    added = [w for w in words(_unquoted(segment)) if w not in before and _general(w)]
    return list(dict.fromkeys(added))[:3]


def _unquoted(text: str) -> str:
    """``text`` without its single- and double-quoted parts."""
    out, quote = [], ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _general(word: str) -> bool:
    """A word a fix adds that would be the same next time: an option or a short name, not a
    file of this change (``lib/x.ex``) or a placeholder (``<branch>``)."""
    return word.startswith("-") or (len(word) <= 20 and not any(c in word for c in "/.<>"))


# A quoted name in an error (`Cannot find module '@scope/core'`, executable `turbo`): the one
# word that says which failure this is. Files (a dot), paths and numbers vary, so they stay out.
_NAMED = re.compile(r"['\"`\u2018]([@\w][\w@+-]*(?:/[\w+-]+)?)['\"`\u2019]")


def error_words(line: str) -> List[str]:
    """The distinctive words of a cause line: its variable parts (paths, numbers, quoted
    values) left out, but the names it quotes kept (the module or program that is missing)."""
    out = []
    named = [w for m in _NAMED.finditer(line or "") if not m.group(1).isdigit()
             for w in words(m.group(1))]
    for w in words(fingerprint.normalize(line or "")) + named:
        if w in PLACEHOLDERS or w in COMMON or w.isdigit() or len(w) < 2:
            continue
        if w not in out:
            out.append(w)
    return out[:MAX_WORDS]


def shape(tool: str, family: str, failed: str, error: str, folder: str = "",
          fix: Optional[str] = None) -> dict:
    """A lesson's ``call``, from the failed call, its cause line and (when known) its fix. A
    program the shell could not find is missing for every subcommand and in every folder:
    the lesson is about any call of it (``go *``), wherever it runs, that fails for want of
    it, however the shell says so (``causes.MISSING``: ``jit.failure_words``)."""
    program = missing_program(error)
    if program and any(commands.command_family(seg).split()[:1] == [program]
                       for seg in commands.segments(failed or "")):
        return {"tool": tool, "family": program + commands.ANY,
                "error": [causes.MISSING + program.lower()]}
    out = {"tool": tool, "family": family, "needs": needs(failed, family, error),
           "skip": skip(failed, fix, family) if fix else [], "folder": folder,
           "error": error_words(error)}
    return {k: v for k, v in out.items() if v}
