#!/usr/bin/env python3
"""Run the test suite on a fresh machine that has only python3.

Creates .venv-test/ beside the repo (reused while tests/requirements.txt is
unchanged), installs the pinned test tools, then runs pytest. Extra
arguments go to pytest: `python3 tests/run.py -k record -x`.
"""
import hashlib
import os
import subprocess
import sys
import venv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(REPO, ".venv-test")
REQS = os.path.join(REPO, "tests", "requirements.txt")


def python() -> str:
    return os.path.join(VENV, "bin", "python")


def ensure_venv() -> None:
    with open(REQS, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    stamp = os.path.join(VENV, ".requirements.sha256")
    if os.path.exists(stamp) and open(stamp).read() == digest and os.path.exists(python()):
        return
    print("tests/run.py: creating .venv-test and installing tests/requirements.txt", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    subprocess.run([python(), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-r", REQS], check=True)
    with open(stamp, "w") as fh:
        fh.write(digest)


def main() -> int:
    ensure_venv()
    args = sys.argv[1:] or ["tests", "-q"]
    return subprocess.call([python(), "-m", "pytest", *args], cwd=REPO)


if __name__ == "__main__":
    sys.exit(main())
