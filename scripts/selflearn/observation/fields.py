"""The observation under construction and the helpers every dialect shares.

Owns ``Obs`` (a dict whose ``put`` redacts, shapes, cuts and hashes each field; a cut
field's full value is remembered as a short SHA-256 in ``hash[field]``), the error head (the
cause line first, shell headers left out), exit codes read from output, and safe accessors.
On the hook path: no ``json``/``re``/``hashlib`` (JSON strings inside payloads go through
``fastjson``, hashes through the builtin ``_sha2``/``_sha256``, each only when needed).
"""

from .commands import refine_family

def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


def first(mapping: dict, keys) -> str:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def loads(text: str):
    """A JSON string found inside a payload, parsed by the C scanner; None if not JSON."""
    from ..storage import fastjson
    try:
        return fastjson.loads(text)
    except ValueError:
        return None


def short_hash(text: str) -> str:
    try:
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python <= 3.11
        except ImportError:  # pragma: no cover - builds without the builtin module
            from hashlib import sha256
    return sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


META = ("exit code", "wall time", "command:", "directory:", "chunk id", "signal:",
         "original token count", "process exited", "process group", "background pids",
         "error: (none)", "output: (empty)", "output:",
         "<untrusted_context>", "</untrusted_context>",  # Gemini CLI wraps tool output in these
         "<shellid:")  # Copilot CLI ends shell output with <shellId: N completed with exit code N>


def error_head(text: str):
    """The line naming the cause (searched in the whole output, see ``causes``), then the
    first non-empty lines, whitespace collapsed, skipping the ``Exit code:``/``Output:``
    header lines shells wrap output in; 3 lines at most; flags whether anything was dropped."""
    from . import causes
    lines = []
    for line in text.splitlines():
        line = " ".join(line.split())
        low = line.lower()
        if low.startswith("output: ") and low != "output: (empty)":
            line = line[8:]
        elif low.startswith(META):
            continue
        if line:
            lines.append(line)
    total = len(lines)
    cause = causes.cause_line("\n".join(lines))
    if cause and cause not in lines[:1]:
        lines = [cause] + [ln for ln in lines if ln != cause and not causes.is_noise(ln)]
    head = "\n".join(lines[:3]) or " ".join(text.split())[:300]
    return head, total > min(3, len(lines))


class Obs(dict):
    """The observation under construction; ``put`` redacts, shapes, cuts and hashes."""

    def __init__(self, agent: str, redact_text):
        super().__init__(agent=agent)
        self._redact = redact_text
        self.command = ""

    def put(self, key: str, value, limit: int = 0, shape: str = "line") -> None:
        """Store ``value``: numbers as they are; strings redacted, then shaped as one
        ``line``, a stripped ``block`` or an error ``head``, then cut to ``limit``."""
        if isinstance(value, (bool, int, float)):
            self[key] = value
            return
        if not isinstance(value, str) or not value:
            return
        full = self._redact(value)
        if shape == "head":
            text, cut = error_head(full)
        else:
            text, cut = full.strip() if shape == "block" else " ".join(full.split()), False
        if limit and len(text) > limit:
            text, cut = text[:limit - 1].rstrip() + "\u2026", True
        if not text:
            return
        if cut:
            self.setdefault("hash", {})[key] = short_hash(full)
        self[key] = text

    def put_error(self, text: str, first_line_code: bool = False) -> None:
        """Error head (``Exit code N`` lines left out) plus the exit code they carry."""
        text = as_str(text)
        code = exit_code(text, first_line_code)
        if code is not None:
            self.put("exit_code", code)
        self.put_failure_text(text)

    def put_failure_text(self, text: str) -> None:
        """``error`` (cause first), the fixes the output suggests (``hint``), and the family
        of the part of a compound command that the error names."""
        from . import causes
        full = self._redact(text)
        self.put("error", text, 300, "head")
        self.put("hint", "\n".join(causes.hints(full)), 300, "block")
        refine_family(self, full)


def exit_code(text: str, first_only: bool = False):
    """The int after ``Exit code``/``Exit Code:``/``exit status``/``Process exited with code``
    (also inside Copilot CLI's ``<shellId: 0 completed with exit code 1>``)."""
    for line in text.splitlines()[:1] if first_only else text.splitlines():
        low = line.strip().lower()
        if low.startswith("<shellid:") and " exit code " in low:  # Copilot CLI's last line
            low = low[low.index(" exit code ") + 1:].rstrip(">")
        for prefix in ("exit code", "process exited with code", "exit status"):
            if low.startswith(prefix):
                word = (low[len(prefix):].lstrip(" :=").split() or [""])[0].rstrip(".,;)")
                if word.lstrip("-").isdigit():
                    return int(word)
    return None
