"""report: a self-contained HTML page whose numbers match a synthetic store, with every
string from the store escaped; INDEX.md links it."""
import json
from html.parser import HTMLParser

import pytest

from selflearn.surfacing import report
from selflearn.storage.memory import Memory
from selflearn.storage import store as jsonl
from seeding import seed_record  # noqa: E402

NOW = "2026-03-10T12:00:00Z"
DAYS = ("2026-03-08", "2026-03-09", "2026-03-10")
HOSTILE = "<script>alert(1)</script> & \"quotes\""
# tool -> per day (calls, failures); planted in the store, then compared with the page
PLAN = {"Bash": {"2026-03-08": (5, 2), "2026-03-10": (4, 1)},
        "Edit": {"2026-03-09": (3, 0)},
        HOSTILE: {"2026-03-10": (1, 1)}}


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)


def plant(run, store):
    rows, n = [], 0
    for tool, days in PLAN.items():
        for day, (calls, failures) in days.items():
            for i in range(calls):
                n += 1
                rows.append({"v": 1, "id": f"obs_{n}", "ts": f"{day}T10:{i:02d}:00Z",
                             "session_id": "s1", "tool": tool,
                             "outcome": "failure" if i < failures else "success"})
    rows.append({"v": 1, "id": "obs_old", "ts": "2026-01-01T00:00:00Z", "tool": "Bash",
                 "outcome": "failure"})  # outside --days 3
    rows.append({"v": 1, "id": "obs_ask", "ts": "2026-03-10T11:00:00Z", "tool": "Bash",
                 "outcome": "approval"})  # not a success or failure
    jsonl.append(str(store / "observations.jsonl"), rows)
    cards = [{"id": "aha_evil", "title": HOSTILE, "status": "accepted", "confidence": 0.9},
             {"id": "aha_a", "title": "Plain lesson", "status": "accepted", "confidence": 0.5},
             {"id": "aha_c", "title": "Candidate", "status": "candidate", "origin": "mined",
              "confidence": 0.42},
             {"id": "aha_r", "title": "Rejected", "status": "rejected"}]
    code, _, err = seed_record(({"aha_cards": cards}))
    assert code == 0, err
    jsonl.append(str(store / "surfacings.jsonl"), [
        {"session_id": "s1", "lesson_ids": ["aha_evil", "aha_a"], "ts": NOW,
         "event": "session_start"},
        {"session_id": "s2", "lesson_ids": ["aha_evil"], "ts": NOW, "event": "pre_tool"}])
    for kind, target in (("aha_helped", "aha_evil"), ("aha_violated", "aha_evil"),
                         ("aha_helped", "aha_a")):
        code, _, err = run(["signal", "--kind", kind, "--aha-id", target])
        assert code == 0, err


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def parsed(path):
    page = Page()
    page.feed(path.read_text())
    page.close()
    return page


