"""Miner ``preferences``: of two commands doing the same job, one works and one does not.

A job is a command family under one of several interchangeable programs: the
same subcommand of ``npm``/``pnpm``/``yarn``/``bun`` (not bun's own ``test`` and ``build``
tools, ``OWN_TOOLS``), ``pytest`` however it is
started, ``pip`` in its forms, ``python``/``python3``, ``docker compose`` /
``docker-compose`` (``EQUIVALENTS``; config.json key ``equivalents`` adds groups).
Each variant's successes, failures and refusals are counted per session; a
variant that keeps succeeding next to one that keeps failing or being refused
becomes the lesson "use `pnpm test`, not `npm test`". A preference the user states
teaches in one session: a shell call they rejected (or denied), their words (said with the
rejection, or their next prompt) naming another program, and that program then doing the
same job (``SAID_WINDOW``) is the lesson "use `uv pip install`, not `pip3 install`". When the
configured groups change, this kind is mined again from the start (``stale``).
Constants are documented in references/LEARNING.md. Must not import cli.
"""

from typing import Dict, List, Optional, Tuple

from . import fingerprint
from ..storage.errors import SelfLearningError
from .mine_base import MIN_SESSIONS, Run, Setup, confidence, cut, ignored, user_words
from .mine_clusters import (Clusters, config_changed, config_digest, config_where, finding,
                            refusal, repo_config, seen_lines, session_of)
from ..storage.screen import fence

KIND = "preferences"
KEY = "equivalents"         # the config.json key adding groups of interchangeable families
AGG_VERSION = 2             # 2: bun's own test and build tools are no variant of a script

# Interchangeable programs: (family prefixes, whether the job's subcommand is read from the
# command when the family stops at the prefix, as for `python -m pip install`).
EQUIVALENTS: Tuple[Tuple[Tuple[str, ...], bool], ...] = (
    (("npm run", "pnpm run", "yarn run", "bun run", "npm", "pnpm", "yarn", "bun"), False),
    (("npx", "pnpm dlx", "yarn dlx", "bunx"), False),
    (("pytest", "python -m pytest", "python3 -m pytest", "uv run pytest",
      "poetry run pytest"), False),
    (("pip", "pip3", "python -m pip", "python3 -m pip", "uv pip"), True),
    (("python", "python3"), False),
    (("docker compose", "docker-compose"), True),
)
# A program's own tool named like a script: `bun test` is bun's test runner and `bun build`
# its bundler, not the package's `test` or `build` script that `npm test` and `bun run test`
# run, so neither is a variant of that job.
OWN_TOOLS = ("bun test", "bun build")
MIN_GOOD = 3                # successes of the preferred variant ...
MIN_BAD = 2                 # ... and failures or refusals of the other, each side in
                            # MIN_SESSIONS distinct sessions
GOOD_RATE = 0.8             # the preferred variant succeeds at least this share of the time
BAD_RATE = 0.5              # the other fails or is refused at least this share of the time
MAX_CLUSTERS = 5000         # variants remembered; the least recent not yet lessons dropped
CUT_ARGS, CUT_ERROR = 120, 160  # characters of a command, of an error shown
SAID_WINDOW = 10            # tool calls after a refusal in which the program the user named
                            # must do the refused call's job
MAX_SAID_SESSIONS = 200     # sessions with a refusal waiting; the least recent are dropped


def groups(config: dict, where: str = "config.json") -> List[Tuple[Tuple[str, ...], bool]]:
    """The built-in groups plus the configured ones, or a one-line SelfLearningError."""
    extra = config.get(KEY)
    if extra is None:
        return list(EQUIVALENTS)
    if not isinstance(extra, list):
        raise SelfLearningError(f"{where}: \"{KEY}\" must be a list of lists of command "
                                f"families, got {type(extra).__name__}")
    out = list(EQUIVALENTS)
    for i, entry in enumerate(extra):
        if not isinstance(entry, list) or len(entry) < 2 or not all(
                isinstance(f, str) and f.split() for f in entry):
            raise SelfLearningError(f"{where}: {KEY}[{i}] must list 2 or more command families "
                                    "(non-empty strings), e.g. [\"make test\", \"just test\"]")
        out.append((tuple(" ".join(f.split()) for f in entry), False))
    return out


