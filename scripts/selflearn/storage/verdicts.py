"""The safety screen's verdicts remembered per content: ``<store>/screened.json``, or the
store's derived index when it has one (``table``).

Owns which content the screen already judged (``{v, rules, seen: {digest: [reasons]}}``),
so a hook that injects advice need not load the screen's patterns for lessons it judged
before; derived data, replaced atomically, safe to delete. The file is ignored when its
``rules`` differs from ``RULES`` (bump it whenever ``screen``'s patterns change) and in a
store git tracks (a commit could forge it). Imports ``screen`` only on a miss.
Must not import any stage above storage: the index comes in as ``table``, any object with
``verdict(digest) -> reasons or None`` and ``put_verdicts({digest: reasons})``.
"""

from typing import Dict, List, Optional

from . import fastjson, store
from . import posixfs as fs
from .content import accepted, digest

FILE = "screened.json"
RULES = 4                   # the screen's rule set this cache was computed with
MAX_SEEN = 20000            # verdicts kept; beyond it the file starts again


class Verdicts:
    """Verdicts for one store folder; ``save`` writes the new ones (unless ``readonly``)."""

    def __init__(self, root: str = "", readonly: bool = False, table=None):
        self.path = fs.join(root, FILE) if root else ""
        self.readonly = readonly or not root
        self.table = table
        self.seen: Dict[str, List[str]] = {}
        self.new: Dict[str, List[str]] = {}
        if self.path and table is None and not _tracked(root):
            self.seen = _load(self.path)

    def lookup(self, key: str) -> Optional[List[str]]:
        """The reasons remembered for content digest ``key`` (empty: clear); None: not judged."""
        reasons = self.seen.get(key)
        if reasons is None and self.table is not None:
            reasons = self.table.verdict(key)
            if reasons is not None:
                self.seen[key] = reasons
        return reasons

    def known(self, record: dict) -> bool:
        """True when this content was judged before (``blocked`` costs no screening)."""
        return accepted(record) or self.lookup(digest(record)) is not None

    def blocked(self, record: dict, key: Optional[str] = None) -> List[str]:
        """The reasons ``record`` may not reach a prompt or file now (empty: it may).
        ``key``: its content digest when the derived index already computed it (hashing
        needs ``hashlib``, whose OpenSSL costs a hook about 3 ms to load)."""
        if accepted(record):
            return []
        key = key or digest(record)
        reasons = self.lookup(key)
        if reasons is None:
            from . import screen
            reasons = [f.reason for f in screen.card_findings(record)]
            self.seen[key] = self.new[key] = reasons
        return list(reasons)

    def save(self) -> None:
        if self.readonly or not self.new:
            return
        try:
            if self.table is not None:
                self.table.put_verdicts(self.new)
            elif fs.isdir(fs.dirname(self.path)):
                seen = self.seen if len(self.seen) <= MAX_SEEN else dict(self.new)
                store.atomic_write(self.path, fastjson.dumps({"v": 1, "rules": RULES,
                                                             "seen": seen}))
        except OSError:  # a read-only store: the verdicts are judged again next time
            return
        self.new = {}


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
