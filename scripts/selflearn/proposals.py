"""PLACEHOLDER: the proposals inbox (to be built)."""

from typing import List


def offer(memory, found: List[dict], dry_run: bool, setup) -> List[dict]:
    return []
