"""Memory commands: init, record, list, review, aha-status, rec-status, use, signal,
repair, index, paths, demo.

Each is ``_add_<cmd>(sub)`` plus ``_run_<cmd>(ctx)`` calling one feature module.
Imports ``cli_common`` and features only; must not import ``cli``.
"""

import os
import sys
from typing import List, Tuple

from ..storage import model, paths
from ..storage.errors import UsageError
from .common import SCRIPT, Context, _statuses, bounded, examples, option, query_of


# --- init, paths, demo ---------------------------------------------------------------------

def _add_init(sub) -> None:
    p = sub.add_parser("init", help="create the store (and ignore it in git)",
                       description="Creates the store folder and its files (private, 0700/"
                       "0600) and adds .agent-skills/ to .gitignore. With --commit-store, for a "
                       "team that commits each person's store: .gitattributes gets the line that "
                       "merges stores as a union (git keeps both branches' lines, never a "
                       "conflict), the cards already in the store count as this person's, and "
                       "it prints the git command that commits the lessons. A teammate's "
                       "committed cards are listed as imported and reach the agent only once "
                       "accepted here (aha-status --id ID --status accepted). Details: "
                       "references/SHARING.md.",
                       epilog=examples(f"{SCRIPT} init", f"{SCRIPT} init --no-gitignore",
                                       f"{SCRIPT} init --commit-store"))
    p.add_argument("--no-gitignore", action="store_true", help="do not touch .gitignore")
    p.add_argument("--commit-store", action="store_true",
                   help="this store will be committed: merge stores as a union in git")
    p.add_argument("--global", dest="global_", action="store_true",
                   help="create the global store instead (~/.agent-skills/...)")
    p.set_defaults(run=_run_init)


def _run_init(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import bootstrap, store
    from ..surfacing import index
    from ..storage.memory import Memory
    args = ctx.args
    if args.commit_store and args.global_:
        raise UsageError("init: --commit-store is for the project store (a team commits it); "
                         "drop --global")
    memory = Memory(paths.global_store(ctx.user), "global") if args.global_ else ctx.memory
    result = bootstrap.ensure_store(memory.root, None if args.global_ else ctx.repo_root,
                                    gitignore=False)
    for name in paths.FILES.values():  # created private (0600), as every append makes them
        store.append_bytes(os.path.join(memory.root, name), b"")
    if not args.global_ and not args.no_gitignore and (
            os.path.exists(os.path.join(ctx.repo_root, ".git"))
            or os.path.exists(os.path.join(ctx.repo_root, ".gitignore"))):
        result["gitignore_updated"] = bootstrap.ensure_gitignore(ctx.repo_root)
    index.refresh(memory, ctx.user)
    lines = [f"{'Created' if result['created'] else 'Store already at'} {memory.root}"]
    if result.get("gitignore_updated"):
        lines.append(f"Added .agent-skills/ to {result['gitignore_updated']}")
    if args.commit_store:
        result["commit_store"] = data = _commit_store(ctx)
        lines += [f"Added the union merge of stores to {data['attributes_updated']}"
                  if data["attributes_updated"] else "Stores already merge as a union",
                  f"Commit your lessons: git add -f {' '.join(data['files'])} .gitattributes "
                  "&& git commit"]
    return result, lines


def _commit_store(ctx: Context) -> dict:
    """The attributes line, this person's cards accepted here, the files to commit."""
    from ..storage import bootstrap, provenance
    changed = bootstrap.ensure_attributes(ctx.repo_root)
    cards = [] if provenance.tracked(ctx.memory.root) else list(ctx.memory.folded("cards").values())
    if cards:  # written here before the store was committed: this person's own
        provenance.accept(ctx.memory.root, ctx.user, cards, written=True)
    rel = os.path.relpath(ctx.memory.root, ctx.repo_root)
    return {"attributes_updated": changed, "accepted": len(cards),
            "files": [os.path.join(rel, paths.FILES[k]) for k in paths.SHARED]}


def _add_paths(sub) -> None:
    p = sub.add_parser("paths", help="print every file the tool reads or writes",
                       epilog=examples(f"{SCRIPT} paths", f"{SCRIPT} paths --format json"))
    p.set_defaults(run=_run_paths)


def _run_paths(ctx: Context) -> Tuple[dict, List[str]]:
    root = ctx.memory.root
    data = {"repo_root": ctx.repo_root, "user": ctx.user, "store": root,
            "global_store": paths.global_store(ctx.user),
            "files": {k: os.path.join(root, v) for k, v in paths.FILES.items()},
            "index": os.path.join(root, "INDEX.md"),
            "index_db": os.path.join(root, "index.sqlite3"),
            "quarantine": os.path.join(root, "quarantine"),
            "errors_log": os.path.join(root, "errors.jsonl"),
            "ingest_state": os.path.join(root, "ingest_state.json"),
            "mine_state": os.path.join(root, "mine_state.json"),
            "maintain_state": os.path.join(root, "maintain_state.json"),
            "feedback": os.path.join(root, "feedback.md"),
            "report": os.path.join(root, "report.html"),
            "improvements_log": os.path.join(root, "improvements.md"),
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
                       description="Writes sample cards, recommendations and signals into a new "
                       "temporary folder (its path is printed; delete it when done). Only an "
                       "explicit --repo-root puts them into that repository's store instead; "
                       "SELF_LEARNING_REPO_ROOT never does, so your real memory stays clean.",
                       epilog=examples(f"{SCRIPT} demo"))
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
                       "equivalents, then append. Provenance is the tool's: cards start as "
                       "proposed with origin agent, and a payload setting origin, confidence, "
                       "internal fields or another status is refused (references/SECURITY.md). "
                       "Fields: references/FORMAT.md.",
                       epilog=examples(RECORD_EXAMPLE, f"{SCRIPT} record --json payload.json"))
    p.add_argument("--json", dest="source", metavar="FILE", default="-",
                   help="payload file, or - for standard input (default)")
    p.set_defaults(run=_run_record, writes=True)


