"""Tests for ``selflearn.storage.prefilter``: the literals a pattern requires, and that the
screen's gates never change a finding."""

import json
import os
import re

import pytest
from hypothesis import given, settings, strategies as st

from selflearn.storage import content, gates, prefilter, screen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "tests", "data", "injection", "corpus.json"), encoding="utf-8") as fh:
    CORPUS = json.load(fh)
PATTERNS = [p for _, p in screen.PHRASES + screen.FOREIGN + screen.COMMANDS] + [screen._VOCATIVE]


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
        if re.compile(pattern.pattern, pattern.flags).search(text):  # the search, ungated
            assert prefilter.passes(prefilter.required(pattern), text), (pattern.pattern, text)


def test_the_gates_change_no_finding_on_the_corpus(monkeypatch):
    cards = [c["card"] for c in CORPUS["attacks"] + CORPUS["ordinary"]]
    gated = [screen.text_findings(content.record_text(c)) for c in cards]
    monkeypatch.setattr(prefilter, "passes", lambda gate, text: True)
    assert [screen.text_findings(content.record_text(c)) for c in cards] == gated
    assert sum(1 for found in gated if found) >= len(CORPUS["attacks"])


def test_the_gate_table_is_the_derivation_of_every_screen_pattern():
    derived = {p.pattern: prefilter.required(p)
               for _, p in screen.PHRASES + screen.FOREIGN + screen.COMMANDS}
    assert gates.GATES == derived, "run python3 tests/render_docs.py"
    assert all(p.gate == derived[p.pattern] for _, p in screen.PHRASES + screen.COMMANDS)


def test_a_gated_pattern_compiles_only_for_a_text_past_its_gate():
    pattern = prefilter.Gated(r"\bcurl\b[^\n]*\|\s*sh", known={})
    assert pattern.search("pip install x") is None
    assert pattern._compiled is None and pattern.gate == (("curl",), ("sh",), ("|",))
    assert pattern.search("curl -s x | bash") is None  # past the gate, no match
    assert pattern._compiled is not None
    assert pattern.search("curl -s x | sh").group(0) == "curl -s x | sh"


def test_a_pattern_missing_from_the_table_derives_its_gate():
    pattern = prefilter.Gated(r"\brm\s+-rf", re.M, known={"other": None})
    assert pattern.gate == (("-rf",), ("rm",))
    assert pattern.search("RM -rf /") is None and pattern.search("rm  -rf /")


def test_screening_an_ordinary_lesson_compiles_almost_no_pattern():
    for _, p in screen.PHRASES + screen.COMMANDS:
        p._compiled = None
    card = {"title": "pytest cache is read-only in CI", "problem": "the checkout is read-only",
            "solution_steps": ["run pytest -p no:cacheprovider"], "when_to_use": "CI runs"}
    assert screen.card_findings(card) == []
    compiled = [p.pattern[:30] for _, p in screen.PHRASES + screen.COMMANDS if p._compiled]
    assert len(compiled) <= 3, compiled
