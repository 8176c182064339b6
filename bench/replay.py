#!/usr/bin/env python3
"""Chronological replay of real sessions: does session k repeat a mistake sessions 1..k-1 solved?

For each project of bench/learning/manifest.json, its sessions in time order go through the
`hook` command event by event, with the transcript's own timestamps: SessionStart, each real
prompt, PreToolUse, PostToolUse or PostToolUseFailure with the real input and result, Stop,
SessionEnd. Nothing else runs: the store learns only as the product triggers it from those
hooks (`--maintain-after-session` adds the `maintain --force` a person would have to type, for
the "before" figures). Everything a hook prints is kept with the call it came at.

For each repeated failure (a failing call of a later session that repeats a failure an earlier
session hit and solved: bench/learning/repeats.json, or, for a project without entries there,
derived from gold.json's `seen_in` and `match`), the lesson with its fix (the gold lesson's
`match` and `needs` on the printed text) was shown: before the call, at it (its PreToolUse or
its failure), later in the session, or never. Per session: notes shown that concern nothing in
the session (no call of the session has the lesson's command family, and no gold lesson of the
session matches it), and characters injected.
Per project also: the episodes behind the gold lessons (bench/learning/episodes.json, or
derived from gold.json), how many the episode finder found and how many the Stop hook's
question named; `--answer` lets a scripted agent answer that question with the gold lesson
the episode states (the lesson an agent that lived through it would write), so the replay
shows what reaches the next sessions when the agent answers: `said` counts the person's words
the question quoted, `reached` in how many of their later sessions (the gold's `seen_in`) the
lessons the agent recorded were stated. A turn the person interrupted ends with no Stop, and a
call they refused comes in PostToolBatch alone, as with the real client.
Each set of the manifest (tuning, held-out, held-out-2, ...) gets a total row of its own.
Usage: python3 bench/replay.py [--set all|tuning|held-out|held-out-2|...] [--project P] [--show]
                               [--format text|json] [--maintain-after-session] [--answer]
"""
import argparse
import contextlib
import io
import json
import os
import posix
import re
import sys
import tempfile
from typing import Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "bench", "learning")
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import self_learning  # noqa: E402
from learning_quality import available, path_of, set_of, sets  # noqa: E402
from selflearn.cli import parser as cli  # noqa: E402
from selflearn.observation import commands, observe  # noqa: E402

PLACES = ("before", "at", "later", "never")
_NOT_PROMPT = ("<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
               "[Request interrupted by user", "<system-reminder>", "Caveat: The messages below",
               "<command-message>", "<task-notification>")
_ID = re.compile(r"\[((?:aha|mined)_[A-Za-z0-9_]+)\]")
_WORD = re.compile(r"[a-z0-9][a-z0-9_.:@+-]*")


def words(text: str) -> List[str]:
    """Lower-case words (the judge's own split, independent of the product's)."""
    return [w.strip("./:") for w in _WORD.findall(text.lower()) if w.strip("./:")]


def load(name: str) -> dict:
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def setenv(name: str, value: Optional[str]) -> None:
    """Both views of the environment: ``os.environ`` and the ``posix.environ`` the hook reads."""
    if value is None:
        os.environ.pop(name, None)
        posix.environ.pop(name.encode(), None)
    else:
        os.environ[name] = value
        posix.environ[name.encode()] = value.encode()


# --- a transcript as hook payloads ---------------------------------------------------------

def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or []
                     if isinstance(b, dict) and b.get("type") == "text")


_INTERRUPTED = "[Request interrupted by user"  # the client's marker in the transcript


def _prompt(entry: dict, content) -> str:
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return ""
    if isinstance(content, list):
        content = "\n".join(t for t in (_text([b]) for b in content) if not t.startswith(_NOT_PROMPT))
    text = (content or "").strip() if isinstance(content, str) else ""
    return "" if not text or text.startswith(_NOT_PROMPT) else text


