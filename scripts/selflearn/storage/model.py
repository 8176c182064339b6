"""Record kinds, their fields, statuses, ids, validation and upgrades.

The field tables here are the single source for validation (of payloads by
``check`` and ``limit_problems``, of stored lines by ``LineCheck``) and for the
tables in references/FORMAT.md (rendered by ``tests/render_docs.py``), limits included.
Every record written carries ``"v": 1``; a record without ``v`` comes from
the original v1 layout and reads as it is; only a whole-number ``v`` above 1 is a
newer format (refused); any other odd ``v`` is a damaged line. Must not import cli.
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
    Field("call", "object", "Set by the tool: the call the lesson is about, `{tool, family, "
          "needs, skip, folder, error, also}` (family `go *`: any call of a program missing "
          "here): a later call of that family naming every "
          "`needs` word (and run in `folder`, when set) gets the lesson just in time, unless it "
          "already carries every `skip` word (the fix); a failure sharing its `error` words (or "
          "those of `also`: the failures of later episodes the same lesson was recorded from "
          "again, newest 4; one met through another command is `{family, error}` and comes "
          "back at that command's failure) gets it right after (references/SURFACING.md)."),
    Field("episode", "str", "The episode a lesson was written from: the id of the failed "
          "call's observation, as the Stop hook's question names it; the tool derives `call` "
          "from it, so the lesson comes back at that call. For the person's words (a prompt or a "
          "refusal the question quoted) it is that observation's id, and the lesson has no "
          "call: it comes back with the advice."),
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
    Field("seen", "str", "When what it reports happened, if not when it was written (an "
                         "outcome: the recurrence, or the session's last use of the lesson)."),
]
KINDS = {"card": CARD_FIELDS, "rec": REC_FIELDS, "event": EVENT_FIELDS, "signal": SIGNAL_FIELDS}
PREFIX = {"card": "aha", "rec": "rec", "event": "evt", "signal": "sig"}

# Limits on what a payload may hold (references/FORMAT.md, "Limits"). Far above any real lesson,
# small enough that one record can never make INDEX.md, a prompt or the hook path slow.
MAX_PAYLOAD_BYTES = 1024 * 1024   # one `record` payload, as UTF-8
MAX_FIELD_CHARS = 65536           # one string anywhere in a record (64 Ki characters)
MAX_LIST_ITEMS = 200              # one array
MAX_DEPTH = 6                     # objects and arrays inside one another, the record itself = 1
MAX_ID_CHARS = 96
ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-")
ID_SHAPE = (f"1-{MAX_ID_CHARS} characters of letters, digits and `_ . : -`, starting with a "
            "letter or digit, without `..`")

# Store files whose lines are checked against a field table on read (``LineCheck``); the
# other JSONL files have the types of a few fields checked (``_LOOSE_TYPES``).
FILE_KINDS = {"cards": "card", "recs": "rec", "events": "event", "signals": "signal"}
FOLDED_FILES = ("cards", "recs")   # folded by id: every line needs an id, the first a title
_LOOSE_TYPES = {  # other files: field -> kind (as in Field)
    "observations": {"event": "str", "agent": "str", "tool": "str", "tool_kind": "str",
                     "family": "str", "args": "str", "file": "str", "outcome": "str",
                     "error": "str", "session_id": "str", "prompt": "str", "cwd": "str",
                     "exit_code": "number", "duration_ms": "number", "interrupted": "bool"},
    "surfacings": {"session_id": "str", "event": "str", "lesson_ids": "list", "chars": "number"},
    "corrections": {"target": "str", "target_kind": "str", "text": "str"},
    "proposals": {"status": "str", "kind": "str", "title": "str", "key": "str", "name": "str",
                  "card": "str", "body": "str", "covers": "list", "evidence": "list"},
    "backports": {"backport_id": "str", "target_skill": "str", "applied": "bool",
                  "requested_card_ids": "list", "added_card_ids": "list",
                  "result_card_ids": "list"},
}
_READ_CHOICES = ("status", "scope", "origin", "priority")  # other choices are not checked on read


def now() -> float:
    """The clock; tests replace ``SELF_LEARNING_NOW`` to run on a fake one."""
    fake = os.environ.get("SELF_LEARNING_NOW")
    return parse_ts(fake) if fake else time.time()


def iso(epoch: Optional[float] = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now() if epoch is None else epoch))


def parse_ts(text: str) -> float:
    """Seconds since the epoch for an ISO-8601 UTC time (fraction and zone ignored); 0.0 when unreadable."""
    text = (text or "").strip().replace(" ", "T") if isinstance(text, str) else ""
    fast = _canonical_ts(text[:19])
    if fast is not None:
        return fast
    for fmt, width in (("%Y-%m-%dT%H:%M:%S", 19), ("%Y-%m-%d", 10)):
        try:
            return float(timegm(time.strptime(text[:width], fmt)[:6]))
        except ValueError:
            continue
    return 0.0


def timegm(fields) -> int:
    """``calendar.timegm`` of ``(year, month, day, hour, minute, second)`` in the proleptic
    Gregorian calendar, without importing ``calendar`` (and ``locale``, 2-3 ms a hook)."""
    y, mo, d, h, mi, sec = fields[:6]
    y -= mo <= 2  # days from 1970-01-01, counting years from March (the leap day comes last)
    era, yoe = divmod(y, 400)
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return ((days * 24 + h) * 60 + mi) * 60 + sec


def _month_days(y: int, mo: int) -> int:
    if mo == 2:
        return 29 if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else 28
    return 30 if mo in (4, 6, 9, 11) else 31


def _canonical_ts(head: str) -> Optional[float]:
    """``parse_ts`` for the stamps this tool writes, without ``strptime`` (20x slower);
    None for anything else (or out of range), which ``strptime`` then decides."""
    if len(head) != 19 or head[4] != "-" or head[7] != "-" or head[10] != "T" \
            or head[13] != ":" or head[16] != ":":
        return None
    fields = (head[0:4], head[5:7], head[8:10], head[11:13], head[14:16], head[17:19])
    if not all(f.isascii() and f.isdigit() for f in fields):
        return None
    y, mo, d, h, mi, sec = map(int, fields)
    if not (y >= 1 and 1 <= mo <= 12 and h <= 23 and mi <= 59 and sec <= 59) or \
            not 1 <= d <= _month_days(y, mo):
        return None
    return float(timegm((y, mo, d, h, mi, sec)))


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
    known = {f.name for f in KINDS[kind]}
    for key in item:
        if not isinstance(key, str) or key.startswith("_"):
            problems.append(f"{where}.{key}: internal field; fields starting with _ are "
                            "the tool's own")
        elif key not in known:
            problems.append(f"{where}.{key}: unknown field (see references/FORMAT.md)")
    for field in KINDS[kind]:
        if field.name not in item or item[field.name] is None:
            if field.required:
                problems.append(f"{where}.{field.name}: missing (required)")
            continue
        why = id_problem(item["id"]) if field.name == "id" else field.problem(item[field.name])
        if why:
            problems.append(f"{where}.{field.name}: {why}")
    return problems + limit_problems(item, where)


def limit_problems(value: Any, where: str, depth: int = 1) -> List[str]:
    """Where ``value`` breaks the documented limits: NaN or Infinity, a string over
    ``MAX_FIELD_CHARS``, an array over ``MAX_LIST_ITEMS``, nesting over ``MAX_DEPTH``."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return [f"{where}: NaN and Infinity are not JSON numbers; use a string or null"]
    if isinstance(value, str):
        return [f"{where}: {len(value)} characters, over the limit of {MAX_FIELD_CHARS}"] \
            if len(value) > MAX_FIELD_CHARS else []
    if not isinstance(value, (list, dict)):
        return []
    if depth > MAX_DEPTH:
        return [f"{where}: nested deeper than {MAX_DEPTH} levels"]
    if isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            return [f"{where}: {len(value)} items, over the limit of {MAX_LIST_ITEMS}"]
        items = [(f"{where}[{n}]", v) for n, v in enumerate(value)]
    else:
        items = [(f"{where}.{k}", v) for k, v in value.items()]
    problems: List[str] = []
    for at, item in items:
        problems += limit_problems(item, at, depth + 1)
        if problems:
            return problems  # one line per offending field is enough
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


