"""Guidance commands: analyze, improve.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from .common import SCRIPT, Context, examples, option
from ..storage.errors import UsageError


# --- analyze --------------------------------------------------------------------------------

def _add_analyze(sub) -> None:
    p = sub.add_parser("analyze", help="success rates per tool and command family; opportunities",
                       description="Read observations.jsonl once and report, per tool and shell "
                       "command family over the last --days: calls, successes, failures (with "
                       "their most frequent error lines), environmental failures (interrupted, "
                       "stale read, timed out: kept out of the rate), permission denials and "
                       "corrections. An opportunity is a family with >= 5 calls in the rate and "
                       "< 80% success; a git commit in the window whose message says "
                       "fix/fixed/fixes and names the family suppresses it when it came after "
                       "the family's last failure. Errors of the model's service (provider "
                       "errors) are counted apart, by reason. Reads only. "
                       "Rules and constants: references/GUIDANCE.md.",
                       epilog=examples(f"{SCRIPT} analyze --days 7",
                                       f"{SCRIPT} analyze --days 30 --format json"))
    p.add_argument("--days", type=int, default=None,
                   help="window in days, ending now (default: 7)")
    p.set_defaults(run=_run_analyze, writes=False)


def _run_analyze(ctx: Context) -> Tuple[dict, List[str]]:
    from ..learning import analyze
    data = analyze.analyze(ctx.memory, ctx.repo_root, ctx.args.days)
    return data, analyze.render(data)


# --- improve --------------------------------------------------------------------------------

def _add_improve(sub) -> None:
    p = sub.add_parser("improve", help="guarded edits of AGENTS.md, CLAUDE.md and other "
                       "always-loaded guidance files",
                       description="Append a one-line rule to a guidance file (--append) or "
                       "replace the body of one section (--update-section, the rest of the file "
                       "stays byte-identical). Refused, with nothing written: paths outside the "
                       "repository, through symlinks pointing out, symlink targets, .git and the "
                       "store; files that are not text; rules that are trivial (< 15 characters), "
                       "oversized (> 600), holding export-rules markers or HTML comments "
                       "(<!-- -->), shaped like tool output (timestamps, tracebacks, error "
                       "blocks, long hex) or > 70% token overlap with an existing line. "
                       "Each write is backed up first (<store>/backups/, 5 kept, at most 7 days) "
                       "and logged with its rationale in <store>/improvements.md. "
                       "--scan-duplicates proposes removals of repeated lines across guidance "
                       "files, keeping the canonical copy (AGENTS.md first); it changes nothing. "
                       "Rules and constants: references/GUIDANCE.md.",
                       epilog=examples(
                           f"{SCRIPT} improve --file AGENTS.md --append \"- Run the tests with "
                           f"python3 tests/run.py before pushing.\" --rationale \"agents pushed "
                           f"untested changes twice\" --dry-run",
                           f"{SCRIPT} improve --file CLAUDE.md --update-section Testing --text "
                           f"\"Use python3 tests/run.py -q; never call pytest directly.\" "
                           f"--rationale \"pytest alone misses the pinned venv\" --dry-run",
                           f"{SCRIPT} improve --scan-duplicates"))
    p.add_argument("--file", help="guidance file relative to the repository root, e.g. "
                   "AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--append", metavar="TEXT", help="one-line rule to append at the end of --file")
    what.add_argument("--update-section", metavar="HEADING",
                      help="replace the body of this section, up to its next heading of any "
                      "level (appended as ## HEADING if absent)")
    what.add_argument("--scan-duplicates", action="store_true",
                      help="list lines repeated across the guidance files; changes nothing")
    p.add_argument("--text", help="new section body for --update-section")
    p.add_argument("--rationale", help="why the change helps (logged in improvements.md)")
    option(p, "--dry-run", "show the change")
    p.set_defaults(run=_run_improve, writes=True)


def check_improve_args(a) -> None:
    """Flag combinations, all checked before anything is read or written."""
    if a.scan_duplicates:
        extra = [f for f, v in (("--file", a.file), ("--text", a.text),
                                ("--rationale", a.rationale)) if v is not None]
        if extra:
            raise UsageError(f"improve: --scan-duplicates takes no {extra[0]}")
        return
    if a.file is None:
        raise UsageError("improve: --file is required; e.g. --file AGENTS.md")
    if a.update_section is not None and a.text is None:
        raise UsageError("improve: --update-section needs --text with the new section body")
    if a.append is not None and a.text is not None:
        raise UsageError("improve: --text goes with --update-section; give the rule to --append")
    if a.rationale is None:
        raise UsageError("improve: --rationale is required; say why the rule helps "
                         "(logged in improvements.md)")


def _run_improve(ctx: Context) -> Tuple[dict, List[str]]:
    from ..graduation import improve
    a = ctx.args
    check_improve_args(a)
    if a.scan_duplicates:
        data = improve.scan_duplicates(ctx.repo_root)
    else:
        text = a.append if a.append is not None else a.text
        data = improve.improve(ctx.memory.root, ctx.repo_root, a.file, text, a.rationale,
                               heading=a.update_section, dry_run=a.dry_run)
    a.writes = bool(data.get("written"))
    return data, improve.render(data)


COMMANDS = (_add_analyze, _add_improve)
