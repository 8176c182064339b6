"""``report``: one self-contained HTML page about what the memory saw and learned.

Owns the numbers (``collect``: per-tool failure rates per day, lessons by status
and confidence, surfacings and their outcomes) and the page (``page``: inline
CSS and SVG, no script, no external URL). Every string that comes from the store
goes through ``html.escape``. Reads each store file once; absent files count as
empty. Observations are streamed (``recent_observations``, also used by
``feedback``): a line older than the window is skipped by its ``ts`` bytes,
unparsed, and only the fields asked for are kept. Must not import cli.
"""

import html
import os
import re
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from . import advice
from ..learning import lifecycle
from ..storage import model, outputs, store
from ..storage.text import document
from ..storage.errors import UsageError
from ..storage.memory import Memory

FILE = "report.html"    # default output, in the store folder (INDEX.md links it)
DEFAULT_DAYS = 30       # days of tool outcomes charted
MAX_DAYS = 366          # --days above this is refused
MAX_TOOLS = 12          # tools charted, most used first
MAX_LESSONS = 25        # lessons in the confidence and surfacing tables
BUCKETS = 10            # confidence histogram bins over [0, 1]
TITLE_CHARS = 90        # titles are cut to this many characters in tables
COLORS = {"fail": "#d9534f", "ok": "#5cb85c", "none": "#bbb", "bar": "#4a7bd0"}
CSS = ("body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222}"
       "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .6em;"
       "border-bottom:1px solid #ddd;text-align:left;vertical-align:middle}"
       "th{background:#f4f4f4}svg{display:block}"
       ".key span{display:inline-block;width:.8em;height:.8em;margin:0 .3em 0 1em}")
OBS_FIELDS = ("ts", "outcome", "tool", "tool_kind")  # what the tool chart reads of an observation
_TS = re.compile(rb'"ts": ?"([^"\\]*)"')  # an observation's own stamp (the hook writes it first)


def _esc(value) -> str:
    return html.escape(str(value if value is not None else ""), quote=True)


