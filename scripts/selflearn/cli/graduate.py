"""Graduation commands: export-backport, backport-inspect, backport-remove, promote.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

from typing import List, Tuple

from .common import SCRIPT, Context, examples, option


# --- graduation: export-backport, backport-inspect, backport-remove, promote ----------------

BUNDLES = ("bundles: <store>/exports/backports/<skill>_<backport id>/ (manifest.json, README.md, "
           "proposed/, backup/, backport.patch); provenance: <store>/backports.jsonl. "
           "Markers and fields: references/FORMAT.md.")


def _add_export_backport(sub) -> None:
    p = sub.add_parser("export-backport", help="graduate cards into a skill folder (dry run "
                       "unless --apply)",
                       description="Propose one block per card in <skill>/references/"
                       "self-learning-aha.md and a pointer in its SKILL.md; re-exporting updates "
                       "changed blocks in place and leaves the rest byte-identical. " + BUNDLES,
                       epilog=examples(f"{SCRIPT} export-backport --skill-path ./my-skill "
                                       "--ids aha_example --make-diff",
                                       f"{SCRIPT} export-backport --skill-path ./my-skill "
                                       "--ids aha_example --apply"))
    option(p, "--skill-path")
    option(p, "--ids", required=True)
    p.add_argument("--make-diff", action="store_true",
                   help="also write backport.patch for `git apply`")
    option(p, "--apply", "write into the skill and mark the cards backported")
    p.add_argument("--force", action="store_true",
                   help="also export non-shareable and rejected/deprecated/retired cards")
    p.set_defaults(run=_run_export_backport, writes=True)


def _run_export_backport(ctx: Context) -> Tuple[dict, List[str]]:
    from ..graduation import backport
    a = ctx.args
    data = backport.export(ctx.memory, a.skill_path, backport.parse_ids(a.ids), a.make_diff,
                           a.apply, a.force)
    return data, backport.render_export(data)


def _add_backport_inspect(sub) -> None:
    p = sub.add_parser("backport-inspect", help="what this tool put into a skill, and whether "
                       "it still matches the store",
                       description="Lists the pointer and every card block with the backport "
                       "that wrote it and its state: current, drifted (card changed since "
                       "export, or block edited by hand) or unknown (card not in the project or "
                       "global store). " + BUNDLES,
                       epilog=examples(f"{SCRIPT} backport-inspect --skill-path ./my-skill",
                                       f"{SCRIPT} backport-inspect --skill-path ./my-skill "
                                       "--aha-id aha_example --format json"))
    option(p, "--skill-path")
    p.add_argument("--backport-id", help="only blocks written by this backport")
    p.add_argument("--aha-id", help="only the block of this card")
    p.set_defaults(run=_run_backport_inspect, include_global=True)


def _run_backport_inspect(ctx: Context) -> Tuple[dict, List[str]]:
    from ..graduation import backport
    a = ctx.args
    data = backport.inspect(ctx.stores, a.skill_path, a.backport_id, a.aha_id)
    return data, backport.render_inspect(data)


def _add_backport_remove(sub) -> None:
    p = sub.add_parser("backport-remove", help="take card blocks back out of a skill (dry run "
                       "unless --apply)",
                       description="Cuts exactly the chosen blocks; the SKILL.md pointer and the "
                       "reference file's header go with the last card, and a reference file the "
                       "tool created is deleted once empty. Every other byte stays. A backported card "
                       "no other skill holds any more gets back the status it had before. "
                       + BUNDLES,
                       epilog=examples(f"{SCRIPT} backport-remove --skill-path ./my-skill "
                                       "--aha-id aha_example",
                                       f"{SCRIPT} backport-remove --skill-path ./my-skill "
                                       "--aha-id aha_example --apply"))
    option(p, "--skill-path")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--backport-id", help="the blocks this backport wrote (or last updated)")
    which.add_argument("--aha-id", help="the block of this card")
    option(p, "--apply", "cut the blocks")
    p.set_defaults(run=_run_backport_remove)


def _run_backport_remove(ctx: Context) -> Tuple[dict, List[str]]:
    from ..graduation import backport
    a = ctx.args
    data = backport.remove(ctx.memory, a.skill_path, a.backport_id, a.aha_id, a.apply)
    return data, backport.render_remove(data)


def _add_promote(sub) -> None:
    p = sub.add_parser("promote", help="accept mined candidates that proved themselves, or "
                       "(--ids) copy cards to your global store",
                       description="Two modes. Without --ids: lifecycle promotion; every mined "
                       "candidate that meets the bar (enough observations over enough days, "
                       "confidence high enough, no recent violation; references/LIFECYCLE.md) "
                       "becomes accepted, recorded as a card version and an aha_status signal; "
                       "the candidates that stay are listed with the reason. With --ids: copies "
                       "the latest version of each card to the global store once and records an "
                       "aha_promoted signal here (a rejected, deprecated, retired, non-shareable, "
                       "imported or held card is refused and nothing is written); `list --include-global` then shows it in every "
                       "repo (a project copy wins on id clash). Global store: "
                       "~/.agent-skills/self-learning/v1/users/<user>/ (moved by "
                       "SELF_LEARNING_GLOBAL_DIR).",
                       epilog=examples(f"{SCRIPT} promote --dry-run", f"{SCRIPT} promote",
                                       f"{SCRIPT} promote --ids aha_example"))
    option(p, "--ids", "copy these cards to the global store")
    option(p, "--dry-run", "lifecycle mode only: list what would be accepted")
    p.set_defaults(run=_run_promote, include_global=True, writes=True)


def _run_promote(ctx: Context) -> Tuple[dict, List[str]]:
    from ..graduation import backport, promote
    from ..learning import transitions
    a = ctx.args
    if a.ids is None:
        data = transitions.run(ctx.memory, "promote", a.dry_run)
        a.writes = data["wrote"]
        return data, transitions.render(data)
    if a.dry_run:
        from ..storage.errors import UsageError
        raise UsageError("promote: --dry-run applies to lifecycle promotion (without --ids); "
                         "copying with --ids has no dry run")
    data = promote.promote(ctx.memory, ctx.stores.global_, backport.parse_ids(a.ids), ctx.user)
    return data, promote.render(data)


COMMANDS = (_add_export_backport, _add_backport_inspect, _add_backport_remove, _add_promote)
