"""What a lesson's shell commands do, judged on their structure (``shell.parse``), not spelling.

Owns the command side of the safety screen: a step that runs remote or decoded content
(piped, redirected, here-string, ``-c "$(…)"``, process substitution, or a file downloaded
earlier and run before anyone read or checked it), sends credential or key files or the
environment elsewhere, destroys what is outside the work tree or on a shared remote, disables a
safety check (hooks, TLS verification, an agent's approvals), points a package index,
registry or git remote at another host, or grants administrator rights on a shared system.
``findings(text)`` returns ``(category, excerpt)`` pairs; ``screen`` words them. Wrappers
(``sudo``, ``env``, ``xargs``, ``timeout``…) are seen through, and prose before a command is
skipped (every word naming a known program starts a candidate command); what each program does
is ``programs``' and ``platforms``'. Imports only ``shell``, ``programs`` and ``platforms``
beside it; must not import any stage above storage.
"""

import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from . import platforms, shell
from .shell import Command, Word
from .programs import (
    ARG_OPTS, CODE_OPTS, CURL_LONG, CURL_SHORT, DATA_OPTS, DATA_READERS, DOWNLOADERS, HANDLERS,
    INTERPRETERS, NET_READERS, READERS, SECRET_VAR, SENDERS, SHELLS, SOURCE_FILES, SUBCOMMANDS,
    VIEWERS, WGET_LONG, WGET_SHORT, Opts, assignments, credential, decodes, downloads_to, dumps,
    home_path, known_programs, new_host, options, prog_name, settings_off, to_stdout, unwrap)

Finding = Tuple[str, str]  # (category, excerpt)
_URL = re.compile(r"(?i)(?:https?|ftp)://")
# a setting or place that names the certificates TLS trusts (git http.sslCAInfo, --cacert,
# NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, /usr/local/share/ca-certificates/, a trust store)
_CA_KEY = re.compile(r"(?<![a-z])(?:ssl)?ca(?:info|file|path|certs?|[-_](?:bundle|file|path|"
                     r"certs?|trust))|cert[-_]?file|trusted[-_]?cert|truststore|/anchors(?:/|$)")


def mentions(text: str) -> bool:
    """Whether ``text`` names a program the judge knows, as a word (a cheap look before
    parsing text that is rarely shell, such as a rot13 reading)."""
    return bool({t.strip("`'\"(),.:;") for t in text.lower().split()} & known_programs())


def split_command(text: str) -> bool:
    """Whether a line break in ``text`` may cut a command in two (the line before ends with a
    program, an option, a URL or an operator, or the next starts with one)."""
    known = known_programs()
    lines = text.split("\n")
    for before, after in zip(lines, lines[1:]):
        last = before.split()[-1:] or [""]
        first = after.split()[:1] or [""]
        a, b = last[0], first[0]
        if prog_name(a) in known or a.startswith(("-", "$(", "`")) or "://" in a or \
                a.endswith(("|", "&&", "\\")) or b.startswith(("-", "|", "&", ";", "$(", "`", "<",
                                                               ">")) or "://" in b:
            return True
    return False


def _sub_taint(word: str, ctx: "_Context") -> Set[str]:
    """What the scripts inside ``word`` print: remote content, decoded data, secrets."""
    out: Set[str] = set()
    for sub in getattr(word, "subs", ()):
        for pipe in sub:
            out |= ctx.pipeline_taint(pipe)
    return out


