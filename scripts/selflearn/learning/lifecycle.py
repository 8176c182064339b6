"""Lesson lifecycle: confidence from evidence over time, and the status it earns.

Pure: ``evidence(signals)`` folds the signal log once into per-card counters
with dates; ``assess(card, ev, now)`` returns the card's confidence now and
the status the rules give it. Commands (``promote``, ``decay``, ``maintain``)
write what ``assess`` decides. Statuses move candidate → accepted → dormant →
retired for mined lessons; a person's rejected is final. Every constant below
is documented in references/LIFECYCLE.md and exercised by a fake-clock test.
Must not import cli.
"""

from typing import Dict, List, NamedTuple, Optional

from ..storage import model

DAY = 86400.0
WEEK = 7 * DAY
# --- confidence ------------------------------------------------------------------------------
ORIGIN_BASE = {"agent": 0.6, "human": 0.8, "mined": 0.4}  # when a card states no confidence
USE_GAIN = 0.05            # per aha_used: gains this share of the gap to 1 (diminishing)
HELP_GAIN = 0.10           # per aha_helped (surfaced, and the pattern did not recur)
VIOLATION_LOSS = 0.15      # per aha_violated (surfaced, and it recurred anyway): loses this share
DECAY_PER_WEEK = 0.05      # subtracted per full week without new evidence
# --- status ----------------------------------------------------------------------------------
PROMOTE_MIN_OBSERVATIONS = 3   # observations behind a candidate before it is accepted
PROMOTE_MIN_DAYS = 2           # ... spread over at least this many days (first to last seen)
PROMOTE_MIN_CONFIDENCE = 0.6   # ... with at least this confidence now
QUIET_DAYS = 14                # ... and no violation within this many days
DORMANT_AFTER_DAYS = 30        # no evidence for this long: dormant (not surfaced by default)
RETIRE_AFTER_DAYS = 120        # no evidence for this long: retired (hidden)
LIVE = ("candidate", "accepted", "dormant")  # the statuses the rules move between


class Evidence:
    """What the signal log says about one card: counts and the dates that matter."""

    __slots__ = ("used", "helped", "violated", "last", "last_violation")

    def __init__(self):
        self.used = self.helped = self.violated = 0
        self.last = self.last_violation = ""


class Assessment(NamedTuple):
    confidence: float
    status: str            # the status the rules give the card now (may equal its own)
    reason: str            # why, in words: cites the constants that decided it
    idle_days: float


def evidence(signals: List[dict]) -> Dict[str, Evidence]:
    """One pass over signals: per card, uses, outcomes and the latest dates."""
    out: Dict[str, Evidence] = {}
    for s in signals:
        kind, target = s.get("kind"), s.get("aha_id")
        if kind not in ("aha_used", "aha_helped", "aha_violated", "aha_observed") \
                or not isinstance(target, str):
            continue
        ev = out.get(target)
        if ev is None:
            ev = out[target] = Evidence()
        ts = str(s.get("seen") or s.get("ts") or "")  # when it happened, else when written
        ev.last = max(ev.last, ts)
        if kind == "aha_used":
            ev.used += 1
        elif kind == "aha_helped":
            ev.helped += 1
        elif kind == "aha_violated":
            ev.violated += 1
            ev.last_violation = max(ev.last_violation, ts)
    return out


def base_confidence(card: dict) -> float:
    value = card.get("confidence")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return ORIGIN_BASE.get(card.get("origin", "agent"), ORIGIN_BASE["agent"])


def last_evidence(card: dict, ev: Optional[Evidence]) -> str:
    """The latest of: last observation seen, card creation, any evidence signal."""
    stamps = [str(card.get("last_seen") or ""), str(card.get("_first_ts") or card.get("ts") or "")]
    if ev is not None:
        stamps.append(ev.last)
    return max(stamps)


def confidence(card: dict, ev: Optional[Evidence], now: float) -> float:
    """Base, then uses and outcomes with diminishing returns, then idle decay."""
    return confidence_at(base_confidence(card), ev, last_evidence(card, ev), now)


