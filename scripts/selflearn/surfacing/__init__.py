"""Surfacing: the few lessons that matter now, in front of the agent or a person.

Receives the store's cards and lessons; produces ranked recall, injected advice within a
budget, INDEX.md, ``review``, feedback.md, reports and exported rules. May import
``storage``, ``observation`` and ``learning``.
"""
