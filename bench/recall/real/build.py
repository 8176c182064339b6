#!/usr/bin/env python3
"""Build queries.json of the real recall set from picks.json and the session transcripts.

Every query text is taken verbatim from bench/learning/sessions/ (a tool result, a tool call's
input, a user prompt, or a quoted span of the assistant's text); texts over 2,000 characters
keep their head and tail, as a hook would pass them. picks.json says where each text is and how
it is labelled; split.json (decided by session before any query was read) gives its set.
Usage: python3 bench/recall/real/build.py [--check]   (--check: exit 1 if queries.json is stale)
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LEARNING = os.path.join(HERE, "..", "..", "learning")
LIMIT, HEAD, TAIL = 2000, 1300, 650
KINDS = ("error", "command", "prompt", "task", "unanswerable")


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def read_session(path: str) -> dict:
    """Index one transcript: tool calls and results by id, user and assistant texts by line."""
    calls, results, prompts, texts = {}, {}, {}, {}
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh):
            entry = json.loads(line)
            message = entry.get("message")
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if entry.get("type") == "user":
                if isinstance(content, str):
                    prompts[line_no] = content
                    continue
                for block in content or ():
                    if block.get("type") == "tool_result":
                        results[block["tool_use_id"]] = (bool(block.get("is_error")), text_of(block.get("content")))
                    elif block.get("type") == "text":
                        prompts[line_no] = prompts.get(line_no, "") + block.get("text", "")
            elif entry.get("type") == "assistant" and isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_use":
                        calls[block["id"]] = (block.get("name"), block.get("input") or {})
                    elif block.get("type") == "text":
                        texts[line_no] = texts.get(line_no, "") + block.get("text", "")
    return {"calls": calls, "results": results, "prompts": prompts, "texts": texts}


def typed_prompt(raw: str) -> str:
    """A slash command's wrapper back to what the user typed (`/name args`); other prompts as they are."""
    name = re.search(r"<command-name>(.*?)</command-name>", raw, re.S)
    if not name:
        return raw
    args = re.search(r"<command-args>(.*?)</command-args>", raw, re.S)
    return (name.group(1).strip() + " " + (args.group(1).strip() if args else "")).strip()


def cut(text: str) -> str:
    if len(text) <= LIMIT:
        return text
    return text[:HEAD] + "\n[...]\n" + text[-TAIL:]


def extract(pick: dict, session: dict) -> tuple:
    where, key = pick["loc"].split(":", 1)
    if where == "result":
        is_error, text = session["results"][key]
        if not is_error:
            raise ValueError(f"{pick['session']} {key}: result is not an error")
        return text, "tool_result"
    if where == "call":
        name, tool_input = session["calls"][key]
        if name == "Bash":
            return tool_input["command"], "tool_use"
        return f"{name} {json.dumps(tool_input, ensure_ascii=False)}", "tool_use"
    line = int(key)
    if where == "prompt":
        return typed_prompt(session["prompts"][line]), ("subagent_prompt" if pick["kind"] == "task" else "user_prompt")
    text = session["texts"][line]
    quote = pick.get("quote")
    if quote:
        if quote not in text:
            raise ValueError(f"{pick['session']} line {line}: quote not found")
        return quote, "assistant_text"
    return text, "assistant_text"


def build() -> dict:
    manifest = {s["session"]: s["file"] for s in load(os.path.join(LEARNING, "manifest.json"))["sessions"]}
    split = load(os.path.join(HERE, "split.json"))["sessions"]
    cards = {c["id"] for c in load(os.path.join(HERE, "cards.json"))["cards"]}
    cards |= {c["id"] for c in load(os.path.join(HERE, "..", "cards.json"))["cards"]}
    sessions, queries, seen, dups = {}, [], {}, []
    for pick in load(os.path.join(HERE, "picks.json"))["picks"]:
        name = pick["session"]
        if name not in sessions:
            sessions[name] = read_session(os.path.join(LEARNING, manifest[name]))
        text, source = extract(pick, sessions[name])
        kind, expected, also = pick["kind"], pick.get("expected"), pick.get("also", [])
        if kind not in KINDS:
            raise ValueError(f"bad kind {kind}")
        if kind in ("error", "command") and not expected:
            raise ValueError(f"{name} {pick['loc']}: {kind} queries need an expected card")
        if kind == "unanswerable" and (expected or also):
            raise ValueError(f"{name} {pick['loc']}: unanswerable queries expect nothing")
        for card in ([expected] if expected else []) + also:
            if card not in cards:
                raise ValueError(f"unknown card {card}")
        query = {"query": cut(text), "kind": kind, "expected": expected}
        if also:
            query["also"] = also
        query.update({"session": name, "set": split[name], "from": source})
        if pick.get("note"):
            query["note"] = pick["note"]
        dup = (query["set"], query["query"])
        if dup in seen:
            dups.append(f"{name} {pick['loc']}: same text as {seen[dup]} in the same set")
            continue
        seen[dup] = f"{name} {pick['loc']}"
        queries.append(query)
    if dups:
        raise ValueError("\n".join(dups))
    return {"schema": 1, "queries": queries}


def main() -> int:
    data = build()
    path = os.path.join(HERE, "queries.json")
    rendered = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        with open(path, encoding="utf-8") as fh:
            return 0 if fh.read() == rendered else 1
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
