"""Learning commands: mine (candidate cards from observed hook events).

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from .cli_common import SCRIPT, Context, examples


# --- mine ---------------------------------------------------------------------------------

def _add_mine(sub) -> None:
    p = sub.add_parser("mine", help="learn candidate lessons from the observed hook events",
                       description="Cluster what the hooks observed into candidate aha cards "
                       "(origin: mined, status: candidate, with a confidence and the observation "
                       "ids as evidence). --kind failures: the same tool failure in 2 or more "
                       "sessions, with the variant that succeeded next when the log shows one. "
                       "Mining again reinforces the same card (explicit key mined:<kind>:<digest>). "
                       "Only observations appended since the last run are read (checkpoint: "
                       "<store>/mine_state.json); a replaced or shrunk observations.jsonl is "
                       "mined again from the start. Rules and constants: references/LEARNING.md.",
                       epilog=examples(f"{SCRIPT} mine --dry-run",
                                       f"{SCRIPT} mine --kind failures --since 2025-01-01 "
                                       "--format json"))
    p.add_argument("--kind", action="append",
                   help="what to mine (comma-separated or repeated; default: all): failures")
    p.add_argument("--since", help="only observations at or after this ISO date or time (UTC); "
                   "reads the whole file and leaves the checkpoint alone")
    p.add_argument("--dry-run", action="store_true",
                   help="list the lessons that would be written; write nothing, not even the "
                   "checkpoint")
    p.set_defaults(run=_run_mine, writes=True)


def _run_mine(ctx: Context) -> Tuple[dict, List[str]]:
    from . import mine
    a = ctx.args
    data = mine.mine(ctx.memory, a.kind, a.since, a.dry_run, ctx.repo_root)
    a.writes = not a.dry_run and any(e["action"] in ("created", "reinforced")
                                     for e in data["lessons"])
    return data, mine.render(data)


COMMANDS = (_add_mine,)
