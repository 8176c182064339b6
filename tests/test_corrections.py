"""correct: corrections per lesson or pattern, newest MAX_CORRECTIONS shown, one-line errors."""
import json

import pytest

from selflearn.learning import corrections as C
from selflearn.storage import store as jsonl
from selflearn.storage.memory import Memory
from seeding import seed_record  # noqa: E402


def js(run, *args):
    code, out, err = run([*args, "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def seed(run, *cards):
    code, _, err = seed_record(({"aha_cards": list(cards)}))
    assert code == 0, err


def item(run, cid):
    return [i for i in js(run, "list", "--limit", "0")["items"] if i["id"] == cid][0]


def records(store):
    return jsonl.read(str(store / "corrections.jsonl"))[0]


def test_correct_a_lesson_shows_with_it_in_list_and_review(run, store):
    seed(run, {"id": "aha_a", "title": "Run npm test"}, {"id": "aha_b", "title": "Other"})
    code, out, err = run(["correct", "--lesson", "aha_a", "--text", "Use pnpm test, not npm test"])
    assert code == 0, err
    (rec,) = records(store)
    assert rec["id"].startswith("cor_") and rec["v"] == 1
    assert (rec["target"], rec["target_kind"], rec["text"]) == (
        "aha_a", "lesson", "Use pnpm test, not npm test")
    assert out.splitlines() == [
        f"correction {rec['id']} for lesson aha_a: Use pnpm test, not npm test",
        f"1 correction(s) now shown with it (newest {C.MAX_CORRECTIONS} kept in view)"]
    assert item(run, "aha_a")["corrections"] == ["Use pnpm test, not npm test"]
    assert item(run, "aha_b")["corrections"] == []
    top = {c["id"]: c for c in js(run, "review")["top_cards"]}
    assert top["aha_a"]["corrections"] == ["Use pnpm test, not npm test"]


def test_newest_corrections_kept_in_view_older_stay_on_file(run, store):
    seed(run, {"id": "aha_many", "title": "Often corrected"})
    total = C.MAX_CORRECTIONS + 3
    for n in range(total):
        data = js(run, "correct", "--lesson", "aha_many", "--text", f"correction number {n}")
    assert len(records(store)) == total
    expected = [f"correction number {n}" for n in reversed(range(total))][:C.MAX_CORRECTIONS]
    assert data["shown"] == expected and data["total"] == total
    assert item(run, "aha_many")["corrections"] == expected
    code, out, _ = run(["correct", "--lesson", "aha_many", "--text", "one more correction"])
    assert out.splitlines()[-1] == (f"{C.MAX_CORRECTIONS} correction(s) now shown with it "
                                    f"(newest {C.MAX_CORRECTIONS} kept in view; "
                                    f"{total + 1 - C.MAX_CORRECTIONS} older on file)")


def test_pattern_corrections_show_with_the_card_of_that_key(run, store):
    seed(run, {"id": "aha_k", "title": "Mined", "key": "mined:failure:abc123", "origin": "mined",
               "status": "candidate"})
    js(run, "correct", "--pattern", "mined:failure:abc123", "--text", "expected on CI runners")
    js(run, "correct", "--lesson", "aha_k", "--text", "only with node 18 or older")
    js(run, "correct", "--pattern", "proposal:other", "--text", "unrelated pattern note")
    assert records(store)[0]["target_kind"] == "pattern"
    assert item(run, "aha_k")["corrections"] == ["only with node 18 or older",
                                                 "expected on CI runners"]
    assert C.latest(Memory(str(store))) == {
        "mined:failure:abc123": ["expected on CI runners"],
        "aha_k": ["only with node 18 or older"], "proposal:other": ["unrelated pattern note"]}


def test_text_is_redacted_and_whitespace_collapsed(run, store):
    seed(run, {"id": "aha_s", "title": "Secrets"})
    js(run, "correct", "--lesson", "aha_s", "--text",
       "export   GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 first")
    text = records(store)[0]["text"]
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in text and "  " not in text


@pytest.mark.parametrize("args, message", [
    (["--lesson", "aha_nope", "--text", "a long enough correction"],
     "correct: unknown card id 'aha_nope'; nothing was written (see `list --format json`)"),
    (["--lesson", "aha_e", "--text", "x" * (C.MIN_TEXT_CHARS - 1)],
     f"correct: --text is too short to help ({C.MIN_TEXT_CHARS - 1} characters, at least "
     f"{C.MIN_TEXT_CHARS}); say what to do instead, e.g. \"use pnpm test, not npm test\""),
    (["--lesson", "aha_e", "--text", "   "],
     f"correct: --text is too short to help (0 characters, at least {C.MIN_TEXT_CHARS}); say "
     "what to do instead, e.g. \"use pnpm test, not npm test\""),
    (["--lesson", "aha_e", "--text", "y" * (C.MAX_TEXT_CHARS + 1)],
     f"correct: --text has {C.MAX_TEXT_CHARS + 1} characters (at most {C.MAX_TEXT_CHARS}); "
     "edit the card itself with `record` instead"),
    (["--pattern", " ", "--text", "a long enough correction"],
     f"correct: --pattern ' ' is not a pattern key (one word of at most {C.MAX_KEY_CHARS} "
     "characters, e.g. mined:failure:3f9a0c1d2e4b)"),
    (["--pattern", "k" * (C.MAX_KEY_CHARS + 1), "--text", "a long enough correction"],
     f"correct: --pattern '{'k' * (C.MAX_KEY_CHARS + 1)}' is not a pattern key (one word of at "
     f"most {C.MAX_KEY_CHARS} characters, e.g. mined:failure:3f9a0c1d2e4b)"),
    (["--lesson", "aha_e", "--pattern", "p:q", "--text", "a long enough correction"],
     "argument --pattern: not allowed with argument --lesson (see `self_learning correct --help`)"),
])
def test_bad_input_is_one_line_and_writes_nothing(run, store, args, message):
    seed(run, {"id": "aha_e", "title": "Exists"})
    code, out, err = run(["correct", *args])
    assert (code, out, err) == (2, "", f"self_learning: error: {message}\n")
    assert not (store / "corrections.jsonl").exists()


def test_exactly_min_text_is_accepted(run, store):
    seed(run, {"id": "aha_m", "title": "Minimum"})
    js(run, "correct", "--lesson", "aha_m", "--text", "z" * C.MIN_TEXT_CHARS)
    js(run, "correct", "--lesson", "aha_m", "--text", "w" * C.MAX_TEXT_CHARS)
    assert len(records(store)) == 2
