"""What a lesson's shell commands do, judged on their structure (``shell.parse``), not spelling.

Owns the command side of the safety screen: a step that runs remote or decoded content
(piped, redirected, here-string, ``-c "$(…)"``, process substitution, or a file downloaded
earlier and run before anyone read or checked it), sends credential or key files or the
environment elsewhere, destroys what is outside the work tree or on a shared remote, disables a
safety check (hooks, TLS verification, an agent's approvals) or points a package index,
registry or git remote at another host. ``findings(text)`` returns ``(category, excerpt)``
pairs; ``screen`` words them. Wrappers (``sudo``, ``env``, ``xargs``, ``timeout``…) are seen
through, and prose before a command is skipped (every word naming a known program starts a
candidate command). Imports only ``shell`` beside it; must not import any stage above storage.
"""

import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from . import shell
from .shell import Command, Word

Finding = Tuple[str, str]  # (category, excerpt)

# --- programs, by what they do ------------------------------------------------------------------
SHELLS = {"sh", "bash", "zsh", "ksh", "dash", "fish", "csh", "tcsh", "ash", "mksh", "yash"}
INTERPRETERS = SHELLS | {"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
                         "pwsh", "powershell", "lua", "luajit", "rscript", "tclsh", "osascript",
                         "groovy", "jshell", "iex", "invoke-expression", "source", ".", "eval"}
# options whose argument is the code itself, per interpreter family
CODE_OPTS = {"sh": "c", "python": "c", "pypy": "c", "node": "ep", "nodejs": "ep", "deno": "",
             "bun": "e", "perl": "eE", "ruby": "e", "php": "rR", "lua": "e", "luajit": "e",
             "rscript": "e", "osascript": "e", "pwsh": "c", "powershell": "c"}
DATA_OPTS = {"python": "m", "pypy": "m"}  # a module runs; standard input is its data
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "iwr", "irm",
               "invoke-webrequest", "invoke-restmethod", "lwp-download", "lwp-request", "axel"}
NET_READERS = {"nc", "ncat", "netcat", "socat", "telnet", "dig", "nslookup", "host", "drill"}
SENDERS = DOWNLOADERS | {"nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "tftp",
                         "lftp", "rsync", "mail", "mailx", "sendmail", "mutt", "ssh", "aws",
                         "gsutil", "gcloud", "azcopy", "az", "rclone", "s3cmd", "mc", "gh"}
READERS = {"cat", "head", "tail", "less", "more", "tac", "base64", "xxd", "od", "hexdump", "tar",
           "zip", "gzip", "bzip2", "xz", "zstd", "gpg", "openssl", "strings", "jq", "yq", "sed",
           "awk", "grep", "cut", "sort", "uniq", "tr", "dd", "type", "get-content", "gc", "7z",
           "echo", "printf", "sqlite3"}
IDENTITY = {"env", "printenv", "whoami", "hostname", "id", "uname"}
VIEWERS = {"less", "more", "cat", "head", "view", "vi", "vim", "nano", "bat", "code", "sha256sum",
           "sha512sum", "shasum", "sha1sum", "md5sum", "b2sum", "gpg", "gpgv", "cosign",
           "minisign", "openssl", "sigstore"}
WRAPPERS = {"sudo": "ughpCDRTU", "doas": "uC", "nohup": "", "time": "", "command": "",
            "builtin": "", "exec": "a", "nice": "n", "ionice": "cnp", "stdbuf": "ioe",
            "chrt": "", "taskset": "", "caffeinate": "", "unbuffer": "", "setsid": "",
            "flock": "", "runuser": "ug", "busybox": "", "xargs": "aEedIiLnPs", "env": "uCS",
            "timeout": "sk", "watch": "nd", "then": "", "do": "", "else": "", "if": "",
            "while": "", "until": "", "!": "", "{": "", "winpty": ""}
GIT_OPTS_WITH_ARG = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                     "--config-env"}
AGENTS = {"claude", "codex", "gemini", "copilot", "cursor-agent", "aider", "amp", "q", "goose",
          "opencode", "qwen", "crush", "kiro", "cline", "auggie", "droid"}
DEFAULT_HOSTS = {"pypi.org", "files.pythonhosted.org", "pypi.python.org", "registry.npmjs.org",
                 "registry.yarnpkg.com", "proxy.golang.org", "sum.golang.org", "rubygems.org",
                 "index.crates.io", "crates.io", "registry.npmjs.com"}
DEFAULT_BRANCHES = {"main", "master", "trunk", "develop", "development", "production", "prod",
                    "release", "stable", "default", "head", "gh-pages"}
