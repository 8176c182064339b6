"""Graduation into a skill folder: ``export-backport``, ``backport-inspect``, ``backport-remove``.

Owns the workflows: which cards may go, the plan for ``references/self-learning-aha.md``
(a header block, then one block per card) and the pointer block in ``SKILL.md``,
the export bundle, and cutting blocks back out. The block format and the
write containment live in ``skillblocks``. Invariants: every export leaves a
bundle and a ``backports.jsonl`` line; nothing outside the planned blocks
changes; a card is ``backported`` while a skill holds its block (a removal appends
the status it had before). Must not import cli.
"""

import difflib
import json
import os
from typing import Container, Dict, List, Optional, Tuple

from ..storage import model, screen, store, update
from ..storage.errors import SelfLearningError, UsageError
from ..storage.memory import Memory
from .skillblocks import (ID_OK, REF_NAME, Target, append_block, block, cut, read_text,
                          render_card, scan, sha, write_text)

SCRIPT = "python3 scripts/self_learning.py"
HEADER_BODY = (
    "# Lessons learned in use\n\n"
    "Each lesson below proved itself in real runs and was graduated from a self-learning\n"
    "memory by self-learning-skills (`export-backport`). Read a lesson when its\n"
    "\"When to use\" line matches your task. The blocks between `self-learning:aha` markers\n"
    "are managed by that tool: `backport-inspect` shows where each came from and\n"
    "`backport-remove` takes it out.\n\n")
POINTER_BODY = (
    "Lessons proven in past runs: read [references/self-learning-aha.md]"
    "(references/self-learning-aha.md) when a task matches one of its \"When to use\" lines.\n")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip(".-")[:48] or "skill"


def new_id(prefix: str, taken: Container[str] = ()) -> str:
    """``<prefix>_<UTC second>_<6 hex>``, in the same shape as record ids."""
    stamp = model.iso().replace("-", "").replace(":", "")
    while True:
        bid = f"{prefix}_{stamp}_{os.urandom(3).hex()}"
        if bid not in taken:
            return bid


def parse_ids(values: Optional[List[str]]) -> List[str]:
    return list(dict.fromkeys(i.strip() for v in values or [] for i in v.split(",") if i.strip()))


# --- export ---------------------------------------------------------------------------------

def pick_cards(memory: Memory, ids: List[str], force: bool,
               command: str = "export-backport") -> Tuple[List[dict], List[str]]:
    """Latest versions of the cards, or a UsageError naming every refusal."""
    folded = memory.folded("cards")
    cards, problems, warnings = [], [], []
    for cid in ids:
        card = folded.get(cid)
        if card is None:
            problems.append(f"{command}: unknown card id {cid!r} (see `list`)")
            continue
        if not ID_OK.match(cid):
            problems.append(f"{command}: card id {cid!r} cannot go into a marker "
                            "(letters, digits and _ . : - only)")
        status = model.normalize_status(card.get("status", "proposed"))
        if card.get("_imported"):
            problems.append(f"{command}: card {cid} comes from a store git tracks (imported); "
                            f"a local person accepts it first (`aha-status --id {cid} --status "
                            "accepted`)")
        flags = screen.blocked(card)
        if flags:  # not even --force: a person accepts it first, and that is recorded
            problems.append(f"{command}: card {cid} is held by the safety screen "
                            f"({'; '.join(flags)}); accept it first with `aha-status --id {cid} "
                            "--status accepted --accept-flagged`")
        refusals = [why for bad, why in (
            (card.get("shareable", True) is not True, "is not shareable (shareable: false)"),
            (status in model.HIDDEN_STATUSES, f"is {status}")) if bad]
        if force:
            warnings += [f"{command}: card {cid} {why}; exported because of --force"
                         for why in refusals]
        else:
            problems += [f"{command}: card {cid} {why}; use --force to export it anyway"
                         for why in refusals]
        if card.get("scope", "project") != "portable":
            warnings.append(f"{command}: card {cid} has scope project (meant for this repo); "
                            "exported anyway; re-record it with \"scope\": \"portable\" if it "
                            "holds elsewhere")
        cards.append(card)
    if problems:
        raise UsageError("\n".join(problems + [f"{command}: nothing was written"]))
    return cards, warnings


