"""The one error type the tool raises, caught once in ``cli.main``.

A ``SelfLearningError`` message may hold several lines (one per problem); the
CLI prefixes each with ``self_learning: error:``. Exit codes: 2 for bad input
(``UsageError``), 1 for a runtime failure. ``from_os`` turns an ``OSError`` (read-only
store, full disk, a folder where a file belongs) into one line naming the path and the
fix. Imports nothing: the hook path loads it.
"""


class SelfLearningError(Exception):
    """A failure the user can act on; ``str(err)`` is the message shown."""

    exit_code = 1


class LinkedPath(SelfLearningError):
    """A store file or folder that is a link: writing through it would write elsewhere."""


class UsageError(SelfLearningError):
    """Bad input: a wrong flag, an invalid payload, an unknown id."""

    exit_code = 2


_FIXES = {  # errno -> what to do about it
    13: "it must be yours, readable and writable (chmod u+rw), or point "
        "SELF_LEARNING_REPO_ROOT at a copy you own",
    1: "it must be yours, readable and writable (chmod u+rw), or point "
       "SELF_LEARNING_REPO_ROOT at a copy you own",
    30: "the file system is read-only; point SELF_LEARNING_REPO_ROOT at a writable folder",
    28: "the disk is full; free some space and run the command again",
    27: "a file-size limit (ulimit -f) stopped the write; raise the limit and run the "
        "command again",
    122: "the disk quota is used up; free some space and run the command again",
    21: "a folder sits where a file belongs; move it away and run the command again",
    20: "a file sits where a folder belongs; move it away and run the command again",
    2: "a file or folder is missing; check the path",
    36: "the path is too long; use a shorter one",
    40: "too many symbolic links; check the path",
}


def from_os(exc: OSError) -> SelfLearningError:
    """An ``OSError`` as one line naming the path and the fix (exit 1)."""
    where = exc.filename or "a file"
    why = exc.strerror or type(exc).__name__
    if exc.errno == 20 and exc.filename:  # name the file that sits where a folder belongs
        import os
        here = os.path.dirname(str(exc.filename))
        while here and os.path.dirname(here) != here and not os.path.exists(here):
            here = os.path.dirname(here)
        if os.path.exists(here) and not os.path.isdir(here):
            return SelfLearningError(f"{here} is a file where a folder belongs; move it away "
                                     "and run the command again")
    fix = _FIXES.get(exc.errno or 0, "check the path and its permissions")
    return SelfLearningError(f"{where}: {why}; {fix}")