def events(path: str) -> List[dict]:
    """``{ts, payload, call}`` per hook event of one transcript, in order (``call`` is the
    tool_use id a tool event belongs to)."""
    with open(path, encoding="utf-8") as fh:
        entries = [json.loads(line) for line in fh if line.strip()]
    entries = [e for e in entries if e.get("timestamp")]
    if not entries:
        return []
    sid = next((e["sessionId"] for e in entries if e.get("sessionId")), "s")
    side = bool(entries[0].get("isSidechain"))
    tools: Dict[str, dict] = {}
    out: List[dict] = []

    def add(entry: dict, payload: dict, call: str = "") -> None:
        base = {"session_id": sid, "cwd": entry.get("cwd") or "", "transcript_path": path,
                "permission_mode": entry.get("permissionMode") or "default"}
        out.append({"ts": entry["timestamp"], "payload": dict(base, **payload), "call": call})

    said = {"text": "", "prompts": 0, "interrupted": False}

    def stop(entry: dict) -> None:
        """The turn ends before the next prompt and at the session's end (transcripts keep no
        stop_reason: the client streams each block with none), unless the person interrupted
        it: Claude Code fires no Stop then."""
        if said["prompts"] and not side and not said["interrupted"]:
            add(entry, {"hook_event_name": "Stop", "stop_hook_active": False,
                        "last_assistant_message": said["text"] or "done"})
        said["interrupted"] = False

    if not side:
        add(entries[0], {"hook_event_name": "SessionStart", "source": "startup"})
    for entry in entries:
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if entry.get("type") == "assistant":
            for b in blocks:
                if b.get("type") == "tool_use" and b.get("id"):
                    tools[b["id"]] = {"tool_name": b.get("name", ""), "tool_input": b.get("input") or {}}
                    add(entry, {"hook_event_name": "PreToolUse", "tool_use_id": b["id"],
                                **tools[b["id"]]}, b["id"])
            said["text"] = _text(blocks) or said["text"]
        elif entry.get("type") == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if any(_text([b] if b.get("type") == "text" else b.get("content")).startswith(
                    _INTERRUPTED) for b in blocks) or _text(content).startswith(_INTERRUPTED):
                said["interrupted"] = True
            for b in results:
                call = b.get("tool_use_id", "")
                tool = tools.get(call, {"tool_name": "", "tool_input": {}})
                text = _text(b.get("content"))
                if b.get("is_error") and observe.refusal(text):  # the client lists a refused
                    add(entry, {"hook_event_name": "PostToolBatch", "tool_calls": [  # call here
                        dict(tool, tool_use_id=call, error=text)]}, call)
                elif b.get("is_error"):
                    add(entry, {"hook_event_name": "PostToolUseFailure", "tool_use_id": call,
                                **tool, "error": text,
                                "is_interrupt": text.startswith(_INTERRUPTED)}, call)
                else:
                    response = entry.get("toolUseResult") if len(results) == 1 else None
                    if not isinstance(response, dict) or not response.get("stdout"):
                        response = {"stdout": text, "stderr": "", "interrupted": False} \
                            if tool["tool_name"] == "Bash" else text
                    add(entry, {"hook_event_name": "PostToolUse", "tool_use_id": call, **tool,
                                "tool_response": response}, call)
            prompt = "" if results else _prompt(entry, content)
            if prompt and not side:
                stop(entry)
                said["prompts"] += 1
                add(entry, {"hook_event_name": "UserPromptSubmit", "prompt": prompt})
    if not side:
        stop(entries[-1])
        add(entries[-1], {"hook_event_name": "SessionEnd", "reason": "other"})
    return out


