"""Shell commands as fixes: how a later command relates to one that failed.

Owns comparing command lines word by word (segments, quoted text, the folder and
environment set in front), telling commands that only look around from ones that change
something, whether a command can do a missing program's job, the words two commands differ
in, and keeping personal data (e-mail addresses, the user's name in home folders, the
repository's own path) out of what a lesson shows. Pure functions with small caches; the failures miner decides
what proves a fix. Must not import cli or anything above learning.
"""

import re
from functools import lru_cache
from typing import List, Sequence, Tuple

from ..observation import causes, observe
from ..observation.commands import INTERPRETERS, WRAPPERS

# Commands that only look around: never the step that fixed something.
LOOKING = ("ls", "cat", "head", "tail", "grep", "rg", "find", "pwd", "echo", "which", "type",
           "wc", "less", "tree", "stat", "file", "git status", "git diff", "git log", "git show",
           "git branch", "git remote", "sed -n", "awk", "jq", "sleep", "true", "date", "env",
           "gh pr view", "gh pr checks", "gh run view", "gh api", "git ls-files",
           "git check-ignore", "git rev-parse", "git worktree list", "git stash list",
           "git show-ref", "git cat-file", "git config --get")  # and inline code (INLINE)
# An edited file whose name says it configures the build, dependencies or tools.
CONFIG_FILES = ("package.json", "tsconfig.json", "pyproject.toml", "setup.cfg", "setup.py",
                "requirements.txt", "cargo.toml", "go.mod", "mix.exs", "gemfile", "makefile",
                ".env", "pom.xml", "build.gradle", "composer.json", "deno.json", "tox.ini",
                ".golangci.yaml", ".golangci.yml", "jest.config", "vite.config", "webpack.config",
                "babel.config", ".eslintrc", ".prettierrc", "docker-compose", "dockerfile")
CONFIG_DIRS = ("config/", ".github/", ".cargo/", ".vscode/")
PRELUDE = ("cd", "pushd", "popd", "export", "source", ".", "set", "unset")
MOVES = ("cd", "pushd", "popd")  # a prelude that only moves: looking around elsewhere
SETS_ENVIRONMENT = tuple(p for p in PRELUDE if p not in MOVES)  # export, source, set, …
# Inline programs (``python3 -c '…'``): they look around, unless they work on a file the
# failed command was about (a compose file checked with Python's yaml module).
INLINE = ("python -c", "node -e", "ruby -e", "perl -e")  # (python3 -c, python3.12 -c too)
INSTALLS = ("install", "add", "i")  # a package manager's install: a step, not the job
CUT_CHANGE = 60              # characters of each side of a changed part of a command
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")  # a word after the family that may go deeper
_EMAIL = re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w:-]|\.\w)")
"""An e-mail address (not ``pkg@v1.2``, nor ``user@host:`` where scp, ssh or git names a host)."""
_AUTHOR = re.compile(r"(--author[= ])(\"[^\"]*\"|'[^']*'|\S+)")
# A user's name in a home folder: /Users/<name>/, /home/<name>/, C:\Users\<name>\, and Claude
# Code's project folder names made of those (-Users-<name>-).
_HOME = re.compile(r"(/Users/|/home/|[A-Za-z]:\\\\?Users\\\\?)[^/\\\s'\"`]+(/|\\\\?)"
                   r"|(-Users-|-home-)[^-/\s'\"`]+(-)")
_PATH_START = " \t\n'\"`=(:"  # what may stand before a path that a home folder begins


@lru_cache(maxsize=4096)  # pure, and the same commands come back again and again
def segments(args: str) -> List[str]:
    return [" ".join(s.split()) for s in observe.segments(causes.core(args))]


@lru_cache(maxsize=4096)
def family_of(segment: str) -> str:
    return observe.command_family(segment)


@lru_cache(maxsize=4096)
def flat(args: str) -> str:
    return " ".join(causes.core(args).split())


def same_family(failed_family: str, family: str, args: str) -> bool:
    """The family, or one segment of a compound command, is the failed family."""
    return family == failed_family or any(family_of(seg) == failed_family for seg in segments(args))


