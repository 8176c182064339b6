"""Reading a failed command's output: the line that names the cause, the hints, the owner.

Owns: ``cause_line`` (the line of a whole output, head and tail, that names the error, aware
of common runners: jest/vitest, pytest, cargo/rustc, tsc, go, mix, make/gcc, npm, git, shell),
``hints`` (fixes the output itself suggests: git ``hint:`` lines, "did you mean", "run X to",
"to update it: X"), ``rule_code`` (a linter's or compiler's code on the cause line),
``failing_segment`` (the part of a compound command the error names) and
the tests ``hidden_success`` and ``riskier`` used to judge a fix.
Invariant: plain string methods only, no imports at all; this module is loaded on the hook
path when a tool fails. Must not import cli or anything above observation.
"""

# Lines that frame output but never name a cause: banners, progress, echoed scripts.
_NOISE_PREFIXES = (
    "> ", "$ ", "+ ", "compiling ", "generated ", "==> ", "getting extensions", "running ",
    "finished ", "downloading ", "downloaded ", "resolving ", "checking ", "from ", "* branch",
    "auto-merging", "remote:", "to ", "exit code", "npm warn", "npm notice", "warning: ",
    "info ", "updating ", "fetching ", "installing ", "building ", "starting ", "waiting ",
    "hint:", "note:", "help:", "= note", "= help", "in file included from", "make[",
    "make: entering", "make: leaving", "traceback (most recent call last)",
    "the above exception", "during handling of", "ok ", "ok\t", "passed", "pass ",
    "test result:", "(use \"git", "to have this happen automatically",
    "(this error happened", "husky - ",
    # what another part of the line printed when it worked (`git stash && bun test`)
    "saved working directory and index state", "switched to branch", "switched to a new branch",
    "already up to date", "head is now at", "your branch is up to date", "dropped refs/stash",
    "bun test v1.",  # bun's version banner (`bun test v1.3.9 (cf6cdbbb)`)
)
_NOISE_CONTAINS = (" $ ", "] $ ", "task failed", "(this might take a while)",
                   "fatal: the remote end hung up", "[no test files]",
                   "\u2501\u2501", "\u2500\u2500")  # a heading's rule: `check ━━━━`
# A login banner a remote shell prints before the command's output (`ssh host 'grep …'`):
# the system's name and version, never the cause.
_SYSTEMS = ("ubuntu ", "debian gnu/linux ", "debian ", "fedora linux ", "fedora release ",
            "fedora ", "centos linux ", "centos stream ", "centos ", "rocky linux ",
            "almalinux ", "red hat enterprise linux ", "alpine linux ", "amazon linux ",
            "opensuse leap ", "linux mint ")
# Status tags of task runners (lint-staged / listr): they say a task ran or failed, never why.
_STATUS_TAGS = ("[started]", "[completed]", "[failed]", "[skipped]", "[success]", "[title]",
                "[data]", "[reverted]")

