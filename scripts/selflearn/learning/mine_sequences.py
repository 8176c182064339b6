"""Miner ``sequences`` ("basal ganglia"): habits worth a skill, from tool sequences.

Per session it keeps the chain of commands that succeeded (shell families, MCP
tools, web and task calls; glue such as ``ls`` or ``git status`` left out,
repeats collapsed) and the long raw shell commands it ran. When a session
closes, each ordered trigram of its chain is counted under its order-normalized
multiset key (tools only, never the prompt), and each long command under its
own key, with the session's verdict; a failed session also counts against the
workflows it ran up to a step that failed. A pattern that succeeded in
``MIN_SESSIONS`` sessions within any ``WINDOW_HOURS`` and whose quality
(successes - 2 x failures, over every session remembered) is positive becomes a
``proposal`` finding for the inbox (``proposals.offer``); a pattern below that
bar is still reported when its evidence changed, so a pending proposal shows
its later failures. Constants: references/PROPOSALS.md.
Must not import cli or mine.
"""

import hashlib
from typing import Dict, List, Optional

from ..storage import model
from .mine_base import Run, Setup, cut, ignored

KIND = "sequences"

WINDOW_HOURS = 72           # a habit: MIN_SESSIONS successes within any window this long
MIN_SESSIONS = 3            # distinct successful sessions in one window before a proposal
FAILURE_WEIGHT = 2          # quality = successes - FAILURE_WEIGHT x failures; must be > 0
CANDIDATE_SESSIONS = 2      # suggest-skills lists patterns from this many sessions (below the bar)
SESSION_IDLE_HOURS = 2      # a session without session_end closes after this long idle
LONG_COMMAND = 40           # characters a raw shell command needs to count as "long"
MAX_CHAIN = 200             # steps kept per open session (the latest ones)
MAX_OPEN = 500              # open sessions kept; beyond it the least recent are closed
MAX_PATTERNS = 2000         # patterns kept; beyond it the least recent are dropped to 90%
MAX_PER_PATTERN = 50        # sessions remembered per pattern (the latest ones)
MAX_EVIDENCE = 5            # sessions cited in a proposal's evidence (and kept with a prompt)
MAX_FILES = 5               # files remembered per session (evidence for when-to-use)
CUT_PROMPT, CUT_ARGS = 120, 160  # characters of prompt and command kept as evidence
# Commands that only look around or move files: in every session, so never a habit.
GLUE = frozenset((
    "ls", "cat", "head", "tail", "grep", "rg", "ag", "find", "fd", "echo", "printf", "pwd", "cd",
    "sed", "awk", "wc", "sort", "uniq", "cut", "tr", "which", "type", "true", "false", "test",
    "[", "mkdir", "cp", "mv", "rm", "touch", "ln", "chmod", "diff", "less", "more", "tree",
    "file", "stat", "du", "df", "env", "date", "sleep", "xargs", "tee", "clear", "history",
    "git status", "git diff", "git log", "git show", "git branch", "git rev-parse", "git remote",
))
_EVENTS = (b"tool_success", b"tool_failure", b"session_end", b"stop_failure",
           b'"event": "prompt"', b'"event":"prompt"')
HOUR = 3600.0


def token(obs: dict) -> Optional[str]:
    """The step an observation names in a chain, or None (file tools, glue, unknown)."""
    kind = obs.get("tool_kind")
    if kind == "shell":
        family = " ".join(str(obs.get("family") or "").split())
        if not family or family in GLUE or family.split()[0] in GLUE:
            return None
        return family
    if kind == "mcp":
        return "mcp:" + str(obs.get("family") or obs.get("tool") or "?")
    if kind in ("web", "task"):
        return kind
    return None


