#!/usr/bin/env python3
"""self-learning-skills command line: `python3 scripts/self_learning.py --help`.

Thin on purpose: `hook` goes straight to the observation path (no os,
argparse, json or re) so agents' hooks stay fast; everything else, `hook --help`
included, goes to the CLI. Python puts this file's folder first on sys.path, so `selflearn` imports.
"""
import sys


def inject(record: dict, repo_root: str, store_dir: str) -> str:
    """Learned notes for a session-start or prompt hook, imported only for those events."""
    from selflearn.surfacing.injection import inject as notes
    return notes(record, repo_root, store_dir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"] and not {"-h", "--help"} & set(sys.argv[2:]):
        from selflearn.observation.hook import main as hook_main
        code = hook_main(sys.argv[2:], inject)
        sys.stdout.flush()
        sys.stderr.flush()
        # The hook has closed every file it wrote; skipping interpreter teardown
        # saves more than a millisecond on every tool call the agent makes.
        import posix
        posix._exit(code)
    from selflearn.cli.parser import main
    sys.exit(main())
