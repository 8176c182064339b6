"""``correct``: a person's corrections to a lesson or a mined pattern, shown wherever it surfaces.

Owns ``<store>/corrections.jsonl``: one record per correction ``{v, id (cor_…),
ts, target, target_kind (lesson|pattern), text}``; the text is redacted before
it is stored. The file is append-only: older corrections stay, but
``latest`` returns only the newest ``MAX_CORRECTIONS`` per target, newest first.
A target is a card id (must exist) or a pattern key (``mined:<kind>:<digest>``
or a proposal key). Must not import cli.
"""

import os
from typing import Dict, List, Optional

from ..storage import model, redact
from ..storage.errors import UsageError
from ..storage.memory import Memory

MAX_CORRECTIONS = 10   # newest corrections shown per lesson or pattern; older ones stay on file
MIN_TEXT_CHARS = 10    # shorter text is too trivial to help ("no", "wrong", "fix it")
MAX_TEXT_CHARS = 500   # longer text belongs in the card itself (`record` with its id)
MAX_KEY_CHARS = 200    # a pattern key is an identifier, not prose


def _new_id() -> str:
    """``cor_<UTC second>_<6 hex>``, like every other record id."""
    return f"cor_{model.iso().replace('-', '').replace(':', '')}_{os.urandom(3).hex()}"


def check(memory: Memory, lesson: Optional[str], pattern: Optional[str], text: str) -> dict:
    """The record to append, or a one-line UsageError; reads the cards only for --lesson."""
    text = " ".join((text or "").split())
    if len(text) < MIN_TEXT_CHARS:
        raise UsageError(f"correct: --text is too short to help ({len(text)} characters, at "
                         f"least {MIN_TEXT_CHARS}); say what to do instead, e.g. "
                         "\"use pnpm test, not npm test\"")
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(f"correct: --text has {len(text)} characters (at most "
                         f"{MAX_TEXT_CHARS}); edit the card itself with `record` instead")
    if lesson is not None:
        target, kind = lesson.strip(), "lesson"
        if target not in memory.folded("cards"):
            raise UsageError(f"correct: unknown card id {target!r}; nothing was written "
                             "(see `list --format json`)")
    else:
        target, kind = (pattern or "").strip(), "pattern"
        if not target or len(target) > MAX_KEY_CHARS or any(c.isspace() for c in target):
            raise UsageError(f"correct: --pattern {pattern!r} is not a pattern key (one word of "
                             f"at most {MAX_KEY_CHARS} characters, e.g. mined:failure:3f9a0c1d2e4b)")
    return {"v": model.SCHEMA_VERSION, "id": _new_id(), "ts": model.iso(), "target": target,
            "target_kind": kind, "text": redact.redact_text(text)}


def correct(memory: Memory, lesson: Optional[str], pattern: Optional[str], text: str) -> dict:
    """Validate, then append one correction; report what is now shown for the target."""
    item = check(memory, lesson, pattern, text)
    memory.append("corrections", [item])
    shown = latest(memory).get(item["target"], [])
    total = sum(1 for r in memory.load("corrections") if r.get("target") == item["target"])
    return {"correction": item, "shown": shown, "total": total, "max": MAX_CORRECTIONS}


def latest(memory) -> Dict[str, List[str]]:
    """Per target, the texts of its newest ``MAX_CORRECTIONS`` corrections, newest first.

    ``memory`` is a ``Memory`` or ``Stores`` (anything with ``load``); one pass.
    """
    out: Dict[str, List[str]] = {}
    for record in reversed(memory.load("corrections")):
        target, text = record.get("target"), record.get("text")
        if not isinstance(target, str) or not isinstance(text, str):
            continue
        texts = out.setdefault(target, [])
        if len(texts) < MAX_CORRECTIONS:
            texts.append(text)
    return out


def for_card(by_target: Dict[str, List[str]], card: dict) -> List[str]:
    """A card's corrections: those naming its id, then those naming its pattern key."""
    texts = list(by_target.get(card.get("id", ""), []))
    key = card.get("key")
    if isinstance(key, str) and key in by_target:
        texts += [t for t in by_target[key] if t not in texts]
    return texts[:MAX_CORRECTIONS]


def render(data: dict) -> List[str]:
    item = data["correction"]
    more = data["total"] - len(data["shown"])
    return [f"correction {item['id']} for {item['target_kind']} {item['target']}: {item['text']}",
            f"{len(data['shown'])} correction(s) now shown with it (newest {data['max']} kept in "
            "view" + (f"; {more} older on file)" if more > 0 else ")")]