def long_command(obs: dict) -> Optional[str]:
    """A shell command long enough to be worth a name, whitespace-normalized; None when
    short, glue, or cut by the hook (a cut command cannot be replayed)."""
    if obs.get("tool_kind") != "shell" or "args" in (obs.get("hash") or {}):
        return None
    text = " ".join(str(obs.get("args") or "").split())
    if len(text) < LONG_COMMAND or text.endswith("\u2026") or token(obs) is None:
        return None
    return text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def miner(agg: dict, setup: Setup) -> Run:
    """Sessions open until session_end (or idle); closed sessions feed the patterns.

    ``agg`` (saved in the checkpoint) holds ``open`` sessions, ``patterns`` by key
    and ``latest``, the newest observation time seen (idle sessions close against it).
    """
    opened: Dict[str, dict] = agg.setdefault("open", {})
    changed: set = set()

    def wants(raw: bytes) -> bool:
        return any(marker in raw for marker in _EVENTS)

    def feed(obs: dict) -> None:
        event, sid = obs.get("event"), str(obs.get("session_id") or "")
        ts = str(obs.get("ts") or "")
        if not sid or event not in ("tool_success", "tool_failure", "session_end",
                                    "stop_failure", "prompt"):
            return
        agg["latest"] = max(agg.get("latest", ""), ts)
        if event == "session_end":
            if sid in opened:
                changed.update(close(agg, sid))
            return
        if event == "tool_failure" and ignored(obs):
            return
        s = opened.pop(sid, None) or {"chain": [], "tried": [], "ex": {}, "bad": [],
                                      "stopfail": False, "first": ts, "prompt": "",
                                      "files": [], "cmds": {}}
        opened[sid] = s  # re-inserted last: the dict stays least-recent first
        s["last"] = ts
        if event == "prompt":
            s["prompt"] = s["prompt"] or cut(obs.get("prompt"), CUT_PROMPT)
        elif event == "stop_failure":
            s["stopfail"] = True
        else:
            _step(s, obs, event == "tool_success")
        while len(opened) > MAX_OPEN:
            changed.update(close(agg, next(iter(opened))))

    def lessons() -> List[dict]:
        changed.update(settle(agg, model.now()))
        _bound(agg)
        return findings(agg, MIN_SESSIONS, changed)

    return Run(wants, feed, lessons)


def _step(s: dict, obs: dict, ok: bool) -> None:
    """One tool event of an open session: chain (of successes), tried (every step, to
    judge a failed session), unrecovered failures, files, commands."""
    tok = token(obs)
    tried = s.setdefault("tried", [])
    if tok and (not tried or tried[-1] != tok):
        tried.append(tok)
        del tried[:-MAX_CHAIN]
    step = tok or f"{obs.get('tool_kind') or 'other'}:{obs.get('tool') or '?'}"
    if ok:
        if step in s["bad"]:
            s["bad"].remove(step)
    elif step not in s["bad"]:
        s["bad"].append(step)
    path = str(obs.get("file") or "")
    if path and path not in s["files"] and len(s["files"]) < MAX_FILES:
        s["files"].append(cut(path, CUT_ARGS))
    command = long_command(obs)
    if command:
        s["cmds"][command] = [ok, obs.get("id", "?")]
    if ok and tok:
        s["ex"][tok] = cut(obs.get("args") or tok, CUT_ARGS)
        if not s["chain"] or s["chain"][-1][0] != tok:
            s["chain"].append([tok, obs.get("id", "?")])
            del s["chain"][:-MAX_CHAIN]


def settle(agg: dict, now: float) -> List[str]:
    """Close sessions idle for SESSION_IDLE_HOURS (against the later of now and the
    newest observation); returns the pattern keys they touched."""
    horizon = max(now, model.parse_ts(agg.get("latest", "")))
    idle = model.iso(horizon - SESSION_IDLE_HOURS * HOUR)
    touched: List[str] = []
    for sid in [sid for sid, s in agg.get("open", {}).items() if s.get("last", "") < idle]:
        touched += close(agg, sid)
    return touched


