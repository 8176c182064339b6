"""The one error type the tool raises, caught once in ``cli.main``.

A ``SelfLearningError`` message may hold several lines (one per problem); the
CLI prefixes each with ``self_learning: error:``. Exit codes: 2 for bad input
(``UsageError``), 1 for a runtime failure.
"""


class SelfLearningError(Exception):
    """A failure the user can act on; ``str(err)`` is the message shown."""

    exit_code = 1


class UsageError(SelfLearningError):
    """Bad input: a wrong flag, an invalid payload, an unknown id."""

    exit_code = 2
