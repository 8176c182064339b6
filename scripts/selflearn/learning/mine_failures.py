"""Miner ``failures``: tool failures, the episodes that recovered from them, and what fixed it.

Failures are fingerprinted (``key``: ``fingerprint.of_failure``, a relative path not found
kept apart from a missing folder) and clustered across sessions. After a
shell failure, the next ``FIX_WINDOW`` tool events of the same session are the episode: the
steps taken and the call that recovered. A lesson is written only where the fix is certain:
the command the error itself suggested (a hint) succeeding; a succeeding variant of the failed
command doing its job with nothing changed in between (raw arguments compared: the same
subject and files, ``fix_shell.same_target``; another file is another job, not a fix), or
the command without a wrapper that could not run it; the steps taken before the failed
command ran again and no longer failed that way (installing a dependency, editing a config file); an edit of the file
the error names that changes what the error is about; a command doing a missing program's
job. A success whose status is hidden (``| tail``, ``|| true``) proves nothing (a hinted
command: not until the next call moves on to another program), a riskier
variant (``--no-verify``, ``--force``, ``sudo``, ...) is never a fix, and whatever merely
succeeded next is no fix; a failure whose output names no cause (only ``exit code 1`` or a
count) is no lesson. Constants are documented in references/LEARNING.md.
"""

from typing import Dict, List, Optional, Tuple

from ..observation import causes, commands
from . import callshape, fingerprint, fix_edits, fix_shell as sh
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut, ignored, missing, \
    missing_skill, verdict
from ..storage.screen import fence

KIND = "failures"
AGG_VERSION = 6             # 2: cause lines from the whole output, <ref>s, hints, steps;
                            # 3: the file a failure names, edits of it, programs replaced;
                            # 4: waiting failures as records (edits, files written), folders
                            # followed through relative cds, only certain fixes;
                            # 5: no count line as the cause, no comment as the program, the
                            # paths an error names kept with a waiting failure;
                            # 6: a relative path not found apart from a missing folder
_SID = b'"session_id": "'  # how fastjson (hooks, transcripts) writes the key
_CD = b'"args": "cd '        # a shell call starting with cd (moves the shell for later calls)

FIX_WINDOW = 8              # a fix must come within this many tool events of the same session
MAX_EVIDENCE_SESSIONS = 5   # sessions cited in evidence; later ones only raise the count
MAX_FIXES = 2               # fixes named in solution_steps, hinted first, then most frequent
MAX_FIXES_KEPT = 10         # distinct fixes remembered per failure
MAX_STEPS_KEPT = 3          # steps between a failure and its re-run remembered per failure
MAX_CLUSTERS = 5000         # failures remembered; beyond it, the least recent ones not yet a
                            # lesson are dropped (bounds the checkpoint, so every run's cost)
MAX_PENDING_SESSIONS = 1000  # sessions waiting for a fix; the least recent are dropped
MAX_CWD_SESSIONS = 1000     # sessions whose last `cd` is remembered; the least recent dropped
CUT_TITLE, CUT_ARGS, CUT_ERROR = 80, 120, 160  # characters of head, command, error shown
HINTED_CONFIDENCE = 0.35    # a lesson from one session whose hinted fix was seen to work
_NAMED = "(the file the error names)"  # how a step that edited that file ends


