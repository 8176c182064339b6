"""maintain's compaction: old observations every miner has read leave the log, the rest stay
byte for byte, mining stays incremental, lessons keep their evidence, hooks' appends survive."""
import json

from selflearn.learning import compact, mine
from selflearn.storage import model
from selflearn.storage import store as jsonl
from selflearn.storage.memory import Memory

T0 = 1767225600.0  # 2026-01-01T00:00:00Z
DAY = 86400.0


def obs(n: int, ts: float, session: str) -> dict:
    """A failure, or (odd ``n``) the variant that fixed the one before it."""
    fixed = n % 2 == 1
    out = {"v": 1, "id": f"obs_{n}", "ts": model.iso(ts), "agent": "claude",
           "session_id": session, "event": "tool_success" if fixed else "tool_failure",
           "outcome": "success" if fixed else "failure", "tool": "Bash", "tool_kind": "shell",
           "args": "npm test --ci" if fixed else "npm test", "family": "npm test"}
    return out if fixed else dict(out, error="Error: Cannot find module 'x'")


def fill(store, monkeypatch, old: int, recent: int):
    monkeypatch.setenv("SELF_LEARNING_NOW", model.iso(T0))
    path = str(store / "observations.jsonl")
    jsonl.append(path, [obs(n, T0 - 300 * DAY + n, f"old{n // 2 % 3}") for n in range(old)])
    jsonl.append(path, [obs(old + n, T0 - DAY + n, f"new{n // 2 % 3}") for n in range(recent)])
    return path


def lines(path):
    with open(path, "rb") as fh:
        return fh.read().splitlines()


def test_old_mined_observations_leave_and_mining_stays_incremental(store, monkeypatch):
    path = fill(store, monkeypatch, old=50, recent=7)
    memory = Memory(str(store))
    first = mine.mine(memory)
    cards_before = (store / "aha_cards.jsonl").read_bytes()
    recent_lines = lines(path)[50:]
    data = compact.compact(memory, min_drop=0)
    assert (data["compacted"], data["dropped"], data["kept"]) == (True, 50, 7)
    assert lines(path) == recent_lines  # what stays keeps its bytes and order
    assert (store / "aha_cards.jsonl").read_bytes() == cards_before  # lessons keep evidence
    jsonl.append(path, [obs(100, T0, "later")])
    again = mine.mine(memory)
    assert not again["full"] and again["observations_read"] == 1 and first["lessons"]


def test_a_dry_run_or_a_small_gain_drops_nothing(store, monkeypatch):
    path = fill(store, monkeypatch, old=5, recent=2)
    memory = Memory(str(store))
    mine.mine(memory)
    before = lines(path)
    dry = compact.compact(memory, dry_run=True, min_drop=0)
    assert (dry["compacted"], dry["dropped"]) == (False, 5) and lines(path) == before
    small = compact.compact(memory)  # below MIN_DROP_BYTES
    assert not small["compacted"] and "bytes to drop" in small["reason"] and lines(path) == before


def test_unmined_observations_always_stay(store, monkeypatch):
    path = fill(store, monkeypatch, old=5, recent=0)
    data = compact.compact(Memory(str(store)), min_drop=0)  # no miner has read anything
    assert not data["compacted"] and "checkpoint" in data["reason"] and len(lines(path)) == 5


def test_lines_appended_while_compacting_are_kept(store, monkeypatch):
    path = fill(store, monkeypatch, old=20, recent=1)
    memory = Memory(str(store))
    mine.mine(memory)
    real = compact._keep

    def keep_while_a_hook_appends(prefix, cutoff, data):
        jsonl.append(path, [obs(999, T0, "hook")])  # a hook writing mid-compaction
        return real(prefix, cutoff, data)
    monkeypatch.setattr(compact, "_keep", keep_while_a_hook_appends)
    assert compact.compact(memory, min_drop=0)["compacted"]
    assert [json.loads(x)["id"] for x in lines(path)] == ["obs_20", "obs_999"]
    assert mine.mine(memory)["observations_read"] == 1  # only the hook's line is new