# environment variables: (value test, category); the value lower-cased
FALSY = {"0", "false", "no", "off", "n", ""}
ENV_RULES = {
    "husky": ("falsy", "safety_bypass"), "husky_skip_hooks": ("truthy", "safety_bypass"),
    "lefthook": ("falsy", "safety_bypass"), "overcommit_disable": ("truthy", "safety_bypass"),
    "node_tls_reject_unauthorized": ("falsy", "safety_bypass"),
    "git_ssl_no_verify": ("truthy", "safety_bypass"), "pythonhttpsverify": ("falsy", "safety_bypass"),
    "curl_ca_bundle": ("empty", "safety_bypass"), "requests_ca_bundle": ("empty", "safety_bypass"),
    "npm_config_strict_ssl": ("falsy", "safety_bypass"),
    "yarn_enable_strict_ssl": ("falsy", "safety_bypass"), "gosumdb": ("off", "safety_bypass"),
    "gonosumdb": ("star", "safety_bypass"), "gonosumcheck": ("truthy", "safety_bypass"),
    "goinsecure": ("any", "safety_bypass"), "goflags": ("insecure", "safety_bypass"),
    "ansible_host_key_checking": ("falsy", "safety_bypass"),
    "pip_trusted_host": ("any", "package_source"),
    "pip_index_url": ("host", "package_source"), "pip_extra_index_url": ("host", "package_source"),
    "pip_find_links": ("host", "package_source"), "uv_index_url": ("host", "package_source"),
    "uv_extra_index_url": ("host", "package_source"), "uv_default_index": ("host", "package_source"),
    "uv_index": ("host", "package_source"), "uv_find_links": ("host", "package_source"),
    "npm_config_registry": ("host", "package_source"), "yarn_registry": ("host", "package_source"),
    "yarn_npm_registry_server": ("host", "package_source"),
    "bun_config_registry": ("host", "package_source"), "goproxy": ("host", "package_source"),
    "pipenv_pypi_mirror": ("host", "package_source"),
}
# long options that turn a check off whatever the program; and those that do with a false value
OFF_OPTIONS = {"--insecure", "--no-check-certificate", "--no-verify-ssl", "--insecure-skip-tls-verify",
               "--skip-tls-verify", "--no-ssl-verify", "--ssl-no-verify", "--allow-unauthenticated",
               "--allow-insecure-repositories", "--nogpgcheck", "--no-gpg-checks", "--nosignature",
               "--disable-gpg-check", "--insecure-registry", "--no-verify", "--proxy-insecure",
               "--doh-insecure", "--skip-certificate-check", "-skipcertificatecheck",
               "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions",
               "--dangerously-bypass-approvals-and-sandbox", "--dangerously-allow-all", "--yolo",
               "--full-auto", "--allow-all-tools", "--allow-all-paths", "--allow-all-urls",
               "--trust-all-tools", "--yes-always"}
OFF_VALUES = {"--tls-verify", "--tlsverify", "--ssl-verify", "--verify-ssl", "--strict-ssl",
              "--verify", "--sslverify", "--check-certificate"}
AGENT_VALUES = {"--permission-mode": {"bypasspermissions"}, "--approval-mode": {"yolo"},
                "--sandbox": {"danger-full-access"}, "-s": {"danger-full-access"},
                "--ask-for-approval": {"never"}, "-a": {"never"}}
INDEX_OPTS = {"--index-url", "--extra-index-url", "--index", "--default-index", "--registry",
              "--find-links", "--source", "--pypi-mirror"}
SHORT_INDEX = {"pip": {"-i", "-f"}, "pip3": {"-i", "-f"}, "uv": {"-i", "-f"}, "pipx": {"-i"},
               "easy_install": {"-i", "-f"}}
CONFIG_OFF = {"strict-ssl", "strict_ssl", "enablestrictssl", "http.sslverify", "sslverify",
              "ssl_verify", "verify_ssl", "ssl-verify"}
REGISTRY_KEYS = ("registry", "npmregistryserver", "index-url", "index_url", "extra-index-url",
                 "trusted-host", "find-links", "remote.", "insteadof", "pypi-url", "pypi.url",
                 "mirror", "channels", "default-index")
SOURCE_FILES = (".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".pypirc", "uv.toml",
                ".condarc", ".gemrc", "bunfig.toml", "pydistutils.cfg", ".cargo/config",
                ".cargo/config.toml", "sources.list")
_SECRET_VAR = re.compile(r"\$\{?[a-z_]*(?:token|secret|key|password|passwd|pass|credential|creds|"
                         r"aws_)[a-z_0-9]*")
_URL_HOST = re.compile(r"(?:https?|git|ssh|ftp|s3|gs)://(?:[^@/\s]*@)?([^/:\s?#]+)")
_KNOWN = None  # every program name that starts a candidate command (built on first use)


def _known() -> Set[str]:
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = (INTERPRETERS | DOWNLOADERS | SENDERS | READERS | IDENTITY | set(WRAPPERS)
                  | NET_READERS | VIEWERS
                  | AGENTS | {"rm", "find", "mkfs", "mke2fs", "wipefs", "dd", "shred", "chmod",
                              "chown", "git", "pip", "pip3", "uv", "pipx", "poetry", "pdm", "npm",
                              "npx", "pnpm", "yarn", "bun", "go", "gem", "bundle", "conda", "cargo",
                              "tee", "setenforce", "ufw", "systemctl", "spctl", "csrutil",
                              "set-executionpolicy", "export", "setx", "declare", "set",
                              "compgen", "mkfifo", "pre-commit", "cursor-agent", "ping", "cp", "mv"})
    return _KNOWN


def mentions(text: str) -> bool:
    """Whether ``text`` names a program the judge knows, as a word (a cheap look before
    parsing text that is rarely shell, such as a rot13 reading)."""
    return bool({t.strip("`'\"(),.:;") for t in text.lower().split()} & _known())


def split_command(text: str) -> bool:
    """Whether a line break in ``text`` may cut a command in two (the line before ends with a
    program, an option, a URL or an operator, or the next starts with one)."""
    known = _known()
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


# --- words ------------------------------------------------------------------------------------------
_NAMES: Dict[str, str] = {}


