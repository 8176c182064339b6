"""Count what a real client sends: a logger hook next to each of ours, fired for the same events.

``tap(hook_file, log)`` adds, beside every hook entry that runs ``self_learning.py hook …``,
one that appends the payload it receives (and our entry's arguments) to ``log``;
``stored_count(log)`` says how many observations those payloads should leave in the store
(every payload the hook does not skip by design). A client firing 8 payloads of which the
store keeps 7 fails the comparison, whatever the stored events look like. Stdlib only.
"""

from __future__ import annotations

import copy
import json
import shlex
import sys
from pathlib import Path
from typing import Any, List, Optional

# One write() with O_APPEND per payload: hooks that run in parallel never interleave lines.
LOGGER = ("import os,sys,json;raw=sys.stdin.buffer.read();"
          "line=json.dumps({'args':sys.argv[2:],'payload':json.loads(raw or b'{}')})+chr(10);"
          "fd=os.open(sys.argv[1],os.O_WRONLY|os.O_APPEND|os.O_CREAT,0o600);"
          "os.write(fd,line.encode());os.close(fd)")


def _logger(command: str, log: Path) -> str:
    """The logger's command line, given our hook's: the arguments after ``hook`` are kept."""
    args = shlex.split(command.split(" hook", 1)[1]) if " hook" in command else []
    return " ".join(shlex.quote(x) for x in [sys.executable, "-c", LOGGER, str(log), *args])


def _tapped(node: Any, log: Path, only: bool) -> Any:
    """``node`` with a logger entry after each of ours (instead of it when ``only``)."""
    if isinstance(node, dict):
        return {k: _tapped(v, log, only) for k, v in node.items()}
    if not isinstance(node, list):
        return node
    out: List[Any] = []
    for item in node:
        key = next((k for k in ("command", "bash") if isinstance(item, dict)
                    and "self_learning.py" in str(item.get(k, ""))), None)
        if key is None:
            out.append(_tapped(item, log, only))
            continue
        logger = dict(copy.deepcopy(item), **{key: _logger(item[key], log)})
        if "name" in logger:
            logger["name"] = "e2e-tap"
        out.extend([logger] if only else [item, logger])
    return out


def tap(hook_file: Path, log: Path, into: Optional[Path] = None) -> None:
    """Log every payload of the events ``hook_file`` registers us for: beside our entries in
    ``hook_file`` itself, or, with ``into``, in a file of loggers only (Claude Code's
    ``.claude/settings.local.json`` beside the plugin's ``hooks/hooks.json``)."""
    doc = json.loads(hook_file.read_text())
    if into is None:
        hook_file.write_text(json.dumps(_tapped(doc, log, False), indent=2) + "\n")
    else:
        into.parent.mkdir(parents=True, exist_ok=True)
        into.write_text(json.dumps({"hooks": _tapped(doc["hooks"], log, True)}, indent=2) + "\n")


def payloads(log: Path) -> List[dict]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def stored_count(log: Path) -> int:
    """How many observations the logged payloads make: those ``observe.normalize`` keeps."""
    from selflearn.observation import observe
    kept = 0
    for entry in payloads(log):
        args = entry["args"]
        opt = {k: args[args.index(f"--{k}") + 1] for k in ("agent", "event") if f"--{k}" in args}
        kept += observe.normalize(entry["payload"], opt.get("agent", "auto"),
                                  opt.get("event", "")) is not None
    return kept
