#!/usr/bin/env python3
"""Trim and scrub one Claude Code transcript for the learning benchmark (bench/learning/).

Keeps ``user``, ``assistant`` and compact-boundary entries; drops thinking blocks, token usage
and bookkeeping fields; cuts long strings keeping head and tail (failed results 2,000 + 900
characters, successful Bash results 1,000 + 400, other results 200 + 80); keeps only the
status fields of ``toolUseResult``; replaces user names in home folders, e-mail addresses and
commit authors. Each output line stays valid JSON. Written for the held-out set (#12); the
first 27 sessions were prepared the same way by hand (bench/learning/README.md).
Usage: python3 bench/learning/prepare.py IN.jsonl OUT.jsonl
"""
import json
import re
import sys

KEEP = ("isSidechain", "cwd", "sessionId", "type", "message", "timestamp", "permissionMode",
        "isMeta", "toolUseResult", "subtype", "compactMetadata")
RESULT_KEEP = ("interrupted", "isImage", "returnCodeInterpretation", "type", "filePath")
HOME = re.compile(r"(/Users/|/home/)(?!USER\b)[^/\s\"'\\]+")
DASHED = re.compile(r"-(Users|home)-(?!USER\b)[A-Za-z0-9._]+")
MAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
AUTHOR = re.compile(r"(Author: )[^<\n]*<[^>\n]*>")


def scrub(text: str) -> str:
    text = HOME.sub(r"\1USER", text)
    text = DASHED.sub(r"-\1-USER", text)
    text = AUTHOR.sub(r"\1AUTHOR <user@example.invalid>", text)
    return MAIL.sub("user@example.invalid", text)


def cut(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail + 80:
        return text
    return (f"{text[:head]}\n[... {len(text) - head - tail} chars trimmed for the benchmark ...]\n"
            f"{text[-tail:]}")


def shrink(value, head: int, tail: int):
    if isinstance(value, str):
        return cut(scrub(value), head, tail)
    if isinstance(value, list):
        return [shrink(v, head, tail) for v in value]
    if isinstance(value, dict):
        return {k: shrink(v, head, tail) for k, v in value.items()}
    return value


def entry(e: dict, bash_ids: set):
    kind = e.get("type")
    if kind not in ("user", "assistant") and not (kind == "system" and
                                                  e.get("subtype") == "compact_boundary"):
        return None
    out = {k: e[k] for k in KEEP if k in e}
    msg = dict(out.get("message") or {})
    msg.pop("usage", None)
    msg.pop("model", None)
    content = msg.get("content")
    if isinstance(content, list):
        blocks = []
        for b in content:
            if not isinstance(b, dict) or b.get("type") in ("thinking", "redacted_thinking"):
                continue
            if b.get("type") == "tool_use" and b.get("name") == "Bash":
                bash_ids.add(b.get("id"))
            if b.get("type") == "tool_result":
                failed = b.get("is_error") is True
                head, tail = (2000, 900) if failed else \
                    (1000, 400) if b.get("tool_use_id") in bash_ids else (200, 80)
                b = shrink(b, head, tail)
            else:
                b = shrink(b, 4000, 1000)
            blocks.append(b)
        msg["content"] = blocks
    elif isinstance(content, str):
        msg["content"] = shrink(content, 4000, 1000)
    if msg:
        out["message"] = msg
    result = out.get("toolUseResult")
    if isinstance(result, dict):
        out["toolUseResult"] = {k: shrink(v, 200, 80) for k, v in result.items()
                                if k in RESULT_KEEP}
    elif result is not None:
        out["toolUseResult"] = shrink(result, 2000, 900)
    return shrink(out, 10 ** 9, 0)  # every string scrubbed, wherever it sits


def prepared(raw: str) -> str:
    """The transcript ``raw`` (JSONL) as the benchmark keeps it."""
    bash_ids: set = set()
    kept = []
    for line in raw.split("\n"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        e = entry(e, bash_ids) if isinstance(e, dict) else None
        if e:
            kept.append(json.dumps(e, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(kept) + "\n"


def main(argv) -> int:
    src, dst = argv[1], argv[2]
    with open(src, encoding="utf-8") as fh:
        text = prepared(fh.read())
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
