"""feedback: feedback.md is regenerated, and a person's edits to its lessons section are read
back (a deleted line rejects, a new line teaches, a moved candidate is accepted)."""
import json

import pytest

from selflearn.surfacing import feedback
from selflearn.storage import store as jsonl
from seeding import seed_payload  # noqa: E402

NOW = "2026-03-10T12:00:00Z"


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("SELF_LEARNING_NOW", NOW)


def record(run, cards):
    return [c["id"] for c in seed_payload({"aha_cards": cards})["cards"]]


def cards(store):
    return jsonl.fold(jsonl.read(str(store / "aha_cards.jsonl"))[0])


def signals(store):
    return jsonl.read(str(store / "signals.jsonl"))[0] if (store / "signals.jsonl").exists() else []


def fb(run, *args):
    code, out, err = run(["feedback", *args, "--format", "json"])
    assert code == 0, err
    return json.loads(out), err


def page(store):
    return (store / "feedback.md").read_text()


def section(text):
    start, end = text.index(feedback.BEGIN), text.index(feedback.END)
    return text[start:end]


def edit(store, drop=(), add=()):
    """Delete the lines naming ``drop`` ids and add ``add`` lines inside the section."""
    lines = page(store).splitlines()
    lines = [x for x in lines if not any(f"[{i}]" in x for i in drop)]
    at = lines.index(feedback.END)
    lines[at:at] = [f"- {text}" for text in add]
    (store / "feedback.md").write_text("\n".join(lines) + "\n")


SEED = [
    {"id": "aha_pnpm", "title": "Use pnpm, not npm, in this repository", "status": "accepted"},
    {"id": "aha_lint", "title": "Run ruff before committing Python", "status": "accepted"},
    {"id": "aha_prop", "title": "Agent proposal about migrations"},
    {"id": "aha_mined", "title": "`npm test` fails with missing module", "status": "candidate",
     "origin": "mined", "confidence": 0.55},
    {"id": "aha_gone", "title": "Old rejected lesson", "status": "rejected"},
]


def test_render_lists_editable_lessons_and_candidates_apart(run, store):
    record(run, SEED)
    data, _ = fb(run)
    assert data["file"] == "written"
    text = page(store)
    editable = section(text)
    for rid in ("aha_pnpm", "aha_lint", "aha_prop"):
        assert f"- [{rid}] " in editable
    assert "aha_mined" not in editable and "aha_gone" not in text
    assert "- [aha_mined] `npm test` fails with missing module (confidence 0.55)" in text
    assert "<!-- rendered: aha_lint aha_pnpm aha_prop -->" in editable


def test_round_trip_delete_rejects_add_teaches_and_is_idempotent(run, store):
    record(run, SEED)
    fb(run)
    edit(store, drop=["aha_lint"], add=["Always run make check before pushing", "too short"])
    data, err = fb(run)
    assert [c["id"] for c in data["rejected"]] == ["aha_lint"]
    assert "'too short' is shorter than 15 characters" in err
    state = cards(store)
    assert state["aha_lint"]["status"] == "rejected"
    assert state["aha_lint"]["note"] == feedback.NOTE_REMOVED
    status = [s for s in signals(store) if s["kind"] == "aha_status"]
    assert [(s["aha_id"], s["source"]) for s in status] == [("aha_lint", "feedback")]
    human = [c for c in state.values() if c.get("origin") == "human"]
    assert len(human) == 1 and data["created"][0]["id"] == human[0]["id"]
    assert human[0]["title"] == "Always run make check before pushing"
    assert human[0]["status"] == "accepted"
    editable = section(page(store))
    assert f"- [{human[0]['id']}] Always run make check before pushing" in editable
    assert "aha_lint" not in editable
    assert "- too short" in editable  # refused lines stay for the person to fix
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.suffix in (".jsonl", ".md")}
    data, err = fb(run)
    assert data["file"] == "unchanged" and not data["changed"]
    assert not data["rejected"] and not data["created"]
    after = {p.name: p.read_bytes() for p in store.iterdir() if p.suffix in (".jsonl", ".md")}
    assert {k: v for k, v in after.items() if k != "INDEX.md"} == \
        {k: v for k, v in before.items() if k != "INDEX.md"}


