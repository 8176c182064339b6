"""Learning: what recurs in observations becomes lessons with a confidence.

Receives observations and surfacing outcomes; produces mined cards, their lifecycle moves,
corrections and proposals. Owns the miners, lifecycle, ``maintain``, ``reinforce`` and
``analyze``. May import ``storage`` and ``observation``.
"""
