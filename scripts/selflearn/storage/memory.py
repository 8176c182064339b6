"""One store folder as a whole: its files, loading and folding, appending.

``Memory`` reads each JSONL file once per command, checks every line against
its kind (``model.LineCheck``) and collects the lines it skips as warnings for
the CLI to print on stderr; a newer-format line stops the command unless the
memory is ``tolerant`` (hooks, ``repair``). ``Stores.resolve`` finds the project
store, the stores teammates committed to the repository (their cards only, imported until
accepted here) and, on request, the global one. Lines are never rewritten here; see
``store`` for the write invariants.
"""

import os
from typing import Callable, Dict, List, Optional, Tuple

from . import model, paths, store
from .errors import SelfLearningError


class Memory:
    """A store folder; ``origin`` is ``project``, ``global`` or ``teammate`` (another user's
    store in the repository); ``reader``: the local user whose acceptances count."""

    def __init__(self, root: str, origin: str = "project", tolerant: bool = False,
                 reader: str = ""):
        self.root = root
        self.origin = origin
        self.reader = reader or os.path.basename(root)
        self.tolerant = tolerant  # skip newer-format lines too (hooks, repair) instead of stopping
        self.warnings: List[str] = []
        self._cache: Dict[str, list] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.root, paths.FILES.get(name, name))

    def exists(self) -> bool:
        return os.path.isdir(self.root)

    def read(self, name: str) -> Tuple[List[dict], List[store.Problem]]:
        """The good lines of one file and the ones commands skip (unreadable, wrong shape,
        newer), without warnings or upgrades."""
        return store.read(self.path(name), check=model.LineCheck(_name(name)).problem)

    def problems(self, name: str) -> List[store.Problem]:
        return self.read(name)[1]

    def quarantine(self, name: str, qdir: str, stamp: str) -> List[store.Problem]:
        """Move the lines ``problems`` reports (newer-format ones stay) to ``qdir``."""
        return store.quarantine(self.path(name), qdir, stamp,
                                model.LineCheck(_name(name)).problem)

    def load(self, name: str) -> List[dict]:
        """Records of one file in order, upgraded; bad lines become warnings."""
        if name not in self._cache:
            self._cache[name] = self.scan(name)
        return self._cache[name]

    def scan(self, name: str, wanted: Optional[Callable[[bytes], bool]] = None) -> List[dict]:
        """Like ``load``, uncached; with ``wanted``, lines it refuses are never parsed."""
        check = model.LineCheck(_name(name))
        records, problems = store.read(self.path(name), wanted, check.problem)
        for problem in problems:
            if problem.newer and not self.tolerant:
                raise SelfLearningError(f"{self.path(name)}:{problem.line}: {problem.reason}")
            self.warn(name, problem.line, problem.reason)
        return records

    def warn(self, name: str, line: int, reason: str) -> None:
        """A line commands skip, as a warning the CLI prints on stderr."""
        fix = "upgrade this skill folder to read it" if reason.startswith(store.NEWER) else \
            "run `repair --apply` to move it to quarantine/"
        self.warnings.append(f"{self.path(name)}:{line}: {reason.split('; ')[0]}; {fix}")

    def folded(self, name: str) -> Dict[str, dict]:
        """Latest version per id, each marked with this store's origin; in a project store
        git tracks, cards no local person accepted read as ``imported`` (``provenance``)."""
        out = store.fold(self.load(name))
        for record in out.values():
            record["_store"] = self.origin
        if name == "cards" and self.origin != "global":
            from . import provenance
            provenance.mark(out, self.root, self.reader)
            if self.origin == "teammate":
                for record in out.values():
                    record["_owner"] = os.path.basename(self.root)
        return out

    def imported(self) -> bool:
        """True when git tracks this store: someone committed it (see ``provenance``)."""
        from . import provenance
        return self.origin != "global" and provenance.tracked(self.root)

    def append(self, name: str, records: List[dict], durable: bool = True) -> None:
        own = self._own(name, records)
        store.append(self.path(name), records, durable=durable)
        self._written([name], own)

    def append_all(self, writes: List[tuple]) -> None:
        """``[(name, records)]`` appended all or nothing (``store.append_all``)."""
        own = [c for name, records in writes for c in self._own(name, records)]
        store.append_all([(self.path(name), records) for name, records in writes])
        self._written([name for name, _ in writes], own)

    def _own(self, name: str, records: List[dict]) -> List[dict]:
        """The cards of ``records`` this person writes as their own into a store that is (or
        will be) committed: all but versions of cards that came with a commit."""
        if _name(name) != "cards" or not records or self.origin != "project":
            return []
        from . import provenance
        if not provenance.committed(self.root):
            return []
        came = {rid for rid, card in self.folded("cards").items() if card.get("_tracked")}
        return [card for card in records if card.get("id") not in came]

    def _written(self, names: List[str], own: List[dict]) -> None:
        """Forget the files' cached records; the person's own cards count as accepted here,
        so after a commit they read as theirs, never as imported."""
        for name in names:
            self._cache.pop(name, None)
        if own:
            from . import provenance
            provenance.accept(self.root, self.reader, own, written=True)


def _name(name: str) -> str:
    """The short name of a store file given by short name or file name."""
    return _SHORT.get(name, name)


_SHORT = {file: short for short, file in paths.FILES.items()}


class Stores:
    """The project store, the global one when asked, and where they sit."""

    def __init__(self, project: Memory, user: str, global_: Optional[Memory] = None,
                 repo_root: str = "", teammates: Optional[List[Memory]] = None):
        self.project, self.user, self.global_, self.repo_root = project, user, global_, repo_root
        self.teammates = teammates or []

    @classmethod
    def resolve(cls, repo_root: str, user: str, include_global: bool = False,
                tolerant: bool = False) -> "Stores":
        from . import provenance
        project = Memory(paths.project_store(repo_root, user), "project", tolerant)
        global_ = Memory(paths.global_store(user), "global", tolerant) if include_global else None
        mates = [Memory(root, "teammate", tolerant, reader=user)
                 for root in provenance.teammates(repo_root, user)]
        return cls(project, user, global_, repo_root, mates)

    def all(self) -> List[Memory]:
        """The stores whose every file counts (teammates' lend their cards only)."""
        return [m for m in (self.project, self.global_) if m is not None]

    def folded(self, name: str) -> Dict[str, dict]:
        """Project records win over global ones with the same id, and both over the cards
        of teammates' stores."""
        out: Dict[str, dict] = {}
        for memory in reversed(self.all()):
            out.update(memory.folded(name))
        for mate in self.teammates if name == "cards" else []:
            for rid, record in mate.folded(name).items():
                out.setdefault(rid, record)
        return out

    def teammate_card(self, rid: str) -> Tuple[Optional[Memory], Optional[dict]]:
        """The teammate store holding card ``rid``, and the card, or (None, None)."""
        for mate in self.teammates:
            card = mate.folded("cards").get(rid)
            if card is not None:
                return mate, card
        return None, None

    def load(self, name: str) -> List[dict]:
        return [r for memory in self.all() for r in memory.load(name)]

    @property
    def warnings(self) -> List[str]:
        return [w for memory in self.all() for w in memory.warnings]
