"""Sharing commands: feedback, export-rules, suggest-hooks, report.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

import os
from typing import List, Tuple

from .common import SCRIPT, SKILL_DIR, Context, examples, option

RULE_AGENTS = ("copilot", "cursor", "gemini", "windsurf", "aider", "continue", "agents-md")


# --- feedback -------------------------------------------------------------------------------

def _add_feedback(sub) -> None:
    p = sub.add_parser("feedback", help="regenerate <store>/feedback.md and read back your edits",
                       description="A page for people: recent tool outcomes per day and the "
                       "learned preferences. Delete a lesson's line in its marked section to "
                       "unlearn it (status rejected), add a line '- what to do' to teach one "
                       "(an accepted human lesson), move a candidate's line there to accept it; "
                       "then run feedback again. Details: references/SHARING.md.",
                       epilog=examples(f"{SCRIPT} feedback",
                                       f"{SCRIPT} feedback --days 3 --dry-run --format json"))
    p.add_argument("--days", type=int, default=7, help="days of recent outcomes shown (1-31)")
    option(p, "--dry-run", "report what the edits would change")
    p.set_defaults(run=_run_feedback, writes=True)


def _run_feedback(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import feedback
    a = ctx.args
    data = feedback.feedback(ctx.memory, a.days, a.dry_run, ctx.user)
    a.writes = not a.dry_run and (data["changed"] or data["file"] == "written")
    if not a.dry_run and data["changed"]:  # what the person decided reaches the calls now
        from .hookcalls import start_learning
        start_learning(ctx.repo_root, ctx.memory.root, "feedback")
    return data, feedback.render_lines(data)


# --- export-rules -----------------------------------------------------------------------------

def _add_export_rules(sub) -> None:
    p = sub.add_parser("export-rules", help="write accepted lessons into an agent's rules file",
                       description="For agents without our hooks: the accepted lessons become "
                       "one-line rules ('- title: first step') in the agent's rules file, "
                       "between <!-- self-learning-skills:begin --> and :end --> markers; the "
                       "rest of the file is left byte for byte. Running it again updates the "
                       "block in place, or does nothing when it is current. Files: copilot "
                       ".github/copilot-instructions.md, cursor .cursor/rules/self-learning.mdc, "
                       "gemini GEMINI.md, windsurf .windsurfrules, aider CONVENTIONS.md, continue "
                       ".continue/rules/self-learning.md, agents-md AGENTS.md (relative to the "
                       "repository root). Details: references/SHARING.md.",
                       epilog=examples(f"{SCRIPT} export-rules --agent agents-md --dry-run",
                                       f"{SCRIPT} export-rules --agent cursor",
                                       f"{SCRIPT} export-rules --agent cursor --remove"))
    p.add_argument("--agent", required=True, choices=RULE_AGENTS)
    option(p, "--dry-run", "show the rules")
    p.add_argument("--remove", action="store_true",
                   help="take the block out again (a file of our own is deleted)")
    p.set_defaults(run=_run_export_rules)


def _run_export_rules(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import export_rules
    a = ctx.args
    data = export_rules.export(ctx.memory, ctx.repo_root, a.agent, a.dry_run, a.remove)
    return data, export_rules.render(data)


# --- suggest-hooks ----------------------------------------------------------------------------

def _add_suggest_hooks(sub) -> None:
    p = sub.add_parser("suggest-hooks", help="which agents used in this repo lack our hooks",
                       description="Looks for each agent's files in the repository (.claude/, "
                       ".codex/, .gemini/, .cursor/, .github/copilot-instructions.md, "
                       ".windsurfrules, .continue/, CONVENTIONS.md, …) and at its hook config, "
                       "and prints the install-hooks command for agents that have none; agents "
                       "without hooks (windsurf, aider, continue) get the export-rules command. "
                       "Writes nothing.",
                       epilog=examples(f"{SCRIPT} suggest-hooks",
                                       f"{SCRIPT} suggest-hooks --format json"))
    p.set_defaults(run=_run_suggest_hooks)


def _run_suggest_hooks(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import export_rules
    data = export_rules.suggest(ctx.repo_root, os.path.expanduser("~"), SKILL_DIR)
    return data, export_rules.render_suggest(data)


# --- report -----------------------------------------------------------------------------------

def _add_report(sub) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report (charts, no scripts)",
                       description="One HTML file with inline CSS and SVG, nothing fetched: tool "
                       "failure rates per day, lessons by status and confidence, which lessons "
                       "were surfaced and whether they helped. Default file: "
                       "<store>/report.html, linked from INDEX.md.",
                       epilog=examples(f"{SCRIPT} report",
                                       f"{SCRIPT} report --days 7 --html /tmp/self-learning.html "
                                       "--format json"))
    p.add_argument("--html", metavar="FILE", help="where to write the page, in a folder that "
                   "exists (default: <store>/report.html)")
    p.add_argument("--days", type=int, default=30, help="days of tool outcomes charted (1-366)")
    p.set_defaults(run=_run_report, writes=True)


def _run_report(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import report
    a = ctx.args
    data = report.report(ctx.memory, a.html, a.days, ctx.user, ctx.repo_root)
    return data, report.render(data)


COMMANDS = (_add_feedback, _add_export_rules, _add_suggest_hooks, _add_report)