class _Context:
    """What one lesson's commands did so far: files downloaded (and whether read or checked
    since), and the findings."""

    def __init__(self):
        self.downloads: Dict[str, bool] = {}  # path -> verified
        self.secret_files: Set[str] = set()  # archives and copies made of credential files
        self.variables: Dict[str, str] = {}  # NAME=value set alone on a line (C=curl)
        self.found: List[Finding] = []
        self.seen: Set[str] = set()

    def flag(self, category: str, words: Iterable[str]) -> None:
        if category in self.seen:
            return
        self.seen.add(category)
        self.found.append((category, " ".join(words)[:120]))

    def downloaded(self, path: str) -> bool:
        """``path`` is a file downloaded earlier that nobody read or checked since."""
        p = _norm_path(path)
        for d, verified in self.downloads.items():
            if not verified and (p == d or p.rsplit("/", 1)[-1] == d.rsplit("/", 1)[-1]):
                return True
        return False

    def verify(self, path: str) -> None:
        p = _norm_path(path)
        for d in self.downloads:
            if p == d or p.rsplit("/", 1)[-1] == d.rsplit("/", 1)[-1]:
                self.downloads[d] = True

    def pipeline_taint(self, pipe: List[Command]) -> Set[str]:
        out: Set[str] = set()
        for cmd in pipe:
            out |= self.produces(cmd)
        return out

    def produces(self, cmd: Command, words: Optional[List[Word]] = None) -> Set[str]:
        """What ``cmd`` prints: ``remote`` (downloaded or read from the network), ``decoded``
        (a payload decoded), ``secret`` (credentials or the environment)."""
        out: Set[str] = set()
        if cmd.group is not None:
            for pipe in cmd.group:
                out |= self.pipeline_taint(pipe)
        all_words = cmd.words if words is None else words
        for start in _starts(all_words):
            words = unwrap(all_words[start:])
            if not words:
                if prog_name(all_words[start]) == "env":  # ``env`` alone prints the environment
                    out.add("secret")
                continue
            prog, args = prog_name(words[0]), words[1:]
            if prog in DOWNLOADERS and to_stdout(prog, args):
                out.add("remote")
            elif start == 0 and prog not in known_programs() and any(
                    _URL.match(a) for a in args):  # an unknown program given a URL: a fetch
                out.add("remote")
            elif prog in NET_READERS:
                out.add("remote")
            elif prog == "openssl" and args[:1] == ["s_client"]:
                out.add("remote")
            if decodes(prog, args):
                out.add("decoded")
            if prog in READERS:
                if any(credential(a) for a in args if not a.startswith("-")):
                    out.add("secret")
                if any(self.downloaded(a) for a in args if not a.startswith("-")):
                    out.add("remote")
                if prog in ("echo", "printf") and any(SECRET_VAR.search(a) for a in args):
                    out.add("secret")
            if dumps(prog, args):
                out.add("secret")
            platform = platforms.token_source(prog, args)
            if platform:
                out.add("token:" + platform)
            for a in args:
                out |= _sub_taint(a, self)
        return out | _fed(cmd, self)


def _fed(cmd: Command, ctx: _Context) -> Set[str]:
    """What a command's input redirections feed it: here-strings and here-documents (their
    ``$(…)``), and a file (``bash < <(curl …)``, a download, a credential file)."""
    out: Set[str] = set()
    for op, target in cmd.redirs:
        if op in ("<", "<<<", "<<", "<<-"):
            out |= _sub_taint(target, ctx)
            if op == "<" and ctx.downloaded(target):
                out.add("remote")
            if op == "<" and credential(target):
                out.add("secret")
    return out


def _norm_path(path: str) -> str:
    p = (home_path(path) or path).lower()
    while p.startswith("./"):
        p = p[2:]
    return p


def _expanded(words: List[Word], variables: Dict[str, str]) -> List[Word]:
    """``words`` with ``$NAME`` and ``${NAME}`` of variables set earlier replaced."""
    out = []
    for w in words:
        if "$" in w:
            new = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?",
                         lambda m: variables.get(m.group(1).lower(), m.group(0)), w)
            if new != w:
                w = shell._word(new, getattr(w, "subs", ()), getattr(w, "texts", ()))
        out.append(w)
    return out


def _starts(words: List[Word]) -> List[int]:
    """Where a command may start: the first word, and every later word naming a known program
    (prose before a command: ``Fix: run curl …``)."""
    known = known_programs()
    out = [0] if words else []
    for k in range(1, min(len(words), 64)):
        # not a subcommand (``git rm``) nor a wrapped program (``sudo rm``: the start before
        # it reads it) nor an option's value (``bash -c curl``)
        if prog_name(words[k]) in known and prog_name(words[k - 1]) not in SUBCOMMANDS and \
                words[k - 1] not in ("-c", "-e"):
            out.append(k)
    return out


def findings(text: str) -> List[Finding]:
    """``(category, excerpt)`` for each kind of harm the commands in ``text`` do (one each)."""
    ctx = _Context()
    _judge(shell.parse(text), ctx, 0)
    return ctx.found


