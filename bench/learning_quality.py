#!/usr/bin/env python3
"""Learning quality on real sessions: replay public Claude Code transcripts, judge the lessons.

Each project of bench/learning/manifest.json gets a throwaway repository and store; its
sessions go through `ingest-transcripts` -> `maintain --force` (which mines) in-process. Every
mined card is then judged by bench/learning/labels.json (useful / vague / noise / wrong, first
rule that matches the card's project, kind and text wins; a card no rule matches is
`unlabelled`) and the hand-written gold lessons of bench/learning/gold.json are looked for
among the useful cards. Each set of the manifest is a group of its own: its projects' rows and
a total (``total`` for the tuning set, the sessions without a ``set``, which the rules were
written from; the set's name for the others, e.g. ``held-out`` and ``held-out-2``, whose gold was
written before the miner saw them). What each set is: ``sets`` in the manifest.
A session whose manifest entry has ``"root": "shared"`` is read from the shared sessions folder
($SELF_LEARNING_BENCH_SESSIONS, else ../shared/learning-sessions beside the repository): data
fetched from public repositories is kept there, not committed. A set whose files are not there
is skipped with one line on stderr; a file that is there must have the manifest's SHA-256.
Usage: python3 bench/learning_quality.py [--format text|json] [--show]
"""
import argparse
import atexit
import contextlib
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "bench", "learning")
SHARED = os.environ.get("SELF_LEARNING_BENCH_SESSIONS") or os.path.join(
    os.path.dirname(REPO), "shared", "learning-sessions")
MIRRORS = os.environ.get("SELF_LEARNING_BENCH_MIRRORS") or os.path.join(
    os.path.dirname(REPO), ".mirror")  # the snapshots the search library's fetch brings
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, DATA)  # prepare.py

from selflearn.cli import parser as cli  # noqa: E402
from selflearn.storage import store  # noqa: E402

LABELS = ("useful", "vague", "noise", "wrong", "unlabelled")
TUNING = "tuning"  # the set of the sessions the manifest gives no `set`


def set_of(session: dict) -> str:
    return session.get("set", TUNING)


def sets(manifest: dict) -> List[str]:
    """The manifest's sets in order of first appearance, the tuning set first: each one is
    reported apart, so a set nobody tuned on is never averaged into one that was."""
    return list(dict.fromkeys([TUNING] + [set_of(s) for s in manifest["sessions"]]))


def total_name(group: str) -> str:
    """The name of a set's total row (``total`` for the tuning set, as the figures always had)."""
    return "total" if group == TUNING else group


def load(name: str) -> dict:
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        return json.load(fh)


def path_of(session: dict) -> str:
    """Where a session's transcript is: bench/learning/, the shared folder for the sets whose
    transcripts may not be committed (``"root": "shared"``), or, for a set read straight from
    a fetched snapshot (``"root": "mirror"``), a file prepared from it for this run only."""
    if session.get("root") == "mirror":
        return _from_mirror(session)
    return os.path.join(SHARED if session.get("root") == "shared" else DATA, session["file"])


_PREPARED: Dict[str, str] = {}  # snapshot and blob -> the file this run prepared from them


