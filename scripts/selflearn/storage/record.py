"""``record``: validate a payload whole, redact it, dedup it, append it.

Flow: parse → check every item (a single problem rejects the payload and
nothing is written) → redact → reinforce equivalents instead of duplicating
→ append events, cards, recommendations, signals, all or nothing across the
files (``store.append_all``) → INDEX.md. Limits: ``model.MAX_*``. A card equal to
an existing one (explicit ``key``, else normalized title + when_to_use +
skill) gets a new merged version and an ``aha_reinforced`` signal.
Provenance is the caller's, never the payload's: ``source`` (``agent`` for the
``record`` command, ``mined``, ``human``) becomes a new card's ``origin``; an
agent's payload may not carry ``origin``, ``confidence``, internal fields or a
card status other than ``proposed``, and an agent's change to a reviewed card
sends it back to review (status ``proposed``).
"""

import re
from typing import Dict, List, Optional, Tuple

from .content import lone_surrogate
from . import model, redact, store
from .errors import UsageError
from .memory import Memory

PAYLOAD_KEYS = ("event", "aha_cards", "recommendations", "used_aha_ids", "used_rec_ids",
                "used", "usage_source", "usage_context")
LIST_FIELDS = ("solution_steps", "evidence", "gotchas", "links", "tags", "notes")
SECTIONS = (("aha_cards", "card", "cards"), ("recommendations", "rec", "recs"))
SOURCES = ("agent", "mined", "human")   # who writes: the record command, a miner, a person
TOOL_FIELDS = ("origin", "confidence", "observations", "first_seen", "last_seen", "trigger",
               "call", "ts", "v", "last_touched_ts", "screen_accepted")  # set by the tool, never an agent
AGENT_STATUS = "proposed"                 # the only card status an agent's payload may state
REVIEWED = ("accepted", "candidate", "backported", "dormant")  # back to review when an agent
# changes their content


_ALNUM = re.compile(r"[^\W_]+")  # runs of str.isalnum characters


def _norm(text) -> str:
    """Lower-case alphanumeric runs joined by single spaces."""
    return " ".join(_ALNUM.findall(str(text or "").lower()))


def dedup_key(item: dict) -> str:
    if item.get("key"):
        return "key:" + _norm(item["key"])
    return "|".join((_norm(item.get("title")), _norm(item.get("when_to_use")),
                     _norm(item.get("primary_skill") or "unknown")))


