"""Surfacing commands: advice, reinforce.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from ..storage import paths
from .common import SCRIPT, Context, examples, option, query_of


# --- advice ------------------------------------------------------------------------------------

def _add_advice(sub) -> None:
    p = sub.add_parser(
        "advice", conflict_handler="resolve",
        help="the learned notes worth knowing now, within a character budget",
        description="Print the lessons relevant to this workspace (no --query) or to a task "
        "(--query), best first: relevance x confidence x recency, accepted cards before "
        "proposed ones, mined candidates only when very relevant to the query, lessons that "
        "recurred after a warning escalated. Each item is one or two lines with its id, inside "
        "a labelled <learned-notes> block; the whole output stays within --budget. A lesson "
        "citing a file or script that no longer exists is held back (named on stderr). "
        "Nothing at all is printed when nothing clears the floors. The hooks inject the same "
        "text on session start and on each prompt. Rules and constants: "
        "references/SURFACING.md.",
        epilog=examples(f"{SCRIPT} advice",
                        f"{SCRIPT} advice --query \"npm test fails\" --budget 800",
                        f"{SCRIPT} advice --format claude-hook"))
    option(p, "--query", "the task or prompt text to match")
    p.add_argument("--budget", type=int, metavar="CHARS",
                   help="most characters to print, everything included (default: advice.budget "
                   "in .agent-skills/self-learning/config.json, else 2000)")
    p.add_argument("--format", choices=("text", "json", "claude-hook"), default="text",
                   help="text: the notes; json: the notes and why each was chosen; claude-hook: "
                   "the JSON a Claude Code hook prints (hookSpecificOutput.additionalContext)")
    p.add_argument("--session-id", metavar="ID",
                   help="leave out what this agent session was already shown, and log this "
                   "output as shown to it (<store>/surfacings.jsonl)")
    p.set_defaults(run=_run_advice, writes=False)


def _run_advice(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import advice, shown
    a = ctx.args
    budget = advice.settings(ctx.repo_root)["budget"] if a.budget is None else a.budget
    query = query_of(ctx)
    shape = advice.shape_for(a.format, "prompt" if query else "session_start")
    seen = shown.in_session(ctx.memory.path("surfacings"), a.session_id or "")
    data = advice.advise(ctx.memory, ctx.repo_root, query, budget, seen, shape, remember=True)
    if a.format == "claude-hook" and paths.kill_switch(ctx.repo_root):
        data.update(output="", items=[], chars=0)  # a hook's injection: off with observation
        return data, []
    if a.session_id and data["output"]:
        shown.append(ctx.memory.path("surfacings"), a.session_id, "cli", "advice",
                     [i["id"] for i in data["items"]], data["chars"])
        a.writes = True
    if a.format == "text":
        data["warnings"] = [
            f"held back {h['id']}: {h['reason']}; a person decides it (see `review`)"
            if h["reason"].startswith("safety screen") else
            f"held back {h['id']} (stale): {h['reason']}; fix or retire the card"
            for h in data["held_back"]]
    return data, advice.render(data)


# --- reinforce ---------------------------------------------------------------------------------

def _add_reinforce(sub) -> None:
    p = sub.add_parser(
        "reinforce", help="judge surfaced lessons: helped, or violated again",
        description="For each lesson the hooks surfaced (<store>/surfacings.jsonl) in a session "
        "that is over (session end, or 30 minutes without activity): a mined lesson whose "
        "failure recurred later in that session gets an aha_violated signal, one whose session "
        "ran tools without it recurring gets aha_helped. These outcomes move the lesson's "
        "confidence, and violations escalate it in `advice`. Each (session, lesson) is judged "
        "once. `maintain` runs this too. Rules: references/SURFACING.md.",
        epilog=examples(f"{SCRIPT} reinforce --dry-run", f"{SCRIPT} reinforce --format json"))
    option(p, "--dry-run", "judge, but write no signal")
    p.set_defaults(run=_run_reinforce, writes=False)


def _run_reinforce(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import reinforce
    a = ctx.args
    data = reinforce.reinforce(ctx.memory, ctx.repo_root, a.dry_run)
    a.writes = data["signals_written"] > 0
    return data, reinforce.render(data)


COMMANDS = (_add_advice, _add_reinforce)
