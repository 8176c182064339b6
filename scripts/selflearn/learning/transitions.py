"""``promote`` (without ``--ids``) and ``decay``: write the status changes ``lifecycle`` decides.

One fold of the cards and one pass over the signals per step. Each change
appends a new version of the card (``status``, and ``note`` with the reason;
``confidence`` stays the evidence-derived base the miner wrote) and one
``aha_status`` signal with ``source: lifecycle``. Only mined cards in
``lifecycle.LIVE`` move; a person's statuses are never touched; a candidate the
safety screen flags is never promoted (it waits in ``review`` for a person). A dry run
writes nothing. Running a step again with nothing new writes nothing.
Must not import cli.
"""

from typing import Dict, List

from . import lifecycle
from ..storage import model, update
from ..storage.memory import Memory

STEPS = ("promote", "decay")
SHOW_HELD = 5  # candidates listed in text with the reason they stay candidates


def step_of(old: str, new: str) -> str:
    """Which command makes a move: promote accepts candidates, decay does the rest."""
    return "promote" if (old, new) == ("candidate", "accepted") else "decay"


def plan(memory: Memory, step: str, now: float) -> dict:
    """The moves ``step`` would make now, and (promote) why the other candidates stay."""
    ev = lifecycle.evidence(memory.load("signals"))
    changes: List[dict] = []
    held: List[dict] = []
    live = 0
    for card in memory.folded("cards").values():
        old = card.get("status", "proposed")
        if old not in lifecycle.LIVE or card.get("origin") != "mined" or card.get("_imported"):
            continue
        verdict = lifecycle.assess(card, ev.get(card["id"]), now)
        live += 1
        entry = {"id": card["id"], "title": card.get("title", ""), "from": old,
                 "to": verdict.status, "reason": verdict.reason,
                 "confidence": verdict.confidence, "idle_days": round(verdict.idle_days, 1)}
        flags = _screened(card) if (old, verdict.status) == ("candidate", "accepted") else []
        if flags:
            entry.update(to=old, reason="safety screen: " + "; ".join(flags) +
                         " (waits for a person: `aha-status --status accepted --accept-flagged`)")
            if step == "promote":
                held.append(entry)
            continue
        if verdict.status != old and step_of(old, verdict.status) == step:
            changes.append(entry)
        elif step == "promote" and old == "candidate" and verdict.status == old:
            held.append(entry)
    return {"step": step, "live": live, "changes": changes, "held": held}


def run(memory: Memory, step: str, dry_run: bool = False) -> dict:
    """Plan ``step`` at ``model.now()`` and, unless dry, write each move."""
    data = plan(memory, step, model.now())
    data["dry_run"] = dry_run
    data["wrote"] = bool(data["changes"]) and not dry_run
    if data["wrote"]:
        _write(memory, data["changes"])
    return data


def _write(memory: Memory, changes: List[dict]) -> None:
    cards = memory.folded("cards")
    versions, signals = [], []
    for c in changes:
        versions.append(update.new_version(cards[c["id"]], status=c["to"],
                                           note=f"lifecycle: {c['reason']}"))
        signals.append(model.complete("signal", {
            "kind": "aha_status", "aha_id": c["id"], "source": "lifecycle",
            "context": f"{c['from']} -> {c['to']}: {c['reason']}"}))
    memory.append("cards", versions)
    memory.append("signals", signals)


def counts(data: dict) -> Dict[str, int]:
    """How many cards each move sends to each status, e.g. ``{"dormant": 2}``."""
    out: Dict[str, int] = {}
    for c in data["changes"]:
        label = "revived" if c["to"] == "candidate" else c["to"]
        out[label] = out.get(label, 0) + 1
    return out


def summary(data: dict) -> str:
    """One line: what the step did (or would do) to how many live lessons."""
    moved = counts(data)
    what = ", ".join(f"{n} {label}" for label, n in sorted(moved.items())) or "no change"
    would = "would make " if data["dry_run"] and moved else ""
    return f"{data['step']}: {would}{what} ({data['live']} mined lesson(s) checked)"


def render(data: dict) -> List[str]:
    """One line per move, the candidates that stay (promote), then the summary."""
    lines = [f"{c['to']} {c['id']}: {c['title']} ({c['reason']}; confidence {c['confidence']})"
             for c in data["changes"]]
    for c in data.get("held", [])[:SHOW_HELD]:
        lines.append(f"stays candidate {c['id']}: {c['title']} ({c['reason']})")
    if len(data.get("held", [])) > SHOW_HELD:
        lines.append(f"({len(data['held']) - SHOW_HELD} more candidates stay; --format json "
                     "lists them)")
    lines.append(summary(data) + ("; dry run: nothing written" if data["dry_run"] else ""))
    return lines


def _screened(card: dict) -> list:
    """The screen's reasons to hold ``card``; its patterns load only when a card may be
    promoted (compiling them costs every command that builds the parser about 50 ms)."""
    from ..storage import screen
    return screen.blocked(card)
