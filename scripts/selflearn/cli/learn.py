"""Learning commands: mine (candidate cards from observed hook events), maintain, decay,
correct (the lesson lifecycle and a person's corrections).

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from .common import SCRIPT, Context, TtyProgress, examples, option


# --- mine ---------------------------------------------------------------------------------

def _add_mine(sub) -> None:
    p = sub.add_parser("mine", help="learn candidate lessons from the observed hook events",
                       description="Cluster what the hooks observed into candidate aha cards "
                       "(origin: mined, status: candidate, with a confidence and the observation "
                       "ids as evidence). failures: the same tool failure (its cause line, searched "
                       "in the whole output) in 2 or more sessions, or in one when a fix the "
                       "error suggests was seen to work, with what fixed it (a hinted command, "
                       "steps before a passing re-run, a succeeding variant); bypass: a shell command the project maps to a skill (config.json skill_bypass); "
                       "denials: a command (its family and options) refused (denied, "
                       "rejected, blocked by a hook) in 2 or more sessions and not passed when "
                       "made again, or approved every time; preferences: of two "
                       "interchangeable commands (npm/pnpm, python/python3, config.json "
                       "equivalents), the one that works; sequences: a tool sequence or long "
                       "command that succeeded in 3 or more sessions within any 72 hours "
                       "becomes a skill or command proposal (references/PROPOSALS.md), and "
                       "proven lessons become rule proposals. A changed config.json key mines its "
                       "kind again from the start. Mining again reinforces the same card "
                       "(explicit key mined:<kind>:<digest>). "
                       "Only observations appended since the last run are read (checkpoint: "
                       "<store>/mine_state.json); a replaced or shrunk observations.jsonl is "
                       "mined again from the start. On a terminal a run longer than a second "
                       "shows how far it has read (stderr). "
                       "Rules and constants: references/LEARNING.md.",
                       epilog=examples(f"{SCRIPT} mine --dry-run",
                                       f"{SCRIPT} mine --kind failures --since 2025-01-01 "
                                       "--format json"))
    p.add_argument("--kind", action="append",
                   help="what to mine (comma-separated or repeated; default: all): failures, "
                   "bypass, denials, preferences, sequences")
    option(p, "--since", "reads the whole file and leaves the checkpoint alone")
    option(p, "--dry-run", "list the lessons that would be written; not even the checkpoint")
    p.set_defaults(run=_run_mine, writes=True)


def _run_mine(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import mine
    a = ctx.args
    with TtyProgress.on_stderr() as progress:
        data = mine.mine(ctx.memory, a.kind, a.since, a.dry_run, ctx.repo_root, progress)
    a.writes = not a.dry_run and (
        any(e["action"] in ("created", "reinforced") for e in data["lessons"])
        or any(e["action"] in ("proposed", "updated") for e in data["proposals"]))
    return data, mine.render(data)


# --- lifecycle: maintain, decay, correct -------------------------------------------------------

LIFECYCLE = "Statuses, constants and the confidence formula: references/LIFECYCLE.md."


def _add_maintain(sub) -> None:
    from ..learning.compact import RETENTION_DAYS
    from ..learning.autorun import STOP_EVERY
    from ..learning.maintain import LIFECYCLE_EVERY_HOURS
    p = sub.add_parser("maintain", help="mine, reinforce, promote and decay in one cheap run "
                       "(the hooks run it by themselves)",
                       description="Runs mine, reinforce (did surfaced lessons help?), compact "
                       f"(observations older than {RETENTION_DAYS} days that every miner has read leave "
                       "observations.jsonl), promote "
                       "(candidates that meet the bar become accepted) and decay (idle lessons "
                       "become dormant, then retired), then rewrites the trigger table "
                       "(<store>/triggers.jsonl: the lessons shown at the tool call they concern). "
                       "Skipped, writing nothing, when nothing was observed "
                       "since the last run and promote/decay already ran in the last "
                       f"{LIFECYCLE_EVERY_HOURS} hours (idle time alone still "
                       "moves lessons, so those two run daily). The hooks start it in the "
                       "background after a session ends, as a catch-up when the next one "
                       "starts, after a turn that failed once the last run is "
                       f"{STOP_EVERY} s old, and after a person's decision in aha-status or "
                       "feedback (SELF_LEARNING_LEARN=off stops that; `doctor` says when "
                       "it last ran and what it produced). State: "
                       "<store>/maintain_state.json. On a terminal a run longer than a second "
                       "names the step it is on (stderr). " + LIFECYCLE,
                       epilog=examples(f"{SCRIPT} maintain --dry-run",
                                       f"{SCRIPT} maintain --force --format json"))
    p.add_argument("--force", action="store_true",
                   help="run every step now, even when nothing was observed since the last run")
    p.add_argument("--auto", metavar="WHY", default="",
                   help="started by the tool (WHY: session-end, catch-up, turn-end, "
                   "status-change, feedback): errors go to "
                   "<store>/errors.jsonl for doctor, not to stderr")
    option(p, "--dry-run", "show what each step would do; not even the state")
    p.set_defaults(run=_run_maintain, writes=True)


def _run_maintain(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import maintain
    a = ctx.args
    with TtyProgress.on_stderr() as progress:
        data = learn(ctx.memory, ctx.repo_root, a.auto, a.dry_run, a.force, progress)
    a.writes = data["wrote"]
    return data, maintain.render(data)


def learn(memory, repo_root: str, trigger: str = "", dry_run: bool = False, force: bool = False,
          progress=None) -> dict:
    """``maintain``, then the trigger table rewritten from what it learned; a run the hooks
    started (``trigger``) records a failure in errors.jsonl, since nobody sees its stderr."""
    from ..learning import maintain
    from ..surfacing import triggers
    try:
        data = maintain.maintain(memory, repo_root, dry_run, force, progress, trigger)
        if not dry_run and not data["skipped"] and memory.exists():
            data["triggers"] = triggers.refresh(memory, repo_root)
        return data
    except Exception as exc:
        if trigger:
            maintain.log_error(memory, trigger, exc)
        raise


def _add_decay(sub) -> None:
    from ..learning.lifecycle import DORMANT_AFTER_DAYS, RETIRE_AFTER_DAYS
    p = sub.add_parser("decay", help="move idle mined lessons to dormant or retired (and "
                       "revive dormant ones with new evidence)",
                       description="For mined lessons (candidate, accepted, dormant): no "
                       f"evidence for {DORMANT_AFTER_DAYS} days makes a lesson dormant, for "
                       f"{RETIRE_AFTER_DAYS} days retired; a "
                       "dormant lesson with new evidence becomes a candidate again. Each move "
                       "appends a card version (status, note) and an aha_status signal "
                       "(source: lifecycle). Statuses a person set (rejected, deprecated, "
                       "backported, proposed) are never touched. " + LIFECYCLE,
                       epilog=examples(f"{SCRIPT} decay --dry-run", f"{SCRIPT} decay"))
    option(p, "--dry-run", "list the moves")
    p.set_defaults(run=_run_decay, writes=True)


def _run_decay(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import transitions
    data = transitions.run(ctx.memory, "decay", ctx.args.dry_run)
    ctx.args.writes = data["wrote"]
    return data, transitions.render(data)


def _add_correct(sub) -> None:
    from ..learning.corrections import MAX_CORRECTIONS
    p = sub.add_parser("correct", help="attach a correction to a lesson or a mined pattern",
                       description="Stores a short correction (redacted) in "
                       f"<store>/corrections.jsonl; the newest {MAX_CORRECTIONS} per lesson or "
                       "pattern are shown with it wherever it is surfaced (list, review, advice, "
                       "proposals) and written into the SKILL.md of a skill applied from the "
                       "pattern (proposals apply). Older ones stay on file.",
                       epilog=examples(f"{SCRIPT} correct --lesson aha_example --text "
                                       "'Use pnpm test here; npm test skips the workspace config'",
                                       f"{SCRIPT} correct --pattern mined:failure:3f9a0c1d2e4b "
                                       "--text 'This failure is expected on CI runners without "
                                       "Docker'"))
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--lesson", metavar="ID", help="a card id (see `list`)")
    which.add_argument("--pattern", metavar="KEY",
                       help="a pattern key: mined:<kind>:<digest> or a proposal key")
    p.add_argument("--text", required=True, help="the correction, in a sentence")
    p.set_defaults(run=_run_correct, writes=True)


def _run_correct(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import corrections
    from ..graduation import adopt
    a = ctx.args
    data = corrections.correct(ctx.memory, a.lesson, a.pattern, a.text)
    data["skills"] = adopt.correct_skill(ctx.memory, ctx.repo_root, a.pattern) if a.pattern \
        else []
    return data, corrections.render(data) + [
        f"written into {s['path']}" if s["written"] else f"not written into the skill: {s['why']}"
        for s in data["skills"]]


def _add_distill(sub) -> None:
    p = sub.add_parser("distill", help="have a provider write lessons from the episodes no "
                       "lesson covers (backfill, or agents whose hooks cannot ask)",
                       description="Finds every failure→recovery episode in the observation "
                       "log (a failed call, its cause line, the steps after it, the call that "
                       "then did the same job) that no lesson covers and no card names, and "
                       "gives each, as a short prompt with the rubric, to the provider command "
                       "SELF_LEARNING_LLM_CMD (reads the prompt on stdin, answers "
                       '{"aha_cards": [...]} or {"skip": "why"}). Cards are validated and '
                       "written as `record` writes an agent's (origin agent, the episode id, "
                       "the call derived from it, so the lesson comes back at that call). "
                       "Without a provider it lists the episodes; the rule-written (mined) "
                       "lessons stand. Decisions: <store>/distill_state.json (safe to delete).",
                       epilog=examples(f"{SCRIPT} distill --dry-run",
                                       f"SELF_LEARNING_LLM_CMD='claude -p' {SCRIPT} distill "
                                       "--since 2025-01-01 --limit 5"))
    option(p, "--since", "only episodes observed on or after this ISO date")
    p.add_argument("--limit", type=int, default=20,
                   help="episodes given to the provider in one run (default 20)")
    option(p, "--dry-run", "list the episodes that would go to the provider; call nothing")
    p.set_defaults(run=_run_distill, writes=True)


def _run_distill(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import distill
    from ..surfacing import ask, jit
    from ..surfacing import shown as surfacings
    a = ctx.args
    if a.limit < 1:
        from ..storage.errors import UsageError
        raise UsageError(f"distill: --limit {a.limit} must be 1 or more")
    table = jit.table(ctx.memory.root)
    shown = surfacings.recent(ctx.memory.path("surfacings"))
    data = distill.distill(ctx.memory, ctx.repo_root, lambda e: ask.covered(e, table, shown),
                           a.since, a.limit, a.dry_run)
    a.writes = any(r["action"] == "recorded" for r in data["results"])
    return data, distill.render(data)


COMMANDS = (_add_mine, _add_maintain, _add_decay, _add_correct, _add_distill)
