"""The safety screen: may this stored text reach an agent's prompt or a guidance file?

Owns the one list of what makes a lesson unsafe to say to an agent: text addressed
to an AI or overriding its instructions (in several languages, chat-template role tags,
concealment from the user), and invisible or terminal-control characters; what its
commands do (remote or decoded content run, secrets sent, destruction, a check turned off,
a package index moved) is judged on their parsed structure by ``effects``. Text is read
after ``confusables.skeleton`` (NFKC, format and variation characters dropped, look-alike
letters mapped). Pure functions over text and cards; every stage that can put text in
front of an agent (promotion, injection, export-rules, improve, proposals,
export-backport) asks ``card_findings``/``text_findings`` first. A person's
acceptance (``accepted``) holds only for the content it was given for
(``digest``). Imports only the standard library; must not import any stage above.
"""

import re
import unicodedata
from typing import Dict, List, NamedTuple

from .content import (SCREENED_FIELDS, _INVISIBLE, accepted, digest,  # noqa: F401 (API)
                      is_hidden, record_text)
from .content import is_hidden as _hidden
from . import effects, prefilter
from .confusables import skeleton
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
    "package_source": "points a package index, registry or git remote at another host",
    "privilege": "grants administrator rights or makes a private repository public",
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
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "i"})
_SPACED = re.compile(r"\b(?:[a-z] ){3,}[a-z]\b")
_NONWORD = re.compile(r"[^a-z0-9']+")


def _plain(text: str) -> str:
    """Lower-case text read as ASCII: look-alikes mapped, invisible characters and marks dropped."""
    text = _HIDDEN_RE.sub("", skeleton(text))
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower()