# (marker, score, how) checked on the lower-cased stripped line; the best score wins.
# how: "start" = line starts with it, "in" = anywhere in the line.
_MARKERS = (
    ("error[e", 9, "start"),            # rustc / cargo: error[E0425]: cannot find value
    (": error ts", 9, "in"),            # tsc: src/a.ts(6,33): error TS2307: ...
    ("error ts", 9, "start"),
    ("cannot find module", 9, "in"),    # node / jest / vitest / tsc
    ("** (", 9, "start"),               # elixir / mix: ** (RuntimeError) ...
    ("\u00d7 ", 6, "start"),             # miette diagnostics (biome, oxlint): × Formatter would ...
    ("err_pnpm_", 9, "in"),             # pnpm:  ERR_PNPM_UNEXPECTED_STORE  Unexpected store ...
    ("diff in ", 8, "start"),           # rustfmt / cargo fmt --check: Diff in src/a.rs at line 3:
    ("' panicked at ", 8, "in"),        # rust: thread 'tests::x' panicked at src/lib.rs:9:5:
    ("npm err!", 8, "start"),           # npm before 10
    ("npm error ", 8, "start"),         # npm 10+
    ("e ", 7, "start"),                 # pytest: E   ModuleNotFoundError ... (spaces collapsed)
    ("conflict (", 9, "start"),         # git merge: CONFLICT (content): Merge conflict in x
    ("fatal:", 8, "start"),             # git
    ("error:", 8, "start"),             # gcc / clang / make / elixir compile / git
    ("command not found", 9, "in"),     # shell
    ("no such file or directory", 7, "in"),
    (": undefined:", 9, "in"),          # go: x.go:1:2: undefined: regexp
    ("undefined: ", 8, "start"),
    ("imported and not used", 9, "in"),  # go
    ("no new variables on left side", 9, "in"),
    ("cannot use ", 7, "in"),
    ("parse error", 8, "in"),           # zsh / bash
    ("syntax error", 8, "in"),
    ("not formatted", 8, "in"),         # mix format / gofmt / prettier checks
    ("could not resolve", 8, "in"),     # esbuild / bundlers
    ("updates to go.mod needed", 9, "in"),
    ("no go files in", 8, "in"),
    ("cannot find main module", 8, "in"),
    ("has no upstream branch", 9, "in"),
    ("are ignored by one of your .gitignore", 9, "in"),
    ("permission denied", 7, "in"),
    ("the pattern can never match", 8, "in"),  # dialyzer
    ("\u2503 [", 7, "start"),              # credo: ┃ [D] ↘ Nested modules could be aliased
    ("\u25cf ", 7, "start"),            # jest / vitest failing test bullet
    ("--- fail:", 6, "start"),          # go test
    ("failed:", 6, "in"),
    ("panic:", 7, "start"),
    ("exception", 5, "in"),
    ("error", 5, "in"),
    ("not found", 4, "in"), ("cannot", 4, "in"), ("can't", 4, "in"), ("could not", 4, "in"),
    ("failed", 3, "in"), ("denied", 3, "in"), ("refused", 3, "in"), ("invalid", 3, "in"),
    ("unknown", 3, "in"), ("missing", 3, "in"), ("unable", 3, "in"), ("timed out", 3, "in"),
    ("fail", 2, "start"),
)
_GENERIC = ("validation failed", "task failed", "command failed", "build failed", "tests failed",
            "checks failed", "fix these issues", "to rerun pass", "previous error", "script failed",
            "exited with code", "errors from tasks", "because of errors", "could not compile",
            "errors were emitted")
# What a count line counts ("Found 4 errors.", "✖ 3 problems (3 errors, 0 warnings)"): it says
# how many things failed, not which.
_COUNTED = ("error", "problem", "issue", "failure", "warning", "diagnostic", "violation")
_LINT_NAMES = ("errcheck", "gosec", "govet", "staticcheck", "unused", "gocritic", "nilerr",
               "dupl", "noctx", "exhaustive", "unparam", "ineffassign", "typecheck", "revive",
               "gofmt", "goimports", "misspell", "prealloc", "gocyclo", "lll", "perfsprint")
_HINT_STARTS = ("run ", "try ", "use ", "to fix", "please run ", "you may need to run ")
RISKY = ("--no-verify", "--force", "-f ", "--break-system-packages", "sudo ", "rm -rf",
         "chmod 777", "--allow-unrelated-histories", "--hard", "--skip-checks",
         "git checkout -- ", "git restore ", "git clean ")  # (these discard changes)
_SAFE_FORMS = ("--force-with-lease", "--force-if-includes")
_HIDERS = ("| head", "| tail", "| grep", "|head", "|tail", "|grep", "|| true", "||true",
           "|| echo", "||echo", "|| :", "2>/dev/null ||", "| wc", "| less", "| sort",
           # a look after `;` gives the line its status (`lint > out.txt; diff a out.txt`)
           "; diff ", "; echo", "; cat ", "; ls", "; true", "; exit 0")


