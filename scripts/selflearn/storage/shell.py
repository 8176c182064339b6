"""Shell text as structure: pipelines of commands, their words, redirections and nested scripts.

A small, tolerant reader for judging what a lesson's commands do (``effects``), not a shell:
quotes, backslashes and ``$'…'`` are removed as a shell removes them (``cu''rl`` is ``curl``);
``$(…)``, backticks, ``<(…)``, ``>(…)``, here-strings and here-documents keep the scripts they
hold; ``&&``, ``||``, ``;``, ``&``, newlines and pipes split commands. Prose around a command
parses as more words, and an unmatched quote is a literal character, so a lesson never fails
to parse. Bounded: nesting deeper than ``MAX_DEPTH`` is read as plain text. Standard library
only; must not import any stage above storage.
"""

import re
from typing import List, Optional, Tuple

MAX_DEPTH = 6
_PLAIN = re.compile(r"[^\s'\"\\$`|&;<>()]+")
_REDIR = re.compile(r"(?:\d*|&)(?:<<<|<<-|<<|<>|<&|>>|>&|>\||&>>|&>|<|>)")
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class Word(str):
    """A word as a program receives it; ``subs``: the scripts whose output it holds (``$(…)``,
    backticks, ``<(…)``, here-document bodies); ``texts``: quoted text holding a space (what
    ``sh -c``, ``eval`` or ``ssh host`` would run)."""
    subs: Tuple["Script", ...] = ()
    texts: Tuple[str, ...] = ()


class Command:
    """One simple command: ``assigns`` (``NAME=value`` before it), ``words``, ``redirs``
    (``(operator, target)``; a here-document's target is its body) and ``group`` (``( … )``)."""
    __slots__ = ("words", "assigns", "redirs", "group")

    def __init__(self):
        self.words: List[Word] = []
        self.assigns: List[Tuple[str, Word]] = []
        self.redirs: List[Tuple[str, Word]] = []
        self.group: Optional["Script"] = None

    def empty(self) -> bool:
        return not (self.words or self.assigns or self.redirs or self.group)


Pipeline = List[Command]
Script = List[Pipeline]


def parse(text: str, depth: int = 0) -> Script:
    """The pipelines of ``text``, in order (connectors are not kept: each runs in turn)."""
    reader = _Reader(text, depth)
    return reader.script(None)


def _word(text: str, subs=(), texts=()) -> Word:
    w = Word(text)
    if subs:
        w.subs = tuple(subs)
    if texts:
        w.texts = tuple(texts)
    return w


