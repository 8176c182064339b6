"""``promote``: copy proven cards from the project store to the user's global store.

The global store (``paths.global_store``, moved by ``SELF_LEARNING_GLOBAL_DIR``)
is what ``list``/``review --include-global`` read beside the project, where
the project version wins on an id clash. Invariants: every card is checked
before the first write (a rejected, deprecated, retired, non-shareable,
imported or held card is refused); a card is copied only when the global store lacks
its latest content (promoting again is a no-op); each copy adds one
``aha_promoted`` signal to the project store. Must not import cli.
"""

from typing import Dict, List

from ..storage import bootstrap, model, screen
from ..surfacing import index
from ..storage.errors import UsageError
from ..storage.memory import Memory

VOLATILE = ("ts", "v")


def _content(card: dict) -> Dict:
    return {k: v for k, v in card.items() if not k.startswith("_") and k not in VOLATILE}


def promote(project: Memory, global_: Memory, ids: List[str], user: str) -> dict:
    """Copy the latest version of each card once; refuse unknown, non-shareable, rejected,
    deprecated or retired, imported and held ones (the same cards no export may take)."""
    if not ids:
        raise UsageError("promote: give card ids with --ids a,b (see `list`)")
    cards, there = project.folded("cards"), global_.folded("cards")
    problems = []
    for cid in ids:
        card = cards.get(cid)
        if card is None:
            problems.append(f"promote: unknown card id {cid!r} in the project store (see `list`)")
        elif card.get("shareable", True) is not True:
            problems.append(f"promote: card {cid} is not shareable (shareable: false), so it "
                            "stays in this project")
        elif model.normalize_status(card.get("status", "proposed")) in model.HIDDEN_STATUSES:
            status = model.normalize_status(card.get("status"))
            problems.append(f"promote: card {cid} is {status}, so it stays out of the global "
                            f"store (to copy it, bring it back first: `aha-status --id {cid} "
                            "--status accepted`)")
        elif card.get("_imported"):
            problems.append(f"promote: card {cid} comes from a store git tracks (imported); a "
                            f"local person accepts it first (`aha-status --id {cid} --status "
                            "accepted`)")
        elif screen.blocked(card):
            problems.append(f"promote: card {cid} is held by the safety screen "
                            f"({'; '.join(screen.blocked(card))}); a person accepts it first "
                            f"(`aha-status --id {cid} --status accepted --accept-flagged`)")
    if len(problems) == 1:
        raise UsageError(problems[0] + "; nothing was written")
    if problems:
        raise UsageError("\n".join(problems + ["promote: nothing was written"]))
    copies, report = [], []
    for cid in ids:
        latest = _content(cards[cid])
        if cid in there and _content(there[cid]) == latest:
            report.append({"id": cid, "title": latest.get("title"), "action": "already promoted"})
            continue
        copies.append({**latest, "v": model.SCHEMA_VERSION, "ts": model.iso()})
        report.append({"id": cid, "title": latest.get("title"),
                       "action": "updated" if cid in there else "promoted"})
    if copies:
        bootstrap.ensure_store(global_.root, None)
        global_.append("cards", copies)
        project.append("signals", [model.complete("signal", {
            "kind": "aha_promoted", "aha_id": c["id"], "source": "cli",
            "context": "copied to the global store"}) for c in copies])
        index.refresh(global_, user)
    return {"global_store": global_.root, "cards": report,
            "copied": [c["id"] for c in copies]}


def render(data: dict) -> List[str]:
    lines = [f"{c['action']} {c['id']}: {c['title']}" for c in data["cards"]]
    lines.append(f"global store: {data['global_store']}" + (
        "" if data["copied"] else " (nothing copied)"))
    return lines