def _cut(text, limit: int = TITLE_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


# --- numbers ---------------------------------------------------------------------------------

def recent_observations(memory: Memory, first_day: str,
                        fields: Sequence[str]) -> Iterator[dict]:
    """Observations stamped on or after ``first_day`` (UTC ``YYYY-MM-DD``), one line at a time.

    ISO stamps order as strings, so a line whose raw ``"ts"`` is before the window
    is skipped without parsing; a line without a readable stamp is parsed and kept
    unless its ``ts`` is older. Only ``fields`` of each record are kept. Bad lines
    in the window become warnings, as ``Memory.load`` reports them.
    """
    first = first_day.encode("ascii")
    path, check = memory.path("observations"), model.LineCheck("observations")
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        for number, raw in enumerate(fh, 1):
            stamp = _TS.search(raw)
            if (stamp is not None and stamp.group(1)[:10] < first) or not raw.strip():
                continue
            record, reason = store.parse_line(raw, not raw.endswith(b"\n"))
            reason = reason or model.streamed(check, record, f"{path}:{number}")
            if reason:
                memory.warn("observations", number, reason)
            elif str(record.get("ts") or "")[:10] >= first_day:
                yield {k: record[k] for k in fields if k in record}


def _days(days: int, now: float) -> List[str]:
    return [model.iso(now - (days - 1 - i) * lifecycle.DAY)[:10] for i in range(days)]


def tool_rates(observations: Iterable[dict], days: Sequence[str]) -> List[dict]:
    """Per tool (most used first): calls and failures per day within ``days``."""
    index = {d: i for i, d in enumerate(days)}
    tools: Dict[str, dict] = {}
    for obs in observations:
        outcome, day = obs.get("outcome"), str(obs.get("ts") or "")[:10]
        if outcome not in ("success", "failure") or day not in index:
            continue
        name = str(obs.get("tool") or obs.get("tool_kind") or "?")
        row = tools.get(name)
        if row is None:
            row = tools[name] = {"tool": name, "calls": 0, "failures": 0,
                                 "daily": [[0, 0] for _ in days]}
        slot = row["daily"][index[day]]
        slot[0] += 1
        row["calls"] += 1
        if outcome == "failure":
            slot[1] += 1
            row["failures"] += 1
    out = sorted(tools.values(), key=lambda r: (-r["calls"], r["tool"]))
    for row in out:
        row["rate"] = round(row["failures"] / row["calls"], 3)
    return out


def lessons(cards: Dict[str, dict], signals: List[dict], surfacings: List[dict],
            now: float) -> dict:
    """Cards by status, confidence now, and per lesson: surfaced, helped, violated."""
    ev = lifecycle.evidence(signals)
    surfaced: Dict[str, int] = {}
    for s in surfacings:
        ids = s.get("lesson_ids")
        for rid in dict.fromkeys(ids if isinstance(ids, list) else []):
            if isinstance(rid, str):
                surfaced[rid] = surfaced.get(rid, 0) + 1
    by_status: Dict[str, int] = {}
    rows = []
    for card in cards.values():
        status = str(card.get("status") or "proposed")
        by_status[status] = by_status.get(status, 0) + 1
        e = ev.get(card["id"])
        rows.append({"id": card["id"], "title": _cut(card.get("title")), "status": status,
                     "origin": str(card.get("origin") or "agent"),
                     "confidence": lifecycle.confidence(card, e, now),
                     "surfaced": surfaced.get(card["id"], 0),
                     "helped": e.helped if e else 0, "violated": e.violated if e else 0})
    live = [r for r in rows if r["status"] not in model.HIDDEN_STATUSES]
    histogram = [0] * BUCKETS
    for r in live:
        histogram[min(BUCKETS - 1, int(r["confidence"] * BUCKETS))] += 1
    order = [s for s in model.CARD_STATUSES if s in by_status] + \
        sorted(s for s in by_status if s not in model.CARD_STATUSES)
    return {"by_status": [[s, by_status[s]] for s in order], "histogram": histogram,
            "rows": sorted(rows, key=lambda r: (-r["confidence"], r["id"])),
            "surfacings": len(surfacings),
            "sessions": len({s.get("session_id") for s in surfacings if s.get("session_id")})}


def collect(memory: Memory, days: int = DEFAULT_DAYS) -> dict:
    """Every number the page shows, as data (also the JSON output)."""
    now = model.now()
    span = _days(days, now)
    tools = tool_rates(recent_observations(memory, span[0], OBS_FIELDS), span)
    learned = lessons(memory.folded("cards"), advice.evidence_signals(memory),
                      memory.load("surfacings"), now)
    calls, failures = sum(t["calls"] for t in tools), sum(t["failures"] for t in tools)
    rows = learned["rows"]
    return {"generated": model.iso(now), "days": span, "tools": tools, **learned,
            "summary": {"tool_calls": calls, "failures": failures,
                        "failure_rate": round(failures / calls, 3) if calls else 0.0,
                        "lessons": len(rows),
                        "accepted": sum(1 for r in rows if r["status"] == "accepted"),
                        "surfacings": learned["surfacings"],
                        "helped": sum(r["helped"] for r in rows),
                        "violated": sum(r["violated"] for r in rows)}}


# --- SVG -------------------------------------------------------------------------------------

def _svg(width: int, height: int, body: List[str], label: str) -> str:
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{_esc(label)}">' + "".join(body) + "</svg>")


def _rect(x: float, y: float, w: float, h: float, color: str, tip: str) -> str:
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}">'
            f"<title>{_esc(tip)}</title></rect>")


def daily_bars(tool: dict, days: Sequence[str], height: int = 28, step: int = 6) -> str:
    """A failure-rate bar per day; a grey tick on days without calls."""
    body = []
    for i, (day, (calls, failed)) in enumerate(zip(days, tool["daily"])):
        if not calls:
            body.append(_rect(i * step, height - 1, step - 1, 1, COLORS["none"],
                              f"{day}: no calls"))
            continue
        h = max(1.0, height * failed / calls)
        body.append(_rect(i * step, height - h, step - 1, h, COLORS["fail" if failed else "ok"],
                          f"{day}: {failed}/{calls} failed ({100 * failed / calls:.0f}%)"))
    return _svg(len(days) * step, height, body, f"daily failure rate of {tool['tool']}")


