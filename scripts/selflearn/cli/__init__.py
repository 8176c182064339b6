"""CLI: parses arguments, calls one feature module per command, prints what it returns.

Nothing below imports it. ``parser`` builds the parser and dispatches; ``common`` holds the
shared context and options; each other module registers one group of commands.
"""
