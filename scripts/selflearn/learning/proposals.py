"""The proposals inbox: skills, rules and commands suggested to a person, with evidence.

Owns ``<store>/proposals.jsonl`` (append-only; the latest line per id wins):
filing what the miners found (``offer``, called by ``mine``) and rules from
proven mined lessons not yet in AGENTS.md, at most one new proposal per kind
per run; a key once decided (applied or rejected) is never proposed again, and
a pending rule is settled when its card is hidden or AGENTS.md already holds
it. ``apply`` writes a skill folder (never over an existing one) or a rule
through the guarded-edit module (``graduation.adopt``: a duplicate counts as
present); ``reject`` archives with a required reason. ``pending`` lists what
awaits a decision (for ``review`` and INDEX.md). ``suggest`` backs
``suggest-skills``. Constants: references/PROPOSALS.md. Must not import cli.
"""

import os
import re
from typing import Dict, List, Optional, Tuple

from . import mine_sequences, skilldraft
from ..storage import model, redact, store
from ..storage.errors import SelfLearningError, UsageError
from ..storage.text import clean_line, inert, origin_label
from ..storage.text import rule as export_line
from .mine_base import STATE_FILE, cut

KINDS = ("skill", "rule", "command")
STATUSES = ("proposed", "applied", "rejected")
RULE_MIN_CONFIDENCE = 0.8   # a mined lesson this sure (or accepted) may become a rule
RULES_FILE = "AGENTS.md"    # where an applied rule goes unless --file says otherwise
RULE_MAX_CHARS = 240        # a rule line is cut to this length
MAX_EVIDENCE_KEPT = 20      # evidence lines kept on a proposal (newest first)
SKILLS_DIR = os.path.join(".claude", "skills")  # default home of applied skills, in the repo
SUGGESTED_TAG = {"skill": "skill_suggested", "command": "skill_suggested",
                 "rule": "rule_suggested"}  # tag of the event logged for a new proposal
_SESSION = re.compile(r"\bin session (\S+)")  # a card's evidence line citing a session


# --- reading --------------------------------------------------------------------------------

def _all(memory) -> Dict[str, dict]:
    return memory.folded("proposals")


def public(p: dict) -> dict:
    """A proposal as shown: fold bookkeeping dropped, creation time named."""
    out = {k: v for k, v in p.items() if not k.startswith("_")}
    out["created_ts"] = p.get("_first_ts") or p.get("ts", "")
    return out


def pending(memory) -> List[dict]:
    """Proposals awaiting a decision, newest first (for review and INDEX.md)."""
    items = [public(p) for p in _all(memory).values() if p.get("status") == "proposed"]
    return sorted(items, key=lambda p: (p["created_ts"], p["id"]), reverse=True)


def get(memory, pid: str, verb: str) -> dict:
    p = _all(memory).get(pid or "")
    if p is None:
        raise UsageError(f"proposals {verb}: no proposal with id {pid!r} "
                         "(see `proposals list --status all`)")
    return public(p)


def undecided(p: dict, verb: str) -> None:
    if p.get("status") != "proposed":
        raise UsageError(f"proposals {verb}: {p['id']} is already {p.get('status')} "
                         f"({p.get('decided_ts', '?')}); a decided proposal stays decided")


def with_corrections(memory, items: List[dict]) -> List[dict]:
    """Each proposal with people's corrections of its pattern (``correct --pattern KEY``,
    of any key it covers, or its id), newest first; the corrections file is read once."""
    from . import corrections
    latest = corrections.latest(memory)
    for p in items:
        p["corrections"] = list(dict.fromkeys(
            text for key in [p["key"], *(p.get("covers") or []), p["id"]]
            for text in latest.get(key, [])))[:corrections.MAX_CORRECTIONS]
    return items


def naming(memory, target: str, status: str) -> List[dict]:
    """The proposals in ``status`` whose key, covered keys or id is ``target``, with their
    corrections."""
    return with_corrections(memory, [public(p) for p in _all(memory).values()
                                      if p.get("status") == status and target in (
                                          p.get("key"), p.get("id"), *(p.get("covers") or []))])


