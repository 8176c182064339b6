"""Sharing commands: feedback, export-rules, suggest-hooks, report.

Imports ``cli_common`` and features only; must not import ``cli``.
"""

COMMANDS = ()
