"""``doctor``: is observation on, are hooks installed and firing, is the store healthy.

Reads only: the kill switch, each agent's hook config (``install.status``)
and, for Claude Code, the plugins that load the skill folder (``claude_plugin``),
the last observation per agent, per-file sizes and unreadable lines, and
the hook errors log. A hook registered more than once is a problem, with the fix.
"""

import os
import sys
from pathlib import Path
from typing import List

from . import claude_plugin, install
from ..storage import paths
from ..storage.memory import Memory

ERRORS_SHOWN = 3


def _files(memory: Memory) -> List[dict]:
    out = []
    if not memory.exists():
        return out
    for name in sorted(os.listdir(memory.root)):
        path = os.path.join(memory.root, name)
        if name.endswith(".jsonl") and os.path.isfile(path) and not os.path.islink(path):
            records, problems = memory.read(name)
            out.append({"file": name, "bytes": os.path.getsize(path), "records": len(records),
                        "unreadable": [str(p) for p in problems]})
    return out


def _ours(memory: Memory, name: str) -> bool:
    """A store file doctor may read: there, and no link (``repair.links`` reports those)."""
    path = memory.path(name)
    return os.path.exists(path) and not os.path.islink(path)


def _last_seen(memory: Memory) -> dict:
    seen: dict = {}
    for obs in memory.load("observations") if _ours(memory, "observations") else []:
        agent = obs.get("agent")
        if isinstance(agent, str):
            seen[agent] = {"ts": obs.get("ts"), "event": obs.get("event")}
    return seen


def _registrations(name: str, installed: List[str], plugins: List[dict]) -> List[str]:
    where = [f"plugin {p['id']}" for p in plugins] if name == "claude" else []
    return where + [f"{scope} settings" for scope in installed]


def _double_fix(name: str, installed: List[str], plugins: List[dict], script: str) -> str:
    if name == "claude" and plugins:
        keep = f"keep the plugin {plugins[0]['id']}: run " + " and ".join(
            f"`python3 {script} install-hooks --agent claude --scope {s}`" for s in installed)
        return keep + " (each removes our settings entries)"
    return f"keep one: `python3 {script} uninstall-hooks --agent {name} --scope user`"


def check(memory: Memory, repo_root: str, skill_dir: str = "") -> dict:
    home = Path(os.path.expanduser("~"))
    hooks = install.status(Path(repo_root), home)
    found = claude_plugin.loading(Path(skill_dir), Path(repo_root), home) if skill_dir else []
    plugins = [p for p in found if p["trusted"]]  # loading now; the others wait for trust
    waiting = [p["id"] for p in found if not p["trusted"]]
    script = os.path.join(skill_dir, "scripts", "self_learning.py") if skill_dir else \
        "scripts/self_learning.py"
    seen = _last_seen(memory)
    agents, doubles = {}, []
    for name, info in hooks.items():
        installed = [scope for scope in ("project", "user")
                     if info.get(scope) and info[scope].get("installed")]
        where = _registrations(name, installed, plugins)
        agents[name] = {"installed": installed, "last_event": seen.get(name),
                        "registrations": where,
                        "plugins": [p["id"] for p in plugins] if name == "claude" else [],
                        "plugins_waiting_for_trust": waiting if name == "claude" else [],
                        "config": {s: str(info[s]["file"]) for s in ("project", "user")
                                   if info.get(s) and info[s].get("file")}}
        if len(where) > 1:
            doubles.append(f"{name}: hooks registered {len(where)} times ({', '.join(where)}), "
                           f"so every event runs the hook {len(where)} times (stored once); "
                           + _double_fix(name, installed, plugins, script))
    errors = memory.load("errors.jsonl") if _ours(memory, "errors.jsonl") else []
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
    problems += repair.links(memory.root)
    problems += doubles
    for name, agent in agents.items():
        if agent["registrations"] and not agent["last_event"]:
            problems.append(f"{name}: hooks installed but no event seen yet (start a session)")
    return {"store": memory.root, "disabled": paths.kill_switch(repo_root), "agents": agents,
            "learning": learning(memory), "questions": questions(memory),
            "files": files, "errors": len(errors), "loose_modes": loose,
            "recent_errors": errors[-ERRORS_SHOWN:],
            "problems": problems, "healthy": not problems and not errors}


