"""Code edits as fixes: a failure that names a file, then a small edit of that file.

Owns reading a failure's cause line for the file it names (``path:line:col:``,
``path(line,col):``) and the names it is about (quoted names, ``undefined: x``, the
replacement it suggests with "use X"), and describing an edit of that file from its
recorded diff (``edit_old``/``edit_new``) when the change is small and mentions one of
those names. Pure functions over observations; the failures miner decides what proves a fix.
Must not import cli or anything above learning.
"""

import difflib
from typing import List, Tuple

MAX_CHANGED_WORDS = 12   # an edit changing more words than this is work on the code, not a fix
CUT_CHANGE = 90          # characters of each side of a change shown in a step
_CUT = "\u2026"          # how a cut observation field ends


def named_file(line: str) -> str:
    """The file a cause line starts with (``a/b.go:12:3: msg``, ``a/b.ts(6,33): msg``,
    markdownlint's ``a/b.md:12 MD040/…``), the one rustc points to after it
    (``… --> a/b.rs:3:5``)
    or, failing that, ends with (``Merge conflict in a/b.go``); '' when it names none."""
    if " --> " in line:
        line = line.rsplit(" --> ", 1)[1] + ": "
    first = line.split(" ", 1)[0]
    head = line.split(": ", 1)[0].strip() if ": " in line else ""
    if first.count(":") == 1 and first.split(":")[1].isdigit() and not first.endswith(":"):
        head = first  # path:line message (no colon after the line number)
    if "(" in head and head.endswith(")"):
        path, _, where = head[:-1].partition("(")
        head = path if where.replace(",", "").isdigit() else ""
    else:
        parts = head.split(":")
        while len(parts) > 1 and parts[-1].isdigit():
            parts.pop()
        head = parts[0] if len(parts) == 1 and head != parts[0] else ""
    if not head:  # "Merge conflict in a/b.go": a path as the line's last word
        last = line.split()[-1] if line.split() else ""
        head = last.rstrip(".,;:") if "/" in last else ""
    name = head.rsplit("/", 1)[-1]
    return head if "." in name and " " not in head and not head.startswith("(") else ""


def subjects(line: str) -> Tuple[List[str], List[str]]:
    """What a cause line is about: ``(names, suggested)``. Names are its quoted parts and the
    word after ``undefined:`` / ``undeclared name:``; suggested is what it says to use instead
    ("use os/exec.CommandContext")."""
    names: List[str] = []
    for q in ("'", '"', "`"):
        parts = line.split(q)
        names += [p for p in parts[1:-1:2] if 1 < len(p) < 80 and " " not in p.strip()]
    low = line.lower()
    for marker in ("undefined: ", "undeclared name: "):
        at = low.find(marker)
        if at >= 0:
            word = line[at + len(marker):].split(" ")[0].strip("'\"`()<>,.;")
            names += [word] if word else []
    suggested = []
    for marker in ("use ", "instead use ", "try using "):
        at = low.find(marker)
        if at > 0 and low[at - 1] in " .;:,(":
            word = line[at + len(marker):].split(" ")[0].strip("'\"`()<>,.;")
            suggested += [word] if len(word) > 1 else []
    return [n for n in dict.fromkeys(names) if n], suggested


def _tokens(text: str) -> Tuple[List[str], bool]:
    """Words of a recorded edit side, without a last word the record cut."""
    words = str(text or "").split()
    cut = bool(words) and words[-1].endswith(_CUT)
    return (words[:-1] if cut else words), cut


def change(obs: dict) -> Tuple[str, str]:
    """``(removed, added)`` text of a recorded edit: each side from its first to its last
    changed word (so ``_ := f()`` -> ``err := f() if err != nil {...}`` keeps ``f()``), or
    ``('', '')`` when there is no diff or more than ``MAX_CHANGED_WORDS`` words changed."""
    old, old_cut = _tokens(obs.get("edit_old"))
    new, new_cut = _tokens(obs.get("edit_new"))
    if not old and not new:
        return "", ""
    if old_cut and new_cut:  # compare only what both records kept
        n = min(len(old), len(new))
        old, new = old[:n], new[:n]
    spans, changed = [], 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if (old_cut or new_cut) and (i2 == len(old) or j2 == len(new)) and op != "insert":
            continue  # the difference at the cut end is the cut, not the edit
        spans.append((i1, i2, j1, j2))
        changed += (i2 - i1) + (j2 - j1)
    if not spans or changed > MAX_CHANGED_WORDS:
        return "", ""
    first, last = spans[0], spans[-1]
    return " ".join(old[first[0]:last[1]]), " ".join(new[first[2]:last[3]])


def _mentions(text: str, names: List[str]) -> bool:
    """Whether ``text`` names one of ``names`` (or a name's last ``/`` part: ``exec.X`` for
    ``os/exec.X``)."""
    return any(n in text or ("/" in n and n.rsplit("/", 1)[-1] in text) for n in names if n)


def edits_named(obs: dict, named: str) -> bool:
    """Whether a successful edit changed the file the failure named (a relative path)."""
    if obs.get("event") != "tool_success" or obs.get("tool_kind") != "edit" or not named:
        return False
    path = str(obs.get("file") or obs.get("args") or "").replace("\\", "/")
    rel = named[2:] if named.startswith("./") else named  # (.github/, .planning/ keep their dot)
    return path == rel or path.endswith("/" + rel)


def describe(obs: dict, named: str, names: List[str], suggested: List[str]) -> Tuple[str, str]:
    """``(step, how)`` for an edit of the file the error names. When its change is small and
    mentions a name the error is about, the step says what changed and how is ``suggested``
    (it puts in what the error said to use: proof enough) or ``named`` (proven once the
    failed command passes); otherwise the step only names the file and how is ''."""
    where = named.rsplit("/", 1)[-1]
    removed, added = change(obs)
    if not removed and not added:
        return f"edit `{where}` (the file the error names)", ""
    how = "suggested" if suggested and _mentions(added, suggested) else \
        "named" if _mentions(removed + " " + added, names + suggested) else ""
    if not how:
        return f"edit `{where}` (the file the error names)", ""
    r, a = _cut(removed), _cut(added)
    what = f"replace `{r}` with `{a}`" if r and a else f"add `{a}`" if a else f"remove `{r}`"
    said = "as the error says" if how == "suggested" else "the file the error names"
    return f"edit `{where}` ({said}): {what}", how


def _cut(text: str) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= CUT_CHANGE else text[:CUT_CHANGE - 1].rstrip() + _CUT