def lines_of(text: str) -> list:
    """Non-empty stripped lines without terminal colour codes; literal ``\\n`` pairs (output
    quoted twice) split too."""
    text = (text or "").replace("\\n", "\n") if "\\n" in (text or "") else (text or "")
    if "\x1b[" in text or "\\u001b[" in text:
        text = _uncoloured(text.replace("\\u001b[", "\x1b["))
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _uncoloured(text: str) -> str:
    """``text`` without ANSI escape sequences (``ESC [ params letter``): one failure printed
    with and without colours is one failure."""
    out, i = [], 0
    while True:
        at = text.find("\x1b[", i)
        if at < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:at])
        i = at + 2
        while i < len(text) and (text[i].isdigit() or text[i] in ";?"):
            i += 1
        i += 1 if i < len(text) and text[i].isalpha() else 0


def is_noise(line: str) -> bool:
    """A banner, progress or echoed-command line, or a bare tool protocol tag."""
    low = line.lower().lstrip()
    if low in ("<tool_use_error>", "</tool_use_error>", "fail", "failed", "error", "1 error") \
            or low.isdigit() or not any(c.isalnum() for c in low):
        return True  # (digits alone, or a separator an `echo '---'` printed, say nothing)
    if low[:1] in ("|", "^", "\u2502") or (low[:1].isdigit() or low[:1] == "\u00b7") and \
            low.lstrip("0123456789 \u00b7")[:1] in ("|", "\u2502"):
        return True  # a compiler's excerpt of the code: "18 |     set_var(...)", "552 552 │", "^^^"
    if low.startswith("[") and "] " in low:  # task prefixes: "[lint] $ ...", "[test] ok"
        tag, tail = low.split("] ", 1)
        if tail.startswith(("$ ", "error task failed")) or not tail.strip() \
                or tag + "]" in _STATUS_TAGS:
            return True
    return low.startswith(_NOISE_PREFIXES) or any(c in low for c in _NOISE_CONTAINS) \
        or _login_banner(low)


def _login_banner(low: str) -> bool:
    """``Ubuntu 24.04.4 LTS``, ``Welcome to Debian GNU/Linux 12 (…)``, ``Last login: …``: a
    system's name and version, and nothing else before a bracket."""
    if low.startswith("last login: "):
        return True
    low = low[len("welcome to "):] if low.startswith("welcome to ") else low
    name = next((n for n in _SYSTEMS if low.startswith(n)), "")
    said = low[len(name):].split("(", 1)[0].split() if name else []
    return bool(said) and said[0][:1].isdigit() and all(
        w[:1].isdigit() or w == "lts" for w in said)


def _located(line: str) -> bool:
    """Whether a line starts with a source location, ``path.ext:line[:col]:`` (compilers)."""
    head = line.split(": ", 1)[0] if ": " in line else ""
    parts = head.split(":")
    return len(parts) >= 2 and parts[1].isdigit() and "." in parts[0].rsplit("/", 1)[-1] \
        and " " not in parts[0]


def rule_code(line: str) -> str:
    """A linter's rule code the line names (``MD040/fenced-code-language``, ``F401`` after a
    location, ``error[E0133]``'s code is scored apart), else ''."""
    words = line.split()
    for i, word in enumerate(words[:4]):
        code = word.split("/", 1)[0].strip(":[]()")
        letters = code.rstrip("0123456789")
        digits = code[len(letters):]
        if 1 <= len(letters) <= 4 and letters.isupper() and letters.isalpha() \
                and 3 <= len(digits) <= 5 and ("/" in word or (i and ":" in words[0][:-1])):
            return code
    return ""


