"""Episodes: a tool failure, what the agent did next, and the call that then worked.

Owns finding a session's failure→recovery episodes with their exact evidence (the failed
call, its cause line, the steps in between, the call that worked), for the agent to turn
into a lesson in its own words (the Stop hook asks, ``ask``) or for ``distill``. High
recall on purpose: the agent judges what is worth keeping; left out are only failures that
teach nothing by themselves (interrupted, the agent's own tool protocol, a failing test's
verdict). Pure over observations, but ``session`` (a byte-filtered read of the log's tail).
Must not import cli or surfacing.
"""

from ..observation import causes
from ..observation.commands import RUNS, command_family, folder, segments, words
from ..storage import fastjson
from ..storage import posixfs as fs
from .mine_base import ASKS_USER, ignored, missing, missing_skill, user_words, verdict

MIN_SAID = 5              # words of what the person said, at least, to be worth asking about
QUESTIONS = ("askuserquestion", "ask_user", "request_user_input")  # tools asking the person:
                          # what they answer there was asked for, not a stepping in
WINDOW = 20                # tool events after a failure searched for the call that worked
MAX_STEPS = 4              # steps between a failure and its recovery kept as evidence
TAIL = 1024 * 1024         # bytes of observations.jsonl read for one session
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")  # run a project's scripts: one stands for another
LOOKING = ("ls", "tree", "cat", "head", "tail", "grep", "rg", "find", "pwd", "echo", "which", "wc",
           "git status", "git diff", "git log", "git show", "sed -n", "jq", "sleep", "env")


def session(store_dir: str, session_id: str) -> list:
    """This session's observations among the last ``TAIL`` bytes of the log, in order."""
    return _of_session(fs.tail(fs.join(store_dir, "observations.jsonl"), TAIL), session_id)


def _of_session(data: bytes, session_id: str) -> list:
    needle = b'"session_id": ' + fastjson.dumps(session_id).encode("utf-8")
    out = []
    for raw in data.split(b"\n"):
        if needle not in raw:
            continue
        try:
            obs = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(obs, dict) and obs.get("session_id") == session_id:
            out.append(obs)
    return out


def _teaches(obs: dict) -> bool:
    """A failure that can teach something about the project or its tools: also a call a hook
    or a policy blocked (what got it through is the lesson), never one the person refused."""
    if obs.get("event") != "tool_failure" or ignored(obs, blocked=False):
        return False
    cause = _cause(obs)
    return bool(cause) and not verdict(cause)


def _cause(obs: dict) -> str:
    """The failure's cause line: the first line of its error, where the hook put it, unless
    no line named one (then the first is a banner, such as a remote server's greeting)."""
    error = str(obs.get("error") or "")
    first = " ".join(error.split("\n", 1)[0].split())
    return first if first and not causes.is_noise(first) else causes.cause_line(error)


def _families(obs: dict) -> set:
    command = str(obs.get("args") or "")
    if obs.get("tool_kind") == "shell" and command:
        return {command_family(s) for s in segments(command)} - {""}
    return {str(obs.get("family") or obs.get("tool") or "")} - {""}


def _said(obs: dict) -> set:
    """The words after a call's program that say something (not ``2`` of ``2>&1``); a
    missing skill's name (``commit``), which says the job."""
    skill = missing_skill(obs)
    if skill:
        return {skill}
    return {w for w in words(str(obs.get("args") or ""))[1:] if len(w) > 2 and not w.isdigit()}


def _targets(obs: dict) -> list:
    """The paths a call names (its words with a ``/``)."""
    return [w.rstrip("/") for w in words(str(obs.get("args") or ""))[1:] if "/" in w]


def _same_job(failed: dict, other: dict) -> bool:
    """Whether ``other`` does what ``failed`` tried: a family or the program in common, the
    same file, two words after the program, or a path of one inside a path of the other
    (``tree lib`` and ``find lib -type d``)."""
    a, b = _families(failed), _families(other)
    if a & b or {f.split()[0] for f in a} & {f.split()[0] for f in b}:
        return True
    if failed.get("file") and failed.get("file") == other.get("file"):
        return True  # a file tool's call on the same file (an Edit refused, then a Write)
    if {_script(f) for f in a} & {_script(f) for f in b} - {""}:
        return True  # one package manager's script through another (`pnpm test`, `bun test`)
    said = _said(failed)
    shared = said & _said(other)
    if len(shared) >= 2 or (shared and missing(failed)):
        return True  # (another program on the same target stands in for a missing one)
    theirs = _targets(other)
    return any(t == p or t.startswith(p + "/") or p.startswith(t + "/")
               for p in _targets(failed) for t in theirs)


def _script(family: str) -> str:
    """The script a package manager's family runs (``test`` of ``pnpm run test``), else ""."""
    said = family.split()
    if len(said) < 2 or said[0] not in PACKAGE_MANAGERS:
        return ""
    return " ".join(said[2:] if said[1] in RUNS else said[1:])


def _otherwise(failed: dict, later: dict) -> bool:
    """A later failure of the same job with another cause: the first one was got past."""
    a, b = set(words(_cause(failed))), set(words(_cause(later)))
    return bool(a) and len(a & b) * 2 < len(a)


def _looking(obs: dict) -> bool:
    command = " ".join(str(obs.get("args") or "").split())
    parts = segments(command)
    return bool(parts) and all(p.startswith(LOOKING) for p in parts)


