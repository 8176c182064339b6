"""``reinforce``: after a session, did each surfaced lesson help, or did its failure recur?

Reads the surfacing log (``surfacing``) and judges every (session, lesson) pair once,
when the session is over (a ``session_end`` after the surfacing, or no activity for
``SESSION_IDLE_MINUTES``). A mined lesson (key ``mined:<kind>:<digest>``) whose
miner's ``recurs(obs)`` gives the same digest for an observation of that session at
or after the surfacing was violated (``aha_violated``), unless it is the failure of the very
call the lesson was shown with (the agent reads it with that call's result); if the session touched the
lesson after the surfacing (a finished tool call whose ``family``, ``tool`` or
``tool_kind`` is the card's ``trigger``; any finished tool call for a card without
one) and the pattern stayed away, the lesson helped (``aha_helped``); a session
that did not touch it is ``untested`` (no signal: nothing was at stake).
Miners that read config.json judge against the config of ``--repo-root``.
Other cards have no outcome (counted as surfaced only). The outcome signals carry the
session id, so a pair already judged is skipped and a second run writes nothing; the
judged set is read, and the new outcomes appended, under the store's exclusive lock
(``cursors.exclusive``), so two runs at once cannot both write a pair.
Observations are read in one streaming pass; only lines of sessions awaiting
judgement are parsed.
Must not import cli.
"""

import functools
import inspect
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from ..storage import config, cursors, fastjson, model
from . import lifecycle

SESSION_IDLE_MINUTES = 30   # a session without an observation for this long is over
JUDGE_WITHIN_DAYS = 14      # surfacings older than this are no longer judged (bounds the work)
TOP = 5                     # lessons in each effectiveness list
OUTCOMES = ("aha_helped", "aha_violated")
_SID = b'"session_id": "'   # how fastjson (hook, transcripts) writes the key


class Pending(NamedTuple):
    """A surfaced mined lesson awaiting judgement: the earliest surfacing in its session."""
    ts: str
    srf: str
    kind: str       # the miner's KIND
    digest: str
    trigger: str    # the card's trigger ('' for an older card: any finished tool call)
    call: str = ""  # the tool call it was shown with, and the observation (the failure) it
    obs: str = ""   # was shown at: the agent read it with that result, never a violation


class Session:
    """What the observations of one session say after its surfacings."""

    __slots__ = ("last", "ended", "worked", "touched", "hits")

    def __init__(self):
        self.last = self.ended = self.worked = ""  # worked: the latest finished tool call
        self.touched: Dict[str, str] = {}  # family, tool or tool_kind -> its latest finished call
        self.hits: List[Tuple[str, str, str, str, str]] = []  # (ts, obs id, kind, digest, call)


def _miners() -> dict:
    from . import mine
    return mine.MINERS


def checkers(miners: dict, repo_config: Optional[dict]) -> Dict[str, Callable]:
    """Each miner's ``recurs``; those reading config.json get ``repo_config`` (the config
    of ``--repo-root``) instead of the one of the directory the command runs in."""
    out = {}
    for name, module in miners.items():
        takes = "config" in inspect.signature(module.recurs).parameters
        out[name] = functools.partial(module.recurs, config=repo_config) \
            if takes and repo_config is not None else module.recurs
    return out


def parse_key(key, miners: dict) -> Optional[Tuple[str, str]]:
    """``mined:<kind>:<digest>`` → (miner KIND, digest); kind may be singular (failure)."""
    parts = key.split(":") if isinstance(key, str) else []
    if len(parts) != 3 or parts[0] != "mined" or not parts[2]:
        return None
    for name in miners:
        if parts[1] in (name, name.rstrip("s")):
            return name, parts[2]
    return None


def _pending(memory, cards: dict, done: set, since: str, miners: dict):
    """Per session, per mined lesson, its earliest surfacing not yet judged; and how many
    surfaced lessons have no outcome to judge (not mined)."""
    out: Dict[str, Dict[str, Pending]] = {}
    unjudged = 0
    for srf in memory.load("surfacings"):
        sid, ts = srf.get("session_id"), str(srf.get("ts") or "")
        if not isinstance(sid, str) or not sid or ts < since:
            continue
        for aid in srf.get("lesson_ids") or []:
            if (sid, aid) in done:
                continue
            card = cards.get(aid) or {}
            parsed = parse_key(card.get("key"), miners)
            if parsed is None:
                unjudged += 1
                continue
            known = out.setdefault(sid, {}).get(aid)
            if known is None or ts < known.ts:
                trigger = card.get("trigger")
                call, obs = srf.get("call"), srf.get("obs")
                out[sid][aid] = Pending(ts, srf.get("id", "?"), *parsed,
                                        trigger if isinstance(trigger, str) else "",
                                        call if isinstance(call, str) else "",
                                        obs if isinstance(obs, str) else "")
    return out, unjudged


