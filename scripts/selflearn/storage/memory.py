"""One store folder as a whole: its files, loading and folding, appending.

``Memory`` reads each JSONL file once per command, upgrades records, and
collects unreadable lines as warnings for the CLI to print on stderr.
``open_stores`` resolves the project store and, on request, the global one.
Lines are never rewritten here; see ``store`` for the write invariants.
"""

import os
from typing import Callable, Dict, List, Optional

from . import model, paths, store


class Memory:
    """A store folder; ``origin`` is ``project`` or ``global``."""

    def __init__(self, root: str, origin: str = "project"):
        self.root = root
        self.origin = origin
        self.warnings: List[str] = []
        self._cache: Dict[str, list] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.root, paths.FILES.get(name, name))

    def exists(self) -> bool:
        return os.path.isdir(self.root)

    def problems(self, name: str) -> List[store.Problem]:
        return store.read(self.path(name))[1]

    def load(self, name: str) -> List[dict]:
        """Records of one file in order, upgraded; bad lines become warnings."""
        if name not in self._cache:
            self._cache[name] = self.scan(name)
        return self._cache[name]

    def scan(self, name: str, wanted: Optional[Callable[[bytes], bool]] = None) -> List[dict]:
        """Like ``load``, uncached; with ``wanted``, lines it refuses are never parsed."""
        records, problems = store.read(self.path(name), wanted)
        for problem in problems:
            self.warn(name, problem.line, problem.reason)
        where = self.path(name)
        return [model.upgrade(r, where) for r in records]

    def warn(self, name: str, line: int, reason: str) -> None:
        """An unreadable line, as a warning the CLI prints on stderr."""
        self.warnings.append(f"{self.path(name)}:{line}: {reason}; "
                             "run `repair --apply` to move it to quarantine/")

    def folded(self, name: str) -> Dict[str, dict]:
        """Latest version per id, each marked with this store's origin; in a project store
        git tracks, cards no local person accepted read as ``imported`` (``provenance``)."""
        out = store.fold(self.load(name))
        for record in out.values():
            record["_store"] = self.origin
        if name == "cards" and self.origin == "project":
            from . import provenance
            provenance.mark(out, self.root, os.path.basename(self.root))
        return out

    def imported(self) -> bool:
        """True when git tracks this store: someone committed it (see ``provenance``)."""
        from . import provenance
        return self.origin == "project" and provenance.tracked(self.root)

    def append(self, name: str, records: List[dict], durable: bool = True) -> None:
        store.append(self.path(name), records, durable=durable)
        self._cache.pop(name, None)


class Stores:
    """The project store, the global one when asked, and where they sit."""

    def __init__(self, project: Memory, user: str, global_: Optional[Memory] = None,
                 repo_root: str = ""):
        self.project, self.user, self.global_, self.repo_root = project, user, global_, repo_root

    @classmethod
    def resolve(cls, repo_root: str, user: str, include_global: bool = False) -> "Stores":
        project = Memory(paths.project_store(repo_root, user), "project")
        global_ = Memory(paths.global_store(user), "global") if include_global else None
        return cls(project, user, global_, repo_root)

    def all(self) -> List[Memory]:
        return [m for m in (self.project, self.global_) if m is not None]

    def folded(self, name: str) -> Dict[str, dict]:
        """Project records win over global ones with the same id."""
        out: Dict[str, dict] = {}
        for memory in reversed(self.all()):
            out.update(memory.folded(name))
        return out

    def load(self, name: str) -> List[dict]:
        return [r for memory in self.all() for r in memory.load(name)]

    @property
    def warnings(self) -> List[str]:
        return [w for memory in self.all() for w in memory.warnings]