def _judge(script, ctx: _Context, depth: int) -> None:
    for pipe in script:
        taint: Set[str] = set()
        net = any(prog_name(w) in NET_READERS for c in pipe for w in c.words[:1])
        for k, cmd in enumerate(pipe):
            _nested(cmd, ctx, depth)
            stdin = taint | _fed(cmd, ctx)
            assignments(cmd.assigns, cmd.words, ctx)
            if any(_CA_KEY.search(n.lower()) and ctx.downloaded(v) for n, v in cmd.assigns):
                ctx.flag("safety_bypass", [f"{n}={v}" for n, v in cmd.assigns])
            if cmd.assigns and not cmd.words:  # C=curl; $C … | sh
                ctx.variables.update((n.lower(), str(v)) for n, v in cmd.assigns)
            words = _expanded(cmd.words, ctx.variables) if ctx.variables else cmd.words
            for start in _starts(words):
                _command(cmd, words[start:], stdin, ctx, net and k > 0, k == len(pipe) - 1)
            out = ctx.produces(cmd, words)
            _writes(cmd, out | taint, ctx)
            taint |= out


def _nested(cmd: Command, ctx: _Context, depth: int) -> None:
    """Scripts inside the command: ``$(…)``, ``( … )``, and quoted text a program may run."""
    if depth >= shell.MAX_DEPTH:
        return
    if cmd.group is not None:
        _judge(cmd.group, ctx, depth + 1)
    for w in [*cmd.words, *(t for _, t in cmd.redirs), *(v for _, v in cmd.assigns)]:
        for sub in getattr(w, "subs", ()):
            _judge(sub, ctx, depth + 1)
        for text in getattr(w, "texts", ()):
            _judge(shell.parse(text, depth + 1), ctx, depth + 1)


def _command(cmd: Command, words: List[Word], stdin: Set[str], ctx: _Context,
             net_pipe: bool, last: bool) -> None:
    """Judge one candidate command (``words`` from its program on); ``last``: its output goes
    to no other program (reading a download then counts as checking it)."""
    fed = any(prog_name(w) == "xargs" for w in words[:len(words) - len(unwrap(words))])
    words = unwrap(words)
    if not words:
        return
    prog, args = prog_name(words[0]), words[1:]
    shown = words[:8]
    options(prog, args, ctx, shown)
    if prog in INTERPRETERS:
        _interpreter(cmd, prog, args, stdin, ctx, shown, net_pipe, fed)
    elif ctx.downloaded(words[0]) and ("/" in words[0] or words[0].startswith(".")):
        ctx.flag("remote_exec", shown)  # ./install.sh, downloaded and not read
    if prog in SENDERS:
        _sender(prog, args, stdin, ctx, shown)
    if prog in DOWNLOADERS:
        for path in downloads_to(prog, args):
            ctx.downloads[_norm_path(path)] = False
    if prog in VIEWERS and last and not stdin:
        for a in args:
            if not a.startswith("-"):
                ctx.verify(a)
        if prog.startswith(("sha", "md5", "b2")) and ("-c" in args or "--check" in args):
            for d in ctx.downloads:
                ctx.downloads[d] = True
    for handler in (HANDLERS.get(prog), platforms.HANDLERS.get(prog)):
        if handler:
            handler(prog, args, ctx, shown)
    if prog not in INTERPRETERS and prog not in DATA_READERS and any(
            a.startswith("<(") and "remote" in _sub_taint(a, ctx) for a in args):
        ctx.flag("remote_exec", shown)  # gradle -I <(curl …): a program runs a download
    for target in platforms.applied(prog, args):
        if platforms.foreign_url(target) or ctx.downloaded(target) or (
                target == "-" and "remote" in stdin):
            ctx.flag("remote_exec", shown)  # kubectl apply -f https://<host>/…: a cluster runs it
    if _CA_KEY.search(" ".join(words).lower()) and any(
            ctx.downloaded(v) for a in args for v in (a, a.partition("=")[2]) if v):
        ctx.flag("safety_bypass", shown)  # a certificate from the network trusted for TLS
    if prog in ("nslookup", "dig", "host", "ping", "drill") and any(
            _sub_taint(a, ctx) or getattr(a, "subs", ()) or SECRET_VAR.search(a.lower())
            for a in args):
        ctx.flag("exfiltration", shown)