def _episode_calls(ctx: Context, payload) -> dict:
    """The trigger shape of each episode a recorded card names (when it is still in the log)."""
    from ..learning import episodes
    cards = payload.get("aha_cards") if isinstance(payload, dict) else None
    named = {c["episode"] for c in cards if isinstance(c, dict)
             and isinstance(c.get("episode"), str) and c["episode"]} \
        if isinstance(cards, list) else set()
    out: dict = {}
    for episode in named:
        found = episodes.by_id(ctx.memory.root, episode)
        if found is not None:
            out[episode] = episodes.call(found, ctx.repo_root)
    return out


def _run_record(ctx: Context) -> Tuple[dict, List[str]]:
    """Under the store folder's lock (bounded wait): an agent's retry racing its first
    ``record`` must find the card the first one wrote and reinforce it, not write it twice."""
    from ..storage import cursors, record
    from ..surfacing import storeindex
    payload = record.read_payload(ctx.args.source, sys.stdin)
    with cursors.exclusive(ctx.memory.root, enabled=ctx.memory.exists()):
        index = storeindex.of(ctx.memory)
        if index is not None:
            index.check(["cards", "recs"])
        data = record.record(ctx.memory, payload, storeindex.Known(index) if index else None,
                             calls=_episode_calls(ctx, payload))
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
                       epilog=examples(f"{SCRIPT} {name} --id {example_id} --status {status} "
                                       "--note 'checked on CI'"))
    p.add_argument("--id", required=True)
    p.add_argument("--status", required=True, help="one of: " + ", ".join(statuses))
    p.add_argument("--note")
    if kind == "rec":
        p.add_argument("--scope", choices=model.SCOPES)
    else:
        p.add_argument("--accept-flagged", action="store_true",
                       help="accept a card the safety screen holds back, after reading it "
                       "(recorded in the card; see references/SECURITY.md)")
    p.set_defaults(run=_run_status, kind=kind, writes=True)


