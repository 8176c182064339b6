"""Relevance ranking: a code-aware tokenizer, field-weighted BM25 and query coverage.

Tokens split on snake_case, camelCase, paths and punctuation, so a query for
``session start`` finds ``SessionStart`` and ``session_start.py``, and are lightly
stemmed (``indexing`` finds ``index``). Pure functions over dicts; no store access.
"""

import math
import re
from collections import Counter
from itertools import chain
from typing import Dict, List, Sequence

from ..storage.memo import Memo

_WORD = re.compile(r"[A-Za-z0-9]+")
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
    parts = _CAMEL.findall(word)
    lowered = word.lower()
    if lowered not in STOPWORDS and len(lowered) > 1:
        out.append(stem(lowered))
    if len(parts) > 1:
        out.extend(stem(p.lower()) for p in parts if len(p) > 1 and p.lower() not in STOPWORDS)
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


def coverage(query: str, records: Sequence[dict],
             fields: Dict[str, float] = FIELD_WEIGHTS) -> List[float]:
    """Per record, the share of the query's information it answers: the idf of the query
    terms it holds over the idf of all of them (a term no record holds weighs the most)."""
    terms = list(dict.fromkeys(tokenize(query)))
    docs = [document(r, fields) for r in records]
    if not terms or not docs:
        return [0.0] * len(docs)
    n = len(docs)
    idf = {t: math.log(1 + (n - sum(1 for d in docs if t in d) + 0.5)
                       / (sum(1 for d in docs if t in d) + 0.5)) for t in terms}
    total = sum(idf.values()) or 1.0

    def holds(doc: Dict[str, float], term: str) -> bool:  # "cache" in "cacheprovider" counts
        return term in doc or (len(term) >= 4 and any(term in w for w in doc if len(w) > len(term)))
    return [round(sum(idf[t] for t in terms if holds(d, t)) / total, 4) for d in docs]


def bm25(query: str, records: Sequence[dict],
         fields: Dict[str, float] = FIELD_WEIGHTS) -> List[float]:
    """One BM25 score per record (0.0 when no query term occurs)."""
    terms = list(dict.fromkeys(tokenize(query)))
    docs = [document(r, fields) for r in records]
    if not terms or not docs:
        return [0.0] * len(docs)
    lengths = [sum(d.values()) for d in docs]
    avg = (sum(lengths) / len(docs)) or 1.0
    n = len(docs)
    idf = {}
    for term in terms:
        df = sum(1 for d in docs if term in d)
        idf[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    scores = []
    for doc, length in zip(docs, lengths):
        score = 0.0
        for term in terms:
            f = doc.get(term)
            if f:
                score += idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg))
        scores.append(round(score, 4))
    return scores
