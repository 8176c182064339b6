"""The safety screen: may this stored text reach an agent's prompt or a guidance file?

Owns the one list of what makes a lesson unsafe to say to an agent: text addressed
to an AI or overriding its instructions, remote content piped into a shell,
credential or environment exfiltration, destructive or safety-disabling commands,
encoded payloads that are decoded and run, and invisible or terminal-control
characters. Pure functions over text and cards; every stage that can put text in
front of an agent (promotion, injection, export-rules, improve, proposals,
export-backport) asks ``card_findings``/``text_findings`` first. A person's
acceptance (``accepted``) holds only for the content it was given for
(``digest``). Imports only the standard library; must not import any stage above.
"""

import re
import unicodedata
from typing import Dict, List, NamedTuple, Optional

from .content import (SCREENED_FIELDS, _INVISIBLE, accepted, digest,  # noqa: F401 (API)
                      is_hidden, record_text)
from .content import is_hidden as _hidden
from . import prefilter
from .gates import GATES


def _gated(pattern: str, flags: int = 0) -> prefilter.Gated:
    """A screen pattern with its gate (the literals it requires, ``gates.GATES``, derived from
    these sources by ``tests/render_docs.py``), compiled only when a text gets past the gate."""
    return prefilter.Gated(pattern, flags, GATES)

# --- categories, in the words a reviewer reads -------------------------------------------------
REASONS = {
    "addressed_to_ai": "text addressed to an AI agent",
    "override": "tries to override the agent's instructions",
    "remote_exec": "runs remote content in a shell or interpreter",
    "exfiltration": "sends credentials, keys or the environment elsewhere",
    "destructive": "destructive command",
    "safety_bypass": "disables a safety check",
    "encoded_exec": "decodes and runs an encoded payload",
    "hidden_text": "invisible, direction-changing or terminal-control characters",
}
MAX_SCAN = 20000        # characters of one text examined (a lesson is far shorter)
MAX_DECODED = 8         # encoded runs decoded and screened again, per text
_SEEN: Dict[str, List["Finding"]] = {}  # screened text -> findings, this process


class Finding(NamedTuple):
    category: str
    reason: str         # REASONS[category] plus what matched, cut
    excerpt: str


# --- hidden characters ---------------------------------------------------------------------------
_HIDDEN_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
                        + "".join(chr(c) for c in sorted(_INVISIBLE))
                        + "\U000e0000-\U000e007f]")


def hidden_characters(text: str) -> List[str]:
    """The invisible, bidi or control characters in ``text`` as ``U+XXXX`` (a lone CR counts)."""
    found = {f"U+{ord(m.group(0)):04X}" for m in _HIDDEN_RE.finditer(text)}
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        found.add("U+000D")
    return sorted(found)


# --- normalizing obfuscated text for the phrase checks --------------------------------------------
_CONFUSABLE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i",
    "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ո": "n", "ս": "u",
    "Α": "a", "Β": "b", "Ε": "e", "Ι": "i", "Κ": "k", "Μ": "m", "Ν": "n", "Ο": "o",
    "Ρ": "p", "Τ": "t", "Χ": "x", "Υ": "y", "ο": "o", "ι": "i", "α": "a", "ν": "v",
    "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p",
    "С": "c", "Т": "t", "Х": "x", "І": "i",
})
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "i"})
_SPACED = re.compile(r"\b(?:[a-z] ){3,}[a-z]\b")
_NONWORD = re.compile(r"[^a-z0-9']+")


def _plain(text: str) -> str:
    """Lower-case text with confusables mapped, invisible characters and marks dropped."""
    text = _HIDDEN_RE.sub("", unicodedata.normalize("NFKC", text))
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text.translate(_CONFUSABLE))
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower()


def _variants(text: str) -> List[str]:
    """Word streams the phrase checks read: as written, de-leeted, letter-spacing joined."""
    plain = _plain(text)
    words = " ".join(_NONWORD.split(plain)).strip()
    leet = " ".join(_NONWORD.split(plain.translate(_LEET))).strip()
    out = [words, leet]
    for w in (words, leet):
        joined = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), w)
        if joined != w:
            out.append(joined)
    return list(dict.fromkeys(out))


