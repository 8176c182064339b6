"""Shell command lines: their parts and their family.

Owns splitting a command line at ``&&``, ``||``, ``;``, ``|`` (``segments``), naming its
family (``npm run build``, ``git push``, ``python3 -m pytest``: ``command_family``), giving
a failed compound command to the segment its error names (``refine_family``), and what a
lesson's trigger compares: a call's ``words`` and the ``folder`` it runs in.
On the hook path: plain string methods, no imports at module level (``causes`` is loaded
only when a tool failed). Must not import anything above observation.
"""

PRELUDE = {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", ":"}
WRAPPERS = {"sudo", "time", "nohup", "env", "command", "exec", "nice", "builtin", "timeout"}
SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "docker-compose",
    "kubectl", "pip", "pip3", "uv", "poetry", "pdm", "hatch", "gh", "dotnet", "mvn", "mvnw",
    "gradle", "gradlew", "terraform", "helm", "apt", "apt-get", "brew", "deno", "rustup",
    "composer", "bundle", "make", "conda", "npx", "bunx", "rake", "mix", "swift", "just",
    "mise", "task", "turbo", "nx", "pixi", "rye"}
INTERPRETERS = {"python", "node", "ruby", "perl", "bash", "sh", "zsh", "php"}
RUNNER_SUBS = {"run", "run-script", "exec", "x", "dlx"}
# Programs that run other programs: an error from another program is theirs to report.
RUNNERS = SUBCOMMAND_TOOLS | INTERPRETERS | WRAPPERS | {"xargs", "find", "watch", "parallel"}
OPTS_WITH_ARG = {"-C", "-c", "-f", "--prefix", "--manifest-path", "--filter", "-p", "-w"}


def uncommented(command: str) -> str:
    """The command without what runs nothing: ``#`` comments (from a word starting with ``#``
    to the end of its line) and backslash line continuations (``\\`` then a newline)."""
    return command if "#" not in command and "\\\n" not in command else _scan(command, False)[0]


def segments(command: str) -> list:
    """Split a shell line at ``&&``, ``||``, ``;``, ``|`` and newlines outside quotes (``2>&1``
    and ``&>`` are redirections, not separators), its comments left out."""
    return [p.strip() for p in _scan(command, True) if p.strip()]


