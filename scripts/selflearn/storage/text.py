"""One line of text that is safe to show: no line break, fence, tag or forged marker.

Owns the cleaning every output shares (advice, exported rules, feedback.md, proposals), so a
stage below surfacing can render a card's rule line. Imports only ``redact`` beside it.
"""

import re

from . import redact

RULE_CHARS = 240  # one exported rule is cut to this many characters
_TAG = re.compile(r"<(/?[A-Za-z!][^<>\n]*)>")   # anything shaped like a markup tag
_TAG_START = re.compile(r"<(?=[/!A-Za-z])")


def clean(text) -> str:
    """One line of card text that cannot open or close a fence or a tag."""
    text = "".join(ch if ch >= " " else " " for ch in str(text or ""))
    text = " ".join(text.replace("```", "'''").split())
    return _TAG_START.sub("\u2039", _TAG.sub("\u2039\\1\u203a", text))


def clean_line(text, limit: int) -> str:
    """One line, redacted, that cannot open a tag or comment nor forge a marker.

    Tag-like text becomes ``‹…›`` as ``clean`` does (readable inside backticks,
    where ``&lt;`` would show literally); a bare ``-->`` becomes ``--›``.
    """
    text = clean(redact.redact_text(str(text or ""))).replace("-->", "--\u203a")
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def rule(card: dict) -> str:
    """``- <title>: <first step>`` (or just the title), one line."""
    title = clean_line(card.get("title"), RULE_CHARS).rstrip(" .:")
    steps = card.get("solution_steps")
    first = steps[0] if isinstance(steps, list) and steps and isinstance(steps[0], str) else ""
    text = f"{title}: {clean_line(first, RULE_CHARS)}" if first.strip() else title
    return "- " + clean_line(text, RULE_CHARS)