def listing(memory, status: str = "proposed", kind: Optional[str] = None) -> dict:
    items = [public(p) for p in _all(memory).values()
             if (status == "all" or p.get("status") == status) and (not kind or p.get("kind") == kind)]
    items.sort(key=lambda p: (p["created_ts"], p["id"]), reverse=True)
    with_corrections(memory, items)
    return {"status": status, "kind": kind, "count": len(items), "items": items}


def show(memory, pid: str) -> dict:
    return {"proposal": with_corrections(memory, [get(memory, pid, "show")])[0]}


# --- filing ---------------------------------------------------------------------------------

def _new_id(taken) -> str:
    stamp = model.iso().replace("-", "").replace(":", "")
    while True:
        pid = f"prop_{stamp}_{os.urandom(3).hex()}"
        if pid not in taken:
            return pid


def rule_line(card: dict) -> str:
    """One imperative line for AGENTS.md: when <title>: <first step> (``inert``: it renders as
    itself, as ``improve`` writes it)."""
    title = str(card.get("title") or "").rstrip(".")
    step = str((card.get("solution_steps") or [""])[0]).rstrip(".")
    line = inert(" ".join(f"- When {title[:1].lower() + title[1:]}: {step}.".split()))
    return line if len(line) <= RULE_MAX_CHARS else line[:RULE_MAX_CHARS - 1] + "\u2026"


def rule_label(card: dict) -> str:
    """Where an applied rule came from, said after it in the file."""
    return f" ({clean_line(origin_label(card, reviewed=False), 80)}; applied by a person)"


def card_sessions(card: dict) -> int:
    """Distinct sessions the card's evidence cites (``… in session <id>``), else its
    ``observations`` count: what a rule proposal shows as its sessions."""
    cited = {m.group(1) for e in card.get("evidence") or [] for m in [_SESSION.search(str(e))]
             if m}
    obs = card.get("observations")
    return len(cited) or (obs if isinstance(obs, int) and not isinstance(obs, bool) else 0)