def _from_mirror(session: dict) -> str:
    """The transcript ``blob`` (``<commit>:<path>``) of the snapshot ``git_dir`` (under
    MIRRORS), prepared as bench/learning/prepare.py does, in a folder removed when the run
    ends: nothing of the fetched data is kept. "" when the snapshot is not on this machine."""
    git_dir, blob = os.path.join(MIRRORS, session["git_dir"]), session["blob"]
    key = f"{git_dir}\n{blob}"
    if key not in _PREPARED:
        done = subprocess.run(["git", "--git-dir", git_dir, "show", blob], capture_output=True)
        if done.returncode != 0:
            return ""
        import prepare
        path = os.path.join(_scratch(), hashlib.sha256(key.encode()).hexdigest()[:16] + ".jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(prepare.prepared(done.stdout.decode("utf-8", "replace")))
        _PREPARED[key] = path
    return _PREPARED[key]


@functools.lru_cache(maxsize=None)
def _scratch() -> str:
    folder = tempfile.mkdtemp(prefix="learning-bench-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def available(manifest: dict) -> dict:
    """The manifest without the sets whose files are absent (a machine without the shared
    folder or the snapshots, such as CI, skips them, one line each); a file that is there but
    is not the one the manifest names stops the benchmark, as its figures would mean nothing."""
    missing: Dict[str, int] = {}
    for s in manifest["sessions"]:
        if s.get("root") not in ("shared", "mirror"):
            continue
        path = path_of(s)
        if not path or not os.path.exists(path):
            missing[set_of(s)] = missing.get(set_of(s), 0) + 1
            continue
        with open(path, "rb") as fh:
            if hashlib.sha256(fh.read()).hexdigest() != s["sha256"]:
                sys.exit(f"learning bench: error: {path} is not the file of "
                         f"{s['session']} (its SHA-256 differs from the manifest's)")
    for group, n in missing.items():
        where = MIRRORS if any(s.get("root") == "mirror" and set_of(s) == group
                               for s in manifest["sessions"]) else SHARED
        print(f"learning bench: set {group} skipped: {n} of its sessions are not in {where} "
              "(set SELF_LEARNING_BENCH_SESSIONS or SELF_LEARNING_BENCH_MIRRORS)", file=sys.stderr)
    return dict(manifest, sessions=[s for s in manifest["sessions"] if set_of(s) not in missing])


def _run(argv: List[str]) -> dict:
    """One in-process command with JSON output; a failure stops the benchmark."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv + ["--format", "json"])
    if code != 0:
        raise SystemExit(f"learning_quality: {' '.join(argv[:1])} failed ({code}): {err.getvalue()}")
    return json.loads(out.getvalue() or "{}")


def replay(project: str, files: List[str], root: str) -> List[dict]:
    """The mined cards (latest version of each) after replaying ``files`` into a fresh store."""
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    _run(["ingest-transcripts", "--repo-root", root, *files])
    _run(["maintain", "--force", "--repo-root", root])
    paths = _run(["paths", "--repo-root", root])
    cards_path = paths["files"]["cards"]
    latest: Dict[str, dict] = {}
    for card in store.read(cards_path)[0] if cards_path else []:
        latest[card.get("id")] = card
    return [c for c in latest.values() if c.get("origin") == "mined"]


def text_of(card: dict) -> str:
    """What a rule or a gold lesson is matched against: the words a reader sees."""
    parts = [card.get("title", ""), card.get("when_to_use", ""), card.get("problem", "")]
    parts += list(card.get("solution_steps") or [])
    return "\n".join(str(p) for p in parts)


def kind_of(card: dict) -> str:
    tags = card.get("tags") or []
    for kind in ("failure", "edit", "bypass", "denied", "approved", "preference", "convention"):
        if kind in tags:
            return kind
    return str(card.get("key", "")).split(":")[1] if ":" in str(card.get("key", "")) else "?"


def label(card: dict, project: str, rules: List[dict]) -> dict:
    """The first rule of ``labels.json`` that matches the card, else ``unlabelled``."""
    text, kind = text_of(card), kind_of(card)
    for rule in rules:
        if rule.get("project", project) != project or rule.get("kind", kind) != kind:
            continue
        if re.search(rule["match"], text):
            return {"label": rule["label"], "rule": rule["match"], "why": rule.get("why", "")}
    return {"label": "unlabelled", "rule": "", "why": ""}


def gold_found(g: dict, judged: List[dict]) -> bool:
    """A gold lesson is found when a useful card of its project states it (and its fix)."""
    for j in judged:
        if j["project"] != g["project"] or j["label"] != "useful":
            continue
        text = text_of(j["card"])
        if re.search(g["match"], text) and (not g.get("needs") or re.search(g["needs"], text)):
            return True
    return False


def measure() -> dict:
    """Replay every project; the judged cards, the gold results and the totals."""
    manifest, rules, gold = available(load("manifest.json")), load("labels.json")["rules"], \
        load("gold.json")
    projects: Dict[str, List[str]] = {}
    for s in manifest["sessions"]:
        projects.setdefault(s["project"], []).append(path_of(s))
    judged: List[dict] = []
    saved = {k: os.environ.get(k) for k in ("SELF_LEARNING_USER", "SELF_LEARNING_REPO_ROOT")}
    os.environ["SELF_LEARNING_USER"] = "bench"
    os.environ.pop("SELF_LEARNING_REPO_ROOT", None)
    try:
        with tempfile.TemporaryDirectory(prefix="learning-quality-") as tmp:
            for project, files in projects.items():
                for card in replay(project, files, os.path.join(tmp, project)):
                    judged.append(dict(label(card, project, rules), project=project, card=card))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    found = {g["id"]: gold_found(g, judged) for g in gold["gold"]}
    group_of = {s["project"]: set_of(s) for s in manifest["sessions"]}
    rows, shares = [], {}
    for group in sets(manifest):
        members, name = [p for p in projects if group_of[p] == group], total_name(group)
        if not members:
            continue
        for project in members + [name]:
            scope = members if project == name else [project]
            rows.append(dict(_row(project, scope, manifest, judged, gold["gold"], found), set=group))
        total = rows[-1]
        shares[group] = {"about": manifest.get("sets", {}).get(group, ""), "wrong": total["wrong"],
                         "useful_share": _share(total["useful"], total["mined"]),
                         "gold_share": _share(total["gold_found"], total["gold"])}
    tuning = shares.get(TUNING, {})
    return {"schema": 1, "rows": rows, "gold_found": found,
            "useful_share": tuning.get("useful_share", 0.0),
            "gold_share": tuning.get("gold_share", 0.0), "sets": shares,
            "lessons": [{"project": j["project"], "label": j["label"], "title": j["card"].get("title"),
                         "steps": j["card"].get("solution_steps") or [], "key": j["card"].get("key"),
                         "status": j["card"].get("status"), "confidence": j["card"].get("confidence")}
                        for j in judged]}


def _row(project: str, scope: List[str], manifest: dict, judged: List[dict], gold: List[dict],
         found: Dict[str, bool]) -> dict:
    """One line of the table: the sessions, lessons and gold lessons of ``scope``'s projects."""
    mine = [j for j in judged if j["project"] in scope]
    golds = [g for g in gold if g["project"] in scope]
    row = {"project": project, "sessions": sum(1 for s in manifest["sessions"]
                                               if s["project"] in scope),
           "mined": len(mine), "gold": len(golds), "gold_found": sum(found[g["id"]] for g in golds)}
    row.update({name: sum(1 for j in mine if j["label"] == name) for name in LABELS})
    return row


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def render(data: dict, show: bool) -> List[str]:
    head = ("project", "sessions", "mined", "useful", "vague", "noise", "wrong", "unlabelled", "gold")
    lines = ["{:<20}{:>9}{:>7}{:>8}{:>7}{:>7}{:>7}{:>11}{:>9}".format(*head)]
    for r in data["rows"]:
        lines.append("{:<20}{:>9}{:>7}{:>8}{:>7}{:>7}{:>7}{:>11}{:>9}".format(
            r["project"], r["sessions"], r["mined"], r["useful"], r["vague"], r["noise"],
            r["wrong"], r["unlabelled"], f"{r['gold_found']}/{r['gold']}"))
    for group, share in data["sets"].items():
        name = "useful" if group == TUNING else f"{group} ({share['about']}): useful"
        lines.append(f"{name}: {share['useful_share']:.0%} of mined lessons; gold found: "
                     f"{share['gold_share']:.0%}; wrong: {share['wrong']}")
    if show:
        for j in data["lessons"]:
            lines.append(f"  [{j['label']}] {j['project']}: {j['title']}"
                         + "".join(f"\n      step: {s}" for s in j["steps"]))
        lines += [f"  gold {'found' if ok else 'MISSED'}: {gid}" for gid, ok in data["gold_found"].items()]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--show", action="store_true", help="list every lesson and gold lesson")
    args = parser.parse_args(argv)
    data = measure()
    print(json.dumps(data, indent=1) if args.format == "json" else "\n".join(render(data, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
