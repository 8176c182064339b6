"""Miner ``bypass``: a shell command ran where the project says a skill should be used.

The mapping is the project's own statement, in config.json key ``skill_bypass``:
a list of ``{"pattern": <regex searched in the shell command>, "skill": <name>,
"hint": <optional text>}``. Every shell call (success or failure) whose command
matches a rule counts for that rule, unless the skill itself ran earlier in the
same session (its scripts may run the very command). A rule matched in
``MIN_BYPASS_SESSIONS`` sessions becomes the lesson "use skill S instead of
running `cmd`". When the mapping changes, this kind is mined again from the
start (``stale``). Constants are documented in references/LEARNING.md.
Must not import cli.
"""

import re
from typing import Dict, List, Optional

from . import fingerprint
from ..storage import redact
from ..storage.errors import SelfLearningError
from .mine_base import Run, Setup, cut
from .mine_clusters import (Clusters, config_changed, config_digest, config_where, finding,
                            repo_config, seen_lines)

KIND = "bypass"
KEY = "skill_bypass"        # the config.json key holding the mapping

MIN_BYPASS_SESSIONS = 1     # a configured mapping is an explicit human statement: one session
                            # suffices (confidence still starts at mine_base.CONFIDENCE_START)
MAX_COMMANDS_KEPT = 10      # distinct commands (by family) remembered per rule
MAX_SKILL_SESSIONS = 1000   # sessions in which a skill was seen in use; the least recent dropped
MAX_CLUSTERS = 1000         # rules remembered (a config rarely holds more)
CUT_TITLE, CUT_ARGS = 60, 120  # characters of the command in a title, in evidence


class Rule:
    __slots__ = ("pattern", "regex", "skill", "hint", "digest")

    def __init__(self, pattern: str, regex, skill: str, hint: str):
        self.pattern, self.regex, self.skill, self.hint = pattern, regex, skill, hint
        self.digest = fingerprint.digest(f"bypass|{skill}|{pattern}", fold_case=False)


def rules(config: dict, where: str = "config.json") -> List[Rule]:
    """The valid rules of ``config``, or a one-line SelfLearningError naming the entry."""
    entries = config.get(KEY)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise SelfLearningError(f"{where}: \"{KEY}\" must be a list of {{\"pattern\", \"skill\", "
                                f"\"hint\"}} objects, got {type(entries).__name__}")
    out = []
    for i, entry in enumerate(entries):
        name = f"{where}: {KEY}[{i}]"
        if not isinstance(entry, dict):
            raise SelfLearningError(f"{name} must be an object with \"pattern\" and \"skill\", "
                                    f"got {type(entry).__name__}")
        pattern, skill, hint = entry.get("pattern"), entry.get("skill"), entry.get("hint", "")
        for field, value in (("pattern", pattern), ("skill", skill)):
            if not isinstance(value, str) or not value.strip():
                raise SelfLearningError(f"{name}: \"{field}\" must be a non-empty string")
        if not isinstance(hint, str):
            raise SelfLearningError(f"{name}: \"hint\" must be a string")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise SelfLearningError(f"{name}: \"pattern\" {pattern!r} is not a valid regular "
                                    f"expression ({exc})") from None
        if nested_repeat(pattern):
            raise SelfLearningError(f"{name}: \"pattern\" {pattern!r} repeats a group that "
                                    "itself repeats, which can take hours on one command; "
                                    "rewrite it without the inner repeat")
        out.append(Rule(pattern, regex, skill.strip(), redact.redact_text(hint.strip())))
    return out


def nested_repeat(pattern: str) -> bool:
    """Whether a repeated group holds a repeat (``(a+)+``, ``(x*y)*``, ``(\\w+\\s?){2,}``): the
    shape Python's ``re`` backtracks through exponentially on a near miss (damage3-17: 41
    characters hung session-end learning). A valid pattern only; a scan, since ``re`` has no
    timeout and its parser is private."""
    stack, i, last_group = [False], 0, False  # per open group: it holds a repeat
    while i < len(pattern):
        ch, closed = pattern[i], False
        if ch == "\\":
            i += 1
        elif ch == "[":  # a class: to its closing ``]`` (one first, or after ``^``, is literal)
            i += 1 + (pattern[i + 1:i + 2] == "^")
            i += pattern[i:i + 1] == "]"
            while pattern[i] != "]":
                i += 1 + (pattern[i] == "\\")
        elif ch == "(":
            stack.append(False)
        elif ch == ")":
            inner, closed = stack.pop(), True
            stack[-1] |= inner
            last_group = inner
        elif ch in "*+" or (ch == "{" and "," in pattern[i:pattern.find("}", i) + 1]):
            if last_group:
                return True
            stack[-1] = True
        if not closed and ch not in "?":
            last_group = False
        i += 1
    return False


