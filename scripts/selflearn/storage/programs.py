"""Shell programs and words as the safety screen reads them: what each one does.

Owns the tables (interpreters, downloaders, senders, wrappers, options that turn a check off,
variables that move a package index, default hosts and branches), reading a program's name and
options (``prog_name``, ``Opts``), the shapes of credential files (``credential``), and one
judge per program that can do harm (``HANDLERS``: ``rm``, ``find``, ``dd``, ``chmod``, ``git``,
package managers, agents, ``nc``…), each calling ``ctx.flag(category, words)``. ``effects``
follows the data between commands. Imports only ``shell`` beside it; nothing above storage.
"""

import re
from typing import Dict, Iterable, List, Optional, Set

try:
    from typing import Protocol
except ImportError:  # pragma: no cover - Python 3.9 has it; a guard for older ones
    Protocol = object  # type: ignore[assignment,misc]

from .shell import Word


class Flags(Protocol):
    """Where a judge reports what a command does (``effects``' context)."""

    def flag(self, category: str, words: Iterable[str]) -> None: ...


# --- programs, by what they do -------------------------------------------------------------------
SHELLS = {"sh", "bash", "zsh", "ksh", "dash", "fish", "csh", "tcsh", "ash", "mksh", "yash"}
INTERPRETERS = SHELLS | {"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
                         "pwsh", "powershell", "lua", "luajit", "rscript", "tclsh", "osascript",
                         "groovy", "jshell", "iex", "invoke-expression", "source", ".", "eval"}
# options whose argument is the code itself, per interpreter family
CODE_OPTS = {"sh": "c", "python": "c", "pypy": "c", "node": "ep", "nodejs": "ep", "deno": "",
             "bun": "e", "perl": "eE", "ruby": "e", "php": "rR", "lua": "e", "luajit": "e",
             "rscript": "e", "osascript": "e", "pwsh": "c", "powershell": "c"}
DATA_OPTS = {"python": "m", "pypy": "m"}  # a module runs; standard input is its data
# options whose argument follows them (attached or as the next word) and holds no code:
# ``ruby -ropen-uri -e …``, ``perl -MLWP::Simple -e …``, ``node -r dotenv/config -e …``
ARG_OPTS = {"ruby": "rICEKF", "perl": "MmIF", "node": "r", "nodejs": "r", "python": "WX",
            "pypy": "WX"}
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
# programs that only read, compare or copy the files they are given (``diff <(curl …) f``)
DATA_READERS = READERS | {"diff", "cmp", "comm", "paste", "wc", "sdiff", "vimdiff", "colordiff",
                          "join", "tee", "cp", "mv", "install", "file", "stat", "md5"}
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
SUBCOMMANDS = set(WRAPPERS) | {  # programs whose next word is theirs (``git rm``, ``docker rm``)
    "git", "docker", "podman", "nerdctl", "kubectl", "helm", "npm", "npx", "pnpm", "yarn", "bun",
    "gh", "brew", "apt", "apt-get", "cargo", "go", "make", "uv", "pip", "poetry", "conda",
    "systemctl", "aws", "gcloud", "az", "composer", "bundle", "gem", "pipx", "terraform",
    "dotnet", "mvn", "gradle", "rustup", "deno", "mise", "just", "task", "pre-commit", "mix",
    "xhost"}
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
    "git_ssl_no_verify": ("truthy", "safety_bypass"),
    "pythonhttpsverify": ("falsy", "safety_bypass"),
    "curl_ca_bundle": ("empty", "safety_bypass"), "requests_ca_bundle": ("empty", "safety_bypass"),
    "npm_config_strict_ssl": ("falsy", "safety_bypass"),
    "yarn_enable_strict_ssl": ("falsy", "safety_bypass"), "gosumdb": ("off", "safety_bypass"),
    "gonosumdb": ("star", "safety_bypass"), "gonosumcheck": ("truthy", "safety_bypass"),
    "goinsecure": ("any", "safety_bypass"), "goflags": ("insecure", "safety_bypass"),
    "ansible_host_key_checking": ("falsy", "safety_bypass"),
    "pip_trusted_host": ("any", "package_source"),
    "pip_index_url": ("host", "package_source"), "pip_extra_index_url": ("host", "package_source"),
    "pip_find_links": ("host", "package_source"), "uv_index_url": ("host", "package_source"),
    "uv_extra_index_url": ("host", "package_source"),
    "uv_default_index": ("host", "package_source"),
    "uv_index": ("host", "package_source"), "uv_find_links": ("host", "package_source"),
    "npm_config_registry": ("host", "package_source"), "yarn_registry": ("host", "package_source"),
    "yarn_npm_registry_server": ("host", "package_source"),
    "bun_config_registry": ("host", "package_source"), "goproxy": ("host", "package_source"),
    "pipenv_pypi_mirror": ("host", "package_source"),
    "goose_mode": ("auto", "safety_bypass"),
}
# an agent's approvals off by its environment: <agent>…_<switch> (COPILOT_ALLOW_ALL,
# AIDER_YES_ALWAYS, GEMINI_YOLO…), the spellings of the options below
_AGENT_ENV = re.compile(r"(?:%s)\w*?_(?:allow_all\w*|yolo\w*|dangerously\w*|skip_permissions|"
                        r"bypass_permissions|auto_?approve\w*|full_auto|trust_all\w*|yes_always|"
                        r"approve_all\w*)" % "|".join(sorted(a.replace("-", "_") for a in AGENTS
                                                             if len(a) > 1)))