def hbars(rows: List[Tuple[str, List[Tuple[int, str, str]]]], width: int = 360,
          bar: int = 16) -> str:
    """Horizontal bars, one per row, each a stack of ``(value, color, tooltip)``."""
    top = max([sum(v for v, _, _ in parts) for _, parts in rows] + [1])
    body, label_w = [], 150
    for n, (label, parts) in enumerate(rows):
        y = n * (bar + 4)
        body.append(f'<text x="0" y="{y + bar - 4}" font-size="12">{_esc(_cut(label, 22))}'
                    "</text>")
        x = float(label_w)
        for value, color, tip in parts:
            w = (width - label_w - 40) * value / top
            if value:
                body.append(_rect(x, y, w, bar, color, tip))
            x += w
        total = sum(v for v, _, _ in parts)
        body.append(f'<text x="{x + 4:.1f}" y="{y + bar - 4}" font-size="12">{total}</text>')
    return _svg(width, max(1, len(rows)) * (bar + 4), body, "bar chart")


def histogram(counts: List[int], width: int = 360, height: int = 100) -> str:
    top, step = max(counts + [1]), width / len(counts)
    body = []
    for i, n in enumerate(counts):
        h = (height - 14) * n / top
        low, high = i / len(counts), (i + 1) / len(counts)
        body.append(_rect(i * step + 1, height - 14 - h, step - 2, h, COLORS["bar"],
                          f"confidence {low:.1f}-{high:.1f}: {n} lessons"))
        body.append(f'<text x="{i * step + 2:.1f}" y="{height - 2}" font-size="10">'
                    f"{low:.1f}</text>")
    return _svg(width, height, body, "lessons by confidence")


# --- the page --------------------------------------------------------------------------------