def rules_present(repo_root: str) -> Dict[str, int]:
    """Stripped lines of the repository's RULES_FILE -> line number ({} when unreadable)."""
    try:
        with open(os.path.join(repo_root, RULES_FILE), encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return {line.strip(): n for n, line in reversed(list(enumerate(text.splitlines(), 1)))}


def present_at(card: dict, present: Dict[str, int]) -> Optional[str]:
    """Where RULES_FILE already holds the card's lesson (its ``export-rules`` line or its
    rule line), e.g. ``AGENTS.md line 12``; None when it does not."""
    labelled = export_line(card, f" ({clean_line(origin_label(card), 80)})")
    for line in (export_line(card), labelled, rule_line(card), rule_line(card) + rule_label(card)):
        if line in present:
            return f"{RULES_FILE} line {present[line]}"
    return None


def rule_candidates(cards: Dict[str, dict], present: Optional[Dict[str, int]] = None
                    ) -> List[dict]:
    """Mined lessons that are accepted or at least RULE_MIN_CONFIDENCE sure, say what to do,
    are not hidden and are not in RULES_FILE yet (``present``: see ``rules_present``).

    The evidence names the card only by id: it stays the same while the card's status or
    confidence changes, so a pending proposal is not updated for that."""
    out = []
    for c in cards.values():
        conf = c.get("confidence")
        sure = isinstance(conf, (int, float)) and not isinstance(conf, bool) \
            and conf >= RULE_MIN_CONFIDENCE
        if c.get("origin") != "mined" or c.get("status") in model.HIDDEN_STATUSES \
                or not (c.get("status") == "accepted" or sure) or not c.get("solution_steps") \
                or present_at(c, present or {}):
            continue
        out.append({"kind": "rule", "key": "rule:" + str(c.get("key") or c["id"]),
                    "title": "Rule: " + cut(c["title"], 100), "body": rule_line(c),
                    "card": c["id"], "quality": conf if isinstance(conf, (int, float)) else 0,
                    "sessions": card_sessions(c), "changed": False,
                    "rationale": cut(c.get("problem") or c["title"], 200),
                    "evidence": [f"card {c['id']}"] + list(c.get("evidence") or [])[:3]})
    return out


def _settled_rules(props: Dict[str, dict], cards: Dict[str, dict],
                   present: Dict[str, int]) -> List[Tuple[dict, dict]]:
    """``(proposal, decision line)`` for pending rules that need no person any more: the
    card became hidden (rejected, ``card <id> is <status>``) or RULES_FILE already holds
    the lesson, e.g. from ``export-rules`` (applied, ``present``)."""
    out = []
    for p in props.values():
        card = cards.get(p.get("card") or "")
        if p.get("kind") != "rule" or p.get("status") != "proposed" or card is None:
            continue
        where = present_at(card, present)
        if card.get("status") in model.HIDDEN_STATUSES:
            out.append((p, decided(p["id"], "rejected",
                                    reason=f"card {card['id']} is {card.get('status')}")))
        elif where:
            out.append((p, decided(p["id"], "applied", applied_to=RULES_FILE, present=where)))
    return out


def _entry(action: str, cand: dict, pid: Optional[str], title: Optional[str] = None) -> dict:
    return {"action": action, "id": pid, "kind": cand["kind"], "title": title or cand["title"],
            "sessions": cand.get("sessions", 0), "key": cand["key"]}


def _record(cand: dict, pid: str, taken_names: set, use_provider: bool) -> dict:
    """The first line of a new proposal, its body drafted (provider or template)."""
    rec = {k: v for k, v in cand.items() if k not in ("changed", "below")}
    rec.update(id=pid, ts=model.iso(), v=model.SCHEMA_VERSION, status="proposed", warnings=[])
    if cand["kind"] == "rule":
        rec.update(target=RULES_FILE, source="template", origin="lessons")
        return rec
    name = skilldraft.derive_name(cand["steps"][:1] if cand["kind"] == "command"
                                  else cand["steps"], taken_names)
    rec.update(name=name, target=os.path.join(SKILLS_DIR, name), origin="basal-ganglia")
    if cand["kind"] == "command":
        rec.update(body=cand["steps"][0], source="basal-ganglia")
        return rec
    draft = skilldraft.compose(cand, name, use_provider)
    problems = skilldraft.check(draft["text"])
    if problems:  # pragma: no cover - drafts are built valid; this guards the builder
        raise SelfLearningError("proposals: draft of " + name + " is invalid: " + problems[0])
    rec.update(body=draft["text"], source=draft["source"])
    if draft["warning"]:
        rec["warnings"] = [draft["warning"]]
    return rec


def _grown(old: dict, cand: dict) -> Optional[dict]:
    """An update line when the pattern gained evidence (new sessions), else None; the
    body stays as drafted (a person may be reading it)."""
    old_evidence = list(old.get("evidence") or [])
    if not set(cand.get("evidence") or []) - set(old_evidence):
        return None
    fields = {"evidence": list(dict.fromkeys(cand["evidence"] + old_evidence))[:MAX_EVIDENCE_KEPT],
              "sessions": cand.get("sessions", 0), "quality": cand.get("quality"),
              "failures": cand.get("failures", 0), "last_seen": cand.get("last_seen")}
    return {"id": old["id"], "ts": model.iso(), "v": model.SCHEMA_VERSION,
            **{k: v for k, v in fields.items() if v is not None}}


def _event(rec: dict) -> dict:
    """The ``<kind>_suggested`` event logged with every new proposal."""
    label = rec.get("name") or cut(rec["title"], 80)
    return model.complete("event", {
        "task_summary": f"{rec['kind']} suggested: {label}", "outcome": "proposed",
        "primary_skill": "self-learning-skills", "tags": [SUGGESTED_TAG[rec["kind"]], "proposal"],
        "notes": [f"proposal {rec['id']}", f"key {rec['key']}",
                  f"{rec.get('sessions', 0)} sessions, quality {rec.get('quality')}"]})


def _by_key(props: Dict[str, dict]) -> Dict[str, dict]:
    """Every pattern key a proposal covers (a stitched chain covers its trigrams)."""
    return {k: p for p in props.values() for k in p.get("covers") or [p.get("key")]}


def offer(memory, found: List[dict], dry_run: bool, setup, force: bool = False) -> List[dict]:
    """File new proposals (one per kind per run unless ``force``), update pending ones,
    settle pending rules whose card is hidden or whose lesson is already in RULES_FILE,
    skip decided keys; returns one report entry per proposal touched."""
    props = _all(memory)
    cards = memory.folded("cards")
    present = rules_present(setup.repo_root) if setup is not None and setup.repo_root else {}
    report, lines, events, fresh = [], [], [], set()
    for p, line in _settled_rules(props, cards, present):
        props[p["id"]] = {**p, **line}
        lines.append(line)
        report.append(_entry(f"{line['status']} ({line.get('reason') or line.get('present')})",
                             p, p["id"]))
    by_key = _by_key(props)
    taken_names = {p.get("name") for p in props.values() if p.get("name")}
    cands = [dict(f["proposal"]) for f in found] + rule_candidates(cards, present)
    cands.sort(key=lambda c: (KINDS.index(c["kind"]), -c.get("quality", 0),
                              -c.get("sessions", 0), c["key"]))
    for cand in cands:
        old = next((by_key[k] for k in cand.get("covers") or [cand["key"]] if k in by_key), None)
        if old is not None:
            if old.get("status") != "proposed":
                if cand.get("changed") or force:
                    report.append(_entry(f"skipped ({old.get('status')})", cand, old["id"],
                                         old.get("title")))
                continue
            update = _grown(old, cand)
            if update is not None:
                lines.append(update)
                report.append(_entry("updated", cand, old["id"], old.get("title")))
                by_key.update(_by_key({old["id"]: {**old, **update}}))
            continue
        if cand.get("below"):  # fell below the bar: it may only update a pending proposal
            continue
        if cand["kind"] in fresh and not force:
            report.append(_entry(f"deferred (one new {cand['kind']} proposal per run)", cand, None))
            continue
        fresh.add(cand["kind"])
        rec = redact.redact(_record(cand, _new_id(props), taken_names, not dry_run))
        props[rec["id"]] = rec
        by_key.update(_by_key({rec["id"]: rec}))
        taken_names.add(rec.get("name"))
        lines.append(rec)
        events.append(_event(rec))
        entry = _entry("proposed", rec, rec["id"])
        entry["warning"] = (rec.get("warnings") or [""])[0]
        report.append(entry)
    if not dry_run:
        memory.append("proposals", lines)
        memory.append("events", events)
    return report


# --- deciding -------------------------------------------------------------------------------

def decided(pid: str, status: str, **fields) -> dict:
    now = model.iso()
    return {"id": pid, "ts": now, "v": model.SCHEMA_VERSION, "status": status,
            "decided_ts": now, **fields}


def reject(memory, pid: str, reason: Optional[str] = None) -> dict:
    """Archive a proposal with a (non-empty) reason; its key is never proposed again."""
    reason = " ".join((reason or "").split())
    if not reason:
        raise UsageError("proposals reject: --reason is required; say why (kept with the "
                         "archived proposal)")
    p = get(memory, pid, "reject")
    undecided(p, "reject")
    line = decided(pid, "rejected", reason=redact.redact_text(reason))
    memory.append("proposals", [line])
    return {"proposal": {**p, **line}, "action": "rejected", "written": None}


# --- suggest-skills ---------------------------------------------------------------------------

def _mined_agg(memory) -> dict:
    """The sequences miner's aggregates as of the last ``mine`` (read-only)."""
    from ..storage import cursors
    state = cursors.load(memory.path(STATE_FILE), "kinds", "suggest-skills",
                         "mine every observation again")
    return (state["kinds"].get(mine_sequences.KIND) or {}).get("agg") or {}


def suggest(memory, propose: Optional[str] = None) -> dict:
    """Pending skill/command proposals, and patterns below the bar with how to file them;
    ``propose`` files one candidate now (a person overrides the bar)."""
    agg = _mined_agg(memory)
    now = model.now()
    mine_sequences.settle(agg, now)
    known = _by_key(_all(memory))
    cands = [f for f in mine_sequences.findings(agg, mine_sequences.CANDIDATE_SESSIONS)
             if not any(k in known for k in f["proposal"]["covers"])]
    data = {"filed": [], "pending": [], "candidates": []}
    if propose:
        chosen = [f for f in cands if f["proposal"]["key"] == propose]
        if not chosen:
            raise UsageError(f"suggest-skills: no candidate with key {propose!r} (see "
                             "`suggest-skills`; run `mine` first to count new sessions)")
        data["filed"] = offer(memory, chosen, False, None, force=True)
        cands = [f for f in cands if f is not chosen[0]]
    data["pending"] = with_corrections(
        memory, [p for p in pending(memory) if p["kind"] in ("skill", "command")])
    for f in cands:
        p = f["proposal"]
        data["candidates"].append({"key": p["key"], "kind": p["kind"], "title": p["title"],
                                   "sessions": p["sessions"], "quality": p["quality"],
                                   "needed": mine_sequences.MIN_SESSIONS,
                                   "accept": f"suggest-skills --propose {p['key']}"})
    return data


# --- text -----------------------------------------------------------------------------------

def _line(p: dict) -> str:
    fixes = f", {len(p['corrections'])} correction(s)" if p.get("corrections") else ""
    failed = f", {p['failures']} failed" if p.get("failures") else ""
    return (f"{p['id']}  [{p['kind']}, {p['status']}] {p['title']} "
            f"({p.get('sessions', 0)} sessions{failed}, quality {p.get('quality')}{fixes})")


def render_list(data: dict) -> List[str]:
    if not data["items"]:
        which = {"proposed": "pending ", "all": ""}.get(data["status"], data["status"] + " ")
        return [f"no {which}proposals (`mine` files them from the observed sessions)"]
    lines = [_line(p) for p in data["items"]]
    if data["status"] == "proposed":
        lines.append("decide: `proposals show --id <id>`, then `proposals apply --id <id>` or "
                     "`proposals reject --id <id> --reason \"…\"`")
    return lines


def render_show(data: dict) -> List[str]:
    p = data["proposal"]
    lines = [_line(p), f"key: {p['key']}", f"target: {p.get('target', '')}",
             f"source: {p.get('source', '')}"]
    lines += [f"warning: {w}" for w in p.get("warnings") or []]
    if p.get("reason"):
        lines.append(f"reason: {p['reason']}")
    if p.get("present"):
        lines.append(f"already present: {p['present']}")
    lines += ["evidence:"] + [f"  - {e}" for e in p.get("evidence") or []]
    if p.get("corrections"):
        lines += ["corrections (newest first):"] + [f"  - {c}" for c in p["corrections"]]
    lines += ["body:", ""] + str(p.get("body", "")).splitlines()
    return lines


def render_decision(data: dict) -> List[str]:
    p = data["proposal"]
    if data["action"] == "applied" and p.get("present"):
        return [f"applied {p['id']} ({p['kind']}): already present in {p['present']}; "
                "nothing written"]
    if data["action"] == "applied":
        return [f"applied {p['id']} ({p['kind']}): wrote {data['written']}"]
    return [f"rejected {p['id']} ({p['kind']}): archived" +
            (f" (reason: {p['reason']})" if p.get("reason") else "") + "; never proposed again"]


def render_suggest(data: dict) -> List[str]:
    lines = [f"{e['action']} {e['id'] or ''}: {e['title']}" for e in data["filed"]]
    lines.append("Pending skill proposals:" if data["pending"] else "No pending skill proposals.")
    for p in data["pending"]:
        lines.append(f"  {p['id']} {p['title']} ({p.get('sessions', 0)} sessions, quality "
                     f"{p.get('quality')})")
        lines += [f"    correction: {c}" for c in p["corrections"]]
        lines.append(f"    accept: `proposals apply --id {p['id']}`; reject: "
                     f"`proposals reject --id {p['id']} --reason \"…\"`")
    if data["candidates"]:
        lines.append("Below the bar (as of the last `mine`):")
    for c in data["candidates"]:
        lines.append(f"  [{c['kind']}] {c['title']} ({c['sessions']}/{c['needed']} sessions, "
                     f"quality {c['quality']})")
        lines.append(f"    accept: `{c['accept']}`")
    return lines