def close(agg: dict, sid: str) -> List[str]:
    """Judge a session and count its trigrams and long commands; returns the keys touched.

    A session succeeded when it saw no ``stop_failure`` and every step that failed
    succeeded again later (no unrecovered failure at its end). A failed session counts
    against the trigrams of every step it tried, and against each workflow it followed
    up to one of its own steps that failed (``_begun``).
    """
    s = agg["open"].pop(sid)
    ok = not s["stopfail"] and not s["bad"]
    patterns = agg.setdefault("patterns", {})
    touched = []
    chain = s["chain"] if ok else [[t, "?"] for t in s.get("tried", [t for t, _ in s["chain"]])]
    seen: set = set()
    for i in range(len(chain) - 2):
        steps = [step for step, _ in chain[i:i + 3]]  # >= 2 distinct: repeats collapsed
        key = "mined:sequence:" + digest("+".join(sorted(steps)))
        if key in seen:
            continue
        seen.add(key)
        p = patterns.setdefault(key, {"kind": "skill", "orders": {}, "ex": {}, "ok": {},
                                      "bad": {}})
        if ok:
            p["orders"][" > ".join(steps)] = p["orders"].get(" > ".join(steps), 0) + 1
            p["ex"].update({t: s["ex"][t] for t in steps if t in s["ex"]})
        _count(p, sid, ok, [s["last"], chain[i][1], s["prompt"], s["files"]])
        touched.append(key)
    for key in ([] if ok else _begun(patterns, s)):
        if key not in seen:
            _count(patterns[key], sid, False, [s["last"]])
            touched.append(key)
    for command, (cmd_ok, oid) in s["cmds"].items():
        key = "mined:command:" + digest(command)
        p = patterns.setdefault(key, {"kind": "command", "command": command, "ok": {}, "bad": {}})
        _count(p, sid, cmd_ok, [s["last"], oid, s["prompt"], s["files"]])
        touched.append(key)
    return touched


def _begun(patterns: Dict[str, dict], s: dict) -> List[str]:
    """Skill patterns a failed session followed, in their usual order, up to a step of
    theirs that failed and stayed failed (``lint > test`` with the tests failing is a failed
    run of ``lint > test > commit``, though it never reached the commit)."""
    tried = s.get("tried") or []
    ends = {tuple(tried[j - n + 1:j + 1]) for j, step in enumerate(tried) if step in s["bad"]
            for n in (2, 3) if j - n + 1 >= 0}
    if not ends:
        return []
    return [key for key, p in patterns.items() if p["kind"] == "skill" and p["orders"]
            and any(tuple(_order(p)[:n]) in ends for n in (2, 3))]


def _count(p: dict, sid: str, ok: bool, entry: list) -> None:
    """Each session counts once per pattern: its latest verdict wins. Only the newest
    MAX_EVIDENCE successes keep their prompt and files (all their evidence needs)."""
    (p["bad"] if ok else p["ok"]).pop(sid, None)
    target = p["ok"] if ok else p["bad"]
    target.pop(sid, None)
    target[sid] = entry if ok else entry[0]
    p["last"] = max(p.get("last", ""), entry[0])
    for side in ("ok", "bad"):
        while len(p[side]) > MAX_PER_PATTERN:
            del p[side][next(iter(p[side]))]
    if ok and len(p["ok"]) > MAX_EVIDENCE:
        for old in sorted(p["ok"].values(), reverse=True)[MAX_EVIDENCE:]:
            old[2:] = ["", []]


