"""posixfs behaves like os.path / os on the paths the tool meets."""
import os
import posixpath

from hypothesis import given, strategies as st

from selflearn.storage import posixfs as fs

PARTS = st.sampled_from(["", "/", "//", "a", "b.c", ".", "..", "~", "~x", "a/b", "/a/", "x//y/"])
PATHS = st.lists(PARTS, max_size=5).map("".join)


@given(PATHS, PATHS)
def test_matches_posixpath(a, b):
    assert fs.join(a, b) == posixpath.join(a, b)
    assert fs.dirname(a) == posixpath.dirname(a)
    assert fs.basename(a) == posixpath.basename(a)
    assert fs.normpath(a) == posixpath.normpath(a)
    assert fs.abspath(a) == posixpath.abspath(a)
    assert fs.expanduser(a) == posixpath.expanduser(a)


def test_env_exists_isdir_makedirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SL_PROBE", "välue")
    assert fs.env("SL_PROBE") == "välue" and fs.env("SL_MISSING", "d") == "d"
    deep = str(tmp_path / "a" / "b" / "c")
    fs.makedirs(deep)
    fs.makedirs(deep)
    assert fs.isdir(deep) and fs.exists(deep) and not fs.exists(deep + "/nope")
    (tmp_path / "f").write_text("x")
    assert not fs.isdir(str(tmp_path / "f")) and fs.exists(str(tmp_path / "f"))
    assert fs.getcwd() == os.getcwd()


def test_tail_gives_whole_lines_and_never_reads_through_a_link(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"first line\nsecond\nthird\n")
    assert fs.tail(str(log), 100) == b"first line\nsecond\nthird\n"
    assert fs.tail(str(log), 10) == b"third\n"      # "second\n" is cut: only whole lines
    assert fs.tail(str(tmp_path / "none"), 10) == b""
    (tmp_path / "link.jsonl").symlink_to(log)
    assert fs.tail(str(tmp_path / "link.jsonl"), 100) == b""