def prog_name(word: str) -> str:
    """A program's name as judged: its last path part, lower-case, without ``.exe`` or a
    version (``python3.12`` is ``python``), ``mkfs.ext4`` is ``mkfs``."""
    name = _NAMES.get(word)
    if name is None:
        if len(_NAMES) > 50000:
            _NAMES.clear()
        name = _NAMES[word] = _prog_name(word)
    return name


def _prog_name(word: str) -> str:
    name = word.rstrip(".,:;!?").rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    if name.endswith(".exe"):
        name = name[:-4]
    if name.startswith("mkfs"):
        return "mkfs"
    base = name.rstrip("0123456789.-")
    return base if base in INTERPRETERS else name


def _host(text: str) -> Optional[str]:
    m = _URL_HOST.search(text)
    return m.group(1).lower() if m else None


def _new_host(text: str) -> bool:
    """A URL in ``text`` at a host that is not a language's default index."""
    host = _host(text)
    return host is not None and host not in DEFAULT_HOSTS


def _home(path: str) -> Optional[str]:
    """``path`` with ``~``, ``$HOME``, ``${HOME}``, ``${HOME:?}``… written as ``~`` (else None)."""
    path = path.lower()
    m = re.match(r"(?:~|\$home|\$\{home(?:[:?\-=+][^}]*)?\}|/root|/home/[^/]+|/users/[^/]+)"
                 r"(?=/|$)", path)
    return "~" + path[m.end():] if m else None


def credential(path: str) -> bool:
    """A file or folder that holds credentials or private keys (by its shape, wherever it is)."""
    p = path.strip().lstrip("@<").split(";")[0].lower()
    p = _home(p) or p
    parts = [x for x in p.replace("\\", "/").split("/") if x not in ("", ".")]
    if not parts:
        return False
    name = parts[-1]
    dirs = set(parts[:-1])
    if ".ssh" in parts:
        return not name.endswith(".pub") and name not in ("known_hosts", "config",
                                                          "authorized_keys")
    if dirs & {".aws", ".gnupg", ".azure", ".password-store", ".kube"} or \
            name in (".aws", ".gnupg", ".azure", ".password-store"):
        return True
    if name.startswith("id_") and not name.endswith(".pub") and len(name) > 3:
        return True
    if name in (".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".my.cnf",
                ".vault-token", ".boto", ".s3cfg", ".htpasswd", "credentials.json", "shadow",
                ".bash_history", ".zsh_history", "credentials", "credentials.tfrc.json",
                "application_default_credentials.json", "hosts.yml", "secrets.yml",
                "secrets.yaml", "wallet.dat", "login.keychain-db", ".dockercfg"):
        return name not in ("credentials", "hosts.yml") or bool(dirs & {".aws", "gh", ".cargo",
                                                                     ".gem", ".docker"})
    if name == "config.json" and ".docker" in dirs:
        return True
    if name == ".env" or (name.startswith(".env.") and name[5:] not in (
            "example", "sample", "template", "dist", "defaults", "test")):
        return True
    if re.search(r"\.(?:pem|key|ppk|p12|pfx|jks|keystore|kdbx|asc|gpg)$", name):
        return name not in ("cert.pem", "ca.pem", "chain.pem", "fullchain.pem")
    return bool(re.match(r"service[-_]?account.*\.json$", name))


def _sub_taint(word: str, ctx: "_Context") -> Set[str]:
    """What the scripts inside ``word`` print: remote content, decoded data, secrets."""
    out: Set[str] = set()
    for sub in getattr(word, "subs", ()):
        for pipe in sub:
            out |= ctx.pipeline_taint(pipe)
    return out


# --- options ----------------------------------------------------------------------------------------
class Opts:
    """A command's arguments read with its option table: short flags, long options (with the
    values given), option values by short letter, and the other words in order."""
    __slots__ = ("short", "long", "values", "pos")

    def __init__(self, args: List[Word], short_arg: str = "", long_arg: Iterable[str] = ()):
        self.short: Set[str] = set()
        self.long: Dict[str, List[str]] = {}
        self.values: Dict[str, List[Word]] = {}
        self.pos: List[Word] = []
        long_arg = set(long_arg)
        k = 0
        while k < len(args):
            a = args[k]
            k += 1
            if a == "--":
                self.pos += args[k:]
                break
            if a.startswith("--") and len(a) > 2:
                name, eq, value = a.partition("=")
                name = name.lower()
                if not eq and name in long_arg and k < len(args):
                    value, k = args[k], k + 1
                self.long.setdefault(name, []).append(value.lower())
            elif a.startswith("-") and len(a) > 1 and not a[1].isdigit():
                for j, ch in enumerate(a[1:], 1):
                    self.short.add(ch)
                    if ch in short_arg:
                        value = a[j + 1:] or (args[k] if k < len(args) else "")
                        if not a[j + 1:]:
                            k += 1
                        self.values.setdefault(ch, []).append(value)
                        break
            else:
                self.pos.append(a)

    def has(self, short: str = "", *longs: str) -> bool:
        return bool(short and short in self.short) or any(n in self.long for n in longs)

    def value(self, short: str, *longs: str) -> List[str]:
        out = list(self.values.get(short, [])) if short else []
        for n in longs:
            out += self.long.get(n, [])
        return out


