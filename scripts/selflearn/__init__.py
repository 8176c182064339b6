"""self-learning-skills: a stdlib-only memory for coding agents.

Modules own one concern each. The hook path (``hook`` → ``observe`` → ``store``)
imports neither ``json`` nor ``re`` nor ``argparse`` so it starts near the
interpreter's own start-up time; everything else is imported by its command.
"""

__version__ = "0.1.0"