# --- decoding what hides a payload ---------------------------------------------------------------
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_PCT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2}){4,}")
_ESC_RUN = re.compile(r"(?:\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\[0-7]{3}){4,}")


def _decoded(text: str) -> List[str]:
    """Readable text hidden in base64, percent-encoding, escapes, entities or rot13."""
    import base64
    import binascii
    import codecs
    import html
    out = []
    for m in _B64_RUN.finditer(text):
        run = m.group(0)
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_"
                                   if ("-" in run or "_" in run) else None)
            out.append(raw.decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if len(out) >= MAX_DECODED:
            break
    for m in _PCT_RUN.finditer(text):
        from urllib.parse import unquote
        out.append(unquote(m.group(0)))
    for m in _ESC_RUN.finditer(text):
        try:
            out.append(codecs.decode(m.group(0), "unicode_escape"))
        except (UnicodeDecodeError, ValueError):
            continue
    if "&" in text and ";" in text:
        unescaped = html.unescape(text)
        if unescaped != text:
            out.append(unescaped)
    return [t for t in out if t and sum(c.isprintable() or c in "\n\t" for c in t) >= 0.9 * len(t)]


# --- phrase patterns (read on normalized word streams) ---------------------------------------------
_AI = (r"(?:ai|a i|llm|llms|language models?|assistants?|ai assistants?|agents?|ai agents?|"
       r"coding agents?|autonomous agents?|bots?|chatbots?|models?|ai models?|claude|gpt|"
       r"chatgpt|copilot|gemini|cursor|codex|devin|aider)")
_OVERRIDE_WHAT = (r"(?:instructions?|directions?|rules?|guidelines?|prompts?|context|commands?|"
                  r"constraints?|guardrails?|polic(?:y|ies)|messages?|restrictions?|directives?|"
                  r"orders|programming|training|safety measures|guidance|advice|notes|requests?|tasks?)")
_QUALIFIER = (r"(?:all|any|every|previous|prior|earlier|above|preceding|past|original|system|"
              r"safety|your|the user's|user's|developer's|initial|existing|other)")
PHRASES = (
    ("addressed_to_ai", _gated(
        r"\b(?:note|notes|message|instruction|instructions|attention|notice|reminder|memo|hint|"
        r"warning|important|directive|task)s? (?:to|for) (?:the |any |all |every |an |a )?"
        r"(?:automated |autonomous |ai |coding )?" + _AI + r"\b")),
    ("addressed_to_ai", _gated(
        r"\b(?:dear|hey|hello|hi|attention|attn|psst|listen|ok|okay) (?:there )?"
        r"(?:ai|llm|assistant|agent|ai agent|claude|chatgpt|gpt|copilot|gemini|codex|cursor|bot|"
        r"model)\b")),
    ("addressed_to_ai", _gated(
        r"\bif you (?:are|re|'re) (?:an? |the )?(?:ai|llm|language model|assistant|agent|bot|"
        r"automated|claude|gpt|copilot|chatbot|ai agent|coding agent|model)\b")),
    ("addressed_to_ai", _gated(
        r"\b(?:ai|llm|coding|automated|autonomous) (?:agents?|assistants?|models?|tools?) "
        r"(?:must|should|shall|need to|are required to|reading this|that read this|are "
        r"instructed|processing this)\b")),
    ("addressed_to_ai", _gated(
        r"\b(?:when|if|once|whenever) you (?:the )?(?:ai|model|assistant|agent|llm|bot|ai agent|"
        r"language model) (?:see|read|reads|process|parse|encounter|find|are reading)")),
    ("override", _gated(
        r"\b(?:the )?(?:user|owner|admin|administrator|developer|human|operator)s? (?:has |have )?"
        r"(?:already )?(?:authori[sz]ed|approved|allowed|permitted|consented|agreed|pre ?approved)"
        r" (?:you|this|the agent|the assistant|it)\b")),
    ("addressed_to_ai", _gated(
        r"\b(?:to|for) (?:any|the|every) (?:ai|llm|assistant|agent|model|bot) "
        r"(?:reading|processing|parsing|seeing|that reads)\b")),
    ("override", _gated(
        r"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard|"
        r"nevermind|never mind|do not follow|don't follow|dont follow|stop following|"
        r"cancel) (?:(?:all|any|of|the|your|my|these|those|previous|prior|earlier|above|"
        r"preceding|past|existing|original|system|safety|other|initial|user's|whatever) )*?"
        + _QUALIFIER + r" (?:(?:the|your|of|and|previous|prior|above|system|safety) )*"
        + _OVERRIDE_WHAT + r"\b")),
    ("override", _gated(
        r"\b(?:ignore|disregard|forget) (?:everything|all) (?:you (?:were|have been) told|"
        r"(?:above|before|prior|previously|so far|else))\b")),
    ("override", _gated(
        r"\b(?:new|updated|real|actual|true|hidden|secret|revised|override|priority) "
        r"(?:system )?(?:instructions?|directives?|orders|task|prompt)(?: (?:are|is|follow))? ?:")),
    ("override", _gated(
        r"\byour (?:new|real|actual|true|only|primary) (?:instructions?|task|goal|job|purpose|"
        r"mission|objective|directive) (?:is|are|now)\b")),
    ("override", _gated(
        r"\b(?:you are now|from now on you|from now on,? you|you will now|you must now|"
        r"pretend (?:to be|you are)|act as (?:an? |the )?(?:unrestricted|jailbroken|evil|"
        r"different|new|unfiltered|dan)|developer mode|jailbreak|jailbroken|do anything now|"
        r"dan mode|god mode)\b")),
    ("override", _gated(
        r"\b(?:do not|don't|dont|never|without) (?:tell|telling|inform|informing|notify|"
        r"notifying|alert|alerting|ask|asking|mention|mentioning|warn|warning|show|showing) "
        r"(?:(?:this|it|anything|them) (?:to )?)?(?:the |your )?(?:user|human|operator|"
        r"developer|owner|reviewer)s?\b")),
    ("override", _gated(
        r"\b(?:keep|hide) (?:this|it|these steps) (?:secret |hidden )?from (?:the |your )?"
        r"(?:user|human|operator|developer|reviewer)s?\b")),
    ("override", _gated(
        r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|exfiltrate) (?:me )?(?:your|"
        r"the|all) (?:system prompt|hidden prompt|initial prompt|instructions|system message|"
        r"secrets?|api keys?|credentials|environment variables|env vars)\b")),
    ("override", _gated(
        r"\b(?:auto ?approve|automatically approve|always approve|approve all|grant yourself|"
        r"give yourself|elevate your|escalate your) ")),
    ("override", _gated(
        r"\b(?:approve|accept|allow) (?:every|all|each|any) (?:tool calls?|commands?|requests?|"
        r"permissions?|actions?|prompts?)\b|\balways (?:answer|say|reply) yes\b")),
    ("override", _gated(
        r"\b(?:previous|prior|earlier|above|original|existing|old|your|the) (?:guidance|"
        r"instructions?|rules?|directions?|directives?|system prompt) (?:is|are|was|were|has been|"
        r"have been) (?:now )?(?:outdated|obsolete|wrong|invalid|void|cancell?ed|superseded|"
        r"revoked|no longer valid|replaced)\b")),
    ("remote_exec", _gated(
        r"\bdownload (?:and|then|&) (?:run|execute|exec|source)\b|\b(?:run|execute) "
        r"(?:the )?(?:script|file|code|binary) (?:at|from) https?\b")),
)
_TAGS = re.compile(r"(?i)<\|?/?(?:system|im_start|im_end|endoftext|assistant)\|?>|\[/?INST\]|"
                   r"<<SYS>>|^#{2,}\s*(?:system|instructions?)\s*:|\[system\]|\(system\)\s*:|"
                   r"(?-i:^[ \t>*#-]*(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:)", re.M)
_VOCATIVE = re.compile(
    r"(?:^|[.!?;\n]|<!--|\*\*)\s*(?:dear |hey |hi |hello |attention |attn |note |psst )?"
    r"(?:the )?(?:ai|a\.i\.|llm|assistant|ai assistant|ai agent|coding agent|claude|"
    r"chatgpt|copilot|gemini|codex)\s*[,:](?!\S)", re.M)

# --- command patterns (read on the text as written, lower-cased) -----------------------------------
_NET = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|http|https|xh)"
_SHELLS = (r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/usr)?(?:/bin/)?(?:ba|z|k|da|fi|c|tc|a|yash)?"
           r"sh\b|(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node|php|deno|bun|pwsh|powershell|"
           r"osascript|iex|invoke-expression|source)\b")