def miner(agg: dict, setup: Setup) -> Run:
    """Tool failures clustered by fingerprint, with what recovered from them; a cluster
    with a certain fix is a lesson (``_certain``).

    ``agg`` (saved in the checkpoint) holds ``clusters`` by digest, ``pending``: per session,
    the shell failures still waiting for what recovers (one record each: the failed command,
    its hints, the file and names its cause line is about, the steps taken since), and
    ``cwd``: per session, the folder its ``cd``s left the shell in.
    """
    agg["version"] = AGG_VERSION
    clusters: Dict[str, dict] = agg.setdefault("clusters", {})
    cwd: Dict[str, str] = agg.setdefault("cwd", {})  # session -> folder its last cd went to
    pending: Dict[str, list] = agg.setdefault("pending", {})
    sessions: Dict[str, set] = {}  # cluster -> its sessions as a set, built when first needed
    waiting = {sid.encode("utf-8") for sid in pending}  # as they appear in a line
    changed: set = set()

    def wants(raw: bytes) -> bool:
        if b"tool_failure" in raw or (_CD in raw and b"tool_success" in raw):
            return True
        if not waiting or b"tool_success" not in raw:
            return False  # (a failure is always parsed: it also advances a waiting session)
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
        if event == "tool_success" and obs.get("tool_kind") == "shell":
            _moved(sid, str(obs.get("args") or ""), str(obs.get("cwd") or ""))
        if sid in pending:
            _advance(sid, obs)
        if event == "tool_failure" and not ignored(obs):
            _failure(sid, obs)

    def _advance(sid: str, obs: dict) -> None:
        left = []
        for entry in pending[sid]:
            cluster = clusters.get(entry["fp"])
            if cluster is not None and not _watch(sid, obs, entry, cluster):
                entry["left"] -= 1
                if entry["left"] > 0:
                    left.append(entry)
                elif entry.get("maybe"):  # the window closed on a hint nothing re-ran
                    _hinted(sid, entry, cluster)
        if left:
            pending[sid] = left
        else:
            del pending[sid]
            waiting.discard(sid.encode("utf-8"))

    def _watch(sid: str, obs: dict, entry: dict, cluster: dict) -> bool:
        """What one later tool event says about a waiting failure: a fix (recorded), a step,
        or nothing; True when the wait is over."""
        shell, ok = obs.get("tool_kind") == "shell", obs.get("event") == "tool_success"
        args = str(obs.get("args") or "")
        if shell and entry.get("maybe"):
            if obs.get("family") != entry["maybe"][1]:  # it moved on: the hint was enough
                _hinted(sid, entry, cluster)
                return True
            entry.pop("maybe")  # the same program again, otherwise: it was not
        if shell and ok and sh.unstages(args):
            entry["narrowed"] = True  # files left out of the commit: what passes next is no fix
            return False
        outcome = _outcome(obs, entry) if shell and obs.get("family") else None
        if outcome is not None:
            how, what = outcome
            if how == "hint" and causes.hidden_success(args):
                # its status is hidden (`| tail`): the fix only if the next call moves on
                entry["maybe"] = [what, obs.get("family"), obs.get("id", "?"), obs.get("ts", "?")]
                return False
            if how == "retry":
                cluster["retries"] = cluster.get("retries", 0) + 1
                return True
            if how in ("done", "skip", "diagnostic"):
                if how == "diagnostic":
                    _fix(cluster, entry, what, sid, obs, how)
                return how == "done"
            named = [x for x in entry["steps"] if x.endswith(_NAMED)]
            _fix(cluster, entry, what, sid, obs, how)
            if how == "program" and not named:
                _step(entry, f"run `{what}`")  # another subcommand may prepare a re-run
                return False
            return True
        if shell and ok and not causes.hidden_success(args) and not sh.looking(args) and \
                not sh.undoes(args, entry["flat"]) and (
                entry["program"] != "missing" or sh.provides(args, entry["fam"])):
            # (a risky step is kept: it makes the fix it is part of one for a person to judge)
            _step(entry, f"run `{cut(sh.private(causes.core(args), setup.repo_root), CUT_ARGS)}`")
        elif obs.get("event") == "tool_success" and obs.get("tool_kind") in ("edit", "write"):
            return _edited(sid, obs, entry, cluster)
        return False

    def _edited(sid: str, obs: dict, entry: dict, cluster: dict) -> bool:
        """An edit or write while a failure waits: a step when it is of the file the error
        names or of a config file; the fix when it puts in what the error said to use."""
        entry["touched"] = True  # what passes next may owe it to this edit
        path = str(obs.get("file") or obs.get("args") or "")
        if obs.get("tool_kind") == "write" and path:
            entry["written"] = (entry["written"] + [path.rsplit("/", 1)[-1]])[-MAX_STEPS_KEPT:]
        if entry["named"] and fix_edits.edits_named(obs, entry["named"]):
            step, how = fix_edits.describe(obs, entry["named"], entry["names"], entry["suggested"])
            if how == "suggested":  # the edit puts in what the error said to use
                _fix(cluster, entry, step, sid, obs, "edit")
                return True
            _step(entry, step)
            entry["edited"] = entry["edited"] or bool(how)
        elif sh.config_edit(obs):
            step, how = fix_edits.describe(obs, sh.config_edit(obs), entry["names"], [])
            _step(entry, step.replace(" " + _NAMED, "") if how else f"edit `{sh.config_edit(obs)}`")
            entry["edited"] = entry["edited"] or bool(how)
        return False

    def _outcome(obs: dict, entry: dict):
        """What a later shell call says about a waiting failure: ``(how, what)`` with how
        ``retry`` (the same command passed with nothing done in between), ``variant`` (the
        same family otherwise), ``program`` (the same program), ``hint``, ``steps``,
        ``edited``, ``instead`` (a missing program's job), ``cd``, ``script``, ``quoted``,
        ``diagnostic`` (a look worth naming), ``skip`` (keep waiting) or ``done`` (the wait
        is over, nothing certain learned); None: not related."""
        ok, args, family = obs.get("event") == "tool_success", str(obs.get("args") or ""), \
            str(obs.get("family") or "")
        failed, flat, fam = entry["failed"], entry["flat"], entry["fam"]
        rest = entry["after_cd"]
        if rest and family != "cd" and rest in [sh.flat(args)] + sh.segments(args):
            # what followed the failed cd ran without it: the shell already was there
            if ok or key(obs)[1] != entry["fp"]:
                return "cd", rest
        core = cut(sh.private(causes.core(args), setup.repo_root), CUT_ARGS)
        if ok and sh.hinted(args, entry["hints"]) and not causes.riskier(args, failed) \
                and "||" not in args:  # (a fallback ran if it failed: no proof it worked)
            return "hint", core
        if entry["program"] and sh.other_language(fam, family):
            return None  # `bash -c '…'` does not test what `zsh -c '…'` was to
        if not sh.resembles(fam, family, args) and not sh.same_family(fam, family, args):
            if ok and entry["program"] and sh.same_job(args, flat, fam):
                return "instead", core  # the program was missing: this does its job
            if ok and sh.unwrapped(flat, args):
                return "variant", core  # the program in front could not run it: it ran alone
            return None  # another job, merely run next
        if ok and (causes.hidden_success(args) or causes.riskier(args, failed)):
            return "skip", ""  # proves nothing, or never to recommend
        if ok and sh.looking(args) and not sh.looking(flat):
            return ("diagnostic", core) if sh.diagnostic(args) else ("skip", "")
        if ok and sh.code_changed(flat, sh.flat(args)):
            # other code passed: the code under work was fixed, not how it runs (unless what
            # the error named is gone from it: a relative path made absolute)
            changed = _quoted_fix(flat, sh.flat(args), entry["names"])
            return ("quoted", changed) if changed else ("done", "")
        again = sh.flat(args) == flat or sh.same_words(flat, args, fam) or sh.reran(flat, args)
        if ok and again:  # the same command (or the failing part of it) passed
            if entry.get("narrowed"):
                return "done", ""  # it got through with less staged: nothing fixed
            if entry["steps"]:
                return ("edited" if entry["edited"] else "steps"), steps_text(entry["steps"])
            changed = _quoted_fix(flat, sh.flat(args), entry["names"])
            if changed:
                return "quoted", changed
            return ("done", "") if entry["touched"] else ("retry", "")
        if not ok:
            if again and family == fam and key(obs)[1] != entry["fp"]:
                # it failed otherwise, in the same part: this one was got past, and what comes
                # after fixed the other failure (not a part before it failing: `rm x && cmd`)
                return ("steps", steps_text(entry["steps"])) if entry["steps"] else ("done", "")
            return None
        ran = [w for w in sh.operands(args, family) if w.rsplit("/", 1)[-1] in entry["written"]]
        if ran:  # it runs a file written since: the code went into a script
            return "script", f"write the code to `{ran[0].rsplit('/', 1)[-1]}` and run `{core}`"
        if entry["program"] and family.split()[0] != fam.split()[0]:
            if entry.get("skill"):  # the part that did the skill's job, to the skill's name
                said = next((s.split() for s in sh.segments(args) if fam in s.split()), [])
                return "instead", " ".join(said[:said.index(fam) + 1]) if said else core
            return "instead", core  # it was missing, or another one answered: this runs it
        if fam.split()[0] in family.split()[1:] or sh.same_family(fam, family, args):
            # the same program (or `python3 -m pytest` for `pytest`) on the same target is a
            # variant; on another one it did another job (`ls b/` after `ls a/`, `rtk git`
            # after `rtk bun`, `python -c '…'` after `python check.py`)
            same = sh.same_target(flat, args, fam, entry["paths"])
            return ("variant", core) if same else ("skip", "")
        return "program", core

    def _step(entry: dict, step: str) -> None:
        if entry["steps"][-1:] != [step]:
            entry["steps"] = (entry["steps"] + [step])[-MAX_STEPS_KEPT:]

    def _hinted(sid: str, entry: dict, cluster: dict) -> None:
        """The hinted command run with its status hidden, now taken as the fix."""
        what, _, obs_id, ts = entry.pop("maybe")
        _fix(cluster, entry, what, sid, {"id": obs_id, "ts": ts}, "hint")

    def _fix(cluster, entry, what, sid, obs, how) -> None:
        fixes = cluster.setdefault("fixes", {})
        key = fingerprint.normalize(what)  # the same fix for another branch or file is one
        fix = fixes.get(key)
        if fix is None:
            if len(fixes) >= MAX_FIXES_KEPT:
                return
            fix = fixes[key] = {"args": what, "failed": entry["failed"], "how": how,
                                "same_family": how == "variant", "count": 0,
                                "seen": [obs.get("id", "?"), sid, obs.get("ts", "?")]}
            before = [x for x in entry["steps"] if how == "variant" or x.endswith(_NAMED)] \
                if how in ("variant", "program", "hint") else []  # (a hint: a conflict resolved)
            if before:
                fix["before"] = steps_text(before)  # what was done first, e.g. the named file
            fix["certain"] = _sure(how, what, before, entry)
            if entry["program"]:
                fix["missing"] = True  # a program was missing: one session may teach it
            if how == "instead" and entry["program"] != "missing":
                fix["via"] = entry["program"]  # the program that answered instead
            if entry.get("skill"):
                fix["skill"] = entry["skill"]
            if how == "variant" and what == entry["failed"]:  # both cut alike: say what changed
                fix["change"] = sh.difference(*(sh.private(c, setup.repo_root) for c in (
                    entry["flat"], causes.core(str(obs.get("args") or "")))))
                fix["certain"] = fix["certain"] and all(fix["change"])  # (else it shows nothing)
        fix["count"] += 1
        changed.add(entry["fp"])

    def _moved(sid: str, args: str, here: str) -> None:
        """Follow the ``cd`` a call starts with to know where later relative paths resolve:
        an absolute folder, or a relative one from where the session was (a client that
        reports the folder after the call already names it)."""
        segs = sh.segments(args) if args.startswith(("cd ", "pushd ")) else []
        said = segs[0].split() if segs else []
        target = said[1].strip("'\"").rstrip("/") if len(said) == 2 else ""
        if not target or target.startswith(("~", "$", "-")):
            return
        base = cwd.get(sid) or ("" if here.endswith("/" + target) else here)
        if target.startswith("/") or base.startswith("/"):
            folder = commands.folder(base, args, "")
        elif here.startswith("/"):
            folder = here  # the client reported the folder after the call: already there
        else:
            return
        cwd.pop(sid, None)
        cwd[sid] = folder  # re-inserted last: least recent first
        while len(cwd) > MAX_CWD_SESSIONS:
            del cwd[next(iter(cwd))]

    def _failure(sid: str, obs: dict) -> None:
        text, fp, raw = key(obs)
        if verdict(raw):
            return  # the edit-test loop: a failing test is about the code under work
        here = str(obs.get("cwd") or "")
        cluster = clusters.get(fp)
        if cluster is None:
            if len(clusters) >= MAX_CLUSTERS:
                _prune()
            cluster = clusters[fp] = {
                "fingerprint": text, "tool": obs.get("tool") or "?",
                "kind": obs.get("tool_kind") or "other", "family": obs.get("family") or "",
                "example": _example(obs, raw), "count": 0, "sessions": [], "seen": [],
                "first": obs.get("ts", ""),
                "folder": commands.folder(here, str(obs.get("args") or ""), setup.repo_root)}
        cluster["count"] += 1
        cluster["last"] = obs.get("ts", "")
        if sid in cwd and "cwd" not in cluster and sh.relative_miss(obs, raw):
            cluster["cwd"] = sh.private(commands.folder(cwd[sid], "", setup.repo_root))
            cluster["example"] = _example(obs, raw)  # the failure this cause is the one of
        known = sessions.get(fp)
        if known is None:
            known = sessions[fp] = set(cluster["sessions"])
        if sid not in known:
            known.add(sid)
            cluster["sessions"].append(sid)
            if len(cluster["seen"]) < MAX_EVIDENCE_SESSIONS:
                cluster["seen"].append([obs.get("id", "?"), sid, obs.get("ts", "?")])
            changed.add(fp)
        skill = missing_skill(obs)
        if obs.get("tool_kind") == "shell" and obs.get("family"):
            _wait(sid, obs, fp, raw)
        elif skill:  # waits like a missing program of the skill's name
            _wait(sid, dict(obs, family=skill), fp, raw, skill)

    def _example(obs: dict, raw: str) -> dict:
        """What a lesson shows of a failure (paths under the repository relative to it)."""
        return {"args": cut(sh.private(str(obs.get("args") or ""), setup.repo_root), CUT_ARGS),
                "error": cut(raw, CUT_ERROR)}

    def _wait(sid: str, obs: dict, fp: str, raw: str, skill: str = "") -> None:
        """Start watching the session for what recovers from this shell failure (or from a
        ``skill`` this setup lacks, named as its program)."""
        args = str(obs.get("args") or "")
        named = fix_edits.named_file(raw)
        names, suggested = fix_edits.subjects(raw)
        names += [n for n in fix_edits.subjects(str(obs.get("error") or ""))[0] if n not in names]
        entries = [p for p in pending.pop(sid, []) if p["fp"] != fp]
        entries.append({
            "fp": fp, "failed": cut(sh.private(args, setup.repo_root), CUT_ARGS),
            "flat": sh.flat(args), "fam": obs["family"], "left": FIX_WINDOW,
            "hints": [sh.flat(h) for h in str(obs.get("hint") or "").splitlines() if h.strip()],
            "steps": [], "program": "missing" if missing(obs) else sh.replaced(obs, raw),
            "after_cd": sh.after_cd(obs), "named": named, "names": names,
            "paths": [w.strip("'\"`:,;()") for w in raw.split() if "/" in w],
            "suggested": suggested if named else [],
            "edited": False, "touched": False, "written": []})
        if skill:
            entries[-1]["skill"] = skill
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
                if fp in clusters and _certain(clusters[fp])]

    return Run(wants, feed, lessons)