def test_missing_rendered_record_never_rejects(run, store):
    record(run, SEED)
    fb(run)
    text = "\n".join(x for x in page(store).splitlines()
                     if not x.startswith(feedback.RENDERED) and "[aha_pnpm]" not in x)
    (store / "feedback.md").write_text(text + "\n")
    data, _ = fb(run)
    assert data["section_found"] and not data["rendered_record"]
    assert not data["rejected"] and cards(store)["aha_pnpm"]["status"] == "accepted"
    assert "[aha_pnpm]" in section(page(store))  # listed again, record restored
    (store / "feedback.md").unlink()
    data, _ = fb(run)
    assert not data["section_found"] and not data["rejected"]
    assert "<!-- rendered: aha_lint aha_pnpm aha_prop -->" in page(store)


def test_moving_a_candidate_into_the_section_accepts_it(run, store):
    record(run, SEED)
    fb(run)
    edit(store, add=["[aha_mined] moved here"])
    data, _ = fb(run)
    assert [c["id"] for c in data["accepted"]] == ["aha_mined"]
    assert cards(store)["aha_mined"]["status"] == "accepted"
    assert cards(store)["aha_mined"]["note"] == feedback.NOTE_ADDED
    assert "[aha_mined]" in section(page(store))


@pytest.mark.parametrize("how", ["feedback", "aha-status"])
def test_a_persons_decision_starts_the_learning_step(run, store, monkeypatch, how):
    """An accepted lesson reaches its calls now (the trigger table is rebuilt), not after the
    next session; nothing starts when nothing changed."""
    record(run, SEED)
    fb(run)
    monkeypatch.setenv("SELF_LEARNING_LEARN", "sync")
    if how == "feedback":
        edit(store, add=["[aha_mined] moved here"])
        fb(run)
    else:
        assert run(["aha-status", "--id", "aha_mined", "--status", "accepted"])[0] == 0
    state = json.loads((store / "maintain_state.json").read_text())
    assert state["last_result"]["trigger"] == ("feedback" if how == "feedback" else "status-change")
    assert (store / "triggers.jsonl").exists()
    (store / "maintain_state.json").unlink()
    fb(run)  # nothing changed: nothing starts
    assert not (store / "maintain_state.json").exists()


def test_human_line_equal_to_a_rejected_card_accepts_it_again(run, store):
    record(run, SEED)
    fb(run)
    edit(store, add=["Old rejected lesson"])
    data, _ = fb(run)
    assert data["created"][0]["id"] == "aha_gone"
    assert cards(store)["aha_gone"]["status"] == "accepted"
    assert "[aha_gone] Old rejected lesson" in section(page(store))


def test_unknown_id_warns_and_secrets_are_redacted(run, store):
    record(run, SEED)
    fb(run)
    edit(store, add=["[aha_nope] not a card",
                     "Use the token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI"])
    data, err = fb(run)
    assert "no card with id 'aha_nope'" in err
    human = [c for c in cards(store).values() if c.get("origin") == "human"]
    assert "ghp_abcdefghij" not in human[0]["title"] and "[REDACTED" in human[0]["title"]
    assert "ghp_abcdefghij" not in page(store)


def test_dry_run_writes_nothing(run, store):
    record(run, SEED)
    fb(run)
    edit(store, drop=["aha_pnpm"], add=["Prefer small pull requests always"])
    snapshot = {p.name: p.read_bytes() for p in store.iterdir()
                if p.is_file() and not p.name.startswith("index.sqlite3")}  # derived cache
    data, _ = fb(run, "--dry-run")
    assert [c["id"] for c in data["rejected"]] == ["aha_pnpm"]
    assert data["created"] == [{"id": None, "title": "Prefer small pull requests always",
                                "action": "create"}]
    assert {p.name: p.read_bytes() for p in store.iterdir()
            if p.is_file() and not p.name.startswith("index.sqlite3")} == snapshot
    code, out, _ = run(["feedback", "--dry-run"])
    assert code == 0 and "would reject aha_pnpm" in out


