"""Letters that look like ASCII ones, and text with them mapped: what the safety screen reads.

Owns ``skeleton``: Unicode compatibility forms folded (NFKC: fullwidth, mathematical
alphanumerics, ligatures), format characters (Cf: zero-width, bidi, tags), variation
selectors and blank look-alikes (braille blank, Hangul fillers) dropped, and the look-alike
letters below mapped to the ASCII letter they imitate. The table is small on purpose (195
letters): the prototypes that Unicode's confusables list (UTS #39, confusables.txt) gives a
single ASCII letter for, among the Cyrillic, Greek, Armenian, Cherokee (capital and small)
and Lisu letters that NFKC leaves alone, the Latin small capitals (by their Unicode names,
``LATIN LETTER SMALL CAPITAL X``) and a few Latin look-alikes (dotless i, script g, alpha).
Only for judging: nothing shown is changed. Imports the standard library only.
"""

import unicodedata

_FROM = (
    "ɢɪɴʀʏʙʜʟᴀᴄᴅᴇᴊᴋᴍᴏᴘᴛᴜᴠᴡᴢꜰꜱꞯаеіјорсухѕһԁԛԝӏүвнмткпьѡАВЕКМНОРСТХ"
    "УЅІЈԚԜҮӀЗαγειηκνορτυχϳωΑΒΕΖΗΙΚΜΝΟΡΤΥΧͿացհոսօզԼՕՍՏᎪꭺᏴᏼᏟꮯᎠꭰᎬꭼᏀ"
    "ꮐᎻꮋᎥꭵᎫꭻᏦꮶᏞꮮᎷꮇᏢꮲᏚꮪᎢꭲᏙꮩᎳꮃᏃꮓᎩꭹᏒꮢꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴıɩɑɡǀ"
    "ᎡꭱᏒꮢᏔꮤᏕꮥᏂꮒᏧꮷᎳꮃ")
_TO = (
    "ginrybhlacdejkmoptuvwzfsqaeijopcyxshdqwlybhmtknbwabekmhopctx"
    "ysijqwyl3ayeinkvoptuxjwabezhikmnoptyxjwghnuoqlousaabbccddeeg"
    "ghhiijjkkllmmppssttvvwwzzyyrrbpdtgkjczfmnlsrvhwxyaeiouiiagl"
    "rrrrwwsshhddww")
TABLE = str.maketrans(_FROM, _TO)


_BLANKS = frozenset((0x2800, 0x115F, 0x1160, 0x3164, 0xFFA0))
"""Letters and symbols that render as blank space but are neither space nor format characters:
the braille pattern blank and the Hangul fillers (``cu\u2800rl`` reads as ``curl``)."""


def _drop(ch: str) -> bool:
    """Format characters, variation selectors and blank look-alikes (code points as ranges)."""
    code = ord(ch)
    return (0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or 0x180B <= code <= 0x180F
            or code in _BLANKS or unicodedata.category(ch) == "Cf")


def skeleton(text: str) -> str:
    """``text`` folded (NFKC), without format or variation characters, look-alikes mapped."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if ch.isascii() or not _drop(ch))
    return text.translate(TABLE)
