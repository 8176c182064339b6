"""What every miner shares: the ``Run`` protocol, ``Setup``, confidence and cuts.

A miner module exposes ``KIND`` (its ``--kind`` name), ``miner(agg, setup) -> Run``
and ``recurs(obs) -> Optional[str]`` (the digest an observation would add to, so
``reinforce`` can tell whether a surfaced lesson's pattern came back).
``agg`` is the miner's own JSON-serializable state, saved in the checkpoint.
Must not import cli or mine.
"""

from typing import Callable, List, NamedTuple

from ..observation import causes
from ..observation.causes import missing_program
from ..observation.observe import REFUSALS

STATE_FILE = "mine_state.json"  # the miners' checkpoint and aggregates (also read by suggest-skills)

# --- confidence of a lesson from its evidence, shared by the miners (references/LEARNING.md) ---
MIN_SESSIONS = 2            # a pattern becomes a lesson once seen in this many distinct sessions
CONFIDENCE_START = 0.4      # confidence of a lesson seen in exactly MIN_SESSIONS sessions
CONFIDENCE_CAP = 0.9        # confidence never reaches 1: a mined lesson stays a candidate
CONFIDENCE_KEEP = 0.5       # each session past MIN_SESSIONS keeps this share of the gap to CAP
FIX_BONUS = 0.05            # added when the log shows what worked instead (still capped)
# Failures that teach nothing about the project: the user or the agent stopped the tool,
# or the agent's own read-before-edit protocol (it recovers by reading the file), or a call
# cancelled because another call of the same batch failed.
IGNORED_EXIT_CODES = (130, 137, 143)  # SIGINT, SIGKILL, SIGTERM: interrupted, not failed
IGNORED_ERRORS = (
    "interrupted by user", "request interrupted", "user doesn't want to proceed",
    "user declined", "rejected by user", "keyboardinterrupt", "operation was aborted",
    "has not been read yet", "modified since read", "sibling tool call errored",
    "shell cwd recovered", "shell cwd was recovered",  # the client: its folder went away
)
# A tool call the user refused ("The user doesn't want to proceed with this tool use. The
# tool use was rejected"), or one a hook or policy stopped before it ran.
REJECTED = ("user doesn't want to proceed", "rejected by user", "user declined",
            "user rejected", "user denied", "tool use was rejected")
# Tools that put a plan or a question to the user (Claude Code, Gemini CLI, Codex): turning
# one down is the user's review of what it proposed, never a refusal of the tool.
ASKS_USER = ("exitplanmode", "exit_plan_mode", "askuserquestion", "ask_user",
             "request_user_input")
SAID = "the user said:"     # how Claude Code hands the agent what the user typed on rejecting
REFUSED = REFUSALS[0]      # how Claude Code's result of a call the person refused starts
BLOCKED = ("blocked by hook", "blocked by a hook", "hook denied", "denied this tool",
           "pretooluse:", "beforetool", "pretooluse hook", "blocked by policy",
           "denied by policy", "has been denied", "blocked by the sandbox")
# The agent's own built-in tool protocol (Read, Edit, Write, Grep, ...): it recovers by
# reading, re-quoting or paging; never project knowledge on its own. Shell output is not.
PROTOCOL_ERRORS = (
    "file does not exist", "string to replace not found", "matches of the string to replace",
    "no changes to make", "exceeds maximum allowed", "eisdir", "illegal operation on a directory",
    "inputvalidationerror", "file content (", "is a directory",
    "old_string and new_string are exactly the same", "path does not exist",
    "file has been unexpectedly modified",
)

# MCP servers that ship with the agent client itself (Claude Code's IDE bridge and browser
# extension): their failures are the client's own protocol, like a built-in tool's. Any MCP
# tool's JSON-RPC errors (bad arguments, unknown tool) are the agent's calling slips.
OWN_MCP_SERVERS = ("ide", "claude-in-chrome", "claude_in_chrome")
MCP_PROTOCOL_ERRORS = ("mcp error -32", "no such tool available")


class Run(NamedTuple):
    """One miner over one run: ``wants(raw line) -> bool`` (a fast byte test; False
    skips the line unparsed), ``feed(obs)`` once per parsed observation in file
    order, ``lessons()`` the lessons whose evidence changed in this run."""
    wants: Callable[[bytes], bool]
    feed: Callable[[dict], None]
    lessons: Callable[[], List[dict]]