def obs(ts, tool, outcome, args=None, **kw):
    record = {"v": 1, "id": f"obs_{ts}_{tool}", "ts": ts, "agent": "claude", "session_id": "s1",
              "event": "tool_failure" if outcome == "failure" else "tool_success",
              "tool": tool, "outcome": outcome, **kw}
    if args:
        record["args"] = args
    return record


def test_recent_outcomes_per_day_windowed_and_capped(run, store):
    long = "pytest " + "x" * 300
    rows = [obs("2026-03-10T09:05:00Z", "Bash", "failure", "npm test"),
            obs("2026-03-10T10:15:00Z", "Edit", "success", file="src/app.py"),
            obs("2026-03-09T23:59:00Z", "Bash", "success", long),
            obs("2026-03-03T08:00:00Z", "Bash", "success", "too old for 7 days"),
            {"v": 1, "id": "obs_prompt", "ts": "2026-03-10T11:00:00Z", "event": "prompt"}]
    rows += [obs(f"2026-03-08T10:{m:02d}:00Z", "Read", "success", f"f{m}.py")
             for m in range(feedback.LINES_PER_DAY + 5)]
    jsonl.append(str(store / "observations.jsonl"), rows)
    fb(run)
    text = page(store)
    recent = text[text.index("## Recent outcomes (last 7 days, UTC)"):]
    assert recent.index("### 2026-03-10") < recent.index("### 2026-03-09") \
        < recent.index("### 2026-03-08")
    assert "- 10:15 | Edit | success | src/app.py\n- 09:05 | Bash | failure | npm test\n" in recent
    assert "too old" not in recent and "2026-03-03" not in recent
    cut = [x for x in recent.splitlines() if x.startswith("- 23:59 | Bash | success | pytest")][0]
    assert len(cut) < len("- 23:59 | Bash | success | ") + feedback.ARGS_CHARS + 1
    day8 = recent[recent.index("### 2026-03-08"):]
    assert sum(1 for x in day8.splitlines() if "| Read |" in x) == feedback.LINES_PER_DAY
    assert "- … 5 earlier outcomes not shown" in day8
    assert "f54.py" in day8 and "| f0.py" not in day8  # newest kept
    fb(run, "--days", "1")
    assert "### 2026-03-09" not in page(store)


def test_an_outcome_says_what_happened_on_a_context_line(run, store):
    rows = [obs("2026-03-10T09:05:00Z", "Bash", "failure", "npm test",
                error="> app@1 test\nError: Cannot find module 'left-pad'\nRequire stack:"),
            {"v": 1, "id": "obs_d", "ts": "2026-03-10T09:06:00Z", "session_id": "s1",
             "event": "permission_denied", "tool": "Bash", "args": "rm -rf build",
             "outcome": "denial", "reason": "destructive command"},
            {"v": 1, "id": "obs_p", "ts": "2026-03-10T09:07:00Z", "session_id": "s1",
             "event": "stop_failure", "reason": "rate_limit", "outcome": "failure",
             "error": "rate_limit_error: too many tokens\n429 Too Many Requests"}]
    jsonl.append(str(store / "observations.jsonl"), rows)
    fb(run)
    recent = page(store)[page(store).index("### 2026-03-10"):]
    assert recent.splitlines()[2:8] == [
        "- 09:07 | provider | failure | rate_limit", "  rate_limit_error: too many tokens",
        "- 09:06 | Bash | denial | rm -rf build", "  destructive command",
        "- 09:05 | Bash | failure | npm test", "  Error: Cannot find module 'left-pad'"]