def job_of(obs: dict, table) -> Optional[Tuple[str, str, str]]:
    """``(group, job, variant)`` of a shell call: its family's longest prefix in ``table``."""
    family = " ".join(str(obs.get("family") or "").split())
    if any(family == own or family.startswith(own + " ") for own in OWN_TOOLS):
        return None
    best = None
    for members, from_args in table:
        for prefix in members:
            if (family == prefix or family.startswith(prefix + " ")) and \
                    (best is None or len(prefix) > len(best[1])):
                best = (members, prefix, from_args)
    if best is None:
        return None
    members, prefix, from_args = best
    job = family[len(prefix):].strip()
    if not job and from_args:
        job = _subcommand(str(obs.get("args") or ""), prefix)
    return members[0], job, prefix


def _subcommand(command: str, prefix: str) -> str:
    """The first word after ``prefix``'s last word in ``command`` (not an option)."""
    words = command.split()
    last = prefix.split()[-1]
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == last:
            return next((w for w in words[i + 1:] if not w.startswith("-")), "")
    return ""


def stale(agg: dict, setup: Setup) -> Optional[str]:
    """Why the aggregates no longer fit the config or this code (then this kind starts
    over), or None."""
    if agg.get("version", 1) != AGG_VERSION:
        return f"preferences: aggregates of an older format (v{agg.get('version', 1)})"
    return config_changed(agg, setup, KEY)


def _digest(group: str, job: str, variant: str) -> str:
    return fingerprint.digest(f"prefer|{group}|{job}|avoid|{variant}")


def miner(agg: dict, setup: Setup) -> Run:
    """Per job and variant: ``ok`` and ``bad`` clusters (successes; failures and refusals)."""
    table = groups(setup.config, config_where(setup))
    agg["version"] = AGG_VERSION
    agg["config"] = config_digest(setup.config.get(KEY))
    clusters = Clusters(agg, MAX_CLUSTERS, MIN_SESSIONS)
    said: Dict[str, dict] = agg.setdefault("said", {})  # session -> a refusal waiting
    firsts = {f.split()[0].encode("utf-8") for members, _ in table for f in members}

    def wants(raw: bytes) -> bool:
        call = b"tool_success" in raw or b"tool_failure" in raw or b"permission_denied" in raw
        if said and (call or b'"prompt"' in raw):
            sid = session_of(raw)
            if sid is None or sid.decode("utf-8", "replace") in said:
                return True  # a session waiting for the words or the program the user named
        return call and b"shell" in raw and (any(p in raw for p in firsts) or (
            b"tool_failure" in raw and b"user" in raw) or b"permission_denied" in raw)

    def feed(obs: dict) -> None:
        event = obs.get("event")
        sid = str(obs.get("session_id") or "")
        if sid in said:
            _heard(sid, obs)
        if obs.get("tool_kind") != "shell" or event not in (
                "tool_success", "tool_failure", "permission_denied"):
            return
        how = refusal(obs)
        if how in ("rejected", "denied"):
            _refused(sid, obs)
        found = job_of(obs, table)
        if found is None:
            return
        if event == "tool_failure" and not how and ignored(obs):
            return
        group, job, variant = found
        outcome = "ok" if event == "tool_success" else "bad"
        c = clusters.hit(fingerprint.digest(f"{outcome}|{group}|{job}|{variant}"), obs, lambda: {
            "group": group, "job": job, "variant": variant, "outcome": outcome,
            "example": cut(obs.get("args"), CUT_ARGS), "error": ""})
        if outcome == "bad" and not c["error"]:
            c["error"] = cut(str(obs.get("reason") or "") if how == "denied" else
                             fingerprint.key_line(str(obs.get("error") or "")) or how, CUT_ERROR)
        if how:
            c["refused"] = c.get("refused", 0) + 1

    def _refused(sid: str, obs: dict) -> None:
        """Wait for the user's words and the program they name, after a refused shell call."""
        said.pop(sid, None)
        said[sid] = {"args": cut(obs.get("args"), CUT_ARGS), "family": str(obs.get("family") or ""),
                     "job": list(job_of(obs, table) or ()), "left": SAID_WINDOW,
                     "words": cut(user_words(obs), CUT_ERROR),
                     "seen": [obs.get("id", "?"), sid, obs.get("ts", "?")]}
        while len(said) > MAX_SAID_SESSIONS:
            del said[next(iter(said))]

    def _heard(sid: str, obs: dict) -> None:
        """The user's next prompt gives the words; a call of the program they named doing
        the refused call's job is the lesson."""
        wait = said[sid]
        if obs.get("event") == "prompt":
            wait["words"] = wait["words"] or cut(obs.get("prompt"), CUT_ERROR)
            return
        if obs.get("event") not in ("tool_success", "tool_failure", "permission_denied"):
            return
        wait["left"] -= 1
        if obs.get("event") == "tool_success" and obs.get("tool_kind") == "shell" \
                and wait["words"] and _named(obs, wait, table):
            found = job_of(obs, table)
            grouped = bool(wait["job"]) and found is not None and \
                found[:2] == tuple(wait["job"][:2])
            use = _name(found[1], found[2]) if grouped else str(obs.get("family") or "")
            avoid = _name(wait["job"][1], wait["job"][2]) if grouped else wait["family"]
            digest = _digest(*wait["job"]) if grouped else \
                fingerprint.digest(f"prefer|said|{avoid}|{use}")
            c = clusters.hit(digest, obs, lambda: {
                "group": "", "job": "", "variant": avoid, "outcome": "said",
                "use": use, "words": wait["words"], "refused": wait["args"],
                "example": cut(obs.get("args"), CUT_ARGS), "asked": wait["seen"]})
            c["use"] = use
            del said[sid]
        elif wait["left"] <= 0:
            del said[sid]

    def lessons() -> List[dict]:
        touched = {(clusters.items[d]["group"], clusters.items[d]["job"])
                   for d in clusters.changed if d in clusters.items}
        jobs: Dict[Tuple[str, str], Dict[str, dict]] = {}
        for c in clusters.items.values():
            if (c["group"], c["job"]) in touched and c["outcome"] != "said":
                jobs.setdefault((c["group"], c["job"]), {})[c["outcome"] + "|" + c["variant"]] = c
        out = [lesson for key in sorted(jobs) for lesson in _prefer(key, jobs[key])]
        counted = {lesson["card"]["key"] for lesson in out}
        return out + [_said_lesson(d, clusters.items[d]) for d in sorted(clusters.changed)
                      if d in clusters.items and clusters.items[d]["outcome"] == "said"
                      and f"mined:{KIND}:{d}" not in counted]

    return Run(wants, feed, lessons)