# A test runner's verdict on the code under work (the edit-test loop), not knowledge about
# the project: the same assertion failing in two sessions is two different bugs.
TEST_VERDICTS = ("assertion with ", "assertionerror", "--- fail:", "assert_equal", "expected:",
                 "test result: failed", "tests failed", "failing tests", "assertion failed",
                 "e assert ", " - assert", "' panicked at ", "test failed, to rerun pass",
                 "expect(received)")  # jest / vitest / bun: expect(received).toBe(expected)
# What a failing test may report that is about its environment, not the code under work.
SETUP_ERRORS = ("modulenotfounderror", "importerror", "no module named", "fixture '",
                "command not found", "permission denied", "connection refused")


def test_verdict(line: str) -> bool:
    """Whether a failure's cause line is only a failing test's verdict (jest/vitest name a
    failing test with a bullet, bun with ``(fail)``, pytest's summary ``FAILED path::test``,
    rust a panicking test thread; a suite that failed to run, a test that could not import,
    or a linter's finding that says what it expected, ``MD001/heading-increment … [Expected:
    h2]``, is no verdict)."""
    low = line.lower()
    if rule_code(line):
        return False
    if low.startswith(("\u25cf ", "(fail) ")) and "failed to run" not in low:
        return True
    if low.startswith("failed ") and "::" in low.split(" - ", 1)[0]:
        return not any(e in low for e in SETUP_ERRORS)
    return any(v in low for v in TEST_VERDICTS)


def _score(line: str) -> int:
    low = line.lower()
    best = 0
    for marker, score, how in _MARKERS:
        if score <= best:
            continue
        if (low.startswith(marker) if how == "start" else marker in low):
            best = score
    if low.endswith(")") and "(" in low:  # golangci-lint: file.go:1:2: message (linter)
        linter = low.rsplit("(", 1)[1][:-1]
        if linter in _LINT_NAMES and low.count(":") >= 3:
            best = max(best, 8)
    if best < 8 and rule_code(line):
        best = 8  # a linter's rule: a.md:12 MD040/fenced-code-language ..., a.py:1:8: F401 ...
    elif best < 5 and _located(line):
        best = 5  # a compiler's a.go:12:3: message (go hides it behind "[build failed]")
    if low.startswith("failed ") and "::" in low:
        best = max(best, 7)  # pytest's summary: FAILED tests/a.py::test_b - AssertionError
    if summary(line):
        best = min(best, 3)  # says that something failed, or how many, not what
    elif test_verdict(line):
        best = 9  # a failing test's verdict: the cause, not what a passing test logged
        # (bun prints the errors its passing tests throw on purpose: `error: Item 3 failed`)
    if any(f.strip().endswith("warning") for f in low.split(": ")[:-1][:3]):
        best = min(best, 1)  # a warning: DeprecationWarning: ..., a.rs:3:5: warning: ...
    if best == 5 and low.split(":", 1)[0].endswith(("error", "exception")) and ":" in low:
        best = 6  # KeyError: ..., TypeError: ... (the end of a traceback)
    return best


def summary(line: str) -> bool:
    """Whether a line only says that something failed (``Command failed``, ``exited with code
    1``) or how many things did (``Found 4 errors.``, ``✖ 3 problems (3 errors, 0 warnings)``,
    a label and a number: ``total: 1589``, which a script of the agent's own may print)."""
    low = line.lower()
    said = low.lstrip("\u2716\u00d7 ").split()
    said = said[1:] if said[:1] == ["found"] else said
    label, colon, number = low.partition(":")
    return any(g in low for g in _GENERIC) or (
        len(said) >= 2 and said[0].isdigit() and said[1].startswith(_COUNTED)) or (
        bool(colon) and number.strip().isdigit() and 0 < len(label.split()) <= 2)


