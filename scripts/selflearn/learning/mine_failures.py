"""Miner ``failures``: the same tool failure in several sessions, and what fixed it.

Failures are fingerprinted (``fingerprint.of_failure``) and clustered across
sessions; a cluster seen in ``MIN_SESSIONS`` sessions becomes a candidate
lesson, or in one session when the command the error itself suggested (a hint)
then succeeded. Within ``FIX_WINDOW`` tool events of the same session, a fix is:
the hinted command succeeding; a succeeding variant of the failed command (raw
arguments compared: a different file is a different command, not a retry); or
the steps taken before the failed command ran again and no longer failed that
way (a command such as installing dependencies, or an edit of a config file).
A success whose status is hidden (``| tail``, ``|| true``) proves nothing, and
a riskier variant (``--no-verify``, ``--force``, ``sudo``, ...) is never a fix.
Constants are documented in references/LEARNING.md.
"""

from functools import lru_cache
from typing import Dict, List, Optional

from ..observation import causes, commands, observe
from . import callshape, fingerprint, fix_edits
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut, ignored, test_verdict
from ..storage.screen import fence

KIND = "failures"
AGG_VERSION = 3             # 2: cause lines from the whole output, <ref>s, hints, steps;
                            # 3: the file a failure names, edits of it, programs replaced
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
# Commands that only look around: never the step that fixed something.
LOOKING = ("ls", "cat", "head", "tail", "grep", "rg", "find", "pwd", "echo", "which", "type",
           "wc", "less", "tree", "stat", "file", "git status", "git diff", "git log", "git show",
           "git branch", "git remote", "sed -n", "awk", "jq", "sleep", "true", "date", "env",
           "gh pr view", "gh pr checks", "gh run view", "gh api", "git ls-files",
           "git check-ignore", "git rev-parse", "git worktree list", "git stash list",
           "git show-ref", "git cat-file", "git config --get", "python3 -c", "python -c")
# An edited file whose name says it configures the build, dependencies or tools.
CONFIG_FILES = ("package.json", "tsconfig.json", "pyproject.toml", "setup.cfg", "setup.py",
                "requirements.txt", "cargo.toml", "go.mod", "mix.exs", "gemfile", "makefile",
                ".env", "pom.xml", "build.gradle", "composer.json", "deno.json", "tox.ini",
                ".golangci.yaml", ".golangci.yml", "jest.config", "vite.config", "webpack.config",
                "babel.config", ".eslintrc", ".prettierrc", "docker-compose", "dockerfile")
CONFIG_DIRS = ("config/", ".github/", ".cargo/", ".vscode/")
_PRELUDE = ("cd", "pushd", "popd", "export", "source", ".", "set", "unset")
_NAMED = "(the file the error names)"  # how a step that edited that file ends


def _resembles(failed_family: str, family: str, args: str) -> bool:
    """Same family, same program, or the failed program named in the command
    (``pytest`` → ``python3 -m pytest``, ``bash -lc 'npm test'`` → ``sh -c 'npm test'``)."""
    program = failed_family.split()[0]
    return family == failed_family or family.split()[0] == program or \
        program in args.replace("'", " ").replace('"', " ").split()


@lru_cache(maxsize=4096)  # pure, and the same commands come back again and again
def _segments(args: str) -> List[str]:
    return [" ".join(s.split()) for s in observe.segments(causes.core(args))]


def _same_family(failed_family: str, family: str, args: str) -> bool:
    """The family, or one segment of a compound command, is the failed family."""
    return family == failed_family or any(
        _family_of(seg) == failed_family for seg in _segments(args))


@lru_cache(maxsize=4096)
def _family_of(segment: str) -> str:
    return observe.command_family(segment)


@lru_cache(maxsize=4096)
def _flat(args: str) -> str:
    return " ".join(causes.core(args).split())


@lru_cache(maxsize=4096)
def _looking(args: str) -> bool:
    """Whether every part of the command only looks around (``ls``, ``git status``, ...)."""
    segs = _segments(args)
    return not segs or all(seg.split()[0] in _PRELUDE or any(
        seg == w.strip() or seg.startswith(w.strip() + " ") for w in LOOKING) for seg in segs)


