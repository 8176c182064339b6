"""One line of text that is safe to show: no line break, fence, tag or forged marker.

Owns the cleaning every output shares (advice, exported rules, feedback.md, proposals), so a
stage below surfacing can render a card's rule line, and the provenance label each surfaced
or exported item carries. Imports only ``redact`` and ``content`` beside it (not ``screen``:
the hooks that print advice must not compile its patterns).
"""

import re

from . import redact
from .content import _INVISIBLE, is_hidden

RULE_CHARS = 240  # one exported rule is cut to this many characters
_TAG = re.compile(r"<(/?[A-Za-z!?][^<>\n]*)>")   # anything shaped like a markup tag
_TAG_START = re.compile(r"<(?=[/!?A-Za-z])")
_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data|file|livescript)\s*:")
_DEFINITION = re.compile(r"(?m)^( {0,3}\[[^\]\n]+\]):(?=[ \t]*\S)")
"""A link reference definition: it would turn a bracketed word anywhere into a link."""
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]{1,31});?")


_BREAKS = frozenset("\u0085\u2028\u2029")  # line breaks besides the C0 ones


def _SURROGATE(ch: str) -> bool:
    """Half of a surrogate pair (a damaged line): no output encoding can write it raw."""
    return "\ud800" <= ch <= "\udfff"


_TO_SPACE = dict.fromkeys(
    [c for c in range(0x20)] + list(range(0x7F, 0xA0)) + sorted(_INVISIBLE)
    + [ord(ch) for ch in _BREAKS] + list(range(0xE0000, 0xE0080)), " ")
_TO_SPACE.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))


def plain(text) -> str:
    """``text`` with control, invisible and direction characters and line breaks as spaces."""
    text = str(text or "")
    if text.isascii() and text.isprintable():  # most text: nothing to replace (checked in C)
        return text
    return text.translate(_TO_SPACE)


def terminal(line: str) -> str:
    """A line safe to print: control, invisible and direction characters and line breaks
    become visible ``\\xNN``/``\\uNNNN`` escapes (tabs stay), so no escape sequence runs
    and no break fakes a line."""
    if line.isprintable():
        return line
    return "".join(ch if ch == "\t" or (ch >= " " and ch not in _BREAKS
                                         and not is_hidden(ch) and not _SURROGATE(ch))
                   else ("\\x%02x" % ord(ch) if ord(ch) < 0x100 else "\\u%04x" % ord(ch))
                   for ch in line)


def document(text: str) -> str:
    """A whole page for a file a person reads (INDEX.md, feedback.md): redacted once more,
    each line without raw control, invisible or direction characters."""
    return "\n".join(terminal(line) for line in redact.redact_text(text).split("\n"))


def escape_json(text: str) -> str:
    """JSON text with invisible, direction and line-break characters inside strings escaped
    (``json.dumps(ensure_ascii=False)`` leaves them raw; C0 controls are escaped already)."""
    if text.isprintable() or all(ch.isprintable() or ch in "\n " for ch in text):
        return text
    return "".join("\\u%04x" % ord(ch) if ch in _BREAKS or _SURROGATE(ch) or (
        ch not in "\n" and is_hidden(ch)) else ch for ch in text)


def inert(text) -> str:
    """Text that renders as itself in Markdown and in the HTML it may become: entities are
    decoded first (``&lt;script&gt;`` is read as ``<script>``), then tags, comments, processing
    instructions and autolinks become ``‹…›``, an image cannot form (``![`` becomes ``! [``: no
    remote image loads, inline or by reference) and ``javascript:``, ``vbscript:``, ``data:``
    and ``file:`` lose their colon (``javascript꞉``), so no link runs code; so does a link reference
    definition (``[x]: https://…``), so a bracketed word links nowhere. Line breaks stay."""
    return _defused(_decoded(str(text or "")))


def _decoded(text: str) -> str:
    """``text`` with HTML entities decoded (twice-encoded ones too)."""
    if "&" in text and _ENTITY.search(text):
        import html
        for _ in range(3):
            decoded = html.unescape(text)
            if decoded == text:
                break
            text = decoded
    return text


def _defused(text: str) -> str:
    if "<" in text:
        text = _TAG_START.sub("\u2039", _TAG.sub("\u2039\\1\u203a", text))
    if "![" in text:
        text = text.replace("![", "! [")
    if ":" in text:
        text = _DEFINITION.sub("\\1\ua789", _SCHEME.sub(lambda m: m.group(1) + "\ua789", text))
    return text


def clean(text) -> str:
    """One line of card text that cannot open or close a fence or a tag, nor carry control,
    invisible or direction-changing characters (a terminal escape, a fake line break), nor
    render as anything active (``inert``)."""
    return _defused(" ".join(plain(_decoded(str(text or ""))).replace("```", "'''").split()))


def cell(value, limit: int = 120) -> str:
    """A Markdown table cell: ``clean``, pipes escaped, at most ``limit`` characters."""
    return clean(value).replace("|", "\\|")[:limit]


def collapsed(text) -> str:
    """``text`` as one line of single spaces, as long as ``clean`` makes it (its tag and scheme
    replacements keep the length; entities and images, which do not, take ``clean`` itself):
    for what needs only that length."""
    if "&" in str(text or "") or "![" in str(text or ""):
        return clean(text)
    return " ".join(plain(text).split())


def clean_line(text, limit: int) -> str:
    """One line, redacted, that cannot open a tag or comment nor forge a marker.

    Tag-like text becomes ``‹…›`` as ``clean`` does (readable inside backticks,
    where ``&lt;`` would show literally); a bare ``-->`` becomes ``--›``.
    """
    text = clean(redact.redact_text(str(text or ""))).replace("-->", "--\u203a")
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def rule(card: dict, suffix: str = "") -> str:
    """``- <title>: <first step>`` (or just the title) and ``suffix``, one line of at most
    ``RULE_CHARS`` + 2 characters."""
    title = clean_line(card.get("title"), RULE_CHARS).rstrip(" .:")
    steps = card.get("solution_steps")
    first = steps[0] if isinstance(steps, list) and steps and isinstance(steps[0], str) else ""
    text = f"{title}: {clean_line(first, RULE_CHARS)}" if first.strip() else title
    return "- " + clean_line(text, RULE_CHARS - len(suffix)) + suffix


def origin_label(card: dict, reviewed: bool = True) -> str:
    """Where a lesson came from, in a few words: ``mined, 6 observations; accepted by a person``
    (``reviewed=False``: the origin part only, stable across status changes)."""
    origin = card.get("origin", "agent")
    seen = card.get("observations")
    if origin == "mined":
        label = f"mined, {seen} observations" if isinstance(seen, int) and seen > 1 else "mined"
    else:
        label = {"agent": "recorded by the agent", "human": "from a person",
                 "imported": "imported"}.get(origin, "recorded by the agent")
    if card.get("_tracked"):
        label = "imported (" + label + ")"
    if not reviewed:
        return label
    status = card.get("status", "proposed")
    if card.get("_imported"):
        label += "; not accepted here"
    elif isinstance(card.get("screen_accepted"), dict) or (
            status == "accepted" and origin != "human" and card.get("last_touched_ts")):
        label += "; accepted by a person"
    elif status == "accepted" and origin == "mined":
        label += "; accepted by the lifecycle rules"
    elif status == "accepted" and origin != "human":
        label += "; accepted"
    elif status in ("proposed", "candidate") and origin != "human":
        label += "; not reviewed"
    return label
