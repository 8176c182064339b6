"""Where the store lives: repo root, user slug, project and global stores.

Imported by the hook path, so it uses ``posixfs`` rather than ``os``.
Resolution order is documented in references/FORMAT.md and mirrored by the
``paths`` command output.
"""

from . import posixfs as fs

STORE_PARTS = (".agent-skills", "self-learning", "v1", "users")
SKILL_HOMES = (".claude", ".github", ".codex", ".agents")
FILES = {
    "events": "events.jsonl",
    "cards": "aha_cards.jsonl",
    "recs": "recommendations.jsonl",
    "signals": "signals.jsonl",
    "backports": "backports.jsonl",
    "observations": "observations.jsonl",
    "proposals": "proposals.jsonl",
    "surfacings": "surfacings.jsonl",
    "corrections": "corrections.jsonl",
}
# What a person commits for a team (init --commit-store): lessons and their evidence, not the
# observation log (large, and each person's own).
SHARED = ("cards", "recs", "signals", "events", "backports")


def _skill_home_parent(path: str):
    """The folder above ``.claude/skills/...`` (or .github, .codex, .agents) in ``path``."""
    parts = path.split("/")
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] in SKILL_HOMES and parts[i + 1] == "skills":
            return "/".join(parts[:i]) or "/"
    return None


def find_repo_root(explicit=None, cwd=None, script=None) -> str:
    """Explicit flag or env, else nearest parent with ``.git``, else above a skills folder, else cwd."""
    explicit = explicit or fs.env("SELF_LEARNING_REPO_ROOT")
    if explicit:
        return fs.abspath(fs.expanduser(explicit))
    cwd = fs.abspath(cwd or fs.getcwd())
    here = cwd
    while True:
        if fs.exists(fs.join(here, ".git")):
            return here
        parent = fs.dirname(here)
        if parent == here:
            break
        here = parent
    for candidate in (cwd, fs.abspath(script) if script else None):
        above = candidate and _skill_home_parent(candidate)
        if above:
            return above
    return cwd


def user_slug(explicit=None) -> str:
    """A filesystem-safe name for the user; an email keeps only its local part."""
    raw = explicit or fs.env("SELF_LEARNING_USER") or fs.env("USER") \
        or fs.env("LOGNAME") or "default"
    raw = raw.split("@", 1)[0].strip().lower()
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in raw).strip(".-")
    return slug[:64] or "default"


def project_store(repo_root: str, user: str) -> str:
    return fs.join(repo_root, *STORE_PARTS, user)


def global_store(user: str) -> str:
    """``SELF_LEARNING_GLOBAL_DIR`` names the global store folder itself."""
    explicit = fs.env("SELF_LEARNING_GLOBAL_DIR")
    if explicit:
        return fs.abspath(fs.expanduser(explicit))
    return fs.join(fs.expanduser("~"), *STORE_PARTS, user)


def disabled_marker(repo_root: str) -> str:
    return fs.join(repo_root, ".agent-skills", "self-learning", "disabled")


def config_file(repo_root: str) -> str:
    return fs.join(repo_root, ".agent-skills", "self-learning", "config.json")


def kill_switch(repo_root: str):
    """The reason observation is off, or None: env ``SELF_LEARNING_DISABLE`` or the marker file."""
    if fs.env("SELF_LEARNING_DISABLE", "").strip() not in ("", "0", "false", "no"):
        return "SELF_LEARNING_DISABLE is set"
    if fs.exists(disabled_marker(repo_root)):
        return f"marker file {disabled_marker(repo_root)} exists"
    return None
