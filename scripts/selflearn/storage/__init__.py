"""Storage: the bottom of the road. Append-only JSONL files, their records and helpers.

Receives records to keep (cards, recommendations, signals, observations); produces folds
(the latest line per id wins) and safe appends. Owns the formats (``model``), paths, redaction,
the JSON and filesystem helpers that the hook path uses. Imports nothing above itself.
"""