def resembles(failed_family: str, family: str, args: str) -> bool:
    """Same family, same program, or the failed program named in the command
    (``pytest`` → ``python3 -m pytest``, ``bash -lc 'npm test'`` → ``sh -c 'npm test'``)."""
    program = failed_family.split()[0]
    return family == failed_family or family.split()[0] == program or \
        program in runs(args).replace("'", " ").replace('"', " ").split()


def runs(args: str) -> str:
    """The part of a command that runs: a heredoc's text (a PR body naming `zsh`) runs nothing."""
    return args.split("<<", 1)[0]


@lru_cache(maxsize=4096)
def looking(args: str) -> bool:
    """Whether every part of the command only looks around (``ls``, ``git status``, a
    ``cd``, inline code, ...), also inside a program that runs it (``kubectl exec pod -- ls``,
    ``uv run python -c '…'``); ``export`` and ``source`` change what runs next, so they do not."""
    segs = segments(args)
    return not segs or all(seg.split()[0] in MOVES or inline(seg) or any(
        part == w or part.startswith(w + " ") for part in (seg, seg.split(" -- ", 1)[-1])
        for w in LOOKING) for seg in segs)


def sets_path(args: str) -> bool:
    """A command that puts folders on PATH first (``export PATH="/usr/bin:$PATH" && …``): a
    program it then finds was not missing, only out of the shell's reach."""
    return any(seg.split(" ", 1)[-1 if seg.startswith("export ") else 0].startswith("PATH=")
               for seg in segments(args))


UNDO = {"git stash pop": "git stash", "git stash apply": "git stash"}  # step -> what it undoes
# Steps that take files out of what is committed: a commit that then gets through was
# narrowed, not fixed (a hook's check reads the files on disk; the files may be another's).
UNSTAGE = ("git reset HEAD", "git reset -q HEAD", "git reset --", "git restore --staged",
           "git rm --cached")  # (each a whole word: `git reset HEAD~1` undoes a commit)


def undoes(args: str, failed: str) -> bool:
    """Whether a step only undoes what the failed command itself did (``git stash pop`` after
    ``git stash && bun test``): it puts things back, it fixes nothing."""
    return any(seg.startswith(step) and did in failed
               for seg in segments(args) for step, did in UNDO.items())


def unstages(args: str) -> bool:
    """Whether a step takes files out of the index (``git reset HEAD <file>``)."""
    return any(u + " " in " ".join(seg.split()) + " " for seg in segments(args) for u in UNSTAGE)


def inline(segment: str) -> bool:
    """Whether a segment runs code given on its command line (``python -c``, ``node -e``)."""
    said = [w.rsplit("/", 1)[-1] for w in plain(segment)]
    return any(f"{a.rstrip('0123456789.')} {b}" in INLINE for a, b in zip(said, said[1:]))


def code_changed(failed: str, args: str) -> bool:
    """Whether the passing command ran the failed one's interpreter the same way on other
    code (a heredoc's, ``python -c '…'``'s): the code under work was fixed, not how it runs."""
    if failed == args or ("<<" in failed) != ("<<" in args):
        return False
    if "<<" in failed:
        before = segments(runs(failed))
        return flat(runs(failed)) == flat(runs(args)) and bool(before) and \
            before[-1].split()[0].rsplit("/", 1)[-1].rstrip("0123456789.") in INTERPRETERS
    a, b = segments(failed), segments(args)
    return len(a) == len(b) and any(inline(x) for x in a) and \
        all(plain(x) == plain(y) for x, y in zip(a, b))


def diagnostic(args: str) -> bool:
    """A look-around command specific enough to be worth naming (it has a ``--`` option)."""
    return looking(args) and " --" in flat(args)


def config_edit(obs: dict) -> str:
    """The file an edit or write changed, when it configures the project; else ''."""
    if obs.get("tool_kind") not in ("edit", "write") or obs.get("event") != "tool_success":
        return ""
    path = str(obs.get("file") or obs.get("args") or "")
    name = path.rsplit("/", 1)[-1].lower()
    if name.startswith(CONFIG_FILES) or any(d in path.replace("\\", "/") for d in CONFIG_DIRS):
        return path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1] if "/config/" in path \
            else path.rsplit("/", 1)[-1]
    return ""