def id_problem(value: Any) -> Optional[str]:
    """Why ``value`` is not an id of the documented shape (``ID_SHAPE``), or None."""
    if not isinstance(value, str):
        return f"must be a string id, got {type(value).__name__}"
    if not value or len(value) > MAX_ID_CHARS or not value[0].isalnum() or ".." in value \
            or not ID_CHARS.issuperset(value):
        return f"id {value[:40]!r} is outside the id shape ({ID_SHAPE})"
    return None


def newer(record: dict) -> bool:
    """The record really comes from a newer format: a whole-number ``v`` above ours."""
    v = record.get("v")
    return type(v) is int and v > SCHEMA_VERSION


def _stored_problem(spec: Tuple[str, Tuple[str, ...]], value: Any) -> Optional[str]:
    """Why a stored ``value`` does not fit ``(kind, allowed values)``, or None."""
    kind, choices = spec
    if value is None:
        return "is null"
    if not _KIND_CHECKS[kind](value):
        return "is empty" if kind == "text" and isinstance(value, str) else \
            f"must be {_KIND_NAMES[kind]}, got {type(value).__name__}"
    if kind == "number" and (value != value or value in (float("inf"), float("-inf"))):
        return "must be a finite number"
    if kind == "object" and limit_problems(value, "", 2):
        return f"is nested deeper than {MAX_DEPTH} levels or over a size limit"
    if choices and normalize_status(value) not in choices:
        return f"has unknown value {_short(value)} (one of: {', '.join(choices)})"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class LineCheck:
    """Checks the lines of one store file in order; ``problem(record)`` is why a line is bad.

    Types of the known fields (and the values of status, scope, origin, priority) must fit the
    field table; unknown fields are kept (another writer's extensions). In folded files every
    line needs an id of the documented shape, and the first line of an id needs a title.
    A newer-format line is reported by ``newer`` (the caller decides), never as damage.
    """

    def __init__(self, name: str):
        self.name = name
        kind = FILE_KINDS.get(name)
        # field -> (kind, allowed values); read for every line, so checks stay cheap
        self.table = {f.name: (f.kind, f.choices if f.name in _READ_CHOICES else ())
                      for f in (KINDS[kind] if kind else ())}
        for key, loose in _LOOSE_TYPES.get(name, {}).items():
            self.table.setdefault(key, (loose, ()))
        self.table.setdefault("ts", ("str", ()))
        self.table.pop("v", None)  # checked first, on its own
        self.plain = frozenset(k for k, (kind, choices) in self.table.items()
                               if kind == "str" and not choices)
        self.texts = frozenset(k for k, (kind, _) in self.table.items() if kind == "text")
        self.folded = name in FOLDED_FILES
        self.titled: set = set()

    def problem(self, record: dict) -> Optional[str]:
        if "v" in record:
            v = record["v"]
            if type(v) is not int or v < 1:
                return f"field v must be a whole number >= 1, got {_short(v)}"
            if v > SCHEMA_VERSION:
                return newer_reason(record)
        table, plain, texts = self.table, self.plain, self.texts
        for key, value in record.items():
            if type(value) is str and (key in plain or key in texts and value
                                       and not value.isspace()):
                continue  # the common case, decided without a call
            spec = table.get(key)
            if spec is None:
                if key[:1] == "_":
                    return f"internal field {_short(key)} in a stored line"
                continue
            why = _stored_problem(spec, value)
            if why:
                return f"field {key} {why}"
        return self._identity(record) if self.folded else None

    def _identity(self, record: dict) -> Optional[str]:
        if "id" not in record:
            return "no id"
        why = id_problem(record["id"])
        if why:
            return f"field {why}"
        if record["id"] not in self.titled:
            if not isinstance(record.get("title"), str) or not record["title"].strip():
                return f"first line of {record['id']} has no title"
            self.titled.add(record["id"])
        return None


NEWER = "record format v"  # how a newer-format line's reason starts (store.Problem.newer)


def newer_reason(record: dict) -> str:
    return (f"{NEWER}{record.get('v')} was written by a newer self_learning; "
            "upgrade this skill folder to read it")


def streamed(check: "LineCheck", record: Any, where: str) -> Optional[str]:
    """Why a line read by a streaming reader is skipped; a newer-format line stops the command."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if newer(record):
        raise newer_error(where, record)
    return check.problem(record)


def newer_error(where: str, record: dict) -> SelfLearningError:
    return SelfLearningError(f"{where}: {newer_reason(record)}")


def upgrade(record: dict, where: str) -> dict:
    """Bring a stored record to the current version, or refuse one from the future.

    v absent (original self-learning-skills layout) and v1 read as they are.
    Add ``upgrade_vN`` steps here, in order, when the format changes.
    """
    if newer(record):
        raise newer_error(where, record)
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