def _interpreter(cmd: Command, prog: str, args: List[Word], stdin: Set[str], ctx: _Context,
                 shown, net_pipe: bool, fed: bool = False) -> None:
    """Where the interpreter's code comes from, and whether that is remote or decoded."""
    family = "sh" if prog in SHELLS else prog
    code: Set[str] = set()
    reads_stdin = prog not in ("source", ".", "eval")
    if prog in ("eval", "iex", "invoke-expression"):
        for a in args:
            code |= _sub_taint(a, ctx)
        if prog == "eval":
            reads_stdin = False
    elif prog in ("source", "."):
        script = next((a for a in args if not a.startswith("-")), None)
        if script is not None:
            code |= _sub_taint(script, ctx)
            if ctx.downloaded(script) or "://" in script:
                code.add("remote")
            if script in ("/dev/stdin", "/proc/self/fd/0", "-"):
                code |= stdin
    else:
        code_opts, data_opts = CODE_OPTS.get(family, ""), DATA_OPTS.get(family, "")
        k = 0
        while k < len(args):
            a = args[k]
            low = a.lower()
            if low in ("-", "-s", "/dev/stdin", "--"):
                break
            if prog in ("pwsh", "powershell") and (low in ("-e", "-ec") or (
                    len(low) > 2 and "-encodedcommand".startswith(low))):
                ctx.flag("encoded_exec", shown)
                return
            if prog in ("pwsh", "powershell") and low in ("-command", "-c", "-file", "-f"):
                if k + 1 < len(args):
                    code |= _sub_taint(args[k + 1], ctx)
                    if "://" in args[k + 1] or ctx.downloaded(args[k + 1]):
                        code.add("remote")
                reads_stdin = args[k + 1:k + 2] == ["-"]
                break
            if a[:1] == "-" and a[1:2] and a[1] in ARG_OPTS.get(family, ""):
                k += 1 if len(a) > 2 else 2  # the option's own argument, not code
                continue
            if low.startswith("-") and not low.startswith("--") and len(low) > 1:
                letters = low[1:]
                hit = next((ch for ch in letters if ch in code_opts or ch in data_opts), None)
                if hit:
                    value = args[k + 1] if k + 1 < len(args) and letters.endswith(hit) else ""
                    if hit in code_opts:
                        code |= _sub_taint(value, ctx) if value else set()
                    reads_stdin = False
                    break
                k += 1
                continue
            if low in ("--eval", "--print", "--command"):
                code |= _sub_taint(args[k + 1], ctx) if k + 1 < len(args) else set()
                reads_stdin = False
                break
            if low.startswith("--"):
                k += 1
                continue
            if prog in ("deno", "bun") and low in ("run", "x", "eval"):
                k += 1
                continue
            code |= _sub_taint(a, ctx)  # <(curl …), a script path
            if ctx.downloaded(a) or "://" in a:
                code.add("remote")
            if low.startswith("<(") or ctx.downloaded(a) or "://" in a or _script_like(a):
                reads_stdin = False
            break
    if reads_stdin or fed:  # fed: xargs hands what it reads to the code as arguments
        code |= stdin
        if net_pipe:
            code.add("remote")
    if "remote" in code:
        ctx.flag("remote_exec", shown)
    if "decoded" in code:
        ctx.flag("encoded_exec", shown)


def _script_like(word: str) -> bool:
    """A word naming a script file (``manage.py``, ``./run``, ``scripts/x``), not prose."""
    return "/" in word or bool(re.search(r"\.[a-z0-9]{1,5}$", word.lower()))