def plain(segment: str) -> List[str]:
    """A command's words with quoted text (a commit message, a heredoc) left out."""
    tokens, quote = [], ""
    for tok in segment.split():
        if quote:
            quote = "" if tok.endswith(quote) else quote
        elif tok[:1] in ("'", '"') or tok.startswith("$("):
            q = '"' if tok.startswith("$(") else tok[0]
            quote = "" if len(tok) > 1 and tok.endswith(q) else q
            tokens.append("<q>")
        else:
            tokens.append(tok.rstrip("\u2026"))
    return tokens


def same_words(failed: str, args: str, fam: str) -> bool:
    """The segment of ``args`` with the failed family says what the failed one said, up to
    quoted text: the same command run again (another commit message is no fix)."""
    def of(cmd: str) -> List[List[str]]:
        return [plain(seg) for seg in segments(cmd) if family_of(seg) == fam]
    before, after = of(failed), of(args)
    if not before or not after or where(failed) != where(args):
        return False  # not in the same folder or environment: another command
    a, b = before[0], after[0]
    cut = (failed + args).count("\u2026") > 0  # a recorded command cut short
    if cut and ("<q>" in a or "<q>" in b):  # compare up to the first quoted part
        a, b = a[:a.index("<q>")] if "<q>" in a else a, b[:b.index("<q>")] if "<q>" in b else b
    return a == b


def reran(failed: str, args: str) -> bool:
    """Whether ``args`` ran the failed command (or the failing part of it) again, in the
    same folder and environment: a shared ``cd`` alone is no re-run."""
    mine = [flat(args)] + [seg for seg in segments(args) if seg.split()[0] not in PRELUDE]
    return where(args) == where(failed) and any(m in segments(failed) for m in mine)


def where(cmd: str) -> List[str]:
    """The ``cd``/``export``/``source`` parts in front of a command: they change what it does."""
    return [seg for seg in segments(cmd) if seg.split()[0] in PRELUDE]


def same_target(failed: str, args: str, fam: str, named: Sequence[str] = ()) -> bool:
    """Whether a command of the failed one's family does its job: it keeps the failed
    command's subject (a program without subcommands: its first operand, ``rtk bun`` is not
    ``rtk git``, ``ls types/`` not ``ls -la /x``; with them, the whole subcommand path:
    ``gh pr checks`` is not ``gh pr view``) and, when the failed command (or the error,
    ``named``) named files or folders, at least one of them (by path or name: ``node build.js``
    in ``assets/`` for ``node assets/build.js``); ``python -c '…'`` for ``python a.py`` is none."""
    def of(cmd: str) -> List[str]:
        segs = [seg for seg in segments(cmd) if family_of(seg) == fam] or [
            seg for seg in segments(cmd) if seg.split()[0] not in PRELUDE]
        return [w for seg in segs for w in _acted_on(seg, fam)]
    before, after = of(failed), of(args)
    if before and (len(fam.split()) == 1 or _SUBCOMMAND.fullmatch(before[0])) and \
            not (after and _same_path(before[0], after[0])):
        return False
    paths = [w for w in before if "/" in w or "." in w.strip(".")]
    return not paths or any(_same_path(p, q) for p in paths + list(named) for q in after)


def _acted_on(segment: str, fam: str) -> List[str]:
    """A segment's words after its program and family that are no option, value of a long
    option, quoted text, number or assignment."""
    words = plain(segment)
    while words and ("=" in words[0] and words[0].split("=", 1)[0].isidentifier()
                     or words[0] in WRAPPERS or words[0][:1] == "-" or words[0].isdigit()):
        words.pop(0)  # what runs the program (X=1, sudo -E, timeout 30), not what it acts on
    rest = words[1:]
    program = fam.split()[0] if fam else ""
    if program in rest:  # launched by another program: `python3 -m pytest x` for `pytest x`
        rest = rest[rest.index(program) + 1:]
    for word in fam.split()[1:]:
        if word in rest and "." not in word:  # (a subcommand; `build.js` of `node build.js` stays)
            rest.remove(word)
    out, value = [], False
    for word in rest:
        if word.startswith("-"):
            value = word.startswith("--") and "=" not in word and word != "--"
        elif value:
            value = False
        elif word != "<q>" and "=" not in word and not word.isdigit():
            out.append(word.strip("'\"").rstrip("/"))
    return out


