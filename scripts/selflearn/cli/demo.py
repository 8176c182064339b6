"""``demo``: the main job end to end on a throwaway store.

Records an event, three cards and two recommendations, marks use and a
status change, then shows ``list`` and ``review`` exactly as a user sees
them. Uses a fresh temporary repo unless ``--repo-root`` was given on the command
line (``SELF_LEARNING_REPO_ROOT``, set for the hooks, names the real store: never).
"""

import os
import tempfile
from typing import List, Tuple

from ..surfacing import index, review
from ..storage import record, update
from ..storage.memory import Stores

PAYLOAD = {
    "event": {"task_summary": "Make the test suite pass on a fresh clone",
              "primary_skill": "python-testing", "notes": ["pytest failed on a read-only cache"]},
    "aha_cards": [
        {"title": "Run pytest with -p no:cacheprovider in read-only checkouts",
         "when_to_use": "pytest fails with PermissionError writing .pytest_cache",
         "problem": "CI mounts the checkout read-only; pytest's cache plugin crashes.",
         "solution_steps": ["python3 -m pytest -p no:cacheprovider"],
         "evidence": ["command: python3 -m pytest"], "primary_skill": "python-testing",
         "scope": "portable", "tags": ["pytest", "ci"]},
        {"title": "Use sh -c, not bash -lc, in the sandbox",
         "when_to_use": "bash -lc exits 127 inside the agent sandbox",
         "solution_steps": ["sh -c '<command>'"], "scope": "portable", "tags": ["shell"]},
        {"title": "Fixtures live in tests/data, one folder per agent",
         "when_to_use": "adding a hook payload fixture", "scope": "project", "tags": ["tests"]},
    ],
    "recommendations": [
        {"title": "Pin pytest in the test requirements", "why": "unpinned upgrades broke CI twice",
         "expected_impact": {"reliability": "high"}, "implementation_hint": "tests/requirements.txt"},
        {"title": "Document the sandbox shell quirk in AGENTS.md", "priority": "low"},
    ],
}


def run(ctx) -> Tuple[dict, List[str]]:
    stores = ctx.stores if ctx.args.repo_root else Stores.resolve(
        tempfile.mkdtemp(prefix="self-learning-demo-"), ctx.user)
    memory = stores.project
    written = record.record(memory, PAYLOAD)
    first = written["aha_cards"][0]["id"]
    update.use(memory, [first], [], source="demo", context="demo run")
    update.use(memory, [first], [], source="demo", context="second demo run")
    update.set_status(memory, "card", first, "accepted", note="worked in CI")
    index.refresh(memory, stores.user)
    listing = review.list_cards(stores, query="pytest cache")
    dashboard = review.review(stores)
    lines = [f"Demo store: {memory.root}", "", "$ list --query 'pytest cache'"]
    lines += review.render_list(listing) + ["", "$ review"] + review.render_review(dashboard)
    lines += ["", f"INDEX.md: {os.path.join(memory.root, 'INDEX.md')}"]
    return {"store": memory.root, "recorded": written, "list": listing, "review": dashboard}, lines