def steps_text(steps: List[str]) -> str:
    return ", then ".join(steps)


ONE_SESSION = ("hint", "instead", "variant", "cd", "edit", "edited", "script", "quoted")
def _sure(how: str, what: str, before: List[str], entry: dict) -> bool:
    """Whether a fix certainly changed the outcome. A hint, an edit or a program doing the
    job are; a variant only when nothing was changed before it (or what was done is named:
    a command, a config or a described edit); steps when one of them is named that way;
    another subcommand only after the file the error names was edited (a conflict resolved);
    a diagnostic never."""
    if causes.riskier(" ".join(before + [what]).replace(" -f ", " "), ""):
        return False  # a risky form (--force, sudo), even one the failed call had: a person judges
    if how in ("steps", "edited"):
        return _concrete(entry["steps"])
    if how == "variant":
        return _concrete(before) if before else not entry["touched"]
    if how == "program":
        return bool(before)
    return how != "diagnostic"


def _concrete(steps: List[str]) -> bool:
    """A step that says what it did: a command, a config edit, or an edit's change (not
    only "edit `x.go` (the file the error names)")."""
    return any(not s.endswith(_NAMED) for s in steps)


def _quoted_fix(failed: str, args: str, names: List[str]) -> str:
    """When a command passed again with only its quoted text changed, and the error named
    something of the failed command's quoted text that the passing one no longer has (the
    owner in a GraphQL query), the change; else ''."""
    gone = [n for name in names for n in [name] + name.split("/")
            if len(n) > 2 and n in failed and n not in args]
    if not gone:
        return ""
    old, new = sh.difference(failed, args)
    return f"change `{old}` to `{new}`" if old and new else ""