def _run_status(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import update
    a = ctx.args
    data = update.set_status(ctx.memory, a.kind, a.id, a.status, a.note, getattr(a, "scope", None),
                             accept_flagged=getattr(a, "accept_flagged", False), by=ctx.user,
                             stores=ctx.stores)
    if a.kind == "card" and data["status"] not in ("accepted", "proposed", "candidate"):
        from ..surfacing import triggers
        triggers.drop(ctx.memory, [data["id"]])  # a refused lesson leaves its calls at once
    elif a.kind == "card" and data["status"] != data["previous_status"]:
        from .hookcalls import start_learning  # an accepted lesson reaches its calls now,
        start_learning(ctx.repo_root, ctx.memory.root, "status-change")  # not after a session
    return data, [f"{data['id']}: {data['previous_status']} → {data['status']}"]


def _add_use(sub) -> None:
    p = sub.add_parser("use", help="note that cards or recommendations were used",
                       epilog=examples(f"{SCRIPT} use --aha aha_example --rec rec_example"))
    p.add_argument("--aha", action="append", help="card ids (comma-separated or repeated)")
    p.add_argument("--rec", action="append", help="recommendation ids")
    p.add_argument("--source", default="manual",
                   help="a short label of who noted it (default: manual)")
    p.add_argument("--context")
    p.set_defaults(run=_run_use, writes=True)


def _run_use(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import update
    a = ctx.args
    data = update.use(ctx.memory, a.aha, a.rec, a.source, a.context)
    return data, [f"{s['kind']} {s['target']}" for s in data["signals"]]


def _add_signal(sub) -> None:
    p = sub.add_parser("signal", help="append one lifecycle signal",
                       epilog=examples(f"{SCRIPT} signal --kind aha_recalled --aha-id aha_example"))
    p.add_argument("--kind", required=True, help="one of: " + ", ".join(model.SIGNAL_KINDS))
    p.add_argument("--aha-id")
    p.add_argument("--rec-id")
    p.add_argument("--source", default="manual",
                   help="a short label of who noted it (default: manual)")
    p.add_argument("--context")
    p.set_defaults(run=_run_signal, writes=True)


def _run_signal(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import update
    a = ctx.args
    data = update.signal(ctx.memory, a.kind, a.aha_id, a.rec_id, a.source, a.context)
    return data, [f"{s['kind']} {s['target']}" for s in data["signals"]]


# --- list, review, repair, index -----------------------------------------------------------

def _add_list(sub) -> None:
    p = sub.add_parser("list", help="cards, latest version each, best first",
                       epilog=examples(f"{SCRIPT} list --query 'pytest cache'",
                                       f"{SCRIPT} list --status rejected,deprecated --format json"))
    option(p, "--query", "rank by relevance (BM25, word forms meet); only the cards that answer "
           "it: the best holds enough of its rarer words, the rest come close to the best")
    p.add_argument("--skill")
    p.add_argument("--tag")
    p.add_argument("--status", action="append", help="only these statuses (shows hidden ones)")
    option(p, "--limit", default=20)
    p.add_argument("--include-global", action="store_true", help="also the global store")
    p.set_defaults(run=_run_list)


def _run_list(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import review
    a = ctx.args
    data = review.list_cards(ctx.stores, query_of(ctx), a.skill, a.tag,
                             _statuses(a.status, "list"),
                             bounded("list", "--limit", a.limit, 0, float("inf")))
    return data, review.render_list(data)


MAX_DAYS = 36500  # a window or idle time longer than a century is a typo


def _add_review(sub) -> None:
    from ..surfacing.review import SHOW
    p = sub.add_parser("review", help="dashboard: open recommendations, top cards, next actions",
                       description="What needs attention: open recommendations, the top cards, "
                       "backport candidates, mined candidates, lessons the safety screen holds, "
                       f"pending proposals, and the next actions. Each list shows {SHOW} rows in "
                       "text and JSON alike (`totals` counts them all); --limit shows more.",
                       epilog=examples(f"{SCRIPT} review",
                                       f"{SCRIPT} review --days 30 --format json --limit 20"))
    window = p.add_mutually_exclusive_group()
    window.add_argument("--days", type=float, help="activity window in days (default 7)")
    option(window, "--since", "start of the activity window")
    p.add_argument("--scope", choices=model.SCOPES)
    p.add_argument("--skill")
    p.add_argument("--status", action="append")
    option(p, "--query", "rank the top cards by relevance")
    p.add_argument("--stale-days", type=float, default=7,
                   help="an open recommendation idle this long is stale (default 7)")
    p.add_argument("--include-global", action="store_true")
    option(p, "--limit", default=SHOW,
           help=f"at most this many rows per list (0 = all; default {SHOW})")
    p.set_defaults(run=_run_review)


def _run_review(ctx: Context) -> Tuple[dict, List[str]]:
    from ..surfacing import review
    a = ctx.args
    since = model.parse_ts(a.since) if a.since else None
    if since and since > model.now():
        from ..storage.errors import UsageError
        raise UsageError(f"review: --since {a.since} is in the future; give a past date, e.g. "
                         "--since 2026-01-31, or --days 30")
    statuses = _statuses(a.status, "review", tuple(dict.fromkeys(model.CARD_STATUSES
                                                                  + model.REC_STATUSES)))
    data = review.review(ctx.stores, bounded("review", "--days", a.days, 0, MAX_DAYS), a.since,
                         a.scope, a.skill, statuses, query_of(ctx),
                         bounded("review", "--stale-days", a.stale_days, 0, MAX_DAYS),
                         bounded("review", "--limit", a.limit, 0, float("inf")) or None)
    return data, review.render_review(data)


def _add_repair(sub) -> None:
    p = sub.add_parser("repair", help="report (and --apply) fixes: damaged lines, aliases, skills",
                       epilog=examples(f"{SCRIPT} repair", f"{SCRIPT} repair --apply"))
    option(p, "--apply", "quarantine and fix")
    p.set_defaults(run=_run_repair, quiet_warnings=True, tolerant=True)


def _run_repair(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import repair
    found = repair.plan(ctx.memory)
    if not ctx.args.apply:
        return found, repair.render(found, applied=False)
    data = repair.apply(ctx.memory, found)
    ctx.wrote()
    return data, repair.render(data, applied=True)


def _add_index(sub) -> None:
    p = sub.add_parser("index", help="regenerate INDEX.md now",
                       epilog=examples(f"{SCRIPT} index"))
    p.set_defaults(run=_run_index)


def _run_index(ctx: Context) -> Tuple[dict, List[str]]:
    from ..storage import bootstrap
    from ..surfacing import index
    # a store this creates is ignored in git, as after any first write
    bootstrap.ensure_store(ctx.memory.root, ctx.repo_root, created=not ctx.store_existed)
    path = index.refresh(ctx.memory, ctx.user)
    return {"index": path}, [f"wrote {path}"]


COMMANDS = (_add_init, _add_record, _add_list, _add_review,
            lambda s: _add_status(s, "aha-status", "card"),
            lambda s: _add_status(s, "rec-status", "rec"), _add_use, _add_signal, _add_repair,
            _add_index, _add_paths, _add_demo)