def learning(memory: Memory) -> dict:
    """When the learning step last ran (the hooks start it), why, and what it produced."""
    from ..storage import fastjson, store
    out = {"last_run": None, "trigger": None, "result": None, "triggers": 0}
    for name, key in (("maintain_state.json", "state"), ("triggers.jsonl", "table")):
        path = memory.path(name)
        if not _ours(memory, name):
            continue
        raw = store.read_bytes(path) or b""
        if key == "table":
            out["triggers"] = raw.count(b"\n")
            continue
        try:
            state = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(state, dict):
            result = state.get("last_result")
            out.update(last_run=state.get("last_run"),
                       result=result if isinstance(result, dict) else None,
                       trigger=(result or {}).get("trigger") if isinstance(result, dict) else None)
    return out


def questions(memory: Memory) -> dict:
    """How often the end-of-turn question asked the agent to write a lesson down (about
    failures, recovered from or not got past, and about the person's words), and how many
    lessons name an episode it asked about: whether the loop closes, as the agent answers it."""
    asked, named = {"failures": 0, "stepped": 0}, set()
    memory = Memory(memory.root, tolerant=True)  # a damaged line is the files' report's
    for srf in memory.load("surfacings") if _ours(memory, "surfacings") else []:
        if srf.get("event") != "ask":
            continue
        for kind, keys in (("failures", ("episodes", "stuck")), ("stepped", ("stepped",))):
            ids = [i for k in keys if isinstance(srf.get(k), list) for i in srf[k]]
            if ids:
                asked[kind] += 1
                named.update(i for i in ids if isinstance(i, str))
    cards = memory.folded("cards").values() if _ours(memory, "cards") else []
    return dict(asked, answered=sum(1 for c in cards if c.get("episode") in named))


def _questions_line(info: dict) -> str:
    return (f"questions at the end of a turn: {info['failures']} about failures, "
            f"{info['stepped']} about the person's words; {info['answered']} lesson(s) "
            "recorded in answer")


def _learning_line(info: dict) -> str:
    if not info["last_run"]:
        return ("learning: has not run yet (the hooks start it after a session ends; "
                "`maintain` runs it now)")
    r = info["result"] or {}
    why = {"session-end": "after a session ended", "catch-up": "as a catch-up at a session's start",
           "turn-end": "after a turn that failed", "forced": "by `maintain --force`",
           "by hand": "by `maintain`"}.get(info["trigger"] or "", info["trigger"] or "?")
    return (f"learning: last ran {info['last_run']} ({why}): {r.get('lessons_created', 0)} "
            f"lesson(s) created, {r.get('lessons_reinforced', 0)} reinforced, "
            f"{r.get('promoted', 0)} promoted, {r.get('decayed', 0)} decayed; "
            f"{info['triggers']} lesson(s) shown at the tool call they concern")


def render(data: dict) -> List[str]:
    lines = [f"store: {data['store']}",
             f"observation: {'OFF (' + data['disabled'] + ')' if data['disabled'] else 'on'}",
             _learning_line(data["learning"]), _questions_line(data["questions"])]
    for name, agent in data["agents"].items():
        where = ", ".join(agent.get("registrations") or agent["installed"]) or "not installed"
        last = agent["last_event"]
        seen = f"last event {last['event']} at {last['ts']}" if last else "no event seen"
        lines.append(f"  {name:<8} hooks: {where}; {seen}")
        for plugin in agent.get("plugins_waiting_for_trust") or []:
            lines.append(f"           plugin {plugin} loads once the workspace is trusted")
    for f in data["files"]:
        bad = f", {len(f['unreadable'])} unreadable" if f["unreadable"] else ""
        lines.append(f"  {f['file']:<24} {f['records']:>7} records {f['bytes']:>10} bytes{bad}")
    if data["errors"]:
        lines.append(f"hook errors: {data['errors']} (latest below; full log errors.jsonl, "
                     "delete it once read)")
        lines += [f"  {e.get('ts')} {e.get('agent')}: {e.get('error')}" for e in data["recent_errors"]]
    lines += [f"problem: {p}" for p in data["problems"]]
    lines.append("healthy" if data["healthy"] else "see the problems above")
    return lines
