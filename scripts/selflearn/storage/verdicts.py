"""The safety screen's verdicts remembered per content: ``<store>/screened.json``.

Owns which content the screen already judged (``{v, rules, seen: {digest: [reasons]}}``),
so a hook that injects advice need not load the screen's patterns for lessons it judged
before; derived data, replaced atomically, safe to delete. The file is ignored when its
``rules`` differs from ``RULES`` (bump it whenever ``screen``'s patterns change) and in a
store git tracks (a commit could forge it). Imports ``screen`` only on a miss.
Must not import any stage above storage.
"""

from typing import Dict, List

from . import fastjson, store
from . import posixfs as fs
from .content import accepted, digest

FILE = "screened.json"
RULES = 3                   # the screen's rule set this cache was computed with
MAX_SEEN = 20000            # verdicts kept; beyond it the file starts again


class Verdicts:
    """Verdicts for one store folder; ``save`` writes the new ones (unless ``readonly``)."""

    def __init__(self, root: str = "", readonly: bool = False):
        self.path = fs.join(root, FILE) if root else ""
        self.readonly = readonly or not root
        self.seen: Dict[str, List[str]] = {}
        self.dirty = False
        if self.path and not _tracked(root):
            self.seen = _load(self.path)

    def known(self, record: dict) -> bool:
        """True when this content was judged before (``blocked`` costs no screening)."""
        return accepted(record) or digest(record) in self.seen

    def blocked(self, record: dict) -> List[str]:
        """The reasons ``record`` may not reach a prompt or file now (empty: it may)."""
        if accepted(record):
            return []
        key = digest(record)
        reasons = self.seen.get(key)
        if reasons is None:
            from . import screen
            reasons = [f.reason for f in screen.card_findings(record)]
            self.seen[key] = reasons
            self.dirty = True
        return list(reasons)

    def save(self) -> None:
        if self.readonly or not self.dirty or not fs.isdir(fs.dirname(self.path)):
            return
        seen = self.seen if len(self.seen) <= MAX_SEEN else {}
        try:
            store.atomic_write(self.path, fastjson.dumps({"v": 1, "rules": RULES, "seen": seen}))
        except OSError:  # a read-only store: the verdicts are judged again next time
            return
        self.dirty = False


def _tracked(root: str) -> bool:
    from . import provenance
    return provenance.tracked(root)


def _load(path: str) -> Dict[str, List[str]]:
    try:
        with open(path, "rb") as fh:
            data = fastjson.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("rules") != RULES or \
            not isinstance(data.get("seen"), dict):
        return {}
    return {k: [str(r) for r in v] for k, v in data["seen"].items()
            if isinstance(k, str) and isinstance(v, list)}