def undecayed(base: float, ev: Optional[Evidence]) -> float:
    """The confidence before idle decay: the base moved by uses and outcomes (never rounded)."""
    c = base
    if ev is not None:
        for _ in range(ev.used):
            c += USE_GAIN * (1 - c)
        for _ in range(ev.helped):
            c += HELP_GAIN * (1 - c)
        for _ in range(ev.violated):
            c -= VIOLATION_LOSS * c
    return c


def confidence_at(base: float, ev: Optional[Evidence], last: str, now: float,
                  stamp: Optional[float] = None) -> float:
    """``confidence`` from its parts: the base, the evidence and the last evidence time
    (``stamp``: ``model.parse_ts(last)`` when the caller has it)."""
    c = undecayed(base, ev)
    stamp = model.parse_ts(last) if stamp is None else stamp
    weeks = int((max(0.0, (now - stamp) / DAY) if stamp else 0.0) // 7)
    return round(max(0.0, min(1.0, c - DECAY_PER_WEEK * weeks)), 3)


def _has_fix(card: dict) -> bool:
    """A mined failure names a fix (a step other than a diagnostic); other kinds always do."""
    if "failure" not in (card.get("tags") or []):
        return True
    steps = card.get("solution_steps") or []
    return any(isinstance(s, str) and not s.startswith("to see what failed") for s in steps)


def _idle_days(card: dict, ev: Optional[Evidence], now: float) -> float:
    last = model.parse_ts(last_evidence(card, ev))
    return max(0.0, (now - last) / DAY) if last else 0.0


def assess(card: dict, ev: Optional[Evidence], now: float) -> Assessment:
    """The confidence now and the status the rules give the card."""
    conf = confidence(card, ev, now)
    idle = _idle_days(card, ev, now)
    status = card.get("status", "proposed")
    if status not in LIVE or card.get("origin") != "mined":
        return Assessment(conf, status, "outside the lifecycle (not a mined lesson in "
                          f"{'/'.join(LIVE)})", idle)
    if idle >= RETIRE_AFTER_DAYS:
        return Assessment(conf, "retired", f"no evidence for {idle:.0f} days "
                          f"(>= {RETIRE_AFTER_DAYS})", idle)
    if idle >= DORMANT_AFTER_DAYS:
        return Assessment(conf, "dormant", f"no evidence for {idle:.0f} days "
                          f"(>= {DORMANT_AFTER_DAYS})", idle)
    if status == "dormant":  # evidence came back
        return Assessment(conf, "candidate", "new evidence after dormancy", idle)
    if status == "candidate":
        why = _not_promotable(card, ev, conf, now)
        if why is None:
            return Assessment(conf, "accepted", "met the promotion bar", idle)
        return Assessment(conf, "candidate", why, idle)
    return Assessment(conf, status, "no change", idle)


def _not_promotable(card: dict, ev: Optional[Evidence], conf: float, now: float) -> Optional[str]:
    seen = card.get("observations")
    seen = int(seen) if isinstance(seen, (int, float)) and not isinstance(seen, bool) else 1
    if seen < PROMOTE_MIN_OBSERVATIONS:
        return f"{seen} observation(s) < {PROMOTE_MIN_OBSERVATIONS}"
    first, last = model.parse_ts(str(card.get("first_seen") or "")), \
        model.parse_ts(str(card.get("last_seen") or ""))
    span = (last - first) / DAY if first and last else 0.0
    if span < PROMOTE_MIN_DAYS:
        return f"seen over {span:.1f} day(s) < {PROMOTE_MIN_DAYS}"
    if conf < PROMOTE_MIN_CONFIDENCE:
        return f"confidence {conf} < {PROMOTE_MIN_CONFIDENCE}"
    if ev is not None and ev.last_violation and \
            now - model.parse_ts(ev.last_violation) < QUIET_DAYS * DAY:
        return f"violated within the last {QUIET_DAYS} days"
    if not _has_fix(card):
        return "no fix seen: a failure lesson without one waits for a person"
    return None
