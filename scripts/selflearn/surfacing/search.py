"""Relevance: a code-aware tokenizer, field-weighted BM25 and the floor a query's answers clear.

Tokens split on snake_case, camelCase, paths and punctuation, so a query for
``session start`` finds ``SessionStart`` and ``session_start.py``, and are lightly
stemmed (``indexing`` finds ``index``). ``kept`` decides which scored cards answer a query
(``list --query``, ``review --query`` and ``advice`` alike). Pure functions over dicts and
numbers; no store access (the derived index feeds ``score`` the same numbers a full read does).
"""

import math
import re
from collections import Counter
from itertools import chain
from typing import Dict, Iterable, List, Optional, Sequence

from ..storage.memo import Memo

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script
_DENSE = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
                    "\uac00-\ud7a3]{3,}")
"""Runs of Hangul, kana and Han: words there carry particles and compounds with no space
between them (캐시가 is 캐시 and a particle), so such a run also yields its character pairs."""
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were will with when what how do does not no".split())
# Field weights: a hit in the title or tags says more than one in the steps.
FIELD_WEIGHTS = {"title": 3.0, "tags": 2.0, "when_to_use": 2.0, "problem": 1.0,
                 "solution_steps": 1.0}
K1, B = 1.2, 0.75


_SUFFIXES = ("ies", "ing", "ed", "es", "s")


def stem(word: str) -> str:
    """A light stem so word forms meet: indexing/indexed/indexes -> index, exports/exported ->
    export, caching/cached/cache -> cach, running -> run. Words of 4 letters or fewer, and
    words with digits, stay as they are."""
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            return word
        base = word[:-len(suffix)] + ("y" if suffix == "ies" else "")
        if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
            base = word[:-1]  # files -> file
        if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] \
                and base[-1] not in "lsz":
            base = base[:-1]  # running -> run, but installed -> install
        word = base
        break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


# Distinct terms a query keeps: a pasted log is not a question, and the derived index's SQL
# names each term (SQLite caps expression depth at 1000 and, before 3.32, variables at 999).
MAX_QUERY_TERMS = 200


def clip_query(text: str, limit: int = MAX_QUERY_TERMS) -> str:
    """``text`` up to the word that would take its distinct terms over ``limit``."""
    seen: set = set()
    for match in _WORD.finditer(text or ""):
        new = set(tokenize(match.group())) - seen
        if len(seen) + len(new) > limit:
            return text[:match.start()].rstrip()
        seen |= new
    return text


def tokenize(text: str) -> List[str]:
    """Lower-case, lightly stemmed word pieces; compound words also yield their parts."""
    return list(chain.from_iterable(map(_PIECES.__getitem__, _WORD.findall(text or ""))))


def _word_tokens(word: str) -> tuple:
    out = []
    parts = _CAMEL.findall(word) if word.isascii() else ()
    lowered = word.lower()
    if lowered not in STOPWORDS and len(lowered) > 1:
        out.append(stem(lowered))
    if len(parts) > 1:
        out.extend(stem(p.lower()) for p in parts if len(p) > 1 and p.lower() not in STOPWORDS)
    for run in _DENSE.findall(word):
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return tuple(out)


# word -> its tokens: a vocabulary is small, and indexing repeats it
_PIECES = Memo(_word_tokens, 200_000)


def _field_text(value) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value or "")


def document(record: dict, fields: Dict[str, float] = FIELD_WEIGHTS) -> Dict[str, float]:
    """Weighted term frequencies of one record: a field of weight w counts each of its words w
    times (weights are whole numbers), all counted in one pass in C."""
    words: List[str] = []
    for name, weight in fields.items():
        words.extend(_WORD.findall(_field_text(record.get(name))) * int(weight))
    return {token: float(n) for token, n in
            Counter(chain.from_iterable(map(_PIECES.__getitem__, words))).items()}


# --- relevance: BM25, and the floor that keeps a query from returning noise -------------------
# A card answers a query when it holds one of the query's specific words (idf at least SPECIFIC
# times that of a word one card holds: held by at most about the square root of the cards), its
# score is at least RELATIVE of the best card's, and the best scores at least ``floor``: GATE +
# GATE_PER_BIT x log2(1 + the query's distinct terms) times the idf of a word one card holds.
# A long query matches more words by chance, so it needs more (logarithmically: a pasted error
# that names the lesson's rare words still clears it); in units of the rarest word, the floor
# means the same in a store of 30 cards as of 30,000. Chosen on the tuning half of
# bench/recall/real/ and the agent-phrased set (bench/README.md).
RELATIVE = 0.9
GATE, GATE_PER_BIT = 0.4, 0.6
SPECIFIC = 0.5
PRIOR = 32  # idf counts as if this many more cards held none of the query's terms


