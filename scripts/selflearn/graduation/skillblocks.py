"""The text format of blocks inside a skill's files, and where writes there may go.

Owns the ``<!-- self-learning:<kind>:start k=v -->`` … ``:end -->`` markers (scan,
render, cut), the Markdown of a card block, and ``Target``. Invariants: a write
path resolves (symlinks, ``..``) inside the skill folder; files round-trip every
byte; a cut removes the exact span plus the ``pad=N`` newlines we added; escaped
card text can never form a marker, heading, HTML or a fence. Must not import cli.
"""

import hashlib
import os
import re
from typing import Dict, List, Optional

from ..storage import outputs, redact, store
from ..storage.text import inert, origin_label, plain
from ..storage.errors import SelfLearningError, UsageError

REF_NAME = "self-learning-aha.md"
ID_OK = re.compile(r"^[A-Za-z0-9_.:-]+$")
MARKER = re.compile(r"^<!-- self-learning:(aha|aha-header|backport):(start|end)"
                    r"((?: [a-z]+=[^\s<>]+)*) -->[ \t]*$")
_LEAD = re.compile(r"[#>+*=_~`|\[-]|\d+[.)]")
TEXT_FIELDS = (("when_to_use", "When to use"), ("problem", "Problem"))
LIST_FIELDS = (("solution_steps", "Steps"), ("gotchas", "Gotchas"), ("evidence", "Evidence"),
               ("links", "Links"))


# --- markdown: escaping, rendering, marker blocks ------------------------------------------

def escape(value: object) -> str:
    """One line of inline text that cannot start a block or hold raw HTML or a marker."""
    text = inert(" ".join(plain(redact.redact_text(str(value))).split()))
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    lead = _LEAD.match(text)
    return text[:lead.end() - 1] + "\\" + text[lead.end() - 1:] if lead else text


def _items(value: object) -> List[str]:
    values = value if isinstance(value, list) else [value] if value else []
    return [str(v) for v in values if str(v).strip()]


def render_card(card: dict) -> str:
    """The body of a card block; only content fields, so a status change keeps it stable."""
    lines = [f"### {escape(card.get('title') or card['id'])}", ""]
    lines += [f"- **{label}:** {escape(card[key])}" for key, label in TEXT_FIELDS
              if str(card.get(key) or "").strip()]
    lines.append(f"- **Source:** {escape(origin_label(card, reviewed=False))}")
    for key, label in LIST_FIELDS:
        items = _items(card.get(key))
        if items:
            lines.append(f"- **{label}:**")
            lines += [f"  {n}. {escape(i)}" if key == "solution_steps" else f"  - {escape(i)}"
                      for n, i in enumerate(items, 1)]
    return "\n".join(lines).rstrip("\n") + "\n\n"


