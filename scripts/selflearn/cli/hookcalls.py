"""What the ``hook`` command hands the observation path: the stages above it, imported late.

The hook observes (observation) and must not import surfacing or learning; these two
callables reach them only for the events that need them, so a plain tool call pays for
neither. ``inject``: advice at session start and at a prompt (``surfacing.injection``), a
lesson whose trigger fits at a tool call or its failure (``surfacing.jit``, which reads one
small table), the question at the end of a turn that recovered from a failure
(``surfacing.ask``). ``learn``: after a stop, a session's end or start, the learning step when it is
due (``learning.autorun``), in the background unless ``SELF_LEARNING_LEARN=sync``.
"""


def inject(record: dict, repo_root: str, store_dir: str) -> str:
    """What the hook prints for one observation ("" when nothing)."""
    if record.get("event") == "stop":
        from ..surfacing.ask import at_stop
        return at_stop(record, repo_root, store_dir)
    if record.get("event") in ("pre_tool", "tool_failure"):
        from ..surfacing.jit import at_call
        return at_call(record, repo_root, store_dir, record.get("_command", ""),
                       record.get("_hook", ""))
    from ..surfacing.injection import inject as notes
    return notes(record, repo_root, store_dir)


def learn(record: dict, repo_root: str, store_dir: str) -> None:
    """Start the learning step when it is due; never waits for it (but in sync mode)."""
    from ..learning import autorun
    why = autorun.due(record.get("event", ""), store_dir, str(record.get("session_id") or ""))
    if why:
        start_learning(repo_root, store_dir, why)


def start_learning(repo_root: str, store_dir: str, why: str) -> None:
    """``maintain --auto WHY`` in the background (``SELF_LEARNING_LEARN``: waited for when
    ``sync``, nothing when ``off``); its errors go to errors.jsonl, never to the caller."""
    from ..learning import autorun
    if autorun.mode() == "off":
        return
    if autorun.mode() == "sync":  # tests and the replay benchmark: learning as it would run
        from ..storage.memory import Memory
        from .learn import learn as run
        try:
            run(Memory(store_dir), repo_root, why)
        except Exception:  # noqa: BLE001 - recorded in errors.jsonl; the hook goes on
            pass
    else:
        autorun.spawn(repo_root, why)


def hook(argv: list) -> int:
    """The ``hook`` command with both callables, for ``cli.parser`` (the entry point loads
    them itself, only for the events that need them)."""
    from ..observation.hook import main
    return main(argv, inject, learn)
