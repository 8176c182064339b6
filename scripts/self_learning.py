#!/usr/bin/env python3
"""self-learning-skills command line: `python3 scripts/self_learning.py --help`.

Thin on purpose: `hook` goes straight to the observation path (no argparse,
no json, no re) so agents' hooks stay fast; everything else goes to the CLI.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:
        from selflearn.hook import main as hook_main
        sys.exit(hook_main(sys.argv[2:]))
    from selflearn.cli import main
    sys.exit(main())
