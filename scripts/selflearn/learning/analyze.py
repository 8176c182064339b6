"""``analyze``: how well each tool and command family went over the last days.

Owns: one streaming pass over observations.jsonl (window by ``ts`` against
``model.now()``), the outcome classes of a finished tool call (ok, failed,
denied, and the recoverable/environmental ones kept out of the success rate),
self-corrections of edits, the opportunities (enough calls, low success) and
their suppression by a ``fix`` commit in the window made after their last
failure (git is optional), and the provider's errors (``stop_failure``: the
model's service failed, not a tool), counted apart.
Reads only; never writes. Constants: references/GUIDANCE.md. Must not import cli.
"""

import os
import re
import subprocess
from typing import Dict, List, Optional, Tuple

from ..storage import model
from . import fingerprint, mine_base, stream
from ..storage.errors import UsageError

DEFAULT_DAYS = 7            # the window when --days is not given
MAX_DAYS = 3650             # a longer window is a typo, not an analysis
MIN_EVENTS = 5              # an opportunity needs this many calls in the rate (ok + failed)
MIN_RATE = 0.80             # ... and a success rate strictly below this
TOP_FAILURES = 3            # failure classes (normalized error lines) shown per row
MIN_CORRECTION_CHARS = 8    # a shorter edit_old is too generic to count as a self-correction
GIT_TIMEOUT = 10            # seconds `git log` may take before suppression is skipped
# Outcome classes kept out of the rate's denominator (recoverable or environmental):
ENV_CLASSES = ("interrupted", "stale_read", "timeout")
INTERRUPT_EXIT_CODES = mine_base.IGNORED_EXIT_CODES   # SIGINT, SIGKILL, SIGTERM
INTERRUPT_MARKERS = ("interrupted by user", "request interrupted", "keyboardinterrupt",
                     "operation was aborted")
STALE_MARKERS = ("has not been read yet", "modified since read")  # read-before-edit protocol
TIMEOUT_EXIT_CODES = (124,)                                       # timeout(1)
TIMEOUT_MARKERS = ("timed out",)
# The agent's permission system said no: a denial, never a failure of the tool.
DENIAL_MARKERS = ("user doesn't want to proceed", "user declined", "rejected by user",
                  "has been denied", "permission denied by user", "denied by the user")
FIX_WORD = re.compile(r"\bfix(?:e[sd])?\b", re.I)  # a commit naming what it fixed
WANTED = (b"tool_success", b"tool_failure", b"permission_denied", b"stop_failure")  # pre-filter


def outcome(obs: dict) -> Optional[str]:
    """``ok``, ``failed``, ``denied``, one of ``ENV_CLASSES``, or None (not a finished call)."""
    event = obs.get("event")
    if event == "permission_denied":
        return "denied"
    if event not in ("tool_success", "tool_failure"):
        return None
    error = str(obs.get("error") or "").lower()
    code = obs.get("exit_code")
    if event == "tool_failure" and any(m in error for m in DENIAL_MARKERS):
        return "denied"
    if obs.get("interrupted") is True or (event == "tool_failure" and (
            code in INTERRUPT_EXIT_CODES or any(m in error for m in INTERRUPT_MARKERS))):
        return "interrupted"
    if event == "tool_success":
        return "ok"
    if any(m in error for m in STALE_MARKERS):
        return "stale_read"
    if code in TIMEOUT_EXIT_CODES or any(m in error for m in TIMEOUT_MARKERS):
        return "timeout"
    return "failed"


class Row:
    """Counts for one tool (or shell/MCP command family)."""

    def __init__(self, name: str, tool: str, kind: str):
        self.name, self.tool, self.kind = name, tool, kind
        self.counts = dict.fromkeys(("ok", "failed", "denied") + ENV_CLASSES, 0)
        self.failures: Dict[str, int] = {}
        self.self_corrections = self.recorded_corrections = 0
        self.last_failure = ""

    def add(self, obs: dict, cls: str) -> None:
        self.counts[cls] += 1
        if cls == "failed":
            self.last_failure = max(self.last_failure, str(obs.get("ts") or ""))
            line = fingerprint.normalize(fingerprint.key_line(str(obs.get("error") or "")))
            line = line[:120] or f"exit code {obs.get('exit_code', '?')}"
            self.failures[line] = self.failures.get(line, 0) + 1

    def data(self) -> dict:
        c = self.counts
        attempts = c["ok"] + c["failed"]
        env = {k: c[k] for k in ENV_CLASSES}
        top = sorted(self.failures.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FAILURES]
        return {"name": self.name, "tool": self.tool, "kind": self.kind,
                "calls": sum(c.values()), "ok": c["ok"], "failed": c["failed"],
                "env": env, "env_total": sum(env.values()), "denied": c["denied"],
                "rate": round(c["ok"] / attempts, 3) if attempts else None,
                "corrections": self.self_corrections + self.recorded_corrections,
                "self_corrections": self.self_corrections,
                "recorded_corrections": self.recorded_corrections,
                "last_failure": self.last_failure or None,
                "failure_classes": [{"error": e, "count": n} for e, n in top]}