def _tally(cells: Dict[str, dict], variant: str) -> Tuple[int, int, dict, dict]:
    ok, bad = cells.get("ok|" + variant), cells.get("bad|" + variant)
    return (ok["count"] if ok else 0), (bad["count"] if bad else 0), ok or {}, bad or {}


def _prefer(key: Tuple[str, str], cells: Dict[str, dict]) -> List[dict]:
    """One lesson per variant to avoid, naming the variants that worked instead."""
    variants = sorted({c["variant"] for c in cells.values()})
    good, out = [], []
    for v in variants:
        ok, bad, okc, _ = _tally(cells, v)
        if ok >= MIN_GOOD and len(okc["sessions"]) >= MIN_SESSIONS and ok >= GOOD_RATE * (ok + bad):
            good.append(v)
    for v in variants:
        ok, bad, _, badc = _tally(cells, v)
        if v in good or bad < MIN_BAD or len(badc["sessions"]) < MIN_SESSIONS \
                or bad < BAD_RATE * (ok + bad):
            continue
        winners = [w for w in good if _name(key[1], w) != _name(key[1], v)]
        if winners:
            out.append(_lesson(key, v, winners, cells))
    return out


def _name(job: str, variant: str) -> str:
    return f"{variant} {job}".strip()


def _lesson(key: Tuple[str, str], variant: str, winners: List[str], cells: Dict[str, dict]) -> dict:
    group, job = key
    _, bad, _, badc = _tally(cells, variant)
    best = max(winners, key=lambda w: _tally(cells, w)[0])
    ok, _, okc, _ = _tally(cells, best)
    use, avoid = _name(job, best), _name(job, variant)
    sessions = len(set(badc["sessions"]) | set(okc["sessions"]))
    refused = badc.get("refused", 0)
    others = [f"`{_name(job, w)}`" for w in winners if w != best]
    card = {
        "title": f"Use `{use}`, not `{avoid}`",
        "when_to_use": f"about to run `{avoid}`",
        "problem": f"`{avoid}` failed or was refused {bad} time(s) in {len(badc['sessions'])} "
                   f"sessions" + (f" ({refused} refused)" if refused else "")
                   + f", while `{use}` succeeded {ok} time(s) in {len(okc['sessions'])} sessions",
        "solution_steps": [f"run `{use}` instead of `{avoid}`"]
                          + ([f"{', '.join(others)} worked as well"] if others else []),
        "evidence": [f"`{badc['example']}` failed with: {fence(badc['error'], CUT_ERROR)}",
                     f"`{okc['example']}` succeeded"]
                    + seen_lines(badc, f"`{avoid}` failed") + seen_lines(okc, f"`{use}` succeeded"),
        "confidence": confidence(sessions, has_fix=True),
        "tags": ["mined", "preference", "shell"],
        "trigger": use,  # the job's preferred form: obeying the lesson runs it (see LEARNING.md)
    }
    merged = {"count": bad + ok, "sessions": sorted(set(badc["sessions"]) | set(okc["sessions"])),
              "first": min(badc["first"], okc["first"]),
              "last": max(badc.get("last", ""), okc.get("last", ""))}
    return finding(KIND, _digest(group, job, variant), f"{group}|{job}|{avoid} -> {use}",
                   merged, card, sessions)