def _diagnostic(args: str) -> bool:
    """A look-around command specific enough to be worth naming (it has a ``--`` option)."""
    return _looking(args) and " --" in _flat(args)


def _config_edit(obs: dict) -> str:
    """The file an edit or write changed, when it configures the project; else ''."""
    if obs.get("tool_kind") not in ("edit", "write") or obs.get("event") != "tool_success":
        return ""
    path = str(obs.get("file") or obs.get("args") or "")
    name = path.rsplit("/", 1)[-1].lower()
    if name.startswith(CONFIG_FILES) or any(d in path.replace("\\", "/") for d in CONFIG_DIRS):
        return path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1] if "/config/" in path \
            else path.rsplit("/", 1)[-1]
    return ""


def _plain(segment: str) -> List[str]:
    """A command's words with quoted text (a commit message, a heredoc) left out."""
    tokens, quote = [], ""
    for tok in segment.split():
        if quote:
            quote = "" if tok.endswith(quote) else quote
        elif tok[:1] in ("'", '"') or tok.startswith("$("):
            q = '"' if tok.startswith("$(") else tok[0]
            quote = "" if len(tok) > 1 and tok.endswith(q) else q
            tokens.append("<q>")
        else:
            tokens.append(tok.rstrip("\u2026"))
    return tokens


def _same_words(failed: str, args: str, fam: str) -> bool:
    """The segment of ``args`` with the failed family says what the failed one said, up to
    quoted text: the same command run again (another commit message is no fix)."""
    def of(cmd: str) -> List[List[str]]:
        return [_plain(seg) for seg in _segments(cmd) if _family_of(seg) == fam]
    before, after = of(failed), of(args)
    if not before or not after or _where(failed) != _where(args):
        return False  # not in the same folder or environment: another command
    a, b = before[0], after[0]
    if "<q>" in a or "<q>" in b:  # compare up to the first quoted part (it may be cut)
        a, b = a[:a.index("<q>")] if "<q>" in a else a, b[:b.index("<q>")] if "<q>" in b else b
    return a == b


def _where(cmd: str) -> List[str]:
    """The ``cd``/``export``/``source`` parts in front of a command: they change what it does."""
    return [seg for seg in _segments(cmd) if seg.split()[0] in _PRELUDE]


def _operands(args: str, fam: str) -> List[str]:
    """The words after the program of the command's segment of family ``fam`` (or its
    first segment) that are not options: what it acts on."""
    segs = [seg for seg in _segments(args) if _family_of(seg) == fam] \
        or _segments(args)[-1:]
    words = segs[0].split()[1:] if segs else []
    return [w for w in words if not w.startswith("-")]


def _after_cd(obs: dict) -> str:
    """For a failed ``cd x && rest``: ``rest`` (flat), to notice it later run without the cd."""
    if obs.get("family") != "cd":
        return ""
    segs = _segments(str(obs.get("args") or ""))
    return " && ".join(segs[1:]) if len(segs) > 1 and segs[0].startswith("cd ") else ""


def _relative_miss(obs: dict, line: str) -> bool:
    """A shell command could not find a relative path it names (``ls types/``)."""
    low = line.lower()
    if obs.get("tool_kind") != "shell" or not ("no such file" in low or "cannot access" in low):
        return False
    words = [w for seg in _segments(str(obs.get("args") or "")) for w in seg.split()[1:]]
    return any(not w.startswith(("/", "-", "~", "$")) and (w in line or w.rstrip("/") in line)
               for w in words)


def _missing(obs: dict) -> bool:
    """The shell could not find the program (exit 127, ``command not found``)."""
    return obs.get("exit_code") == 127 or "command not found" in str(obs.get("error") or "")


def _replaced(obs: dict, line: str) -> str:
    """The program that answered instead of the one run (an alias or wrapper: ``tree`` run,
    ``lsd: 3: No such file or directory``), else ''. It must be no word of the command, and
    the line must name a word of the command (here ``3`` of ``-L 3``) as what it choked on."""
    if obs.get("tool_kind") != "shell" or line.count(": ") < 2:
        return ""
    other, what = line.split(": ")[:2]
    family = str(obs.get("family") or "")
    words = [w for seg in _segments(str(obs.get("args") or "")) for w in seg.split()]
    if not other.replace("-", "").replace("_", "").isalnum() or other.lower() != other \
            or other in words or not family or other == family.split()[0] \
            or family.split()[0] in observe.RUNNERS:
        return ""
    return other if what in words[1:] else ""