class _Edits:
    """Per session and file, what earlier edits wrote; a later edit replacing it is a correction."""

    def __init__(self):
        self.written: Dict[Tuple[str, str], List[str]] = {}

    def corrects(self, obs: dict) -> bool:
        """Record this edit; True when its old text is what an earlier edit wrote."""
        where = (str(obs.get("session_id") or ""), str(obs.get("file") or obs.get("args") or ""))
        old, new = _plain(obs.get("edit_old")), _plain(obs.get("edit_new"))
        seen = self.written.setdefault(where, [])
        hit = len(old) >= MIN_CORRECTION_CHARS and any(old in earlier for earlier in seen)
        if new:
            seen.append(new)
        return hit


def _plain(text) -> str:
    """An edit text without the ellipsis the hook adds when it cut it."""
    return str(text or "").rstrip("\u2026").strip() if isinstance(text, str) else ""


def check_days(days) -> int:
    if days is None:
        return DEFAULT_DAYS
    if not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise UsageError(f"analyze: --days must be a whole number from 1 to {MAX_DAYS}, "
                         f"got {days!r}; e.g. --days 7")
    return days


def analyze(memory, repo_root: str, days: Optional[int] = None) -> dict:
    """Rows per tool/family, opportunities and the ones a fix commit suppressed."""
    days = check_days(days)
    until = model.now()
    since_iso, until_iso = model.iso(until - days * 86400), model.iso(until)
    path = memory.path("observations")
    rows: Dict[str, Row] = {}
    data = {"days": days, "since": since_iso, "until": until_iso, "observations": path,
            "read": 0, "counted": 0, "warnings": [], "provider_errors": {"count": 0,
                                                                        "reasons": []}}
    if os.path.exists(path):
        _scan(path, since_iso, until_iso, rows, data)
    _recorded_corrections(memory, since_iso, until_iso, rows)
    data["rows"] = sorted((r.data() for r in rows.values()), key=lambda r: (-r["calls"], r["name"]))
    found = [_opportunity(r, days) for r in data["rows"] if _is_opportunity(r)]
    commits, data["git"] = fix_commits(repo_root, since_iso, until_iso)
    data["opportunities"], data["suppressed"] = [], []
    for opp in found:
        commit, before = _suppressing(commits, opp)
        if commit:
            opp["suppressed_by"] = commit
            data["suppressed"].append(opp)
        else:
            opp["failed_after"] = before
            data["opportunities"].append(opp)
    return data


def _scan(path: str, since_iso: str, until_iso: str, rows: Dict[str, Row], data: dict) -> None:
    """One pass over the file; only the window's finished tool calls are kept, as counts."""
    edits = _Edits()
    provider: Dict[str, list] = {}

    def in_window(obs: dict) -> bool:
        return since_iso <= str(obs.get("ts", ""))[:19] + "Z" <= until_iso

    with open(path, "rb") as fh:
        lines = stream.Stream(fh, data["warnings"])
        for raw in lines:
            if not any(w in raw for w in WANTED):
                continue
            obs = lines.parse(raw, keep=in_window)
            if obs is None:
                continue
            if obs.get("event") == "stop_failure":
                _provider_error(provider, obs)
                continue
            cls = outcome(obs)
            if cls is None or not (obs.get("family") or obs.get("tool")):
                continue
            row = _row(rows, obs)
            row.add(obs, cls)
            data["counted"] += 1
            if cls == "ok" and (obs.get("edit_old") or obs.get("edit_new")) \
                    and edits.corrects(obs):
                row.self_corrections += 1
        data["read"] += lines.read
    ranked = sorted(provider.items(), key=lambda kv: (-kv[1][0], kv[0]))
    data["provider_errors"] = {"count": sum(n for n, _ in provider.values()), "reasons": [
        {"reason": reason, "count": n, "error": error} for reason, (n, error) in ranked]}


def _provider_error(provider: Dict[str, list], obs: dict) -> None:
    """Count a failure of the model's service by its reason; keep its first error line."""
    reason = mine_base.cut(obs.get("reason") or "unknown", 60)
    entry = provider.setdefault(reason, [0, mine_base.cut(
        fingerprint.key_line(str(obs.get("error") or "")), 160)])
    entry[0] += 1


def _row(rows: Dict[str, Row], record: dict) -> Row:
    name = fingerprint.command_word(record)
    if name not in rows:
        rows[name] = Row(name, str(record.get("tool") or ""), str(record.get("tool_kind") or ""))
    return rows[name]


def _recorded_corrections(memory, since_iso: str, until_iso: str, rows: Dict[str, Row]) -> None:
    """Corrections from corrections.jsonl (absent until something records them)."""
    for record in memory.load("corrections"):
        ts = str(record.get("ts", ""))[:19] + "Z"
        if since_iso <= ts <= until_iso and (record.get("family") or record.get("tool")):
            _row(rows, record).recorded_corrections += 1


