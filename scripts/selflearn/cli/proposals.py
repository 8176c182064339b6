"""Proposal commands: proposals, suggest-skills.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from .common import SCRIPT, Context, examples
from ..storage.errors import UsageError

ACTIONS = ("list", "show", "apply", "reject")
INBOX = ("inbox: <store>/proposals.jsonl (append-only; latest line per id wins); rules and "
         "constants: references/PROPOSALS.md.")


# --- proposals ------------------------------------------------------------------------------

def _add_proposals(sub) -> None:
    p = sub.add_parser("proposals", help="the inbox of suggested skills, rules and commands",
                       description="What `mine` suggests from repeated behaviour: skill (a "
                       "SKILL.md draft for a tool sequence that succeeded in 3+ sessions within "
                       "72 h), command (a long command run successfully in 3+ sessions) and rule "
                       "(a line for AGENTS.md from an accepted or confident mined lesson). Each "
                       "cites its evidence. `apply` writes <repo>/.claude/skills/<name>/SKILL.md "
                       "(never over an existing folder) or appends the rule through the guarded "
                       "edit (a rule the file already holds is marked applied, nothing written); "
                       "`reject` archives it with a required reason. A pending rule whose lesson "
                       "is rejected, deprecated or retired is rejected by the next `mine`. "
                       "A decided proposal is never "
                       "proposed again. SELF_LEARNING_LLM_CMD (a command reading a prompt on "
                       "stdin) writes skill bodies; without it, or when it fails, a template "
                       "does. " + INBOX,
                       epilog=examples(f"{SCRIPT} proposals list",
                                       f"{SCRIPT} proposals list --status all --kind skill "
                                       "--format json"))
    p.add_argument("action", choices=ACTIONS, nargs="?", default="list",
                   help="list (the default; pending ones unless --status), show, apply, reject")
    p.add_argument("--id", help="the proposal (show, apply, reject)")
    p.add_argument("--status", choices=("proposed", "applied", "rejected", "all"),
                   default="proposed", help="list: which proposals (default: proposed)")
    p.add_argument("--kind", choices=("skill", "rule", "command"), help="list: only this kind")
    p.add_argument("--reason", help="reject: why, required (kept with the archived proposal)")
    p.add_argument("--skills-dir", metavar="DIR",
                   help="apply: where the skill folder goes, relative to the repository "
                   "(default: .claude/skills); a folder outside it must exist and be given "
                   "as an absolute path")
    p.add_argument("--name", help="apply: another skill name (lowercase, digits, hyphens)")
    p.add_argument("--file", help="apply: the instruction file a rule goes to (default: AGENTS.md)")
    p.set_defaults(run=_run_proposals, writes=False)


def _check(a) -> None:
    """Flag combinations, before anything is read or written."""
    if a.action != "list" and not a.id:
        raise UsageError(f"proposals {a.action}: --id is required (see `proposals list`)")
    misplaced = [flag for flag, value, allowed in (
        ("--id", a.id, ("show", "apply", "reject")), ("--reason", a.reason, ("reject",)),
        ("--skills-dir", a.skills_dir, ("apply",)), ("--name", a.name, ("apply",)),
        ("--file", a.file, ("apply",)), ("--kind", a.kind, ("list",)),
        ("--status", a.status != "proposed" or None, ("list",))) if value and a.action not in allowed]
    if misplaced:
        raise UsageError(f"proposals {a.action}: {misplaced[0]} does not apply here "
                         "(see `proposals --help`)")


def _run_proposals(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import proposals
    a = ctx.args
    _check(a)
    if a.action == "list":
        data = proposals.listing(ctx.memory, a.status, a.kind)
        return data, proposals.render_list(data)
    if a.action == "show":
        data = proposals.show(ctx.memory, a.id)
        return data, proposals.render_show(data)
    a.writes = True
    if a.action == "apply":
        from ..graduation import adopt
        data = adopt.apply(ctx.memory, ctx.repo_root, a.id, a.skills_dir, a.name, a.file)
    else:
        data = proposals.reject(ctx.memory, a.id, a.reason)
    return data, proposals.render_decision(data)


# --- suggest-skills ---------------------------------------------------------------------------

def _add_suggest_skills(sub) -> None:
    p = sub.add_parser("suggest-skills", help="repeated work that deserves a skill",
                       description="Lists pending skill and command proposals (with the command "
                       "to apply or reject each) and patterns below the bar: a tool sequence or "
                       "long command that succeeded in 2 sessions within 72 h (3 are needed), "
                       "as counted by the last `mine`. --propose files one of them now. " + INBOX,
                       epilog=examples(f"{SCRIPT} suggest-skills",
                                       f"{SCRIPT} suggest-skills --format json"))
    p.add_argument("--propose", metavar="KEY",
                   help="file the candidate with this key as a proposal now (below the bar)")
    p.set_defaults(run=_run_suggest_skills, writes=False)


def _run_suggest_skills(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import proposals
    a = ctx.args
    a.writes = bool(a.propose)
    data = proposals.suggest(ctx.memory, a.propose)
    return data, proposals.render_suggest(data)


COMMANDS = (_add_proposals, _add_suggest_skills)
