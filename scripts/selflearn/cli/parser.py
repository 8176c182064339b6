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
from typing import List, Optional

from .. import __version__
from . import graduate, guidance, hooks, learn, memory, proposals, share, surface
from .common import PROG, SCRIPT, Context, _common, examples
from ..storage import errors, paths, redact
from ..storage import text as text_mod
from ..storage.errors import SelfLearningError, UsageError

COMMANDS = (memory.COMMANDS + hooks.COMMANDS + graduate.COMMANDS
            + learn.COMMANDS + proposals.COMMANDS + guidance.COMMANDS
            + surface.COMMANDS + share.COMMANDS)

# `--help` lists the commands by stage of the data's road, as git groups its commands; every
# command stands in exactly one group (tests/test_docs.py checks it).
FIRST = (("review", "what is open, what proved itself, what to do next"),
         ("list --query TEXT", "recall the cards that fit a task"),
         ("export-backport --apply", "graduate proven cards into a skill, after you read them"))
AGENT = (("advice --query TEXT", "the learned notes worth knowing now, within a budget"),
         ("record", "write cards, recommendations and events after a task"))
STAGES = (
    ("store (the memory the agent and you write)",
     ("init", "record", "aha-status", "rec-status", "use", "signal", "repair", "paths")),
    ("observe (what the hooks see)",
     ("install-skill", "hook", "install-hooks", "uninstall-hooks", "doctor",
      "ingest-transcripts")),
    ("learn (what recurs becomes lessons)",
     ("mine", "maintain", "distill", "decay", "correct", "reinforce", "proposals", "suggest-skills",
      "analyze")),
    ("surface (the few lessons that matter now)",
     ("list", "advice", "review", "index", "feedback", "export-rules", "suggest-hooks",
      "report")),
    ("graduate (what proved itself becomes permanent text)",
     ("export-backport", "backport-inspect", "backport-remove", "promote", "improve")),
    ("try it", ("demo",)),
)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors in the tool's own voice."""

    def error(self, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def build_parser(only: Optional[str] = None) -> Parser:
    """The whole parser; with ``only``, just that subcommand's (the rest cost more to build
    than a fast command takes to run), or the whole one when ``only`` names none."""
    parser = Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
                    usage=f"{PROG} [-h] [--version] <command> ...",
                    description="Memory for coding agents: recall before work, record after, "
                    "learn from hooks, graduate what proves itself.",
                    epilog=examples(f"{SCRIPT} demo", f"{SCRIPT} review"))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_SubParser,
                                prog=PROG, help=argparse.SUPPRESS)
    sub.required = True
    target = sub if only is None else _Only(sub, only)
    for add in COMMANDS:
        add(target)
    if only is not None:  # one subcommand: its own help never shows the command list
        return parser if target.found else build_parser()
    helps = {action.dest: action.help for action in sub._choices_actions}
    parser.description += "\n\n" + command_list(helps)
    return parser


def command_list(helps: dict) -> str:
    """The commands by stage, each with its one-line purpose; the first three and the agent's two
    on top. ``helps`` maps every command to its help line."""
    def rows(pairs) -> List[str]:
        width = max(len(name) for name, _ in pairs)
        return [f"  {name.ljust(width)}  {purpose}" for name, purpose in pairs]
    lines = ["start here (a person):"] + rows(FIRST)
    lines += ["", "the agent calls:"] + rows(AGENT)
    for title, names in STAGES:
        lines += ["", f"{title}:"] + rows([(name, helps[name]) for name in names])
    return "\n".join(lines) + f"\n\n`{PROG} <command> --help` explains each, with examples."


class _Only:
    """Subparsers that build only the command named ``name`` and skip the others."""

    def __init__(self, sub, name: str):
        self.sub, self.name, self.found = sub, name, False

    def add_parser(self, name: str, **kwargs):
        if name == self.name or self.name in kwargs.get("aliases", ()):
            self.found = True
            return self.sub.add_parser(name, **kwargs)
        return _SKIP

    def __getattr__(self, attr):
        return getattr(self.sub, attr)


class _Skipped:
    """Stands in for a skipped subcommand's parser: every call does nothing."""

    def __getattr__(self, attr):
        return self._nothing

    def _nothing(self, *args, **kwargs):
        return self


_SKIP = _Skipped()


class _SubParser(Parser):
    """Subcommand parsers share the common options and keep their examples' layout."""

    def __init__(self, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        kwargs.setdefault("parents", [_common()])
        super().__init__(**kwargs)


def _emit(args, data: dict, lines: List[str]) -> None:
    """Print data or lines, redacted once more and without raw control characters."""
    if args.format == "json":
        text = json.dumps({"schema": 1, **redact.redact(data)}, indent=2, ensure_ascii=False)
        sys.stdout.write(text_mod.escape_json(text) + "\n")
    else:
        sys.stdout.write("".join(text_mod.terminal(redact.redact_text(str(line))) + "\n"
                                 for line in lines))


def _fail(err: SelfLearningError) -> int:
    for line in str(err).splitlines() or ["unknown error"]:
        sys.stderr.write(f"{PROG}: error: {text_mod.terminal(redact.redact_text(line))}\n")
    return err.exit_code


def _skipped(ctx) -> None:
    """Before an error: the store lines the command skipped (they may explain it)."""
    if ctx is not None and not getattr(ctx.args, "quiet_warnings", False):
        for warning in dict.fromkeys(ctx.stores.warnings):
            sys.stderr.write(f"{PROG}: warning: {warning}\n")


def main(argv: Optional[List[str]] = None) -> int:
    ctx = None
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv[1:]):
            from .hookcalls import hook
            return hook(argv[1:])
        first = argv[0] if argv and not argv[0].startswith("-") else None
        args = build_parser(first).parse_args(argv)
        ctx = Context(args)
        data, lines = args.run(ctx)
        if getattr(args, "writes", False):
            ctx.wrote()
        warnings = list(data.get("warnings") or []) + ctx.warnings
        off = paths.kill_switch(ctx.repo_root)
        if off and args.command not in ("paths", "doctor"):  # both say so in their output
            warnings.append(f"observation is off ({off}): hooks record and inject nothing and "
                            "maintain from a hook writes nothing; this command still ran")
        if not getattr(args, "quiet_warnings", False):
            warnings += ctx.stores.warnings
        for warning in dict.fromkeys(warnings):  # stderr is talk; stdout stays data
            sys.stderr.write(f"{PROG}: warning: {text_mod.terminal(redact.redact_text(warning))}\n")
        _emit(args, data, lines)
        return ctx.exit_code
    except SelfLearningError as err:
        _skipped(ctx)
        return _fail(err)
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    except OSError as err:  # a read-only store, a full disk, a folder where a file belongs
        _skipped(ctx)
        return _fail(errors.from_os(err))
    except RecursionError:
        return _fail(UsageError("input nested too deeply to read (see references/FORMAT.md, "
                                "\"Limits\")"))
    except Exception as err:  # noqa: BLE001 - only the derived index's own failures
        if type(err).__module__ != "sqlite3" or ctx is None:
            raise
        index = os.path.join(ctx.memory.root, "index.sqlite3")
        return _fail(SelfLearningError(f"the derived index failed ({err}); it is rebuilt from "
                                       f"the store's files: delete {index} and run the command "
                                       "again"))
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: error: interrupted\n")
        return 130