def _is_opportunity(row: dict) -> bool:
    attempts = row["ok"] + row["failed"]
    return attempts >= MIN_EVENTS and row["ok"] < MIN_RATE * attempts


def _opportunity(row: dict, days: int) -> dict:
    attempts = row["ok"] + row["failed"]
    reason = (f"{row['ok']} of {attempts} calls succeeded ({row['rate']:.0%} < {MIN_RATE:.0%}) "
              f"in the last {days} day(s)")
    if row["failure_classes"]:
        top = row["failure_classes"][0]
        reason += f"; most frequent failure: {top['error']} ({top['count']}x)"
    return {"name": row["name"], "tool": row["tool"], "kind": row["kind"], "calls": row["calls"],
            "attempts": attempts, "rate": row["rate"], "reason": reason,
            "last_failure": row["last_failure"]}


def fix_commits(repo_root: str, since_iso: str, until_iso: str) -> Tuple[List[dict], str]:
    """Commits in the window whose message says fix/fixed/fixes, and how git went.

    Not a git repository, no git, or git too slow: no commits, and the status says why.
    """
    cmd = ["git", "-C", repo_root, "log", f"--since={since_iso}", f"--until={until_iso}",
           "--format=%h%x1f%ct%x1f%s%x1f%b%x1e"]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"skipped ({type(exc).__name__})"
    if done.returncode != 0:
        return [], "skipped (not a git repository or no commits)"
    commits = []
    for entry in done.stdout.decode("utf-8", "replace").split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) == 4 and parts[1].isdigit() and FIX_WORD.search(parts[2] + "\n" + parts[3]):
            commits.append({"sha": parts[0], "time": int(parts[1]), "subject": parts[2],
                            "message": (parts[2] + "\n" + parts[3]).lower()})
    return commits, "checked"


def _suppressing(commits: List[dict], opp: dict) -> Tuple[Optional[dict], Optional[dict]]:
    """``(suppressing, earlier)``: the newest fix commit naming the opportunity's family or
    tool as a whole word and committed after its last failure (the failures it hides came
    before it), else the newest such commit the failures came after (it fixed nothing)."""
    names = {opp["name"].lower()} | ({opp["tool"].lower()} if opp["tool"] and
                                     opp["name"] == opp["tool"] else set())
    last = model.parse_ts(opp["last_failure"] or "")
    earlier = None
    for commit in commits:
        if any(re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", commit["message"])
               for name in names):
            named = {"sha": commit["sha"], "subject": commit["subject"]}
            if commit["time"] >= last:
                return named, None
            earlier = earlier or named
    return None, earlier


# --- rendering --------------------------------------------------------------------------------

def render(data: dict) -> List[str]:
    """A table per tool/family, then opportunities with their reasons, then suppressed ones."""
    lines = [f"analyze: {data['counted']} finished tool call(s) from {data['since']} to "
             f"{data['until']} ({data['days']} day(s))"]
    errors = data["provider_errors"]
    provider = [f"provider errors (the model's service, not a tool): {errors['count']} ("
                + ", ".join(f"{r['reason']} {r['count']}x" for r in errors["reasons"]) + ")"
                ] if errors["count"] else []
    if not data["rows"]:
        return lines + [f"no tool calls in the window ({data['observations']})"] + provider
    width = max(len("tool/family"), *(len(r["name"]) for r in data["rows"]))
    width = min(width, 40)
    head = ("calls", "ok", "failed", "env", "denied", "rate", "corrections")
    sizes = [max(6, len(h)) for h in head]
    lines.append(f"{'tool/family':<{width}}  "
                 + "  ".join(f"{h:>{n}}" for h, n in zip(head, sizes)))
    for r in data["rows"]:
        rate = "-" if r["rate"] is None else f"{r['rate']:.0%}"
        cells = (r["calls"], r["ok"], r["failed"], r["env_total"], r["denied"], rate,
                 r["corrections"])
        lines.append(f"{mine_base.cut(r['name'], width):<{width}}  "
                     + "  ".join(f"{c!s:>{n}}" for c, n in zip(cells, sizes)))
    lines.append("env: interrupted, stale read or timed out; kept out of the rate "
                 "(rate = ok / (ok + failed))")
    lines.append("opportunities:" if data["opportunities"] else
                 f"no opportunities (none with >= {MIN_EVENTS} calls and < {MIN_RATE:.0%} success)")
    lines += [f"- {o['name']}: {o['reason']}" + (
        f"; it failed again after fix commit {o['failed_after']['sha']} "
        f"\"{o['failed_after']['subject']}\"" if o.get("failed_after") else "")
        for o in data["opportunities"]]
    lines += [f"- suppressed {o['name']}: fixed by commit {o['suppressed_by']['sha']} "
              f"\"{o['suppressed_by']['subject']}\"" for o in data["suppressed"]]
    return lines + provider