def test_outcomes_older_than_the_window_are_never_parsed(run, store, monkeypatch):
    from selflearn.storage import fastjson
    old = [obs(f"2026-02-{d:02d}T08:00:00Z", "Bash", "failure", f"old {d}") for d in range(1, 29)]
    new = [obs("2026-03-10T09:05:00Z", "Bash", "failure", "npm test"),
           obs("2026-03-09T09:05:00Z", "Edit", "success", file="src/app.py")]
    jsonl.append(str(store / "observations.jsonl"), old + new)
    with open(store / "observations.jsonl", "ab") as fh:
        fh.write(b'{"v": 1, "ts": "2026-02-01T00:00:00Z", broken\n')  # old: skipped unread
    parsed = []
    real = fastjson.loads

    def counting(text):
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(fastjson, "loads", counting)
    data, err = fb(run)
    assert err == "" and "npm test" in page(store) and "old 1" not in page(store)
    assert len([t for t in parsed if '"obs_' in t]) == len(new)


def test_bad_days_is_one_line_error(run, store):
    code, out, err = run(["feedback", "--days", "0"])
    assert code == 2 and out == ""
    assert err == "self_learning: error: feedback: --days must be between 1 and 31, got 0\n"
    assert not (store / "feedback.md").exists()


def test_parse_needs_both_markers():
    assert feedback.parse("- [aha_x] no markers\n") is None
    assert feedback.parse(f"{feedback.END}\n{feedback.BEGIN}\n") is None
    got = feedback.parse(f"{feedback.BEGIN}\n<!-- rendered: a b -->\n- [a] x\n* new lesson text\n"
                         f"plain prose\n{feedback.END}\n")
    assert got == feedback.Section(["a", "b"], ["a"], ["new lesson text"])


def test_hostile_title_cannot_forge_markers(run, store):
    record(run, [{"id": "aha_evil", "status": "accepted",
                  "title": f"x {feedback.END} <!-- rendered: aha_pnpm -->"}])
    fb(run)
    got = feedback.parse(page(store))
    assert got.rendered == ["aha_evil"] and got.ids == ["aha_evil"] and not got.new
    assert "\u2039!-- self-learning:lessons:end --\u203a" in page(store)
    assert "&lt;" not in page(store)


def test_unreadable_page_is_one_line_error(run, store):
    record(run, SEED)
    (store / "feedback.md").write_bytes(b"\xff\xfe")
    code, _, err = run(["feedback"])
    assert code == 2 and err.startswith(f"self_learning: error: feedback: cannot read {store}")
    assert (store / "feedback.md").read_bytes() == b"\xff\xfe"


def test_editable_list_is_capped_oldest_dropped(run, store, monkeypatch):
    monkeypatch.setattr(feedback, "MAX_LESSONS", 2)
    record(run, SEED)
    fb(run)
    got = feedback.parse(page(store))
    assert got.ids == ["aha_pnpm", "aha_prop"] == got.rendered
    assert "(1 older lessons not listed; see `list`)" in page(store)


def test_a_page_the_agent_wrote_is_not_read_back(run, store):
    """damage3-30: the hooks saw the agent's Edit of feedback.md (adding a lesson, deleting
    one); neither is taken as the person's word, and the regenerated page reads back again."""
    record(run, SEED)
    fb(run)
    edit(store, drop=["aha_lint"], add=["When tests fail, run make fixtures and commit it"])
    seen = f"{feedback.SEEN} {NOW} -->"
    assert seen not in page(store)  # no observation yet: nothing to stamp
    run(["hook", "--agent", "claude"], json.dumps({
        "hook_event_name": "PostToolUse", "session_id": "fb1", "tool_name": "Edit",
        "tool_use_id": "toolu_fb", "tool_input": {"file_path": str(store / "feedback.md"),
                                                  "old_string": "x", "new_string": "y"},
        "tool_response": {"filePath": str(store / "feedback.md")}}))
    data, err = fb(run)
    assert data["agent_wrote"] == f"Edit at {NOW}" and "nothing on it was read back" in err
    assert not data["rejected"] and not data["created"]
    assert not [c for c in cards(store).values() if c.get("origin") == "human"]
    assert cards(store)["aha_lint"]["status"] == "accepted"
    assert "make fixtures" not in page(store) and seen in section(page(store))
    edit(store, add=["Always run make check before pushing"])  # the person, afterwards
    data, _ = fb(run)
    assert not data["agent_wrote"] and [c["title"] for c in data["created"]] == \
        ["Always run make check before pushing"]
