"""Guidance commands: analyze, improve.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

COMMANDS = ()
