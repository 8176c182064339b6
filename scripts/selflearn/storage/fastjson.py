"""JSON through the C accelerator, without importing the ``json`` package.

``import json`` pulls in ``re`` and ``enum`` and costs more than the hook's
whole budget, so the hook path calls ``_json``'s scanner and encoder
directly. Output matches ``json.dumps(obj, ensure_ascii=False)``.
Falls back to ``json`` where ``_json`` is missing (e.g. PyPy).
"""

try:
    import _json
except ImportError:  # pragma: no cover - CPython always ships _json
    _json = None

_scan = None
_encode = None


class _Context:
    """The attribute bag ``_json.make_scanner`` reads its settings from."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_WS = " \t\n\r"


def loads(text: str):
    """Parse one JSON document; raises ``ValueError`` on anything else (too deep included)."""
    global _scan
    if _json is None:  # pragma: no cover
        import json
        return json.loads(text)
    if _scan is None:
        _scan = _json.make_scanner(_Context())
    start = len(text) - len(text.lstrip(_WS))
    try:
        obj, end = _scan(text, start)
    except (StopIteration, SystemError):
        # SystemError: 3.11's scanner cannot build its error unless json.decoder is loaded
        raise ValueError("not a JSON document") from None
    except RecursionError:  # thousands of nested brackets: a bad line, not a crash
        raise ValueError("nested too deeply") from None
    if text[end:].strip(_WS):
        raise ValueError(f"extra data after JSON document at offset {end}")
    return obj


def _default(obj):
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps(obj) -> str:
    """Serialize like ``json.dumps(obj, ensure_ascii=False)``."""
    global _encode
    if _json is None:  # pragma: no cover
        import json
        return json.dumps(obj, ensure_ascii=False)
    if _encode is None:
        _encode = _json.make_encoder(
            None, _default, _json.encode_basestring, None, ": ", ", ", False, False, True
        )
    return "".join(_encode(obj, 0))