def plan_reference(text: Optional[str], cards: List[dict], bid: str, target: Target,
                   warnings: List[str]):
    """The proposed reference file, each card's action, and what happened to the header."""
    where = target.rel(target.ref)
    new, actions, header = text or "", {}, "present"
    if not any(b.kind in ("aha", "aha-header") for b in scan(new, target.ref)):
        attrs = {"backport": bid, "file": "created" if text is None else "existing"}
        if not os.path.isdir(target.ref_dir):
            attrs["dir"] = "created"
        new, header = append_block(new, "aha-header", attrs, HEADER_BODY), "added"
    for card in cards:
        blocks = scan(new, target.ref)
        body = render_card(card)
        attrs = {"id": card["id"], "backport": bid, "sha": sha(body)}
        mine = [b for b in blocks if b.kind == "aha" and b.attrs.get("id") == card["id"]]
        anchors = [b for b in blocks if b.kind in ("aha", "aha-header")]
        if mine and mine[0].body == body:
            actions[card["id"]] = "unchanged"
        elif mine:
            if sha(mine[0].body) != mine[0].attrs.get("sha"):
                warnings.append(f"export-backport: the block of {card['id']} in {where} was "
                                "edited by hand; the export replaces it (the old file goes to "
                                "the bundle's backup/ with --apply)")
            if "pad" in mine[0].attrs:
                attrs["pad"] = mine[0].attrs["pad"]
            new = new[:mine[0].start] + block("aha", attrs, body) + new[mine[0].end:]
            actions[card["id"]] = "updated"
        elif anchors and new[:anchors[-1].end].endswith("\n"):
            at = anchors[-1].end
            new = new[:at] + block("aha", attrs, body) + new[at:]
            actions[card["id"]] = "added"
        else:
            new = append_block(new, "aha", attrs, body)
            actions[card["id"]] = "added"
    return new, actions, header


def plan_skill(text: str, bid: str, where: str) -> Tuple[str, str]:
    if any(b.kind == "backport" for b in scan(text, where)):
        return text, "present"
    return append_block(text, "backport", {"id": bid}, POINTER_BODY), "added"


def _lines(text: str) -> List[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified(old: Optional[str], new: str, path: str) -> str:
    """A git-style diff of one file; ``old`` None means the file is created."""
    out = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
           for line in difflib.unified_diff(_lines(old or ""), _lines(new),
                                            "/dev/null" if old is None else f"a/{path}",
                                            f"b/{path}")]
    if not out:
        return ""
    return f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "") \
        + "".join(out)


def export(memory: Memory, skill_path: str, ids: List[str], make_diff: bool = False,
           apply: bool = False, force: bool = False) -> dict:
    """Propose (and with ``apply`` write) card blocks for a skill; always leaves a bundle."""
    target = Target("export-backport", skill_path)
    if not ids:
        raise UsageError("export-backport: give card ids with --ids a,b (see `list`)")
    cards, warnings = pick_cards(memory, ids, force)
    taken = {r.get("id") for r in memory.load("backports")}
    bid = new_id("slbp", taken)
    old = {target.ref: read_text(target.ref, "export-backport"),
           target.skill_md: read_text(target.skill_md, "export-backport") or ""}
    ref_new, actions, header = plan_reference(old[target.ref], cards, bid, target, warnings)
    skill_new, pointer = plan_skill(old[target.skill_md], bid, target.skill_md)
    new = {target.ref: ref_new, target.skill_md: skill_new}
    bundle = os.path.join(memory.root, "exports", "backports", f"{_slug(target.name)}_{bid}")
    result_ids = [b.attrs.get("id") for b in scan(ref_new, REF_NAME) if b.kind == "aha"]
    data = {
        "backport_id": bid, "target_skill": target.name, "target_skill_path": target.root,
        "requested_card_ids": ids,
        **{f"{a}_card_ids": [i for i, act in actions.items() if act == a]
           for a in ("added", "updated", "unchanged")},
        "result_card_ids": result_ids, "applied": apply, "bundle_dir": bundle,
        "files": [_file_entry(target, path, old[path], new[path], apply) for path in new],
        "markers": _markers(target, cards, actions, bid, header, pointer),
        "patch": None, "git_root": target.git_top, "warnings": warnings,
    }
    _write_bundle(data, target, old, new, make_diff)
    if apply:
        _apply(data, target, old, new)
        _mark(memory, cards, actions, bid, target.name)
    memory.append("backports", [{"v": model.SCHEMA_VERSION, "id": bid, "ts": model.iso(),
                                 **{k: data[k] for k in PROVENANCE}}])
    return data


