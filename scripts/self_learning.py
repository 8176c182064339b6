#!/usr/bin/env python3
"""self-learning-skills command line: `python3 scripts/self_learning.py --help`.

Thin on purpose: `hook` goes straight to the observation path (no os,
argparse, json or re; `cli.hookcalls` hands it surfacing and learning only for the events
that need them) so agents' hooks stay fast; everything else, `hook --help` included, goes
to the CLI. Python puts this file's folder first on sys.path, so `selflearn` imports.
"""
import posix
import sys


def hook(argv: list) -> int:
    """The ``hook`` command: one payload on stdin; what it prints goes to the agent. What it
    may print or start comes from ``cli.hookcalls``, loaded only for the events that need it."""
    from selflearn.observation.hook import main
    return main(argv, _late("inject"), _late("learn"))


def _late(name: str):
    def call(*args):
        from selflearn.cli import hookcalls
        return getattr(hookcalls, name)(*args)
    return call


if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"] and not {"-h", "--help"} & set(sys.argv[2:]):
        code = hook(sys.argv[2:])
        sys.stdout.flush()
        sys.stderr.flush()
        # The hook has closed every file it wrote; skipping interpreter teardown
        # saves more than a millisecond on every tool call the agent makes.
        posix._exit(code)
    from selflearn.cli.parser import main
    sys.exit(main())