def _same_path(a: str, b: str) -> bool:
    a, b = a[2:] if a.startswith("./") else a, b[2:] if b.startswith("./") else b
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1] or \
        b.startswith(a + "/") or a.startswith(b + "/")


def unwrapped(failed: str, args: str) -> bool:
    """Whether ``args`` is the failed command without the program in front that was to run it
    (``bun run test`` after ``rtk bun run test`` failed with "unrecognized subcommand")."""
    a, b = flat(failed).split(), flat(args).split()
    front = a[:len(a) - len(b)]  # the program (and its subcommand), no option: not `ls -la x`
    return len(segments(failed)) == 1 and 0 < len(front) <= 2 and a[len(front):] == b and \
        not any(w.startswith("-") for w in front)


def operands(args: str, fam: str) -> List[str]:
    """The words after the program of the command's segment of family ``fam`` (or its
    first segment) that are not options: what it acts on."""
    segs = [seg for seg in segments(args) if family_of(seg) == fam] or segments(args)[-1:]
    words = segs[0].split()[1:] if segs else []
    return [w for w in words if not w.startswith("-")]


def after_cd(obs: dict) -> str:
    """For a failed ``cd x && rest``: ``rest`` (flat), to notice it later run without the cd."""
    if obs.get("family") != "cd":
        return ""
    segs = segments(str(obs.get("args") or ""))
    return " && ".join(segs[1:]) if len(segs) > 1 and segs[0].startswith("cd ") else ""


def relative_miss(obs: dict, line: str) -> bool:
    """A shell command could not find a relative path it names (``ls types/``), so where the
    shell was decided it; not after the command's own ``cd`` to an absolute folder (there
    the path does not exist, as an absolute one that is missing), and not for the program
    that speaks in the error (``wsl -e bash /mnt/c/x`` failing with ``bash: C:/…/x: No such
    file``: its path was absolute, Git Bash rewrote it)."""
    low = line.lower()
    if obs.get("tool_kind") != "shell" or not ("no such file" in low or "cannot access" in low):
        return False
    segs = segments(str(obs.get("args") or ""))
    if segs and segs[0].split()[0] in MOVES and segs[0].split()[1:2] and \
            segs[0].split()[1].startswith(("/", "~")):
        return False
    speaker = line.split(":", 1)[0].rsplit("/", 1)[-1].strip()  # `bash` of `bash: x: No such…`
    words = [w for seg in segs for w in seg.split()[1:] if w != speaker]
    return any(not w.startswith(("/", "-", "~", "$")) and (w in line or w.rstrip("/") in line)
               for w in words)


def replaced(obs: dict, line: str) -> str:
    """The program that answered instead of the one run (an alias or wrapper: ``tree`` run,
    ``lsd: 3: No such file or directory``), else ''. It must be no word of the command, and
    the line must name a word of the command (here ``3`` of ``-L 3``) as what it choked on."""
    if obs.get("tool_kind") != "shell" or line.count(": ") < 2:
        return ""
    other, what = line.split(": ")[:2]
    family = str(obs.get("family") or "")
    words = [w for seg in segments(str(obs.get("args") or "")) for w in seg.split()]
    if not other.replace("-", "").replace("_", "").isalnum() or other.lower() != other \
            or other in words or not family or other == family.split()[0] \
            or family.split()[0] in observe.RUNNERS:
        return ""
    return other if what in words[1:] else ""


def _words(text: str) -> set:
    """A command's words as a set, quotes, brackets and separators taken apart (so a file
    named inside ``open('a.yml')`` is a word)."""
    for ch in "'\"`()[]{};,=|&<>":
        text = text.replace(ch, " ")
    return {w.rstrip("/") for w in text.split()}


