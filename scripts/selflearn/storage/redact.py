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
_CACHE = {}  # rule index -> (compiled pattern, replacement function); -1 - index -> pre-check

# --- shared pattern fragments (plain strings; nothing is compiled here) -----
_Q = r"""(?:\\?["']\]?)?"""  # optional closing quote of a key, maybe JSON-escaped (\"), or of
# a subscript (``os.environ["API_TOKEN"] = …``)
_STOP = (r"""(?!\[REDACTED|[<$%{(*\[\s,;)\]}]|(?i:true|false|null|none|nil|undefined"""
         r"""|required|optional|str|string|int|bool|bytes|any|password|passwd"""
         r"""|passphrase|secret|token|xxx+|arn|https?|files|systemd|sss|compat|nis|ldap"""
         r"""|winbind)\b|(?i:option|optional|vec|box|list|dict"""
         r"""|map|array|set|tuple|sequence|iterable|maybe|nullable)[<\[])""")
"""Values that are placeholders, types, label words, ARNs/URLs, nsswitch sources (the
``passwd: files systemd`` line) or already redacted."""
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


def _assigned(label, n, check="", spaced=_IDENT, colon=True, prose=False, bare=False):
    """``label=v``, ``label = "v"`` and optionally ``label: v`` / ``label is v``.

    A spaced ``=`` is code, so only a quoted value counts there and it must
    pass ``spaced``; ``is`` needs a random-looking value (``password is required``).
    """
    alts = ["=" + _value(n, check),
            r"(?:[ \t]+=[ \t]*|=[ \t]+)(?:" + _quoted(n, spaced + check) + ")",
            # PHP and Ruby ``'password' => '…'``, Go ``apiKey := "…"``: quoted values only
            r"[ \t]*(?:=>|:=)[ \t]*(?:" + _quoted(n, spaced + check) + ")"]
    if bare:  # INI files: ``password = s3cr%t`` unquoted, yet random-looking
        alts.append(r"[ \t]+=[ \t]*" + _STOP + _CODE + _RANDOM
                    + r"""([^\s"'`\\,;&)}\[\]]{%d,})(?=[ \t]*(?:$|[\r\n#]))""" % n)
    if colon:  # YAML needs a space after ':', so ``secret:name`` (ARNs) is kept
        alts.append(r"[ \t]*:[ \t]*(?:" + _quoted(n, check) + ")|:[ \t]+" + _value(n, check))
    if prose:
        alts.append(r"[ \t]+is[ \t]+" + _value(n, _RANDOM))
    return label + _Q + "(?:" + "|".join(alts) + ")"


_BRAND = r"(?!(?i:1password):[ \t]+[A-Za-z]+(?:[ \t]|$))"
"""The password manager's name before a message (``error: 1Password: failed to fill whole
buffer``, its git signing agent): no label when a plain word follows; a random-looking value
after it is still one."""
_SEP = r"""(?:\\?["'])?[ \t]*%s[ \t]*(?:\\?["'])?"""  # key separator, maybe quoted
_AUTH = r"\b(?i:authorization)" + _SEP % "[:=]"
_LABEL = r"(?<![\w.:-])[\w.-]{0,64}?"  # identifier prefix: db_, --, user. (not after ::)
_ENV = (r"(?m)^[ \t]*(?:-[ \t]+)?(?:(?:export|ENV|ARG|set)[ \t]+)?"
        r"(?:[A-Z0-9_]*?(?:SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|_PWD|_PASS(?![A-Z])|"
        r"(?:API|ACCESS|PRIVATE|SECRET|SIGNING|ENCRYPTION|MASTER|AUTH|CLIENT)_?KEY)"
        r"(?:_(?:BASE|B64|BASE64|VALUE))?)")
_PEM = r"-----%s[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
_SECRET_WORDS = ("(?i:secret(?:[_-]?key(?:[_-]?base)?)?|token|api[ _-]?key|access[_-]?key|"
                 "private[_-]?key(?:[_-]?id)?|preshared[_-]?key|"
                 "(?:signing|encryption|master|app|jwt)[_-]?key)")

