"""Argument parsing and dispatch; the only module that prints.

Each subcommand is ``_add_<name>(sub)`` with ``set_defaults(run=…)``; a run
function calls one feature module and returns ``(data, lines)``. ``main``
renders ``lines`` as text or ``data`` as one JSON object, prints store
warnings on stderr, and turns ``SelfLearningError`` into one
``self_learning: error:`` line per problem. Features never import this.
"""

import argparse
import json
import os
import sys
from typing import List, Optional, Tuple

from . import __version__, model, paths
from .errors import SelfLearningError, UsageError

PROG = "self_learning"
SCRIPT = "python3 scripts/self_learning.py"
STORE_HELP = (
    "store: <repo-root>/.agent-skills/self-learning/v1/users/<user>/ "
    "(moved by --repo-root or SELF_LEARNING_REPO_ROOT; user by --user or SELF_LEARNING_USER; "
    "global store: SELF_LEARNING_GLOBAL_DIR)")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors in the tool's own voice."""

    def error(self, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  $ {line}" for line in lines) + "\n\n" + STORE_HELP


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--repo-root", help="repository whose store to use (default: nearest .git)")
    common.add_argument("--user", help="store owner (default: $USER, slugified)")
    common.add_argument("--format", choices=("text", "json"), default="text",
                        help="output: text for people, json (one object) for tools")
    return common


class Context:
    """What every command needs: where the repo and stores are."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.repo_root = paths.find_repo_root(args.repo_root, script=sys.argv[0])
        self.user = paths.user_slug(args.user)
        from .memory import Stores
        self.stores = Stores.resolve(self.repo_root, self.user,
                                     getattr(args, "include_global", False))
        self.store_existed = os.path.isdir(self.stores.project.root)

    @property
    def memory(self):
        return self.stores.project

    def wrote(self) -> None:
        """After any write: make sure the store exists and INDEX.md is current."""
        from . import bootstrap, index
        bootstrap.ensure_store(self.memory.root, self.repo_root, created=not self.store_existed)
        index.refresh(self.memory, self.user)


# --- init, paths, demo ---------------------------------------------------------------------

def _add_init(sub) -> None:
    p = sub.add_parser("init", help="create the store (and ignore it in git)",
                       epilog=_examples(f"{SCRIPT} init", f"{SCRIPT} init --no-gitignore"))
    p.add_argument("--no-gitignore", action="store_true", help="do not touch .gitignore")
    p.add_argument("--global", dest="global_", action="store_true",
                   help="create the global store instead (~/.agent-skills/...)")
    p.set_defaults(run=_run_init)


def _run_init(ctx: Context) -> Tuple[dict, List[str]]:
    from . import bootstrap, index
    from .memory import Memory
    args = ctx.args
    memory = Memory(paths.global_store(ctx.user), "global") if args.global_ else ctx.memory
    result = bootstrap.ensure_store(memory.root, None if args.global_ else ctx.repo_root,
                                    gitignore=False)
    for name in paths.FILES.values():
        open(os.path.join(memory.root, name), "a").close()
    if not args.global_ and not args.no_gitignore and (
            os.path.exists(os.path.join(ctx.repo_root, ".git"))
            or os.path.exists(os.path.join(ctx.repo_root, ".gitignore"))):
        result["gitignore_updated"] = bootstrap.ensure_gitignore(ctx.repo_root)
    index.refresh(memory, ctx.user)
    lines = [f"{'Created' if result['created'] else 'Store already at'} {memory.root}"]
    if result.get("gitignore_updated"):
        lines.append(f"Added .agent-skills/ to {result['gitignore_updated']}")
    return result, lines


def _add_paths(sub) -> None:
    p = sub.add_parser("paths", help="print every file the tool reads or writes",
                       epilog=_examples(f"{SCRIPT} paths", f"{SCRIPT} paths --format json"))
    p.set_defaults(run=_run_paths)


def _run_paths(ctx: Context) -> Tuple[dict, List[str]]:
    root = ctx.memory.root
    data = {"repo_root": ctx.repo_root, "user": ctx.user, "store": root,
            "global_store": paths.global_store(ctx.user),
            "files": {k: os.path.join(root, v) for k, v in paths.FILES.items()},
            "index": os.path.join(root, "INDEX.md"),
            "quarantine": os.path.join(root, "quarantine"),
            "errors_log": os.path.join(root, "errors.jsonl"),
            "ingest_state": os.path.join(root, "ingest_state.json"),
            "mine_state": os.path.join(root, "mine_state.json"),
            "backups": os.path.join(root, "backups"),
            "exports": os.path.join(root, "exports"),
            "config": paths.config_file(ctx.repo_root),
            "disabled_marker": paths.disabled_marker(ctx.repo_root),
            "disabled": paths.kill_switch(ctx.repo_root)}
    lines = [f"{k}: {v}" for k, v in data.items() if not isinstance(v, dict)]
    lines += [f"file {k}: {v}" for k, v in data["files"].items()]
    return data, lines


def _add_demo(sub) -> None:
    p = sub.add_parser("demo", help="record, list and review sample memories in a throwaway store",
                       epilog=_examples(f"{SCRIPT} demo"))
    p.set_defaults(run=_run_demo)


def _run_demo(ctx: Context) -> Tuple[dict, List[str]]:
    from . import demo
    return demo.run(ctx)


# --- record, status, use, signal -----------------------------------------------------------

RECORD_EXAMPLE = ("echo '{\"aha_cards\": [{\"title\": \"Run pytest with -p no:cacheprovider "
                  "in read-only checkouts\", \"when_to_use\": \"pytest fails writing .pytest_cache\", "
                  "\"solution_steps\": [\"pytest -p no:cacheprovider\"], \"scope\": \"portable\"}]}' "
                  f"| {SCRIPT} record")


def _add_record(sub) -> None:
    p = sub.add_parser("record", help="record events, aha cards, recommendations and usage",
                       description="Validate the whole payload, redact secrets, merge "
                       "equivalents, then append. Fields: references/FORMAT.md.",
                       epilog=_examples(RECORD_EXAMPLE, f"{SCRIPT} record --json payload.json"))
    p.add_argument("--json", dest="source", metavar="FILE", default="-",
                   help="payload file, or - for standard input (default)")
    p.set_defaults(run=_run_record, writes=True)


def _run_record(ctx: Context) -> Tuple[dict, List[str]]:
    from . import record
    payload = record.read_payload(ctx.args.source, sys.stdin)
    data = record.record(ctx.memory, payload)
    lines = [f"{item['action']} {item['id']}: {item['title']}"
             for section in ("aha_cards", "recommendations") for item in data[section]]
    if data["event"]:
        lines.append(f"event {data['event']}")
    if data["signals"]:
        lines.append(f"{data['signals']} signal(s)")
    return data, lines or ["nothing to record (empty payload)"]


def _add_status(sub, name: str, kind: str) -> None:
    statuses = model.CARD_STATUSES if kind == "card" else model.REC_STATUSES
    example_id = "aha_example" if kind == "card" else "rec_example"
    status = "accepted" if kind == "card" else "done"
    p = sub.add_parser(name, help=f"set the status of a {'card' if kind == 'card' else 'recommendation'}",
                       epilog=_examples(f"{SCRIPT} {name} --id {example_id} --status {status} "
                                        "--note 'checked on CI'"))
    p.add_argument("--id", required=True)
    p.add_argument("--status", required=True, help="one of: " + ", ".join(statuses))
    p.add_argument("--note")
    if kind == "rec":
        p.add_argument("--scope", choices=model.SCOPES)
    p.set_defaults(run=_run_status, kind=kind, writes=True)


def _run_status(ctx: Context) -> Tuple[dict, List[str]]:
    from . import update
    a = ctx.args
    data = update.set_status(ctx.memory, a.kind, a.id, a.status, a.note, getattr(a, "scope", None))
    return data, [f"{data['id']}: {data['previous_status']} → {data['status']}"]


def _add_use(sub) -> None:
    p = sub.add_parser("use", help="note that cards or recommendations were used",
                       epilog=_examples(f"{SCRIPT} use --aha aha_example --rec rec_example"))
    p.add_argument("--aha", action="append", help="card ids (comma-separated or repeated)")
    p.add_argument("--rec", action="append", help="recommendation ids")
    p.add_argument("--source", default="manual")
    p.add_argument("--context")
    p.set_defaults(run=_run_use, writes=True)


def _run_use(ctx: Context) -> Tuple[dict, List[str]]:
    from . import update
    a = ctx.args
    data = update.use(ctx.memory, a.aha, a.rec, a.source, a.context)
    return data, [f"{s['kind']} {s['target']}" for s in data["signals"]]


def _add_signal(sub) -> None:
    p = sub.add_parser("signal", help="append one lifecycle signal",
                       epilog=_examples(f"{SCRIPT} signal --kind aha_recalled --aha-id aha_example"))
    p.add_argument("--kind", required=True, help="one of: " + ", ".join(model.SIGNAL_KINDS))
    p.add_argument("--aha-id")
    p.add_argument("--rec-id")
    p.add_argument("--source", default="manual")
    p.add_argument("--context")
    p.set_defaults(run=_run_signal, writes=True)


def _run_signal(ctx: Context) -> Tuple[dict, List[str]]:
    from . import update
    a = ctx.args
    data = update.signal(ctx.memory, a.kind, a.aha_id, a.rec_id, a.source, a.context)
    return data, [f"{s['kind']} {s['target']}" for s in data["signals"]]


# --- list, review, repair, index -----------------------------------------------------------

def _statuses(values: Optional[List[str]]) -> List[str]:
    return [model.normalize_status(s.strip()) for v in values or [] for s in v.split(",") if s.strip()]


def _add_list(sub) -> None:
    p = sub.add_parser("list", help="cards, latest version each, best first",
                       epilog=_examples(f"{SCRIPT} list --query 'pytest cache'",
                                        f"{SCRIPT} list --status rejected,deprecated --format json"))
    p.add_argument("--query", help="rank by relevance to this text (BM25)")
    p.add_argument("--skill")
    p.add_argument("--tag")
    p.add_argument("--status", action="append", help="only these statuses (shows hidden ones)")
    p.add_argument("--limit", type=int, default=20, help="at most this many (0 = all)")
    p.add_argument("--include-global", action="store_true", help="also the global store")
    p.set_defaults(run=_run_list)


def _run_list(ctx: Context) -> Tuple[dict, List[str]]:
    from . import review
    a = ctx.args
    data = review.list_cards(ctx.stores, a.query, a.skill, a.tag, _statuses(a.status), a.limit)
    return data, review.render_list(data)


def _add_review(sub) -> None:
    p = sub.add_parser("review", help="dashboard: open recommendations, top cards, next actions",
                       epilog=_examples(f"{SCRIPT} review", f"{SCRIPT} review --days 30 --format json"))
    window = p.add_mutually_exclusive_group()
    window.add_argument("--days", type=float, help="activity window in days (default 7)")
    window.add_argument("--since", help="activity window start, ISO date")
    p.add_argument("--scope", choices=model.SCOPES)
    p.add_argument("--skill")
    p.add_argument("--status", action="append")
    p.add_argument("--query")
    p.add_argument("--stale-days", type=float, default=7,
                   help="an open recommendation idle this long is stale (default 7)")
    p.add_argument("--include-global", action="store_true")
    p.set_defaults(run=_run_review)


def _run_review(ctx: Context) -> Tuple[dict, List[str]]:
    from . import review
    a = ctx.args
    data = review.review(ctx.stores, a.days, a.since, a.scope, a.skill, _statuses(a.status),
                         a.query, a.stale_days)
    return data, review.render_review(data)


def _add_repair(sub) -> None:
    p = sub.add_parser("repair", help="report (and --apply) fixes: torn lines, aliases, skills",
                       epilog=_examples(f"{SCRIPT} repair", f"{SCRIPT} repair --apply"))
    p.add_argument("--apply", action="store_true", help="do it (default: report only)")
    p.set_defaults(run=_run_repair, quiet_warnings=True)


def _run_repair(ctx: Context) -> Tuple[dict, List[str]]:
    from . import repair
    found = repair.plan(ctx.memory)
    if not ctx.args.apply:
        return found, repair.render(found, applied=False)
    data = repair.apply(ctx.memory, found)
    ctx.wrote()
    return data, repair.render(data, applied=True)


def _add_index(sub) -> None:
    p = sub.add_parser("index", help="regenerate INDEX.md now",
                       epilog=_examples(f"{SCRIPT} index"))
    p.set_defaults(run=_run_index)


def _run_index(ctx: Context) -> Tuple[dict, List[str]]:
    from . import index
    path = index.refresh(ctx.memory, ctx.user)
    return {"index": path}, [f"wrote {path}"]


# --- hooks: hook, install-hooks, uninstall-hooks, doctor --------------------------------------

AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")
SKILL_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _add_hook(sub) -> None:
    p = sub.add_parser("hook", help="observe one agent hook payload from stdin (always exits 0)",
                       description="Called by the agent's hook config, not by people. Reads one "
                       "payload, appends one redacted observation; never fails the agent. "
                       "Off when SELF_LEARNING_DISABLE=1 or .agent-skills/self-learning/disabled exists.",
                       epilog=_examples(f"echo '{{\"hook_event_name\": \"SessionStart\", "
                                        f"\"session_id\": \"s1\", \"source\": \"startup\"}}' "
                                        f"| python3 -S scripts/self_learning.py hook --agent claude"))
    p.add_argument("--agent", choices=("auto",) + AGENTS, default="auto")
    p.add_argument("--event", help="event name for payloads that carry none (Copilot)")
    p.set_defaults(run=None)


def _add_install_hooks(sub, uninstall: bool = False) -> None:
    name = "uninstall-hooks" if uninstall else "install-hooks"
    p = sub.add_parser(name, help=("remove our hook entries from" if uninstall else
                                   "merge our hook entries into") + " an agent's settings",
                       description="Other settings and hooks are left as they were; a backup "
                       "of the previous file goes to <store>/backups/. Details: references/INTEGRATION.md.",
                       epilog=_examples(f"{SCRIPT} {name} --agent claude --dry-run",
                                        f"{SCRIPT} {name} --agent claude"))
    p.add_argument("--agent", required=True, choices=AGENTS)
    p.add_argument("--scope", choices=("project", "user"), default="project")
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    p.set_defaults(run=_run_install_hooks, uninstall=uninstall)


def _run_install_hooks(ctx: Context) -> Tuple[dict, List[str]]:
    from pathlib import Path
    from . import bootstrap, install
    a = ctx.args
    changes = install.plan(a.agent, a.scope, Path(ctx.repo_root), Path(SKILL_DIR),
                           Path(os.path.expanduser("~")), uninstall=a.uninstall)
    data = {"agent": a.agent, "scope": a.scope, "dry_run": a.dry_run,
            "changes": [{"path": str(c.path), "summary": c.summary} for c in changes]}
    if a.dry_run:
        lines = [c.summary for c in changes] + [install.render_diff(c) for c in changes]
        return data, lines or ["nothing to change"]
    written = install.apply(changes, Path(ctx.memory.root) / "backups")
    if not a.uninstall:
        bootstrap.ensure_store(ctx.memory.root, ctx.repo_root)
        _precompile()
    data["written"] = [str(p) for p in written]
    lines = [c.summary for c in changes] or ["already up to date"]
    lines += [f"manual step: {m}" for m in install.MANUAL_STEPS.get(a.agent, []) if not a.uninstall]
    return data, lines


def _precompile() -> None:
    """Cache bytecode so the hook starts fast even where Python does not write it itself."""
    import compileall
    compileall.compile_dir(os.path.join(SKILL_DIR, "scripts", "selflearn"), quiet=2)


def _add_doctor(sub) -> None:
    p = sub.add_parser("doctor", help="hooks installed and firing? store healthy? kill switch?",
                       epilog=_examples(f"{SCRIPT} doctor", f"{SCRIPT} doctor --format json"))
    p.set_defaults(run=_run_doctor)


def _run_doctor(ctx: Context) -> Tuple[dict, List[str]]:
    from . import doctor
    data = doctor.check(ctx.memory, ctx.repo_root)
    return data, doctor.render(data)


# --- ingest-transcripts ------------------------------------------------------------------

def _add_ingest_transcripts(sub) -> None:
    p = sub.add_parser("ingest-transcripts",
                       help="backfill observations from Claude Code transcripts",
                       description="Turn Claude Code session transcripts into the observations "
                       "the hooks would have recorded (source: transcript) and append them. "
                       "Default: ~/.claude/projects/<repo root, non-alphanumerics as '-'>/*.jsonl "
                       "and <session>/subagents/*.jsonl (CLAUDE_CONFIG_DIR moves ~/.claude). "
                       "Only bytes appended since the last run are read (offsets: "
                       "<store>/ingest_state.json); tool calls the hooks already recorded are "
                       "skipped.",
                       epilog=_examples(f"{SCRIPT} ingest-transcripts --dry-run",
                                        f"{SCRIPT} ingest-transcripts --since 2025-01-01 "
                                        "--format json"))
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="transcript .jsonl files or folders (default: this repo's project folder)")
    p.add_argument("--since", help="only entries at or after this ISO date or time (UTC)")
    p.add_argument("--dry-run", action="store_true",
                   help="report what would be added; write nothing")
    p.set_defaults(run=_run_ingest_transcripts)


def _run_ingest_transcripts(ctx: Context) -> Tuple[dict, List[str]]:
    from . import transcripts
    a = ctx.args
    progress = (lambda line: sys.stderr.write(f"{PROG}: {line}\n")) if sys.stderr.isatty() else None
    data = transcripts.ingest(ctx.memory, ctx.repo_root, a.paths, a.since, a.dry_run, progress)
    if data["files_read"] and not a.dry_run:
        ctx.wrote()
    return data, transcripts.render(data)


# --- graduation: export-backport, backport-inspect, backport-remove, promote ----------------

BUNDLES = ("bundles: <store>/exports/backports/<skill>_<backport id>/ (manifest.json, README.md, "
           "proposed/, backup/, backport.patch); provenance: <store>/backports.jsonl. "
           "Markers and fields: references/FORMAT.md.")


def _skill_path(p) -> None:
    p.add_argument("--skill-path", required=True, metavar="DIR",
                   help="the skill folder (the one holding SKILL.md)")


def _add_export_backport(sub) -> None:
    p = sub.add_parser("export-backport", help="graduate cards into a skill folder (dry run "
                       "unless --apply)",
                       description="Propose one block per card in <skill>/references/"
                       "self-learning-aha.md and a pointer in its SKILL.md; re-exporting updates "
                       "changed blocks in place and leaves the rest byte-identical. " + BUNDLES,
                       epilog=_examples(f"{SCRIPT} export-backport --skill-path ./my-skill "
                                        "--ids aha_example --make-diff",
                                        f"{SCRIPT} export-backport --skill-path ./my-skill "
                                        "--ids aha_example --apply"))
    _skill_path(p)
    p.add_argument("--ids", action="append", required=True,
                   help="card ids (comma-separated or repeated)")
    p.add_argument("--make-diff", action="store_true",
                   help="also write backport.patch for `git apply`")
    p.add_argument("--apply", action="store_true",
                   help="write into the skill and mark the cards backported (default: dry run)")
    p.add_argument("--force", action="store_true",
                   help="also export non-shareable and rejected/deprecated/retired cards")
    p.set_defaults(run=_run_export_backport, writes=True)


def _run_export_backport(ctx: Context) -> Tuple[dict, List[str]]:
    from . import backport
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
                       epilog=_examples(f"{SCRIPT} backport-inspect --skill-path ./my-skill",
                                        f"{SCRIPT} backport-inspect --skill-path ./my-skill "
                                        "--aha-id aha_example --format json"))
    _skill_path(p)
    p.add_argument("--backport-id", help="only blocks written by this backport")
    p.add_argument("--aha-id", help="only the block of this card")
    p.set_defaults(run=_run_backport_inspect, include_global=True)


def _run_backport_inspect(ctx: Context) -> Tuple[dict, List[str]]:
    from . import backport
    a = ctx.args
    data = backport.inspect(ctx.stores, a.skill_path, a.backport_id, a.aha_id)
    return data, backport.render_inspect(data)


def _add_backport_remove(sub) -> None:
    p = sub.add_parser("backport-remove", help="take card blocks back out of a skill (dry run "
                       "unless --apply)",
                       description="Cuts exactly the chosen blocks; the SKILL.md pointer and the "
                       "reference file's header go with the last card, and a reference file the "
                       "tool created is deleted once empty. Every other byte stays. " + BUNDLES,
                       epilog=_examples(f"{SCRIPT} backport-remove --skill-path ./my-skill "
                                        "--aha-id aha_example",
                                        f"{SCRIPT} backport-remove --skill-path ./my-skill "
                                        "--aha-id aha_example --apply"))
    _skill_path(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--backport-id", help="the blocks this backport wrote (or last updated)")
    which.add_argument("--aha-id", help="the block of this card")
    p.add_argument("--apply", action="store_true", help="do it (default: show what would go)")
    p.set_defaults(run=_run_backport_remove)


def _run_backport_remove(ctx: Context) -> Tuple[dict, List[str]]:
    from . import backport
    a = ctx.args
    data = backport.remove(ctx.memory, a.skill_path, a.backport_id, a.aha_id, a.apply)
    return data, backport.render_remove(data)


def _add_promote(sub) -> None:
    p = sub.add_parser("promote", help="copy cards to your global store (shared by all repos)",
                       description="Copies the latest version of each card to the global store "
                       "once and records an aha_promoted signal here; `list --include-global` "
                       "then shows it in every repo (a project copy wins on id clash). Global "
                       "store: ~/.agent-skills/self-learning/v1/users/<user>/ (moved by "
                       "SELF_LEARNING_GLOBAL_DIR).",
                       epilog=_examples(f"{SCRIPT} promote --ids aha_example"))
    p.add_argument("--ids", action="append", required=True,
                   help="card ids (comma-separated or repeated)")
    p.set_defaults(run=_run_promote, include_global=True, writes=True)


def _run_promote(ctx: Context) -> Tuple[dict, List[str]]:
    from . import backport, promote
    data = promote.promote(ctx.memory, ctx.stores.global_, backport.parse_ids(ctx.args.ids),
                           ctx.user)
    return data, promote.render(data)


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
                       epilog=_examples(f"{SCRIPT} mine --dry-run",
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
    data = mine.mine(ctx.memory, a.kind, a.since, a.dry_run)
    a.writes = not a.dry_run and any(e["action"] in ("created", "reinforced")
                                     for e in data["lessons"])
    return data, mine.render(data)


COMMANDS = (_add_init, _add_record, _add_list, _add_review, lambda s: _add_status(s, "aha-status", "card"),
            lambda s: _add_status(s, "rec-status", "rec"), _add_use, _add_signal, _add_repair,
            _add_index, _add_paths, _add_demo, _add_hook, _add_install_hooks,
            lambda s: _add_install_hooks(s, uninstall=True), _add_doctor,
            _add_ingest_transcripts,
            _add_export_backport, _add_backport_inspect, _add_backport_remove, _add_promote,
            _add_mine)


def build_parser() -> Parser:
    parser = Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="Memory for coding agents: recall before work, record after, "
                    "learn from hooks, graduate what proves itself.",
                    epilog=_examples(f"{SCRIPT} demo", f"{SCRIPT} review"))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_SubParser)
    sub.required = True
    for add in COMMANDS:
        add(sub)
    return parser


class _SubParser(Parser):
    """Subcommand parsers share the common options and keep their examples' layout."""

    def __init__(self, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        kwargs.setdefault("parents", [_common()])
        super().__init__(**kwargs)


def _emit(args, data: dict, lines: List[str]) -> None:
    if args.format == "json":
        sys.stdout.write(json.dumps({"schema": 1, **data}, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in lines))


def _fail(err: SelfLearningError) -> int:
    for line in str(err).splitlines() or ["unknown error"]:
        sys.stderr.write(f"{PROG}: error: {line}\n")
    return err.exit_code


def main(argv: Optional[List[str]] = None) -> int:
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        if argv[:1] == ["hook"]:
            from . import hook
            return hook.main(argv[1:])
        args = build_parser().parse_args(argv)
        ctx = Context(args)
        data, lines = args.run(ctx)
        if getattr(args, "writes", False):
            ctx.wrote()
        warnings = list(data.get("warnings") or [])
        if not getattr(args, "quiet_warnings", False):
            warnings += ctx.stores.warnings
        for warning in dict.fromkeys(warnings):  # stderr is talk; stdout stays data
            sys.stderr.write(f"{PROG}: warning: {warning}\n")
        _emit(args, data, lines)
        return 0
    except SelfLearningError as err:
        return _fail(err)
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: error: interrupted\n")
        return 130