def same_job(args: str, failed: str, fam: str) -> bool:
    """Whether a command that succeeded can do what a missing program was asked to: it runs
    that program some other way (``mise exec -- golangci-lint …``), or it works on what the
    failed command named (``find lib -type d`` for ``tree lib``, Python's yaml module on
    ``docker-compose.yml``); two look-arounds without operands (``tree`` → ``ls -R``) also
    do the same job. Never an install (a step towards running the program), a riskier
    command or one whose success a pipe hides (unless both only look around: then the output
    is the point), nor a look-around for a program that does more (``mise tasks | grep
    lint`` is no linter), nor another program's ``--version`` for the missing one's."""
    both_look = looking(failed) and looking(args)
    if causes.riskier(args, failed) or (not both_look and causes.hidden_success(args)) or any(
            w in INSTALLS for seg in segments(args) for w in family_of(seg).split()[1:]):
        return False
    program = fam.split()[0]
    said = _words(runs(flat(args)))
    if program in said or any(s.rsplit("/", 1)[-1] == program for s in said):
        return not looking(args) or both_look
    targets = [w.strip("'\"").rstrip("/") for w in operands(failed, fam)
               if w not in fam.split() and len(w.strip("'\"./")) > 2]
    if not targets:
        return both_look and not operands(failed, fam)
    on_target = any(s == t or s.startswith(t + "/") for t in targets for s in said)
    return on_target and (both_look or inline(flat(args)) or not looking(args))


def other_language(fam: str, family: str) -> bool:
    """Two interpreters (a shell, Python, Node, …): one never does the other's job, since
    the code it was given is in the other's language."""
    a, b = (f.split()[0].rstrip("0123456789.") if f else "" for f in (fam, family))
    return a != b and a in INTERPRETERS and b in INTERPRETERS


def provides(args: str, fam: str) -> bool:
    """Whether a command can make a missing program available: it names the program, sets
    the environment (``export PATH=…``) or installs something (``gcc --version`` cannot)."""
    program = fam.split()[0]
    return program in _words(flat(args)) or any(
        seg.split()[0] in SETS_ENVIRONMENT
        or any(w in INSTALLS for w in family_of(seg).split()[1:]) for seg in segments(args))


def hinted(args: str, hints: List[str]) -> bool:
    core = flat(args)
    return any(h and (core == h or core.startswith(h + " ") or h in core) for h in hints)


def difference(old: str, new: str) -> Tuple[str, str]:
    """The part of command ``old`` that ``new`` changed, each side with the word before it when
    that one is short (``--base alex/x`` -> ``--base main``); ``('', '')`` when they share no
    words around it or differ in nothing both records kept (their cut ``…`` words aside)."""
    a, b = old.split(), new.split()
    if a[-1:] and b[-1:] and a[-1].endswith("\u2026") and b[-1].endswith("\u2026"):
        n = min(len(a), len(b)) - 1  # both cut: compare what both kept
        a, b = a[:n], b[:n]
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    if (start == 0 and end == 0) or a == b:
        return "", ""
    left = start - 1 if start and len(a[start - 1]) <= CUT_CHANGE // 3 else start
    return (_cut(" ".join(a[left:len(a) - end])), _cut(" ".join(b[left:len(b) - end])))


def _cut(text: str) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= CUT_CHANGE else text[:CUT_CHANGE - 1].rstrip() + "\u2026"


def private(text: str, here: str = "") -> str:
    """``text`` as a lesson may show it: paths under the repository root ``here`` relative to
    it, a home folder as ``~`` (``_home``), e-mail addresses and ``--author``
    values as placeholders (a lesson is about the project, not about who ran it)."""
    here = here.rstrip("/")
    if here.count("/") > 1 and here in text:
        text = _under(here).sub(lambda m: "" if m.group(1) else ".", text)
        text = " ".join(text.replace("cd . && ", "").split())
    text = _AUTHOR.sub(r"\1<author>", text)
    text = _EMAIL.sub("<email>", text)
    return _HOME.sub(_home, text)


def _home(m: "re.Match") -> str:
    """A home folder as a step may say it: ``~/`` where a path begins with it (the same
    step then runs for whoever reads it), else the name as ``USER`` (inside ``/c/Users/…``
    or a project folder's name). Never ``<user>``: the safety screen reads that as a chat
    role's tag and holds the whole lesson back."""
    start = m.string[m.start() - 1:m.start()]
    if m.group(1) and m.group(1).startswith("/") and (not start or start in _PATH_START):
        return "~/"
    return f"{m.group(1) or m.group(3)}USER{m.group(2) or m.group(4)}"


@lru_cache(maxsize=64)
def _under(here: str):
    """``here`` as a whole folder name, with the ``/`` after it (group 1) when a path goes on."""
    return re.compile(re.escape(here) + r"(?:(/)|(?![\w.-]))")