def started(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            stamp = json.loads(line).get("timestamp") if line.strip() else None
            if stamp:
                return stamp
    return ""


# --- running the hooks -----------------------------------------------------------------------

class _Out:
    """A stdout whose ``buffer`` keeps what the hook prints."""

    def __init__(self):
        self.buffer = io.BytesIO()

    def write(self, text: str) -> int:
        return self.buffer.write(text.encode("utf-8"))

    def flush(self) -> None:
        pass


def context(printed: str) -> str:
    """What reaches the model: plain text, or the JSON envelope's additional context."""
    if not printed.startswith("{"):
        return printed
    try:
        out = json.loads(printed)
    except ValueError:
        return printed
    spec = out.get("hookSpecificOutput") if isinstance(out, dict) else None
    return str((spec or {}).get("additionalContext") or out.get("reason") or "")


def fire(payload: dict, ts: str) -> str:
    """One hook event through the real entry point; what it printed."""
    setenv("SELF_LEARNING_NOW", ts[:19] + "Z")
    raw = json.dumps(payload).encode("utf-8")
    out, saved = _Out(), (sys.stdin, sys.stdout)
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    sys.stdout = out
    try:
        if hasattr(self_learning, "hook"):
            self_learning.hook(["--agent", "claude"])
        else:  # the code before #24 (for the "before" figures): no learning from the hooks
            from selflearn.observation import hook
            hook.main(["--agent", "claude"], self_learning.inject)
    finally:
        sys.stdin, sys.stdout = saved
    return out.buffer.getvalue().decode("utf-8", "replace")


FILE_TOOLS = ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit")


def materialize(events: List[dict], root: str) -> int:
    """Make, under the replay's repository ``root``, an empty file for each file a file tool
    of the session worked on without failing (its events already ``moved``): the repository
    is not in the transcript, and a lesson whose step cites `./cmd/server/` must not look
    stale for want of it, as it would not in the repository where the session ran. Returns
    how many files were made."""
    failed = {ev["call"] for ev in events if ev["payload"]["hook_event_name"] ==
              "PostToolUseFailure"}
    made = 0
    for ev in events:
        p = ev["payload"]
        path = (p.get("tool_input") or {}).get("file_path") if isinstance(
            p.get("tool_input"), dict) else None
        if p["hook_event_name"] != "PostToolUse" or p.get("tool_name") not in FILE_TOOLS or \
                ev["call"] in failed or not isinstance(path, str) or \
                not path.startswith(root.rstrip("/") + "/") or "/../" in path:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, "a", encoding="utf-8").close()
            made += 1
    return made


def _command(call: dict) -> str:
    tool_input = call.get("tool_input") if isinstance(call.get("tool_input"), dict) else {}
    return str(tool_input.get("command") or tool_input.get("file_path") or
               json.dumps(tool_input)[:300])


def families(command: str) -> set:
    """The families a shell call can trigger, as the hook looks them up."""
    return set(commands.families_of({"tool_kind": "shell"}, command))


def _run(argv: List[str], stdin: str = "") -> None:
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main(argv)
    finally:
        sys.stdin = saved


def _store(root: str) -> str:
    return os.path.join(root, ".agent-skills", "self-learning", "v1", "users", "bench")


