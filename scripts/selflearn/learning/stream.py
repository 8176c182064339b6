"""One pass over observations.jsonl, shared by ``mine`` and ``analyze``.

Owns the streaming loop: raw lines from the file's current offset with their line numbers and
byte offsets, a last line still being written left for the next run (when asked), and parsing
a line the caller wants: JSON, then the observation schema check; a bad line is skipped with
at most ``MAX_WARNINGS`` warnings, a line of a newer format stops the command. Callers decide
from the raw bytes whether a line is worth parsing (most are not). Must not import cli.
"""

from typing import Callable, Iterator, List, Optional

from ..storage import fastjson, model

MAX_WARNINGS = 10  # warnings kept per command; later bad lines are skipped silently


class Stream:
    """Raw lines of ``fh`` from where it stands: iterate for ``bytes``, ``parse`` those wanted.

    While iterating, ``at`` is the offset where the current line starts, ``pos`` where it
    ends, ``line`` its number (counting from ``line``) and ``read`` the lines seen so far.
    """

    def __init__(self, fh, warnings: List[str], line: int = 0, whole_lines: bool = False):
        self.fh, self.warnings, self.whole_lines = fh, warnings, whole_lines
        self.at = self.pos = fh.tell()
        self.line, self.read = line, 0
        self._check = model.LineCheck("observations")

    def __iter__(self) -> Iterator[bytes]:
        for raw in self.fh:
            if self.whole_lines and raw[-1:] != b"\n":
                break  # still being written: the next run reads it whole
            self.at, self.pos = self.pos, self.pos + len(raw)
            self.line += 1
            self.read += 1
            yield raw

    def parse(self, raw: bytes, keep: Optional[Callable[[dict], bool]] = None) -> Optional[dict]:
        """The observation on ``raw`` (the current line), or None: not JSON, not kept by
        ``keep`` (checked before the schema, so lines left out are not judged), or failing
        the schema check (warned)."""
        where = f"{self.fh.name}:{self.line}"
        try:
            obs = fastjson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self._warn(f"{where}: not JSON ({exc}); skipped")
            return None
        if keep is not None and not (isinstance(obs, dict) and keep(obs)):
            return None
        why = model.streamed(self._check, obs, where)
        if why:
            self._warn(f"{where}: {why}; skipped")
            return None
        return obs

    def _warn(self, text: str) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)