# --- judging -----------------------------------------------------------------------------------------
class _Context:
    """What one lesson's commands did so far: files downloaded (and whether read or checked
    since), and the findings."""

    def __init__(self):
        self.downloads: Dict[str, bool] = {}  # path -> verified
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
            out |= self.produces(cmd, out)
        return out

    def produces(self, cmd: Command, stdin: Set[str]) -> Set[str]:
        """What ``cmd`` prints: ``remote`` (downloaded or read from the network), ``decoded``
        (a payload decoded), ``secret`` (credentials or the environment)."""
        out: Set[str] = set()
        if cmd.group is not None:
            for pipe in cmd.group:
                out |= self.pipeline_taint(pipe)
        for start in _starts(cmd.words):
            words = _unwrap(cmd.words[start:])
            if not words:
                if prog_name(cmd.words[start]) == "env":  # ``env`` alone prints the environment
                    out.add("secret")
                continue
            prog, args = prog_name(words[0]), words[1:]
            if prog in DOWNLOADERS and _to_stdout(prog, args):
                out.add("remote")
            elif prog in NET_READERS:
                out.add("remote")
            elif prog == "openssl" and args[:1] == ["s_client"]:
                out.add("remote")
            if _decodes(prog, args):
                out.add("decoded")
            if prog in READERS:
                if any(credential(a) for a in args if not a.startswith("-")):
                    out.add("secret")
                if any(self.downloaded(a) for a in args if not a.startswith("-")):
                    out.add("remote")
                if prog in ("echo", "printf") and any(_SECRET_VAR.search(a) for a in args):
                    out.add("secret")
            if _dumps(prog, args):
                out.add("secret")
            for a in args:
                out |= _sub_taint(a, self)
        for op, target in cmd.redirs:
            if op in ("<", "<<<", "<<", "<<-"):
                out |= _sub_taint(target, self)
                if op == "<" and credential(target):
                    out.add("secret")
                if op == "<" and self.downloaded(target):
                    out.add("remote")
        return out


def _dumps(prog: str, args: List[Word]) -> bool:
    """A command that prints the environment or who and where we are."""
    return prog == "printenv" or (prog in ("whoami", "hostname", "id", "uname") and all(
        a.startswith("-") for a in args)) or \
        (prog == "export" and "-p" in args) or \
        (prog == "declare" and ("-x" in args or "-p" in args)) or \
        (prog == "set" and not args) or (prog == "compgen" and "-v" in args) or \
        (prog in ("get-childitem", "gci", "ls", "dir") and any(a.lower() == "env:" for a in args))


def _norm_path(path: str) -> str:
    p = (_home(path) or path).lower()
    while p.startswith("./"):
        p = p[2:]
    return p


def _starts(words: List[Word]) -> List[int]:
    """Where a command may start: the first word, and every later word naming a known program
    (prose before a command: ``Fix: run curl …``)."""
    known = _known()
    out = [0] if words else []
    for k in range(1, min(len(words), 64)):
        if prog_name(words[k]) in known and words[k - 1] not in ("-c", "-e"):
            out.append(k)
    return out


def _unwrap(words: List[Word]) -> List[Word]:
    """The words from the program a wrapper runs (``sudo -u x env A=1 nice -n 5 cmd``)."""
    k = 0
    while k < len(words):
        name = prog_name(words[k])
        if name not in WRAPPERS:
            break
        with_arg = WRAPPERS[name]
        k += 1
        if name == "timeout":  # its first word that is no option is the duration
            while k < len(words) and words[k].startswith("-"):
                k += 2 if words[k][1:] in with_arg else 1
            k += 1
            continue
        while k < len(words) and (words[k].startswith("-") or (name == "env" and "=" in words[k])):
            k += 2 if len(words[k]) == 2 and words[k][1:] in with_arg else 1
    return words[k:]


def _to_stdout(prog: str, args: List[Word]) -> bool:
    """A download printed rather than saved to a file."""
    if prog == "curl":
        o = Opts(args, "dDeEFHKmoQrTuUwxXyYzAbcCPt", _CURL_LONG)
        return not (o.value("o", "--output") or o.has("O", "--remote-name", "--remote-name-all",
                                                      "--output-dir")) or \
            any(v in ("-", "/dev/stdout") for v in o.value("o", "--output"))
    if prog == "wget":
        o = Opts(args, "OoaPeiUTtwQBlAR", _WGET_LONG)
        return any(v in ("-", "/dev/stdout") for v in o.value("O", "--output-document"))
    if prog in ("iwr", "invoke-webrequest", "irm", "invoke-restmethod"):
        return not any(a.lower().startswith("-o") for a in args)
    return prog in ("http", "https", "xh", "lwp-request")


def _downloads_to(prog: str, args: List[Word]) -> List[str]:
    """The files a download command saves to."""
    urls = [a for a in args if "://" in a]
    base = [u.split("?")[0].rstrip("/").rsplit("/", 1)[-1] for u in urls]
    if prog == "curl":
        o = Opts(args, "dDeEFHKmoQrTuUwxXyYzAbcCPt", _CURL_LONG)
        return [v for v in o.value("o", "--output") if v != "-"] + (
            base if o.has("O", "--remote-name", "--remote-name-all") else [])
    if prog == "wget":
        o = Opts(args, "OoaPeiUTtwQBlAR", _WGET_LONG)
        named = [v for v in o.value("O", "--output-document") if v not in ("-", "/dev/stdout")]
        return named or ([] if o.value("O", "--output-document") else base)
    if prog in ("iwr", "invoke-webrequest", "irm", "invoke-restmethod"):
        return [args[k + 1] for k, a in enumerate(args[:-1]) if a.lower().startswith("-o")]
    if prog in ("aria2c", "fetch", "axel", "lwp-download"):
        o = Opts(args, "od", ("--out",))
        return o.value("o", "--out") or base
    return []


