#!/usr/bin/env python3
"""Run the test suite under every Python 3.9+ on this machine; only python3 is needed.

Each interpreter gets its own venv, .venv-test/<version>/ (reused while
tests/requirements.txt is unchanged), with the test tools pinned for that
version. The newest interpreter runs everything, the end-to-end tests
(tests/e2e, real agent clients) included, as two jobs; older ones run the
suite without tests/e2e. Two jobs at a time (the machine has 2 cores), a line
per job as it ends, the output of any that failed at the end.

  python3 tests/run.py                    # every version found
  python3 tests/run.py -q -x -k record    # a selection (-k, -m, paths): this python3 only
  python3 tests/run.py --python 3.9 -k hook
  python3 tests/run.py --python all -k hook
"""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import venv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENVS = os.path.join(REPO, ".venv-test")
REQS = os.path.join(REPO, "tests", "requirements.txt")
OLDEST = (3, 9)
NEWEST_MINOR = 20  # python3.9 ... python3.20 are looked for
PARALLEL = 2
SELECTION_FLAGS = ("-k", "-m", "--lf", "--last-failed", "--deselect")


def _probe(exe: str):
    """(major, minor, micro) of a working interpreter, or None (pyenv shims that refuse, etc.)."""
    try:
        out = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = out.stdout.split()
    if out.returncode != 0 or len(parts) != 3:
        return None
    return tuple(int(p) for p in parts)


def _candidates(minor: int) -> list:
    name = f"python3.{minor}"
    found = [shutil.which(name)]
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(pyenv, "versions", f"3.{minor}.*", "bin", name)),
                    reverse=True)
    return [f for f in found if f]


def interpreters() -> dict:
    """{(3, minor): (path, version string)} for each python3.X (3.9+) that runs."""
    out = {}
    here = sys.version_info
    if here[:2] >= OLDEST:
        out[here[:2]] = (sys.executable, "%d.%d.%d" % here[:3])
    for minor in range(OLDEST[1], NEWEST_MINOR + 1):
        if (3, minor) in out:
            continue
        for exe in _candidates(minor):
            version = _probe(exe)
            if version and version[:2] == (3, minor):
                out[(3, minor)] = (exe, "%d.%d.%d" % version)
                break
    return dict(sorted(out.items()))


def _venv_python(key) -> str:
    return os.path.join(VENVS, "%d.%d" % key, "bin", "python")


def ensure_venv(key, exe: str) -> str:
    """The venv's python for interpreter ``exe``, created or refreshed when the pins change."""
    with open(REQS, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    root = os.path.dirname(os.path.dirname(_venv_python(key)))
    stamp = os.path.join(root, ".requirements.sha256")
    python = _venv_python(key)
    if os.path.exists(stamp) and open(stamp).read() == digest and os.path.exists(python):
        return python
    print(f"tests/run.py: creating {os.path.relpath(root, REPO)} for {exe} and installing "
          "tests/requirements.txt", flush=True)
    if exe == sys.executable:
        venv.EnvBuilder(with_pip=True, clear=True).create(root)
    else:  # another interpreter builds its own venv
        subprocess.run([exe, "-m", "venv", "--clear", root], check=True)
    pip = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "-r", REQS], capture_output=True, text=True, check=False)
    if pip.returncode != 0:
        raise RuntimeError(f"pip could not install tests/requirements.txt for {exe}:\n"
                           + "\n".join(ln for ln in (pip.stdout + pip.stderr).splitlines()
                                       if ln.startswith("ERROR"))[-2000:])
    with open(stamp, "w") as fh:
        fh.write(digest)
    return python


def _is_selection(args: list) -> bool:
    if any(a in SELECTION_FLAGS or a.startswith(("-k", "-m")) for a in args):
        return True
    return any(not a.startswith("-") and a.rstrip("/") != "tests"
               and os.path.exists(os.path.join(REPO, a.split("::")[0])) for a in args)


def _split_args(argv: list):
    """``--python VERSION|all`` (ours) and the rest (pytest's)."""
    choice, rest, i = None, [], 0
    while i < len(argv):
        if argv[i] == "--python" and i + 1 < len(argv):
            choice, i = argv[i + 1], i + 2
            continue
        if argv[i].startswith("--python="):
            choice = argv[i].split("=", 1)[1]
        else:
            rest.append(argv[i])
        i += 1
    return choice, rest


def _summary(output: str) -> str:
    lines = [ln.strip("= ") for ln in output.splitlines() if ln.strip()]
    tail = [ln for ln in lines if " in " in ln and any(w in ln for w in ("passed", "failed", "error",
                                                                         "skipped", "deselected"))]
    return tail[-1] if tail else (lines[-1] if lines else "no output")


