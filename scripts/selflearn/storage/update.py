"""Status changes, usage and signals for records that already exist.

Each change appends: a new full version of the record (status, note,
``last_touched_ts``) and/or a signal. Ids and statuses are checked first;
a bad one writes nothing.
"""

from typing import List, Optional

from . import content, model, redact
from .errors import UsageError
from .memory import Memory, Stores


def _text(command: str, flag: str, value: Optional[str]) -> None:
    """Refuse a ``value`` over ``MAX_FIELD_CHARS`` with a one-line UsageError."""
    if value is not None and len(value) > model.MAX_FIELD_CHARS:
        raise UsageError(f"{command}: {flag} has {len(value)} characters, over the limit of "
                         f"{model.MAX_FIELD_CHARS}; nothing was written")


# Sources the tool's own steps write: a signal labelled with one would pass for theirs
# (``reinforce`` finds the sessions it already judged by its label, for one).
TOOL_SOURCES = ("reinforce", "lifecycle", "backport", "feedback", "record", "mined")
SOURCE_CHARS = 40


def _source(command: str, source: str) -> None:
    """Refuse a ``--source`` that is not a short label, or that names one of the tool's steps."""
    if not 0 < len(source) <= SOURCE_CHARS or not all(
            c.isascii() and (c.isalnum() or c in "._:-") for c in source):
        raise UsageError(f"{command}: --source must be a short label (letters, digits, '._:-', "
                         f"at most {SOURCE_CHARS}), got {source[:SOURCE_CHARS]!r}; nothing was "
                         "written")
    if source in TOOL_SOURCES:
        raise UsageError(f"{command}: --source {source} is what the tool's own {source} step "
                         "writes; use another label (default: manual); nothing was written")


def _ids(values: Optional[List[str]]) -> List[str]:
    return [i.strip() for v in values or [] for i in v.split(",") if i.strip()]


def _require(ids: List[str], known: dict, command: str, what: str) -> None:
    missing = [i for i in ids if i not in known]
    if missing:
        raise UsageError("\n".join(f"{command}: unknown {what} id {i!r}; nothing was written "
                                   f"(see `list` or `review --format json`)" for i in missing))


def new_version(record: dict, **changes) -> dict:
    """A full next version of a folded record (bookkeeping keys dropped) with ``changes``."""
    version = {k: v for k, v in record.items() if not k.startswith("_")}
    version.update(v=model.SCHEMA_VERSION, ts=model.iso(), **changes)
    return version


