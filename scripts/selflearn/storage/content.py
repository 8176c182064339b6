"""The content of a lesson that the safety screen reads, and its fingerprint.

Owns which fields count as content (``SCREENED_FIELDS``), joining them into one text,
the short digest a person's acceptance is tied to, and whether that acceptance still
holds. Imports nothing from the package, so every storage module may use it.
"""

SCREENED_FIELDS = ("title", "when_to_use", "problem", "solution_steps", "gotchas", "evidence",
                   "links", "tags", "trigger", "note", "why", "implementation_hint", "text",
                   "rationale", "body", "backport")


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
    return "\n".join(t for name in SCREENED_FIELDS for t in _strings(record.get(name)))


def digest(record: dict) -> str:
    """A short fingerprint of the screened content: an acceptance holds for this content only."""
    import hashlib
    return hashlib.sha256(record_text(record).encode("utf-8", "replace")).hexdigest()[:16]


def accepted(record: dict) -> bool:
    """A person accepted this exact content despite its findings (``screen_accepted``)."""
    mark = record.get("screen_accepted")
    return isinstance(mark, dict) and mark.get("digest") == digest(record)
