"""Miner ``failures``: the same tool failure in several sessions, and what fixed it.

Failures are fingerprinted (``fingerprint.of_failure``) and clustered across
sessions; a cluster seen in ``MIN_SESSIONS`` sessions becomes a candidate
lesson. A shell failure followed, within ``FIX_WINDOW`` tool events of the same
session, by a succeeding command of the same program is remembered as its fix.
Constants are documented in references/LEARNING.md.
"""

from typing import Dict, List, Optional

from . import fingerprint
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut, ignored
from ..storage.screen import fence

KIND = "failures"
_SID = b'"session_id": "'  # how fastjson (hooks, transcripts) writes the key

FIX_WINDOW = 5              # a fix must come within this many tool events of the same session
MAX_EVIDENCE_SESSIONS = 5   # sessions cited in evidence; later ones only raise the count
MAX_FIXES = 2               # succeeding variants named in solution_steps, most frequent first
MAX_FIXES_KEPT = 10         # distinct variants remembered per failure
MAX_CLUSTERS = 5000         # failures remembered; beyond it, the least recent ones not yet a
                            # lesson are dropped (bounds the checkpoint, so every run's cost)
MAX_PENDING_SESSIONS = 1000  # sessions waiting for a fix; the least recent are dropped
CUT_TITLE, CUT_ARGS, CUT_ERROR = 80, 120, 160  # characters of head, command, error shown


def _resembles(failed_family: str, family: str, args: str) -> bool:
    """Same family, same program, or the failed program named in the command
    (``pytest`` → ``python3 -m pytest``, ``bash -lc 'npm test'`` → ``sh -c 'npm test'``)."""
    program = failed_family.split()[0]
    return family == failed_family or family.split()[0] == program or \
        program in args.replace("'", " ").replace('"', " ").split()


