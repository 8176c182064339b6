"""Record kinds, their fields, statuses, ids, validation and upgrades.

The field tables here are the single source for validation and for the
tables in references/FORMAT.md (rendered by ``tools/render_docs.py``).
Every record written carries ``"v": 1``; a record without ``v`` comes from
the original v1 layout and reads as it is; a higher ``v`` is refused.
Must not import cli.
"""

import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .errors import SelfLearningError

SCHEMA_VERSION = 1

CARD_STATUSES = ("proposed", "candidate", "accepted", "dormant", "retired",
                 "rejected", "deprecated", "backported")
REC_STATUSES = ("proposed", "accepted", "in_progress", "blocked", "done",
                "rejected", "deprecated")
HIDDEN_STATUSES = ("rejected", "deprecated", "retired")
OPEN_REC_STATUSES = ("proposed", "accepted", "in_progress", "blocked")
SCOPES = ("project", "portable")
ORIGINS = ("agent", "mined", "human", "imported")
PRIORITIES = ("high", "medium", "low")
STATUS_ALIASES = {
    "implemented": "done", "complete": "done", "completed": "done", "fixed": "done",
    "resolved": "done", "in-progress": "in_progress", "inprogress": "in_progress",
    "wip": "in_progress", "started": "in_progress", "new": "proposed", "open": "proposed",
    "todo": "proposed", "approved": "accepted", "wontfix": "rejected",
    "declined": "rejected", "obsolete": "deprecated",
}
SIGNAL_KINDS = (
    "aha_used", "aha_recalled", "aha_reinforced", "aha_promoted", "aha_backported",
    "aha_status", "rec_used", "rec_touched", "rec_done", "rec_reinforced", "rec_status",
    "aha_observed", "aha_surfaced", "aha_helped", "aha_violated",
)
SIGNAL_SOURCES = ("manual", "record", "cli", "hook", "miner", "backport", "repair",
                  "lifecycle", "reinforce", "feedback", "human")


class Field:
    """One documented field: name, type check, allowed values, default, meaning."""

    def __init__(self, name: str, kind: str, doc: str, required: bool = False,
                 choices: Tuple[str, ...] = (), default: Any = None):
        self.name, self.kind, self.doc = name, kind, doc
        self.required, self.choices, self.default = required, choices, default

    def problem(self, value: Any) -> Optional[str]:
        """Why ``value`` does not fit this field, or None."""
        if not _KIND_CHECKS[self.kind](value):
            if isinstance(value, str) and self.kind == "text":
                return "is empty"
            return f"must be {_KIND_NAMES[self.kind]}, got {type(value).__name__}"
        if self.choices and (normalize_status(value) if self.name == "status" else value) \
                not in self.choices:
            return f"unknown value {value!r} (one of: {', '.join(self.choices)})"
        return None


_KIND_CHECKS: Dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "text": lambda v: isinstance(v, str) and bool(v.strip()),
    "bool": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "list": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "object": lambda v: isinstance(v, dict),
}
_KIND_NAMES = {"str": "a string", "text": "a non-empty string", "bool": "true or false",
               "number": "a number", "list": "an array of strings", "object": "an object"}

_COMMON = [
    Field("id", "text", "Stable id; filled when absent (`aha_…`, `rec_…`, `evt_…`)."),
    Field("ts", "text", "UTC time this line was written, `YYYY-MM-DDTHH:MM:SSZ`; filled."),
    Field("v", "number", "Record format version; written as 1, absent in original-layout stores."),
]
_SHARED = [
    Field("primary_skill", "str", "Skill involved; `unknown` when absent.", default="unknown"),
    Field("scope", "str", "`project` (this repo only) or `portable` (reusable anywhere).",
          choices=SCOPES, default="project"),
    Field("shareable", "bool", "Safe to share or backport; false keeps it local.", default=True),
    Field("tags", "list", "Short keywords; `skill:<name>` names the originating skill."),
    Field("key", "str", "Optional explicit dedup key; equal keys reinforce one record."),
    Field("note", "str", "Human note on the latest status change."),
    Field("last_touched_ts", "str", "Last manual status or note change; drives staleness."),
]
CARD_FIELDS = _COMMON + [
    Field("title", "text", "Short, specific title.", required=True),
    Field("when_to_use", "str", "Trigger: keywords or situation where this applies."),
    Field("problem", "str", "What slowed the run down or caused doubt."),
    Field("solution_steps", "list", "What to do, in order."),
    Field("evidence", "list", "Paths, commands or observations that back it."),
    Field("gotchas", "list", "Traps next to the solution."),
    Field("links", "list", "Docs or internal links (no secrets)."),
    Field("status", "str", "Lifecycle status.", choices=CARD_STATUSES, default="proposed"),
    Field("origin", "str", "Provenance, set by the tool (never by a payload): `agent` "
          "(`record`), `mined` (learned from hooks), `human` (a person's command or "
          "feedback.md), `imported` (a store committed to git).", choices=ORIGINS,
          default="agent"),
    Field("confidence", "number", "Trust in [0, 1] from the evidence that created it; "
          "`lifecycle` adjusts it for use, outcomes and idle time."),
    Field("observations", "number", "Mined: how many observations back it."),
    Field("first_seen", "str", "Mined: UTC time of the earliest observation behind it."),
    Field("last_seen", "str", "Mined: UTC time of the latest observation behind it."),
    Field("trigger", "str", "Mined: the command family or tool whose use gives the lesson a "
          "chance to matter."),
    Field("screen_accepted", "object", "A person accepted this content although the safety "
          "screen flagged it: `{digest, ts, by, reasons}`; void once the content changes."),
    Field("input_shape", "object", "Schema-like summary of the inputs."),
    Field("output_shape", "object", "Shape of what it produces."),
] + _SHARED
REC_FIELDS = _COMMON + [
    Field("title", "text", "Concrete improvement.", required=True),
    Field("why", "str", "Why it matters."),
    Field("implementation_hint", "str", "What to change and where."),
    Field("expected_impact", "object", "e.g. `{\"speed\": \"high\", \"quality\": \"medium\"}`."),
    Field("priority", "str", "Explicit priority; else derived from expected_impact.",
          choices=PRIORITIES),
    Field("status", "str", "Lifecycle status.", choices=REC_STATUSES, default="proposed"),
    Field("evidence", "list", "What backs it."),
    Field("backport", "object", "Optional backport hints (files, skill_md_append)."),
] + _SHARED
EVENT_FIELDS = _COMMON + [
    Field("task_summary", "str", "What the user wanted."),
    Field("primary_skill", "str", "Skill used, if known.", default="unknown"),
    Field("notes", "list", "Key steps, tools used, pain points."),
    Field("outcome", "str", "How the run ended (free text: success, partial, failed…)."),
    Field("skills_used", "list", "Skills consulted."),
    Field("tags", "list", "Short keywords."),
]
SIGNAL_FIELDS = _COMMON + [
    Field("kind", "str", "What happened.", required=True, choices=SIGNAL_KINDS),
    Field("aha_id", "str", "The card it concerns."),
    Field("rec_id", "str", "The recommendation it concerns."),
    Field("source", "str", "Who emitted it: " + ", ".join(SIGNAL_SOURCES) + "."),
    Field("session_id", "str", "The agent session it concerns (surfacing and outcomes)."),
    Field("context", "str", "Short, non-sensitive context."),
]
KINDS = {"card": CARD_FIELDS, "rec": REC_FIELDS, "event": EVENT_FIELDS, "signal": SIGNAL_FIELDS}
PREFIX = {"card": "aha", "rec": "rec", "event": "evt", "signal": "sig"}