def _session_of(raw: bytes) -> Optional[bytes]:
    start = raw.find(_SID)
    if start < 0:
        return None
    start += len(_SID)
    return raw[start:raw.find(b'"', start)]


def scan(path: str, pending: Dict[str, Dict[str, Pending]],
         recurs: Dict[str, Callable]) -> Dict[str, Session]:
    """One pass over observations.jsonl; parses only lines of the sessions in ``pending``.
    ``recurs``: per miner KIND, its ``recurs(obs)`` (see ``checkers``)."""
    wanted = {sid.encode("utf-8"): sid for sid in pending}
    kinds = {sid: sorted({p.kind for p in lessons.values()}) for sid, lessons in pending.items()}
    sessions: Dict[str, Session] = {}
    check = model.LineCheck("observations")
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return sessions
    with fh:
        for raw in fh:
            key = _session_of(raw)
            if key is None or (key not in wanted and b"\\" not in key):
                continue
            try:
                obs = fastjson.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue  # a torn or foreign line: `repair` reports it
            sid = obs.get("session_id") if isinstance(obs, dict) else None
            if not isinstance(sid, str) or sid not in kinds or check.problem(obs):
                continue
            _feed(sessions.setdefault(sid, Session()), obs, kinds[sid], recurs)
    return sessions


def _feed(s: Session, obs: dict, kinds: List[str], recurs: Dict[str, Callable]) -> None:
    ts = str(obs.get("ts") or "")
    s.last = max(s.last, ts)
    event = obs.get("event")
    if event == "session_end":
        s.ended = max(s.ended, ts)
    elif event in ("tool_success", "tool_failure"):
        s.worked = max(s.worked, ts)
        for field in ("family", "tool", "tool_kind"):
            value = obs.get(field)
            if isinstance(value, str) and value and s.touched.get(value, "") < ts:
                s.touched[value] = ts
    for kind in kinds:
        digest = recurs[kind](obs)
        if digest:
            s.hits.append((ts, str(obs.get("id") or "?"), kind, digest,
                           str(obs.get("tool_use_id") or "")))


def judge(p: Pending, s: Optional[Session], idle_before: str
          ) -> Tuple[str, Optional[str], Optional[str]]:
    """(outcome, obs id, its time): violated (the recurrence), helped (the last touch of
    the lesson's trigger), untested (the session did not touch the lesson's trigger after
    the surfacing), or waiting (the session is not over)."""
    s = s or Session()
    if not (s.ended >= p.ts or max(s.last, p.ts) < idle_before):
        return "waiting", None, None
    for ts, oid, kind, digest, call in s.hits:  # the same second may be before it: not counted
        if ts > p.ts and kind == p.kind and digest == p.digest and \
                not (p.call and call == p.call) and oid != p.obs:
            return "violated", oid, ts
    touched = s.touched.get(p.trigger, "") if p.trigger else s.worked
    return ("helped", None, touched) if touched >= p.ts else ("untested", None, None)


def reinforce(memory, repo_root: str = "", dry_run: bool = False) -> dict:
    """Judge the surfacings whose session is over; append one outcome signal per pair.

    The judged set is read and the new signals appended under the store's lock (not
    taken by a dry run, nor without a store); the caller must not hold it (``maintain``
    runs ``mine``, which takes it, before this)."""
    miners = _miners()
    recurs = checkers(miners, config.load(repo_root) if repo_root else None)
    with cursors.exclusive(memory.root, enabled=not dry_run and memory.exists()):
        data = _judge_all(memory, miners, recurs)
        written = [_signal(j) for j in data["judged"]]
        if written and not dry_run:
            memory.append("signals", written)
    return dict(data, dry_run=dry_run, signals_written=0 if dry_run else len(written))


def _judge_all(memory, miners: dict, recurs: Dict[str, Callable]) -> dict:
    """The outcome of every pending (session, lesson) pair, counted by outcome."""
    now = model.now()
    done = {(s.get("session_id"), s.get("aha_id")) for s in memory.load("signals")
            if s.get("source") == "reinforce" and s.get("kind") in OUTCOMES}
    since = model.iso(now - JUDGE_WITHIN_DAYS * lifecycle.DAY)
    pending, unjudged = _pending(memory, memory.folded("cards"), done, since, miners)
    sessions = scan(memory.path("observations"), pending, recurs)
    idle_before = model.iso(now - SESSION_IDLE_MINUTES * 60)
    judged, counts = [], {"helped": 0, "violated": 0, "untested": 0, "waiting": 0}
    for sid in sorted(pending):
        for aid, p in sorted(pending[sid].items()):
            outcome, oid, seen = judge(p, sessions.get(sid), idle_before)
            counts[outcome] += 1
            if outcome in ("helped", "violated"):
                judged.append({"session_id": sid, "aha_id": aid, "surfacing": p.srf,
                               "surfaced": p.ts, "outcome": outcome, "obs": oid,
                               "seen": seen})
    return {"judged": judged, "counts": counts, "unjudged": unjudged, "sessions": len(pending)}


