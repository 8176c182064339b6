"""Proposal commands: proposals, suggest-skills.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

COMMANDS = ()