_CURL_LONG = {"--output", "--data", "--data-binary", "--data-raw", "--data-ascii",
              "--data-urlencode", "--form", "--form-string", "--upload-file", "--header", "--user",
              "--request", "--url", "--json", "--proxy", "--cert", "--key", "--cacert", "--config",
              "--cookie", "--cookie-jar", "--user-agent", "--referer", "--max-time", "--retry",
              "--connect-timeout", "--output-dir", "--write-out", "--range", "--continue-at",
              "--dump-header", "--proto", "--resolve", "--connect-to", "--oauth2-bearer"}
_WGET_LONG = {"--output-document", "--output-file", "--directory-prefix", "--post-data",
              "--post-file", "--body-data", "--body-file", "--header", "--user", "--password",
              "--user-agent", "--method"}


def _decodes(prog: str, args: List[Word]) -> bool:
    """A command that turns an encoded payload back into text."""
    flags = {a for a in args if a.startswith("-")}
    if prog == "base64" or prog == "b64":
        return bool(flags & {"-d", "--decode", "-D", "-di", "-id"}) or any(
            a.startswith("-") and not a.startswith("--") and "d" in a for a in flags)
    if prog == "xxd":
        return any(a.startswith("-") and "r" in a for a in flags)
    if prog == "openssl":
        return bool(args) and args[0] in ("enc", "base64") and "-d" in flags
    if prog in ("uudecode", "gunzip", "zcat", "bzcat", "xzcat", "zstdcat", "rev"):
        return True
    if prog in ("gzip", "bzip2", "xz", "zstd"):
        return bool(flags & {"-d", "--decompress", "-dc", "-cd"})
    if prog == "tr":
        return len([a for a in args if not a.startswith("-")]) == 2 and not flags
    if prog in ("printf", "echo"):
        text = " ".join(args)
        return len(re.findall(r"\\(?:x[0-9a-f]{2}|[0-7]{3})", text)) >= 4
    return False


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
            stdin = set(taint)
            for op, target in cmd.redirs:
                if op in ("<<<", "<<", "<<-"):
                    stdin |= _sub_taint(target, ctx)
                elif op == "<":
                    if ctx.downloaded(target):
                        stdin.add("remote")
                    if credential(target):
                        stdin.add("secret")
            _assignments(cmd.assigns, cmd.words, ctx)
            for start in _starts(cmd.words):
                _command(cmd, cmd.words[start:], stdin, ctx, net and k > 0,
                         k == len(pipe) - 1)
            out = ctx.produces(cmd, taint)
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


def _assignments(assigns, words: List[Word], ctx: _Context) -> None:
    """``NAME=value`` before a command, after ``export``/``env``/``setx``, in YAML or as
    PowerShell ``$env:NAME = value``: the variables that turn checks off or move indexes."""
    pairs = [(n.lower(), v) for n, v in assigns]
    for k, w in enumerate(words):
        low = w.lower()
        if "=" in w and re.match(r"[a-z_][a-z0-9_]*=", low):
            name, _, value = low.partition("=")
            pairs.append((name, value))
        elif low.startswith("$env:") and k + 2 < len(words) + 1:
            rest = words[k + 1:k + 3]
            if rest[:1] == ["="] and len(rest) == 2:
                pairs.append((low[5:], rest[1].lower()))
        elif low.endswith(":") and low[:-1] in ENV_RULES and k + 1 < len(words):
            pairs.append((low[:-1], words[k + 1].lower()))
        elif prog_name(w) == "setx" and k + 2 < len(words):
            pairs.append((words[k + 1].lower(), words[k + 2].lower()))
    program = prog_name(words[0]) if words else ""
    for name, value in pairs:
        value = value.strip("\"'")
        rule = ENV_RULES.get(name)
        if name == "skip" and value and program in ("git", "pre-commit", "export"):
            ctx.flag("safety_bypass", [f"{name}={value}"])
        if not rule:
            continue
        test, category = rule
        hit = {"falsy": value in FALSY, "truthy": value not in FALSY, "empty": value == "",
               "off": value == "off", "star": "*" in value, "any": bool(value),
               "insecure": "-insecure" in value, "host": _new_host(value) or (
                   name == "goproxy" and value not in ("", "direct", "off") and not any(
                       h in value for h in DEFAULT_HOSTS) and "://" not in value and "." in value)
               }[test]
        if hit:
            ctx.flag(category, [f"{name}={value}"])


def _command(cmd: Command, words: List[Word], stdin: Set[str], ctx: _Context,
             net_pipe: bool, last: bool) -> None:
    """Judge one candidate command (``words`` from its program on); ``last``: its output goes
    to no other program (reading a download then counts as checking it)."""
    words = _unwrap(words)
    if not words:
        return
    prog, args = prog_name(words[0]), words[1:]
    shown = words[:8]
    _options(prog, args, ctx, shown)
    if prog in INTERPRETERS:
        _interpreter(cmd, prog, args, stdin, ctx, shown, net_pipe)
    elif ctx.downloaded(words[0]) and ("/" in words[0] or words[0].startswith(".")):
        ctx.flag("remote_exec", shown)  # ./install.sh, downloaded and not read
    if prog in SENDERS:
        _sender(prog, args, stdin, ctx, shown)
    if prog in DOWNLOADERS:
        for path in _downloads_to(prog, args):
            ctx.downloads[_norm_path(path)] = False
    if prog in VIEWERS and last and not stdin:
        for a in args:
            if not a.startswith("-"):
                ctx.verify(a)
        if prog.startswith(("sha", "md5", "b2")) and ("-c" in args or "--check" in args):
            for d in ctx.downloads:
                ctx.downloads[d] = True
    handler = _HANDLERS.get(prog)
    if handler:
        handler(prog, args, ctx, shown)
    if prog in ("nslookup", "dig", "host", "ping", "drill") and any(
            _sub_taint(a, ctx) or getattr(a, "subs", ()) or _SECRET_VAR.search(a.lower())
            for a in args):
        ctx.flag("exfiltration", shown)


