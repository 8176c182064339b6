"""Test-only helpers that plant a store in a given state (see ``seed_payload``)."""
import os


def seed_payload(payload: dict, repo_root=None, user: str = "tester") -> dict:
    """Test-only: write a record payload as the tool itself would, provenance included.

    ``record`` refuses ``origin``, ``confidence`` and non-initial statuses from an agent's
    payload; tests that need a store in a given state (an accepted human card, a mined
    candidate) plant it here: each item is redacted, completed and appended, and INDEX.md
    refreshed. Returns ``{"cards": [...], "recs": [...]}`` as written.
    """
    from selflearn.storage import bootstrap, model, paths, redact
    from selflearn.storage.memory import Memory
    from selflearn.surfacing import index
    root = str(repo_root or os.environ["SELF_LEARNING_REPO_ROOT"])
    memory = Memory(paths.project_store(root, user))
    created = not os.path.isdir(memory.root)
    taken = set(memory.folded("cards")) | set(memory.folded("recs"))
    out = {}
    for section, kind, name in (("aha_cards", "card", "cards"), ("recommendations", "rec", "recs"),
                                ("events", "event", "events")):
        items = payload.get(section) or []
        if section == "events" and payload.get("event"):
            items = [payload["event"]]
        lines = [model.complete(kind, redact.redact(item), taken) for item in items]
        taken.update(line["id"] for line in lines)
        memory.append(name, lines)
        out[name] = lines
    bootstrap.ensure_store(memory.root, root, created=created)
    index.refresh(memory, user)
    return out


def seed_record(payload: dict, repo_root=None, user: str = "tester"):
    """``seed_payload`` shaped like the ``run`` helper's result: ``(0, "", "")``."""
    seed_payload(payload, repo_root, user)
    return 0, "", ""
