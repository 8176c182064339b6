"""``doctor``: is observation on, are hooks installed and firing, is the store healthy.

Reads only: the kill switch, each agent's hook config (``install.status``),
the last observation per agent, per-file sizes and unreadable lines, and
the hook errors log.
"""

import os
import sys
from pathlib import Path
from typing import List

from . import install
from ..storage import paths
from ..storage.memory import Memory

ERRORS_SHOWN = 3


def _files(memory: Memory) -> List[dict]:
    out = []
    if not memory.exists():
        return out
    for name in sorted(os.listdir(memory.root)):
        path = os.path.join(memory.root, name)
        if name.endswith(".jsonl") and os.path.isfile(path):
            records, problems = memory.read(name)
            out.append({"file": name, "bytes": os.path.getsize(path), "records": len(records),
                        "unreadable": [str(p) for p in problems]})
    return out


def _last_seen(memory: Memory) -> dict:
    seen: dict = {}
    for obs in memory.load("observations"):
        agent = obs.get("agent")
        if isinstance(agent, str):
            seen[agent] = {"ts": obs.get("ts"), "event": obs.get("event")}
    return seen


def check(memory: Memory, repo_root: str) -> dict:
    hooks = install.status(Path(repo_root), Path(os.path.expanduser("~")))
    seen = _last_seen(memory)
    agents = {}
    for name, info in hooks.items():
        installed = [scope for scope in ("project", "user")
                     if info.get(scope) and info[scope].get("installed")]
        agents[name] = {"installed": installed, "last_event": seen.get(name),
                        "config": {s: str(info[s]["path"]) for s in ("project", "user")
                                   if info.get(s) and info[s].get("path")}}
    errors = memory.load("errors.jsonl") if os.path.exists(memory.path("errors.jsonl")) else []
    files = _files(memory)
    problems = []
    if sys.version_info < (3, 9):
        problems.append("Python 3.9 or newer is needed")
    problems += [u for f in files for u in f["unreadable"]]
    from ..storage import repair
    loose = repair.loose_modes(memory.root)
    problems += [f"store {'folder' if item['want'] == '0700' else 'file'} {item['path']} has mode "
                 f"{item['mode']}: others can read it; `repair --apply` makes it {item['want']}"
                 for item in loose]
    for name, agent in agents.items():
        if agent["installed"] and not agent["last_event"]:
            problems.append(f"{name}: hooks installed but no event seen yet (start a session)")
    return {"store": memory.root, "disabled": paths.kill_switch(repo_root), "agents": agents,
            "files": files, "errors": len(errors), "loose_modes": loose,
            "recent_errors": errors[-ERRORS_SHOWN:],
            "problems": problems, "healthy": not problems and not errors}


def render(data: dict) -> List[str]:
    lines = [f"store: {data['store']}",
             f"observation: {'OFF (' + data['disabled'] + ')' if data['disabled'] else 'on'}"]
    for name, agent in data["agents"].items():
        where = ", ".join(agent["installed"]) or "not installed"
        last = agent["last_event"]
        seen = f"last event {last['event']} at {last['ts']}" if last else "no event seen"
        lines.append(f"  {name:<8} hooks: {where}; {seen}")
    for f in data["files"]:
        bad = f", {len(f['unreadable'])} unreadable" if f["unreadable"] else ""
        lines.append(f"  {f['file']:<24} {f['records']:>7} records {f['bytes']:>10} bytes{bad}")
    if data["errors"]:
        lines.append(f"hook errors: {data['errors']} (latest below; full log errors.jsonl)")
        lines += [f"  {e.get('ts')} {e.get('agent')}: {e.get('error')}" for e in data["recent_errors"]]
    lines += [f"problem: {p}" for p in data["problems"]]
    lines.append("healthy" if data["healthy"] else "see the problems above")
    return lines