def stale(agg: dict, setup: Setup) -> Optional[str]:
    """Why the aggregates no longer fit the config (then this kind starts over), or None."""
    return config_changed(agg, setup, KEY)


def _skill_used(obs: dict, names: set) -> Optional[str]:
    """The configured skill an observation shows in use (the Skill tool, or its scripts)."""
    text = f"{obs.get('tool') or ''} {obs.get('args') or ''}"
    if obs.get("tool") == "Skill":
        return next((s for s in names if s in text), None)
    return next((s for s in names if f"/{s}/scripts/" in text or f"skills/{s}/" in text), None)


def matching(obs: dict, active: List[Rule]) -> Optional[Rule]:
    """The first rule whose pattern the command of a shell call matches."""
    if obs.get("tool_kind") != "shell" or obs.get("event") not in ("tool_success", "tool_failure"):
        return None
    command = str(obs.get("args") or "")
    return next((r for r in active if r.regex.search(command)), None)


def miner(agg: dict, setup: Setup) -> Run:
    """Shell calls matched against the configured rules; ``agg["config"]`` pins the mapping."""
    active = rules(setup.config, config_where(setup))
    agg["config"] = config_digest(setup.config.get(KEY))
    clusters = Clusters(agg, MAX_CLUSTERS, MIN_BYPASS_SESSIONS)
    used: Dict[str, list] = agg.setdefault("used", {})
    names = {r.skill for r in active}

    def wants(raw: bytes) -> bool:
        return bool(active) and (b"shell" in raw or b"skills/" in raw or b"Skill" in raw) and \
            (b"tool_success" in raw or b"tool_failure" in raw)

    def feed(obs: dict) -> None:
        sid = str(obs.get("session_id") or "")
        skill = _skill_used(obs, names)
        if skill:
            seen = used.pop(sid, [])
            used[sid] = seen if skill in seen else seen + [skill]
            while len(used) > MAX_SKILL_SESSIONS:
                del used[next(iter(used))]
            return
        rule = matching(obs, active)
        if rule is None or rule.skill in used.get(sid, ()):
            return
        c = clusters.hit(rule.digest, obs, lambda: {
            "skill": rule.skill, "pattern": rule.pattern, "commands": {}, "failed": 0})
        c["hint"] = rule.hint
        c["failed"] += obs.get("event") == "tool_failure"
        family = str(obs.get("family") or "") or cut(obs.get("args"), CUT_TITLE)
        commands = c["commands"]
        if family in commands:
            commands[family][0] += 1
        elif len(commands) < MAX_COMMANDS_KEPT:
            commands[family] = [1, cut(obs.get("args"), CUT_ARGS)]

    def lessons() -> List[dict]:
        return [_lesson(d, clusters.items[d]) for d in sorted(clusters.changed)
                if clusters.sessions(d) >= MIN_BYPASS_SESSIONS]

    return Run(wants, feed, lessons)


def _lesson(digest: str, c: dict) -> dict:
    """The card for one rule the agent went around."""
    ranked = sorted(c["commands"].items(), key=lambda kv: -kv[1][0])
    family, (_, example) = ranked[0]
    skill, n = c["skill"], len(c["sessions"])
    card = {
        "title": f"Use skill `{skill}` instead of running `{cut(family, CUT_TITLE)}`",
        "when_to_use": f"about to run a command matching `{c['pattern']}` "
                       f"(e.g. `{cut(family, CUT_TITLE)}`)",
        "problem": f"the project maps such commands to the `{skill}` skill (config.json "
                   f"{KEY}), but they ran directly {c['count']} time(s) in {n} session(s)"
                   + (f", {c['failed']} of them failing" if c["failed"] else ""),
        "solution_steps": [f"use the `{skill}` skill instead of running "
                           f"`{cut(family, CUT_TITLE)}` yourself"]
                          + ([c["hint"]] if c.get("hint") else []),
        "evidence": [f"example: `{example}`"]
                    + [f"also ran: `{args}` ({count}x)" for _, (count, args) in ranked[1:3]]
                    + seen_lines(c),
        "tags": ["mined", "bypass", "shell"], "trigger": family,
    }
    return finding(KIND, digest, f"{skill}|{c['pattern']}", c, card)


def recurs(obs: dict, config: Optional[dict] = None) -> Optional[str]:
    """The digest of the rule a shell call matches (None for anything else). ``config``
    defaults to the config.json of the repository the command runs in."""
    active = rules(repo_config() if config is None else config)
    rule = matching(obs, active) if active else None
    return rule.digest if rule else None