class Setup(NamedTuple):
    """What a miner may know besides observations: the repository and its config."""
    repo_root: str
    config: dict


def confidence(sessions: int, has_fix: bool = False) -> float:
    """START at MIN_SESSIONS; each further session keeps KEEP of the gap to CAP; + FIX_BONUS."""
    extra = max(0, sessions - MIN_SESSIONS)
    value = CONFIDENCE_START + (CONFIDENCE_CAP - CONFIDENCE_START) * (1 - CONFIDENCE_KEEP ** extra)
    return round(min(CONFIDENCE_CAP, value + (FIX_BONUS if has_fix else 0.0)), 3)


# A filter's verdict on the data it ran over (jq at run time, the AWS CLI's JMESPath
# ``--query``): the agent exploring a response's shape, where the next probe is no fix and
# today's data is no lesson about the project.
DATA_PROBES = ("jq: error (at ", "invalid type for value: ")
# Programs every POSIX shell finds: one it cannot means the session broke PATH (an `export
# PATH=…` without `$PATH`), and what worked next is no lesson about that program.
EVERYWHERE = frozenset(("cat", "head", "tail", "ls", "grep", "sed", "awk", "sort", "uniq", "wc",
                        "cut", "tr", "mkdir", "rm", "cp", "mv", "chmod", "find", "xargs", "env",
                        "date", "dirname", "basename", "touch", "tee"))


def verdict(line: str) -> bool:
    """Whether a failure's cause line is a verdict on the work at hand, not knowledge about
    the project: a failing test's on the code under work, a filter's on the data explored, a
    shell's that lost its PATH in this session."""
    low = line.lower()
    return causes.test_verdict(line) or any(p in low for p in DATA_PROBES) or \
        missing_program(line) in EVERYWHERE


def missing(obs: dict) -> bool:
    """The shell could not find the program (exit 127, ``command not found``), when what it
    names is a program's name: ``world\": command not found`` is a quoting slip, the rest of
    a string the shell took for a command. A skill this setup lacks is missing the same way."""
    if missing_skill(obs):
        return True
    error = str(obs.get("error") or "")
    if "command not found" not in error:
        return obs.get("exit_code") == 127
    return not causes.not_found(error) or bool(missing_program(error))


def missing_skill(obs: dict) -> str:
    """The skill a call asked for that this setup does not have (``Unknown skill: commit``),
    else "". Not the client's protocol: an agent that reaches for it once does so in every
    session, and what did its job instead is worth knowing."""
    if obs.get("tool_kind") == "shell" or "unknown skill" not in str(obs.get("error") or "").lower():
        return ""
    return str(obs.get("args") or "").split(" ", 1)[0]


def ignored(obs: dict, blocked: bool = True) -> bool:
    """Interrupted, refused or protocol failures: kept in the log, never a failure lesson (a
    refusal is the denials miner's, which would otherwise make a second card of it). With
    ``blocked`` False, a call a hook or a policy blocked is no such failure."""
    if obs.get("interrupted") is True or obs.get("exit_code") in IGNORED_EXIT_CODES:
        return True
    error = str(obs.get("error") or "").lower()
    markers = IGNORED_ERRORS + REJECTED + (BLOCKED if blocked else ())
    if any(marker in error for marker in markers):
        return True
    if obs.get("tool_kind") == "mcp":
        server = str(obs.get("tool") or "").split("__")[1:2]
        return bool(server) and server[0] in OWN_MCP_SERVERS or \
            any(marker in error for marker in MCP_PROTOCOL_ERRORS)
    return obs.get("tool_kind") != "shell" and any(marker in error for marker in PROTOCOL_ERRORS)


def user_words(obs: dict) -> str:
    """What the person typed when refusing a call, or ''. Claude Code hands it on after
    ``SAID`` in the result it makes of the refusal, which starts with ``REFUSED``; any other
    text holding those words (a tool's output, a classifier's reason quoting the command) is
    not the person's."""
    text = str(obs.get("error") or "")
    at = text.lower().find(SAID)
    return text[at + len(SAID):].strip() if at >= 0 and text.startswith(REFUSED) else ""


def cut(text: str, limit: int) -> str:
    text = " ".join(str(text or "").replace("`", "'").split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"
