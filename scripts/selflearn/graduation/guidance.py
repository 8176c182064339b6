"""Always-loaded guidance files: which they are, how to reach them safely, what a rule may say.

Owns: the known guidance file names, the path guard (nothing outside the
repository, through a symlink pointing out, a symlink target, or into ``.git``
and the store), reading a guidance file as text, the rule checks (trivial,
oversized, log-shaped, duplicate by token overlap) and the duplicate scan
across guidance files. Pure reads; ``improve`` does the writing. Constants:
references/GUIDANCE.md. Must not import cli.
"""

import os
import re
import stat
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from ..storage.errors import UsageError

# Files the agents load into every session; these may be created when missing.
KNOWN_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md",
               "CLAUDE.local.md", "CONVENTIONS.md", ".cursorrules", ".windsurfrules",
               ".clinerules")
KNOWN_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", "CLAUDE.local.md")  # also in subfolders
RULE_DIRS = ((".cursor/rules", ".mdc"), (".github/instructions", ".instructions.md"))
TEXT_SUFFIXES = (".md", ".mdc", ".txt")  # other existing files improve may edit
FORBIDDEN_DIRS = (".git", ".agent-skills")  # never written: the repository and the store
MAX_FILE_BYTES = 1_000_000   # a bigger file is not an instruction file
MIN_RULE_CHARS = 15          # shorter is trivial ("be careful")
MAX_RULE_CHARS = 600         # longer belongs in a reference file, not in always-loaded text
MAX_RULE_LINES = 8           # more lines reads as pasted output, not a rule
DUPLICATE_OVERLAP = 0.70     # token-set Jaccard above this: two lines say the same
MIN_SCAN_TOKENS = 4          # shorter lines (headings, "- Run tests") are not scanned
MAX_DIGIT_SHARE = 0.25       # digits above this share of the non-space characters: log data
MIN_DIGIT_TEXT = 20          # ... checked once the rule has this many non-space characters
# Text a rule may not hold: export-rules' block markers and HTML comments (which hide text
# from readers and could forge or break the marked block).
MARKERS = ("self-learning-skills:begin", "self-learning-skills:end", "<!--", "-->")
# Each pattern marks text copied from tool output rather than written as a rule.
LOG_PATTERNS = (
    ("a timestamp", r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\b\d{1,2}:\d{2}:\d{2}\b"),
    ("a Python traceback", r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+"),
    ("a stack frame", r"^\s*at \S.*[(\s]\S+:\d+(?::\d+)?\)?\s*$"),
    ("a log-level prefix", r"^\s*\[?(?-i:ERROR|WARN|WARNING|INFO|DEBUG|FATAL|CRITICAL|TRACE)"
                           r"\]?(?::|\s)"),
    ("npm error output", r"^\s*npm (?:ERR!|error\b|warn\b)"),
    ("test runner output", r"^E {2,}\S|^> {3,}|^[=_-]{3,} \S.* [=_-]{3,}\s*$"
                           r"|\S::\S+ (?:PASSED|FAILED|ERROR)\b|^(?:FAILED|PASSED|ERROR) \S+::"),
    ("compiler output", r"\S\.\w+:\d+(?::\d+)?: "),
    ("a long hex or number", r"\b0x[0-9a-fA-F]{6,}\b|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{16,}\b"),
)
_LOG = tuple((name, re.compile(rx, re.M | re.I)) for name, rx in LOG_PATTERNS)
# Markdown as CommonMark reads it: an ATX heading (up to 3 spaces in, an optional closing
# run of #), a setext underline, a fence (closed only by a run of its own character at least
# as long).
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^(?: {4}|\s*(?:[-*+>]|\d+[.)])(?:\s|$)|\s*<!--)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_TOKEN = re.compile(r"[a-z0-9]{2,}")


# --- paths --------------------------------------------------------------------------------

def resolve(repo_root: str, file: str) -> Tuple[str, str]:
    """``(absolute path, repo-relative path)`` of a file improve may touch, else UsageError."""
    if not isinstance(file, str) or not file.strip() or "\0" in file:
        raise UsageError("improve: --file is empty; name a guidance file, e.g. --file AGENTS.md")
    root = os.path.realpath(repo_root)
    rel = _relative(repo_root, root, file)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UsageError(f"improve: --file {file!r} leaves the repository ('..'); "
                         "name a file inside it, e.g. --file AGENTS.md")
    here = root
    for i, part in enumerate(parts):
        here = os.path.join(here, part)
        if os.path.islink(here):
            _check_link(here, root, file, last=i == len(parts) - 1)
    real = os.path.relpath(os.path.join(os.path.realpath(os.path.dirname(here)),
                                        parts[-1]), root).split(os.sep)
    if real[0] == "..":  # pragma: no cover - a link pointing out was refused above
        raise UsageError(f"improve: --file {file!r} resolves outside the repository; "
                         "name a file inside it, e.g. --file AGENTS.md")
    if real[0] in FORBIDDEN_DIRS or parts[0] in FORBIDDEN_DIRS:
        raise UsageError(f"improve: --file {file!r} is inside {real[0]!r}, which improve never "
                         "writes; name a guidance file such as AGENTS.md")
    return here, "/".join(parts)


def _relative(repo_root: str, root: str, file: str) -> str:
    if not os.path.isabs(file):
        return file
    for base in (os.path.abspath(repo_root), root):
        rel = os.path.relpath(os.path.normpath(file), base)
        if rel != ".." and not rel.startswith(".." + os.sep):
            return rel.replace(os.sep, "/")
    raise UsageError(f"improve: --file {file!r} is outside the repository {repo_root}; "
                     "give a path relative to the repository root")


def _check_link(path: str, root: str, file: str, last: bool) -> None:
    if last:
        raise UsageError(f"improve: --file {file!r} is a symlink; edit the file it points to "
                         "by its own path inside the repository")
    target = os.path.realpath(path)
    if target != root and not target.startswith(root + os.sep):
        raise UsageError(f"improve: --file {file!r} goes through the symlink "
                         f"{os.path.relpath(path, root)!r}, which points outside the repository")


def is_known(rel: str) -> bool:
    """A file agents load by name (created when missing)."""
    if rel in KNOWN_FILES or rel.rsplit("/", 1)[-1] in KNOWN_NAMES:
        return True
    folder, _, name = rel.rpartition("/")
    return any(folder == d and name.endswith(suffix) and len(name) > len(suffix)
               for d, suffix in RULE_DIRS)


def read(path: str, rel: str) -> Optional[str]:
    """The text of a guidance file, None when missing; refuses what is not a text file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not is_known(rel):
            raise UsageError(f"improve: {rel} does not exist and is not a known guidance file "
                             f"({', '.join(KNOWN_FILES[:4])}, …); create it first") from None
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"improve: {rel} is not a regular file; name a guidance file")
    if not is_known(rel) and not rel.endswith(TEXT_SUFFIXES):
        raise UsageError(f"improve: {rel} is not a guidance file (known: "
                         f"{', '.join(KNOWN_FILES[:4])}, …, or a {'/'.join(TEXT_SUFFIXES)} file)")
    if st.st_size > MAX_FILE_BYTES:
        raise UsageError(f"improve: {rel} is larger than {MAX_FILE_BYTES} bytes; "
                         "not an instruction file")
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        if b"\0" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"improve: {rel} is not a UTF-8 text file; nothing was written") from None


def present(repo_root: str) -> List[str]:
    """Known guidance files in the repository, canonical (scan) order first."""
    found = [f for f in KNOWN_FILES if os.path.isfile(os.path.join(repo_root, f))]
    for folder, suffix in RULE_DIRS:
        where = os.path.join(repo_root, folder)
        if os.path.isdir(where):
            found += sorted(f"{folder}/{n}" for n in os.listdir(where)
                            if n.endswith(suffix) and os.path.isfile(os.path.join(where, n)))
    return found


# --- rule checks --------------------------------------------------------------------------

def check_rule(text: str, rel: str) -> None:
    """Refuse a rule that is trivial, oversized, holds a marker or comment, or is log-shaped
    (one line, nothing written)."""
    size = len(text.strip())
    if size < MIN_RULE_CHARS:
        raise UsageError(f"improve: rule for {rel} is trivial ({size} characters < "
                         f"{MIN_RULE_CHARS}); write a specific, actionable rule; "
                         "nothing was written")
    if size > MAX_RULE_CHARS:
        raise UsageError(f"improve: rule for {rel} is oversized ({size} characters > "
                         f"{MAX_RULE_CHARS}); link a reference file instead; nothing was written")
    marker = next((m for m in MARKERS if m in text), None)
    if marker:
        raise UsageError(f"improve: rule for {rel} holds {marker!r} (export-rules markers and "
                         "HTML comments are not rules); nothing was written")
    why = log_shape(text)
    if why:
        raise UsageError(f"improve: rule for {rel} looks like tool output ({why}); state the "
                         "lesson in your own words; nothing was written")


def log_shape(text: str) -> Optional[str]:
    """Why ``text`` reads as pasted tool output, or None."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > MAX_RULE_LINES:
        return f"{len(lines)} lines > {MAX_RULE_LINES}"
    for name, pattern in _LOG:
        if pattern.search(text):
            return name
    dense = "".join(text.split())
    digits = sum(c.isdigit() for c in dense)
    if len(dense) >= MIN_DIGIT_TEXT and digits > MAX_DIGIT_SHARE * len(dense):
        return f"{digits} of {len(dense)} characters are digits"
    return None


def tokens(line: str) -> FrozenSet[str]:
    return frozenset(_TOKEN.findall(line.lower()))


def overlap(a: FrozenSet[str], b: FrozenSet[str]) -> float:
    """Token-set Jaccard: shared words over all words of the two lines."""
    return len(a & b) / len(a | b) if a and b else 0.0


def duplicate_of(text: str, existing: Iterable[Tuple[int, str]]) -> Optional[dict]:
    """The existing line a rule repeats, or None.

    Each rule line is matched when its token-set Jaccard with some existing line
    exceeds DUPLICATE_OVERLAP; the rule is a duplicate when more than that share
    of its lines are matched.
    """
    rule = [tokens(line) for line in text.splitlines()]
    rule = [t for t in rule if t]
    lines = [(n, line, tokens(line)) for n, line in existing]
    matched, best = 0, None
    for toks in rule:
        score, n, line = max(((overlap(toks, t), n, line) for n, line, t in lines),
                             default=(0.0, 0, ""))
        if score > DUPLICATE_OVERLAP:
            matched += 1
            if best is None or score > best["overlap"]:
                best = {"line": n, "text": line.strip(), "overlap": round(score, 3)}
    return best if rule and matched > DUPLICATE_OVERLAP * len(rule) else None


def _outline(lines: List[str]) -> Iterator[Tuple[int, str, str]]:
    """``(index, kind, title)`` of each line; kind is ``heading`` (ATX or the text of a setext
    heading), ``underline`` (a setext heading's), ``marker`` (a line of export-rules' block
    markers), ``hidden`` (front matter, code fences, HTML comments) or ``text``.

    One reading for the section edit and the scan, so neither takes a line a fence or a
    comment holds for a heading and swallows what follows it.
    """
    text = [line.rstrip("\r\n") for line in lines]
    start = 0
    if text and text[0].strip() == "---":  # front matter (.mdc rules carry it)
        start = next((i + 1 for i in range(1, len(text)) if text[i].strip() in ("---", "...")),
                     0)
    fence, comment, underline = "", False, -1
    for i, line in enumerate(text):
        bare = line.strip()
        if i < start:
            yield i, "hidden", ""
        elif i == underline:
            yield i, "underline", ""
        elif fence or comment:
            if fence and bare.startswith(fence) and not bare.strip(fence[0]):
                fence = ""
            comment = comment and "-->" not in line
            yield i, "hidden", ""
        elif any(m in line for m in MARKERS[:2]):
            yield i, "marker", ""
        elif _FENCE.match(line) or (bare.startswith("<!--") and "-->" not in bare[4:]):
            m = _FENCE.match(line)
            fence, comment = (m.group(1), False) if m else ("", True)
            yield i, "hidden", ""
        elif _HEADING.match(line):
            yield i, "heading", (_HEADING.match(line).group(2) or "").strip()
        elif (bare and i + 1 < len(text) and _SETEXT.match(text[i + 1])
              and not _NOT_PARAGRAPH.match(line)):
            underline = i + 1
            yield i, "heading", bare
        else:
            yield i, "text", ""


def content_lines(text: str) -> List[Tuple[int, str]]:
    """Numbered lines that are not headings, blank, or inside fences, comments, front matter."""
    lines = text.splitlines()
    return [(i + 1, lines[i]) for i, kind, _ in _outline(lines)
            if kind == "text" and lines[i].strip()]


def section(lines: List[str], heading: str) -> Optional[Tuple[int, int, int]]:
    """``(heading index, body start, body end)`` of the first section titled ``heading``
    (case-blind). The body ends at the next heading of any level, so a subsection keeps its
    lines (it has a title of its own), or at export-rules' block, which that command owns."""
    want, found = heading.strip().lower(), None
    for i, kind, title in _outline(lines):
        if found is None:
            found = (i, i + 1) if kind == "heading" and title.lower() == want else None
        elif kind == "underline" and i == found[1]:
            found = (found[0], i + 1)
        elif kind in ("heading", "marker"):
            return found[0], found[1], i
    return (found[0], found[1], len(lines)) if found else None


# --- duplicate scan -----------------------------------------------------------------------

def scan(repo_root: str) -> dict:
    """Lines repeated across (or within) guidance files; the first copy in canonical order stays.

    Canonical order: KNOWN_FILES order (AGENTS.md first), then rule folders; within a
    file, the earlier line. Proposes removals only; nothing is changed.
    """
    files, skipped, removals = [], [], []
    kept: List[dict] = []
    index: Dict[str, List[int]] = {}
    for rel in present(repo_root):
        try:
            path, rel = resolve(repo_root, rel)
            text = read(path, rel) or ""
        except UsageError as exc:
            skipped.append(str(exc))
            continue
        files.append(rel)
        for n, line in content_lines(text):
            toks = tokens(line)
            if len(toks) < MIN_SCAN_TOKENS:
                continue
            seen = {i for t in toks for i in index.get(t, ())}
            best = max(((overlap(toks, kept[i]["tokens"]), i) for i in seen), default=(0.0, -1))
            if best[0] > DUPLICATE_OVERLAP:
                keep = kept[best[1]]
                removals.append({"file": rel, "line": n, "text": line.strip(),
                                 "overlap": round(best[0], 3),
                                 "keep": {"file": keep["file"], "line": keep["line"],
                                          "text": keep["text"]}})
                continue
            for t in toks:
                index.setdefault(t, []).append(len(kept))
            kept.append({"file": rel, "line": n, "text": line.strip(), "tokens": toks})
    return {"files": files, "removals": removals, "warnings": skipped}