def counts(output: str):
    """(passed, failed) from pytest's closing line; errors count as failed."""
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?)\b",
                                                      _summary(output))}
    return found.get("passed", 0), found.get("failed", 0) + found.get("error", 0) \
        + found.get("errors", 0)


PARTS = {"all": "whole suite", "unit": "suite without tests/e2e", "e2e": "tests/e2e"}


def run_one(key, exe: str, version: str, args: list, part: str, live: bool) -> dict:
    """One pytest run of ``part`` ("all", "unit" or "e2e") under one interpreter."""
    result = {"version": version, "part": part, "code": 2, "output": "", "seconds": 0.0}
    try:
        python = ensure_venv(key, exe)
    except (OSError, RuntimeError, subprocess.SubprocessError) as err:
        return dict(result, output=str(err))
    if part == "e2e":
        args = [a for a in args if a.rstrip("/") != "tests"] + ["tests/e2e"]
    elif part == "unit":
        args = list(args) + ["--ignore=tests/e2e"]
    cmd = [python, "-m", "pytest", *args]
    start = time.monotonic()
    if live:
        code, output = subprocess.call(cmd, cwd=REPO), ""
    else:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
        code, output = proc.returncode, proc.stdout + proc.stderr
    return dict(result, code=code, output=output, seconds=time.monotonic() - start)


def _line(res: dict) -> str:
    state = "ok" if res["code"] == 0 else f"FAILED (exit {res['code']})"
    detail = f": {_summary(res['output'])}" if res["output"] else ""
    return (f"  python {res['version']:<8} {state:<16} {PARTS[res['part']]}, "
            f"{res['seconds']:.0f} s{detail}")


def run_all(found: dict, args: list) -> int:
    """The newest runs tests/e2e and the rest of the suite as two jobs; every other version
    the suite without tests/e2e. PARALLEL jobs at a time, the longest (e2e) first."""
    keys = sorted(found, reverse=True)
    for key in keys:  # venvs first, one at a time: two jobs share the newest's
        try:
            ensure_venv(key, found[key][0])
        except (OSError, RuntimeError, subprocess.SubprocessError):
            pass  # its job tries again and reports the error
    args = list(args) + ["-p", "no:cacheprovider"]
    jobs = [(keys[0], "e2e")] + [(key, "unit") for key in keys]
    results, lock = [], threading.Lock()
    start = time.monotonic()

    def worker() -> None:
        while True:
            with lock:
                if not jobs:
                    return
                key, part = jobs.pop(0)
            res = run_one(key, found[key][0], found[key][1], args, part, live=False)
            with lock:
                results.append(res)
                print(_line(res), flush=True)

    print(f"tests/run.py: Python {', '.join(found[k][1] for k in keys)}; tests/e2e on "
          f"{found[keys[0]][1]} only; {PARALLEL} jobs at a time", flush=True)
    threads = [threading.Thread(target=worker) for _ in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for res in results:
        if res["code"] != 0 and res["output"]:
            print(f"\n--- python {res['version']}, {PARTS[res['part']]} ---\n"
                  f"{res['output'].rstrip()}\n")
    failed = [r for r in results if r["code"] != 0]
    print(f"tests/run.py: {len(keys)} Python versions in {time.monotonic() - start:.0f} s: "
          + ("all passed" if not failed else f"{len(failed)} of {len(results)} runs FAILED"))
    tally = [counts(r["output"]) for r in results]
    # The plain closing line CI reads: every run's tests added up.
    print(f"total: {sum(p for p, _ in tally)} passed, {sum(f for _, f in tally)} failed")
    return 1 if failed else 0


def main(argv=None) -> int:
    if os.path.exists(os.path.join(VENVS, "pyvenv.cfg")):  # one venv for all, before 3.9 runs
        shutil.rmtree(VENVS)
    choice, args = _split_args(list(sys.argv[1:] if argv is None else argv))
    args = args or ["tests", "-q"]
    here = sys.version_info[:2]
    if choice is None and _is_selection(args):
        choice = "%d.%d" % here
    found = interpreters()
    if choice not in (None, "all"):
        key = tuple(int(p) for p in choice.split(".")[:2])
        if key not in found:
            have = ", ".join("%d.%d" % k for k in found) or "none"
            print(f"tests/run.py: error: no working python{choice} found (found: {have})",
                  file=sys.stderr)
            return 2
        found = {key: found[key]}
    if not found:
        print("tests/run.py: error: no Python 3.9 or newer found", file=sys.stderr)
        return 2
    if len(found) == 1:
        (key, (exe, version)), = found.items()
        result = run_one(key, exe, version, args, "all", live=True)
        if result["output"]:
            print(f"tests/run.py: error: {result['output']}", file=sys.stderr)
        return result["code"]
    return run_all(found, args)


if __name__ == "__main__":
    sys.exit(main())