def cause_line(text: str) -> str:
    """The line of the whole output that best names the error; the first meaningful line if
    none does; '' for empty output. A traceback's last ``…Error:`` line beats its first. A
    line ending in ``:`` takes the line right after it (``…ignored by one of your .gitignore
    files:`` then the path) when that one is a short name, not a sentence."""
    lines = [ln for ln in lines_of(text) if not is_noise(ln)]
    if not lines:
        return ""
    best, at = 0, 0
    for i, line in enumerate(lines):
        if len(line) > 400:
            continue  # a data blob (HTML, JSON, base64), not a message
        score = _score(line)
        if score > best or (score == best == 6 and lines[at].lower().split(":", 1)[0].endswith(
                ("error", "exception"))):
            best, at = score, i
    pick = lines[at] if best else lines[0]
    nxt = lines[at + 1] if best and at + 1 < len(lines) else ""
    if nxt.startswith("--> ") and " --> " not in pick:
        return f"{pick} {nxt}"  # rustc names the file on the next line (--> a.rs:3:5)
    if pick.endswith(":") and nxt and len(nxt.split()) <= 3 and _score(nxt) < best \
            and not pick.lower().startswith("diff in "):
        pick = f"{pick} {nxt}"  # "... ignored by one of your .gitignore files: priv/assets"
    return pick


def hints(text: str) -> list:
    """Commands the output itself suggests, most explicit first (at most 3): git's ``hint:``
    lines and "use" blocks, "did you mean", "run X to ...", go's "to update it:"."""
    found = []
    all_lines = [_unprefixed(ln) for ln in lines_of(text)]
    for i, line in enumerate(all_lines):
        low = line.lower()
        nxt = all_lines[i + 1] if i + 1 < len(all_lines) else ""
        body = line[5:].strip() if low.startswith("hint:") else line
        cmd = _quoted(body)
        if "advice." in low or "log of this run" in low:
            continue  # "turn this message off", "a complete log ... can be found"
        if low.startswith("hint:") and cmd:
            found.append(cmd)
        elif "did you mean" in low:
            rest = body[low.index("did you mean") + 12:].strip(" ?:'\"`")
            found.append(cmd or (rest if rest and rest not in ("this", "one of these") else
                                 nxt.split(" #", 1)[0]))
        elif low.endswith((":", ", use", " use")) and nxt and \
                {"run", "use", "update"} & set(_words(low)) and "user" not in low:
            found.append(nxt)  # git push / go / npm: the command on the next line
        elif low.startswith(_HINT_STARTS) and cmd:
            found.append(cmd)
        elif (" run " in low or " use " in low) and " to " in low and cmd:
            found.append(cmd)
    out = []
    for h in found:
        h = h.strip().strip(".")
        if h and h not in out and len(h) < 200:
            out.append(h)
    return out[:3]


def _unprefixed(line: str) -> str:
    """A line without the tool's own prefix (``npm error``, ``npm ERR!``, ``error:`` kept)."""
    low = line.lower()
    for prefix in ("npm error ", "npm err! ", "npm warn "):
        if low.startswith(prefix):
            return line[len(prefix):].strip()
    return line


def _quoted(text: str) -> str:
    """The first '...', "..." or `...` part of ``text``."""
    for q in ("`", "'", '"'):
        start = text.find(q)
        end = text.find(q, start + 1) if start >= 0 else -1
        if start >= 0 and end > start + 1:
            return text[start + 1:end]
    return ""


def failing_segment(segments: list, programs: list, error: str) -> int:
    """Index of the segment of a compound command that the error names, or -1: the cause line
    decides first, then the lines that report an error (``[lint] ERROR task failed``), then
    the whole output. A segment is named by its program path (``./run:``, ``cd:``) or, when
    several segments share a program, by its last word (``commit`` in a pre-commit error)."""
    if len(segments) < 2 or not error:
        return -1
    every = lines_of(error)
    cause = cause_line(error)
    loud = [ln for ln in every if "error" in ln.lower() or "fail" in ln.lower()]
    for text in ([cause], loud, every):
        at = _named(segments, programs, " ".join(text).lower())
        if at >= 0:
            return at
    return -1


