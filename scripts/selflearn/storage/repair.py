"""``repair``: find and (with ``--apply``) fix what older or crashed writers left.

Fixes: every line commands skip (unreadable, torn, or of the wrong shape for
its kind) moved to ``quarantine/`` with its line number and original bytes
(never dropped; newer-format lines are listed and left in place); missing
``primary_skill`` backfilled from a ``skill:<name>`` tag or the nearest event
in time; status aliases normalized; store folders and files others can read or
write made private again (0700, 0600). Fixed records get a new version that keeps the timestamps
staleness is measured from (``last_touched_ts`` is not set by a repair).
"""

import os
from typing import List, Optional

from . import model, store
from . import posixfs as fs
from .memory import Memory

RECORD_FILES = (("cards", "card"), ("recs", "rec"))


def _skill_from_tags(record: dict) -> Optional[str]:
    for tag in record.get("tags") or []:
        if isinstance(tag, str) and tag.startswith("skill:") and tag[6:].strip():
            return tag[6:].strip()
    return None


def _nearest_skill(record: dict, events: List[tuple]) -> Optional[str]:
    """The primary_skill of the event closest in time to the record's creation."""
    if not events:
        return None
    at = model.parse_ts(record.get("_first_ts") or record.get("ts", ""))
    return min(events, key=lambda e: abs(e[0] - at))[1]


def loose_modes(root: str) -> List[dict]:
    """Folders (want 0700) and files (want 0600) in the store that others may read or
    write; symlinks are not followed."""
    out: List[dict] = []
    if not os.path.isdir(root) or os.path.islink(root):
        return out
    for here, dirs, files in os.walk(root):
        for name, want in [(here, fs.PRIVATE_DIR)] + [(os.path.join(here, f), fs.PRIVATE_FILE)
                                                       for f in files]:
            try:
                st = os.lstat(name)
            except FileNotFoundError:  # gone meanwhile (the index's -wal/-shm when it closes)
                continue
            if not os.path.islink(name) and st.st_mode & 0o077:
                out.append({"path": os.path.relpath(name, root), "mode": f"{st.st_mode & 0o777:04o}",
                            "want": f"{want:04o}"})
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]
    return out


def links(root: str) -> List[str]:
    """Links in the store, its folders from ``.agent-skills`` down included, as one line each:
    every write refuses them (``store.guard``), so a hook would drop its events there."""
    out: List[str] = []
    parts = root.split("/")
    top = parts.index(store.STORE_TOP) if store.STORE_TOP in parts else len(parts) - 1
    for end in range(top + 1, len(parts) + 1):
        here = "/".join(parts[:end])
        if os.path.islink(here):
            return [f"store folder {here} is a symbolic link (to {os.readlink(here)}): nothing "
                    "is written through it (the hooks record nothing); remove the link"]
    if not os.path.isdir(root):
        return out
    for here, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = os.path.join(here, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if os.path.islink(path):
                out.append(f"store file {os.path.relpath(path, root)} is a symbolic link (to "
                           f"{os.readlink(path)}): nothing is written through it; remove the link")
            elif st.st_nlink > 1 and not os.path.isdir(path):
                out.append(f"store file {os.path.relpath(path, root)} has {st.st_nlink} hard "
                           "links: nothing is written to it; replace it with a copy")
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]
    return out


STAMPS = ("ts", "first_seen", "last_seen", "last_touched_ts")
FUTURE = 86400.0  # seconds a stamp may run ahead of the clock (clock skew) before it is damage


def plan(memory: Memory) -> dict:
    """What repair would do, as data."""
    corrupt, newer = [], []
    for name in sorted(os.listdir(memory.root)) if memory.exists() else []:
        if name.endswith(".jsonl") and os.path.isfile(os.path.join(memory.root, name)):
            for p in memory.problems(name):
                (newer if p.newer else corrupt).append(
                    {"file": name, "line": p.line, "reason": p.reason})
    events = [(model.parse_ts(e.get("ts", "")), e["primary_skill"]) for e in memory.load("events")
              if e.get("primary_skill") not in (None, "", "unknown")]
    fixes = []
    now = model.now()
    for name, kind in RECORD_FILES:
        allowed = model.CARD_STATUSES if kind == "card" else model.REC_STATUSES
        for record in memory.folded(name).values():
            change = {}
            if record.get("primary_skill") in (None, "", "unknown"):
                skill = _skill_from_tags(record) or _nearest_skill(record, events)
                if skill:
                    change["primary_skill"] = skill
            status = record.get("status")
            if isinstance(status, str) and status != model.normalize_status(status) \
                    and model.normalize_status(status) in allowed:
                change["status"] = model.normalize_status(status)
            for field in STAMPS:  # a stamp far ahead of the clock is damage (advice ranks by it)
                value = record.get(field)
                if isinstance(value, str) and model.parse_ts(value) > now + FUTURE:
                    change[field] = model.iso(now)
            if change:
                fixes.append({"file": name, "id": record["id"], "set": change})
    return {"corrupt_lines": corrupt, "newer_lines": newer, "fixes": fixes,
            "loose_modes": loose_modes(memory.root)}


def apply(memory: Memory, found: dict) -> dict:
    """Quarantine bad lines, then append fixed versions."""
    stamp = model.iso().replace(":", "").replace("-", "")
    qdir = os.path.join(memory.root, "quarantine")
    moved = []
    for name in sorted({c["file"] for c in found["corrupt_lines"]}):
        for problem in memory.quarantine(name, qdir, stamp):
            moved.append({"file": name, "line": problem.line, "reason": problem.reason,
                          "quarantine": os.path.join("quarantine", f"{name}.{stamp}.jsonl")})
    for name, _ in RECORD_FILES:
        current = memory.folded(name)
        versions = []
        for fix in (f for f in found["fixes"] if f["file"] == name):
            version = {k: v for k, v in current[fix["id"]].items() if not k.startswith("_")}
            version.update(fix["set"], ts=model.iso(), v=model.SCHEMA_VERSION)
            versions.append(version)
        memory.append(name, versions)
    for item in found.get("loose_modes", []):
        try:
            os.chmod(os.path.join(memory.root, item["path"]), int(item["want"], 8))
        except FileNotFoundError:  # gone since the plan (the index's -wal/-shm)
            pass
    return {"quarantined": moved, "newer_lines": found["newer_lines"], "fixed": found["fixes"],
            "loose_modes": found.get("loose_modes", [])}


def render(data: dict, applied: bool) -> List[str]:
    lines = []
    corrupt = data.get("quarantined", data.get("corrupt_lines", []))
    for c in corrupt:
        verb = "moved to " + c["quarantine"] if applied else "would be quarantined"
        lines.append(f"{c['file']}:{c['line']}: {c['reason']} — {verb}")
    for c in data.get("newer_lines", []):
        lines.append(f"{c['file']}:{c['line']}: {c['reason']} — kept (not damaged)")
    for fix in data.get("fixed", data.get("fixes", [])):
        change = ", ".join(f"{k} → {v}" for k, v in fix["set"].items())
        lines.append(f"{fix['id']}: {change}{'' if applied else ' (would be set)'}")
    for item in data.get("loose_modes", []):
        verb = "made" if applied else "would be made"
        lines.append(f"{item['path']}: mode {item['mode']} lets others in; {verb} {item['want']}")
    if not lines:
        return ["Store is healthy: nothing to repair."]
    if not applied and (data.get("corrupt_lines") or data.get("fixes") or data.get("loose_modes")):
        lines.append("Run `repair --apply` to do this.")
    return lines