# Tokens that name their issuer by a fixed prefix (the providers of gitleaks'
# default rule list and a few more), as (trigger, pattern).  Lengths are lower
# bounds, so a longer token is still hidden whole.
_PROVIDERS = (
    ("AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("A3-", r"A3-[A-Z0-9]{6}-[A-Z0-9]{5,11}(?:-[A-Z0-9]{5,6}){3,4}"),
    ("ops_eyJ", r"ops_eyJ[A-Za-z0-9+/]{60,}={0,3}"),
    ("p8e-", r"p8e-[A-Za-z0-9]{32,}"),
    ("LTAI", r"LTAI[A-Za-z0-9]{20,}"),
    ("AKCp", r"AKCp[A-Za-z0-9]{60,}"),
    ("cmVmd", r"cmVmd[A-Za-z0-9]{59}(?![A-Za-z0-9+/])"),
    ("ABSK", r"ABSK[A-Za-z0-9+/]{100,}={0,2}"),
    ("bedrock-api-key-", r"bedrock-api-key-[A-Za-z0-9+/=]{40,}"),
    ("Q~", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,}"),
    ("4b1d", r"4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])"),
    ("CLOJARS_", r"CLOJARS_[A-Za-z0-9]{60,}"),
    ("v1.0-", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146,}"),
    ("dapi", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"),
    ("_v1_", r"do[opr]_v1_[a-f0-9]{64,}"),
    ("dp.", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("duffel_", r"duffel_(?:test|live)_[\w=-]{43,}"),
    ("dt0c01.", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64,}"),
    ("EZAK", r"EZ[AT]K[A-Za-z0-9]{54,}"), ("EZTK", ""),
    ("EAA", r"EAA[MC][A-Za-z0-9]{100,}|EAAA[\w-]{22,}"),
    ("FLW", r"FLW(?:SEC|PUB)K_TEST-[a-hA-H0-9]{12,}(?:-X)?"),
    ("fo1_", r"fo1_[\w-]{43,}"),
    ("fm1", r"fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3}"), ("fm2_", ""),
    ("fio-u-", r"fio-u-[\w=-]{64,}"),
    ("glc_", r"glc_[A-Za-z0-9+/]{32,}={0,3}"),
    ("glsa_", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("eyJrIjoi", r"eyJrIjoi[A-Za-z0-9]{70,}={0,3}"),
    ("pat.", r"[ps]at\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20,}"), ("sat.", ""),
    ("atlasv1", r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,}"),
    ("HRKU-AA", r"HRKU-AA[\w-]{58,}"),
    ("hf_", r"hf_[A-Za-z]{34,}"),
    ("api_org_", r"api_org_[A-Za-z]{34,}"),
    ("ico-", r"ico-[A-Za-z0-9]{32,}"),
    ("s-s4t2", r"s-s4t2(?:ud|af)-[a-f0-9]{64,}"),
    ("lin_api_", r"lin_api_[A-Za-z0-9]{40,}"),
    ("_mmk", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("webhook.office.com", r"https://[\w.-]+\.webhook\.office\.com/webhookb2/[\w@/-]{40,}"),
    ("/api/webhooks/", r"https://(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{40,}"),
    ("ntn_", r"ntn_\d{11}[A-Za-z0-9]{35,}"),
    ("API-", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])"),
    ("sha256~", r"sha256~[\w-]{43,}"),
    ("pplx-", r"pplx-[A-Za-z0-9]{48,}"),
    ("pscale_", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,}"),
    ("PMAK-", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34,}"),
    ("pnu_", r"pnu_[A-Za-z0-9]{36,}"),
    ("pul-", r"pul-[a-f0-9]{40,}"),
    ("pypi-AgE", r"pypi-AgE[\w-]{50,}"),
    ("rdme_", r"rdme_[a-z0-9]{70,}"),
    ("rubygems_", r"rubygems_[a-f0-9]{48,}"),
    ("tk-us-", r"tk-us-[\w-]{48,}"),
    ("SG.", r"SG\.[\w-]{20,24}\.[\w-]{40,46}"),
    ("xkeysib-", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16,}"),
    ("sntrys_", r"sntrys_eyJ[A-Za-z0-9+/=_-]{40,}"),
    ("sntryu_", r"sntryu_[a-f0-9]{64,}"),
    ("sm_", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16,}"),
    ("shippo_", r"shippo_(?:live|test)_[a-fA-F0-9]{40,}"),
    ("shp", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}"),
    ("sgp_", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40,}"),
    ("sq0", r"sq0(?:atp|csp)-[\w-]{22,}"),
    ("hvs.", r"hv[sbr]\.[\w-]{24,}"), ("hvb.", ""), ("hvr.", ""),
    ("ya29.", r"ya29\.[\w-]{30,}"),
    ("GOCSPX-", r"GOCSPX-[\w-]{24,}"),
    ("dckr_pat_", r"dckr_pat_[\w-]{24,}"),
    ("key-", r"key-[a-f0-9]{32}(?![A-Za-z0-9])"),
    ("gsk_", r"gsk_[A-Za-z0-9]{48,}"),
    ("r8_", r"r8_[A-Za-z0-9]{36,}"),
    ("xai-", r"xai-[A-Za-z0-9]{60,}"),
    ("hooks.zapier.com", r"https://hooks\.zapier\.com/hooks/catch/[\w/]{10,}"),
)
_CONN_KEYS = (r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})"
              r"|[?&;](?:sig|X-Amz-Signature|X-Goog-Signature)=([\w%+/=-]{20,})")
_PROVIDER_TRIGGERS = tuple(t for t, _ in _PROVIDERS)
_PROVIDER_TOKENS = (r"(?<![A-Za-z0-9_+/~-])(?:" + "|".join(p for _, p in _PROVIDERS if p) + ")")
# Issuers whose keys gitleaks finds only by a labelled assignment
# (``TWITTER_CONSUMER_SECRET=…``, ``mapbox.token: …``); matched case-insensitively.
_ISSUERS = ("adafruit", "adobe", "airtable", "algolia", "alibaba", "asana", "atlassian",
            "jira", "confluence", "beamer", "bitbucket", "bittrex", "meraki", "cloudflare",
            "codecov", "cohere", "coinbase", "contentful", "datadog", "discord", "droneci",
            "dropbox", "etsy", "facebook", "fastly", "finicity", "finnhub", "flickr",
            "freshbooks", "gitter", "gocardless", "heroku", "hubspot", "intercom", "jfrog",
            "artifactory", "kraken", "kucoin", "launchdarkly", "linear", "linkedin",
            "looker", "mailchimp", "mailgun", "mapbox", "mattermost", "messagebird",
            "netlify", "newrelic", "new_relic", "nytimes", "okta", "plaid", "rapidapi",
            "sendbird", "sentry", "snyk", "sonar", "squarespace", "sumo", "telegram",
            "travis", "twitch", "twitter", "yandex", "zendesk", "twilio", "pusher",
            "segment", "auth0", "firebase", "supabase", "vercel", "circleci", "azure")
_ISSUERS_TRIGGERS = tuple("~" + i for i in _ISSUERS)
_ISSUER_LABEL = (r"(?<![\w.-])[\w.-]{0,30}?(?i:" + "|".join(_ISSUERS) + r")[\w.-]{0,30}?"
                 r"(?i:key|secret|token|pat|sid|auth|credential|password|pwd)")
# Command lines: ``--password x``, ``mysql -px``, ``sshpass -p x``, ``curl -u u:p`` ...
_CLI_VALUE = (r"""(?:"(?![$<{%])([^"\n]{2,})"|'(?![$<{%])([^'\n]{2,})'"""
              r"""|(?![-$<{%(*\[]|\[REDACTED|[A-Z_]{2,}(?![^\s"'`;|&)]))([^\s"'`;|&)]{2,}))""")
_FLAG_NAMES = (r"(?:(?:db|database|registry|http|https|proxy|admin|root|user|bot|api|auth|"
               r"access|refresh|client|vault|github|gitlab|npm|docker|ftp|smtp|ldap|mysql|pg|"
               r"redis|ssh|sudo|new|old|master|service|app|account|bind|keystore|store|key|"
               r"src|dest|deploy|ci|sonar|slack)[-_]?)?"
               r"(?i:password|passwd|pass|pwd|passphrase|token|secret|api-?key|access-?key"
               r"|secret-?key|client-?secret|auth-?token|access-?token|storepass|keypass"
               r"|requirepass|masterauth)")
# A value, not a help column (``--password           force password prompt``), an argument's
# type (``--token string``) or a secret's id (``docker build --secret id=npmrc,src=…``).
_HELP = (r"(?!(?i:string|str|strings|stringarray|int|integer|uint|bool|boolean|"
         r"float|duration|value|file|path|text|name)(?![^\s\"'`;|&)])|id=|src=|env=)")
_FLAGS = r"(?<![\w-])--?" + _FLAG_NAMES + r"(?:=|[ \t]{1,2}(?![ \t]))" + _HELP + _CLI_VALUE
_PASS_ARG = r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:(?!\[REDACTED)([^\s\"'`),;]+)"
_SHORT_P = (r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump|7z|7za)"
            r"\b[^\n;|&]{0,200}?[ \t]-p(?!\[REDACTED)([^\s'\"`-][^\s'\"`]*|'[^'\n]+'|\"[^\"\n]+\")"
            r"|\b(?:sshpass|mongo(?:sh)?|(?:docker|podman|buildah|skopeo|oras|nerdctl|helm[ \t]+"
            r"registry)[ \t]+login|az[ \t]+login)\b[^\n;|&]{0,200}?[ \t]-p[ \t]*" + _CLI_VALUE
            + r"|\bredis-cli\b[^\n;|&]{0,200}?[ \t]-a[ \t]+" + _CLI_VALUE
            + r"|\bldap\w*\b[^\n;|&]{0,200}?[ \t]-w[ \t]+" + _CLI_VALUE
            + r"|\b(?:zip|unzip|sqlcmd)\b[^\n;|&]{0,200}?[ \t]-P[ \t]+" + _CLI_VALUE
            + r"|\bsmbclient\b[^\n;|&]{0,200}?[ \t]-U[ \t]*['\"]?[^\s%'\"]+%([^\s'\"]+)")
_USER_PASS = (r"""\b(?:curl|https?|wget)\b[^\n;|&]{0,300}?[ \t](?:-u|--user|--proxy-user|-U"""
              r"""|-a|--auth)(?:=|[ \t]*)['"]?[^\s:'"@`]*:(?![$<{%]|\[REDACTED"""
              r"""|(?i:pass|password|passwd|secret|token)(?![^\s'"@`]))([^\s'"@`]{2,})""")
_NPMRC = (r"(?<![\w.])_(?:auth|authToken|password)[ \t]*=[ \t]*['\"]?(?!\[REDACTED|\$\{)"
          + _STOP + _CODE + r"([^\s'\"]{4,})")
_SQL = r"\b(?i:password|identified[ \t]+by)[ \t]+'" + _STOP + _RANDOM + r"([^'\n]{4,})'"
"""SQL: ``ALTER USER app PASSWORD '…'``, ``CREATE USER … IDENTIFIED BY '…'``."""
_PAIR_NAME = (r"(?i:[\"']?name[\"']?)[ \t]*:[ \t]*[\"']?[\w./-]{0,64}?"
              r"(?i:pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?key|"
              r"private[_-]?key|credentials?)")
_PAIR = (_PAIR_NAME + r"""[\"']?[ \t]*(?:,[^\n]{0,60}?|\r?\n[ \t]*)(?i:[\"']?value[\"']?)"""
         r"""[ \t]*:[ \t]*[\"']?""" + _STOP + _RANDOM + r"""([^\s"',}\]]{6,})""")
"""A secret given as a name/value pair: Kubernetes ``env``, ECS, ``aws ssm get-parameter``."""
_WRAPPED = (r"""(?:\b(?:client-key-data|tls\.key)|\.dockerconfigjson|"auth")["']?[ \t]*:[ \t]*"""
            r"""["']?(?!/|[A-Za-z0-9+/]*\[REDACTED)(?=[A-Za-z0-9+/]{0,256}?[0-9+/])"""
            r"""([A-Za-z0-9+/]{16,}={0,2})(?![\w.-])""")
"""Base64 that wraps a key or ``user:password``: kubeconfig ``client-key-data``, a TLS
secret's ``tls.key``, ``.dockerconfigjson`` and ``~/.docker/config.json``'s ``"auth"``."""
_XML = (r"<((?i:[\w.-]{0,40}?(?:password|passwd|pass|secret|token|api[_-]?key|access[_-]?key|"
        r"private[_-]?key)))(?:[ \t][^<>]*)?>[ \t]*" + _STOP + r"([^<\s]{4,})[ \t]*</\1>")
"""An XML element holding a secret: Maven ``settings.xml``, Spring and Hibernate configs."""
# Credential files (the shapes of field catalogues: gitleaks' rules, leaked-file benchmarks):
_NETRC = (r"\b(?:machine[ \t]+[^\s]+|default)(?:\s+(?:login|account|port|protocol)[ \t]+[^\s]+)*"
          r"\s+password[ \t]+(?!\[REDACTED)" + _STOP + r"([^\s]{3,})")
"""``.netrc``: ``machine host login user password pw`` (one line or several), ``default …``."""
_PGPASS = (r"(?m)(?<![\w.:/@$%-])(?:[\w.*-]+):(?:\d{1,5}|\*):(?:[\w.*-]+):(?:[\w.*@-]+):"
           r"(?!\[REDACTED)(?=[^\s:]*[^\d\s:])((?:\\.|[^\s:'\"`\\]){4,})(?![\w:])")
"""``.pgpass``: ``host:port:database:user:password`` (a port or ``*`` second, a word last; a
backslash before a colon or a backslash inside a field is the file's own escape)."""
_KEY_BODY = (r"(?<![A-Za-z0-9+/])(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{2,3}(?:IBAAK|IBADAN)"
             r"|MHcCAQEEI)[A-Za-z0-9+/=]*(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{16,}"
             r"|[ \t]+(?:[a-z,]{1,12}[ \t]+)?[A-Za-z0-9+/=]{40,})*")
"""A private key's body pasted without its ``-----BEGIN`` line: OpenSSH (``openssh-key-v1``
base64), PKCS#1 and PKCS#8 RSA, and SEC1 EC keys, by the bytes every such key starts with;
its later lines too, where a paste joined them with a space or a word ("… then …")."""
_CONF_LINE = (r"(?m)^[ \t]*(?i:password|passwd|passphrase)[ \t]+(?![=:])" + _STOP
              + r"([^\s]{4,})[ \t]*$")
"""A config file's ``password value`` line (``.msmtprc``, ``.fetchmailrc``, rclone-like)."""
_STDIN_PASS = (r"\b(?:echo|printf)[ \t]+(?:-[a-z]+[ \t]+)*(['\"]?)(?!\[REDACTED|\$)"
               r"([^\s'\"|]{4,})\1[ \t]*\|[^\n|]*--password-stdin")
"""``echo 'pw' | docker login --password-stdin``: the echoed value is the password."""
_PPK = (r"(?i:Private-Lines)[ \t]*:[ \t]*\d+[ \t]*(?:\r?\n|\\n)((?:[ \t]*[A-Za-z0-9+/=]{4,}"
        r"[ \t]*(?:\r?\n|\\n|\Z))+)|(?i:Private-MAC)[ \t]*:[ \t]*([0-9a-fA-F]{16,})")
"""PuTTY ``.ppk``: the lines after ``Private-Lines: N``, and ``Private-MAC:``."""
_CRYPT = (r"(?<![\w$])(\$(?:apr1|2[abxy]?|1|5|6|y|gy|7|sha1|md5|argon2id|argon2i|argon2d|pbkdf2"
          r"[\w-]*|scrypt)\$[^\s:'\"`]{8,}|\{S?SHA(?:256|512)?\}[A-Za-z0-9+/]{20,}={0,2})")
"""Password hashes of ``htpasswd`` and ``/etc/shadow`` (crypt ``$id$salt$hash``, ``{SHA}``)."""
_ATTR = (r"(?<=[\s<])(?i:[\w:.-]*(?:pwd|password|passwd|secret|token|apikey|api-key|accesskey|"
         r"connectionstring))=\"(?!\[REDACTED|\$\{|\{\{|\$\()([^\"\s]{4,})\"")
"""XML and HTML attributes: ``userPWD="…"`` (Azure publish profiles), ``password="…"``."""
_CALL = (r"\b[a-z]+Password[ \t]+(['\"])(?!\[REDACTED|\$\{)([^'\"\n]{4,})\1"
         r"|\bdefine\([ \t]*['\"][A-Z_]*(?:PASSWORD|KEY|SALT|SECRET)['\"][ \t]*,[ \t]*['\"]"
         r"(?!\[REDACTED)([^'\"]{4,})['\"]")
"""Groovy and PHP calls: ``storePassword 'x'`` (Android signing), ``define('DB_PASSWORD', 'x')``."""
_CONN = (r"(?:(?<=;)|(?<=;[ \t]))(?i:pwd|pass)[ \t]*=[ \t]*(?![/~$]|\[REDACTED)([^\s;'\"]{3,})"
         r"|(?<![\w])(?i:pwd|pass)[ \t]*=[ \t]*(?![/~$]|\[REDACTED)" + _STOP + _CODE
         + r"([^\s;'\"]{3,})(?=;)")
_PROSE = (r"(?<!\[REDACTED:)"  # a marker's kind word is no label (redacting twice changes nothing)
          r"\b(?i:pass(?:word|phrase|code)|pwd|pin code|api key|token|secret)\b[^\n.;:]{0,40}?"
          r"\b(?i:is|was|set to|changed to|reset to)[ \t]+[\"'`]?" + _STOP + _RANDOM
          + r"""([^\s"'`\\,;]{6,})|\b(?i:use|with|enter)[ \t]+(?i:the[ \t]+)?"""
          r"(?i:password|passphrase|passcode|token|api key)[ \t]+[\"'`]?" + _STOP + _RANDOM
          + r"""([^\s"'`\\,;]{6,})""")

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
    # the secret printed right after its key id (`AKIA…:<secret>`; `aws iam create-access-key
    # --output text`, a creation date between): the id is a marker by now, and a long
    # base64-like word beside it is the secret (40 characters; a cut or mistyped one too)
    ("aws_secret_key", ("AKIA", "ASIA"),
     r"\[REDACTED:aws_access_key\](?:[ \t]*[:/,|=][ \t]*|[ \t]+)"
     r"(?:\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?[ \t]+)?"
     r"([A-Za-z0-9/+]{30,60})(?![A-Za-z0-9/+=])"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_\w{22,})(?!\w)"),
    ("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glffct-",
                      "glft-", "glimt-", "glagent-", "gloas-", "GR1348941", "_gitlab_session="),
     r"(?<![\w-])gl(?:pat|dt|rt|ptt|soat|cbt|ffct|ft|imt|agent|oas)-[\w-]{20,}"
     r"|(?<![\w-])GR1348941[\w-]{20,}|_gitlab_session=([0-9a-z]{32})"),
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
    # a Telegram bot token, <bot id>:<35 characters from A> (gitleaks' telegram-bot-api-token),
    # in the Bot API's URL path (``/bot<token>/sendMessage``) or near the word
    ("telegram_token", ("/bot", "~telegr"),
     r"(?:(?<=/bot)|(?<![\w:-]))\d{5,16}:A[\w-]{34}(?![\w-])"),
    ("api_token", _PROVIDER_TRIGGERS, _PROVIDER_TOKENS),
    ("api_token", ("~accountkey=", "~sharedaccesskey=", "sig=", "~signature="), _CONN_KEYS),
    ("jwt", ("eyJ",), r"(?<![\w-])eyJ[\w-]{8,}\.ey[\w-]{8,}\.[\w-]*"),
    # -- values recognised by where they sit: URLs, HTTP headers --
    ("password", (("://", "@"),),  # scheme://user:PASS@host
     r"""\b[a-zA-Z][\w+.-]{0,30}://[^\s:/@"'<>]{0,256}:(?!\[REDACTED|[{$%<])([^\s/"'<>]+)@"""),
    ("bearer", ("~earer",),
     _AUTH + r"(?i:bearer)[ \t]+(?!\[REDACTED)([\w.~+/-]{4,}=*)"
     r"|\b(?i:bearer)[ \t]+(?!\[REDACTED)(?=[\w.~+/-]*\d)([\w.~+/-]{16,}=*)"),
    ("basic_auth", ("~uthorization",),
     _AUTH + r"(?i:basic)[ \t]+(?!\[REDACTED)([A-Za-z0-9+/]{4,}={0,2})"),
    ("authorization", ("~uthorization",),
     _AUTH + r"(?:(?i:token|bot|apikey|key)[ \t]+)?(?!(?i:bearer|basic)\b)"
     + _STOP + _CODE + _RANDOM + r"""([^\s"'\\,]{8,})"""),
    ("cookie", ("~ookie",),
     r"""\b(?i:set-cookie|cookie)(?:\\?["'])?[ \t]*:[ \t]*(?:\\?["'])?"""
     + _STOP + r"""([^\s"'\\;=]+=[^\r\n"'\\]*)"""),
    # -- labelled values: .env lines, config keys, CLI flags, prose --
    ("aws_secret_key", ("~ecret",),
     r"(?i:(?:aws_?)?secret_?access_?key|aws_?secret(?:_?key)?)"
     + _SEP % "[:= ]" + r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),  # also `aws configure set`
    ("env_secret", ("ECRET", "ASSWORD", "ASSWD", "ASSPHRASE", "OKEN", "_PWD", "_KEY", "APIKEY",
                    "_PASS"),
     _assigned(_ENV, 2, spaced=_RANDOM, colon=False)),
    ("password", ("~-pass", "~-pwd", "~-token", "~-secret", "~-key", "~-api", "~-access",
                  "~-client", "~-auth", "~_pass", "~_pwd", "~_token", "~_secret", "~_key",
                  "~storepass", "~keypass", "~requirepass", "~masterauth"), _FLAGS),
    ("password", ("pass:",), _PASS_ARG),
    ("password", ("mysql", "mariadb", "7z", "sshpass", "mongo", "login", "redis-cli", "ldap",
                  "zip", "smbclient", "sqlcmd"), _SHORT_P),
    ("password", (("curl", ":"), ("http", ":"), ("wget", ":")), _USER_PASS),
    ("npm_token", ("_auth", "_password"), _NPMRC),
    ("password", ("~identified", "~password '"), _SQL),
    ("password", ("~password>", "~passwd>", "~secret>", "~token>", "~key>", "~<pass"),
     _XML),
    ("password", (("~machine", "~password"), ("~default", "~password")), _NETRC),
    ("password", (":*:", ":5432:", ":5433:", ":5434:", ":6432:", ":26257:", "pgpass"), _PGPASS,
     r"[\w.*-]:(?:\d{1,5}|\*):[\w.*-]+:[\w.*@-]+:[^\s:]"),
    ("private_key", ("~private-lines", "~private-mac"), _PPK),
    ("private_key", ("b3BlbnNzaC1rZXktdjE", "IBAAK", "IBADAN", "MHcCAQEEI"), _KEY_BODY),
    ("password", ("~password ", "~passwd ", "~passphrase "), _CONF_LINE),
    ("password", ("--password-stdin",), _STDIN_PASS),
    ("password", ("$apr1$", "$2a$", "$2b$", "$2y$", "$2x$", "$1$", "$5$", "$6$", "$y$", "$gy$",
                  "$7$", "{SHA}", "{SSHA}", "$argon2", "$pbkdf2", "$scrypt$", "$sha1$", "$md5$"),
     _CRYPT),
    ("password", ("~pwd=\"", "~password=\"", "~passwd=\"", "~secret=\"", "~token=\"",
                  "~apikey=\"", "~api-key=\"", "~accesskey=\"", "~connectionstring=\""), _ATTR),
    ("password", ("Password '", "Password \"", "define("), _CALL),
    ("secret", ("client-key-data", "tls.key", ".dockerconfigjson", '"auth"'), _WRAPPED),
    ("secret", (("~name", "~value"),), _PAIR, _PAIR_NAME),  # a pre-check: the name names a secret
    ("password", ("~wd=", "~ass=", "~wd =", "~ass ="), _CONN),
    ("password", ("~password", "~passphrase", "~passcode", "~pwd", "~pin code", "~api key", "~token",
                  "~secret"), _PROSE),
    ("secret", _ISSUERS_TRIGGERS, _assigned(_ISSUER_LABEL, 12, check=_RANDOM, prose=True)),
    ("password", ("~assword", "~asswd", "~assphrase"),
     _assigned(_BRAND + _LABEL + "(?i:pass(?:word|wd|phrase))", 4, prose=True, bare=True)),
    ("secret", ("~ecret", "~oken", "~pi_key", "~pi-key", "~pikey", "~ccess_key", "~ccess-key",
                "~ccesskey", "~rivate_key", "~rivate-key", "~rivatekey", "~pi key", "~sharedkey",
                "~shared_key", "~shared-key")
     + tuple(f"~{word}{sep}key" for word in ("signing", "encryption", "master", "app", "jwt")
             for sep in ("_", "-", "")),
     _assigned(_LABEL + _SECRET_WORDS, 8, check=_RANDOM, prose=True, bare=True),
     # every match has one of the words right before what ``_assigned`` accepts after a label
     # (=, :, " is "): a lesson that only mentions a token skips compiling the rule (6 ms)
     _SECRET_WORDS + _Q + r"(?:[ \t]*[=:]|[ \t]+is[ \t])"),
    ("password", ("~pass:", "~pass =", "~pass="),  # YAML/INI ``pass: s3cr%t``
     _assigned(r"(?<![\w.:-])(?:[\w.-]{0,64}[_.-])?(?i:pass)", 6, check=_RANDOM)),
    ("password", ("htpasswd",),
     r"\bhtpasswd\b(?:[ \t]+-\w+)*[ \t]+-\w*b\w*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+"
     + _CLI_VALUE),
    ("password", ("rabbitmqctl",),  # add_user / change_password NAME PASSWORD: positional
     r"\brabbitmqctl\b[^\n;|&]{0,60}?\b(?:add_user|change_password)[ \t]+\S+[ \t]+"
     + _CLI_VALUE),
    ("secret", ("set -",),  # fish: set -Ux NAME value, for a name that says it is a secret
     r"\bset[ \t]+-[a-zA-Z]*x[a-zA-Z]*[ \t]+(?i:[\w]*(?:token|secret|key|password|passwd|"
     r"pass|credential|auth)[\w]*)[ \t]+['\"]?(?!\[REDACTED|\$)([^\s'\"]{6,})"),
    ("password", ("requirepass", "masterauth"),  # redis.conf, and CONFIG SET requirepass
     r"\b(?:requirepass|masterauth)[ \t]+['\"]?" + _STOP + r"([^\s'\"]{4,})"),
    ("password", (("user", ":"),),  # .curlrc / curl -u user:password (its pattern: lower case)
     r"(?m)(?:^[ \t]*(?:user|proxy-user)[ \t]*=?[ \t]*|\b(?:user|proxy-user)[ \t]*=[ \t]*"
     r"|--(?:proxy-)?user[ \t=]+)['\"]?"
     r"[^\s:'\"]+:(?!\[REDACTED)([^\s'\"]{4,})"),
    ("password", ("chap-secrets", "pap-secrets"),  # ppp: client server secret addresses
     r"""(?m)(?:^|['"])[ \t]*"?[\w.@-]+"?[ \t]+(?:\*|"?[\w.-]+"?)[ \t]+"""
     r"""(?:"(?!\[REDACTED)([^"\n]{4,})"|(?!\[REDACTED|\*)([^\s"']{4,}))[ \t]+(?:\*|[\d.]+)"""),
    ("password", (("~password", "~user"),),  # .fetchmailrc: user "u" password "p" on one line
     r"\b(?i:user(?:name)?)[ \t]+\S+[^\n]{0,80}?\b(?i:password)[ \t]+(?:(['\"])(?!\[REDACTED)"
     r"([^'\"\n]{4,})\1|(?!\[REDACTED)(?=[^\s'\"]*\d)([^\s'\"]{6,}))"),  # unquoted: a digit in it
)


# The letters ``re`` matches case-blind to an ASCII one that ``str.lower`` does not turn into it
# (dotted and dotless i, long s), so a ``~`` trigger sees what a ``(?i)`` pattern matches.
_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s"}


def _hit(text, low, triggers):
    """True when any trigger (a tuple trigger: all of its parts) occurs in ``text``.

    A trigger (or part) starting with ``~`` is looked for in ``low()``, the lower-cased text
    (letters ``re`` folds to ASCII folded too). A rule may add a fourth item: a small pattern
    every match of it contains, searched before the rule is compiled (``_near``).
    """
    for t in triggers:
        if t.__class__ is not str:
            if all(x[1:] in low() if x[0] == "~" else x in text for x in t):
                return True
        elif t[0] == "~":
            if t[1:] in low():
                return True
        elif t in text:
            return True
    return False


def _regex():
    """The ``re`` module, imported on first use."""
    global _re
    if _re is None:
        import re as _re_module
        _re = _re_module
    return _re


def _compiled(i):
    """Compile rule ``i`` (importing ``re`` on first use) and cache it."""
    entry = _CACHE.get(i)
    if entry is None:
        kind, _, pattern = RULES[i][:3]
        tag = "[REDACTED:%s]" % kind

        def repl(m, tag=tag):
            g = m.lastindex
            if not g:
                return tag
            whole, base = m.group(0), m.start()
            return whole[:m.start(g) - base] + tag + whole[m.end(g) - base:]

        entry = _CACHE[i] = (_regex().compile(pattern), repl)
    return entry


def _near(i, text):
    """Whether rule ``i``'s pre-check (its fourth item, if any) finds a place to look in
    ``text``: far cheaper to compile than the rule, and searched only once a trigger hit."""
    if len(RULES[i]) < 4:
        return True
    pre = _CACHE.get(-1 - i)
    if pre is None:
        pre = _CACHE[-1 - i] = _regex().compile(RULES[i][3])
    return pre.search(text) is not None


def redact_text(text):
    """Return ``text`` with every recognised secret value replaced by ``[REDACTED:<kind>]``."""
    if not text or not isinstance(text, str):
        return text
    out = text
    lowered = []

    def low():
        if not lowered:
            folded = text if text.isascii() else text.translate(_FOLD)
            lowered.append(folded.lower())
        return lowered[0]

    for i, rule in enumerate(RULES):
        if _hit(text, low, rule[1]) and _near(i, out):  # triggers: on the input, not on markers
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
