"""Bookkeeping the miners share: clusters of observations counted per session.

Owns ``Clusters`` (a digest -> cluster map kept inside a miner's ``agg``, with
per-session counts, bounded evidence and pruning of the least recent clusters
that are not lessons yet), the card fields every mined lesson carries, the
byte-level session id of a raw line, the config of the current repository (for
``recurs`` of configured miners) and which refusal a tool call was.
Must not import cli or mine.
"""

import json
import os
from typing import Callable, Dict, List, Optional

from ..storage import config as project_config
from . import fingerprint
from ..storage import paths
from .mine_base import ASKS_USER, BLOCKED, REJECTED, confidence

MAX_EVIDENCE_SESSIONS = 5   # sessions cited in a card's evidence; later ones only raise counts
PRUNE_TO = 0.9              # a full cluster map is pruned down to this share of its limit
_SID = b'"session_id": "'   # how fastjson (hooks, transcripts) writes the key


class Clusters:
    """``agg["clusters"]``: digest -> ``{count, sessions, seen, first, last, ...}``.

    ``limit`` bounds the map: beyond it, the least recent clusters seen in fewer
    than ``min_sessions`` sessions are dropped (down to ``PRUNE_TO`` of it), so the
    checkpoint, and with it the fixed cost of every run, stays bounded.
    """

    def __init__(self, agg: dict, limit: int, min_sessions: int):
        self.items: Dict[str, dict] = agg.setdefault("clusters", {})
        self.limit, self.min_sessions = limit, min_sessions
        self.changed: set = set()
        self._sessions: Dict[str, set] = {}

    def hit(self, digest: str, obs: dict, make: Callable[[], dict]) -> dict:
        """Count ``obs`` in cluster ``digest`` (made by ``make()`` when new)."""
        cluster = self.items.get(digest)
        ts = str(obs.get("ts") or "")
        if cluster is None:
            if len(self.items) >= self.limit:
                self._prune()
            cluster = self.items[digest] = dict(make(), count=0, sessions=[], seen=[], first=ts)
        cluster["count"] += 1
        cluster["last"] = ts
        sid = str(obs.get("session_id") or "")
        known = self._sessions.get(digest)
        if known is None:
            known = self._sessions[digest] = set(cluster["sessions"])
        if sid not in known:
            known.add(sid)
            cluster["sessions"].append(sid)
            if len(cluster["seen"]) < MAX_EVIDENCE_SESSIONS:
                cluster["seen"].append([obs.get("id", "?"), sid, ts or "?"])
        self.changed.add(digest)
        return cluster

    def sessions(self, digest: str) -> int:
        cluster = self.items.get(digest)
        return len(cluster["sessions"]) if cluster else 0

    def _prune(self) -> None:
        young = sorted((c.get("last", ""), d) for d, c in self.items.items()
                       if len(c["sessions"]) < self.min_sessions)
        for _, digest in young[:max(1, len(self.items) - int(self.limit * PRUNE_TO))]:
            del self.items[digest]
            self._sessions.pop(digest, None)
            self.changed.discard(digest)


def seen_lines(cluster: dict, what: str = "seen") -> List[str]:
    """Evidence lines ``<what> <ts> in session <id> (<obs id>)`` of the first sessions."""
    return [f"{what} {ts} in session {sid} ({oid})" for oid, sid, ts in cluster["seen"]]


def finding(kind: str, digest: str, text: str, cluster: dict, card: dict,
            sessions: Optional[int] = None) -> dict:
    """A lesson as ``mine`` writes it: the card plus the fields every mined card shares."""
    n = len(cluster["sessions"]) if sessions is None else sessions
    card = dict(card, observations=cluster["count"], first_seen=cluster["first"],
                last_seen=cluster.get("last", ""), key=f"mined:{kind}:{digest}",
                origin="mined", status="candidate")
    card.setdefault("confidence", confidence(n))
    return {"kind": kind, "fingerprint": text, "sessions": n, "occurrences": cluster["count"],
            "card": {k: v for k, v in card.items() if v not in ([], "")}}


def session_of(raw: bytes) -> Optional[bytes]:
    """The session id of a raw line as fastjson writes it, or None (then parse to be sure)."""
    start = raw.find(_SID)
    if start < 0:
        return None
    start += len(_SID)
    sid = raw[start:raw.find(b'"', start)]
    return None if b"\\" in sid else sid


def refusal(obs: dict) -> str:
    """``denied``, ``rejected`` (by the user) or ``blocked`` (by a hook or policy), else ''
    (also for a plan or question put to the user: turning it down is a review)."""
    event = obs.get("event")
    if str(obs.get("tool") or "").lower() in ASKS_USER:
        return ""
    if event == "permission_denied":
        return "denied"
    if event != "tool_failure":
        return ""
    error = str(obs.get("error") or "").lower()
    if any(marker in error for marker in REJECTED):
        return "rejected"
    if any(marker in error for marker in BLOCKED):
        return "blocked"
    return ""


def config_digest(value) -> str:
    """A stable digest of a config value, to notice that it changed between runs."""
    return fingerprint.digest(json.dumps(value, sort_keys=True), fold_case=False)


def config_where(setup) -> str:
    """The config.json a miner's ``setup`` came from, for error messages."""
    return project_config.path(setup.repo_root) if setup.repo_root else "config.json"


def config_changed(agg: dict, setup, key: str) -> Optional[str]:
    """Why aggregates built under another value of config ``key`` no longer fit, or None;
    the miner pins the value with ``agg["config"] = config_digest(setup.config.get(key))``."""
    if agg.get("config") != config_digest(setup.config.get(key)):
        return f"\"{key}\" in config.json changed"
    return None


_CONFIG_CACHE: Dict[str, tuple] = {}


def repo_config() -> dict:
    """The config of the repository the command runs in (re-read when the file changes)."""
    root = paths.find_repo_root()
    where = project_config.path(root)
    try:
        st = os.stat(where)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return {}
    cached = _CONFIG_CACHE.get(where)
    if cached is None or cached[0] != stamp:
        cached = _CONFIG_CACHE[where] = (stamp, project_config.load(root))
    return cached[1]