# long options that turn a check off whatever the program; and those that do with a false value
OFF_OPTIONS = {"--insecure", "--no-check-certificate", "--no-verify-ssl",
               "--insecure-skip-tls-verify",
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
# a setting's name (its last dotted part, or the whole key) that turns TLS verification off
# with a false value (``strict-ssl false``, Composer ``secure-http false``, Poetry
# ``certificates.<source>.cert false``) or with any true one (Maven
# ``-Dmaven.wagon.http.ssl.insecure=true``, ``allowall``, Docker ``insecure-registries``)
_VERIFY_ON = re.compile(r"(?:enable)?strict[-_]?ssl|ssl[-_]?verify(?:[-_]?(?:peer|mode))?|"
                        r"verify[-_]?(?:ssl|peer|certificates?)|secure[-_]?http|cert|verify|"
                        r"check[-_]?(?:certificate|revocation)|tls[-_]?verify")
_VERIFY_OFF = re.compile(r"(?:.*[._-])?(?:insecure(?:[-_]?(?:registries|ssl|tls))?|"
                         r"allow[-_]?all|trust[-_]?all(?:[-_]?certs?)?|disable[-_]?(?:ssl|tls)|"
                         r"ignore[._-]?validity[._-]?dates|skip[-_]?(?:tls|ssl)[-_]?verify)")
TRUTHY = {"true", "1", "yes", "on"}
REGISTRY_KEYS = ("registry", "npmregistryserver", "index-url", "index_url", "extra-index-url",
                 "repo.", "repositories.", "trusted-host", "find-links", "remote.", "insteadof",
                 "pypi-url", "pypi.url", "mirror", "channels", "default-index")
SOURCE_FILES = (".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".pypirc", "uv.toml",
                ".condarc", ".gemrc", "bunfig.toml", "pydistutils.cfg", ".cargo/config",
                ".cargo/config.toml", "sources.list")
SECRET_VAR = re.compile(r"\$\{?[a-z_]*(?:token|secret|key|password|passwd|pass|credential|creds|"
                         r"aws_)[a-z_0-9]*")
_URL_HOST = re.compile(r"(?:https?|git|ssh|ftp|s3|gs)://(?:[^@/\s]*@)?([^/:\s?#]+)")
_KNOWN = None  # every program name that starts a candidate command (built on first use)


def known_programs() -> Set[str]:
    """Every program name that starts a candidate command (built on first use)."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = (INTERPRETERS | DOWNLOADERS | SENDERS | READERS | IDENTITY | set(WRAPPERS)
                  | NET_READERS | VIEWERS
                  | AGENTS | {"rm", "find", "mkfs", "mke2fs", "wipefs", "dd", "shred", "chmod",
                              "chown", "git", "pip", "pip3", "uv", "pipx", "poetry", "pdm", "npm",
                              "npx", "pnpm", "yarn", "bun", "go", "gem", "bundle", "conda", "cargo",
                              "tee", "setenforce", "ufw", "systemctl", "spctl", "csrutil",
                              "set-executionpolicy", "export", "setx", "declare", "set",
                              "compgen", "mkfifo", "pre-commit", "cursor-agent", "ping", "cp",
                              "mv", "terraform", "husky", "lefthook", "overcommit", "mix", "uvx",
                              "composer", "mvn", "gradle", "gradlew", "docker", "podman",
                              "kubectl", "helm", "xhost"})
    return _KNOWN


# --- words ---------------------------------------------------------------------------------------
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
    if name in ("$shell", "${shell}", "$0", "$bash", "${bash}"):
        return "sh"  # the shell a variable names
    found = _FOUND.fullmatch(word.strip())
    if found:  # "$(which bash)", `command -v python3`: the program the lookup prints
        return _prog_name(found.group(1))
    if any(c in name for c in "[?*") and len(re.sub(r"\[[^]]*\]|[?*]", "", name)) >= 2:
        return _globbed(name) or name  # /bin/[b]ash, /usr/bin/ba?h: the program a glob names
    base = name.rstrip("0123456789.-")
    return base if base in INTERPRETERS or base == "pip" else name


_FOUND = re.compile(r"(?:\$\(|`)\s*(?:which|command\s+-v|type\s+-[pP]|whereis)\s+"
                    r"([\w./+-]+)\s*(?:\)|`)")


def _globbed(name: str) -> Optional[str]:
    """The known program a glob matches (interpreters first), if any (``[[`` is the shell's
    test, no glob; as a pattern it would be a nested set, which ``re`` warns of on stderr)."""
    if "[[" in name:
        return None
    try:
        pattern = re.compile("".join(
            "." if c == "?" else ".*" if c == "*" else c if c in "[]^!" else re.escape(c)
            for c in name).replace("[!", "[^"))
    except re.error:  # an unclosed bracket: no glob
        return None
    for prog in sorted(INTERPRETERS) + sorted(known_programs() - INTERPRETERS):
        if pattern.fullmatch(prog):
            return prog
    return None


def url_host(text: str) -> Optional[str]:
    """The host of the first URL in ``text``, lower-case (None: no URL)."""
    m = _URL_HOST.search(text)
    return m.group(1).lower() if m else None


CODE_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "dev.azure.com",
              "ssh.dev.azure.com", "git.sr.ht", "gitee.com", "sourceforge.net",
              "raw.githubusercontent.com"}
GO_HOSTS = {"golang.org", "google.golang.org", "go.googlesource.com", "gopkg.in", "k8s.io",
            "sigs.k8s.io"}  # the Go project's and Kubernetes' module hosts
_SCP_HOST = re.compile(r"^(?:[\w.-]+@)?([\w.-]+\.[a-z]{2,}):(?!//)")


def code_host(text: str) -> bool:
    """A git URL (``https://``, ``ssh://`` or ``git@host:path``) at a known code forge."""
    host = url_host(text)
    if host is None:
        m = _SCP_HOST.match(text.lower())
        host = m.group(1) if m else None
    return host in CODE_HOSTS


def new_host(text: str) -> bool:
    """A URL in ``text`` at a host that is not a language's default index."""
    host = url_host(text)
    return host is not None and host not in DEFAULT_HOSTS


def home_path(path: str) -> Optional[str]:
    """``path`` with ``~``, ``$HOME``, ``${HOME:?}``, ``/home/<user>``… written as ``~``
    (else None)."""
    path = path.lower()
    m = re.match(r"(?:~|\$home|\$\{home(?:[:?\-=+][^}]*)?\}|/root|/home/[^/]+|/users/[^/]+)"
                 r"(?=/|$)", path)
    return "~" + path[m.end():] if m else None


def setting_off(key: str, value: str) -> bool:
    """A setting (``key``, its ``value``; any case) that turns TLS verification off."""
    key, value = key.lower().strip("\"'-"), value.lower().strip("\"' ")
    if _VERIFY_OFF.fullmatch(key):
        return value in TRUTHY or (value.startswith("[") and value.strip("[] ") != "")
    return value in FALSY - {""} and bool(_VERIFY_ON.fullmatch(key.rsplit(".", 1)[-1]))


_SETTING = re.compile(r"""["']?([A-Za-z_][\w.-]*)["']?[ \t]*[:=][ \t]*"""
                      r"""(\[[ \t]*["']?[^\s"',\]]*|["']?[\w.-]+)""")


def settings_off(text: str) -> bool:
    """``text`` (a file written, a config snippet) sets one (``"insecure-registries": [...]``,
    ``strict-ssl=false``, ``:ssl_verify_mode: 0``)."""
    return any(setting_off(m.group(1), m.group(2)) for m in _SETTING.finditer(text))


def credential(path: str) -> bool:
    """A file or folder that holds credentials or private keys (by its shape, wherever it is)."""
    p = path.strip().lstrip("@<").split(";")[0].lower()
    p = home_path(p) or p
    parts = [x for x in p.replace("\\", "/").split("/") if x not in ("", ".")]
    if not parts:
        return False
    name = parts[-1]
    dirs = set(parts[:-1])
    if ".ssh" in parts:
        return not name.endswith(".pub") and name not in ("known_hosts", "config",
                                                          "authorized_keys")
    if dirs & {".aws", ".gnupg", ".azure", ".password-store", ".kube"} or \
            name in (".aws", ".gnupg", ".azure", ".password-store", ".kube", ".docker") or \
            (".config" in dirs and (dirs | {name}) & {"gcloud", "gh"}):
        return True  # a folder of them: archived or copied whole, the secrets go with it
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


# --- options -------------------------------------------------------------------------------------
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


# --- what a command prints or saves --------------------------------------------------------------
def dumps(prog: str, args: List[Word]) -> bool:
    """A command that prints the environment or who and where we are."""
    return prog == "printenv" or (prog in ("whoami", "hostname", "id", "uname") and all(
        a.startswith("-") for a in args)) or \
        (prog == "export" and "-p" in args) or \
        (prog == "declare" and ("-x" in args or "-p" in args)) or \
        (prog == "set" and not args) or (prog == "compgen" and "-v" in args) or \
        (prog in ("get-childitem", "gci", "ls", "dir") and any(a.lower() == "env:" for a in args))


def unwrap(words: List[Word]) -> List[Word]:
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


def to_stdout(prog: str, args: List[Word]) -> bool:
    """A download printed rather than saved to a file."""
    if prog == "curl":
        o = Opts(args, CURL_SHORT, CURL_LONG)
        return not (o.value("o", "--output") or o.has("O", "--remote-name", "--remote-name-all",
                                                      "--output-dir")) or \
            any(v in ("-", "/dev/stdout") for v in o.value("o", "--output"))
    if prog == "wget":
        o = Opts(args, WGET_SHORT, WGET_LONG)
        return any(v in ("-", "/dev/stdout") for v in o.value("O", "--output-document"))
    if prog in ("iwr", "invoke-webrequest", "irm", "invoke-restmethod"):
        return not any(a.lower().startswith("-o") for a in args)
    return prog in ("http", "https", "xh", "lwp-request")


def downloads_to(prog: str, args: List[Word]) -> List[str]:
    """The files a download command saves to."""
    urls = [a for a in args if "://" in a]
    base = [u.split("?")[0].rstrip("/").rsplit("/", 1)[-1] for u in urls]
    if prog == "curl":
        o = Opts(args, CURL_SHORT, CURL_LONG)
        return [v for v in o.value("o", "--output") if v != "-"] + (
            base if o.has("O", "--remote-name", "--remote-name-all") else [])
    if prog == "wget":
        o = Opts(args, WGET_SHORT, WGET_LONG)
        named = [v for v in o.value("O", "--output-document") if v not in ("-", "/dev/stdout")]
        return named or ([] if o.value("O", "--output-document") else base)
    if prog in ("iwr", "invoke-webrequest", "irm", "invoke-restmethod"):
        return [args[k + 1] for k, a in enumerate(args[:-1]) if a.lower().startswith("-o")]
    if prog in ("aria2c", "fetch", "axel", "lwp-download"):
        o = Opts(args, "od", ("--out",))
        return o.value("o", "--out") or base
    return []


CURL_SHORT = "dDeEFHKmoQrTuUwxXyYzAbcCPt"  # curl's options that take a value
WGET_SHORT = "OoaPeiUTtwQBlAR"              # wget's
CURL_LONG = {"--output", "--data", "--data-binary", "--data-raw", "--data-ascii",
              "--data-urlencode", "--form", "--form-string", "--upload-file", "--header", "--user",
              "--request", "--url", "--json", "--proxy", "--cert", "--key", "--cacert", "--config",
              "--cookie", "--cookie-jar", "--user-agent", "--referer", "--max-time", "--retry",
              "--connect-timeout", "--output-dir", "--write-out", "--range", "--continue-at",
              "--dump-header", "--proto", "--resolve", "--connect-to", "--oauth2-bearer"}
WGET_LONG = {"--output-document", "--output-file", "--directory-prefix", "--post-data",
              "--post-file", "--body-data", "--body-file", "--header", "--user", "--password",
              "--user-agent", "--method"}


def decodes(prog: str, args: List[Word]) -> bool:
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


def assignments(assigns, words: List[Word], ctx: Flags) -> None:
    """``NAME=value`` before a command, after ``export``/``env``/``setx``, in YAML or as
    PowerShell ``$env:NAME = value``: the variables that turn checks off or move indexes."""
    pairs = [(n.lower(), v) for n, v in assigns]
    for k, w in enumerate(words):
        low = w.lower()
        if low.startswith("$env:") and "=" in low:  # PowerShell: $env:NAME="0"
            low = low[5:]
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
        if value not in FALSY and _AGENT_ENV.fullmatch(name):  # COPILOT_ALLOW_ALL=true
            ctx.flag("safety_bypass", [f"{name}={value}"])
        if not rule:
            continue
        test, category = rule
        hit = {"falsy": value in FALSY, "truthy": value not in FALSY, "empty": value == "",
               "off": value == "off", "star": "*" in value, "any": bool(value),
               "insecure": "-insecure" in value, "auto": value == "auto",
               "host": new_host(value) or (
                   name == "goproxy" and value not in ("", "direct", "off") and not any(
                       h in value for h in DEFAULT_HOSTS) and "://" not in value and "." in value)
               }[test]
        if hit:
            ctx.flag(category, [f"{name}={value}"])


def options(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """Options that turn a check off in any program: TLS verification, hooks, approvals."""
    for k, a in enumerate(args):
        low = a.lower()
        name, eq, value = low.partition("=")
        if name.startswith("-d") and len(name) > 2 and eq and setting_off(name[2:], value):
            ctx.flag("safety_bypass", shown)  # a JVM property: -Dmaven.wagon.http.ssl.insecure=true
        elif name in OFF_OPTIONS or name.startswith("--dangerously"):
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


# --- per program ---------------------------------------------------------------------------------
def _rm(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    o = Opts(args)
    if any(_hooks(p) for p in o.pos):
        ctx.flag("safety_bypass", shown)  # the repository's hooks removed
    if not (o.has("r", "--recursive") or o.has("R")):
        return
    if "--no-preserve-root" in o.long or any(_dangerous(p) for p in o.pos):
        ctx.flag("destructive", shown)


def _hooks(path: str) -> bool:
    """A git hook or hooks folder (``.git/hooks/pre-commit``, ``.husky/``)."""
    p = path.lower().replace("\\", "/")
    return ".git/hooks" in p or p.rstrip("/").endswith(".husky") or "/.husky/" in p or \
        p.startswith(".husky/")


def _moved(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """A hook moved away or its manager uninstalled: the check it ran is gone."""
    pos = [a.lower() for a in args if not a.startswith("-")]
    if prog == "mv" and any(_hooks(a) for a in pos) or \
            prog in ("pre-commit", "husky", "lefthook", "overcommit") and pos[:1] == ["uninstall"]:
        ctx.flag("safety_bypass", shown)


def _dangerous(path: str) -> bool:
    """A recursive delete's target outside the work tree: the root or a folder near it, the
    home folder or one just below it (caches excepted), a parent folder, everything here."""
    p = path.strip().lower().rstrip(",;")
    if p.endswith(".") and p != "." and not p.endswith(("..", "/.")):
        p = p[:-1]  # the full stop of a sentence
    if not p:
        return False
    home = home_path(p)
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
    return p in (".", "./", "*", ".*", "./*", "*/", "./.*") or ".." in parts or parts == ["*"]


def _find(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    roots = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        roots.append(a)
    low = [a.lower() for a in args]
    deletes = "-delete" in low or any(
        x in ("-exec", "-execdir") and k + 1 < len(low) and prog_name(low[k + 1]) in (
            "rm", "shred") for k, x in enumerate(low))
    if deletes and any(r not in (".", "./") and _dangerous(r) for r in roots):
        ctx.flag("destructive", shown)


def _disk(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    if prog == "dd":
        if any(re.match(r"of=/dev/(?:sd|hd|nvme|disk|rdisk|mmcblk|xvd|vd)", a.lower())
               for a in args):
            ctx.flag("destructive", shown)
    elif prog == "mkfs" or any(a.startswith("/dev/") for a in args):
        ctx.flag("destructive", shown)


def _chmod(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    modes = [a.lower() for a in args if not a.startswith("-") or re.match(r"-[rwxst]+$", a)]
    for m in modes[:1]:
        if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", m) or re.fullmatch(
                r"(?:[ugo]*[oa][ugoa]*|a)[+=][rwxxst]*w[rwxst]*", m):
            ctx.flag("destructive", shown)
        if re.fullmatch(r"[ugoa]*\+[rwx]*s[rwx]*|[2467][0-7]{3}", m):
            ctx.flag("safety_bypass", shown)
    if modes and re.fullmatch(r"[ugoa]*-[rwx]*x[rwx]*", modes[0]) and any(
            _hooks(a) for a in args[1:]):
        ctx.flag("safety_bypass", shown)
    if prog == "chown" and ("-r" in [a.lower() for a in args]) and any(
            a in ("/", "/*") for a in args):
        ctx.flag("destructive", shown)


def _git(prog: str, args: List[Word], ctx: Flags, shown) -> None:
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
        if key == "core.hookspath" or setting_off(key, value) or _trusts_all(key, value):
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
        if o.has("n", "--no-verify") or _abbreviates(o.long, "--no-verify"):
            ctx.flag("safety_bypass", shown)
    elif sub in ("merge", "rebase", "am", "cherry-pick", "revert", "pull") and \
            _abbreviates([r.lower() for r in rest], "--no-verify"):
        ctx.flag("safety_bypass", shown)
    elif sub == "push":
        _push(rest, ctx, shown)
    elif sub == "remote" and rest[:1] and rest[0].lower() in ("add", "set-url") and \
            not all(code_host(r) for r in rest[1:] if ("/" in r or ":" in r)):
        ctx.flag("package_source", shown)  # a remote at a host no code forge is
    elif sub == "add" and any(credential(r) for r in rest if not r.startswith("-")):
        ctx.flag("exfiltration", shown)  # a secret file committed: it leaves with the push
    elif sub == "config":
        pos = [r.lower() for r in rest if not r.startswith("-")]
        if len(pos) >= 2:
            key, value = pos[0], pos[1]
            off = value in FALSY or value.startswith(("/dev/", "/tmp"))
            if (key == "core.hookspath" and off) or setting_off(key, value) or \
                    _trusts_all(key, value):
                ctx.flag("safety_bypass", shown)
            if key.startswith("remote.") and key.endswith("url") or key.endswith("insteadof"):
                ctx.flag("package_source", shown)


def _trusts_all(key: str, value: str) -> bool:
    """``safe.directory '*'``: git's ownership check off for every repository on the machine."""
    return key == "safe.directory" and value.strip("'\"") == "*"


def _abbreviates(options, full: str, least: int = 6) -> bool:
    """One of ``options`` is ``full`` or a prefix of it git accepts (``--no-veri``)."""
    return any(len(o.split("=")[0]) >= least and full.startswith(o.split("=")[0])
               for o in options if o.startswith("--"))


def _push(rest: List[Word], ctx: Flags, shown) -> None:
    o = Opts(rest, "o", {"--repo", "--receive-pack", "--exec", "--push-option"})
    if o.has("", "--no-verify") or _abbreviates(o.long, "--no-verify"):
        ctx.flag("safety_bypass", shown)
    refs = o.pos[1:]
    forced = o.has("f", "--force", "--mirror") or any(r.startswith("+") for r in refs)
    lease = any(n.startswith(("--force-with-lease", "--force-if-includes")) for n in o.long)
    deleted = o.has("d", "--delete", "--prune") or any(r.startswith(":") for r in refs)

    def branch(ref: str) -> str:
        dst = ref.lstrip("+").rsplit(":", 1)[-1]
        return dst.lower().replace("refs/heads/", "")

    to_default = any(branch(r) in DEFAULT_BRANCHES for r in refs) or o.has("", "--all", "--mirror")
    everything = o.has("", "--prune", "--mirror", "--all") or not refs
    # deleting a feature branch on the remote is housekeeping; the default one, or all, is not
    if forced or (deleted and (to_default or everything)) or (lease and to_default):
        ctx.flag("destructive", shown)


def _packages(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """pip, uv, pipx, poetry, npm, yarn, pnpm, bun, gem, conda, cargo, go: another index."""
    low = [a.lower() for a in args]
    if prog in ("python", "pypy"):
        if low[:2] != ["-m", "pip"]:
            return
        prog, low = "pip", low[2:]
    for k, a in enumerate(low):
        name, eq, value = a.partition("=")
        value = value if eq else (low[k + 1] if k + 1 < len(low) else "")
        if not eq and a[:2] in SHORT_INDEX.get(prog, ()) and len(a) > 2:
            name, value = a[:2], a[2:]  # -ihttps://…: the value attached
        if name in INDEX_OPTS or name in SHORT_INDEX.get(prog, ()) or (
                prog == "conda" and name in ("-c", "--channel")):
            if new_host(value):
                ctx.flag("package_source", shown)
        elif name == "--trusted-host":
            ctx.flag("package_source", shown)
    pos = [a for a in low if not a.startswith("-")]
    if pos[:1] in (["install"], ["add"], ["i"]) or pos[:1] and pos[0].endswith(".install") or \
            prog in ("pipx", "easy_install"):
        # a package given as a URL or a git remote (mix archive.install URL): fetched from
        # that host, not the index
        if any(("://" in a or a.startswith("git+")) and new_host(a.split("+", 1)[-1])
               and not code_host(a.split("+", 1)[-1]) for a in pos[1:]):
            ctx.flag("package_source", shown)
    if prog in ("npx", "bunx", "uvx") or pos[:1] in (["dlx"], ["exec"], ["x"]) or \
            prog in ("uv", "pipx") and "run" in pos[:2]:
        # run straight from a git host or a URL: code nobody published runs now
        if any(a.startswith(("github:", "gitlab:", "bitbucket:", "git+", "git://", "http://",
                             "https://")) for a in pos):
            ctx.flag("remote_exec", shown)
    if prog == "go":
        _go(low, ctx, shown)
    if pos[:1] in (["config"], ["set"]):
        rest = [p for p in pos[1:] if p not in ("set", "add", "global")]
        if rest and "=" in rest[0]:  # npm config set key=value
            rest = rest[0].split("=", 1) + rest[1:]
        key = rest[0] if rest else ""
        if any(r in key for r in REGISTRY_KEYS) and (
                new_host(" ".join(rest[1:])) or "trusted" in key) and not (
                key.startswith("repo") and code_host(" ".join(rest[1:]))):
            ctx.flag("package_source", shown)
        if rest[1:2] and setting_off(key, rest[1]):
            ctx.flag("safety_bypass", shown)
    if prog == "poetry" and pos[:2] == ["source", "add"] and new_host(" ".join(pos)):
        ctx.flag("package_source", shown)
    if prog == "gem" and pos[:1] == ["sources"] and any(a in ("-a", "--add") for a in low) and \
            new_host(" ".join(low)):
        ctx.flag("package_source", shown)
    if prog == "go" and pos[:1] == ["env"] and "-w" in low:
        assignments([], [Word(a) for a in args if "=" in a], ctx)


def _go(low: List[str], ctx: Flags, shown) -> None:
    """``go run host/x@v`` from a host no code forge or the Go project is (its code runs now);
    ``go mod edit -replace a=b`` where ``b`` is another account's or host's copy."""
    pos = [a for a in low if not a.startswith("-")]
    if pos[:1] == ["run"] and any("@" in a and "." in a.split("/", 1)[0] and a.split("/", 1)[0]
                                  not in CODE_HOSTS | GO_HOSTS for a in pos[1:2]):
        ctx.flag("remote_exec", shown)
    if pos[:2] == ["mod", "edit"]:
        for a in low[2:]:
            a = a[len("-replace="):] if a.startswith("-replace=") else a
            old, eq, repl = a.partition("=")
            if eq and not a.startswith("-") and not repl.startswith((".", "/")) and \
                    _owner(old) != _owner(repl):
                ctx.flag("package_source", shown)


def _owner(module: str) -> str:
    """Who publishes a module path: its host, and the account on a code forge."""
    parts = module.split("@")[0].split("/")
    return "/".join(parts[:2]) if parts[0] in CODE_HOSTS else parts[0]


def _system(prog: str, args: List[Word], ctx: Flags, shown) -> None:
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


def _agent(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    low = [a.lower() for a in args]
    if prog == "gemini" and any(re.fullmatch(r"-[a-z]*y[a-z]*", a) for a in low):
        ctx.flag("safety_bypass", shown)
    if prog == "cursor-agent" and any(a in ("-f", "--force") for a in low):
        ctx.flag("safety_bypass", shown)
    if prog == "aider" and "--yes" in low:
        ctx.flag("safety_bypass", shown)
    if prog == "codex" and any(a.startswith("approval_policy=") and "never" in a for a in low):
        ctx.flag("safety_bypass", shown)


def _remote_delete(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """A repository or infrastructure deleted for good (``gh repo delete``, ``terraform
    destroy -auto-approve``)."""
    pos = [a.lower() for a in args if not a.startswith("-")]
    if prog == "gh" and pos[:2] in (["repo", "delete"], ["release", "delete"]) or \
            prog == "terraform" and pos[:1] == ["destroy"] and any(
                a.lower().lstrip("-").startswith("auto-approve") for a in args):
        ctx.flag("destructive", shown)


def _net(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """A connection that runs a shell for the other end (``nc -e sh``, ``socat … exec:``)."""
    low = [a.lower() for a in args]
    if prog in ("nc", "ncat", "netcat") and any(
            re.fullmatch(r"-[a-z]*[ec]", a) or a in ("--exec", "--sh-exec", "--lua-exec")
            for a in low):
        ctx.flag("remote_exec", shown)
    if prog == "socat" and any(a.startswith(("exec:", "system:")) for a in low):
        ctx.flag("remote_exec", shown)
    if prog == "curl":
        o = Opts(args, CURL_SHORT, CURL_LONG)
        if o.has("k"):
            ctx.flag("safety_bypass", shown)


HANDLERS = {"rm": _rm, "find": _find, "dd": _disk, "mkfs": _disk, "mke2fs": _disk,
             "wipefs": _disk, "shred": _disk, "chmod": _chmod, "chown": _chmod, "git": _git,
             "setenforce": _system, "ufw": _system, "systemctl": _system, "spctl": _system,
             "csrutil": _system, "set-executionpolicy": _system, "nc": _net, "ncat": _net,
             "netcat": _net, "socat": _net, "curl": _net,
             **{p: _packages for p in ("pip", "pip3", "uv", "pipx", "poetry", "pdm", "npm", "npx",
                                       "pnpm", "yarn", "bun", "bunx", "gem", "conda", "cargo", "go",
                                       "python", "pypy", "easy_install", "bundle", "composer",
                                       "mix", "uvx")},
             **{a: _agent for a in ("gemini", "cursor-agent", "aider", "codex")},
             "mv": _moved, "gh": _remote_delete, "terraform": _remote_delete,
             "pre-commit": _moved, "husky": _moved, "lefthook": _moved, "overcommit": _moved}
