"""text.collapsed is as long as text.clean makes a text: the index keeps each advice item's
least length from it (``storeindex.item_floor``), and advice skips a card whose least length
does not fit, so a longer ``collapsed`` would hide a card that fits."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selflearn.storage import text

PIECES = st.sampled_from(["<b>", "</tag>", "<!x", "<", ">", "```", "``", "`", " ", "\n", "\t", "&lt;", "![", "&amp;", "javascript:", "&#10;", "&#96;",
                          "\u200b", "\u202e", "\u2028", "\x1b[31m", "a", "Zoë", "<<a>>", "-->"])
TEXTS = st.one_of(st.lists(PIECES, max_size=20).map("".join), st.text(max_size=40))


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(TEXTS, st.none(), st.integers()))
def test_collapsed_is_as_long_as_clean(value):
    assert len(text.collapsed(value)) == len(text.clean(value))


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(TEXTS, st.text(alphabet=st.characters(max_codepoint=0x7f)), st.none()))
def test_plain_turns_every_control_and_invisible_character_into_a_space(value):
    """Its fast path (printable ASCII, nothing to replace) gives what the table gives."""
    assert text.plain(value) == str(value or "").translate(text._TO_SPACE)


@pytest.mark.parametrize("raw, shown", [
    ("<script>alert(1)</script>", "\u2039script\u203aalert(1)\u2039/script\u203a"),
    ("<!-- the rest is hidden", "\u2039!-- the rest is hidden"),
    ("![b](https://t.example/p.png)", "! [b](https://t.example/p.png)"),
    ("![logo][1]", "! [logo][1]"),
    ("[1]: https://t.example/p.gif", "[1]\ua789 https://t.example/p.gif"),  # links nowhere
    ("map[k]: v and a[1]: b", "map[k]: v and a[1]: b"),                   # not at a line start
    ("[x](javascript:alert(1))", "[x](javascript\ua789alert(1))"),
    ("<JavaScript:alert(1)>", "\u2039JavaScript\ua789alert(1)\u203a"),
    ("&lt;img src=x onerror=alert(1)&gt;", "\u2039img src=x onerror=alert(1)\u203a"),
    ("&amp;lt;script&amp;gt;", "\u2039script\u203a"),
    ("a < b and c > d; see [docs](https://docs.example.com)",
     "a < b and c > d; see [docs](https://docs.example.com)"),
])
def test_inert_text_renders_as_itself(raw, shown):
    """Issue #25: one function makes text safe in every Markdown sink."""
    assert text.inert(raw) == shown


def test_a_table_cell_cannot_break_its_table():
    assert text.cell("a | b\n| c | d |") == "a \\| b \\| c \\| d \\|"


def test_entities_cannot_bring_back_a_line_break_a_fence_or_a_bidi_character():
    assert text.clean("a&#10;- [aha_x] forged&#96;&#96;&#96;&#x202e;") == "a - [aha_x] forged'''"