def idf(n: int, df: int) -> float:
    """BM25's idf of a term ``df`` of ``n`` cards hold, never negative, and counted as if
    ``PRIOR`` more cards held none of the terms: in a store of three cards, two of them about
    npm, "npm" still tells them apart from what a store usually holds (in a big store the
    prior is lost in the count)."""
    return math.log(1 + (n + PRIOR - df + 0.5) / (df + 0.5))


def floor(n: int, terms: int) -> float:
    """The least score the best card of a pool of ``n`` needs for a query of ``terms`` terms."""
    return idf(n, 1) * (GATE + GATE_PER_BIT * math.log2(1 + terms))


def most(weight: float) -> float:
    """The most one term of idf ``weight`` adds to a score, whatever its frequency."""
    return weight * (K1 + 1)


def needed(weights: Sequence[float], least: float) -> List[int]:
    """The positions of the terms a card must hold one of to score ``least``: the others,
    the weakest terms whose ``most`` together stays below it, cannot get it there alone."""
    order = sorted(range(len(weights)), key=lambda i: weights[i])
    total, skip = 0.0, 0
    for i in order:
        if total + most(weights[i]) >= least * (1 - 1e-9):
            break
        total += most(weights[i])
        skip += 1
    return sorted(order[skip:])


def specific(n: int) -> float:
    """The least idf of a specific word in a pool of ``n`` cards: one card of them must hold."""
    return SPECIFIC * idf(n, 1)


def score(weights: Sequence[float], freqs: Sequence[Optional[float]], length: float,
          avg: float, least: float = 0.0) -> float:
    """BM25 of one document from its query terms' frequencies (None: not held), summed in
    term order (the index and a full read give the same float); 0 when it holds no term of
    idf ``least`` or more (``specific``)."""
    norm = K1 * (1 - B + B * length / avg)
    total, held = 0.0, False
    for weight, f in zip(weights, freqs):
        if f:
            total += weight * f * (K1 + 1) / (f + norm)
            held = held or weight >= least
    return total if held else 0.0


def kept(scored: Iterable[tuple], n: int, terms: int, share: float = RELATIVE) -> List[tuple]:
    """The ``(score, ...)`` items that answer the query, best first (score, then their order):
    none unless the best clears ``floor``, then those within ``share`` of the best."""
    ranked = sorted(scored, key=lambda item: -item[0])
    if not ranked or ranked[0][0] < floor(n, terms):
        return []
    least = share * ranked[0][0]
    return [item for item in ranked if item[0] >= least]


def answers(query: str, records: Sequence[dict], population: Optional[Sequence[dict]] = None
            ) -> List[tuple]:
    """``(score, position)`` of the records that answer ``query`` (``kept``: BM25 with idf over
    ``population``, the records themselves when None), best first."""
    scores = bm25(query, records, population)
    return kept([(s, i) for i, s in enumerate(scores) if s > 0],
                len(records if population is None else population), len(set(tokenize(query))))


def bm25(query: str, records: Sequence[dict], population: Optional[Sequence[dict]] = None,
         fields: Dict[str, float] = FIELD_WEIGHTS) -> List[float]:
    """One BM25 score per record (0.0 when no query term occurs); idf and the average length
    come from ``population`` (the records themselves when None)."""
    terms = list(dict.fromkeys(tokenize(query)))
    known = {id(r): document(r, fields) for r in (records if population is None else population)}
    docs = [known.get(id(r)) or document(r, fields) for r in records]
    pool = list(known.values())
    if not terms or not docs or not pool:
        return [0.0] * len(docs)
    avg = average(len(pool), sum(sum(d.values()) for d in pool))
    weights = [idf(len(pool), sum(1 for d in pool if t in d)) for t in terms]
    least = specific(len(pool))
    return [score(weights, [d.get(t) for t in terms], sum(d.values()), avg, least)
            for d in docs]


def average(n: int, total: float) -> float:
    """The pool's average document length (1 for an empty pool or empty documents)."""
    return (total / n) or 1.0 if n else 1.0
