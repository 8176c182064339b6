"""Card and recommendation scores, computed in one pass over signals.

score = 1 + 2·used + recalled + reinforced + promoted + 2·backported
(+1 when a human accepted it). Every score comes with the sentence that
explains it, so a reader can check the arithmetic. Never cards × signals.
"""

from typing import Dict, List

WEIGHTS = (("used", 2), ("recalled", 1), ("reinforced", 1), ("promoted", 1), ("backported", 2))
ACCEPTED_BONUS = 1
PROVEN_BY = ("used", "reinforced", "recalled")


def tally(signals: List[dict]) -> Dict[str, Dict[str, int]]:
    """``{id: {"used": n, ...}}`` for cards and recommendations, in one pass."""
    counts: Dict[str, Dict[str, int]] = {}
    for target, what in targets(signals):
        slot = counts.setdefault(target, {})
        slot[what] = slot.get(what, 0) + 1
    return counts


def targets(signals: List[dict]):
    """``(id, what)`` per signal that counts: ``aha_used`` on a card is ``(aha_id, "used")``."""
    for signal in signals:
        kind = signal.get("kind")
        if not isinstance(kind, str) or "_" not in kind:
            continue
        prefix, what = kind.split("_", 1)
        target = signal.get("aha_id") if prefix == "aha" else signal.get("rec_id")
        if isinstance(target, str):
            yield target, what


def score(record: dict, counts: Dict[str, int]) -> (int, str):
    """The score of one record and how it was reached."""
    total, parts = 1, ["1 base"]
    for what, weight in WEIGHTS:
        n = counts.get(what, 0)
        if n:
            total += weight * n
            parts.append(f"{weight}×{n} {what}" if weight != 1 else f"{n} {what}")
    if record.get("status") == "accepted":
        total += ACCEPTED_BONUS
        parts.append(f"{ACCEPTED_BONUS} accepted")
    return total, " + ".join(parts)


def backport_ready(card: dict, counts: Dict[str, int]) -> bool:
    """Portable, shareable, still live, and proven by use, reinforcement or acceptance."""
    if card.get("scope") != "portable" or card.get("shareable", True) is not True:
        return False
    if card.get("status") in ("rejected", "deprecated", "retired", "backported"):
        return False
    return card.get("status") == "accepted" or any(counts.get(k) for k in PROVEN_BY)