def miner(agg: dict, setup: Setup) -> Run:
    """Tool failures clustered by fingerprint; a cluster in MIN_SESSIONS sessions is a lesson.

    ``agg`` (saved in the checkpoint) holds ``clusters`` by digest and ``pending``:
    per session, the shell failures still waiting for a succeeding variant.
    """
    clusters: Dict[str, dict] = agg.setdefault("clusters", {})
    pending: Dict[str, list] = agg.setdefault("pending", {})
    sessions: Dict[str, set] = {}  # cluster -> its sessions as a set, built when first needed
    waiting = {sid.encode("utf-8") for sid in pending}  # as they appear in a line
    changed: set = set()

    def wants(raw: bytes) -> bool:
        if b"tool_failure" in raw:
            return True
        if not waiting or b"tool_success" not in raw:
            return False
        # a success matters only while its session waits for a fix; the session id is
        # read without parsing, as every writer here spells it (else: parse to be sure)
        start = raw.find(_SID)
        if start < 0:
            return True
        start += len(_SID)
        sid = raw[start:raw.find(b'"', start)]
        return sid in waiting or b"\\" in sid

    def feed(obs: dict) -> None:
        event = obs.get("event")
        if event != "tool_failure" and event != "tool_success":
            return
        sid = str(obs.get("session_id") or "")
        if sid in pending:
            _advance(sid, obs)
        if event == "tool_failure" and not ignored(obs):
            _failure(sid, obs)

    def _advance(sid: str, obs: dict) -> None:
        left = []
        ok = obs.get("event") == "tool_success" and obs.get("tool_kind") == "shell"
        args = str(obs.get("args") or "")
        family = str(obs.get("family") or "")
        for fp, failed, norm, fam, remaining in pending[sid]:
            cluster = clusters.get(fp)
            if ok and cluster is not None and family and _resembles(fam, family, args):
                variant = fingerprint.normalize_args(args)
                if variant == norm:
                    cluster["retries"] = cluster.get("retries", 0) + 1
                else:
                    _fix(fp, cluster, variant, args, failed, family == fam, sid, obs)
                continue
            if remaining > 1:
                left.append([fp, failed, norm, fam, remaining - 1])
        if left:
            pending[sid] = left
        else:
            del pending[sid]
            waiting.discard(sid.encode("utf-8"))

    def _fix(fp, cluster, variant, args, failed, same_family, sid, obs) -> None:
        fixes = cluster.setdefault("fixes", {})
        fix = fixes.get(variant)
        if fix is None:
            if len(fixes) >= MAX_FIXES_KEPT:
                return
            fix = fixes[variant] = {"args": cut(args, CUT_ARGS), "failed": cut(failed, CUT_ARGS),
                                    "same_family": same_family, "count": 0,
                                    "seen": [obs.get("id", "?"), sid, obs.get("ts", "?")]}
            changed.add(fp)
        fix["count"] += 1

    def _failure(sid: str, obs: dict) -> None:
        text, fp, raw = fingerprint.of_failure(obs)
        cluster = clusters.get(fp)
        if cluster is None:
            if len(clusters) >= MAX_CLUSTERS:
                _prune()
            cluster = clusters[fp] = {
                "fingerprint": text, "tool": obs.get("tool") or "?",
                "kind": obs.get("tool_kind") or "other", "family": obs.get("family") or "",
                "example": {"args": cut(obs.get("args"), CUT_ARGS),
                            "error": cut(raw, CUT_ERROR)},
                "count": 0, "sessions": [], "seen": [], "first": obs.get("ts", "")}
        cluster["count"] += 1
        cluster["last"] = obs.get("ts", "")
        known = sessions.get(fp)
        if known is None:
            known = sessions[fp] = set(cluster["sessions"])
        if sid not in known:
            known.add(sid)
            cluster["sessions"].append(sid)
            if len(cluster["seen"]) < MAX_EVIDENCE_SESSIONS:
                cluster["seen"].append([obs.get("id", "?"), sid, obs.get("ts", "?")])
            changed.add(fp)
        if obs.get("tool_kind") == "shell" and obs.get("family"):
            args = str(obs.get("args") or "")
            entries = [p for p in pending.pop(sid, []) if p[0] != fp]
            entries.append([fp, cut(args, CUT_ARGS), fingerprint.normalize_args(args),
                            obs["family"], FIX_WINDOW])
            pending[sid] = entries  # re-inserted last: the dict stays least-recent first
            waiting.add(sid.encode("utf-8"))
            while len(pending) > MAX_PENDING_SESSIONS:
                oldest = next(iter(pending))
                del pending[oldest]
                waiting.discard(oldest.encode("utf-8"))

    def _prune() -> None:
        """Forget the least recent failures not yet lessons, down to 90% of MAX_CLUSTERS."""
        young = sorted((c.get("last", ""), fp) for fp, c in clusters.items()
                       if len(c["sessions"]) < MIN_SESSIONS)
        for _, fp in young[:max(1, len(clusters) - MAX_CLUSTERS * 9 // 10)]:
            del clusters[fp]
            sessions.pop(fp, None)
            changed.discard(fp)

    def lessons() -> List[dict]:
        return [_lesson(fp, clusters[fp]) for fp in sorted(changed)
                if fp in clusters and len(clusters[fp]["sessions"]) >= MIN_SESSIONS]

    return Run(wants, feed, lessons)


def _lesson(fp: str, c: dict) -> dict:
    """The card for one failure cluster."""
    label, head = fingerprint.command_word(c), fingerprint.head_of(c["fingerprint"])
    n = len(c["sessions"])
    fixes = sorted(c.get("fixes", {}).values(), key=lambda f: -f["count"])[:MAX_FIXES]
    steps = [f"use `{f['args']}` instead of `{f['failed']}`" if f["same_family"] else
             f"`{f['args']}` succeeded next, after `{f['failed']}` failed" for f in fixes]
    evidence = [f"example ({label}): `{c['example']['args']}` failed with: "
                f"{fence(c['example']['error'], CUT_ERROR)}"]  # tool output: quoted, cut
    evidence += [f"seen {ts} in session {sid} ({oid})" for oid, sid, ts in c["seen"]]
    evidence += [f"fix seen {f['seen'][2]} in session {f['seen'][1]} ({f['seen'][0]}): "
                 f"`{f['args']}`" for f in fixes]
    card = {
        "title": f"`{label}` fails with `{cut(head, CUT_TITLE)}`",
        "when_to_use": f"`{label}` ({c['tool']}) fails with: {fence(head, CUT_ERROR)}",
        "problem": f"`{label}` failed {c['count']} time(s) in {n} sessions with: "
                   f"{fence(head, CUT_ERROR)}",
        "solution_steps": steps, "evidence": evidence,
        "gotchas": ["a plain retry of the same command also succeeded at times: the failure "
                    "may be flaky or depend on state"] if c.get("retries") else [],
        "confidence": confidence(n, bool(fixes)), "tags": ["mined", "failure", c["kind"]],
        "observations": c["count"], "first_seen": c.get("first") or c["seen"][0][2],
        "last_seen": c.get("last", ""),
        "key": f"mined:failure:{fp}", "origin": "mined", "status": "candidate",
        "trigger": trigger(c),
    }
    return {"kind": "failures", "fingerprint": c["fingerprint"], "sessions": n,
            "occurrences": c["count"], "card": {k: v for k, v in card.items() if v != []}}


def trigger(c: dict) -> str:
    """What gives the lesson a chance to matter: the shell family, else the tool."""
    return c["family"] if c["kind"] == "shell" and c["family"] else c["tool"]


def recurs(obs: dict) -> Optional[str]:
    """The cluster digest of a failure observation (None for anything else)."""
    if obs.get("event") != "tool_failure" or ignored(obs):
        return None
    return fingerprint.of_failure(obs)[1]