def sha(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def block(kind: str, attrs: Dict[str, str], body: str) -> str:
    head = " ".join(f"{k}={v}" for k, v in attrs.items())
    return f"<!-- self-learning:{kind}:start {head} -->\n{body}<!-- self-learning:{kind}:end -->\n"


class Block:
    """A managed block found in a file: its kind, attributes, byte span and body."""

    def __init__(self, kind: str, attrs: Dict[str, str], start: int, end: int, body: str,
                 line: int) -> None:
        self.kind, self.attrs, self.start, self.end = kind, attrs, start, end
        self.body, self.line = body, line


def scan(text: str, where: str) -> List[Block]:
    """Every managed block in ``text``, in order; a marker without its partner is an error."""
    blocks: List[Block] = []
    opened = None
    pos = 0
    for number, raw in enumerate(text.split("\n"), 1):
        start, pos = pos, pos + len(raw) + 1
        found = MARKER.match(raw.rstrip("\r"))
        if not found:
            continue
        kind, edge = found.group(1), found.group(2)
        if edge == "start" and opened is None:
            attrs = dict(a.split("=", 1) for a in found.group(3).split())
            opened = (kind, attrs, start, min(pos, len(text)), number)
        elif edge == "end" and opened is not None and opened[0] == kind:
            blocks.append(Block(kind, opened[1], opened[2], min(pos, len(text)),
                                text[opened[3]:start], opened[4]))
            opened = None
        else:
            raise SelfLearningError(
                f"{where}:{number}: unexpected self-learning:{kind}:{edge} marker; fix the "
                "markers by hand (backups sit in the export bundles), then run it again")
    if opened is not None:
        raise SelfLearningError(
            f"{where}:{opened[4]}: self-learning:{opened[0]}:start has no end marker; fix the "
            "markers by hand (backups sit in the export bundles), then run it again")
    return blocks


def append_block(text: str, kind: str, attrs: Dict[str, str], body: str) -> str:
    """``text`` with a block at its end, after a blank line; ``pad`` records what we added."""
    pad = 0 if not text or text.endswith("\n\n") else 1 if text.endswith("\n") else 2
    if pad:
        attrs = {**attrs, "pad": str(pad)}
    return text + "\n" * pad + block(kind, attrs, body)


def cut(text: str, found: Block) -> str:
    """``text`` without the block and the padding we put before it."""
    start = found.start
    pad = int(found.attrs["pad"]) if found.attrs.get("pad", "").isdigit() else 0
    if pad and text[max(0, start - pad):start] == "\n" * pad:
        start -= pad
    return text[:start] + text[found.end:]


# --- the skill folder ----------------------------------------------------------------------

class Target:
    """A skill folder and the real paths of the files the tool may write in it."""

    def __init__(self, command: str, skill_path: str) -> None:
        self.command = command
        self.root = os.path.realpath(os.path.expanduser(skill_path))
        if not os.path.isdir(self.root):
            raise UsageError(f"{command}: --skill-path {skill_path} is not a directory; point it "
                             "at a skill folder (the one holding SKILL.md)")
        if outputs.in_git(self.root):
            raise UsageError(f"{command}: --skill-path {skill_path} is inside a .git folder; "
                             "point it at a skill folder of the working tree")
        if not os.path.lexists(os.path.join(self.root, "SKILL.md")):
            raise UsageError(f"{command}: {self.root} has no SKILL.md; point --skill-path at a "
                             "skill folder (the one holding SKILL.md)")
        self.skill_md = self._inside(os.path.join(self.root, "SKILL.md"), file=True)
        self.ref_dir = self._inside(os.path.join(self.root, "references"), file=False)
        self.ref = self._inside(os.path.join(self.ref_dir, REF_NAME), file=True)
        self.name = _skill_name(read_text(self.skill_md, command)) or os.path.basename(self.root)
        self.git_top = _git_top(self.root)

    def _inside(self, path: str, file: bool) -> str:
        real = os.path.realpath(path)
        if os.path.commonpath([real, self.root]) != self.root:
            raise UsageError(f"{self.command}: {path} leads to {real}, outside the skill folder "
                             f"{self.root}; refusing to touch it (replace the link with a real "
                             f"{'file' if file else 'folder'})")
        if os.path.exists(real) and (os.path.isfile(real) != file):
            raise UsageError(f"{self.command}: {path} is not a {'file' if file else 'folder'}; "
                             "move it aside and run it again")
        store.guard(real, below=os.path.dirname(real))  # a hard link: refused before any write
        return real

    def rel(self, real: str) -> str:
        return os.path.relpath(real, self.root).replace(os.sep, "/")

    def repo_rel(self, real: str) -> str:
        return os.path.relpath(real, self.git_top or self.root).replace(os.sep, "/")


def _skill_name(text: str) -> Optional[str]:
    """``name:`` from the SKILL.md front matter, if any."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if line.startswith("name:"):
            return line[5:].strip().strip("'\"") or None
    return None


def _git_top(root: str) -> Optional[str]:
    here = root
    while not os.path.exists(os.path.join(here, ".git")):
        if os.path.dirname(here) == here:
            return None
        here = os.path.dirname(here)
    return here


def read_text(path: str, command: str) -> Optional[str]:
    """A file's text with every byte kept (invalid UTF-8 round-trips), or None when absent."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SelfLearningError(f"{command}: cannot read {path}: {exc.strerror}") from None


def write_text(path: str, text: str) -> None:
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
    store.atomic_write(path, text.encode("utf-8", "surrogateescape"), private=False)
    if mode is not None:
        os.chmod(path, mode)