class _Reader:
    def __init__(self, text: str, depth: int):
        self.s, self.i, self.n, self.depth = text, 0, len(text), depth
        self.close: Optional[str] = None  # the character that ends this script: ")" or none
        self.pending: List[Tuple[Command, int, str, bool, bool]] = []  # here-documents to read

    # --- scripts -------------------------------------------------------------------------------
    def script(self, close: Optional[str]) -> Script:
        s = self.s
        self.close = close
        out: Script = []
        pipe: Pipeline = []
        cmd = Command()

        def end_command():
            nonlocal cmd
            if not cmd.empty():
                pipe.append(cmd)
            cmd = Command()

        def end_pipeline():
            nonlocal pipe
            end_command()
            if pipe:
                out.append(pipe)
            pipe = []

        while self.i < self.n:
            c = s[self.i]
            if c in " \t\r":
                self.i += 1
            elif c == "\n":
                self.i += 1
                end_command()
                self._heredocs()
                if not self._continued():
                    end_pipeline()
            elif close and c == close:
                self.i += 1
                break
            elif c == "|":
                if s.startswith("||", self.i):
                    self.i += 2
                    end_pipeline()
                else:
                    self.i += 2 if s.startswith("|&", self.i) else 1
                    end_command()
            elif c == ";" or (c == "&" and not s.startswith("&>", self.i)):
                self.i += 2 if s.startswith(("&&", ";;"), self.i) else 1
                end_pipeline()
            elif c == "(" and not cmd.words and self.depth < MAX_DEPTH:
                self.i += 1
                inner = _Reader(s, self.depth + 1)
                inner.i = self.i
                cmd.group = inner.script(")")
                self.i = inner.i
            elif c == ")":
                self.i += 1  # a stray parenthesis (prose): a separator
                end_command()
            elif c in "<>" or ((c.isdigit() or c == "&") and _REDIR.match(s, self.i)):
                if c in "<>" and s.startswith("(", self.i + 1):
                    cmd.words.append(self._word())  # process substitution
                elif not self._redirect(cmd):
                    self.i += 1
            else:
                word = self._word()
                if not cmd.words and _ASSIGN.match(word):
                    name, _, value = word.partition("=")
                    cmd.assigns.append((name.rstrip("+"), _word(value, word.subs, word.texts)))
                else:
                    cmd.words.append(word)
        end_pipeline()
        self._heredocs()
        return out

    def _continued(self) -> bool:
        """A line that starts with a pipe or ``&&``/``||`` continues the one before."""
        j = self.i
        while j < self.n and self.s[j] in " \t":
            j += 1
        return self.s.startswith(("|", "&&"), j)

    def _redirect(self, cmd: Command) -> bool:
        m = _REDIR.match(self.s, self.i)
        if not m:
            return False
        op = m.group(0).lstrip("0123456789")
        self.i = m.end()
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1
        if self.i >= self.n or self.s[self.i] in "\n|;&<>()" and not \
                self.s.startswith(("<(", ">("), self.i):  # < <(curl …) reads a script's output
            return True
        target = self._word()
        if op in ("<<", "<<-"):
            quoted = any(q in self.s[m.end():self.i] for q in "'\"\\")
            self.pending.append((cmd, len(cmd.redirs), str(target), op == "<<-", quoted))
        cmd.redirs.append((op, target))
        return True

    def _heredocs(self) -> None:
        """Read the bodies of the here-documents opened on the line just ended."""
        for cmd, k, delim, tabs, quoted in self.pending:
            lines = []
            while self.i < self.n:
                end = self.s.find("\n", self.i)
                end = self.n if end < 0 else end
                line = self.s[self.i:end]
                self.i = min(end + 1, self.n)
                if (line.lstrip("\t") if tabs else line).strip() == delim:
                    break
                lines.append(line)
            body = "\n".join(lines)
            subs = [] if quoted else self._subs_of(body)
            cmd.redirs[k] = (cmd.redirs[k][0], _word(body, subs, [body] if not subs else []))
        self.pending = []

    def _subs_of(self, text: str) -> List[Script]:
        """The scripts in ``$(…)`` and backticks of an unquoted here-document body."""
        r = _Reader(text, self.depth + 1)
        _, subs, _ = r._double(len(text), stop="")
        return subs

    # --- words ---------------------------------------------------------------------------------
    def _word(self) -> Word:
        s = self.s
        parts: List[str] = []
        subs: List[Script] = []
        texts: List[str] = []
        while self.i < self.n:
            c = s[self.i]
            m = _PLAIN.match(s, self.i)
            if m:
                parts.append(m.group(0))
                self.i = m.end()
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    parts.append("'")
                    self.i += 1
                else:
                    body = s[self.i + 1:j]
                    parts.append(body)
                    if " " in body or "\n" in body:
                        texts.append(body)
                    self.i = j + 1
            elif c == '"':
                start = self.i
                self.i += 1
                body, inner, closed = self._double(self.n, stop='"')
                if not closed:
                    self.i = start + 1
                    parts.append('"')
                    continue
                parts.append(body)
                subs += inner
                if " " in body or "\n" in body:
                    texts.append(body)
            elif c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                else:
                    parts.append(s[self.i + 1:self.i + 2])
                    self.i += 2
            elif c == "$":
                parts.append(self._dollar(subs, texts))
            elif c == "`":
                parts.append(self._backtick(subs))
            elif c in "<>" and s.startswith("(", self.i + 1) and not parts:
                start = self.i
                parts.append(self._nested(self.i + 2, subs) or s[start:self.i])
            elif c == "(" and not parts and self.depth < MAX_DEPTH:
                parts.append(self._nested(self.i + 1, subs))  # PowerShell's ``iex (iwr …)``
            elif c in "()" and not (c == ")" and self.close):
                parts.append(c)  # a parenthesis inside a word (prose, code): literal
                self.i += 1
            else:
                break
        if not parts and self.i < self.n and not subs:  # nothing read: one literal character
            parts.append(s[self.i])
            self.i += 1
        return _word("".join(parts), subs, texts)

    def _nested(self, start: int, subs: List[Script]) -> str:
        """``$(…)`` or ``<(…)`` from ``start`` (after the parenthesis): its script joins
        ``subs``; returns the raw text."""
        if self.depth >= MAX_DEPTH:
            end = self.s.find(")", start)
            end = self.n if end < 0 else end + 1
            raw, self.i = self.s[self.i:end], end
            return raw
        inner = _Reader(self.s, self.depth + 1)
        inner.i = start
        subs.append(inner.script(")"))
        raw, self.i = self.s[self.i:inner.i], inner.i
        return raw

    def _dollar(self, subs: List[Script], texts: List[str]) -> str:
        s, i = self.s, self.i
        nxt = s[i + 1:i + 2]
        if s.startswith("$((", i):
            end = s.find("))", i)
            end = self.n if end < 0 else end + 2
            raw, self.i = s[i:end], end
            return raw
        if nxt == "(":
            return self._nested(i + 2, subs)
        if nxt == "{":
            end = s.find("}", i)
            end = self.n if end < 0 else end + 1
            raw, self.i = s[i:end], end
            return raw
        if nxt == "'":
            j, out = i + 2, []
            while j < self.n and s[j] != "'":
                if s[j] == "\\" and j + 1 < self.n:
                    k, ch = _ansi(s, j + 1)
                    out.append(ch)
                    j = k
                else:
                    out.append(s[j])
                    j += 1
            self.i = min(j + 1, self.n)
            body = "".join(out)
            if " " in body:
                texts.append(body)
            return body
        self.i += 1
        return "$"

    def _backtick(self, subs: List[Script]) -> str:
        j = self.s.find("`", self.i + 1)
        if j < 0:
            self.i += 1
            return "`"
        body = self.s[self.i + 1:j]
        if self.depth < MAX_DEPTH:
            subs.append(parse(body, self.depth + 1))
        raw, self.i = self.s[self.i:j + 1], j + 1
        return raw

    def _double(self, limit: int, stop: str):
        """The text of a double-quoted string from ``self.i`` up to ``stop`` (the closing quote;
        empty: to ``limit``), its nested scripts, and whether it was closed."""
        s = self.s
        parts: List[str] = []
        subs: List[Script] = []
        while self.i < limit:
            c = s[self.i]
            if stop and c == stop:
                self.i += 1
                return "".join(parts), subs, True
            if c == "\\" and self.i + 1 < limit and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    parts.append(s[self.i + 1])
                self.i += 2
            elif c == "$" and s[self.i + 1:self.i + 2] in ("(", "{"):
                parts.append(self._dollar(subs, []))
            elif c == "`":
                parts.append(self._backtick(subs))
            else:
                parts.append(c)
                self.i += 1
        return "".join(parts), subs, not stop


def _ansi(s: str, j: int) -> Tuple[int, str]:
    """One escape of ``$'…'`` at ``s[j]`` (after the backslash): (next index, character)."""
    c = s[j]
    if c in "xuU":
        width = {"x": 2, "u": 4, "U": 8}[c]
        m = re.match(r"[0-9A-Fa-f]{1,%d}" % width, s[j + 1:j + 1 + width])
        if m:
            return j + 1 + m.end(), chr(min(int(m.group(0), 16), 0x10FFFF))
    if c in "01234567":
        m = re.match(r"[0-7]{1,3}", s[j:j + 3])
        return j + m.end(), chr(int(m.group(0), 8) & 0xFF)
    return j + 1, _ANSI.get(c, "\\" + c)