def now() -> float:
    """The clock; tests replace ``SELF_LEARNING_NOW`` to run on a fake one."""
    fake = os.environ.get("SELF_LEARNING_NOW")
    return parse_ts(fake) if fake else time.time()


def iso(epoch: Optional[float] = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now() if epoch is None else epoch))


def parse_ts(text: str) -> float:
    """Seconds since the epoch for an ISO-8601 UTC time (fraction and zone ignored); 0.0 when unreadable."""
    import calendar
    text = (text or "").strip().replace(" ", "T") if isinstance(text, str) else ""
    for fmt, width in (("%Y-%m-%dT%H:%M:%S", 19), ("%Y-%m-%d", 10)):
        try:
            return float(calendar.timegm(time.strptime(text[:width], fmt)))
        except ValueError:
            continue
    return 0.0


def new_id(kind: str, taken=()) -> str:
    """``<prefix>_<UTC second>_<6 hex>``; random bits make same-second ids distinct."""
    stamp = iso().replace("-", "").replace(":", "")
    while True:
        rid = f"{PREFIX[kind]}_{stamp}_{os.urandom(3).hex()}"
        if rid not in taken:
            return rid


def normalize_status(value: Any) -> Any:
    if isinstance(value, str):
        low = value.strip().lower()
        return STATUS_ALIASES.get(low, low)
    return value


def check(kind: str, item: Any, where: str) -> List[str]:
    """Every problem with one payload item, each as ``<where>.<field>: <why>``."""
    if not isinstance(item, dict):
        return [f"{where}: must be an object, got {type(item).__name__}"]
    problems = []
    for field in KINDS[kind]:
        if field.name not in item or item[field.name] is None:
            if field.required:
                problems.append(f"{where}.{field.name}: missing (required)")
            continue
        why = field.problem(item[field.name])
        if why:
            problems.append(f"{where}.{field.name}: {why}")
    return problems


def complete(kind: str, item: dict, taken=()) -> dict:
    """A copy of a valid item with id, ts, v and defaults filled in."""
    out = {k: v for k, v in item.items() if v is not None}
    out["v"] = SCHEMA_VERSION
    out.setdefault("id", new_id(kind, taken))
    out["ts"] = iso()
    if "status" in out:
        out["status"] = normalize_status(out["status"])
    for field in KINDS[kind]:
        if field.default is not None and field.name not in out:
            out[field.name] = field.default
    return out


def upgrade(record: dict, where: str) -> dict:
    """Bring a stored record to the current version, or refuse one from the future.

    v absent (original self-learning-skills layout) and v1 read as they are.
    Add ``upgrade_vN`` steps here, in order, when the format changes.
    """
    version = record.get("v", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise SelfLearningError(
            f"{where}: record format v{version} was written by a newer self_learning; "
            "upgrade this skill folder to read it")
    return record


def priority_of(rec: dict) -> str:
    """Explicit priority, else the highest level named in expected_impact, else medium."""
    if rec.get("priority") in PRIORITIES:
        return rec["priority"]
    impact = rec.get("expected_impact")
    levels = [str(v).lower() for v in impact.values()] if isinstance(impact, dict) else []
    for level in PRIORITIES:
        if level in levels:
            return level
    return "medium"
