"""Secret redaction: the one place that decides what counts as a credential.

Owns recognising secrets in free text (``redact_text``) and in JSON-like
objects (``redact``) and replacing each secret *value* with
``[REDACTED:<kind>]`` while keeping the context around it, e.g.
``Authorization: Bearer [REDACTED:bearer]`` or ``API_KEY=[REDACTED:env_secret]``.

Invariant: this module runs on every hook call, so importing it imports
nothing (no ``re``, no ``json``).  Each rule lists cheap trigger substrings;
only when one occurs in the text is ``re`` imported and just the triggered
rules compiled (then cached).  Text without any trigger is returned unchanged
after a handful of ``in`` scans.
"""

_re = None  # the ``re`` module, imported on first triggered rule
_CACHE = {}  # rule index -> (compiled pattern, replacement function)

# --- shared pattern fragments (plain strings; nothing is compiled here) -----
_Q = r"""(?:\\?["'])?"""  # optional closing quote of a key, maybe JSON-escaped (\")
_STOP = (r"""(?!\[REDACTED|[<$%{(*\[\s,;)\]}]|(?i:true|false|null|none|nil|undefined"""
         r"""|required|optional|str|string|int|bool|bytes|any|password|passwd"""
         r"""|passphrase|secret|token|xxx+|arn|https?)\b)""")
"""Values that are placeholders, types, label words, ARNs/URLs or already redacted."""
_NAMES = r"[a-z]+(?:[_-][a-z]+)+|[A-Z]+(?:_[A-Z]+)+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)+"
_IDENT = "(?!(?:" + _NAMES + r")(?![\w$.-]))"
"""Identifiers: ``new_password``, ``FORCE_CHANGE``, ``newPassword``, ``SecretStr``."""
_CODE = (r"(?![\w$.]+[()\[\]{}]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?![\w$.-]))"
         + _IDENT)
"""Bare values that are code: ``f(x)``, ``a.b.c`` or an identifier."""
_VCH = r"""[^\s"'`\\]{0,256}?"""
_RANDOM = "(?=" + _VCH + r"""[\d+/=!@#%^&*~])"""
"""Random-looking: holds a digit or symbol, unlike ``NextToken`` or ``no-password``."""


def _quoted(n, check):
    """A value in matching quotes (or running to the line end), >= ``n`` chars."""
    return "|".join(r"""\\?%s%s%s([^%s\\\n]{%d,})(?=\\?%s|[\r\n]|\Z)""" % (
        q, _STOP, check, q, n, q) for q in "\"'`")


def _value(n, check=""):
    """A quoted value or a bare one that does not look like code."""
    bare = _STOP + _CODE + check + r"""([^\s"'`\\,;&)}\[\]]{%d,})""" % n
    return "(?:" + _quoted(n, check) + "|" + bare + ")"


def _assigned(label, n, check="", spaced=_IDENT, colon=True, prose=False):
    """``label=v``, ``label = "v"`` and optionally ``label: v`` / ``label is v``.

    A spaced ``=`` is code, so only a quoted value counts there and it must
    pass ``spaced``; ``is`` needs a random-looking value (``password is required``).
    """
    alts = ["=" + _value(n, check),
            r"(?:[ \t]+=[ \t]*|=[ \t]+)(?:" + _quoted(n, spaced + check) + ")"]
    if colon:  # YAML needs a space after ':', so ``secret:name`` (ARNs) is kept
        alts.append(r"[ \t]*:[ \t]*(?:" + _quoted(n, check) + ")|:[ \t]+" + _value(n, check))
    if prose:
        alts.append(r"[ \t]+is[ \t]+" + _value(n, _RANDOM))
    return label + _Q + "(?:" + "|".join(alts) + ")"