def _named(obs: dict, wait: dict, table) -> bool:
    """Whether a call that passed runs a program the user's words named (not the refused
    one) and does the refused call's job: the same job of a group of interchangeable
    programs, or the same operands (``uv add requests`` for ``pip3 install requests``)."""
    program = str(obs.get("family") or "").split(" ")[0]
    refused = wait["family"].split(" ")[0]
    words = "".join(ch if ch.isalnum() or ch in "-_." else " " for ch in wait["words"].lower())
    if not program or program == refused or program.lower() not in words.split():
        return False
    found = job_of(obs, table)
    if wait["job"] and found and found[:2] == tuple(wait["job"][:2]):
        return True
    def operands(args: str) -> set:
        return {w for w in args.split()[1:] if not w.startswith("-") and len(w) > 1}
    return bool(operands(wait["args"]) - set(wait["family"].split())) and \
        operands(wait["args"]) - set(wait["family"].split()) <= operands(str(obs.get("args") or ""))


def _said_lesson(digest: str, c: dict) -> dict:
    """The card for a preference the user stated on rejecting a call."""
    use, avoid, n = c["use"], c["variant"], len(c["sessions"])
    card = {
        "title": f"Use `{use}`, not `{avoid}`",
        "when_to_use": f"about to run `{avoid}`",
        "problem": f"the user rejected `{c['refused']}` and said: {fence(c['words'], CUT_ERROR)}",
        "solution_steps": [f"run `{use}` instead of `{avoid}` (the user asked for it)"],
        "evidence": [f"`{c['refused']}` was rejected ({c['asked'][2]}, session {c['asked'][1]}, "
                     f"{c['asked'][0]})", f"`{c['example']}` succeeded next"]
                    + seen_lines(c, f"`{use}` succeeded"),
        "confidence": confidence(max(n, MIN_SESSIONS), has_fix=True),
        "tags": ["mined", "preference", "shell", "said"],
        "trigger": use,  # the preferred form, as for counted preferences
    }
    return finding(KIND, digest, f"said|{avoid} -> {use}", c, card, n)


def recurs(obs: dict, config: Optional[dict] = None) -> Optional[str]:
    """The digest of the lesson avoiding the variant a shell call uses (None for anything
    else). ``config`` defaults to the config.json of the repository the command runs in."""
    if obs.get("tool_kind") != "shell" or obs.get("event") not in (
            "tool_success", "tool_failure", "permission_denied"):
        return None
    found = job_of(obs, groups(repo_config() if config is None else config))
    return _digest(*found) if found else None
