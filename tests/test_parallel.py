"""Parallel writers: every record lands exactly once, whole, whatever its size."""
import subprocess
import sys
from pathlib import Path

from selflearn import store as jsonl

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

WRITER = """
import random, sys
sys.path.insert(0, {scripts!r})
from selflearn import store
writer, count, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(writer)
for n in range(count):
    size = rng.choice([100, 700, 4000, 4097, 9000, 16384])
    store.append(path, [{{"id": f"w{{writer}}-{{n}}", "pad": "x" * size}}])
"""


def test_eight_processes_mixed_sizes_none_lost_or_torn(tmp_path):
    path = tmp_path / "shared.jsonl"
    code = WRITER.format(scripts=str(SCRIPTS))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w), "60", str(path)])
             for w in range(8)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    records, problems = jsonl.read(str(path))
    assert problems == []
    ids = [r["id"] for r in records]
    assert len(ids) == 8 * 60 and set(ids) == {f"w{w}-{n}" for w in range(8) for n in range(60)}
    assert all(len(r["pad"]) in (100, 700, 4000, 4097, 9000, 16384) for r in records)


def test_record_command_in_parallel(tmp_path, repo, store):
    """Whole `record` commands racing on one store keep every card and a readable INDEX.md."""
    script = str(SCRIPTS / "self_learning.py")
    procs = [subprocess.Popen([sys.executable, script, "record"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
             for _ in range(8)]
    for n, p in enumerate(procs):  # feed all first, so the writers really overlap
        p.stdin.write(('{"aha_cards": [{"title": "card %d", "problem": "%s"}]}'
                       % (n, "p" * 5000 * n)).encode())
        p.stdin.close()
    assert all(p.wait(timeout=60) == 0 for p in procs)
    records, problems = jsonl.read(str(store / "aha_cards.jsonl"))
    assert problems == [] and sorted(r["title"] for r in records) == [f"card {n}" for n in range(8)]
    assert (store / "INDEX.md").read_text().startswith("# Self-learning memory")
