"""The project's own settings: ``<repo>/.agent-skills/self-learning/config.json``.

Optional and human-edited; absent means defaults. Read once per command; a
file that is not a JSON object is a one-line error, never a silent default.
Keys are documented in references/LEARNING.md (``skill_bypass``) and
references/SURFACING.md (``advice``). Must not import cli.
"""

import json

from . import paths, store
from .errors import SelfLearningError

CONFIG = ".agent-skills/self-learning/config.json"  # relative to the repo root


def path(repo_root: str) -> str:
    return paths.config_file(repo_root)


def load(repo_root: str) -> dict:
    """The config object, ``{}`` when there is none."""
    where = path(repo_root)
    try:
        raw = store.read_bytes(where)  # a FIFO or folder is an error, never a hang
        if raw is None:
            return {}
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SelfLearningError(f"{where}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SelfLearningError(f"{where}: must hold a JSON object, got {type(data).__name__}")
    return data