def _stands_in(args: str, flat: str, failed: str) -> bool:
    """Whether a command that succeeded can stand in for a missing program: it is not
    riskier, and it only looks around if the missing one did too (``mise tasks | grep lint``
    does not do a linter's job); unless both only look around (``find | head`` for ``tree``:
    the output is the point), its success must not be hidden."""
    if causes.riskier(args, failed):
        return False
    if _looking(flat):
        return _looking(args)
    return not _looking(args) and not causes.hidden_success(args)


def _hinted(args: str, hints: List[str]) -> bool:
    core = _flat(args)
    return any(h and (core == h or core.startswith(h + " ") or h in core) for h in hints)


def miner(agg: dict, setup: Setup) -> Run:
    """Tool failures clustered by fingerprint; a cluster in MIN_SESSIONS sessions is a lesson.

    ``agg`` (saved in the checkpoint) holds ``clusters`` by digest and ``pending``:
    per session, the shell failures still waiting for a succeeding variant.
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
            _moved(sid, str(obs.get("args") or ""))
        if sid in pending:
            _advance(sid, obs)
        if event == "tool_failure" and not ignored(obs):
            _failure(sid, obs)



    def _advance(sid: str, obs: dict) -> None:
        left = []
        shell = obs.get("tool_kind") == "shell"
        ok = obs.get("event") == "tool_success"
        args = str(obs.get("args") or "")
        family = str(obs.get("family") or "")
        for entry in pending[sid]:
            fp, failed, flat, norm, fam, remaining = entry[:6]
            hints, steps = entry[6] if len(entry) > 6 else [], entry[7] if len(entry) > 7 else []
            rest = entry[8:]  # missing or replaced program, rest after a cd, named file, ...
            cluster = clusters.get(fp)
            if cluster is None:
                continue
            outcome = _outcome(obs, shell, ok, args, family, entry, hints, steps, fp)
            if outcome is not None:
                how, what = outcome
                if how == "retry":
                    cluster["retries"] = cluster.get("retries", 0) + 1
                elif how != "skip":
                    _fix(fp, cluster, what, failed, how == "same", sid, obs,
                         "variant" if how == "same" else how,
                         entry[8] if how == "instead" and entry[8] != "missing" else "",
                         [s for s in steps if s.endswith(_NAMED)]
                         if how in ("same", "program") else [])
                if how == "program" and any(x.endswith(_NAMED) for x in steps):
                    continue  # the named file was edited, then this ran: the fix is complete
                if how == "program":  # another subcommand may prepare a re-run: keep waiting
                    steps = (steps + [f"run `{what}`"])[-MAX_STEPS_KEPT:]
                elif how == "diagnostic":  # it only looked: what fixed it may come next
                    pass
                elif how != "skip":
                    continue
            elif shell and ok and not causes.hidden_success(args) and not _looking(args) \
                    and not causes.riskier(args, failed):
                steps = (steps + [f"run `{cut(causes.core(args), CUT_ARGS)}`"])[-MAX_STEPS_KEPT:]
            elif len(entry) > 10 and fix_edits.edits_named(obs, entry[10]):
                step, how = fix_edits.describe(obs, entry[10], entry[11], entry[12])
                if how == "suggested":  # the edit puts in what the error said to use
                    _fix(fp, cluster, step, failed, False, sid, obs, "edit")
                    continue
                if steps[-1:] != [step]:
                    steps = (steps + [step])[-MAX_STEPS_KEPT:]
                if how:
                    rest = entry[8:13] + [True]
            elif _config_edit(obs):
                steps = (steps + [f"edit `{_config_edit(obs)}`"])[-MAX_STEPS_KEPT:]
            if remaining > 1:
                left.append([fp, failed, flat, norm, fam, remaining - 1, hints, steps] + rest)
        if left:
            pending[sid] = left
        else:
            del pending[sid]
            waiting.discard(sid.encode("utf-8"))

    def _outcome(obs, shell, ok, args, family, entry, hints, steps, fp):
        """What a later tool event says about a waiting failure: ``(how, what)`` with how
        ``retry``, ``same`` (a variant of the same family), ``program`` (same program),
        ``hint``, ``steps``, ``diagnostic`` or ``skip`` (keep waiting); None: not related."""
        failed, flat, norm, fam = entry[1], entry[2], entry[3], entry[4]
        if not shell or not family:
            return None
        rest = entry[9] if len(entry) > 9 else ""
        if rest and family != "cd" and rest in [_flat(args)] + _segments(args):
            # what followed the failed cd ran without it: the shell already was there
            if ok or fingerprint.of_failure(obs)[1] != fp:
                return "cd", rest
        core = cut(causes.core(args), CUT_ARGS)
        if ok and _hinted(args, hints) and not causes.riskier(args, failed):
            return "hint", core
        if not _resembles(fam, family, args) and not _same_family(fam, family, args):
            if ok and entry[8] and _stands_in(args, flat, failed):
                return "instead", core  # the program was missing: what ran next does the job
            if ok and _diagnostic(args):
                return "diagnostic", core
            return None
        if ok and (causes.hidden_success(args) or causes.riskier(args, failed)):
            return "skip", ""  # proves nothing, or never to recommend
        if ok and _looking(args) and not _looking(flat):
            return ("diagnostic", core) if _diagnostic(args) else ("skip", "")
        mine = [_flat(args)] + _segments(args)
        again = _flat(args) == flat or _same_words(flat, args, fam) or (
            _where(args) == _where(flat) and any(m in _segments(flat) for m in mine))
        if ok and again:  # the same command (or the failing part of it) passed
            edited = entry[13:14] == [True]  # a step edited the file the error names
            return ("edited" if edited else "steps", steps_text(steps)) if steps else ("retry", "")
        if ok and _looking(flat) and not _operands(args, fam):
            return "skip", ""  # `ls -la` after `ls -la types/` failed: it looked elsewhere
        if not ok:
            if again and steps and fingerprint.of_failure(obs)[1] != fp:
                return "steps", steps_text(steps)  # failed otherwise: the steps fixed this
            return None
        if entry[8]:  # the program was missing or another one answered: what ran next does it
            return "instead", core
        return ("same" if _same_family(fam, family, args) else "program"), core

    def _fix(fp, cluster, what, failed, same_family, sid, obs, how, via="", before=()) -> None:
        fixes = cluster.setdefault("fixes", {})
        key = fingerprint.normalize(what)  # the same fix for another branch or file is one
        fix = fixes.get(key)
        if fix is None:
            if len(fixes) >= MAX_FIXES_KEPT:
                return
            fix = fixes[key] = {"args": what, "failed": cut(failed, CUT_ARGS),
                                 "same_family": same_family, "how": how, "count": 0,
                                 "seen": [obs.get("id", "?"), sid, obs.get("ts", "?")]}
            if via:
                fix["via"] = via  # the program that answered instead of the one run
            if before:
                fix["before"] = steps_text(list(before))  # e.g. resolving the named file
        fix["count"] += 1
        changed.add(fp)

    def _moved(sid: str, args: str) -> None:
        """Remember where a leading ``cd`` (to an absolute folder) left the shell."""
        segs = _segments(args) if args.startswith("cd ") else []
        where = segs[0].split()[1] if segs and len(segs[0].split()) == 2 else ""
        if not where.startswith("/"):
            return
        cwd.pop(sid, None)
        cwd[sid] = where  # re-inserted last: least recent first
        while len(cwd) > MAX_CWD_SESSIONS:
            del cwd[next(iter(cwd))]

    def _failure(sid: str, obs: dict) -> None:
        text, fp, raw = fingerprint.of_failure(obs)
        if test_verdict(raw):
            return  # the edit-test loop: a failing test is about the code under work
        cluster = clusters.get(fp)
        if cluster is None:
            if len(clusters) >= MAX_CLUSTERS:
                _prune()
            cluster = clusters[fp] = {
                "fingerprint": text, "tool": obs.get("tool") or "?",
                "kind": obs.get("tool_kind") or "other", "family": obs.get("family") or "",
                "example": {"args": cut(obs.get("args"), CUT_ARGS),
                            "error": cut(raw, CUT_ERROR)},
                "count": 0, "sessions": [], "seen": [], "first": obs.get("ts", ""),
                "folder": commands.folder(str(obs.get("cwd") or ""), str(obs.get("args") or ""),
                                          setup.repo_root)}
        cluster["count"] += 1
        cluster["last"] = obs.get("ts", "")
        if sid in cwd and "cwd" not in cluster and _relative_miss(obs, raw):
            cluster["cwd"] = cwd[sid]
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
            hints = [_flat(h) for h in str(obs.get("hint") or "").splitlines() if h.strip()]
            entries = [p for p in pending.pop(sid, []) if p[0] != fp]
            named = fix_edits.named_file(raw)
            names, suggested = fix_edits.subjects(raw) if named else ([], [])
            program = "missing" if _missing(obs) else _replaced(obs, raw)
            entries.append([fp, cut(args, CUT_ARGS), _flat(args), fingerprint.normalize_args(args),
                            obs["family"], FIX_WINDOW, hints, [], program, _after_cd(obs),
                            named, names, suggested, False])
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
                if fp in clusters and (len(clusters[fp]["sessions"]) >= MIN_SESSIONS
                                       or _hint_proven(clusters[fp]))]

    return Run(wants, feed, lessons)


def steps_text(steps: List[str]) -> str:
    return ", then ".join(steps)


def _hint_proven(c: dict) -> bool:
    """One session suffices when the command the error suggested was seen to fix it, when a
    variant of the same command succeeded instead, or when the program is missing (what
    replaced it then is the lesson)."""
    return any(f.get("how") in ("hint", "instead", "variant", "cd", "edit", "edited")
               for f in c.get("fixes", {}).values())


def _step(f: dict) -> str:
    how = f.get("how")
    if how in ("steps", "edited"):
        return f"{f['args']} before `{f['failed']}`: it then no longer failed this way"
    if how == "edit":
        return f["args"]
    if how == "hint":
        return f"run `{f['args']}` (the error suggests it) after `{f['failed']}` fails"
    if how == "diagnostic":
        return f"to see what failed: `{f['args']}`"
    if how == "cd":
        return (f"the shell already was in that folder (a `cd` lasts from one call to the "
                f"next): run `{f['args']}` without the `cd`, or use paths from the repo root")
    if how == "instead" and f.get("via"):
        return (f"`{f['failed'].split()[0]}` runs `{f['via']}` here (an alias or wrapper with "
                f"other options); `{f['args']}` did the job instead")
    if how == "instead":
        return f"the program is not installed here; `{f['args']}` did the job instead"
    if f.get("before"):
        return f"{f['before']}, then `{f['args']}` succeeded after `{f['failed']}` failed"
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
    order = {"hint": 0, "instead": 0, "cd": 0, "edit": 0, "edited": 0, "steps": 1,
             "variant": 2, "program": 3,
             "diagnostic": 4}
    fixes = sorted(c.get("fixes", {}).values(),
                   key=lambda f: (order.get(f.get("how", "variant"), 2), -f["count"]))[:MAX_FIXES]
    steps = [fingerprint.placeholders(_step(f), c["example"]["error"]) for f in fixes]
    if c.get("cwd") and fixes:
        steps.insert(0, f"the shell was still in `{c['cwd']}` (a `cd` lasts from one call to "
                        "the next): relative paths resolve there; use absolute paths")
    evidence = [f"example ({label}): `{c['example']['args']}` failed with: "
                f"{fence(c['example']['error'], CUT_ERROR)}"]  # tool output: quoted, cut
    evidence += [f"seen {ts} in session {sid} ({oid})" for oid, sid, ts in c["seen"]]
    evidence += [f"fix seen {f['seen'][2]} in session {f['seen'][1]} ({f['seen'][0]}): "
                 + (f["args"] if f.get("how") in ("steps", "edited", "edit") else f"`{f['args']}`")
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
    same = fix is not None and fix.get("how") in ("variant", "hint", "same") and \
        not fix.get("via")
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
    _, digest, raw = fingerprint.of_failure(obs)
    return None if test_verdict(raw) else digest
