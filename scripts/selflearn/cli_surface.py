"""Surfacing commands: advice, reinforce.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

COMMANDS = ()