def _table(head: Sequence[str], rows: List[Sequence[str]]) -> str:
    """A table; cells are HTML already escaped by the caller."""
    out = ["<table><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "".join(out) + "</table>"


def _key(*pairs: Tuple[str, str]) -> str:
    return '<p class="key">' + "".join(f'<span style="background:{c}"></span>{_esc(t)}'
                                       for c, t in pairs) + "</p>"


def page(data: dict, user: str = "") -> str:
    s, days = data["summary"], data["days"]
    parts = [f"<h1>Self-learning report{': ' + _esc(user) if user else ''}</h1>",
             f"<p>Generated {_esc(data['generated'])} for {_esc(days[0])} to {_esc(days[-1])} "
             f"(UTC). {s['tool_calls']} tool calls, {s['failures']} failed "
             f"({100 * s['failure_rate']:.1f}%); {s['lessons']} lessons, {s['accepted']} "
             f"accepted; {s['surfacings']} surfacings, {s['helped']} helped, "
             f"{s['violated']} violated.</p>", "<h2>Tool failure rate per day</h2>"]
    tools = data["tools"][:MAX_TOOLS]
    if tools:
        parts.append(_key((COLORS["fail"], "share of calls that failed"),
                          (COLORS["ok"], "none failed"), (COLORS["none"], "no calls")))
        head = ("tool", "calls", "failed", "rate", f"per day, {days[0]} to {days[-1]}")
        parts.append(_table(head,
                            [(_esc(t["tool"]), str(t["calls"]), str(t["failures"]),
                              f"{100 * t['rate']:.1f}%", daily_bars(t, days)) for t in tools]))
        if len(data["tools"]) > MAX_TOOLS:
            parts.append(f"<p>{len(data['tools']) - MAX_TOOLS} less used tools not shown.</p>")
    else:
        parts.append("<p>No tool outcomes observed in this period.</p>")
    parts += ["<h2>Lessons by status</h2>",
              hbars([(st, [(n, COLORS["bar"], f"{st}: {n}")]) for st, n in data["by_status"]])
              if data["by_status"] else "<p>No lessons yet.</p>",
              "<h2>Lessons by confidence</h2>",
              "<p>Live lessons (not rejected, deprecated or retired), confidence now.</p>",
              histogram(data["histogram"])]
    parts += _surfacing_section(data["rows"]) + _lesson_table(data["rows"])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"{outputs.HTML_MARKER}<title>Self-learning report</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def _surfacing_section(rows: List[dict]) -> List[str]:
    shown = sorted((r for r in rows if r["surfaced"] or r["helped"] or r["violated"]),
                   key=lambda r: (-r["surfaced"], r["id"]))[:MAX_LESSONS]
    out = ["<h2>What was surfaced, and whether it helped</h2>"]
    if not shown:
        return out + ["<p>No lesson has been surfaced yet.</p>"]
    bars = [(r["title"], [(r["helped"], COLORS["ok"], f"helped {r['helped']}"),
                          (r["violated"], COLORS["fail"], f"violated {r['violated']}"),
                          (max(0, r["surfaced"] - r["helped"] - r["violated"]), COLORS["none"],
                           "no outcome yet")]) for r in shown]
    return out + [_key((COLORS["ok"], "helped (pattern did not recur)"),
                       (COLORS["fail"], "violated (it recurred)"),
                       (COLORS["none"], "surfaced, no outcome")), hbars(bars, width=560)]


def _lesson_table(rows: List[dict]) -> List[str]:
    live = [r for r in rows if r["status"] not in model.HIDDEN_STATUSES][:MAX_LESSONS]
    if not live:
        return []
    return ["<h2>Most trusted lessons</h2>", _table(
        ("confidence", "status", "origin", "title", "surfaced", "helped", "violated", "id"),
        [(f"{r['confidence']:.2f}", _esc(r["status"]), _esc(r["origin"]), _esc(r["title"]),
          str(r["surfaced"]), str(r["helped"]), str(r["violated"]), f"<code>{_esc(r['id'])}</code>")
         for r in live])]


# a page of ours: the marker, or the title pages had before the marker existed
OWN_PAGE = (outputs.HTML_MARKER, "<meta charset=\"utf-8\"><title>Self-learning report</title>")


def _target(memory: Memory, out: Optional[str], repo_root: str) -> str:
    """Where the page goes: ``out`` must name a file in a folder that exists.

    Folders are created only inside the store (the default), never elsewhere on disk.
    """
    if out is None:
        return os.path.join(memory.root, FILE)
    if not out.strip():
        raise UsageError("report: --html needs a file name; leave it out for "
                         f"<store>/{FILE}")
    target = os.path.abspath(out)
    if os.path.isdir(target):
        raise UsageError(f"report: --html {out} is a folder; give a file name")
    target = outputs.claim(out, repo_root, "report: --html", OWN_PAGE)
    folder = os.path.dirname(target)
    inside = os.path.commonpath([os.path.abspath(memory.root), target]) == \
        os.path.abspath(memory.root)
    if not inside and not os.path.isdir(folder):
        raise UsageError(f"report: --html {out}: folder {folder} does not exist; create it "
                         "first")
    return target


def report(memory: Memory, out: Optional[str] = None, days: int = DEFAULT_DAYS,
           user: str = "", repo_root: str = "") -> dict:
    """Collect, render, write the page; returns the numbers and where it went."""
    if not 1 <= days <= MAX_DAYS:
        raise UsageError(f"report: --days must be between 1 and {MAX_DAYS}, got {days}")
    target = _target(memory, out, repo_root or os.path.dirname(memory.root))
    data = collect(memory, days)
    store.atomic_write(target, document(page(data, user)))
    data["path"] = target
    return data


def render(data: dict) -> List[str]:
    s = data["summary"]
    return [f"wrote {data['path']}",
            f"tool calls: {s['tool_calls']} in {len(data['days'])} days, {s['failures']} failed "
            f"({100 * s['failure_rate']:.1f}%)",
            f"lessons: {s['lessons']}" + "".join(f", {n} {st}" for st, n in data["by_status"])
            + f"; surfacings: {s['surfacings']}, helped {s['helped']}, violated {s['violated']}"]