def _lines(path: str) -> List[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def said_asked(root: str, session: str) -> int:
    """How many times the person stepped in that the Stop hook's question named in ``session``."""
    return sum(len(srf.get("stepped") or []) for srf in _lines(os.path.join(
        _store(root), "surfacings.jsonl")) if srf.get("event") == "ask"
        and srf.get("session_id") == session)


def asked(root: str, session: str) -> List[dict]:
    """The failed calls (recovered from, or not got past) and the person's words the Stop
    hook's question named in ``session``: their observations."""
    store = _store(root)
    ids = [i for srf in _lines(os.path.join(store, "surfacings.jsonl"))
           if srf.get("event") == "ask" and srf.get("session_id") == session
           for kind in ("episodes", "stuck", "stepped") for i in (srf.get(kind) or [])]
    obs = {o.get("id"): o for o in _lines(os.path.join(store, "observations.jsonl"))}
    return [obs[i] for i in ids if i in obs]


def _card(g: dict) -> dict:
    """The gold lesson as an agent records it (SKILL.md): a title naming the symptom, the
    lesson as when and why, and as steps the sentences that carry its fix (all of it when
    the lesson names no fix)."""
    sentences = re.split(r"(?<=[.;:])\s+", g["lesson"])
    fix = [t for t in sentences if g.get("needs") and re.search(g["needs"], t)]
    return {"title": g["lesson"].split(": ")[0][:120], "when_to_use": g["lesson"],
            "problem": g["lesson"], "solution_steps": fix or [g["lesson"]]}


def answer(root: str, offered: List[dict], gold: List[dict], ts: str,
           lived: Optional[Dict[str, str]] = None) -> List[str]:
    """A scripted agent's answer to the question: for each named episode that states a gold
    lesson (its failed call and cause match it; for a person's preference, its error: a
    preference the command happens to show, such as a `git commit --amend` on a line that
    failed for a pathspec, is not what that episode taught), that lesson recorded in its words
    (``_card``) with the episode's id; nothing for the others. The agent reads the evidence
    the question quotes (the head of the error the store kept) and, where no lesson fits it,
    remembers the whole error it lived through (``lived``: by tool use id). Returns the gold
    ids recorded."""
    cards, said = [], []
    for obs in offered:
        whole = (lived or {}).get(str(obs.get("tool_use_id") or ""))
        heard = [obs.get("error") or obs.get("prompt") or ""] + ([whole] if whole else [])
        g = next((g for error in heard for g in _stating(obs, error, gold)), None)
        if g is None or g["id"] in said:
            continue
        said.append(g["id"])
        cards.append(dict(_card(g), episode=obs["id"]))
    if cards:
        setenv("SELF_LEARNING_NOW", ts[:19] + "Z")
        _run(["record"], json.dumps({"aha_cards": cards}))
    return said


def _stating(obs: dict, error: str, gold: List[dict]) -> List[dict]:
    """The gold lessons a failed call with this error (or the person's words) states."""
    error = " ".join(str(error).split())
    text = " ".join(f"{obs.get('args', '')} {error}".split())
    return [g for g in gold if re.search(g["match"], error if g.get("kind") == "user-preference"
                                         else text)]


def moved(payload: dict, home: str, root: str) -> dict:
    """``payload`` with the folder the session ran in (``home``, its first event's) as the
    replay's repository root: as in a real run, the hooks see the repository where they run,
    so a mined step names a path from the repository root, not the session's machine."""
    if home.count("/") < 2:  # no folder, or one as wide as /home: leave the paths alone
        return payload
    text = json.dumps(payload)
    return json.loads(re.sub(re.escape(json.dumps(home)[1:-1]) + r"(?![\w.-])",
                             json.dumps(root)[1:-1].replace("\\", "\\\\"), text))


def replay_project(project: str, sessions: List[dict], root: str, maintain_after: bool,
                   gold_answers: Optional[List[dict]] = None) -> List[dict]:
    """Every session of ``project`` in time order through the hooks; per session its events
    with what each hook printed. ``gold_answers``: a scripted agent answers the Stop hook's
    question with the gold lessons the named episodes state (else the question goes
    unanswered, as in a transcript)."""
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    setenv("SELF_LEARNING_REPO_ROOT", root)
    out = []
    for s in sessions:
        shown, recorded, answered = [], [], 0
        evs = events(path_of(s))
        home = evs[0]["payload"]["cwd"].rstrip("/") if evs else ""
        for ev in evs:
            ev["payload"] = moved(ev["payload"], home, root)
        materialize(evs, root)
        for ev in evs:
            printed = fire(ev["payload"], ev["ts"])
            shown.append({"event": ev["payload"]["hook_event_name"], "call": ev["call"],
                          "ts": ev["ts"], "printed": context(printed), "raw": printed,
                          "command": _command(ev["payload"]) if ev["call"] else "",
                          "tool": ev["payload"].get("tool_name", ""),
                          "error": ev["payload"].get("error", "")})
            if gold_answers is not None and ev["payload"]["hook_event_name"] == "Stop" \
                    and '"decision"' in printed:
                offered = asked(root, ev["payload"]["session_id"])  # this ask's: the last ones
                lived = {e["call"]: e["payload"]["error"] for e in evs
                         if e["call"] and e["payload"].get("error")}
                recorded += answer(root, offered[answered:], gold_answers, ev["ts"], lived)
                answered = len(offered)
                fire(dict(ev["payload"], stop_hook_active=True), ev["ts"])  # the client goes on
        if maintain_after:
            _run(["maintain", "--force"])
        sid = next((ev["payload"]["session_id"] for ev in events(path_of(s))), "")
        out.append({"session": s["session"], "sid": sid, "events": shown, "recorded": recorded,
                    "asked": [o.get("tool_use_id") for o in asked(root, sid)],
                    "said": said_asked(root, sid),
                    "found": _found(root, sid)})
    return out


def _found(root: str, sid: str) -> List[str]:
    """The failed calls (tool-use ids) of every episode the finder sees in the session."""
    from selflearn.learning import episodes
    return [e["call"] for e in episodes.find(episodes.session(_store(root), sid))]


# --- judging ---------------------------------------------------------------------------------

def _cause_words(error: str) -> set:
    """The words of an error's first lines that name its cause (shell headers left out)."""
    lines = [ln for ln in error.splitlines() if ln.strip() and not ln.lower().startswith(
        ("exit code", "output:"))]
    return set(words(" ".join(lines[:3])[:300])) - {"error", "fatal", "failed"}


def derived_repeats(project: str, order: List[str], gold: List[dict], runs: Dict[str, dict]) -> List[dict]:
    """Repeats of a project without repeats.json entries: for each gold lesson seen in two or
    more sessions, the failing calls of its later sessions whose command and error match it
    and whose cause line is mostly the one an earlier session hit (another finding of the
    same linter is another failure)."""
    out = []
    for g in gold:
        seen = [sid for sid in order if sid in g.get("seen_in", [])]
        hits: Dict[str, List[dict]] = {}
        for sid in seen:
            hits[sid] = [ev for ev in runs[sid]["events"] if ev["event"] == "PostToolUseFailure"
                         and re.search(g["match"], " ".join(f"{ev['command']} {ev['error']}".split()))]
        for k, later in enumerate(seen[1:], 1):
            earlier = [_cause_words(ev["error"]) for sid in seen[:k] for ev in hits[sid]]
            for ev in hits[later]:
                words = _cause_words(ev["error"])
                if any(len(words & w) >= max(1, len(w | words) // 2) for w in earlier):
                    out.append({"project": project, "session": later, "tool_use_id": ev["call"],
                                "gold": g["id"], "earlier": seen[:k], "derived": True})
                    break
    return out


def _flat(text: str) -> str:
    return " ".join(words(text))


def states(g: dict, text: str) -> bool:
    """The text states the gold lesson: its pattern (written for mined titles), or its own
    first words (an agent that wrote the lesson in those words), or the title the scripted
    agent gives it (``_card``: the lesson up to its first colon, a note's first line)."""
    title = _flat(_card(g)["title"])
    return bool(re.search(g["match"], text)) or _flat(g["lesson"])[:60] in _flat(text) or \
        (len(title.split()) >= 4 and title in _flat(text))


def with_fix(g: dict, text: str, error: str = "") -> bool:
    """The printed text states the gold lesson and, when it has one, its fix. A note printed
    at a failure is read beside that failure's ``error``: one that names the fix needs not
    repeat the error to be about it (the gold's ``match`` is written for error text)."""
    fix = not g.get("needs") or bool(re.search(g["needs"], text))
    return fix and (states(g, text) or bool(error and g.get("needs") and states(g, error)))


def _error_at(ev: dict) -> str:
    """The error beside which a note printed at ``ev`` is read ("" but at a failure)."""
    return ev.get("error") or "" if ev["event"] == "PostToolUseFailure" else ""


def place(rep: dict, g: dict, run: dict) -> str:
    """Where, relative to the failing call, the lesson with its fix was first printed."""
    where = "before"
    for ev in run["events"]:
        if ev["call"] == rep["tool_use_id"]:
            where = "at"
        if ev["printed"] and with_fix(g, ev["printed"], _error_at(ev)):
            return where
        if ev["call"] == rep["tool_use_id"] and ev["event"].startswith("PostToolUse"):
            where = "later"
    return "never"


_FAILS = re.compile(r"`([^`]+)` fails with `([^`]+)`")


def _about(block: str, failures: List[dict]) -> bool:
    """A mined failure note (`fam` fails with `error`) whose failure happened in the session:
    a failing call of that family whose error holds most of the note's error words."""
    found = _FAILS.search(block)
    if not found:
        return False
    family, error = found.group(1), found.group(2).rstrip("…")
    want = set(words(error)) - {"error", "fatal"}
    for f in failures:
        if family in f["families"] and want:
            said = set(words(f["error"]))
            if len(want & said) >= max(1, len(want) // 2):
                return True
    return False


def notes(run: dict, gold: List[dict]) -> List[dict]:
    """Each note printed in the session (one per lesson id), and whether it concerns
    something that happened in it: its failure occurred (same family, most of its error
    words), or it states a gold lesson of this session."""
    failures = [{"families": families(ev["command"]) | {ev.get("tool") or ""}, "error": ev["error"]}
                for ev in run["events"] if ev["event"] == "PostToolUseFailure"]  # (a tool's
    # own failure, a Skill call's: the note names the tool, as the miner's title does)
    mine = [g for g in gold if run["session"] in g.get("seen_in", [])]
    out, seen = [], set()
    for ev in run["events"]:
        for block in ev["printed"].split("\n- ")[1:] if ev["printed"] else []:
            found = _ID.search("- " + block)
            key = found.group(1) if found else block[:60]
            if key in seen:
                continue
            seen.add(key)
            golden = [g["id"] for g in mine if states(g, block) or with_fix(g, block, _error_at(ev))]
            out.append({"id": key, "event": ev["event"],
                        "relevant": bool(golden) or _about(block, failures),
                        "text": block.split("\n")[0][:160]})
    return out


def _cards(root: str) -> List[dict]:
    latest: Dict[str, dict] = {}
    for c in _lines(os.path.join(_store(root), "aha_cards.jsonl")):
        latest[c["id"]] = {**latest.get(c["id"], {}), **c, "_first": latest.get(
            c["id"], {}).get("_first", c.get("ts", ""))}
    for sig in _lines(os.path.join(_store(root), "signals.jsonl")):
        if sig.get("kind") == "aha_violated" and sig.get("aha_id") in latest:
            card = latest[sig["aha_id"]]
            card["_violated"] = card.get("_violated", 0) + 1
    return list(latest.values())


def why_missed(rep: dict, g: dict, run: dict, cards: List[dict]) -> str:
    """Why a repeat got no lesson in time: nothing stated the lesson with its fix before the
    session (not learned), or a lesson did but was not shown at the call (its trigger did not
    fit), or it has no trigger."""
    start = run["events"][0]["ts"][:19] if run["events"] else ""
    text = lambda c: "\n".join([c.get("title", ""), c.get("when_to_use", ""),  # noqa: E731
                                 c.get("problem", "")] + list(c.get("solution_steps") or []))
    known = [c for c in cards if c["_first"][:19] < start and with_fix(g, text(c))]
    if not known:
        said = [c for c in cards if c["_first"][:19] < start and states(g, text(c))]
        return "learned without its fix" if said else "not learned before"
    if not any(c.get("call") or c.get("trigger") for c in known):
        return "learned, no trigger"
    if any(c.get("status") in ("rejected", "retired", "dormant") for c in known):
        return "learned, then dropped"
    if all(c.get("_violated", 0) >= 2 for c in known):
        return "learned, left the table after 2 violations"
    return "learned, trigger did not fit: " + _misfit(known, rep, run)


def _misfit(known: List[dict], rep: dict, run: dict) -> str:
    """Which part of the best-fitting lesson's trigger the failing call missed."""
    from selflearn.observation.commands import folder, words as said_words
    ev = next((e for e in run["events"] if e["call"] == rep["tool_use_id"]
               and e["event"] == "PostToolUseFailure"), None)
    if ev is None:
        return "no failure event"
    reasons = []
    for c in known:
        call = c.get("call") or ({"family": c["trigger"]} if c.get("trigger") else {})
        if call.get("family") not in families(ev["command"]):
            reasons.append("family")
            continue
        said = set(said_words(ev["command"]))
        if any(w not in said for w in call.get("needs") or []):
            reasons.append("needs")
            continue
        want = call.get("error") or []
        errors = set(said_words(ev["error"]))
        if want and sum(w in errors for w in want) < max(1, int(len(want) * 0.5 + 0.5)):
            reasons.append("error words")
            continue
        if call.get("folder"):
            reasons.append("folder")
            continue
        reasons.append("fits (not in the table, or other notes first)")
    return sorted(set(reasons))[0] if len(set(reasons)) == 1 else "/".join(sorted(set(reasons)))


def derived_episodes(project: str, gold: List[dict], runs: Dict[str, dict]) -> List[dict]:
    """The episode behind each gold lesson of a project without episodes.json entries: the
    first failing call of its session whose command and error match it."""
    out = []
    for g in gold:
        run = runs.get(g["session"])
        for ev in run["events"] if run else []:
            if ev["event"] == "PostToolUseFailure" and \
                    re.search(g["match"], " ".join(f"{ev['command']} {ev['error']}".split())):
                out.append({"project": project, "session": g["session"], "gold": g["id"],
                            "tool_use_id": ev["call"], "derived": True})
                break
    return out


def measure(which: str, only: str, maintain_after: bool, answers: bool = False) -> dict:
    manifest, gold = available(load("manifest.json")), load("gold.json").get("gold", [])
    episodes = [{"project": e["project"], "session": e["session"], "gold": e["gold"],
                 "tool_use_id": e["failed_tool_use_id"]}
                for e in load("episodes.json").get("episodes", []) if e.get("gold")]
    repeats = [r for r in load("repeats.json").get("repeats", []) if not r.get("first")]
    projects: Dict[str, List[dict]] = {}
    for s in manifest["sessions"]:
        group = set_of(s)
        if (which != "all" and group != which) or (only and s["project"] != only):
            continue
        projects.setdefault(s["project"], []).append(dict(s, started=s.get("started") or started(
            path_of(s)), group=group))
    saved = {k: os.environ.get(k) for k in ("SELF_LEARNING_USER", "SELF_LEARNING_REPO_ROOT",
                                             "SELF_LEARNING_NOW", "SELF_LEARNING_GLOBAL_DIR",
                                             "SELF_LEARNING_LEARN")}
    rows, details = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
            setenv("SELF_LEARNING_USER", "bench")
            setenv("SELF_LEARNING_GLOBAL_DIR", os.path.join(tmp, "global"))
            setenv("SELF_LEARNING_LEARN", "sync")  # learning as the hooks trigger it, waited for
            for project, sessions in projects.items():
                sessions.sort(key=lambda s: s["started"])
                pgold = [g for g in gold if g["project"] == project]
                runs = {r["session"]: r for r in replay_project(
                    project, sessions, os.path.join(tmp, project), maintain_after,
                    pgold if answers else None)}
                reps = [r for r in repeats if r["project"] == project] or derived_repeats(
                    project, [s["session"] for s in sessions], pgold, runs)
                byid = {g["id"]: g for g in pgold}
                judged = [dict(r, place=place(r, byid[r["gold"]], runs[r["session"]]))
                          for r in reps if r["gold"] in byid and r["session"] in runs]
                cards = _cards(os.path.join(tmp, project))
                for j in judged:
                    if j["place"] in ("later", "never"):
                        j["why"] = why_missed(j, byid[j["gold"]], runs[j["session"]], cards)
                sess = [{"session": sid, "notes": notes(run, pgold),
                         "chars": sum(len(ev["printed"]) for ev in run["events"]),
                         "ask_chars": sum(len(ev["printed"]) for ev in run["events"]
                                          if ev["event"] == "Stop"),
                         "asked": run["asked"], "said": run["said"], "recorded": run["recorded"]}
                        for sid, run in runs.items()]
                eps = [e for e in episodes if e["project"] == project] or derived_episodes(
                    project, pgold, runs)
                found = [dict(e, found=e["tool_use_id"] in runs[e["session"]]["found"],
                              asked=e["tool_use_id"] in runs[e["session"]]["asked"])
                         for e in eps if e["session"] in runs]
                rows.append(dict(_row(project, sessions[0]["group"], judged, sess, found),
                                 **reach(sess, byid)))
                details.append({"project": project, "repeats": judged, "sessions": sess,
                                "episodes": found})
    finally:
        for k, v in saved.items():
            setenv(k, v)
    for group in sets(manifest):
        members = [r for r in rows if r["set"] == group]
        if members:
            rows.append(_total(group, members))
    whys: Dict[str, int] = {}
    for d in details:
        for rep in d["repeats"]:
            if rep.get("why"):
                whys[rep["why"]] = whys.get(rep["why"], 0) + 1
    return {"schema": 1, "rows": rows, "details": details, "missed": whys}


def reach(sess: List[dict], byid: Dict[str, dict]) -> dict:
    """Whether what the agent recorded reaches the later sessions it concerns: for each gold
    lesson recorded (the first time), its later sessions (the gold's ``seen_in``), and in how
    many of them a note stated it (``states``), at any moment."""
    after, reached, done = 0, 0, set()
    for i, s in enumerate(sess):
        for gid in s["recorded"]:
            if gid in done or gid not in byid:
                continue
            done.add(gid)
            for t in sess[i + 1:]:
                if t["session"] in byid[gid].get("seen_in", []):
                    after += 1
                    reached += any(states(byid[gid], n["text"]) for n in t["notes"])
    return {"after": after, "reached": reached}


def _row(project: str, group: str, judged: List[dict], sess: List[dict], eps: List[dict]) -> dict:
    row = {"project": project, "set": group, "sessions": len(sess), "repeats": len(judged),
           "episodes": len(eps), "found": sum(e["found"] for e in eps),
           "asked": sum(e["asked"] for e in eps),
           "ask_chars": sum(s["ask_chars"] for s in sess), "said": sum(s["said"] for s in sess)}
    row.update({p: sum(1 for j in judged if j["place"] == p) for p in PLACES})
    row["notes"] = sum(len(s["notes"]) for s in sess)
    row["irrelevant"] = sum(1 for s in sess for n in s["notes"] if not n["relevant"])
    row["max_irrelevant"] = max([sum(1 for n in s["notes"] if not n["relevant"]) for s in sess] or [0])
    row["chars"] = sum(s["chars"] for s in sess)
    return row


def _total(group: str, members: List[dict]) -> dict:
    row = {"project": f"total {group}", "set": group}
    for key in ("sessions", "repeats", *PLACES, "notes", "irrelevant", "chars", "episodes",
                "found", "asked", "ask_chars", "said", "after", "reached"):
        row[key] = sum(r[key] for r in members)
    row["max_irrelevant"] = max(r["max_irrelevant"] for r in members)
    return row


def render(data: dict, show: bool) -> List[str]:
    head = ("project", "sessions", "repeats", "before", "at", "later", "never", "in time",
            "notes", "irrelevant", "max/sess", "chars/sess", "episodes", "found", "asked",
            "ask/sess", "said", "reached")
    fmt = ("{:<22}{:>9}{:>8}{:>7}{:>5}{:>6}{:>6}{:>8}{:>6}{:>11}{:>9}{:>11}{:>9}{:>6}{:>6}{:>9}"
           "{:>6}{:>8}")
    lines = [fmt.format(*head)]
    for r in data["rows"]:
        timely = f"{(r['before'] + r['at']) / r['repeats']:.0%}" if r["repeats"] else "-"
        lines.append(fmt.format(r["project"], r["sessions"], r["repeats"], r["before"], r["at"],
                                r["later"], r["never"], timely, r["notes"], r["irrelevant"],
                                r["max_irrelevant"], round(r["chars"] / max(1, r["sessions"])),
                                r["episodes"], r["found"], r["asked"],
                                round(r["ask_chars"] / max(1, r["sessions"])), r["said"],
                                f"{r['reached']}/{r['after']}"))
    if data.get("missed"):
        lines.append("missed repeats: " + ", ".join(f"{k} {v}" for k, v in
                                                    sorted(data["missed"].items())))
    if show:
        for d in data["details"]:
            lines.append(f"\n{d['project']}:")
            for rep in d["repeats"]:
                lines.append(f"  repeat {rep['place']:<6} {rep['gold']} in {rep['session']}"
                             + (" (derived)" if rep.get("derived") else "")
                             + (f": {rep['why']}" if rep.get("why") else ""))
            for e in d["episodes"]:
                lines.append(f"  episode {'found' if e['found'] else 'MISSED'}"
                             f"{', asked' if e['asked'] else ''} {e['gold']} in {e['session']}")
            for s in d["sessions"]:
                for n in s["notes"]:
                    lines.append(f"  note {'ok ' if n['relevant'] else 'IRR'} {s['session']} "
                                 f"{n['event']}: {n['text']}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("all", *sets(load("manifest.json"))), default="all",
                        help="the manifest's set to replay (default: all, with a total per set)")
    parser.add_argument("--project", default="")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--maintain-after-session", action="store_true",
                        help="run `maintain --force` after every session (what a person would type)")
    parser.add_argument("--answer", action="store_true",
                        help="a scripted agent answers the Stop hook's question with the gold "
                        "lessons the named episodes state (else nobody answers)")
    args = parser.parse_args(argv)
    data = measure(args.set, args.project, args.maintain_after_session, args.answer)
    print(json.dumps(data, indent=1) if args.format == "json" else "\n".join(render(data, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