def _certain(c: dict) -> bool:
    """A lesson is written when a fix is certain: in one session for the kinds that prove
    themselves (a hint, a variant, an edit, a missing program's job, ...), else in
    MIN_SESSIONS sessions."""
    if not c["example"]["error"] or causes.summary(c["example"]["error"]):
        return False  # no cause to name (`exit code 1`, `Found 4 errors.`): the agent says it
    many = len(c["sessions"]) >= MIN_SESSIONS
    return any(f.get("certain", f.get("how") != "diagnostic") and (
        many or f.get("how") in ONE_SESSION or f.get("missing"))
        for f in c.get("fixes", {}).values())


def _step(f: dict) -> str:
    how = f.get("how")
    if how in ("steps", "edited"):
        return f"{f['args']} before `{f['failed']}`: it then no longer failed this way"
    if how == "edit":
        return f["args"]
    if how == "hint":
        first = f"{f['before']}, then " if f.get("before") else ""
        return f"{first}run `{f['args']}` (the error suggests it) after `{f['failed']}` fails"
    if how == "diagnostic":
        return f"to see what failed: `{f['args']}`"
    if how == "cd":
        return (f"the shell already was in that folder (a `cd` lasts from one call to the "
                f"next): run `{f['args']}` without the `cd`, or use paths from the repo root")
    if how == "instead" and f.get("via"):
        return (f"`{f['failed'].split()[0]}` runs `{f['via']}` here (an alias or wrapper with "
                f"other options); `{f['args']}` did the job instead")
    if how == "instead" and f.get("skill"):
        return f"there is no `{f['skill']}` skill in this setup; `{f['args']}` did its job instead"
    if how == "instead" and sh.sets_path(f["args"]):
        return f"the program is not on this shell's PATH; `{f['args']}` (setting PATH) worked"
    if how == "instead":
        return f"the program is not installed here; `{f['args']}` did the job instead"
    if how in ("script", "quoted"):
        return f"{f['args']} (after `{f['failed']}` failed)"
    if f.get("before"):
        return f"{f['before']}, then `{f['args']}` succeeded after `{f['failed']}` failed"
    if f.get("change"):
        return f"use `{f['change'][1]}` instead of `{f['change'][0]}` in `{f['failed']}`"
    if f["same_family"]:
        return f"use `{f['args']}` instead of `{f['failed']}`"
    return f"`{f['args']}` succeeded next, after `{f['failed']}` failed"


