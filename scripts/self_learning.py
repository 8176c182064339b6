#!/usr/bin/env python3
"""self-learning-skills command line: `python3 scripts/self_learning.py --help`.

Thin on purpose: `hook` goes straight to the observation path (no os,
argparse, json or re) so agents' hooks stay fast; everything else goes to the
CLI. Python puts this file's folder first on sys.path, so `selflearn` imports.
"""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:
        from selflearn.hook import main as hook_main
        sys.exit(hook_main(sys.argv[2:]))
    from selflearn.cli import main
    sys.exit(main())
