#!/usr/bin/env python3
"""Regenerate the docs that are derived from code: references/CLI.md and the
field tables in references/FORMAT.md. `python3 tests/render_docs.py --check`
exits 1 when a file is out of date (the test suite runs that check).
"""
import argparse
import io
import os
import re
import sys
from contextlib import redirect_stdout

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))

from selflearn.cli import parser as cli  # noqa: E402
from selflearn.storage import model

BLOCK = re.compile(r"(<!-- generated:(\w+) -->\n).*?(<!-- /generated:\2 -->)", re.S)


def help_text(argv) -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: pin it
    out = io.StringIO()
    parser = cli.build_parser()
    with redirect_stdout(out):
        try:
            parser.parse_args([*argv, "--help"])
        except SystemExit:
            pass
    # Python 3.9's argparse titles the options "optional arguments:"; 3.10+ "options:".
    # The reference is the same whatever Python renders it.
    text = out.getvalue().replace("\noptional arguments:\n", "\noptions:\n")
    return text.replace("usage: ", "usage: ", 1)


def render_cli() -> str:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    parts = ["# Command reference", "",
             "Generated from `build_parser()` by `tests/render_docs.py`; do not edit by hand.",
             "Every command also takes `--repo-root`, `--user` and `--format text|json`.", "",
             "```text", help_text([]).rstrip(), "```", ""]
    for name in sub.choices:
        parts += [f"## {name}", "", "```text", help_text([name]).rstrip(), "```", ""]
    return "\n".join(parts)


def field_table(kind: str) -> str:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for f in model.KINDS[kind]:
        kind_name = model._KIND_NAMES[f.kind] + (" (required)" if f.required else "")
        shown = str(f.default).lower() if isinstance(f.default, bool) else f.default
        default = f"`{shown}`" if f.default is not None else ""
        meaning = f.doc + (f" One of: {', '.join(f.choices)}." if f.choices else "")
        rows.append(f"| `{f.name}` | {kind_name} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def render_format(text: str) -> str:
    tables = {"card": field_table("card"), "rec": field_table("rec"),
              "event": field_table("event"), "signal": field_table("signal")}
    return BLOCK.sub(lambda m: m.group(1) + tables[m.group(2)] + m.group(3), text)


def targets():
    cli_path = os.path.join(REPO, "references", "CLI.md")
    fmt_path = os.path.join(REPO, "references", "FORMAT.md")
    with open(fmt_path, encoding="utf-8") as fh:
        fmt = fh.read()
    return [(cli_path, render_cli()), (fmt_path, render_format(fmt))]


def _same_words(a: str, b: str) -> bool:
    """Equal but for line wrapping and column padding, which argparse changes between Pythons."""
    return a.split() == b.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail instead of rewriting")
    args = parser.parse_args()
    stale = []
    for path, text in targets():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if current != text and not (args.check and _same_words(current, text)):
            stale.append(os.path.relpath(path, REPO))
            if not args.check:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
    if args.check and stale:
        print("out of date (run python3 tests/render_docs.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