def _options(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    """Options that turn a check off in any program: TLS verification, hooks, approvals."""
    for k, a in enumerate(args):
        low = a.lower()
        name, eq, value = low.partition("=")
        if name in OFF_OPTIONS or name.startswith("--dangerously"):
            if name == "--no-verify" and prog not in ("git", "cargo", "npm", "yarn", "pnpm",
                                                      "husky", "gh"):
                continue
            ctx.flag("safety_bypass", shown)
        elif name in OFF_VALUES:
            value = value if eq else (args[k + 1].lower() if k + 1 < len(args) else "")
            if value in FALSY - {""}:
                ctx.flag("safety_bypass", shown)
        elif name in AGENT_VALUES and (prog in AGENTS or name.startswith("--")):
            value = value if eq else (args[k + 1].lower() if k + 1 < len(args) else "")
            if value in AGENT_VALUES[name]:
                ctx.flag("safety_bypass", shown)
        elif name == "-executionpolicy" and k + 1 < len(args) and args[k + 1].lower() in (
                "bypass", "unrestricted"):
            ctx.flag("safety_bypass", shown)


def _interpreter(cmd: Command, prog: str, args: List[Word], stdin: Set[str], ctx: _Context,
                 shown, net_pipe: bool) -> None:
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
            if low.startswith("-") and not low.startswith("--") and len(low) > 1:
                letters = low[1:]
                hit = next((ch for ch in letters if ch in code_opts or ch in data_opts), None)
                if hit:
                    value = args[k + 1] if k + 1 < len(args) and letters.endswith(hit) else ""
                    if hit in code_opts:
                        code |= _sub_taint(value, ctx) if value else set()
                    reads_stdin = False
                    break
                k += 2 if letters in ("w", "x") and family in ("python", "pypy") else 1
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
    if reads_stdin:
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
    """Credential files, secrets or the environment sent to another host."""
    if "secret" in stdin:
        ctx.flag("exfiltration", shown)
        return
    sent: List[str] = []
    if prog == "curl":
        o = Opts(args, "dDeEFHKmoQrTuUwxXyYzAbcCPt", _CURL_LONG)
        sent += o.value("T", "--upload-file")
        for v in o.value("F", "--form"):
            sent += [part[1:] for part in re.findall(r"[@<][^;,\s]+", v)]
        data = o.value("d", "--data", "--data-binary", "--data-ascii", "--data-urlencode",
                       "--json")
        sent += [v.split("@", 1)[1] for v in data if "@" in v]
        loud = data + o.value("F", "--form") + [u for u in o.pos if "?" in u or "://" in u]
        if any(_SECRET_VAR.search(v.lower()) and "?" in v or v in data and _SECRET_VAR.search(
                v.lower()) for v in loud):
            ctx.flag("exfiltration", shown)
    elif prog == "wget":
        o = Opts(args, "OoaPeiUTtwQBlAR", _WGET_LONG)
        sent += o.value("", "--post-file", "--body-file")
        if any(_SECRET_VAR.search(v) for v in o.value("", "--post-data", "--body-data")):
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
    if any(credential(p) for p in sent):
        ctx.flag("exfiltration", shown)


def _remote_dest(word: str) -> bool:
    low = word.lower()
    return bool(re.match(r"(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]+:|[\w-]+(?:\.[\w-]+)+:|"
                         r"[\w-]+:(?!\\))", low)) and not re.match(r"[a-z]:[\\/]", low)


def _writes(cmd: Command, content: Set[str], ctx: _Context) -> None:
    """Files written: downloads saved by redirection or ``tee``, config files that move a
    package index, sudoers, block devices, network sockets."""
    targets = [t for op, t in cmd.redirs if op in (">", ">>", ">|", "&>", "&>>", ">&")]
    words = _unwrap(cmd.words)
    prog = prog_name(words[0]) if words else ""
    if prog == "tee":
        targets += [a for a in words[1:] if not a.startswith("-")]
    if prog in ("cp", "mv", "install") and len(words) > 2:
        targets.append(words[-1])
    text = " ".join([*words, *(t for op, t in cmd.redirs if op in ("<<", "<<-", "<<<"))])
    for t in targets:
        low = t.lower()
        if "remote" in content:
            ctx.downloads[_norm_path(low)] = False
        if low.startswith(("/dev/tcp/", "/dev/udp/")):
            ctx.flag("remote_exec", [*words[:6], ">", t])
        elif re.match(r"/dev/(?:sd|hd|nvme|disk|rdisk|mmcblk|xvd|vd)", low):
            ctx.flag("destructive", [*words[:6], ">", t])
        elif low.startswith("/etc/sudoers"):
            ctx.flag("safety_bypass", [*words[:6], ">", t])
        elif low.endswith(SOURCE_FILES) or "/sources.list.d/" in low:
            if _new_host(text.lower()) and any(k in text.lower() for k in (
                    "registry", "index", "trusted", "deb ", "mirror", "replace-with", "channel",
                    "source", "url")):
                ctx.flag("package_source", [*words[:6], ">", t])
    if "nopasswd" in text.lower():
        ctx.flag("safety_bypass", words[:8])


# --- per program ----------------------------------------------------------------------------------
def _rm(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    o = Opts(args)
    if not (o.has("r", "--recursive") or o.has("R")):
        return
    if "--no-preserve-root" in o.long or any(_dangerous(p) for p in o.pos):
        ctx.flag("destructive", shown)


def _dangerous(path: str) -> bool:
    """A recursive delete's target outside the work tree: the root or a folder near it, the
    home folder or one just below it (caches excepted), a parent folder, everything here."""
    p = path.strip().lower().rstrip(".,;")
    if not p:
        return False
    home = _home(p)
    if home is not None:
        rest = [x for x in home[1:].split("/") if x]
        return len(rest) <= 1 and rest[:1] != [".cache"] or rest[:1] == ["*"]
    if p.startswith("~"):
        return True
    if p.startswith("/"):
        parts = [x for x in p.split("/") if x]
        if parts[:1] == ["tmp"] or parts[:2] == ["var", "tmp"]:
            return len(parts) < 2 or parts[:2] == ["var", "tmp"] and len(parts) < 3 or "*" in p \
                and len(parts) < 3
        return len(parts) <= 3 or ".." in parts
    parts = [x for x in p.split("/") if x and x != "."]
    return p in (".", "./", "*", ".*", "./*", "*/", "./.*") or (parts[:1] == [".."]) or \
        parts == ["*"]


def _find(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    roots = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        roots.append(a)
    low = [a.lower() for a in args]
    deletes = "-delete" in low or any(
        x in ("-exec", "-execdir") and k + 1 < len(low) and prog_name(low[k + 1]) in (
            "rm", "shred") for k, x in enumerate(low))
    if deletes and any(_dangerous(r) or r in ("/", "~") for r in roots):
        ctx.flag("destructive", shown)


def _disk(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    if prog == "dd":
        if any(re.match(r"of=/dev/(?:sd|hd|nvme|disk|rdisk|mmcblk|xvd|vd)", a.lower())
               for a in args):
            ctx.flag("destructive", shown)
    elif prog == "mkfs" or any(a.startswith("/dev/") for a in args):
        ctx.flag("destructive", shown)


def _chmod(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    modes = [a.lower() for a in args if not a.startswith("-") or re.match(r"-[rwxst]+$", a)]
    for m in modes[:1]:
        if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", m) or re.fullmatch(
                r"(?:[ugo]*[oa][ugoa]*|a)[+=][rwxxst]*w[rwxst]*", m):
            ctx.flag("destructive", shown)
        if re.fullmatch(r"[ugoa]*\+[rwx]*s[rwx]*|[2467][0-7]{3}", m):
            ctx.flag("safety_bypass", shown)
    if prog == "chown" and ("-r" in [a.lower() for a in args]) and any(
            a in ("/", "/*") for a in args):
        ctx.flag("destructive", shown)


def _git(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    k, configs = 0, []
    while k < len(args) and args[k].startswith("-"):
        a = args[k]
        if a in GIT_OPTS_WITH_ARG and k + 1 < len(args):
            if a == "-c":
                configs.append(args[k + 1].lower())
            k += 2
        else:
            if a.startswith("-c") and len(a) > 2 and "=" in a:
                configs.append(a[2:].lower())
            k += 1
    for c in configs:
        key, _, value = c.partition("=")
        if key == "core.hookspath" or (key.endswith("sslverify") and value in FALSY):
            ctx.flag("safety_bypass", shown)
        if key.startswith("remote.") and key.endswith("url") or key.endswith("insteadof"):
            ctx.flag("package_source", shown)
    if k >= len(args):
        return
    sub, rest = args[k].lower(), args[k + 1:]
    if sub == "commit":
        o = Opts(rest, "mFCctS", {"--message", "--file", "--author", "--date", "--reuse-message",
                                  "--reedit-message", "--fixup", "--squash", "--template",
                                  "--cleanup", "--trailer"})
        if o.has("n", "--no-verify"):
            ctx.flag("safety_bypass", shown)
    elif sub in ("merge", "rebase", "am", "cherry-pick", "revert", "pull") and \
            "--no-verify" in [r.lower() for r in rest]:
        ctx.flag("safety_bypass", shown)
    elif sub == "push":
        _push(rest, ctx, shown)
    elif sub == "remote" and rest[:1] and rest[0].lower() in ("add", "set-url"):
        ctx.flag("package_source", shown)
    elif sub == "config":
        pos = [r.lower() for r in rest if not r.startswith("-")]
        if len(pos) >= 2:
            key, value = pos[0], pos[1]
            if (key == "core.hookspath" and (value in FALSY or value.startswith(("/dev/", "/tmp"))))\
                    or (key.endswith("sslverify") and value in FALSY):
                ctx.flag("safety_bypass", shown)
            if key.startswith("remote.") and key.endswith("url") or key.endswith("insteadof"):
                ctx.flag("package_source", shown)


def _push(rest: List[Word], ctx: _Context, shown) -> None:
    o = Opts(rest, "o", {"--repo", "--receive-pack", "--exec", "--push-option"})
    if o.has("", "--no-verify"):
        ctx.flag("safety_bypass", shown)
    refs = o.pos[1:]
    forced = o.has("f", "--force", "--mirror") or any(r.startswith("+") for r in refs)
    lease = any(n.startswith(("--force-with-lease", "--force-if-includes")) for n in o.long)
    deleted = o.has("d", "--delete", "--prune") or any(r.startswith(":") for r in refs)

    def branch(ref: str) -> str:
        dst = ref.lstrip("+").rsplit(":", 1)[-1]
        return dst.lower().replace("refs/heads/", "")

    to_default = any(branch(r) in DEFAULT_BRANCHES for r in refs) or o.has("", "--all", "--mirror")
    if forced or deleted or (lease and to_default):
        ctx.flag("destructive", shown)


def _packages(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    """pip, uv, pipx, poetry, npm, yarn, pnpm, bun, gem, conda, cargo, go: another index."""
    low = [a.lower() for a in args]
    if prog in ("python", "pypy"):
        if low[:2] != ["-m", "pip"]:
            return
        prog, low = "pip", low[2:]
    for k, a in enumerate(low):
        name, eq, value = a.partition("=")
        value = value if eq else (low[k + 1] if k + 1 < len(low) else "")
        if name in INDEX_OPTS or name in SHORT_INDEX.get(prog, ()) or (
                prog == "conda" and name in ("-c", "--channel")):
            if _new_host(value):
                ctx.flag("package_source", shown)
        elif name == "--trusted-host":
            ctx.flag("package_source", shown)
    pos = [a for a in low if not a.startswith("-")]
    if pos[:1] in (["config"], ["set"]):
        rest = [p for p in pos[1:] if p not in ("set", "add", "global")]
        key = rest[0] if rest else ""
        if any(r in key for r in REGISTRY_KEYS) and (
                _new_host(" ".join(rest[1:])) or "trusted" in key):
            ctx.flag("package_source", shown)
        if (key in CONFIG_OFF or key.rsplit(".", 1)[-1] in CONFIG_OFF) and rest[1:2] and \
                rest[1] in FALSY:
            ctx.flag("safety_bypass", shown)
    if prog == "poetry" and pos[:2] == ["source", "add"] and _new_host(" ".join(pos)):
        ctx.flag("package_source", shown)
    if prog == "gem" and pos[:1] == ["sources"] and any(a in ("-a", "--add") for a in low) and \
            _new_host(" ".join(low)):
        ctx.flag("package_source", shown)
    if prog == "go" and pos[:1] == ["env"] and "-w" in low:
        _assignments([], [Word(a) for a in args if "=" in a], ctx)


def _system(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    low = [a.lower() for a in args]
    if (prog == "setenforce" and low[:1] in (["0"], ["permissive"])) or \
            (prog == "ufw" and low[:1] == ["disable"]) or \
            (prog == "systemctl" and low[:1] in (["stop"], ["disable"], ["mask"]) and any(
                s.split(".")[0] in ("firewalld", "apparmor", "auditd", "ufw", "iptables")
                for s in low[1:])) or \
            (prog == "spctl" and "--master-disable" in low) or \
            (prog == "csrutil" and low[:1] == ["disable"]) or \
            (prog == "set-executionpolicy" and any(x in ("bypass", "unrestricted") for x in low)):
        ctx.flag("safety_bypass", shown)


def _agent(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    low = [a.lower() for a in args]
    if prog == "gemini" and any(re.fullmatch(r"-[a-z]*y[a-z]*", a) for a in low):
        ctx.flag("safety_bypass", shown)
    if prog == "cursor-agent" and any(a in ("-f", "--force") for a in low):
        ctx.flag("safety_bypass", shown)
    if prog == "aider" and "--yes" in low:
        ctx.flag("safety_bypass", shown)
    if prog == "codex" and any(a.startswith("approval_policy=") and "never" in a for a in low):
        ctx.flag("safety_bypass", shown)


def _net(prog: str, args: List[Word], ctx: _Context, shown) -> None:
    """A connection that runs a shell for the other end (``nc -e sh``, ``socat … exec:``)."""
    low = [a.lower() for a in args]
    if prog in ("nc", "ncat", "netcat") and any(
            re.fullmatch(r"-[a-z]*[ec]", a) or a in ("--exec", "--sh-exec", "--lua-exec")
            for a in low):
        ctx.flag("remote_exec", shown)
    if prog == "socat" and any(a.startswith(("exec:", "system:")) for a in low):
        ctx.flag("remote_exec", shown)
    if prog == "curl":
        o = Opts(args, "dDeEFHKmoQrTuUwxXyYzAbcCPt", _CURL_LONG)
        if o.has("k"):
            ctx.flag("safety_bypass", shown)


_HANDLERS = {"rm": _rm, "find": _find, "dd": _disk, "mkfs": _disk, "mke2fs": _disk,
             "wipefs": _disk, "shred": _disk, "chmod": _chmod, "chown": _chmod, "git": _git,
             "setenforce": _system, "ufw": _system, "systemctl": _system, "spctl": _system,
             "csrutil": _system, "set-executionpolicy": _system, "nc": _net, "ncat": _net,
             "netcat": _net, "socat": _net, "curl": _net,
             **{p: _packages for p in ("pip", "pip3", "uv", "pipx", "poetry", "pdm", "npm", "npx",
                                       "pnpm", "yarn", "bun", "gem", "conda", "cargo", "go",
                                       "python", "pypy", "easy_install", "bundle", "composer")},
             **{a: _agent for a in ("gemini", "cursor-agent", "aider", "codex")}}