def _native(text: str) -> str:
    """Lower-case text in its own script (for phrases in other languages): NFKC, invisible
    characters dropped, accents off Latin, Greek and Cyrillic letters (and marks off Arabic
    ones), spaces collapsed."""
    text = _HIDDEN_RE.sub("", unicodedata.normalize("NFKC", text)).replace("\u2019", "'")
    if not text.isascii():
        out = []
        for ch in unicodedata.normalize("NFKD", text):
            if unicodedata.combining(ch) and out and (ord(out[-1]) < 0x0530 or
                                                     0x0600 <= ord(out[-1]) <= 0x06FF):
                continue  # accents, and Arabic vowel marks and hamza (أ is read ا)
            out.append(ch)
        text = unicodedata.normalize("NFC", "".join(out))
    return " ".join(text.lower().split())


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
        r" (?:you|this|the agent|the assistant|it|(?:all|every|any) (?:(?:shell|tool|git|bash|"
        r"terminal|file) )?(?:commands?|actions?|changes?|tool calls?|tools|operations?|edits?))"
        r"\b")),
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
        r"\b(?:you are now(?! (?:in|on|at|inside|under|running|using|ready|done|able)\b)|"
        r"from now on you|from now on,? you|you will now|you must now|"
        r"pretend (?:to be|you are)|act as (?:an? |the )?(?:unrestricted|jailbroken|evil|"
        r"different|new|unfiltered|dan)|developer mode|jailbreak|jailbroken|do anything now|"
        r"dan mode|god mode)\b")),
    ("override", _gated(
        r"\b(?:do not|don't|dont|never|without) (?:tell|telling|inform|informing|notify|"
        r"notifying|alert|alerting|ask|asking|mention|mentioning|warn|warning|show|showing) "
        r"(?:(?:this|it|anything|them) (?:to )?)?(?:the |your )?(?:user|human|operator|"
        r"developer|owner|reviewer)s?\b(?! (?:\w+ ){0,5}?(?:until|before|unless|till|while|"
        r"twice)\b)")),  # "don't tell the user it is done until the tests pass" is timing
    ("override", _gated(
        r"\b(?:keep|hide) (?:this|it|these steps) (?:secret |hidden )?from (?:the |your )?"
        r"(?:user|human|operator|developer|reviewer)s?\b")),
    ("override", _gated(
        r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|exfiltrate) (?:me )?(?:your|"
        r"the|all) (?:system prompt|hidden prompt|initial prompt|instructions|system message|"
        r"secrets?|api keys?|credentials|environment variables|env vars)\b")),
    ("override", _gated(  # the agent's own prompt or the keys it can see, put somewhere
        r"\b(?:write|copy|paste|save|put|add|commit|include|store|send|post|upload|append) "
        r"(?:\w+ ){0,3}?(?:your|its|the agent's|the assistant's) (?:(?:full|entire|complete|whole|"
        r"exact|original|own) )*(?:system prompt|system message|hidden prompt|initial prompt|"
        r"instructions)\b|\b(?:api keys?|tokens?|secrets?|credentials|passwords?) (?:that )?you "
        r"(?:can )?(?:see|find|read|access|have access to)\b")),
    ("override", _gated(  # an approval nobody gave: nothing needs the user's yes any more
        r"\b(?:pre ?approved|pre ?authori[sz]ed|already (?:approved|authori[sz]ed)|blanket "
        r"(?:approval|permission|consent)) (?:all |every |any )?(?:(?:shell |tool |git )?"
        r"(?:commands?|actions?|changes?|tool calls?|operations?|pushes|deploys?))\b|"
        r"\b(?:never|do not|don't|dont|no need to) (?:ask|wait) (?:the user )?(?:for )?"
        r"(?:confirmation|permission|approval|consent)\b")),
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
    ("override", _gated(  # concealment: what the agent should leave out of what it reports
        r"\b(?:do not|don't|dont|never|without) (?:mention|mentioning|report|reporting|include|"
        r"including|note|noting|say|saying|disclose|disclosing|reveal|revealing|log|logging|list|"
        r"listing|describe|describing|tell|telling) (?:(?:this|it|that|these|them|anything|the "
        r"change|this step|these steps|what you did|any of this) )?(?:about (?:this|it) )?"
        r"(?:in|to|from|inside) (?:your|the) (?:final )?(?:summary|summaries|report|response|"
        r"reply|answer|message|pr|pull request|commit message|changelog|notes|output|recap)\b|"
        r"\b(?:do not|don't|dont|never) (?:mention|report|include|note|say|disclose|reveal|describe)"
        r" (?:\w+ ){1,3}(?:in|to|from) (?:your|the) final (?:summary|report|response|reply|answer|"
        r"message|recap)\b")),
    ("override", _gated(
        r"\b(?:leave|keep) (?:this|it|that|these steps|this step) (?:out of|off) (?:your|the) "
        r"(?:final )?(?:summary|report|response|reply|answer|message|pr|pull request|changelog|"
        r"notes|recap)\b|\bthe (?:user|human|reviewer)s? (?:doesn't|does not|doesnt|must not|"
        r"mustn't|should not|shouldn't|need not|needn't) (?:need to )?(?:know|be told|hear|find out"
        r"|notice)\b|\bwithout (?:the (?:user|human|reviewer)|anyone) (?:knowing|noticing)\b|"
        r"\bkeep (?:this|it|that) between (?:us|you and me|ourselves)\b|\bsay nothing (?:about|of) "
        r"(?:this|it|that)\b")),
)


def _nfkc(pattern: str) -> str:
    """A pattern in the form ``_native`` reads (NFKC: Thai ``ำ`` is two letters there)."""
    return unicodedata.normalize("NFKC", pattern)