def _sender(prog: str, args: List[Word], stdin: Set[str], ctx: _Context, shown) -> None:
    """Credential files, secrets or the environment sent to another host; a platform's
    token sent anywhere but to that platform."""
    if "secret" in stdin:
        ctx.flag("exfiltration", shown)
        return
    tokens = {t[6:] for t in stdin.union(*(_sub_taint(a, ctx) for a in args))
              if t.startswith("token:")}
    if any(p != prog and platforms.sent_elsewhere(p, platforms.hosts_of(args)) for p in tokens):
        ctx.flag("exfiltration", shown)
    sent: List[str] = []
    if prog == "curl":
        o = Opts(args, CURL_SHORT, CURL_LONG)
        sent += o.value("T", "--upload-file")
        for v in o.value("F", "--form"):
            sent += [part[1:] for part in re.findall(r"[@<][^;,\s]+", v)]
        data = o.value("d", "--data", "--data-binary", "--data-ascii", "--data-urlencode",
                       "--json")
        sent += [v.split("@", 1)[1] for v in data if "@" in v]
        loud = data + o.value("F", "--form") + [u for u in o.pos if "?" in u or "://" in u]
        if any(SECRET_VAR.search(v.lower()) and "?" in v or v in data and SECRET_VAR.search(
                v.lower()) for v in loud):
            ctx.flag("exfiltration", shown)
    elif prog == "wget":
        o = Opts(args, WGET_SHORT, WGET_LONG)
        sent += o.value("", "--post-file", "--body-file")
        if any(SECRET_VAR.search(v) for v in o.value("", "--post-data", "--body-data")):
            ctx.flag("exfiltration", shown)
    elif prog in ("http", "https", "xh"):
        sent += [a.split("@", 1)[1] for a in args if "@" in a and "://" not in a]
    elif prog in ("scp", "rsync", "sftp"):
        o = Opts(args, "cFiJlopPSDXeBTfM" if prog != "rsync" else "efBTM",
                 {"--rsh", "--exclude", "--include", "--filter", "--files-from",
                  "--password-file", "--rsync-path", "--port", "--log-file", "--chmod"})
        if len(o.pos) >= 2 and _remote_dest(o.pos[-1]):
            sent += o.pos[:-1]
    elif prog in ("aws", "gsutil", "gcloud", "azcopy", "az", "rclone", "s3cmd", "mc"):
        pos = [a for a in args if not a.startswith("-")]
        if len(pos) >= 2 and _remote_dest(pos[-1]):
            sent += pos[:-1]
        sent += [args[k + 1] for k, a in enumerate(args[:-1])  # az … --file, aws … --body
                 if a.lower() in ("--file", "--body", "--source", "-f", "--upload-file")]
    elif prog == "gh":
        pos = [a for a in args if not a.startswith("-")]
        if pos[:2] in (["gist", "create"], ["release", "upload"], ["gist", "edit"]):
            sent += pos[2:]
    elif prog in ("mail", "mailx", "mutt"):
        o = Opts(args, "aAsbcr")
        sent += o.value("a") + o.value("A")
    for a in args:
        if "secret" in _sub_taint(a, ctx) and prog not in ("ssh",):
            ctx.flag("exfiltration", shown)
    if any(credential(p) or _norm_path(p) in ctx.secret_files for p in sent):
        ctx.flag("exfiltration", shown)


def _remote_dest(word: str) -> bool:
    low = word.lower()
    return bool(re.match(r"(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]+:|[\w-]+(?:\.[\w-]+)+:|"
                         r"[\w-]+:(?!\\))", low)) and not re.match(r"[a-z]:[\\/]", low)


def _writes(cmd: Command, content: Set[str], ctx: _Context) -> None:
    """Files written: downloads saved by redirection or ``tee``, config files that move a
    package index, sudoers, block devices, network sockets."""
    targets = [t for op, t in cmd.redirs if op in (">", ">>", ">|", "&>", "&>>", ">&")]
    words = unwrap(cmd.words)
    prog = prog_name(words[0]) if words else ""
    if prog == "tee":
        targets += [a for a in words[1:] if not a.startswith("-")]
    if prog in ("cp", "mv", "install") and len(words) > 2:
        targets.append(words[-1])
    text = " ".join([*words, *(t for op, t in cmd.redirs if op in ("<<", "<<-", "<<<"))])
    if prog in ("tar", "zip", "7z", "gpg", "cp", "openssl", "base64", "gzip", "xz") and any(
            credential(a) for a in words[1:] if not a.startswith("-")):
        targets += [a for a in words[1:] if not a.startswith("-") and not credential(a)]
        content = content | {"secret"}
    for t in targets:
        low = t.lower()
        if "remote" in content:
            ctx.downloads[_norm_path(low)] = False
        if "secret" in content:
            ctx.secret_files.add(_norm_path(low))
        if low.startswith(("/dev/tcp/", "/dev/udp/")):
            ctx.flag("remote_exec", [*words[:6], ">", t])
        elif re.match(r"/dev/(?:sd|hd|nvme|disk|rdisk|mmcblk|xvd|vd)", low):
            ctx.flag("destructive", [*words[:6], ">", t])
        elif low.startswith("/etc/sudoers"):
            ctx.flag("safety_bypass", [*words[:6], ">", t])
        elif low.endswith(SOURCE_FILES) or "/sources.list.d/" in low:
            if new_host(text.lower()) and any(k in text.lower() for k in (
                    "registry", "index", "trusted", "deb ", "mirror", "replace-with", "channel",
                    "source", "url")):
                ctx.flag("package_source", [*words[:6], ">", t])
    if "nopasswd" in text.lower():
        ctx.flag("safety_bypass", words[:8])
    if targets and settings_off(text):  # {"insecure-registries": [...]} > daemon.json
        ctx.flag("safety_bypass", [*words[:6], ">", targets[0]])
