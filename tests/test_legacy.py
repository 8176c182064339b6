"""A store written by the original self-learning-skills v1 layout reads as it is."""
import json
import shutil
from pathlib import Path

DATA = Path(__file__).parent / "data" / "legacy-v1"


def test_original_layout_store_reads(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-10T00:00:00Z")
    shutil.copytree(DATA, store)
    code, out, err = run(["list", "--format", "json"])
    assert code == 0, err
    items = {i["id"]: i for i in json.loads(out)["items"]}
    assert set(items) == {"aha_20251226T182210Z_4f2c9c", "aha_20251227T090000Z_0a1b2c"}
    jq = items["aha_20251226T182210Z_4f2c9c"]
    assert jq["status"] == "accepted" and jq["score"] == 1 + 2 * 2 + 1 + 1
    code, out, _ = run(["review", "--format", "json"])
    data = json.loads(out)
    stale = {r["id"]: r for r in data["open_recommendations"]}
    assert stale["rec_20251226T182210Z_77aa00"]["stale"] is True
    assert stale["rec_20251226T182210Z_77aa00"]["status"] == "in_progress"


def test_legacy_store_repair_normalizes_alias_and_backfills_skill(run, store, monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", "2026-01-10T00:00:00Z")
    shutil.copytree(DATA, store)
    code, out, _ = run(["repair", "--format", "json"])
    fixes = {f["id"]: f["set"] for f in json.loads(out)["fixes"]}
    assert fixes == {"aha_20251227T090000Z_0a1b2c": {"primary_skill": "api-client"},
                     "rec_20251226T182210Z_77aa00": {"status": "in_progress"}}
