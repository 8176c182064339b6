"""Observation: what the agent did, as redacted observations.

Receives agents' hook payloads and transcripts; produces ``observations.jsonl`` lines. Owns
the hook, payload normalization, transcript backfill, hook installers and ``doctor``.
May import ``storage`` only; the PostToolUse path keeps its small import budget.
"""