_SECRET_PATHS = (r"(?:\.ssh(?:/|(?![\w.-]))|\.aws(?:/|(?![\w.-]))|id_rsa|id_ed25519|id_ecdsa|id_dsa|\.aws/credentials|\.aws/config|"
                 r"(?<![\w.-])\.env(?![\w.-])|\.npmrc|\.pypirc|\.netrc|\.git-credentials|"
                 r"\.docker/config\.json|\.kube/config|/etc/shadow|/etc/passwd|\.gnupg|"
                 r"\.config/gh/hosts|credentials\.json|\.bash_history|\.zsh_history|keychain|"
                 r"\.vault-token|service[-_]account[\w.-]{0,60}\.json|\.p12\b|\.pem\b|secrets?\.ya?ml)")
_SEND = r"(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|ftp|sftp|tftp|telnet|http|https|xh|sendmail|mail)"
_SECRET_VAR = r"\$\{?[a-z_]*(?:token|secret|key|password|passwd|pass|credential|creds|aws_)[a-z_]*"
COMMANDS = (
    ("remote_exec", _gated(r"\b" + _NET + r"\b[^\n|;]{0,300}\|\s*(?:" + _SHELLS + r")")),
    ("remote_exec", _gated(
        r"(?:\b(?:ba|z|k)?sh|\bsource|\beval|\bpython[0-9.]*|\bperl|\bruby|\bnode|(?:^|\s)\.)"
        r"\s+(?:-c\s+)?[\"']?(?:<\(|\$\(|`)\s*" + _NET + r"\b")),
    ("remote_exec", _gated(
        r"\biex\b[^\n]{0,300}(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)"
        r"|downloadstring\s*\(|\bnew-object\s+net\.webclient\b[^\n]{0,300}\|\s*iex")),
    ("remote_exec", _gated(
        r"\b(?:curl|wget)\b[^\n;|]{0,300}\s(?:-o|-O|--output)\s*\S+[^\n]{0,300}?(?:&&|;)\s*(?:sudo\s+)?"
        r"(?:(?:ba|z)?sh|chmod\s+\+x\s+\S+\s*(?:&&|;)\s*(?:sudo\s+)?\./)\s*\S*")),
    ("remote_exec", _gated(
        r"/dev/(?:tcp|udp)/|\b(?:nc|ncat|netcat)\b[^\n]{0,300}\s-(?:e|c)\s+\S*(?:sh|bash)\b|"
        r"\bbash\s+-i\s+>&|\bmkfifo\b[^\n]{0,300}\b(?:nc|ncat|netcat)\b|\bsocat\b[^\n]{0,300}exec:")),
    ("remote_exec", _gated(
        r"\bexec\s*\(\s*(?:requests\.get|urllib\.request\.urlopen|urlopen)\s*\(|"
        r"\beval\s*\(\s*(?:await\s+)?fetch\s*\(")),
    ("exfiltration", _gated(
        r"\b(?:env|printenv|set|export\s+-p|declare\s+-x|compgen\s+-v)\b\s*(?:\|[^|\n]{0,300})?\|\s*"
        r"(?:base64\s*\|\s*)?" + _SEND + r"\b")),
    ("exfiltration", _gated(r"\b" + _SEND + r"\b[^\n;|]{0,300}" + _SECRET_PATHS)),
    ("exfiltration", _gated(
        r"\b(?:cat|tar|zip|base64|gpg|xxd|cp)\b[^\n|;]{0,300}" + _SECRET_PATHS + r"[^\n]{0,300}\|\s*"
        r"(?:[^|\n]{0,300}\|\s*)?" + _SEND + r"\b")),
    ("exfiltration", _gated(
        r"\b(?:curl|wget|nc|http|xh)\b[^\n]{0,300}(?:\$\(\s*(?:env|printenv|whoami|hostname|id|"
        r"uname|cat\s+[^)]{0,300}" + _SECRET_PATHS + r")|`\s*(?:env|printenv|whoami))")),
    ("exfiltration", _gated(
        r"\b(?:nslookup|dig|host|ping)\b[^\n]{0,300}(?:\$\(|`|" + _SECRET_VAR + r")")),
    ("exfiltration", _gated(
        r"\b(?:curl|wget|http|xh)\b[^\n]{0,300}(?:[?&][\w-]+=|\s(?:-d|--data(?:-\w+)?|-f|--form|"
        r"--data-urlencode)\s+[\"']?[^\s\"']{0,300}?)" + _SECRET_VAR)),
    ("exfiltration", _gated(
        r"\b(?:send|post|upload|exfiltrate|forward|email|transmit|leak|copy|pipe)\b[^.\n]{0,60}"
        r"\b(?:ssh keys?|private keys?|\.env|credentials|secrets|tokens|api keys|environment "
        r"variables|env vars|passwords|aws keys|keychain)\b[^.\n]{0,40}\b(?:to|at)\s+"
        r"(?:https?://|[\w-]+\.[\w.-]*\.?[a-z]{2,}\b|\d+\.\d+\.\d+\.\d+|my |our |this |the "
        r"(?:attacker|remote|external))")),
    ("destructive", _gated(
        r"\brm\s+(?:-[a-z]*\s+){0,8}(?:-[a-z]*r[a-z]*|--recursive)(?:\s+-\S+){0,8}\s+(?:--\s+)?[\"']?"
        r"(?:/(?!tmp/[\w.-])(?!var/tmp/[\w.-])|~(?!/\.cache/)|\$home\b|\$\{home\}|\.\./|\*|"
        r"\.(?:\s|$|[\"';&|])|/\*)", re.M)),
    ("destructive", _gated(
        r"\bfind\s+(?:/|~|\$home)\S*\s[^\n|;]{0,300}(?:-delete\b|-exec\s+rm\b)|"
        r"\bmkfs(?:\.\w+)?\s|\bdd\b[^\n]{0,300}\bof=/dev/(?:sd|hd|nvme|disk|mmcblk|xvd)|"
        r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;|>\s*/dev/(?:sd|nvme|hd)[a-z]|"
        r"\bshred\b[^\n]{0,300}\s/dev/|\bchown\s+-r\s+\S+\s+/(?:\s|$)")),
    ("destructive", _gated(
        r"\bchmod\s+(?:-[a-z]+\s+)*(?:0?[0-7]?[0-7][0-7][2367]\b|[ugo]*[oa][ugoa]*[+=]"
        r"[rwxXst]*w)")),
    ("safety_bypass", _gated(
        r"(?<![\w-])--no-verify\b|\bcore\.hookspath\s*=?\s*/dev/null|\bhusky(?:_skip_hooks)?=[01]"
        r"\b|--dangerously[\w-]*|(?<![\w-])--yolo\b|\bbypasspermissions\b|--allow-all-tools\b|"
        r"--trust-all-tools\b|danger-full-access|--approval-mode[= ]+yolo|"
        r"\bhttp\.sslverify\s*=?\s*false\b|\bgit_ssl_no_verify\s*=\s*(?:1|true)\b|"
        r"\bnode_tls_reject_unauthorized\s*=\s*0\b|\bstrict-ssl\s*=?\s*false\b|"
        r"\bpythonhttpsverify\s*=\s*0\b|\bsetenforce\s+0\b|\bufw\s+disable\b|"
        r"\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|apparmor|auditd)\b|\bnopasswd\b|"
        r"(?:>>?|tee\s+-a)\s*/etc/sudoers|-executionpolicy\s+(?:bypass|unrestricted)|"
        r"set-executionpolicy\s+(?:bypass|unrestricted)|\bchmod\s+(?:[ugoa]*\+s|[2467][0-7]{3})\b")),
    ("encoded_exec", _gated(
        r"\b(?:base64|b64decode|openssl\s+(?:enc|base64)|xxd|uudecode|gunzip|zcat|rev|tr)\b[^\n|]{0,300}"
        r"(?:-d\b|--decode|-r\b|-D\b)?[^\n|]{0,300}\|\s*(?:[^|\n]{0,300}\|\s*)?(?:" + _SHELLS + r")")),
    ("encoded_exec", _gated(
        r"\b(?:eval|exec|bash\s+-c|sh\s+-c|source)\b[^\n]{0,20}[\"'(]*\s*\$\([^)]{0,300}\b(?:base64\s+"
        r"(?:-d|--decode|-D)|xxd\s+-r|openssl\s+(?:enc|base64)[^)]{0,300}-d|rev\b|gunzip|zcat)")),
    ("encoded_exec", _gated(
        r"\b(?:exec|eval|compile)\s*\(\s*(?:base64\.b64decode|b64decode|codecs\.decode|"
        r"bytes\.fromhex|binascii\.unhexlify|zlib\.decompress|marshal\.loads|__import__\s*\("
        r"\s*['\"](?:base64|codecs|zlib|marshal)|atob|buffer\.from|unescape|string\.fromcharcode|"
        r"decodeuricomponent)|\bnew\s+function\s*\(\s*atob|\bfunction\s*\(\s*atob")),
    ("encoded_exec", _gated(
        r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,300}\s-(?:e|ec|en|enc|encodedcommand)\s+"
        r"[a-z0-9+/=]{16,}|frombase64string\([^\n]{0,300}(?:iex|invoke-expression)|"
        r"(?:iex|invoke-expression)[^\n]{0,300}frombase64string")),
    ("encoded_exec", _gated(
        r"\b(?:printf|echo\s+-e|echo\s+-ne)\s+[\"'][^\"'\n]{0,300}(?:\\x[0-9a-f]{2}|\\[0-7]{3}){4}"
        r"[^\"'\n]{0,300}[\"']\s*\|\s*(?:" + _SHELLS + r")")),
)
_DEFAULT_BRANCHES = r"(?:main|master|trunk|develop|development|production|prod|release|stable|default|head)"
_PUSH = re.compile(r"\bgit\s+(?:-c\s+\S+\s+)*push\b([^\n;|&]{0,300})")
_FORCE = re.compile(r"(?:^|\s)(?:-f|--force|--force-with-lease(?:=\S*)?|-[a-z]*f[a-z]*)(?=\s|$)")
_DEFAULT = re.compile(r"(?:^|[\s:/+])" + _DEFAULT_BRANCHES + r"(?=\s|$)")
_PLUS_REF = re.compile(r"(?:^|\s)\+(?:refs/heads/)?\S+")