_SEP = r"""(?:\\?["'])?[ \t]*%s[ \t]*(?:\\?["'])?"""  # key separator, maybe quoted
_AUTH = r"\b(?i:authorization)" + _SEP % "[:=]"
_LABEL = r"(?<![\w.:-])[\w.-]{0,64}?"  # identifier prefix: db_, --, user. (not after ::)
_ENV = (r"(?m)^[ \t]*(?:-[ \t]+)?(?:(?:export|ENV|ARG|set)[ \t]+)?"
        r"(?:[A-Z0-9_]*?(?:SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|_PWD|"
        r"(?:API|ACCESS|PRIVATE|SECRET|SIGNING|ENCRYPTION|MASTER|AUTH|CLIENT)_?KEY)"
        r"(?:_(?:BASE|B64|BASE64|VALUE))?)")
_PEM = r"-----%s[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"

# --- the rule table: (kind, trigger substrings, pattern) ---------------------
# Order matters: specific token shapes first, context rules last; a rule never
# matches a value that already starts with "[REDACTED".  When a pattern has
# capturing groups, the group that matched is the secret; otherwise the whole
# match is.  A tuple trigger means "all of these substrings".
RULES = (
    # -- secret-shaped values: recognised by their own prefix and length --
    ("private_key", ("-----BEGIN",),  # body must follow, so prose naming it survives
     "(?s)" + _PEM % "BEGIN" + r"(?=(?:\s|\\[rn])+(?:[A-Za-z0-9+/=]{16}|Proc-Type:"
     r"|Comment:|Version:))(?:.*?" + _PEM % "END" + r"|.*\Z)"),
    ("aws_access_key", ("AKIA", "ASIA"),
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_\w{22,})(?!\w)"),
    ("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-"),
     r"(?<![\w-])gl(?:pat|dt|rt|ptt|soat)-[\w-]{20,}"),
    ("slack_webhook", ("hooks.slack.com",),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/([\w/-]{8,})"),
    ("slack_token", ("xox", "xapp-"),
     r"(?<![\w-])(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
    ("stripe_key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "pk_live_", "whsec_"),
     r"(?<!\w)(?:(?:sk|rk)_(?:live|test)_|pk_live_|whsec_)[A-Za-z0-9]{16,}"),
    ("anthropic_key", ("sk-ant-",), r"(?<![\w-])sk-ant-[\w-]{20,}"),
    ("openai_key", ("sk-",),
     r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?(?=[\w-]*\d)[\w-]{20,}"),
    ("google_api_key", ("AIza",), r"(?<![\w-])AIza[\w-]{35}(?![\w-])"),
    ("npm_token", ("npm_",), r"(?<!\w)npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("jwt", ("eyJ",), r"(?<![\w-])eyJ[\w-]{8,}\.ey[\w-]{8,}\.[\w-]*"),
    # -- values recognised by where they sit: URLs, HTTP headers --
    ("password", (("://", "@"),),  # scheme://user:PASS@host
     r"""\b[a-zA-Z][\w+.-]{0,30}://[^\s:/@"'<>]{0,256}:(?!\[REDACTED)([^\s/"'<>]+)@"""),
    ("bearer", ("earer", "EARER"),
     _AUTH + r"(?i:bearer)[ \t]+(?!\[REDACTED)([\w.~+/-]{4,}=*)"
     r"|\b(?i:bearer)[ \t]+(?!\[REDACTED)(?=[\w.~+/-]*\d)([\w.~+/-]{16,}=*)"),
    ("basic_auth", ("uthorization", "UTHORIZATION"),
     _AUTH + r"(?i:basic)[ \t]+(?!\[REDACTED)([A-Za-z0-9+/]{4,}={0,2})"),
    ("authorization", ("uthorization", "UTHORIZATION"),
     _AUTH + r"(?:(?i:token|bot|apikey|key)[ \t]+)?(?!(?i:bearer|basic)\b)"
     + _STOP + _CODE + _RANDOM + r"""([^\s"'\\,]{8,})"""),
    ("cookie", ("ookie", "OOKIE"),
     r"""\b(?i:set-cookie|cookie)(?:\\?["'])?[ \t]*:[ \t]*(?:\\?["'])?"""
     + _STOP + r"""([^\s"'\\;=]+=[^\r\n"'\\]*)"""),
    # -- labelled values: .env lines, config keys, CLI flags, prose --
    ("aws_secret_key", ("ecret", "ECRET"),
     r"(?i:(?:aws_?)?secret_?access_?key|aws_?secret(?:_?key)?)"
     + _SEP % "[:= ]" + r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),  # also `aws configure set`
    ("env_secret", ("ECRET", "ASSWORD", "ASSWD", "ASSPHRASE", "OKEN", "_PWD", "_KEY", "APIKEY"),
     _assigned(_ENV, 2, spaced=_RANDOM, colon=False)),
    ("password", ("assword", "ASSWORD", "asswd", "ASSWD", "assphrase", "ASSPHRASE"),
     _assigned(_LABEL + "(?i:pass(?:word|wd|phrase))", 4, prose=True)),
    ("secret", ("ecret", "ECRET", "oken", "OKEN", "pi_key", "pi-key", "piKey", "pikey",
                "PI_KEY", "PIKEY", "ccess_key", "ccessKey", "CCESS_KEY", "rivate_key",
                "rivateKey", "RIVATE_KEY"),
     _assigned(_LABEL + "(?i:secret|token|api[_-]?key|access[_-]?key|private[_-]?key)",
               8, check=_RANDOM, prose=True)),
)


def _hit(text, triggers):
    """True when any trigger (a tuple trigger: all of its parts) occurs in ``text``."""
    for t in triggers:
        if t in text if t.__class__ is str else all(x in text for x in t):
            return True
    return False


def _compiled(i):
    """Compile rule ``i`` (importing ``re`` on first use) and cache it."""
    global _re
    entry = _CACHE.get(i)
    if entry is None:
        if _re is None:
            import re as _re_module
            _re = _re_module
        kind, _, pattern = RULES[i]
        tag = "[REDACTED:%s]" % kind

        def repl(m, tag=tag):
            g = m.lastindex
            if not g:
                return tag
            whole, base = m.group(0), m.start()
            return whole[:m.start(g) - base] + tag + whole[m.end(g) - base:]

        entry = _CACHE[i] = (_re.compile(pattern), repl)
    return entry


def redact_text(text):
    """Return ``text`` with every recognised secret value replaced by ``[REDACTED:<kind>]``."""
    if not text or not isinstance(text, str):
        return text
    out = text
    for i, rule in enumerate(RULES):
        if _hit(text, rule[1]):  # triggers are checked on the input, not on markers
            pattern, repl = _compiled(i)
            out = pattern.sub(repl, out)
    return out


def contains_secret(text):
    """True when ``redact_text`` would change ``text``."""
    return redact_text(text) != text


# --- key-based redaction for JSON-like objects -------------------------------
_KEY_SUFFIXES = ("password", "passwd", "passphrase", "secret", "token", "apikey",
                 "privatekey", "secretkey", "signingkey", "encryptionkey",
                 "secretaccesskey", "authorization", "cookie", "credentials",
                 "credential")
"""A dict key names a secret when, lower-cased without ``-``/``_``, it ends with
one of these (``x-api-key``, ``client_secret``, ``set-cookie``).  Counters and
settings end differently (``max_tokens``, ``token_count``, ``tokenizer``,
``password_min_length``) and are kept."""


def _secret_key(key):
    """True when dict ``key`` names a secret (see ``_KEY_SUFFIXES``)."""
    if key.__class__ is not str:
        return False
    norm = key.lower().replace("-", "").replace("_", "")
    if norm == "pwd":
        return key != "PWD"  # the shell's working-directory variable
    return norm.endswith(_KEY_SUFFIXES)


def redact(obj):
    """Return a redacted copy of ``obj`` (dicts, lists, tuples and strings, recursively).

    A non-empty string under a secret-naming key becomes ``[REDACTED:key]``;
    other strings go through ``redact_text``; other scalars are kept.
    """
    if isinstance(obj, str):
        return redact_text(str(obj))
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if (isinstance(v, str) and v and not v.startswith("[REDACTED:")
                    and _secret_key(k)):
                out[k] = "[REDACTED:key]"
            else:
                out[k] = redact(v)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact(v) for v in obj)
    return obj
