"""Graduation: what has proven itself becomes permanent guidance, after a person's review.

Receives accepted cards and proposals; produces backport bundles, edits of skill files and
guidance files (AGENTS.md, CLAUDE.md), and copies into the global store. May import every
stage below it.
"""