def test_numbers_match_the_planted_store(run, store):
    plant(run, store)
    code, out, err = run(["report", "--days", "3", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["days"] == list(DAYS)
    tools = {t["tool"]: t for t in data["tools"]}
    for tool, days in PLAN.items():
        calls = sum(c for c, _ in days.values())
        failures = sum(f for _, f in days.values())
        assert (tools[tool]["calls"], tools[tool]["failures"]) == (calls, failures)
        assert tools[tool]["daily"] == [list(days.get(d, (0, 0))) for d in DAYS]
    assert [t["tool"] for t in data["tools"]] == ["Bash", "Edit", HOSTILE]  # most used first
    total = sum(c for days in PLAN.values() for c, _ in days.values())
    failed = sum(f for days in PLAN.values() for _, f in days.values())
    assert data["summary"]["tool_calls"] == total and data["summary"]["failures"] == failed
    assert dict(map(tuple, data["by_status"])) == {"candidate": 1, "accepted": 2, "rejected": 1}
    assert sum(data["histogram"]) == 3  # rejected is not live
    rows = {r["id"]: r for r in data["rows"]}
    assert (rows["aha_evil"]["surfaced"], rows["aha_evil"]["helped"],
            rows["aha_evil"]["violated"]) == (2, 1, 1)
    assert (rows["aha_a"]["surfaced"], rows["aha_a"]["helped"]) == (1, 1)
    assert data["surfacings"] == 2 and data["sessions"] == 2
    assert data["summary"]["helped"] == 2 and data["summary"]["violated"] == 1
    html = (store / "report.html").read_text()
    assert "<title>2026-03-08: 2/5 failed (40%)</title>" in html
    assert "<title>2026-03-09: no calls</title>" in html  # Bash
    assert f'fill="{report.COLORS["ok"]}"><title>2026-03-09: 0/3 failed (0%)</title>' in html


def test_page_is_self_contained_and_escaped(run, store):
    plant(run, store)
    code, out, _ = run(["report"])
    assert code == 0 and out.startswith(f"wrote {store / 'report.html'}\n")
    page = parsed(store / "report.html")
    assert "svg" in page.tags and "rect" in page.tags
    assert "script" not in page.tags and "img" not in page.tags and "link" not in page.tags
    assert not [v for k, v in page.attrs if k in ("src", "href", "xmlns")]
    raw = (store / "report.html").read_text()
    assert "http" not in raw and HOSTILE not in raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;" in raw
    assert any(HOSTILE in t for t in page.text)  # the title shows as text


def test_index_links_the_report_and_custom_path(run, store, tmp_path):
    run(["record"], stdin=json.dumps({"aha_cards": [{"title": "one"}]}))
    assert "report.html" not in (store / "INDEX.md").read_text()
    target = tmp_path / "out.html"
    code, _, _ = run(["report", "--html", str(target)])
    assert code == 0 and target.exists() and not (store / "report.html").exists()
    assert "report.html" not in (store / "INDEX.md").read_text()
    run(["report"])
    assert "[report.html](report.html)" in (store / "INDEX.md").read_text()


def test_empty_store_and_bad_arguments(run, store, tmp_path):
    code, out, _ = run(["report", "--format", "json"])
    assert code == 0 and json.loads(out)["summary"]["tool_calls"] == 0
    assert "No tool outcomes observed" in (store / "report.html").read_text()
    code, out, err = run(["report", "--days", "400"])
    assert code == 2 and err == ("self_learning: error: report: --days must be between 1 and "
                                 f"{report.MAX_DAYS}, got 400\n")
    code, _, err = run(["report", "--html", str(tmp_path)])
    assert code == 2 and err == (f"self_learning: error: report: --html {tmp_path} is a folder; "
                                 "give a file name\n")


def test_html_must_be_a_file_in_an_existing_folder(run, store, tmp_path):
    code, out, err = run(["report", "--html", ""])
    assert (code, out) == (2, "") and not (store / "report.html").exists()
    assert err == ("self_learning: error: report: --html needs a file name; leave it out for "
                   "<store>/report.html\n")
    missing = tmp_path / "no" / "such" / "x.html"
    code, out, err = run(["report", "--html", str(missing)])
    assert (code, out) == (2, "") and not (tmp_path / "no").exists()
    assert err == (f"self_learning: error: report: --html {missing}: folder {missing.parent} "
                   "does not exist; create it first\n")
    inside = store / "reports" / "week.html"  # inside the store, its folder is made
    code, _, err = run(["report", "--html", str(inside)])
    assert code == 0 and "<svg" in inside.read_text(), err


def test_observations_outside_the_window_are_not_parsed(run, store, monkeypatch):
    from selflearn.storage import fastjson
    plant(run, store)
    with open(store / "observations.jsonl", "ab") as fh:
        fh.write(b'{"v": 1, "id": "obs_torn", "ts": "2025-12-31T00:00:00Z", "tool": "B\n')
    in_window = [r for r in jsonl.read(str(store / "observations.jsonl"))[0]
                 if r["ts"][:10] in DAYS]
    parsed = []
    real = fastjson.loads

    def counting(text):
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(fastjson, "loads", counting)
    code, out, err = run(["report", "--days", "3", "--format", "json"])
    assert code == 0 and err == "" and json.loads(out)["summary"]["tool_calls"] == 13
    obs_parsed = [t for t in parsed if '"obs_' in t]
    assert len(obs_parsed) == len(in_window) and "obs_old" not in "".join(obs_parsed)
    mem = Memory(str(store))
    kept = list(report.recent_observations(mem, DAYS[0], ("tool",)))
    assert kept == [{"tool": r["tool"]} for r in in_window] and mem.warnings == []


def test_tools_beyond_the_cap_are_counted_not_charted(run, store, monkeypatch):
    monkeypatch.setattr(report, "MAX_TOOLS", 1)
    plant(run, store)
    run(["report", "--days", "3"])
    html = (store / "report.html").read_text()
    assert "2 less used tools not shown." in html and ">Edit<" not in html
