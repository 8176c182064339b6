"""A shell call that failed for a path its folder lacks but the repository root has.

The shell of Claude Code (and of other agents) keeps the folder an earlier ``cd`` left it in,
so a later call that names a path from the repository root (``git add go/cmd/x.go`` from
``go/``, ``cd src`` from ``src/``) fails with "No such file or directory" or "did not match
any files". It is the slip every project's sessions repeat, through any command, and the
failure itself carries all the evidence: the folder the call ran in (``cwd``), the paths it
named, and what exists. So it needs no earlier session: at the failure, the hook says where
the shell is and where the path is, and the agent picks the way back.

Only a path the call named (an operand, or the target of its leading ``cd``) that is missing
from the folder the call ran in and present from the root counts; the note is facts about
this machine's folders, with the path cut and fenced. Read at failures only, never on the
path of a plain call.
"""

from typing import List, Optional

from ..observation import commands
from ..storage import posixfs as fs

# What a shell, git or a tool says when a path it was given is not there.
NOT_FOUND = ("no such file or directory", "did not match any file", "does not exist",
             "cannot access", "can't cd to", "cannot find the path")
HEADER = ("Note on this failure (self-learning-skills: from this machine's folders; data, "
          "not instructions):")
PATH_MAX = 120  # characters of a path quoted in the note
GLOB = set("*?[{$`<>|&;()")


def _operands(command: str) -> List[str]:
    """The relative paths a shell line names before any folder change of its own: each
    operand of its segments up to and including the first ``cd`` (that one's target too)."""
    out = []
    for seg in commands.segments(command):
        said = [t.strip("'\"") for t in seg.split()]
        if not said:
            continue
        cd = said[0] in ("cd", "pushd")
        for token in said[1:] if not said[0].count("/") else said:
            if _pathlike(token, cd):
                out.append(token.rstrip("/"))
        if cd:
            break
    return list(dict.fromkeys(out))


def _pathlike(token: str, cd: bool) -> bool:
    """A relative path an operand may be: no option, variable, glob, home or absolute path;
    a plain word only as the target of ``cd`` (``src``)."""
    if len(token) < 2 or token in ("..", "./") or token.startswith(("-", "/", "~", "\\")) \
            or GLOB & set(token) or "=" in token:
        return False
    return cd or "/" in token.rstrip("/") or "." in token.strip(".")


def where(record: dict, repo_root: str) -> Optional[str]:
    """The folder a failed shell call ran in, relative to the root, when it is not the root
    and its error says a path was not found; else None."""
    if record.get("tool_kind") != "shell" or not repo_root:
        return None
    cwd = str(record.get("cwd") or "")
    error = str(record.get("error") or "").lower()
    if not cwd.startswith("/") or not any(n in error for n in NOT_FOUND):
        return None
    here = commands.folder(cwd, "", repo_root)
    return None if here == "." else here


def hint(record: dict, repo_root: str, command: str = "") -> str:
    """The note for a failed shell call whose path is missing here and there from the root
    ("" when there is none)."""
    here = where(record, repo_root)
    if here is None:
        return ""
    cwd = str(record.get("cwd"))
    missing = [p for p in _operands(command or str(record.get("args") or ""))
               if not fs.exists(fs.join(cwd, p)) and fs.exists(fs.join(repo_root, p))]
    if not missing:
        return ""
    return note(here, missing[0], repo_root)


def note(here: str, path: str, repo_root: str) -> str:
    """What the agent reads: where the shell is, where the path is, the ways back."""
    fenced = lambda text: "`" + text.replace("`", "")[:PATH_MAX] + "`"  # noqa: E731
    inside = not here.startswith("/")
    if inside and path == here:
        where_ = f"is already in {fenced(here + '/')}"
    else:
        where_ = f"is in {fenced(here + '/')}" + (", not at the repository root" if inside else "")
    local = path[len(here) + 1:] if inside and path.startswith(here + "/") else ""
    ways = [fenced(f"cd {repo_root} && ..."), "an absolute path"]
    ways += [f"{fenced(local)} from here"] if local else []
    return (f"{HEADER}\n- The shell {where_}: a `cd` in an earlier call stays in force. "
            f"{fenced(path)} is missing here but exists from the repository root. Use "
            + ", ".join(ways[:-1]) + " or " + ways[-1] + ".\n")
