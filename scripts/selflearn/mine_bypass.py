"""Miner ``bypass``: PLACEHOLDER until implemented (finds nothing)."""

from typing import Optional

from .mine_base import Run, Setup

KIND = "bypass"


def miner(agg: dict, setup: Setup) -> Run:
    return Run(lambda raw: False, lambda obs: None, lambda: [])


def recurs(obs: dict) -> Optional[str]:
    return None