def _bound(agg: dict) -> None:
    """Keep at most MAX_PATTERNS (the least recent go first). Sessions do not expire by age:
    any window may hold a habit, and history may be ingested after newer observations."""
    patterns = agg.get("patterns", {})
    if len(patterns) > MAX_PATTERNS:
        for _, key in sorted((p.get("last", ""), k) for k, p in patterns.items())[
                :len(patterns) - MAX_PATTERNS * 9 // 10]:
            del patterns[key]


def _busiest(stamps: List[str]) -> int:
    """The most of these session times that fall within one WINDOW_HOURS window."""
    times, best, start = sorted(model.parse_ts(t) for t in stamps), 0, 0
    for end, t in enumerate(times):
        while t - times[start] > WINDOW_HOURS * HOUR:
            start += 1
        best = max(best, end - start + 1)
    return best


def findings(agg: dict, minimum: int, changed=()) -> List[dict]:
    """Patterns with ``minimum`` successful sessions within one WINDOW_HOURS and a positive
    quality over all their sessions, best first; ``changed`` marks those whose evidence grew
    this run, and a changed pattern below the bar comes too, marked ``below`` (it may only
    update a pending proposal). Overlapping trigrams seen in the very same sessions are one
    longer chain."""
    rows, below = [], []
    for key, p in agg.get("patterns", {}).items():
        ok = sorted(((e[0], sid, e) for sid, e in p["ok"].items()), reverse=True)
        bad = sorted(((ts, sid) for sid, ts in p["bad"].items()), reverse=True)
        quality = len(ok) - FAILURE_WEIGHT * len(bad)
        row = {"keys": [key], "kind": p["kind"], "ok": ok, "bad": bad, "quality": quality,
               "ex": dict(p.get("ex") or {})}
        if quality > 0 and len(ok) >= minimum and _busiest([e[0] for e in ok]) >= minimum:
            rows.append(dict(row, steps=_order(p)))
        elif key in changed and ok and (p["kind"] == "command" or p["orders"]):
            below.append(dict(row, steps=_order(p), below=True))
    out = []
    for row in _stitch(rows) + below:
        proposal = _proposal(row)
        proposal["changed"] = any(k in changed for k in row["keys"])
        proposal["below"] = row.get("below", False)
        out.append({"kind": KIND, "fingerprint": proposal["pattern"], "sessions": len(row["ok"]),
                    "occurrences": len(row["ok"]) + len(row["bad"]), "proposal": proposal})
    out.sort(key=lambda f: (-f["proposal"]["quality"], -f["sessions"], f["proposal"]["key"]))
    return out


def _order(p: dict) -> List[str]:
    """A skill pattern's steps in the order most frequent in successful sessions (a
    pattern that qualifies has one); a command is one step."""
    if p["kind"] == "command":
        return [p["command"]]
    return max(sorted(p["orders"].items()), key=lambda kv: kv[1])[0].split(" > ")


def _stitch(rows: List[dict]) -> List[dict]:
    """Join skill rows with the same successful sessions whose steps overlap by two
    (a > b > c and b > c > d become a > b > c > d); the first row's key stays the key."""
    groups: Dict[tuple, List[dict]] = {}
    out = []
    for row in rows:
        if row["kind"] != "skill":
            out.append(row)
            continue
        groups.setdefault(tuple(sorted(sid for _, sid, _ in row["ok"])), []).append(row)
    for group in groups.values():
        group.sort(key=lambda r: r["keys"][0])
        merged = True
        while merged:
            merged = False
            for a in group:
                b = next((b for b in group if b is not a and a["steps"][-2:] == b["steps"][:2]),
                         None)
                if b is not None:
                    a["steps"] += b["steps"][2:]
                    a["keys"] += b["keys"]
                    a["ex"].update(b["ex"])
                    group.remove(b)
                    merged = True
                    break
        out += group
    return out


def _proposal(row: dict) -> dict:
    """What the inbox needs: steps in their dominant order, evidence, tags."""
    steps, ok, bad = row["steps"], row["ok"], row["bad"]
    if row["kind"] == "skill":
        order = " > ".join(steps)
        title = "Workflow: " + " \u2192 ".join(f"`{t}`" for t in steps)
    else:
        order = steps[0]
        title = f"Repeated command: `{cut(order, 80)}`"
    evidence = [f"succeeded {ts} in session {sid} ({e[1]})" + (f": prompt \"{e[2]}\"" if e[2] else "")
                for ts, sid, e in ok[:MAX_EVIDENCE]]
    evidence += [f"failed {ts} in session {sid}" for ts, sid in bad[:MAX_EVIDENCE]]
    prompts = list(dict.fromkeys(e[2] for _, _, e in ok if e[2]))[:MAX_EVIDENCE]
    files = list(dict.fromkeys(f for _, _, e in ok for f in e[3]))[:MAX_FILES]
    return {"kind": row["kind"], "key": row["keys"][0], "covers": row["keys"], "title": title,
            "pattern": order, "steps": steps,
            "examples": {t: row["ex"].get(t, t) for t in steps}, "sessions": len(ok),
            "failures": len(bad), "quality": row["quality"], "evidence": evidence,
            "prompts": prompts, "files": files, "tags": tags(steps, row["kind"]),
            "first_seen": ok[-1][0], "last_seen": ok[0][0]}


def tags(steps: List[str], kind: str) -> List[str]:
    """Tool categories of the steps: shell plus each program, mcp plus each server, web, task."""
    out = []
    for step in steps:
        if step.startswith("mcp:"):
            name = step[4:]
            out += ["mcp", name.split("__")[1] if name.startswith("mcp__") and "__" in name[5:]
                    else name.split("/")[0]]
        elif step in ("web", "task"):
            out.append(step)
        else:
            out += ["shell", step.split()[0]]
    return list(dict.fromkeys(t for t in out if t)) + (["command"] if kind == "command" else [])


def recurs(obs: dict) -> Optional[str]:
    """Sequences are judged per session, not per observation: nothing recurs alone."""
    return None