def _signal(j: dict) -> dict:
    context = f"surfacing {j['surfacing']} at {j['surfaced']}; " + (
        f"recurred as {j['obs']}" if j["outcome"] == "violated" else
        "did not recur in the session")
    return model.complete("signal", {"kind": f"aha_{j['outcome']}", "aha_id": j["aha_id"],
                                     "source": "reinforce", "session_id": j["session_id"],
                                     "context": context, "seen": j["seen"]})


def render(data: dict) -> List[str]:
    c = data["counts"]
    lines = [f"judged {c['helped'] + c['violated']} surfaced lesson(s): {c['helped']} helped, "
             f"{c['violated']} violated; {c['untested']} untested (not touched after them), "
             f"{c['waiting']} waiting for their session to end, "
             f"{data['unjudged']} not mined (no outcome)"]
    lines += [f"violated {j['aha_id']} in session {j['session_id']} ({j['obs']})"
              for j in data["judged"] if j["outcome"] == "violated"]
    if data["dry_run"]:
        lines.append("dry run: nothing written")
    return lines


# --- effectiveness (for review) ----------------------------------------------------------------

def effectiveness(memory, top: int = TOP, facts=None) -> dict:
    """The lessons that helped most, and those that keep failing (rewrite or reject them).

    Hidden cards (rejected, deprecated, retired) are left out. A lesson is in at most one
    list: ``helped_most`` when it helped more often than it was violated; ``keep_failing``
    when it was violated at least as often as it helped and last within
    ``lifecycle.QUIET_DAYS`` (an old violation the lesson has outlived is no call to act).
    """
    if facts is None:  # a full read; ``facts`` gives the same from the derived index:
        facts = _facts(memory)  # (card by id, evidence, surfaced per id, surfacings, lessons)
    card_of, ev, surfaced, n_surfacings, n_lessons = facts
    recent = model.iso(model.now() - lifecycle.QUIET_DAYS * lifecycle.DAY)
    rows = []
    for aid in sorted(a for a, e in ev.items() if e.helped or e.violated):
        card, e = card_of(aid), ev.get(aid)
        if card is None or card.get("status") in model.HIDDEN_STATUSES:
            continue
        rows.append({"id": aid, "title": card.get("title", ""),
                     "status": card.get("status", "proposed"), "surfaced": surfaced.get(aid, 0),
                     "helped": e.helped, "violated": e.violated,
                     "last_violation": e.last_violation or None})
    helped = sorted((r for r in rows if r["helped"] > r["violated"]),
                    key=lambda r: (-r["helped"], r["violated"]))
    failing = sorted((r for r in rows if r["violated"] >= r["helped"] and r["violated"]
                      and (r["last_violation"] or "") >= recent),
                     key=lambda r: (r["last_violation"] or ""), reverse=True)
    failing.sort(key=lambda r: -r["violated"])
    return {"surfacings": n_surfacings, "lessons_surfaced": n_lessons,
            "helped_most": helped[:top], "keep_failing": failing[:top]}


def _facts(memory):
    """What ``effectiveness`` needs, from a full read of cards, signals and surfacings."""
    cards = memory.folded("cards")
    ev = lifecycle.evidence(memory.load("signals"))
    surfaced: Dict[str, int] = {}
    records = memory.load("surfacings")
    for srf in records:
        for aid in srf.get("lesson_ids") or []:
            surfaced[aid] = surfaced.get(aid, 0) + 1
    return cards.get, ev, surfaced, len(records), len(surfaced)


def render_effectiveness(data: dict) -> List[str]:
    lines = [f"{data['surfacings']} surfacing(s) of {data['lessons_surfaced']} lesson(s)"]
    for r in data["helped_most"]:
        lines.append(f"helped {r['helped']}x (violated {r['violated']}x): {r['id']}  {r['title']}")
    for r in data["keep_failing"]:
        lines.append(f"keeps failing: violated {r['violated']}x, last {r['last_violation'][:10]} "
                     f"(rewrite or reject): {r['id']}  {r['title']}")
    return lines
