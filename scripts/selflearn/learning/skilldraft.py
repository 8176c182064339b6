"""SKILL.md drafts for proposals: a spec-valid name, frontmatter, and a body.

Owns deriving a skill name from the steps of a mined pattern, the frontmatter
(Agent Skills fields only), the mechanical template body, the optional LLM
provider (``SELF_LEARNING_LLM_CMD``: a shell command that reads the prompt on
stdin and prints the Markdown body) with its fallback to the template, and the
checks every draft passes before it is filed or written. Constants:
references/PROPOSALS.md. Must not import cli.
"""

import json
import os
import re
import subprocess
from typing import Dict, List, Optional, Tuple

from ..storage import redact
from ..storage.text import inert
from .mine_base import cut

ENV_CMD = "SELF_LEARNING_LLM_CMD"  # the provider command; unset = template only
LLM_TIMEOUT = 60            # seconds the provider may take before the template is used
LLM_MAX_CHARS = 20000       # a longer provider answer is refused (template used)
MAX_NAME = 64               # Agent Skills: name length limit
MAX_DESCRIPTION = 1024      # Agent Skills: description length limit
WEIGHT = "0.8"              # metadata.weight of a mined skill (a draft, below hand-written ones)
ORIGIN = "basal-ganglia"    # metadata.origin of a mined skill
CREATED_BY = "self-learning-skills"
ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
OWNED = f'created_by: "{CREATED_BY}"'  # in the frontmatter of every SKILL.md written from a draft
MAX_FILE_WORDS = 8          # a file name of more words reads as a sentence: not named in a draft
# The block holding a person's corrections of the pattern (``correct --pattern``), rewritten
# whole when they change.
CORRECTIONS_BEGIN = "<!-- self-learning-skills:corrections:begin -->"
CORRECTIONS_END = "<!-- self-learning-skills:corrections:end -->"
NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Words that name how a tool is started rather than what it does: left out of names.
FILLER = frozenset(("run", "run-script", "exec", "x", "dlx", "-m", "python", "python3", "node",
                    "npx", "bunx", "uv", "bash", "sh", "mcp", "sudo", "env"))


def check_name(name: str) -> Optional[str]:
    """Why ``name`` is not a spec-valid skill name (also refuses paths), or None."""
    if not isinstance(name, str) or not name:
        return "is empty"
    if len(name) > MAX_NAME:
        return f"is longer than {MAX_NAME} characters"
    if not NAME_RE.fullmatch(name):
        return ("must be lowercase letters, digits and single hyphens, with no leading or "
                "trailing hyphen (no paths)")
    return None


def derive_name(steps: List[str], taken=()) -> str:
    """Words of the steps' tools in order (fillers, flags and paths dropped), deduplicated,
    <= MAX_NAME;
    a name in ``taken`` gets ``-2``, ``-3``…"""
    words: List[str] = []
    for step in steps:
        step = step[4:].replace("__", " ").replace("/", " ") if step.startswith("mcp:") else step
        kept = [w.rstrip("/").split("/")[-1].split(".")[0] for w in step.split()
                if w.lower() not in FILLER and not w.startswith("-")
                and not any(c in w for c in "='\"$")]
        slugs = ["-".join(re.findall(r"[a-z0-9]+", w.lower())) for w in kept if not w.isdigit()]
        words += [w for w in dict.fromkeys(slugs) if w and w not in words][:3]
    name = ""
    for word in words:
        if len(name) + len(word) + 1 > MAX_NAME - 3:
            break
        name = f"{name}-{word}" if name else word
    base = name or "workflow"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def listed_files(p: dict) -> List[str]:
    """The files a draft may name. A skill is read as instructions and a file name can carry
    one (``AI-AGENTS-run-curl-….md``): a name the safety screen flags when read as words, or
    one that reads as a sentence (more than MAX_FILE_WORDS words), is left out."""
    from ..storage import screen
    out = []
    for path in p.get("files") or []:
        words = re.findall(r"[^\W_]+", str(path).rsplit("/", 1)[-1].rsplit(".", 1)[0])
        if len(words) <= MAX_FILE_WORDS and not screen.text_findings(" ".join(words)) and \
                not screen.text_findings(str(path)):
            out.append(path)
    return out


def _step_line(step: str, example: str) -> str:
    if step.startswith("mcp:"):
        return f"Call the MCP tool `{step[4:]}`."
    if step in ("web", "task"):
        return f"Use the {step} tool (`{example}`)." if example != step else f"Use the {step} tool."
    shown = f" (here: `{example}`)" if example and example != step else ""
    return f"Run `{step}`{shown}."


def description(p: dict) -> str:
    """What it does and when to use it, from the evidence; no angle brackets, one line."""
    steps = ", then ".join(f"`{s}`" for s in p["steps"])
    what = (f"Runs {steps}" if p["kind"] == "skill" else f"Runs `{cut(p['steps'][0], 200)}`") + \
        f", which succeeded in {p['sessions']} sessions in this repository."
    when = "; ".join(p.get("prompts") or [])
    files = ", ".join(listed_files(p))
    text = what + (f" Use for tasks like: {when}." if when else "") + \
        (f" Files involved: {files}." if files else "")
    text = " ".join(text.replace("<", "").replace(">", "").split())
    return cut(text, MAX_DESCRIPTION)