def _id_list(value, where: str, problems: List[str]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    problems.append(f"{where}: must be an array of ids or a comma-separated string")
    return []


class Folded:
    """Existing records by id and by dedup key, from a full fold of the store.

    ``record`` asks only ``get(name, id)`` and ``by_key(name, key)`` (``name`` is ``cards``
    or ``recs``); the derived index answers the same questions without the full read.
    """

    def __init__(self, memory: Memory):
        self.memory = memory
        self._by_key: Dict[str, Dict[str, dict]] = {}
        memory.folded("cards"), memory.folded("recs")  # read both: their warnings show

    def get(self, name: str, rid: str) -> Optional[dict]:
        return self.memory.folded(name).get(rid)

    def by_key(self, name: str, key: str) -> Optional[dict]:
        if name not in self._by_key:
            self._by_key[name] = {dedup_key(r): r for r in self.memory.folded(name).values()}
        return self._by_key[name].get(key)


class _Taken:
    """Ids in use: the store's, and those this payload creates (for ``model.new_id``)."""

    def __init__(self, known):
        self.known, self.new = known, set()

    def add(self, rid: str) -> None:
        self.new.add(rid)

    def __contains__(self, rid) -> bool:
        return rid in self.new or any(self.known.get(n, rid) is not None for n in ("cards", "recs"))


def check_payload(payload, known) -> Tuple[dict, List[str]]:
    """The used ids found, and every problem with the payload (empty when valid)."""
    if not isinstance(payload, dict):
        return {}, [f"payload: must be a JSON object, got {type(payload).__name__}"]
    problems = [f"payload.{k}: unknown key (known: {', '.join(PAYLOAD_KEYS)})"
                for k in payload if k not in PAYLOAD_KEYS]
    problems += [p for k, v in payload.items() if k not in ("event", "aha_cards", "recommendations")
                 for p in model.limit_problems(v, k, 2)]
    if payload.get("event") is not None:
        problems += model.check("event", payload["event"], "event")
    named = {"card": set(), "rec": set()}
    for section, kind, _ in SECTIONS:
        items = payload.get(section) or []
        if not isinstance(items, list):
            problems.append(f"{section}: must be an array of objects")
            continue
        if len(items) > model.MAX_LIST_ITEMS:
            problems.append(f"{section}: {len(items)} items, over the limit of "
                            f"{model.MAX_LIST_ITEMS}; split the payload")
            continue
        for n, item in enumerate(items):
            problems += model.check(kind, item, f"{section}[{n}]")
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                named[kind].add(item["id"])
    used = payload.get("used") if isinstance(payload.get("used"), dict) else {}
    if payload.get("used") is not None and not isinstance(payload.get("used"), dict):
        problems.append("used: must be an object like {\"aha_ids\": [...], \"rec_ids\": [...]}")
    ids = {
        "card": _id_list(payload.get("used_aha_ids"), "used_aha_ids", problems)
        + _id_list(used.get("aha_ids"), "used.aha_ids", problems),
        "rec": _id_list(payload.get("used_rec_ids"), "used_rec_ids", problems)
        + _id_list(used.get("rec_ids"), "used.rec_ids", problems),
    }
    for (kind, label), name in zip((("card", "used_aha_ids"), ("rec", "used_rec_ids")),
                                   ("cards", "recs")):
        problems += [f"{label}: unknown id {i[:40]!r} (see `list` for ids)" for i in ids[kind]
                     if i not in named[kind] and known.get(name, i) is None]
    for key in ("usage_source", "usage_context"):
        if payload.get(key) is not None and not isinstance(payload[key], str):
            problems.append(f"{key}: must be a string")
    return ids, problems


TOOL_SOURCES = ("human", "person", "cli", "lifecycle", "reinforce", "miner", "feedback",
                "backport", "promote", "decay", "maintain")
"""Signal sources only a person's command or the tool itself writes (and its steps' names)."""


def agent_problems(payload) -> List[str]:
    """What an agent's payload claims that only the tool or a person may set."""
    if not isinstance(payload, dict):
        return []
    problems = []
    for section, kind, _ in SECTIONS:
        items = payload.get(section)
        for n, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict):
                continue
            owned = [k for k in item if k == "screen_accepted"  # ``_…``: see check_payload
                     or (kind == "card" and k in TOOL_FIELDS)]
            claims = [", ".join(owned)] if owned else []
            status = item.get("status")
            if kind == "card" and status is not None \
                    and model.normalize_status(status) != AGENT_STATUS:
                claims.append(f"status {status!r}")
            if claims:
                problems.append(f"{section}[{n}] sets {' and '.join(claims)}")
    usage = payload.get("usage_source")
    if isinstance(usage, str) and _bare(usage) in TOOL_SOURCES:
        problems.append(f"usage_source {usage!r} (a use is the agent's own)")
    return problems


def _bare(word: str) -> str:
    """A word as it reads: look-alikes mapped, invisible characters out, case folded
    (``HU\u200bMAN`` claims what ``human`` claims)."""
    from .confusables import skeleton
    return "".join(ch for ch in skeleton(word) if ch.isalnum()).casefold()


def _content(card: dict) -> dict:
    """What a person reviews of a card: not its bookkeeping, nor the tool's ``call`` (where
    it comes back, widened when it is learned again)."""
    return {k: v for k, v in card.items() if not k.startswith("_")
            and k not in ("ts", "v", "status", "note", "last_touched_ts", "call")}


def _merge(existing: dict, new: dict, override: bool) -> dict:
    """A new version: lists unioned; scalars from ``new`` override or only fill gaps."""
    out = {k: v for k, v in existing.items() if not k.startswith("_")}
    for key, value in new.items():
        if key in ("id", "ts", "v"):
            continue
        if key in LIST_FIELDS and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = list(dict.fromkeys(out[key] + value))
        elif override or out.get(key) in (None, "", [], {}, "unknown"):
            out[key] = value
    out["id"] = existing["id"]
    out["ts"] = model.iso()
    out["v"] = model.SCHEMA_VERSION
    return out


