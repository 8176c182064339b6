"""Hook commands: hook (help only; dispatched before argparse), install-hooks,
uninstall-hooks, doctor, ingest-transcripts.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

import os
import sys
from typing import List, Tuple

from .common import AGENTS, PROG, SCRIPT, SKILL_DIR, Context, examples, option


# --- hooks: hook, install-hooks, uninstall-hooks, doctor --------------------------------------

def _add_hook(sub) -> None:
    p = sub.add_parser("hook", help="observe one agent hook payload from stdin (always exits 0)",
                       description="Called by the agent's hook config, not by people. Reads one "
                       "payload, appends one redacted observation; never fails the agent. "
                       "A second firing of the same event within 2 s (the hook registered "
                       "twice) is stored and injected once. "
                       "Off when SELF_LEARNING_DISABLE=1 or .agent-skills/self-learning/disabled exists. "
                       "It takes no --repo-root, --user or --format: the store is the one of "
                       "SELF_LEARNING_REPO_ROOT, else of the agent's project folder "
                       "(CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR, CURSOR_PROJECT_DIR), else of "
                       "the repository of the current folder, as for every command; the user is "
                       "SELF_LEARNING_USER or $USER.",
                       parents=[],
                       epilog=examples(f"echo '{{\"hook_event_name\": \"SessionStart\", "
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
                       epilog=examples(f"{SCRIPT} {name} --agent claude --dry-run",
                                       f"{SCRIPT} {name} --agent claude"))
    p.add_argument("--agent", required=True, choices=AGENTS)
    p.add_argument("--scope", choices=("project", "user"), default="project")
    option(p, "--dry-run", "show the change")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="write through a project settings file that is a symbolic link leaving "
                   "the repository (refused by default)")
    if not uninstall:
        p.add_argument("--ignore-plugin", action="store_true",
                       help="claude: write the settings entries even where Claude Code loads this "
                       "folder as a plugin (a client without skills-dir plugins, or headless runs "
                       "in an untrusted workspace); the hook stores each event once either way")
    p.set_defaults(run=_run_install_hooks, uninstall=uninstall)


def _run_install_hooks(ctx: Context) -> Tuple[dict, List[str]]:
    from pathlib import Path
    from ..storage import bootstrap
    from ..observation import install
    a = ctx.args
    home = Path(os.path.expanduser("~"))
    plugins = _loading_plugins(a, ctx.repo_root, home)
    changes = install.plan(a.agent, a.scope, Path(ctx.repo_root), Path(SKILL_DIR), home,
                           uninstall=a.uninstall, follow_symlinks=a.follow_symlinks,
                           plugin=plugins[0]["id"] if plugins else None)
    data = {"agent": a.agent, "scope": a.scope, "dry_run": a.dry_run,
            "plugin": plugins[0] if plugins else None,
            "changes": [{"path": str(c.path), "summary": c.summary} for c in changes]}
    head = _plugin_lines(plugins[0]) if plugins else []
    if a.dry_run:
        lines = head + [c.summary for c in changes] + [
            line for c in changes for line in install.render_diff(c).splitlines()]
        return data, lines or ["nothing to change"]
    written = install.apply(changes, Path(ctx.memory.root) / "backups")
    if not a.uninstall:
        bootstrap.ensure_store(ctx.memory.root, ctx.repo_root)
        _precompile()
    data["written"] = [str(p) for p in written]
    lines = head + [c.summary for c in changes] or ["already up to date"]
    if not a.uninstall and not plugins:
        lines += [f"manual step: {m}" for m in install.MANUAL_STEPS.get(a.agent, [])]
    return data, lines


def _loading_plugins(a, repo_root: str, home) -> list:
    """The Claude Code plugins that already register our hooks (none to consider: [])."""
    from pathlib import Path
    from ..observation import claude_plugin
    if a.agent != "claude" or a.uninstall or a.ignore_plugin:
        return []
    return claude_plugin.loading(Path(SKILL_DIR), Path(repo_root), home)


def _plugin_lines(plugin: dict) -> List[str]:
    lines = [f"Claude Code loads this folder as the plugin {plugin['id']} ({plugin['how']}); its "
             "hooks/hooks.json registers the hooks, so install-hooks adds none."]
    if plugin["needs_trust"]:
        lines.append("It loads once the workspace is trusted (Claude Code asks on first start; for "
                     "headless runs see references/INTEGRATION.md). Start a new session to load it.")
    return lines


def _precompile() -> None:
    """Cache bytecode so the hook starts fast even where Python does not write it itself."""
    import compileall
    compileall.compile_dir(os.path.join(SKILL_DIR, "scripts", "selflearn"), quiet=2)


def _add_doctor(sub) -> None:
    p = sub.add_parser("doctor", help="hooks installed and firing? store healthy? kill switch?",
                       description="Reports the kill switch, when learning last ran and what "
                       "it produced, how often the end-of-turn question asked the agent to "
                       "write a lesson down and how many it recorded, each agent's hook "
                       "registrations and last event, the store's files and modes, links in "
                       "the store and "
                       "the hook errors logged in errors.jsonl (delete it once you have read "
                       "it). Exits 1 when it reports a problem or a hook error, so a script or "
                       "CI step can stop on it; --report-only exits 0 whatever it finds.",
                       epilog=examples(f"{SCRIPT} doctor", f"{SCRIPT} doctor --format json",
                                       f"{SCRIPT} doctor --report-only"))
    p.add_argument("--report-only", action="store_true",
                   help="exit 0 even when a problem is reported")
    p.set_defaults(run=_run_doctor)


def _run_doctor(ctx: Context) -> Tuple[dict, List[str]]:
    from ..observation import doctor
    data = doctor.check(ctx.memory, ctx.repo_root, SKILL_DIR)
    if not data["healthy"] and not ctx.args.report_only:
        ctx.exit_code = 1
        found = len(data["problems"]) + (1 if data["errors"] else 0)
        ctx.warnings.append(f"doctor: {found} problem(s) found (above); --report-only exits 0")
    return data, doctor.render(data)


# --- ingest-transcripts ------------------------------------------------------------------

def _add_ingest_transcripts(sub) -> None:
    p = sub.add_parser("ingest-transcripts",
                       help="backfill observations from Claude Code transcripts",
                       description="Turn Claude Code session transcripts into the observations "
                       "the hooks would have recorded (source: transcript) and append them. "
                       "Default: ~/.claude/projects/<repo root, non-alphanumerics as '-'>/*.jsonl "
                       "and <session>/subagents/*.jsonl (CLAUDE_CONFIG_DIR moves ~/.claude). "
                       "A folder given is searched 3 levels deep, so ~/.claude/projects/ reads "
                       "every project's transcripts into this repository's store. "
                       "Only bytes appended since the last run are read (offsets: "
                       "<store>/ingest_state.json); tool calls the hooks already recorded are "
                       "skipped.",
                       epilog=examples(f"{SCRIPT} ingest-transcripts --dry-run",
                                       f"{SCRIPT} ingest-transcripts --since 2025-01-01 "
                                       "--format json"))
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="transcript .jsonl files or folders (default: this repo's project folder)")
    option(p, "--since")
    option(p, "--dry-run", "report what would be added")
    p.set_defaults(run=_run_ingest_transcripts)


def _run_ingest_transcripts(ctx: Context) -> Tuple[dict, List[str]]:
    from ..observation import transcripts
    a = ctx.args
    progress = (lambda line: sys.stderr.write(f"{PROG}: {line}\n")) if sys.stderr.isatty() else None
    data = transcripts.ingest(ctx.memory, ctx.repo_root, a.paths, a.since, a.dry_run, progress)
    if data["files_read"] and not a.dry_run:
        ctx.wrote()
    return data, transcripts.render(data)


# --- install-skill -----------------------------------------------------------------------

def _add_install_skill(sub) -> None:
    p = sub.add_parser("install-skill", help="copy what the skill needs into a repository",
                       description="Copies SKILL.md, AGENTS.md, README.md, LICENSE.txt, "
                       "CHANGELOG.md, .gitignore, scripts/, references/, hooks/ and "
                       ".claude-plugin/plugin.json from this folder to --to (no benchmarks, no "
                       "tests), and lists what it wrote in <to>/.self-learning-install.json. "
                       "It never overwrites or removes a file it did not write (or that was "
                       "changed since): it refuses, writing nothing. Run it again to update a "
                       "copy it installed: files it wrote are updated, files the skill no "
                       "longer has are removed, the rest is left as it is.",
                       epilog=examples(f"{SCRIPT} install-skill --to "
                                       "../my-repo/.claude/skills/self-learning-skills --dry-run",
                                       f"{SCRIPT} install-skill --to "
                                       "../my-repo/.claude/skills/self-learning-skills"))
    p.add_argument("--to", required=True, metavar="FOLDER",
                   help="the skill folder to create or update, e.g. "
                   "<repo>/.claude/skills/self-learning-skills (or .github/skills/…, "
                   ".codex/skills/…, .agents/skills/…)")
    option(p, "--dry-run", "show what would be copied")
    p.set_defaults(run=_run_install_skill)


def _run_install_skill(ctx: Context) -> Tuple[dict, List[str]]:
    from ..observation import skillcopy
    data = skillcopy.install(SKILL_DIR, ctx.args.to, ctx.args.dry_run)
    return data, skillcopy.render(data)


COMMANDS = (_add_install_skill, _add_hook, _add_install_hooks, lambda s: _add_install_hooks(s, uninstall=True),
            _add_doctor, _add_ingest_transcripts)