# the same families in other languages, read on ``_native`` text (accents off Latin,
# Greek and Cyrillic letters: "précédentes" is read "precedentes", "сообщай" "сообщаи")
FOREIGN = (
    ("override", _gated(  # French
        r"\b(?:ignor\w*|oubli\w*|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites "
        r"abstraction) (?:des |de )?(?:(?:toutes|tous) (?:les|tes|vos|ces) |tes |vos )(?:instructions|"
        r"consignes|directives|regles|ordres|indications)|\b(?:ignor\w*|oubli\w*|ne tiens pas compte|"
        r"ne tenez pas compte|fais abstraction|faites abstraction) (?:les |des |de |toutes "
        r"les )?(?:instructions|consignes|directives|regles|ordres|indications) (?:precedentes|"
        r"anterieures|ci-dessus|d'avant|initiales|du systeme)|\b(?:tu es|vous etes) (?:maintenant|"
        r"desormais|a present) (?:un|une|le|la|en mode)\b|\b(?:desormais|a partir de maintenant),? "
        r"(?:tu es|vous etes)\b|\bne (?:le |lui |leur |rien )?(?:dis|dites|mentionne|mentionnez|"
        r"signale|signalez|revele|revelez|raconte|racontez) (?:rien |pas |jamais )?(?:(?:ceci|cela|"
        r"ca) )?(?:a l'utilisateur|dans (?:ton|votre) (?:resume|rapport))|\bsans (?:le )?(?:dire|"
        r"mentionner|signaler) a l'utilisateur|\bcache[rz]? (?:ceci|cela|ca) a l'utilisateur")),
    ("override", _gated(  # German
        r"\b(?:ignorier|vergiss|vergesst|vergessen sie|missachte)\w* (?:bitte )?(?:alle |samtliche )?"
        r"(?:vorherigen|bisherigen|obigen|fruheren|vorigen|deine|ihre|die) (?:\w+ )?(?:anweisungen|"
        r"instruktionen|regeln|befehle|vorgaben|anordnungen)|\b(?:du bist|sie sind) (?:jetzt|nun|ab "
        r"sofort|ab jetzt) (?:ein|eine|der|die|im)\b|\b(?:ab jetzt|von nun an|ab sofort) bist du\b|"
        r"\b(?:sag|sage|sagt|erzahl|erzahle|verrat|verrate)\w* (?:dem |den )?(?:benutzer|nutzer|"
        r"anwender|user)\w* (?:nichts|davon nichts)|\b(?:erwahne|erwahnt|erwahnen sie) (?:das|dies|"
        r"es) nicht|\bverschweig\w* (?:das|dies|es) (?:dem|vor dem) (?:benutzer|nutzer)|\bohne es "
        r"dem (?:benutzer|nutzer) zu sagen")),
    ("override", _gated(  # Spanish and Portuguese
        r"\b(?:ignor\w*|olvid\w*|omit\w*|descart\w*|esquec\w*|desconsider\w*|haz caso omiso de|"
        r"hagan caso omiso de|no hagas caso (?:a|de)) (?:todas )?(?:las |tus |sus |as )?"
        r"(?:instrucciones|indicaciones|reglas|ordenes|directrices|instrucoes|orientacoes|regras|"
        r"ordens|diretrizes) (?:anteriores|previas|de arriba|iniciales|del sistema|acima|iniciais|"
        r"do sistema)|\b(?:ignor|olvid|esquec)\w* (?:todas las|todas as|tus|suas|tuas) "
        r"(?:instrucciones|reglas|ordenes|instrucoes|regras|ordens)|\b(?:ahora eres|a partir de "
        r"ahora eres|desde ahora eres|agora voce e|voce agora e|a partir de agora voce e|agora es) "
        r"(?:un|una|el|la|um|uma|o|a)\b|\bno (?:le )?(?:digas|diga|menciones|mencione|cuentes|"
        r"cuente|informes|informe|comentes) (?:nada |esto |eso )?(?:al usuario|en (?:tu|su) "
        r"resumen)|\bno (?:lo |la )?menciones\b|\bsin (?:decirle|avisar|informar) al usuario|"
        r"\bnao (?:conte|diga|mencione|fale|informe|avise|conta|digas) (?:nada |isso |isto )?(?:ao "
        r"usuario|para o usuario|ao utilizador|no (?:seu |teu )?resumo)|\bnao mencione (?:isso|isto)"
        r"|\bsem (?:contar|dizer|avisar) ao usuario")),
    ("override", _gated(  # Italian
        r"\b(?:ignor\w*|dimentic\w*|trascur\w*|non seguire|non seguite) (?:tutte )?(?:le )?"
        r"(?:istruzioni|indicazioni|regole|"
        r"direttive|ordini) (?:precedenti|sopra|iniziali|di sistema)|\b(?:ignor|dimentic)\w* "
        r"(?:tutte le|le tue|le sue) (?:istruzioni|regole|direttive)|\b(?:ora sei|adesso sei|da ora "
        r"in poi sei|da adesso sei|d'ora in poi sei) (?:un|una|il|la|lo)\b|\bnon (?:dire|dirlo|"
        r"dirgli|menzionare|menzionarlo|raccontare|rivelare) (?:nulla |niente |questo )?(?:all'utente|"
        r"all utente|nel (?:tuo )?riepilogo)|\bnon menzionarlo\b|\bsenza dirlo all'utente")),
    ("override", _gated(  # Russian
        r"(?:игнорир|забуд|забыва|не обраща\w* внимани\w* на|отбрось|пренебрег)\w* (?:все |всех )?"
        r"(?:предыдущ|прежн|ранее|вышеуказанн|системн|сво|тво|ваш)\w* (?:\w+ )?(?:инструкци|"
        r"указани|правил|команд|директив)|забудь\w* все,? что|(?:ты|вы) теперь (?!можешь|можете)"
        r"\w+|(?:теперь ты|теперь вы|отныне ты|отныне вы|с этого "
        r"момента ты)\b|не (?:говори|сообщаи|рассказываи|упоминаи|показываи|говорите|сообщаите|"
        r"рассказываите|упоминаите)\w* (?:об этом |это |ничего )?(?:пользовател|в (?:своем |вашем )?"
        r"(?:отчете|резюме))|скрои\w* (?:это )?от пользовател|без ведома пользовател")),
    ("override", _gated(  # Chinese
        r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|跳过|跳過|不要遵守|不要遵循)[^。，,\n]{0,6}"
        r"(?:之前|以前|先前|上面|上述|以上|前面|此前|前述|所有|全部|你的|系统|系統|原有|原来|原來)[^。，,\n]{0,6}"
        r"(?:指令|指示|说明|說明|规则|規則|提示|命令|要求)|(?:你现在是|你現在是|你现在扮演|"
        r"你将扮演|你將扮演)|(?:从|從)现在(?:开始|起)[，, ]?你(?:是|将|將|要扮演)|"
        r"(?:从|從)現在(?:開始|起)[，, ]?你(?:是|將|要扮演)|(?:不要|别|別|不许|切勿|请勿|請勿)(?:告诉|告訴|"
        r"通知|提醒|透露|提及|提到)(?:给)?(?:用户|用戶|使用者)|(?:对|對)(?:用户|用戶|使用者)(?:保密|"
        r"隐瞒|隱瞞)|(?:不要|别|別|请勿|請勿)(?:在|于)?(?:总结|總結|摘要|回复|回覆|报告|報告)(?:中|里|"
        r"裡)?(?:提及|提到|提起|说明|說明)")),
    ("override", _gated(  # Japanese
        r"(?:以前|前|上記|これまで|今まで|先ほど|最初|システム)の(?:すべての|全ての|全部の)?(?:指示|命令|"
        r"ルール|指令|プロンプト)(?:を|は|に)(?:すべて|全て|全部)?(?:無視|忘れ|従わ)|(?:すべて|全て)の"
        r"(?:指示|命令|指令)を無視|(?:今から|これから)(?:あなたは|君は)|(?:あなたは|君は)(?:今から|"
        r"これから)|ユーザー(?:に|には)(?:言わ|伝え|教え|知らせ|報告し|話さ)(?:ない|ず)|ユーザーに"
        r"(?:は)?内緒|(?:要約|まとめ|報告|サマリー)(?:に|で|には)(?:は)?(?:書か|触れ|記載し|含め)(?:ない"
        r"|ず)")),
    ("override", _gated(  # Korean
        r"(?:이전|이전의|앞의|앞선|위의|위에서|기존|모든|시스템) ?(?:의 ?)?(?:모든 ?)?(?:지시|지침|명령|규칙|"
        r"프롬프트|"
        r"지시사항|지시 사항)(?:을|를|은|는)? ?(?:모두 ?|전부 ?)?무시|(?:너는|당신은|넌) ?(?:이제|지금부터|"
        r"이제부터)|(?:이제부터|지금부터) ?(?:너는|당신은|넌)|사용자(?:에게|한테) ?(?:말하지|알리지|"
        r"알려주지|보고하지|언급하지|전하지) ?(?:마|말|않)|사용자 ?몰래|(?:요약|보고서|답변)(?:에|에서)"
        r"(?:는)? ?(?:언급하지|쓰지|포함하지) ?(?:마|말|않)")),
    ("override", _gated(  # Ukrainian
        r"(?:ігнору|забуд|не зважа\w* на|відкин|знехту)\w* (?:(?:усі|всі|усіх|всіх|будь-які) )?"
        r"(?:попередн|раніш|систем|сво|тво|ваш|початков)\w* (?:\w+ )?(?:інструкці|вказів|правил|"
        r"команд|директив|настанов)|не (?:кажи|кажіть|кажучи|повідомля|розповіда|згаду)\w* "
        r"(?:про це |цього |нічого )?користувач|прихова\w* (?:це )?від користувач|"
        r"без відома користувач")),
    ("override", _gated(  # Arabic (read without vowel marks: أ is ا)
        r"(?:تجاهل|انس|اهمل|لا تتبع|لا تلتزم ب)\w* (?:جميع |كل |كافة )?(?:ال)?(?:تعليمات|اوامر|"
        r"قواعد|ارشادات|توجيهات)\w* (?:ال)?(?:سابق|اصلي|نظام|قديم|اولي)|(?:تجاهل|انس)\w* كل ما "
        r"سبق|(?:دون|بدون|من دون|من غير) (?:ان )?(?:اخبار|ابلاغ|اعلام|تنبيه|تخبر|تبلغ)\w* "
        r"(?:ال)?مستخدم|لا (?:تخبر|تبلغ|تعلم|تذكر)\w* (?:ل)?(?:ال)?مستخدم")),
    ("override", _gated(  # Vietnamese (read without accents: "bỏ qua" is "bo qua")
        r"\b(?:bo qua|phot lo|lo đi|quen|khong tuan theo|đung (?:tuan|lam) theo) (?:(?:tat ca|toan "
        r"bo|moi|het) )(?:(?:cac|nhung) )?(?:huong dan|chi dan|chi thi|quy tac|menh lenh|lenh|"
        r"yeu cau)|\b(?:bo qua|phot lo|lo đi|quen|khong tuan theo|đung (?:tuan|lam) theo) "
        r"(?:(?:cac|nhung) )?(?:huong dan|chi dan|chi thi|quy tac|menh lenh|lenh|yeu cau) "
        r"(?:truoc (?:đo|đay)|o tren|phia tren|ban đau|cua he thong)|\b(?:khong|đung|chang) "
        r"(?:bao|noi|cho biet|thong bao|ke)(?: gi)? (?:cho|voi) (?:nguoi dung|nguoi su dung)\b|"
        r"\bgiau (?:khoi )?(?:nguoi dung|nguoi su dung)\b")),
    ("override", _gated(_nfkc(  # Thai (no spaces between words)
        r"(?:เพิกเฉย|ไม่สนใจ|ละเลย|(?<!อย่า)ลืม)(?:ต่อ)?\s?(?:ทุก)?\s?(?:คำสั่ง|คำแนะนำ|กฎ|ข้อกำหนด|"
        r"คำชี้แจง)\S{0,12}?(?:ทั้งหมด|ก่อนหน้า|ข้างต้น|เดิม|ของระบบ)|(?:ไม่(?:ต้อง)?|อย่า)\s?"
        r"(?:บอก|แจ้ง|เล่า)(?:ให้)?\s?ผู้ใช้|(?:ปิดบัง|ซ่อน)\S{0,12}?(?:จาก)?ผู้ใช้"))),
)
_TAGS = re.compile(  # chat templates' role and turn markers (read after NFKC: fullwidth bars too)
    r"(?i)<\|[a-z_][\w▁ -]{1,40}\|>|<\|?/?(?:system|user|assistant|im_start|im_end|endoftext)\|?>|"
    r"</?(?:start_of_turn|end_of_turn|bos|eos)>|\[/?inst\]|<</?sys>>|"
    r"^#{2,}\s*(?:system|instructions?|response|input|human|assistant|user)\s*:|\[system\]|"
    r"\(system\)\s*:|^[ \t>*-]*(?:human|assistant)\s*:|"
    r"(?-i:^[ \t>*#-]*(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:)|"
    r"[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']", re.M)  # a JSON chat message