def shown_line(line: str) -> str:
    """The raw line as a reader wants it: a leading ``path:line:col:`` location dropped."""
    head, _, rest = line.partition(": ")
    if rest and len(rest) > 8 and ("/" in head or "." in head) and " " not in head and (
            (":" in head and head.replace(":", " ").split()[-1].isdigit())
            or (head.endswith(")") and head.rsplit("(", 1)[-1][:-1].replace(",", "").isdigit())):
        return rest  # path:line:col: and tsc's path(line,col):
    return line


def _lesson(fp: str, c: dict) -> dict:
    """The card for one failure cluster: shown with its raw line, clustered on the normalized."""
    label, head = fingerprint.command_word(c), fingerprint.head_of(c["fingerprint"])
    shown = shown_line(c["example"]["error"]) or head
    n = len(c["sessions"])
    order = {"hint": 0, "instead": 0, "cd": 0, "edit": 0, "edited": 0, "script": 0,
             "quoted": 0, "steps": 1, "variant": 2, "program": 3, "diagnostic": 4}
    fixes = sorted((f for f in c.get("fixes", {}).values()  # only what certainly helped
                    if f.get("certain", True) or f.get("how") == "diagnostic"),
                   key=lambda f: (order.get(f.get("how", "variant"), 2), -f["count"]))[:MAX_FIXES]
    steps = [fingerprint.placeholders(_step(f), c["example"]["error"]) for f in fixes]
    if c.get("cwd") and fixes:
        steps.insert(0, f"the shell was still in `{c['cwd']}` (a `cd` lasts from one call to "
                        "the next): relative paths resolve there; use absolute paths")
    evidence = [f"example ({label}): `{c['example']['args']}` failed with: "
                f"{fence(c['example']['error'], CUT_ERROR)}"]  # tool output: quoted, cut
    evidence += [f"seen {ts} in session {sid} ({oid})" for oid, sid, ts in c["seen"]]
    evidence += [f"fix seen {f['seen'][2]} in session {f['seen'][1]} ({f['seen'][0]}): "
                 + (f["args"] if f.get("how") in ("steps", "edited", "edit", "script", "quoted")
                    else f"`{f['args']}`")
                 for f in fixes]
    proven = any(f.get("how") != "diagnostic" for f in fixes)
    conf = confidence(n, proven) if n >= MIN_SESSIONS else HINTED_CONFIDENCE
    card = {
        "title": f"`{label}` fails with `{cut(shown, CUT_TITLE)}`",
        "when_to_use": f"`{label}` ({c['tool']}) fails with: {fence(shown, CUT_ERROR)}",
        "problem": f"`{label}` failed {c['count']} time(s) in {n} session(s) with: "
                   f"{fence(shown, CUT_ERROR)}",
        "solution_steps": steps, "evidence": evidence,
        "gotchas": ["a plain retry of the same command also succeeded at times: the failure "
                    "may be flaky or depend on state"] if c.get("retries") else [],
        "confidence": conf, "tags": ["mined", "failure", c["kind"]],
        "observations": c["count"], "first_seen": c.get("first") or c["seen"][0][2],
        "last_seen": c.get("last", ""),
        "key": f"mined:failure:{fp}", "origin": "mined", "status": "candidate",
        "trigger": trigger(c), "call": call(c, fixes[0] if fixes else None),
    }
    return {"kind": "failures", "fingerprint": c["fingerprint"], "sessions": n,
            "occurrences": c["count"], "card": {k: v for k, v in card.items() if v != []}}