PROVENANCE = ("backport_id", "target_skill", "target_skill_path", "requested_card_ids",
              "added_card_ids", "updated_card_ids", "unchanged_card_ids", "result_card_ids",
              "applied", "bundle_dir")


def _file_entry(target: Target, path: str, old: Optional[str], new: str, apply: bool) -> dict:
    change = "created" if old is None else "unchanged" if old == new else "modified"
    rel = target.rel(path)
    return {"path": rel, "repo_path": target.repo_rel(path), "change": change,
            "proposed": f"proposed/{rel}",
            "backup": f"backup/{rel}" if apply and change == "modified" else None}


def _markers(target: Target, cards: List[dict], actions: Dict[str, str], bid: str,
             header: str, pointer: str) -> List[dict]:
    ref, skill = target.rel(target.ref), target.rel(target.skill_md)
    out = [{"file": skill, "marker": "self-learning:backport", "id": bid, "action": pointer},
           {"file": ref, "marker": "self-learning:aha-header", "id": None, "action": header}]
    return out + [{"file": ref, "marker": "self-learning:aha", "id": c["id"],
                   "action": actions[c["id"]]} for c in cards]


def _write_bundle(data: dict, target: Target, old: dict, new: dict, make_diff: bool) -> None:
    bundle = data["bundle_dir"]
    for path, text in new.items():
        store.atomic_write(os.path.join(bundle, "proposed", target.rel(path)),
                           text.encode("utf-8", "surrogateescape"))
    if make_diff:
        patch = "".join(unified(old[p], new[p], target.repo_rel(p)) for p in new)
        if patch:
            store.atomic_write(os.path.join(bundle, "backport.patch"),
                               patch.encode("utf-8", "surrogateescape"))
            data["patch"] = os.path.join(bundle, "backport.patch")
    manifest = {"schema": 1, "ts": model.iso(), **data}
    store.atomic_write(os.path.join(bundle, "manifest.json"),
                       json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    store.atomic_write(os.path.join(bundle, "README.md"), _readme(data))


def _readme(data: dict) -> str:
    bid, root = data["backport_id"], data["target_skill_path"]
    changed = [f for f in data["files"] if f["change"] != "unchanged"]
    lines = [f"# Backport {bid} into skill `{data['target_skill']}`", "",
             f"Target: `{root}`. {'Applied' if data['applied'] else 'Dry run: nothing there changed'}.",
             "", "Cards: " + "; ".join(f"{a} {', '.join(data[a + '_card_ids'])}"
                                       for a in ("added", "updated", "unchanged")
                                       if data[a + "_card_ids"]) + ".", "",
             "## Files", ""]
    lines += [f"- `{f['path']}`: {f['change']} (proposed full file: `{f['proposed']}`)"
              for f in data["files"]]
    lines += ["", "## Apply", ""]
    if not changed:
        lines.append("Nothing to apply: the skill already holds these cards as they are.")
    elif not data["applied"] and data["patch"]:
        lines += ["Rerun the export with `--apply`, or check and apply the patch:", "",
                  "```sh", f"cd {data['git_root'] or root}", f"git apply --check {data['patch']}",
                  f"git apply {data['patch']}", "```", "",
                  "or copy the files under `proposed/` over the skill's files."]
    elif not data["applied"]:
        lines.append("Rerun the export with `--apply` (or `--make-diff` for a patch), or copy "
                     "the files under `proposed/` over the skill's files.")
    else:
        lines.append("Already applied; the files as they were sit under `backup/`.")
    lines += ["", "## Remove", "", "Take out the blocks carrying this backport id (other bytes stay):",
              "", "```sh", f"{SCRIPT} backport-remove --skill-path {root} --backport-id {bid} --apply",
              "```", "", "or copy the files under `backup/` back (applied exports only)."]
    return "\n".join(lines) + "\n"


def _apply(data: dict, target: Target, old: dict, new: dict) -> None:
    changed = [p for p in new if old[p] != new[p]]
    try:
        for path in changed:
            if old[path] is not None:
                store.atomic_write(os.path.join(data["bundle_dir"], "backup", target.rel(path)),
                                   old[path].encode("utf-8", "surrogateescape"))
        for path in changed:
            write_text(path, new[path])
    except OSError as exc:
        raise SelfLearningError(f"export-backport: cannot write {exc.filename}: {exc.strerror}; "
                                f"originals are in {data['bundle_dir']}/backup") from None


def _mark(memory: Memory, cards: List[dict], actions: Dict[str, str], bid: str,
          skill: str) -> None:
    """A ``backported`` version and an ``aha_backported`` signal for each card that moved."""
    versions, signals = [], []
    for card in cards:
        if actions[card["id"]] == "unchanged" and card.get("status") == "backported":
            continue
        if card.get("status") != "backported":
            version = {k: v for k, v in card.items() if not k.startswith("_")}
            version.update(v=model.SCHEMA_VERSION, ts=model.iso(), status="backported")
            versions.append(version)
        signals.append(model.complete("signal", {
            "kind": "aha_backported", "aha_id": card["id"], "source": "backport",
            "context": f"{bid} into skill {skill}"}))
    memory.append("cards", versions)
    memory.append("signals", signals)


# --- inspect and remove ----------------------------------------------------------------------

def inspect(stores, skill_path: str, backport_id: Optional[str] = None,
            aha_id: Optional[str] = None) -> dict:
    """What the tool put into a skill, and whether each card block still matches its card."""
    target = Target("backport-inspect", skill_path)
    cards = stores.folded("cards")
    records = {r.get("backport_id") or r.get("id"): r for r in stores.project.load("backports")}
    ref_text = read_text(target.ref, "backport-inspect")
    found = scan(ref_text or "", target.ref)
    pointer = [b for b in scan(read_text(target.skill_md, "backport-inspect") or "",
                               target.skill_md) if b.kind == "backport"]
    header = [b for b in found if b.kind == "aha-header"]
    blocks = []
    for b in found:
        cid, bid = b.attrs.get("id"), b.attrs.get("backport")
        if b.kind != "aha" or (aha_id and cid != aha_id) or (backport_id and bid != backport_id):
            continue
        card, record = cards.get(cid), records.get(bid) or {}
        reasons = [why for bad, why in (
            (card is not None and sha(render_card(card)) != b.attrs.get("sha"),
             "card changed since export"),
            (sha(b.body) != b.attrs.get("sha"), "block edited by hand")) if bad]
        blocks.append({"aha_id": cid, "backport_id": bid, "line": b.line,
                       "state": "unknown" if card is None else "drifted" if reasons else "current",
                       "reasons": reasons + ([] if card else ["card not in the store"]),
                       "title": (card or {}).get("title") or b.body.split("\n", 1)[0][4:],
                       "card_status": (card or {}).get("status"),
                       "backport": {k: record.get(k) for k in ("ts", "applied", "bundle_dir")}
                       if record else None})
    return {"target_skill": target.name, "skill_path": target.root,
            "reference_file": target.rel(target.ref) if ref_text is not None else None,
            "pointer": {"file": target.rel(target.skill_md), "id": pointer[0].attrs.get("id"),
                        "line": pointer[0].line} if pointer else None,
            "header": {"backport_id": header[0].attrs.get("backport"), "line": header[0].line,
                       "file": header[0].attrs.get("file")} if header else None,
            "blocks": blocks,
            "counts": {s: sum(1 for b in blocks if b["state"] == s)
                       for s in ("current", "drifted", "unknown")}}


def remove(memory: Memory, skill_path: str, backport_id: Optional[str] = None,
           aha_id: Optional[str] = None, apply: bool = False) -> dict:
    """Cut exactly the chosen card blocks; the header and pointer go with the last card."""
    command = "backport-remove"
    target = Target(command, skill_path)
    if bool(backport_id) == bool(aha_id):
        raise UsageError(f"{command}: give exactly one of --backport-id or --aha-id "
                         "(see `backport-inspect`)")
    old = {target.ref: read_text(target.ref, command),
           target.skill_md: read_text(target.skill_md, command) or ""}
    ref = old[target.ref] or ""
    chosen = [b for b in scan(ref, target.ref) if b.kind == "aha" and (
        b.attrs.get("backport") == backport_id if backport_id else b.attrs.get("id") == aha_id)]
    for b in reversed(chosen):
        ref = cut(ref, b)
    new = {target.ref: ref, target.skill_md: old[target.skill_md]}
    left = [b.attrs.get("id") for b in scan(ref, target.ref) if b.kind == "aha"]
    delete, rmdir = False, False
    if chosen and not left:
        headers = [b for b in scan(ref, target.ref) if b.kind == "aha-header"]
        for b in reversed(headers):
            ref = cut(ref, b)
        delete = any(h.attrs.get("file") == "created" for h in headers) and not ref.strip()
        rmdir = delete and any(h.attrs.get("dir") == "created" for h in headers)
        new[target.ref] = None if delete else ref
        skill = new[target.skill_md]
        for b in reversed([b for b in scan(skill, target.skill_md) if b.kind == "backport"]):
            skill = cut(skill, b)
        new[target.skill_md] = skill
    files = [{"path": target.rel(p), "change": "deleted" if new[p] is None and old[p] is not None
              else "unchanged" if new[p] == old[p] else "modified"} for p in new]
    data = {"target_skill": target.name, "skill_path": target.root, "applied": apply,
            "removed": [{"aha_id": b.attrs.get("id"), "backport_id": b.attrs.get("backport"),
                         "line": b.line} for b in chosen],
            "remaining_card_ids": left, "files": files, "backup_dir": None,
            "status_changes": _unmark_plan(memory, target, [b.attrs.get("id") for b in chosen])}
    if apply and chosen:
        data["backup_dir"] = _remove_files(memory, target, old, new, rmdir)
        _unmark(memory, data["status_changes"], target.name)
    return data


def _unmark_plan(memory: Memory, target: Target, ids: List[str]) -> List[dict]:
    """The backported cards whose last block leaves with this removal, and the status each
    had before it was backported (``accepted`` when no earlier version says)."""
    cards = memory.folded("cards")
    gone = [cid for cid in dict.fromkeys(ids)
            if (cards.get(cid) or {}).get("status") == "backported"
            and not _held_elsewhere(memory, cid, target.root)]
    before: Dict[str, str] = {}
    for line in memory.load("cards"):
        status = line.get("status")
        if line.get("id") in gone and isinstance(status, str) and status != "backported":
            before[line["id"]] = model.normalize_status(status)
    return [{"aha_id": cid, "from": "backported", "to": before.get(cid, "accepted")}
            for cid in gone]


def _held_elsewhere(memory: Memory, cid: str, root: str) -> bool:
    """True when another skill an applied backport wrote this card into still holds its block."""
    others = {r.get("target_skill_path") for r in memory.load("backports")
              if r.get("applied") and cid in (r.get("result_card_ids") or [])}
    for other in others - {root, None}:
        ref = os.path.join(str(other), "references", REF_NAME)
        try:
            text = read_text(ref, "backport-remove")
            if text and any(b.kind == "aha" and b.attrs.get("id") == cid
                            for b in scan(text, ref)):
                return True
        except SelfLearningError:
            return True  # markers broken there: it cannot be told, so the card keeps its claim
    return False


def _unmark(memory: Memory, changes: List[dict], skill: str) -> None:
    """A version with the status from before the backport and an ``aha_status`` signal."""
    if not changes:
        return
    cards = memory.folded("cards")
    memory.append_all([
        ("cards", [update.new_version(cards[c["aha_id"]], status=c["to"]) for c in changes]),
        ("signals", [model.complete("signal", {
            "kind": "aha_status", "aha_id": c["aha_id"], "source": "backport",
            "context": f"backported -> {c['to']}: its block left skill {skill}"})
            for c in changes])])


def _remove_files(memory: Memory, target: Target, old: dict, new: dict, rmdir: bool) -> str:
    backup = os.path.join(memory.root, "exports", "backports",
                          f"{_slug(target.name)}_{new_id('slrm')}", "backup")
    changed = [p for p in new if new[p] != old[p]]
    for path in changed:
        store.atomic_write(os.path.join(backup, target.rel(path)),
                           old[path].encode("utf-8", "surrogateescape"))
    try:  # writes before the deletion: a refused write then leaves both files as they were
        for path in sorted(changed, key=lambda p: new[p] is None):
            if new[path] is None:
                os.unlink(path)
            else:
                write_text(path, new[path])
        if rmdir and not os.listdir(target.ref_dir):
            os.rmdir(target.ref_dir)
    except OSError as exc:
        raise SelfLearningError(f"backport-remove: cannot write {exc.filename}: {exc.strerror}; "
                                f"the files as they were are in {backup}") from None
    return backup


# --- text for people -----------------------------------------------------------------------

def render_export(data: dict) -> List[str]:
    verb = {True: ("added", "updated", "unchanged"),
            False: ("would add", "would update", "unchanged")}[data["applied"]]
    lines = [f"backport {data['backport_id']} into skill {data['target_skill']} "
             f"({data['target_skill_path']})" + ("" if data["applied"] else ": dry run, "
                                                 "nothing there was changed")]
    for action, label in zip(("added", "updated", "unchanged"), verb):
        lines += [f"  {label} {cid}" for cid in data[f"{action}_card_ids"]]
    for f in data["files"]:
        if f["change"] != "unchanged":
            lines.append(f"  {f['path']}: {f['change'] if data['applied'] else 'would be ' + f['change']}")
    if all(f["change"] == "unchanged" for f in data["files"]):
        lines.append("  the skill already holds these cards as they are; nothing to change")
    lines.append(f"bundle: {data['bundle_dir']}")
    if data["patch"]:
        lines.append(f"patch: {data['patch']} (from {data['git_root'] or data['target_skill_path']}: "
                     f"git apply {data['patch']})")
    if not data["applied"] and any(f["change"] != "unchanged" for f in data["files"]):
        lines.append("to write it: run the same command with --apply")
    return lines


def render_inspect(data: dict) -> List[str]:
    where = data["reference_file"] or "references/" + REF_NAME + " (absent)"
    lines = [f"skill {data['target_skill']} ({data['skill_path']}): "
             + (f"pointer in {data['pointer']['file']} from {data['pointer']['id']}"
                if data["pointer"] else "no pointer in SKILL.md")
             + f"; {len(data['blocks'])} card block(s) in {where}"]
    for b in data["blocks"]:
        why = f" ({'; '.join(b['reasons'])})" if b["reasons"] else ""
        lines.append(f"  {b['aha_id']}  {b['state']}{why}  from {b['backport_id']}  "
                     f"line {b['line']}  {b['title']}")
    return lines


def render_remove(data: dict) -> List[str]:
    if not data["removed"]:
        return [f"nothing to remove in {data['skill_path']}: no card block matches "
                f"(blocks there: {', '.join(data['remaining_card_ids']) or 'none'}; "
                "see `backport-inspect`)"]
    verb = "removed" if data["applied"] else "would remove"
    lines = [f"{verb} {b['aha_id']} (from {b['backport_id']}, line {b['line']})"
             for b in data["removed"]]
    lines += [f"  {f['path']}: {f['change'] if data['applied'] else 'would be ' + f['change']}"
              for f in data["files"] if f["change"] != "unchanged"]
    lines += [f"  card {c['aha_id']}: {'now' if data['applied'] else 'would be'} {c['to']} "
              "(no longer backported)" for c in data["status_changes"]]
    lines.append(f"backup: {data['backup_dir']}" if data["applied"]
                 else "to do it: run the same command with --apply")
    return lines