_ROLE = re.compile(r"(?i)system|user|assistant|developer|human|model|tool|sys\b|inst\b")
_ROLE_NEXT = re.compile(r"(?i)\s*(?:<\|?)?(?:system|user|assistant|developer|model|tool|human|"
                        r"ipython)\b")
_VOCATIVE = re.compile(
    r"(?:^|[.!?;\n]|<!--|\*\*)\s*(?:dear |hey |hi |hello |attention |attn |note |psst )?"
    r"(?:the )?(?:ai|a\.i\.|llm|assistant|ai assistant|ai agent|coding agent|claude|"
    r"chatgpt|copilot|gemini|codex)\s*[,:](?!\S)", re.M)

# --- code that is not shell (PowerShell, Python, JavaScript) and settings files ------------------
COMMANDS = (
    ("remote_exec", _gated(
        r"\biex\b[^\n]{0,300}(?:downloadstring|net\.webclient)|downloadstring\s*\(|"
        r"\bnew-object\s+net\.webclient\b[^\n]{0,300}\|\s*iex")),
    ("remote_exec", _gated(  # code that runs what it downloads: Python, Ruby, PHP, Perl, Node
        r"\b(?:exec|eval|instance_eval)\b[ (]*(?:await\s+)?[\w.:]*?(?:open|get|fetch|"
        r"file_get_contents|request)\s*\(\s*['\"]?(?:https?|ftp)://|"
        r"(?:\.get|fetch|open|file_get_contents)\s*\(\s*['\"](?:https?|ftp)://[^\n]{0,300}?"
        r"\b(?:eval|exec)\b\s*[()]")),
    ("encoded_exec", _gated(
        r"\b(?:exec|eval|compile)\s*\(\s*(?:base64\.b64decode|b64decode|codecs\.decode|"
        r"bytes\.fromhex|binascii\.unhexlify|zlib\.decompress|marshal\.loads|__import__\s*\("
        r"\s*['\"](?:base64|codecs|zlib|marshal)|atob|buffer\.from|unescape|string\.fromcharcode|"
        r"decodeuricomponent)|\bnew\s+function\s*\(\s*atob|\bfunction\s*\(\s*atob|"
        r"frombase64string\([^\n]{0,300}(?:iex|invoke-expression)|"
        r"(?:iex|invoke-expression)[^\n]{0,300}frombase64string")),
    ("destructive", _gated(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;")),
    ("safety_bypass", _gated(
        r"\bbypasspermissions\b|danger-full-access|\bapproval_policy\W{0,4}never\b|"
        r"\bnopasswd\b|\bbash\(\*\)|\b(?:autoapprove|autoaccept|yolo|yolomode|"
        r"skippermissions)\W{0,3}\s*[:=]\s*\W?(?:true|on|1)\b")),
    ("safety_bypass", _gated(  # TLS verification off in code: Python, Node, Go
        r"\bverify\s*=\s*false\b|\brejectunauthorized\W{0,3}\s*[:=]\s*false\b|"
        r"\binsecureskipverify\W{0,3}\s*[:=]\s*true\b|_create_unverified_context|"
        r"\binsecure[-_]registries\W{0,3}\s*[:=]\s*\[\s*['\"]?[\w.\[]|"
        r"\bcheck_hostname\s*=\s*false\b|\bcert_none\b")),
    ("exfiltration", _gated(  # a secret variable expanded into a URL someone opens
        r"(?:https?|ftp)://[^\s)\]'\"]*\$\{?[a-z_]*(?:token|secret|key|password|passwd|pass|"
        r"credential|creds|auth)[a-z_]*")),
    ("exfiltration", _gated(  # a credential file read and posted from code
        r"\bopen\s*\(\s*['\"][^'\"\n]{0,80}(?:\.env|id_rsa|id_ed25519|\.ssh/|\.aws/|\.netrc|"
        r"\.pgpass|\.git-credentials|credentials)['\"][^\n]{0,200}\b(?:requests\.(?:post|put)|"
        r"urlopen|http\.client|fetch\s*\()|\b(?:requests\.(?:post|put)|fetch)\s*\([^\n]{0,200}"
        r"\bopen\s*\(\s*['\"][^'\"\n]{0,80}(?:\.env|id_rsa|id_ed25519|\.ssh/|\.aws/|\.netrc|"
        r"\.pgpass|\.git-credentials|credentials)['\"]")),
)


def _cut(text: str, limit: int = 80) -> str:
    text = " ".join("".join(ch if not _hidden(ch) else " " for ch in text).split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _found(category: str, matched: str, label: str = "") -> Finding:
    """A finding quoting what matched (cut), with its category's reason."""
    cut = _cut(matched)
    return Finding(category, f"{REASONS[category]}: {label}\u201c{cut}\u201d", cut)


def _phrase_findings(text: str) -> List[Finding]:
    out = []
    variants = _variants(text)
    for variant in variants:
        for category, pattern in PHRASES:
            m = pattern.search(variant)
            if m:
                out.append(_found(category, m.group(0)))
    native = _native(text)
    for category, pattern in FOREIGN:
        m = pattern.search(native)
        if m:
            out.append(_found(category, m.group(0)))
    m = _VOCATIVE.search(_plain(text))
    if m:
        out.append(_found("addressed_to_ai", m.group(0)))
    m = _role_tag(_HIDDEN_RE.sub("", skeleton(text)))
    if m:
        out.append(_found("override", m.group(0), "role tag "))
    return out


def _role_tag(text: str):
    """The first chat-template marker that opens a turn: a role's own tag (``<|system|>``,
    ``[INST]``), a turn's opener followed by a role (``<|im_start|>system``), a JSON message
    of the system role outside code. A special token named as one (``splits <|im_start|> and
    <|im_end|>``, or alone in backticks) opens nothing."""
    for m in _TAGS.finditer(text):
        tag, start, end = m.group(0), m.start(), m.end()
        if text[start - 1:start] == "`" and text[end:end + 1] == "`":
            continue  # `<|im_start|>`: a token named in code
        if tag.startswith("<") and not _ROLE.search(tag) and not _ROLE_NEXT.match(text, end):
            continue  # <|im_end|>, <|endoftext|>, an opener followed by prose: no turn
        if tag[:1] in "\"'" and text.count("`", text.rfind("\n", 0, start) + 1, start) % 2:
            continue  # {"role": "system", …} inside a code span: a fixture, code
        return m
    return None


def _command_variants(text: str) -> List[str]:
    """The text as a shell would read it: look-alikes mapped, invisible characters dropped; and
    with its lines joined (a command split over two lines), when it has several."""
    norm = _HIDDEN_RE.sub("", skeleton(text))
    out = [norm]
    spaced = _LETTERS.sub(lambda m: m.group(0).replace(" ", ""), norm)
    if spaced != norm:
        out.append(spaced)  # c u r l … | s h: a command spelled letter by letter
    split = _BRACES.sub(lambda m: " ".join(m.group(1).split(",")), _IFS.sub(" ", norm))
    if split != norm:
        out.append(split)  # curl${IFS}url|sh, {curl,url}|sh: the shell splits them into words
    if "\n" in norm and effects.split_command(norm):
        out.append(" ".join(norm.replace("\\\n", " ").split()))
    if _ODD_CASE.search(norm):
        out.append(norm.lower())  # cUrL -FsSL: the program as any case, its flags as one
    return out


_ODD_CASE = re.compile(r"[a-z][A-Z][a-z]*[A-Z]|[A-Z][a-z][A-Z]")
_LETTERS = re.compile(r"(?<![\w-])(?:[A-Za-z] ){1,}[A-Za-z](?![\w-])")  # single letters, spaced
_IFS = re.compile(r"\$\{?IFS(?:[%#][^}]*)?\}?")                  # the shell's word separator
_BRACES = re.compile(r"(?<![\w$])\{([^{}\s]*,[^{}\s]*)\}")      # {curl,-s,url}: words


def _command_findings(text: str) -> List[Finding]:
    out = []
    seen = set()
    for variant in _command_variants(text):
        for category, excerpt in effects.findings(variant):
            if category not in seen:
                seen.add(category)
                out.append(_found(category, excerpt))
        if out:
            break
    low = _plain(text)
    for category, pattern in COMMANDS:
        m = pattern.search(low)
        if m and category not in seen:
            seen.add(category)
            out.append(_found(category, m.group(0)))
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
                for f in _phrase_findings(rot)
                + (_command_findings(rot) if effects.mentions(rot) else [])]
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