def _scan(command: str, split: bool) -> list:
    """The command's text outside comments, in parts split at separators when ``split``."""
    parts, buf, quote, i = [], [], "", 0
    while i < len(command):
        ch = command[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (not buf or buf[-1] in " \t\n;|&"):
            end = command.find("\n", i)
            i = len(command) if end < 0 else end  # the comment runs to the end of its line
            continue
        elif ch == "\\" and command[i + 1:i + 2] == "\n":
            ch, i = " ", i + 1
        elif split and ch == "&" and (command[i - 1:i] == ">" or command[i + 1:i + 2] == ">"):
            pass  # a redirection (2>&1, &>file), not a separator
        elif split and ch in ";|&\n":
            parts.append("".join(buf))
            buf = []
            i += 2 if command[i:i + 2] in ("&&", "||") else 1
            continue
        buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def _is_assignment(token: str) -> bool:
    return "=" in token and token.split("=", 1)[0].isidentifier()


def _words(segment: str) -> list:
    """The words of a segment from its program on: leading assignments (``X=$(go env Y)``,
    whose ``$(...)`` may span words), wrappers, options and numbers left out."""
    tokens = [t.strip("'\"") for t in segment.split()]
    depth = 0
    while tokens and (depth or _is_assignment(tokens[0]) or tokens[0] in WRAPPERS
                      or tokens[0].startswith("-") or tokens[0].replace(".", "").isdigit()):
        if depth or _is_assignment(tokens[0]):
            depth = max(0, depth + tokens[0].count("$(") - tokens[0].count(")"))
        tokens.pop(0)
    return tokens


def command_family(command: str) -> str:
    """The command's family: ``npm run build``, ``git push``, ``python3 -m pytest``, ``make``."""
    parts = segments(command)
    chosen = next((s for s in parts if s.split()[0] not in PRELUDE and _words(s)),
                  parts[0] if parts else "")
    tokens = _words(chosen)
    if not tokens:
        return ""
    prog = tokens[0].rsplit("/", 1)[-1]
    rest = tokens[1:]
    if prog in ("bash", "sh", "zsh") and rest[:1] in (["-c"], ["-lc"]):
        script = chosen.split(rest[0], 1)[1].strip().strip("'\"")
        if "\n" in script:
            return prog  # a script of its own, not one command run through the shell
        return command_family(script) or prog
    if prog.rstrip("0123456789.") in INTERPRETERS and rest:
        if rest[0] == "-m" and len(rest) > 1:
            return f"{prog} -m {rest[1]}"
        return f"{prog} {rest[0] if rest[0].startswith('-') else rest[0].rsplit('/', 1)[-1]}"
    if prog not in SUBCOMMAND_TOOLS:
        return prog
    words, skip = [prog], False
    for token in rest:
        if skip or token.startswith("+") or _is_assignment(token) or token.isdigit():
            skip = False
            continue
        if token.startswith("-"):
            skip = token in OPTS_WITH_ARG
            continue
        words.append(token)
        if len(words) == 3 or words[1] not in RUNNER_SUBS or prog == "npx":
            break
    return " ".join(words[:3 if len(words) > 2 and words[1] in RUNNER_SUBS else 2])


def refine_family(obs: dict, output: str = "") -> None:
    """A failed compound shell command belongs to the segment its error names
    (``cd x && make && ./run`` failing with ``./run: ...`` is a failure of ``./run``)."""
    output = output or str(obs.get("error") or "")
    command = getattr(obs, "command", "") or str(obs.get("args") or "")
    if obs.get("tool_kind") != "shell" or not command or not output:
        return
    from . import causes
    parts = segments(command)
    families = [s.split()[0] if s.split()[0] in PRELUDE else command_family(s) for s in parts]
    at = causes.failing_segment(parts, families, output)
    if at >= 0 and families[at]:
        redact = getattr(obs, "_redact", None)  # an observation under construction redacts
        obs["family"] = (redact(families[at]) if redact else families[at])[:120]


def words(text: str) -> list:
    """Lower-case words of a call or an error (letters, digits and ``-_./:=@+``), as a
    lesson's trigger and a later call are compared."""
    out, word = [], []
    for ch in text.lower():
        if ch.isalnum() or ch in "-_./:=@+":
            word.append(ch)
        elif word:
            out.append("".join(word).strip("./:"))
            word = []
    if word:
        out.append("".join(word).strip("./:"))
    return [w for w in out if w]


def folder(cwd: str, command: str, root: str) -> str:
    """Where a shell line runs, relative to ``root`` ("." at the root): ``cwd``, then a
    leading ``cd`` (relative or absolute); an absolute path when outside ``root``."""
    from ..storage import posixfs as fs
    here = cwd or root
    parts = segments(command) if command.startswith(("cd ", "pushd ")) else []
    said = parts[0].split() if parts else []
    if len(said) == 2:
        target = said[1].strip("'\"")
        if not target.startswith(("~", "$", "-")):
            here = fs.normpath(target if target.startswith("/") else fs.join(here, target))
    root = root.rstrip("/")
    if here.rstrip("/") == root:
        return "."
    return here[len(root) + 1:] if root and here.startswith(root + "/") else here


RUNS = ("run", "run-script")
RUNNERS_WITH_RUN = ("npm", "pnpm", "yarn", "bun", "mise", "deno", "just", "task")


def spellings(family: str) -> list:
    """A family as a lesson may have learned it: a script runner's with and without ``run``
    (``pnpm lint`` is ``pnpm run lint``)."""
    said = family.split()
    if len(said) == 3 and said[1] in RUNS:
        return [family, f"{said[0]} {said[2]}"]
    if len(said) == 2 and said[0] in RUNNERS_WITH_RUN:
        return [family, f"{said[0]} run {said[1]}"]
    return [family]


ANY = " *"  # after a program, a family meaning any call of it (``go *``: a program missing here)


def families_of(record: dict, command: str) -> list:
    """The families a call can trigger: each segment's of a shell line (``pnpm lint`` and
    ``pnpm run lint`` being one, and ``pnpm *`` any call of its program), else its family."""
    if record.get("tool_kind") == "shell" and command:
        found = [command_family(seg) for seg in segments(command)]
        return list(dict.fromkeys(v for f in found if f
                                  for v in spellings(f) + [f.split()[0] + ANY]))
    family = record.get("family") or record.get("tool") or ""
    return [family] if family else []
