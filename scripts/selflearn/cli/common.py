"""Helpers every command group shares: the common options, ``Context``, help text.

Imported by ``cli`` and the ``cli_*`` command modules; imports only feature
modules. Must not import ``cli`` or any ``cli_*`` module; features never import this.
"""

import argparse
import contextlib
import os
import sys
from typing import Iterator, List, Optional, Sequence

from ..storage import model, paths
from ..storage.errors import UsageError

PROG = "self_learning"  # re-exported by cli; here so cli_* can name it without importing cli
SCRIPT = "python3 scripts/self_learning.py"
STORE_HELP = (
    "store: <repo-root>/.agent-skills/self-learning/v1/users/<user>/ "
    "(moved by --repo-root or SELF_LEARNING_REPO_ROOT; user by --user or SELF_LEARNING_USER; "
    "global store: SELF_LEARNING_GLOBAL_DIR)")


class TtyProgress:
    """Progress for long runs on stderr, when it is a terminal: one line rewritten in place,
    shown only once the run has taken ``DELAY`` seconds, wiped when the run ends."""

    DELAY = 1.0

    def __init__(self, stream=None) -> None:
        import time
        self.stream = stream or sys.stderr
        self.clock = time.monotonic
        self.start = self.clock()
        self.shown = False

    @classmethod
    @contextlib.contextmanager
    def on_stderr(cls) -> "Iterator[Optional[TtyProgress]]":
        """A progress for the block when stderr is a terminal (else None), wiped at its end."""
        isatty = getattr(sys.stderr, "isatty", None)
        progress = cls() if isatty and isatty() else None
        try:
            yield progress
        finally:
            if progress:
                progress.close()

    def __call__(self, line: str) -> None:
        if self.clock() - self.start < self.DELAY:
            return
        self.stream.write(f"\r{PROG}: {line}\033[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def examples(*lines: str) -> str:
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
        _existing_folder(args.repo_root, "--repo-root")
        _existing_folder(None if args.repo_root else os.environ.get("SELF_LEARNING_REPO_ROOT"),
                         "SELF_LEARNING_REPO_ROOT")
        self.repo_root = paths.find_repo_root(args.repo_root, script=sys.argv[0])
        self.user = paths.user_slug(args.user)
        from ..storage.memory import Stores
        self.stores = Stores.resolve(self.repo_root, self.user,
                                     getattr(args, "include_global", False),
                                     tolerant=getattr(args, "tolerant", False))
        self.store_existed = os.path.isdir(self.stores.project.root)
        self.warnings: List[str] = []  # said on stderr after the command's own
        self.exit_code = 0  # a report that found something wrong (doctor) says so with 1

    @property
    def memory(self):
        return self.stores.project

    def wrote(self) -> None:
        """After any write: make sure the store exists and INDEX.md is current. INDEX.md is
        derived, so failing to rewrite it (a read-only folder) is a warning in ``warnings``:
        the records are written and an error would make the caller write them again."""
        from ..storage import bootstrap, errors
        from ..surfacing import index
        bootstrap.ensure_store(self.memory.root, self.repo_root, created=not self.store_existed)
        try:
            index.refresh(self.memory, self.user)
        except OSError as exc:
            self.warnings.append(f"the records are written but INDEX.md is not refreshed "
                                 f"({errors.from_os(exc)}); run `index` once that is fixed")


def query_of(ctx: "Context") -> Optional[str]:
    """``--query`` cut to ``search.MAX_QUERY_TERMS`` distinct terms, saying so on stderr."""
    from ..surfacing import search
    query = ctx.args.query
    clipped = search.clip_query(query) if query else query
    if clipped != query:
        ctx.warnings.append(f"--query holds more than {search.MAX_QUERY_TERMS} distinct words; "
                            f"only the text before {query[len(clipped):].split()[0][:40]!r} "
                            "is matched")
    return clipped


def _existing_folder(path: Optional[str], where: str) -> None:
    """A repository root given by hand must be a folder that exists (a typo is not a new,
    empty store to read, nor a file to move away)."""
    if path and not os.path.isdir(os.path.expanduser(path)):
        what = "a file" if os.path.exists(os.path.expanduser(path)) else "missing"
        raise UsageError(f"{where} {path} is {what}, not a folder; give the repository's "
                         "folder (default: the nearest one holding .git)")


def _statuses(values: Optional[List[str]], command: str,
              known: Sequence[str] = model.CARD_STATUSES) -> List[str]:
    """``--status`` values (comma-separated or repeated, aliases resolved); an unknown one is
    bad input rather than a filter nothing matches."""
    out = [model.normalize_status(s.strip()) for v in values or [] for s in v.split(",")
           if s.strip()]
    for status in out:
        if status not in known:
            raise UsageError(f"{command}: unknown --status {status!r} (one of: "
                             f"{', '.join(known)})")
    return out


def bounded(command: str, flag: str, value, low: float, high: float):
    """``value`` when ``low <= value <= high`` (never NaN), else bad input naming the range."""
    if value is not None and not low <= value <= high:
        span = f"{low:g} or more" if high == float("inf") else f"from {low:g} to {high:g}"
        got = f"{value:g}" if isinstance(value, float) or abs(value) < 10 ** 15 else \
            f"{str(value)[:12]}… ({len(str(abs(value)))} digits)"
        raise UsageError(f"{command}: {flag} must be a number {span}, got {got}")
    return value


AGENTS = ("claude", "codex", "gemini", "copilot", "cursor")
SKILL_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


# One meaning per flag, on every command that takes it: its argparse keywords and the help
# every command shares. A command names the options it takes with ``option``, and may add a
# clause of its own to the help: after the shared text, or before it for the flags in LEADS
# (what a dry run shows or --apply does comes first).
MAX_LIMIT = 2 ** 31 - 1  # a larger --limit means the same: all of them (SQLite takes 64 bits)


def whole_number(text: str) -> int:
    """A count: a larger one than ``MAX_LIMIT`` means the same (all)."""
    return min(int(text), MAX_LIMIT)


whole_number.__name__ = "whole number"  # argparse names the type in its error


SHARED = {
    "--dry-run": {"action": "store_true", "help": "write nothing"},
    "--apply": {"action": "store_true", "help": "do it (default: only show what would change)"},
    "--ids": {"action": "append", "help": "card ids, comma-separated or repeated"},
    "--since": {"metavar": "ISO", "help": "only entries at or after this ISO date or time (UTC)"},
    "--query": {"metavar": "TEXT", "help": "text to match (words, paths, errors)"},
    "--limit": {"type": whole_number, "metavar": "N",
                "help": "at most this many (0 = all)"},
    "--skill-path": {"required": True, "metavar": "DIR",
                     "help": "the skill folder (the one holding SKILL.md)"},
}
LEADS = ("--dry-run", "--apply")


def option(parser, flag: str, more: str = "", **keywords) -> None:
    """Add the shared option ``flag``; ``more`` extends its help, ``keywords`` override the table's."""
    spec = {**SHARED[flag], **keywords}
    if more:
        pair = (more, spec["help"]) if flag in LEADS else (spec["help"], more)
        spec["help"] = "; ".join(pair)
    parser.add_argument(flag, **spec)