def frontmatter(p: dict, name: str) -> str:
    """Agent Skills frontmatter: name, description, metadata (strings only)."""
    meta = {"created_by": CREATED_BY, "weight": WEIGHT, "origin": ORIGIN,
            "tags": " ".join(p.get("tags") or []), "pattern": p["key"]}
    lines = ["---", f"name: {name}", f"description: {json.dumps(description(p), ensure_ascii=False)}",
             "metadata:"]
    lines += [f"  {k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items()]
    return "\n".join(lines + ["---", ""])


def template_body(p: dict) -> str:
    """The mechanical body: steps, when to use, evidence; says it is a mined draft."""
    title = p["title"].split(": ", 1)[-1]
    lines = [f"# {title}", "",
             f"Mined by self-learning-skills from {p['sessions']} successful sessions "
             f"({p['first_seen']} to {p['last_seen']}); check the steps before relying on them.",
             "", "## When to use", ""]
    lines += [f"- Tasks like: {prompt}" for prompt in p.get("prompts") or []] or \
        ["- When you are about to run these steps by hand again."]
    files = listed_files(p)
    lines += [f"- Files involved: {', '.join(f'`{f}`' for f in files)}"] if files else []
    lines += ["", "## Steps", ""]
    if p["kind"] == "command":
        lines += ["Run:", "", "```bash", p["steps"][0], "```"]
    else:
        lines += [f"{n}. {_step_line(step, p['examples'].get(step, step))}"
                  for n, step in enumerate(p["steps"], 1)]
    lines += ["", "## Evidence", ""] + [f"- {e}" for e in p.get("evidence") or []]
    return "\n".join(lines) + "\n"


def prompt_for(p: dict, name: str, template: str) -> str:
    """What the provider reads on stdin: the task, the evidence, the template to improve."""
    return "\n".join([
        "Write the Markdown body (no YAML frontmatter) of an Agent Skills SKILL.md for a "
        "workflow that a coding agent repeated successfully in this repository.",
        f"Skill name: {name}", f"Description: {description(p)}",
        "Steps in order: " + " -> ".join(p["steps"]),
        "Evidence (sessions, prompts, files):", *[f"- {e}" for e in p.get("evidence") or []],
        *[f"- file: {f}" for f in listed_files(p)],
        "Write a title line, '## When to use', '## Steps' (numbered, imperative) and, if the "
        "evidence shows any, '## Gotchas'. Under 60 lines. Print only the Markdown.",
        "", "Template to improve:", "", template])


def run_provider(command: str, prompt: str) -> Tuple[Optional[str], str]:
    """The provider's body, or (None, why it failed)."""
    try:
        done = subprocess.run(command, shell=True, input=prompt, capture_output=True, text=True,
                              timeout=LLM_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {LLM_TIMEOUT} s"
    except (OSError, ValueError) as exc:
        return None, str(exc)
    if done.returncode != 0:
        why = (done.stderr or "").strip().splitlines()
        return None, f"exit {done.returncode}" + (f": {cut(why[-1], 120)}" if why else "")
    text = (done.stdout or "").strip()
    if text.startswith("---") and text.find("\n---", 3) > 0:
        text = text[text.find("\n---", 3) + 4:].strip()  # our frontmatter is the one kept
    if not text:
        return None, "empty output"
    if len(text) > LLM_MAX_CHARS:
        return None, f"output longer than {LLM_MAX_CHARS} characters"
    return redact.redact_text(text) + "\n", ""


def compose(p: dict, name: str, use_provider: bool = True) -> Dict[str, str]:
    """The SKILL.md draft: ``text``, ``source`` (llm|template) and ``warning`` ("" if none)."""
    template = template_body(p)
    command = os.environ.get(ENV_CMD, "").strip()
    body, source, warning = template, "template", ""
    if command and use_provider:
        answer, why = run_provider(command, prompt_for(p, name, template))
        if answer is None:
            warning = f"provider failed ({why}); used the template"
        else:
            body, source = answer, "llm"
    return {"text": frontmatter(p, name) + "\n" + inert(body), "source": source,
            "warning": warning}


def with_corrections(text: str, corrections: List[str]) -> str:
    """The SKILL.md with its corrections block (newest first) at its end in place of any older
    one; none when there are no corrections."""
    start = text.find(CORRECTIONS_BEGIN)
    end = text.find(CORRECTIONS_END, start + 1)
    if 0 <= start < end:
        rest = text[end + len(CORRECTIONS_END):].lstrip("\n")
        text = text[:start].rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    if not corrections:
        return text
    return "\n".join([text.rstrip("\n"), "", CORRECTIONS_BEGIN, "## Corrections", "",
                      "People corrected this workflow (newest first); follow them over the "
                      "steps above.", "", *(f"- {c}" for c in corrections), CORRECTIONS_END, ""])


def rename(text: str, name: str) -> str:
    """The draft with another ``name:`` in its frontmatter."""
    return re.sub(r"(?m)\A(---\n(?:.*\n)*?)name: .*$", lambda m: m.group(1) + f"name: {name}",
                  text, count=1)


def check(text: str) -> List[str]:
    """Every problem with a SKILL.md's frontmatter (the checks our own SKILL.md passes)."""
    lines = text.splitlines()
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        return ["SKILL.md must start with a --- frontmatter block"]
    keys: Dict[str, str] = {}
    problems = []
    for line in lines[1:lines.index("---", 1)]:
        if line.startswith((" ", "\t")):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            problems.append(f"frontmatter line is not 'key: value': {line!r}")
        keys[key.strip()] = value.strip()
    problems += [f"frontmatter key {k!r} is not an Agent Skills field" for k in keys
                 if k not in ALLOWED_KEYS]
    why = check_name(keys.get("name", ""))
    if why:
        problems.append(f"name {keys.get('name', '')!r} {why}")
    desc = keys.get("description", "")
    if desc.startswith('"'):
        try:
            desc = json.loads(desc)
        except ValueError:
            problems.append("description is not a valid quoted string")
    if not 1 <= len(desc) <= MAX_DESCRIPTION or "<" in desc or ">" in desc:
        problems.append(f"description must be 1..{MAX_DESCRIPTION} characters without < or >")
    return problems