def set_status(memory: Memory, kind: str, rid: str, status: str, note: Optional[str] = None,
               scope: Optional[str] = None, accept_flagged: bool = False,
               by: str = "", stores: Optional[Stores] = None) -> dict:
    """Append a version of card/rec ``rid`` with a new status (and scope).

    Accepting a card the safety screen flags needs ``accept_flagged`` (a person who read
    it); the acceptance is recorded in the card (``screen_accepted``) and a signal. A card
    of a teammate's store (``stores.teammates``) gets its new version in ``memory``: the
    person's own store holds what they decided about it from then on.
    """
    command, name = ("aha-status", "cards") if kind == "card" else ("rec-status", "recs")
    _text(command, "--note", note)
    records = memory.folded(name)
    mate, theirs = stores.teammate_card(rid) if kind == "card" and stores is not None \
        and rid not in records else (None, None)
    if theirs is not None:
        records = dict(records, **{rid: theirs})
    _require([rid], records, command, "card" if kind == "card" else "recommendation")
    status = model.normalize_status(status)
    allowed = model.CARD_STATUSES if kind == "card" else model.REC_STATUSES
    if status not in allowed:
        raise UsageError(f"{command}: unknown status {status!r} (one of: {', '.join(allowed)})")
    if scope is not None and scope not in model.SCOPES:
        raise UsageError(f"{command}: unknown scope {scope!r} (one of: {', '.join(model.SCOPES)})")
    version = new_version(records[rid], status=status, last_touched_ts=model.iso())
    if note is not None:
        version["note"] = redact.redact_text(note)
    if scope is not None:
        version["scope"] = scope
    flags = []
    if kind == "card" and status == "accepted":  # the screen's patterns load only here
        from . import screen
        flags = screen.blocked(records[rid])
    if flags and not accept_flagged:
        raise UsageError(f"{command}: card {rid} is held by the safety screen ({'; '.join(flags)}); "
                         "a person who has read it accepts it with --accept-flagged; nothing "
                         "was written")
    if flags:
        version["screen_accepted"] = {"digest": content.digest(records[rid]), "ts": model.iso(),
                                      "by": by or "unknown", "reasons": flags}
    writes = [(name, [version])]
    if flags:
        writes.append(("signals", [model.complete("signal", {
            "kind": "aha_status", "aha_id": rid, "source": "human",
            "context": redact.redact_text("accepted despite the safety screen: "
                                          + "; ".join(flags))[:300]})]))
    if kind == "rec":
        signal_kind = "rec_done" if status == "done" else "rec_touched"
        writes.append(("signals", [model.complete("signal", {
            "kind": signal_kind, "rec_id": rid, "source": "cli", "context": f"status {status}"})]))
    memory.append_all(writes)  # the version and its signal, or neither
    if kind == "card" and status == "accepted" and records[rid].get("_imported"):
        from . import provenance  # a committed store: the acceptance is kept outside it
        provenance.accept(mate.root if mate else memory.root, by or "unknown", [version])
    return {"id": rid, "status": status, "previous_status": records[rid].get("status")}


def use(memory: Memory, aha: Optional[List[str]], rec: Optional[List[str]],
        source: str = "manual", context: Optional[str] = None) -> dict:
    """Append ``aha_used`` / ``rec_used`` signals for existing ids."""
    _text("use", "--context", context)
    _source("use", source)
    cards, recs = _ids(aha), _ids(rec)
    if not cards and not recs:
        raise UsageError("use: give --aha and/or --rec ids")
    _require(cards, memory.folded("cards"), "use", "card")
    _require(recs, memory.folded("recs"), "use", "recommendation")
    signals = [{"kind": "aha_used", "aha_id": i} for i in cards] + \
              [{"kind": "rec_used", "rec_id": i} for i in recs]
    return _append_signals(memory, signals, source, context)


def signal(memory: Memory, kind: str, aha_id: Optional[str], rec_id: Optional[str],
           source: str = "manual", context: Optional[str] = None) -> dict:
    """Append one signal of a known kind for an existing card or recommendation."""
    _text("signal", "--context", context)
    _source("signal", source)
    if kind not in model.SIGNAL_KINDS:
        raise UsageError(f"signal: unknown kind {kind!r} (one of: {', '.join(model.SIGNAL_KINDS)})")
    if kind.startswith("aha_"):
        if not aha_id or rec_id:
            raise UsageError(f"signal: kind {kind} takes --aha-id (and no --rec-id)")
        _require([aha_id], memory.folded("cards"), "signal", "card")
        target = {"aha_id": aha_id}
    else:
        if not rec_id or aha_id:
            raise UsageError(f"signal: kind {kind} takes --rec-id (and no --aha-id)")
        _require([rec_id], memory.folded("recs"), "signal", "recommendation")
        target = {"rec_id": rec_id}
    return _append_signals(memory, [{"kind": kind, **target}], source, context)


def _append_signals(memory: Memory, signals: List[dict], source: str,
                    context: Optional[str]) -> dict:
    lines = []
    for s in signals:
        s["source"] = source
        if context:
            s["context"] = redact.redact_text(context)
        lines.append(model.complete("signal", s))
    memory.append("signals", lines)
    return {"signals": [{"id": s["id"], "kind": s["kind"],
                         "target": s.get("aha_id") or s.get("rec_id")} for s in lines]}
