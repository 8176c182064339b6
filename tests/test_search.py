"""search.document counts a record's words in one pass; it must give what counting field by
field, word by word, gives: the same terms, in the same order, with the same frequencies."""
from hypothesis import given, settings
from hypothesis import strategies as st

from selflearn.surfacing import search

WORD = st.sampled_from(["pytest", "SessionStart", "session_start.py", "the", "a", "CI", "x",
                        "readOnly", "E0425", "caching", "cached", "HTTPServer", "src/app.ts",
                        "été", "naïve", "--flag", "v2.1", "", "utf8"])
TEXT = st.lists(WORD, max_size=12).map(" ".join)
VALUE = st.one_of(TEXT, st.lists(TEXT, max_size=3), st.none(), st.integers())
RECORD = st.dictionaries(st.sampled_from(list(search.FIELD_WEIGHTS) + ["id"]), VALUE)


def reference(record: dict) -> dict:
    tf: dict = {}
    for name, weight in search.FIELD_WEIGHTS.items():
        for word in search._WORD.findall(search._field_text(record.get(name))):
            for token in search.tokenize(word):
                tf[token] = tf.get(token, 0.0) + weight
    return tf


def test_field_weights_are_whole_numbers():
    """``document`` repeats a field's words as many times as its weight."""
    assert all(w == int(w) and w > 0 for w in search.FIELD_WEIGHTS.values())


@settings(max_examples=300, deadline=None)
@given(record=RECORD)
def test_a_document_counts_each_field_word_by_word(record):
    got, expected = search.document(record), reference(record)
    assert got == expected and list(got) == list(expected)
    assert all(isinstance(v, float) for v in got.values())


def test_words_of_every_script_are_searchable():
    """A Korean query finds a Korean lesson whose word carries a particle (캐시가 = 캐시 + 가);
    accented words stay whole."""
    assert "캐시" in search.tokenize("빌드 캐시가 오래되면")
    assert search.tokenize("négociation") == ["négociation"]
    assert "東京" in search.tokenize("東京都庁")
    assert search.tokenize("HTTPServer") == ["httpserver", "http", "server"]
