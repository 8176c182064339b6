"""Required literals of a regular expression: a cheap check before an expensive search.

The safety screen runs about forty patterns over every lesson it judges, most of them
alternations that Python's engine must try at every position (20-190 us each on a
lesson of 700 characters). Almost every lesson contains none of the words a pattern
needs (``curl``, ``--no-verify``, ``ignore``), and ``str.__contains__`` finds that out
in well under a microsecond. ``required`` reads a pattern's parse tree and returns
strings one of which every match must contain, so skipping the search when none is in
the text never changes an answer. Derived, not written by hand: a new alternative in a
pattern cannot be forgotten in its gate. Standard library only.
"""

import re
from typing import List, Optional, Sequence, Tuple

try:  # Python 3.11 renamed the parser; both name the same tree
    from re import _constants as _c, _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

Clause = Tuple[str, ...]          # the text holds one of these strings
Gate = Optional[Tuple[Clause, ...]]  # every clause holds; None: nothing required (always search)
CLAUSES = 3                        # the most selective clauses kept: each costs a few ``in``
_REPEATS = tuple(getattr(_c, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(_c, name))
_GROUPS = tuple(getattr(_c, name) for name in ("ATOMIC_GROUP",) if hasattr(_c, name))


def required(pattern) -> Gate:
    """Clauses every text ``pattern`` (compiled, or ``Gated``) matches satisfies (each: it holds
    one of the clause's strings), or None. Case-insensitive patterns get None (their literals
    are not the text's)."""
    source = pattern.pattern
    if not isinstance(source, str):
        return None
    tree = _p.parse(source, pattern.flags)
    if tree.state.flags & re.IGNORECASE:
        return None
    clauses = sorted({_lean(c) for c in _sequence(list(tree))},
                     key=lambda c: (_selectivity(c), c), reverse=True)  # the same in any process
    # the most selective clauses, the one cheapest to check (fewest strings) first
    return tuple(sorted(clauses[:CLAUSES], key=len)) or None


_UNKNOWN = object()


class Gated:
    """A pattern searched only when the text passes its gate, compiled on the first search
    that gets that far: most lessons pass no gate, so a process that judges a few compiles
    few patterns. ``known`` maps sources to gates derived ahead (``gates.GATES``); a pattern
    missing there has its gate derived on first use (the same answer, 0.2 ms later)."""

    __slots__ = ("pattern", "flags", "_gate", "_compiled")

    def __init__(self, pattern: str, flags: int = 0, known: Optional[dict] = None):
        self.pattern, self.flags = pattern, flags
        self._gate = known.get(pattern, _UNKNOWN) if known is not None else _UNKNOWN
        self._compiled: Optional["re.Pattern"] = None

    @property
    def gate(self) -> Gate:
        if self._gate is _UNKNOWN:
            self._gate = required(self)
        return self._gate

    @property
    def compiled(self) -> "re.Pattern":
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str):
        """``re.search`` of the pattern, or None at once when ``text`` fails the gate."""
        return self.compiled.search(text) if passes(self.gate, text) else None


def passes(gate: Gate, text: str) -> bool:
    """Whether ``text`` may match: every clause has a string in it (or there is no gate)."""
    if gate is None:
        return True
    for clause in gate:
        for s in clause:
            if s in text:
                break
        else:
            return False
    return True


def _lean(clause: Clause) -> Clause:
    """Without strings that hold another one of the clause: the text holds the shorter one."""
    return tuple(sorted(s for s in set(clause) if not any(o != s and o in s for o in clause)))


def _selectivity(clause: Clause):
    return min(map(len, clause)), -len(clause)


def _sequence(items: Sequence) -> List[Clause]:
    """A sequence matches only if each item does: every item's clauses hold for it all, and
    a run of plain characters is one string."""
    out: List[Clause] = []
    run = ""
    for op, arg in items:
        if op is _c.LITERAL:
            run += chr(arg)
            continue
        if run:
            out.append((run,))
            run = ""
        out.extend(_node(op, arg))
    return out + [(run,)] if run else out


def _node(op, arg) -> List[Clause]:
    if op is _c.SUBPATTERN:  # (group, flags added, flags removed, body)
        return [] if arg[1] & re.IGNORECASE else _sequence(list(arg[-1]))
    if op in _GROUPS:
        return _sequence(list(arg))
    if op in _REPEATS:
        low, _, body = arg
        return _sequence(list(body)) if low >= 1 else []
    if op is _c.BRANCH:  # one of the branches: the best clause of each, any of them
        out: list = []
        for branch in arg[1]:
            clauses = _sequence(list(branch))
            if not clauses:
                return []  # one branch needs nothing: the alternation needs nothing
            out.extend(max(clauses, key=_selectivity))
        return [tuple(out)]
    if op is _c.IN and arg and all(o is _c.LITERAL for o, _ in arg):
        return [tuple(chr(a) for _, a in arg)]  # [ab]: one of these characters
    return []  # classes, any character, anchors, lookarounds, back references