def step(obs: dict) -> str:
    """A few words for what the agent did: the command, or the tool and its file's name."""
    if obs.get("tool_kind") == "shell":
        return str(obs.get("args") or "")
    what = str(obs.get("file") or obs.get("args") or "")
    what = what.rstrip("/").rsplit("/", 1)[-1] if obs.get("file") else what
    return f"{obs.get('tool') or 'tool'} {what}".strip()


def find(observations: list) -> list:
    """The episodes of one session, in order: ``{id, call, tool, family, failed, cause, steps,
    worked, worked_id}`` per failure that a later call doing the same job recovered from, and
    per failure the agent met again the same way and that nothing in the session got past
    (``worked`` empty: the agent was stuck; why it cannot work here is the lesson, such as a
    command that needs a terminal or the person)."""
    calls = [o for o in observations if o.get("event") in ("tool_success", "tool_failure")]
    out, done = [], set()
    for i, failed in enumerate(calls):
        if not _teaches(failed) or failed.get("id") in done:
            continue
        steps, again = [], False
        for later in calls[i + 1:i + 1 + WINDOW]:
            got_past = False
            if later.get("event") == "tool_failure":
                if not _same_job(failed, later):
                    continue
                if not _otherwise(failed, later):
                    done.add(later.get("id"))  # the same failure again: one episode
                    again = True
                    continue
                got_past = True  # it now fails otherwise: the steps got past this failure
            if _same_job(failed, later) and (got_past or not (_looking(later)
                                                            and not _looking(failed))):
                out.append(_episode(failed, steps, later))
                break
            if not _looking(later):
                steps.append(step(later))
        else:
            if again and not any(o.get("event") == "tool_success" and _same_job(failed, o)
                                 for o in calls[i + 1:]):
                out.append(_episode(failed, steps, None))
    return out


def _episode(failed: dict, steps: list, worked) -> dict:
    return {"id": failed.get("id"), "call": failed.get("tool_use_id") or "",
            "tool": failed.get("tool") or "", "family": failed.get("family") or "",
            "failed": str(failed.get("args") or ""),
            "cause": _cause(failed),
            "cwd": failed.get("cwd") or "", "ts": failed.get("ts") or "",
            "steps": steps[-MAX_STEPS:], "worked": str((worked or {}).get("args") or ""),
            "worked_id": (worked or {}).get("id")}


def stepped_in(observations: list) -> list:
    """Where the person stepped in during one session, in order: ``{id, ts, said, during}``.

    A prompt that came unasked while the agent was still at work (tool calls since the last
    prompt, the last of them no plan or question put to the person, and no end of turn: Claude
    Code fires no Stop when the person interrupts), or a call (a plan too, not a question to
    them) they refused with words of their own. What a person says there is the clearest
    lesson there is when it holds beyond the task ("no commits directly to main, ever");
    whether it does is the agent's judgement, so nothing here reads the words, but their
    length. Not the person's: a prompt the client made (a task notification, a command's
    output: markup first), and words in any result but the client's own refusal
    (``user_words``; the hook keeps no refusal of a call that came to a result of its own)."""
    out, working, during = [], False, ""
    for obs in observations:
        event = obs.get("event")
        if event in ("tool_success", "tool_failure", "permission_denied"):
            tool = str(obs.get("tool") or "").lower()
            said = user_words(obs) if event != "tool_success" and tool not in QUESTIONS else ""
            if len(said.split()) >= MIN_SAID:
                out.append({"id": obs.get("id"), "ts": obs.get("ts") or "", "said": said,
                            "during": step(obs)})
            # (a plan or a question put to the person hands them the turn: their answer is asked)
            working = tool not in ASKS_USER
            during = step(obs)
        elif event == "prompt":
            said = str(obs.get("prompt") or "")
            if working and len(said.split()) >= MIN_SAID and not said.lstrip().startswith("<"):
                out.append({"id": obs.get("id"), "ts": obs.get("ts") or "", "said": said,
                            "during": during})
            working = False
        elif event in ("stop", "session_start", "compact"):
            working = False
    return out


def by_id(store_dir: str, episode: str):
    """The episode whose failed call's observation has id ``episode``, from the log's tail;
    None when it is not there (compacted, or not an episode)."""
    needle = b'"id": ' + fastjson.dumps(episode).encode("utf-8")
    data = fs.tail(fs.join(store_dir, "observations.jsonl"), TAIL)
    at = data.find(needle)
    if at < 0:
        return None
    line = data[data.rfind(b"\n", 0, at) + 1:data.find(b"\n", at)]
    try:
        failed = fastjson.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    sid = failed.get("session_id") if isinstance(failed, dict) else None
    if not isinstance(sid, str):
        return None
    return next((e for e in find(_of_session(data, sid)) if e["id"] == episode), None)


def call(episode: dict, repo_root: str) -> dict:
    """The trigger shape (``callshape``) of a lesson about ``episode``: the failed call, its
    cause, the folder when the call that worked ran elsewhere, the words it added."""
    from . import callshape
    from .fix_shell import private
    here = folder(episode["cwd"], episode["failed"], repo_root)
    there = folder(episode["cwd"], episode["worked"], repo_root)
    family = episode["family"] or (_families({"args": episode["failed"], "tool_kind": "shell"})
                                   or {""}).pop()
    # paths as the lesson's own words say them: from the repository root, as a mined one's
    failed, cause, worked = (private(t, repo_root) for t in (
        episode["failed"], episode["cause"], episode["worked"]))
    return callshape.shape(episode["tool"], family, failed, cause, here if here != there else "",
                           worked)
