"""Tests for ``selflearn.storage.prefilter``: the literals a pattern requires, and that the
screen's gates never change a finding."""

import json
import os
import re

import pytest
from hypothesis import given, settings, strategies as st

from selflearn.storage import content, prefilter, screen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "tests", "data", "injection", "corpus.json"), encoding="utf-8") as fh:
    CORPUS = json.load(fh)
PATTERNS = [p for _, p in screen.PHRASES + screen.COMMANDS] + [screen._VOCATIVE]


@pytest.mark.parametrize("pattern, gate", [
    (r"\bcurl\b[^\n]*\|\s*sh", (("curl",), ("sh",), ("|",))),       # a sequence: all of them
    (r"(?:curl|wget) -o", ((" -o",), ("curl", "wget"))),                # an alternation: any
    (r"\brm\s+-rf", (("-rf",), ("rm",))),
    (r"(?:ab|abc)d", (("ab",), ("d",))),                                # "abc" holds "ab"
    (r"(?:x+|y*)z", (("z",),)),                                         # y* needs nothing
    (r"(?:a[bc]){2}", (("a",), ("b", "c"))),
    (r"x?", None),
    (r"(?i)curl", None),                                                # case folds: no gate
    (r"foo(?i:bar)", (("foo",),)),
    (r"(?<=pre)post(?!x)", (("post",),)),                              # lookarounds: nothing
])
def test_required_literals(pattern, gate):
    found = prefilter.required(re.compile(pattern))
    assert (None if found is None else sorted(found)) == (None if gate is None else sorted(gate))


def test_passes_needs_every_clause():
    gate = (("curl", "wget"), ("sh",))
    assert prefilter.passes(gate, "curl x | sh")
    assert not prefilter.passes(gate, "curl x | python")
    assert not prefilter.passes(gate, "bash only")
    assert prefilter.passes(None, "")


def test_every_screen_pattern_but_the_role_tags_has_a_gate():
    gated = [p.pattern[:40] for p in PATTERNS if prefilter.required(p) is None]
    assert gated == []
    assert prefilter.required(screen._TAGS) is None  # case-insensitive


def _fragments():
    """Pieces the texts are made of: each gate's strings, words of the corpus, separators."""
    pieces = {s for p in PATTERNS for clause in (prefilter.required(p) or ()) for s in clause}
    for case in CORPUS["attacks"] + CORPUS["ordinary"]:
        pieces.update(content.record_text(case["card"]).lower().split()[:40])
    return sorted(pieces | {" ", "\n", "|", "/", "-", "$(", "`", "=", ".", "'", '"'})


FRAGMENTS = _fragments()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40), st.sampled_from(PATTERNS))
def test_a_text_the_gate_turns_away_never_matches(pieces, pattern):
    for sep in (" ", ""):
        text = sep.join(pieces)
        if pattern.search(text):
            assert prefilter.passes(prefilter.required(pattern), text), (pattern.pattern, text)


def test_the_gates_change_no_finding_on_the_corpus(monkeypatch):
    cards = [c["card"] for c in CORPUS["attacks"] + CORPUS["ordinary"]]
    gated = [screen.text_findings(content.record_text(c)) for c in cards]
    monkeypatch.setattr(prefilter, "passes", lambda gate, text: True)
    assert [screen.text_findings(content.record_text(c)) for c in cards] == gated
    assert sum(1 for found in gated if found) >= len(CORPUS["attacks"])