def _named(segments: list, programs: list, low: str) -> int:
    if not low.strip():
        return -1
    words = _words(low)
    scores = []
    for seg, prog in zip(segments, programs):
        head = seg.split()[0].lower()
        last = prog.split()[-1].lower() if prog else ""
        if head + ":" in low or ("/" in head and head.rsplit("/", 1)[-1] + ":" in low):
            scores.append(3.0)
        elif last and len(prog.split()) > 1 and last in words:
            scores.append(1.0 + words.count(last) / 100.0)
        else:
            scores.append(0.0)
    top = max(scores)
    return scores.index(top) if top > 0 and scores.count(top) == 1 else -1


def _words(low: str) -> list:
    for ch in "[]():,.'\"`-/":
        low = low.replace(ch, " ")
    return low.split()


def hidden_success(command: str) -> bool:
    """Whether a command's exit status hides whether its core worked (``| tail``, ``|| true``)."""
    flat = " ".join((command or "").split())
    return any(h in flat for h in _HIDERS)


def core(command: str) -> str:
    """The command without what hides its status (``npm test 2>&1 | tail -5`` -> ``npm test``)."""
    flat = " ".join((command or "").split())
    cut = len(flat)
    for h in _HIDERS + (" 2>&1",):
        at = flat.find(h)
        if at >= 0:
            cut = min(cut, at)
    return flat[:cut].strip() or flat


def riskier(fix: str, failed: str) -> bool:
    """Whether ``fix`` adds a risky form (``--no-verify``, ``--force``, ``sudo``, ``rm -rf``,
    ``chmod 777``, ...) that ``failed`` did not use."""
    def marks(cmd: str) -> set:
        flat = " " + " ".join((cmd or "").split()) + " "
        for safe in _SAFE_FORMS:
            flat = flat.replace(safe, "")
        return {r for r in RISKY if r in flat}
    return bool(marks(fix) - marks(failed))


# --- a program the shell could not run --------------------------------------------------------

MISSING = "missing:"  # the word a lesson about a program missing here matches a failure by


def not_found(error: str) -> str:
    """What the shell says it could not find: ``go`` of bash's ``line 1: go: command not
    found``, zsh's ``command not found: go``; of a program run by a path that is not there
    (zsh ``no such file or directory: /usr/local/bin/docker``, bash ``bash: line 1:
    /usr/local/bin/docker: No such file or directory``) its name. '' when none is named."""
    for line in (error or "").splitlines():
        low = line.lower()
        at = low.find("command not found")
        if at >= 0:
            after = line[at + 17:]
            if after.startswith(":") and after[1:].split():  # zsh names it after
                return after[1:].split()[0]
            before = line[:at].rstrip().rstrip(":").replace(":", " ").split()
            return before[-1] if before else ""
        name = _run_path(line.strip(), low.strip())
        if name:
            return name
    return ""


def _run_path(line: str, low: str) -> str:
    """The program of a shell's "no such file or directory" for the path it tried to run."""
    zsh = "no such file or directory: /"
    if low.startswith(zsh) or (low.startswith(("zsh", "(eval)")) and ": " + zsh in low):
        return line[low.find(zsh) + len(zsh) - 1:].split()[0].rsplit("/", 1)[-1]
    parts = line.split(": ")
    if len(parts) >= 3 and parts[-1].lower() == "no such file or directory" \
            and parts[-2].startswith("/") and parts[0].rsplit("/", 1)[-1] in ("sh", "bash", "zsh"):
        return parts[-2].rsplit("/", 1)[-1]
    return ""


def missing_program(error: str) -> str:
    """The program the shell could not run (``not_found``), when it is a program's name
    (``world\\"`` of a quoting slip is not), else ''."""
    name = not_found(error)
    ok = name and all(c.isalnum() or c in "_.+@-" for c in name)
    return name if ok else ""
