"""text.collapsed is as long as text.clean makes a text: the index keeps each advice item's
least length from it (``storeindex.item_floor``), and advice skips a card whose least length
does not fit, so a longer ``collapsed`` would hide a card that fits."""
from hypothesis import given, settings
from hypothesis import strategies as st

from selflearn.storage import text

PIECES = st.sampled_from(["<b>", "</tag>", "<!x", "<", ">", "```", "``", "`", " ", "\n", "\t",
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