def stale(agg: dict, setup: Setup) -> Optional[str]:
    """Aggregates of an older fingerprint and fix format are mined again from the start."""
    if agg.get("version") != AGG_VERSION:
        return f"failures: aggregates of an older format (v{agg.get('version', 1)})"
    return None


def call(c: dict, fix: Optional[dict]) -> dict:
    """The lesson's trigger shape (``callshape``): the fix's words when it was the same
    command changed, and the folder when the fix was to run it from another one."""
    same = fix is not None and fix.get("how") in ("variant", "hint") and \
        not fix.get("via") and not fix.get("change")
    moved = same and str(fix["args"]).startswith(("cd ", "pushd ")) and \
        not str(fix.get("failed", "")).startswith(("cd ", "pushd "))
    fixed = fingerprint.placeholders(str(fix["args"]), c["example"]["error"]) if same else None
    return callshape.shape(str(c.get("tool") or ""), trigger(c), c["example"]["args"],
                           c["example"]["error"], c.get("folder", "") if moved else "", fixed)


def trigger(c: dict) -> str:
    """What gives the lesson a chance to matter: the shell family, else the tool."""
    return c["family"] if c["kind"] == "shell" and c["family"] else c["tool"]


def recurs(obs: dict) -> Optional[str]:
    """The cluster digest of a failure observation (None for anything else)."""
    if obs.get("event") != "tool_failure" or ignored(obs):
        return None
    _, digest, raw = key(obs)
    return None if verdict(raw) else digest


def key(obs: dict) -> Tuple[str, str, str]:
    """``fingerprint.of_failure``, with a shell's relative path it could not find apart from
    a path that does not exist: the same line, two causes (where the shell was; the folder
    is not there), so one lesson would explain only half of them."""
    text, digest, raw = fingerprint.of_failure(obs)
    if sh.relative_miss(obs, raw):
        text += " (a relative path)"
        digest = fingerprint.digest(text)
    return text, digest, raw