MAX_FACES = 4  # other failures a lesson recorded again is also triggered by (``call.also``)


def _widened(before: dict, version: dict, new: Optional[dict]) -> dict:
    """A lesson recorded again from another episode keeps its first call as its trigger, and
    the new failure's words (``new``, the call the tool derived from its episode) become another
    face of it (``call.also``, newest kept): the same lesson learned twice comes back at either
    failure. A face seen through another command keeps that command's family with its words
    (``{"family": …, "error": […]}``), so the lesson comes back at its failure too."""
    old = before.get("call")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return version
    faces = [f for f in old.get("also") or [] if isinstance(f, (list, dict))]
    error, family = new.get("error"), new.get("family")
    face = error if family in (None, "", old.get("family")) else {"family": family,
                                                                 "error": error}
    if isinstance(error, list) and error and error != old.get("error") and face not in faces:
        faces = (faces + [face])[-MAX_FACES:]
    return dict(version, call=dict(old, also=faces) if faces else old)


def _back_to_review(version: dict, before: dict, source: str) -> dict:
    """An agent's change to a reviewed card's content waits for review again."""
    if source == "agent" and before.get("status") in REVIEWED \
            and _content(version) != _content(before):
        version["status"] = AGENT_STATUS
        version["note"] = (f"changed by record (was {before.get('status')}); waits for a "
                           "person's review")
    return version


def _plan_section(kind: str, name: str, items: List[dict], known, taken,
                  source: str = "agent", calls: Optional[Dict[str, dict]] = None
                  ) -> Tuple[List[dict], List[dict], List[dict]]:
    """Lines to append, their report entries, and reinforcement signals."""
    existing: Dict[str, dict] = {}   # versions this payload writes, over what the store holds
    by_key: Dict[str, dict] = {}

    def current(rid) -> Optional[dict]:
        if not isinstance(rid, str):
            return None
        return existing[rid] if rid in existing else known.get(name, rid)

    def keyed(key: str) -> Optional[dict]:
        return by_key[key] if key in by_key else known.by_key(name, key)

    lines, report, signals = [], [], []
    prefix = model.PREFIX[kind]
    for item in items:
        clean = redact.redact(item)
        if kind == "card":
            clean.pop("origin", None)
            if calls and clean.get("episode") in calls:  # the tool's, from the episode
                clean["call"] = calls[clean["episode"]]
        if current(clean.get("id")) is not None:
            before = current(clean["id"])
            version, action = _merge(before, clean, override=True), "updated"
            if kind == "card":
                version = _widened(before, version, clean.get("call"))
                version = _back_to_review(version, before, source)
        elif keyed(dedup_key(clean)) is not None and not clean.get("id"):
            before = keyed(dedup_key(clean))
            version, action = _merge(before, clean, override=False), "reinforced"
            if kind == "card":
                version = _widened(before, version, clean.get("call"))
                version = _back_to_review(version, before, source)
            signals.append({"kind": f"{prefix}_reinforced", f"{prefix}_id": version["id"],
                            "source": "record", "context": "equivalent record merged"})
        else:
            if kind == "card":
                clean["origin"] = source
            version, action = model.complete(kind, clean, taken), "created"
        taken.add(version["id"])
        existing[version["id"]] = {**version, "_versions": 1}
        by_key[dedup_key(version)] = existing[version["id"]]
        lines.append(version)
        report.append({"id": version["id"], "title": version.get("title"), "action": action})
    return lines, report, signals


