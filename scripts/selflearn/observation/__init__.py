"""Observation: what the agent did, as redacted observations.

Receives agents' hook payloads and transcripts; produces ``observations.jsonl`` lines. Owns
the hook, payload normalization, transcript backfill, hook installers, ``doctor`` and
``install-skill`` (the skill's files copied into a repository, before any hook can run).
May import ``storage`` only; the PostToolUse path keeps its small import budget.
"""