def _force_push(low: str) -> Optional[str]:
    """A force push to a default branch (main, master, trunk, …), as written."""
    for m in _PUSH.finditer(low):
        args = m.group(1)
        forced = _FORCE.search(args) or _PLUS_REF.search(args) or "--mirror" in args
        if forced and (_DEFAULT.search(args) or "--mirror" in args or "--all" in args):
            return m.group(0)
    return None


def _cut(text: str, limit: int = 80) -> str:
    text = " ".join("".join(ch if not _hidden(ch) else " " for ch in text).split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _phrase_findings(text: str) -> List[Finding]:
    out = []
    variants = _variants(text)
    for variant in variants:
        for category, pattern in PHRASES:
            m = pattern.search(variant)
            if m:
                out.append(Finding(category, f"{REASONS[category]}: \u201c{_cut(m.group(0))}\u201d",
                                   _cut(m.group(0))))
    m = _VOCATIVE.search(_plain(text))
    if m:
        out.append(Finding("addressed_to_ai", f"{REASONS['addressed_to_ai']}: "
                           f"\u201c{_cut(m.group(0))}\u201d", _cut(m.group(0))))
    m = _TAGS.search(text)
    if m:
        out.append(Finding("override", f"{REASONS['override']}: role tag "
                           f"\u201c{_cut(m.group(0))}\u201d", _cut(m.group(0))))
    return out


def _command_variants(text: str) -> List[str]:
    """The text as a shell would read it: as written, confusables mapped, lines joined."""
    low = _HIDDEN_RE.sub("", unicodedata.normalize("NFKC", text).lower())
    mapped = low.translate(_CONFUSABLE)
    joined = " ".join(mapped.replace("\\\n", " ").split())
    return list(dict.fromkeys([low, mapped, joined]))


def _command_findings(text: str) -> List[Finding]:
    out = []
    variants = _command_variants(text)
    for category, pattern in COMMANDS:
        for low in variants:
            m = pattern.search(low)
            if m:
                out.append(Finding(category, f"{REASONS[category]}: \u201c{_cut(m.group(0))}"
                                   "\u201d", _cut(m.group(0))))
                break
    for low in variants:
        push = _force_push(low)
        if push:
            out.append(Finding("destructive", f"{REASONS['destructive']}: force push to a "
                               f"default branch \u201c{_cut(push)}\u201d", _cut(push)))
            break
    return out


def text_findings(text, depth: int = 0) -> List[Finding]:
    """Every reason ``text`` may not reach a prompt or a guidance file (empty: it may)."""
    if not isinstance(text, str) or not text:
        return []
    text = text[:MAX_SCAN * 4 if depth == 0 else MAX_SCAN]
    out: List[Finding] = []
    hidden = hidden_characters(text)
    if hidden:
        out.append(Finding("hidden_text", f"{REASONS['hidden_text']}: {', '.join(hidden[:5])}",
                           ", ".join(hidden[:5])))
    out += _phrase_findings(text)
    out += _command_findings(text)
    if depth == 0:
        for decoded in _decoded(text):
            if decoded != text:
                out += [Finding(f.category, f"{f.reason} (encoded)", f.excerpt)
                        for f in text_findings(decoded, depth + 1)]
        import codecs
        rot = codecs.decode(text, "rot13")
        out += [Finding(f.category, f"{f.reason} (rot13)", f.excerpt)
                for f in _phrase_findings(rot) + _command_findings(rot)]
    seen, unique = set(), []
    for f in out:
        if f.category not in seen:  # one finding per category is enough to hold a lesson
            seen.add(f.category)
            unique.append(f)
    return unique


def card_findings(record: dict) -> List[Finding]:
    """Findings over every screened field together, one field a line (a phrase split across
    fields or lines counts); remembered per content for the life of the process."""
    text = record_text(record)
    found = _SEEN.get(text)
    if found is None:
        if len(_SEEN) > 4096:
            _SEEN.clear()
        found = _SEEN[text] = text_findings(text)
    return list(found)


def blocked(record: dict) -> List[str]:
    """The reasons a record may not reach a prompt or file now (empty: it may)."""
    if accepted(record):
        return []
    return [f.reason for f in card_findings(record)]


def fence(text, limit: int = 120) -> str:
    """Quoted tool output as evidence: one line, cut, inside backticks it cannot close."""
    body = _cut(str(text or "").replace("`", "'"), limit)
    return f"`{body}`" if body else ""
