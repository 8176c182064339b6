"""The content of a lesson that the safety screen reads, and its fingerprint.

Owns which fields count as content (``SCREENED_FIELDS``), joining them into one text,
the short digest a person's acceptance is tied to, and whether that acceptance still
holds, and which characters are invisible or control characters. Imports nothing (no
``re``), so every storage module may use it cheaply.
"""

SCREENED_FIELDS = ("title", "when_to_use", "problem", "solution_steps", "gotchas", "evidence",
                   "links", "tags", "trigger", "why", "implementation_hint", "text",
                   "rationale", "body", "backport")
"""A status ``note`` is not content: it is never surfaced, and a lifecycle move that writes
one must not void a person's acceptance."""


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def record_text(record: dict) -> str:
    """The screened fields of a card, recommendation or proposal as one text (one field a line)."""
    parts = []
    for name in SCREENED_FIELDS:
        value = record.get(name)
        if isinstance(value, str):  # most fields: no generator to walk
            parts.append(value)
        elif isinstance(value, list) and value:
            try:  # a list of strings, as most are: joined in C
                parts.append("\n".join(value))
            except TypeError:
                parts.extend(_strings(value))
        elif value is not None:
            parts.extend(_strings(value))
    return "\n".join(parts)


def digest(record: dict) -> str:
    """A short fingerprint of the screened content: an acceptance holds for this content only."""
    import hashlib
    return hashlib.sha256(record_text(record).encode("utf-8", "replace")).hexdigest()[:16]


def accepted(record: dict) -> bool:
    """A person accepted this exact content despite its findings (``screen_accepted``)."""
    mark = record.get("screen_accepted")
    return isinstance(mark, dict) and mark.get("digest") == digest(record)


_INVISIBLE = frozenset(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x200B, 0x2010)) + list(range(0x202A, 0x202F))
    + list(range(0x2060, 0x2070)))


def is_hidden(ch: str) -> bool:
    """An invisible, bidi, tag or control character (tab, newline and CR excepted)."""
    code = ord(ch)
    if code < 0x20:
        return ch not in "\t\n\r"
    return (code == 0x7F or 0x80 <= code <= 0x9F or code in _INVISIBLE
            or 0xE0000 <= code <= 0xE007F)


def lone_surrogate(value) -> bool:
    """Whether a string anywhere in ``value`` (keys too) holds half of a surrogate pair, which
    a JSON ``\\ud800`` escape can carry but no UTF-8 file, terminal or database can."""
    if isinstance(value, str):
        return not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(lone_surrogate(k) or lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(lone_surrogate(v) for v in value)
    return False