def record(memory: Memory, payload, known=None, source: str = "agent",
           calls: Optional[Dict[str, dict]] = None) -> dict:
    """Write one payload as ``source`` (see ``SOURCES``); raises UsageError (nothing
    written) when any item is invalid or an agent's payload claims provenance.

    ``known`` looks up existing records (``Folded`` by default: a full fold); ``calls``
    gives a card naming an ``episode`` the ``call`` the tool derived from it.
    """
    if source not in SOURCES:  # pragma: no cover - callers pass a constant
        raise ValueError(f"record: unknown source {source!r}")
    owned = agent_problems(payload) if source == "agent" else []
    if owned:
        raise UsageError("record: provenance is set by the tool, not the payload: "
                         + "; ".join(owned) + f" (cards start as {AGENT_STATUS!r}; origin, "
                         "confidence and internal fields are the tool's; a person changes "
                         "status with `aha-status` or feedback.md); nothing was written "
                         "(see references/SECURITY.md)")
    known = Folded(memory) if known is None else known
    used, problems = check_payload(payload, known)
    if problems:  # one problem: one line; several: one line each, then the verdict
        verdict = "nothing was written (fields: references/FORMAT.md)"
        raise UsageError(f"record: {problems[0]}; {verdict}" if len(problems) == 1 else
                         "\n".join(f"record: {p}" for p in problems) + f"\nrecord: {verdict}")
    taken = _Taken(known)
    out: dict = {"event": None}
    signals: List[dict] = []
    writes: List[Tuple[str, List[dict]]] = []
    if payload.get("event") is not None:
        event = model.complete("event", redact.redact(payload["event"]), taken)
        writes.append(("events", [event]))
        out["event"] = event["id"]
    for section, kind, name in SECTIONS:
        lines, report, reinforced = _plan_section(kind, name, payload.get(section) or [], known,
                                                  taken, source, calls)
        writes.append((name, lines))
        signals += reinforced
        out[section] = report
    source = payload.get("usage_source") or "record"
    context = redact.redact_text(payload.get("usage_context") or "")
    for kind, prefix in (("card", "aha"), ("rec", "rec")):
        for rid in dict.fromkeys(used[kind]):
            signal = {"kind": f"{prefix}_used", f"{prefix}_id": rid, "source": source}
            if context:
                signal["context"] = context
            signals.append(signal)
    writes.append(("signals", [model.complete("signal", s, taken) for s in signals]))
    memory.append_all(writes)  # all or nothing across the files
    out["signals"] = len(signals)
    return out


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number; use a string or null")


def parse_json(data, where: str):
    """The payload as data, or a one-line UsageError naming where it came from.

    ``data`` is bytes (or text): over ``MAX_PAYLOAD_BYTES``, not UTF-8, NaN or Infinity,
    or nested deeper than Python can parse are refused like any other invalid JSON.
    """
    import json
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")  # lone surrogates: bytes that were not UTF-8
    if len(data) > model.MAX_PAYLOAD_BYTES:
        raise UsageError(f"record: {where} is over the payload limit of "
                         f"{model.MAX_PAYLOAD_BYTES} bytes; split it; nothing was written")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"record: {where} is not UTF-8 (byte {exc.start}); nothing was "
                         "written") from None
    if not text.strip().lstrip("\ufeff"):
        raise UsageError(f"record: {where} is empty; give one JSON object such as "
                         "{\"aha_cards\": [{\"title\": \"...\"}]} (fields: references/FORMAT.md); "
                         "nothing was written")
    try:
        data = json.loads(text.lstrip("\ufeff"), parse_constant=_no_constant)
        if "\\u" in text and lone_surrogate(data):
            raise UsageError(f"record: {where} holds a lone surrogate (a \\ud800-\\udfff escape "
                             "without its pair), which no UTF-8 text can hold; nothing was "
                             "written")
        return data
    except RecursionError:
        raise UsageError(f"record: {where} is nested deeper than {model.MAX_DEPTH} levels; "
                         "nothing was written") from None
    except ValueError as exc:
        raise UsageError(f"record: {where} is not valid JSON ({exc}); nothing was written") from None


def read_payload(source: Optional[str], stdin) -> object:
    """Read the payload from a regular file, or ``-``/None for stdin (bytes, checked as UTF-8)."""
    limit = model.MAX_PAYLOAD_BYTES + 1
    if source in (None, "-"):
        if getattr(stdin, "isatty", lambda: False)():  # a person typed `record`: do not hang
            raise UsageError("record: reads one JSON object from standard input or --json FILE, "
                             "e.g. echo '{\"aha_cards\": [{\"title\": \"...\"}]}' | "
                             "python3 scripts/self_learning.py record; nothing was written")
        stream = getattr(stdin, "buffer", None)
        return parse_json(stream.read(limit) if stream is not None else stdin.read(limit),
                          "standard input")
    return parse_json(store.read_input(source, "record", limit), source)
