"""The package's folders follow the data's road, and imports point only down it.

storage → observation → learning → surfacing → graduation, with the CLI on top: a module may
import its own stage and the stages below, never one above, and no module takes part in an
import cycle (imports inside functions count: they run too).
"""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "scripts" / "selflearn"
ROAD = ("storage", "observation", "learning", "surfacing", "graduation", "cli")


def _modules():
    """'stage.module' -> path, for every module of the package."""
    return {f"{p.parent.name}.{p.stem}": p for stage in ROAD for p in (PKG / stage).glob("*.py")
            if p.stem != "__init__"}


def _imports(name: str, path: Path):
    """The package modules ``name`` imports, as 'stage.module' (or 'stage' for a package)."""
    stage = name.split(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        if node.level == 1:
            base = [stage] + (node.module.split(".") if node.module else [])
        else:
            base = node.module.split(".") if node.module else []
        if len(base) == 1:  # from . import x / from ..stage import x: x is a module
            for alias in node.names:
                yield f"{base[0]}.{alias.name}" if alias.name != "__version__" else "selflearn"
        elif base:
            yield ".".join(base[:2])


def test_every_module_sits_in_a_stage():
    loose = sorted(p.name for p in PKG.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules outside a stage folder: {loose}"
    folders = sorted(p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(ROAD)


def test_imports_point_down_the_road():
    mods = _modules()
    upward = []
    for name, path in mods.items():
        rank = ROAD.index(name.split(".")[0])
        for target in _imports(name, path):
            if target == "selflearn":
                continue
            assert target in mods, f"{name} imports {target}, which is not a module"
            if ROAD.index(target.split(".")[0]) > rank:
                upward.append(f"{name} -> {target}")
    assert upward == [], "imports that point up the road: " + ", ".join(upward)


def test_no_import_cycles():
    mods = _modules()
    graph = {name: sorted(set(t for t in _imports(name, path) if t in mods))
             for name, path in mods.items()}
    state, cycles = {}, []

    def visit(node, trail):
        state[node] = "open"
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == [], "import cycles: " + "; ".join(cycles)


def test_help_lists_every_command_once_by_stage():
    from selflearn.cli import parser as cli
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, type(parser._subparsers._group_actions[0])))
    grouped = [name for _, names in cli.STAGES for name in names]
    assert sorted(grouped) == sorted(sub.choices), "a command is missing from, or twice in, STAGES"
    text = parser.format_help()
    for title, names in cli.STAGES:
        assert f"\n{title}:\n" in text
        block = text.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0]
        assert [line.split()[0] for line in block.splitlines()] == list(names)
    for name, _ in cli.FIRST + cli.AGENT:
        assert name.split()[0] in sub.choices
    assert text.startswith("usage: self_learning [-h] [--version] <command> ...")


def test_building_the_parser_does_not_compile_the_safety_screen():
    """The screen's ~75 patterns cost about 50 ms to compile: only commands that judge a
    lesson load them, not every command's start-up (a fresh interpreter, as a user's run)."""
    import subprocess
    import sys
    probe = ("import sys; from selflearn.cli import parser; parser.build_parser(); "
             "print(sorted(m for m in ('selflearn.storage.screen', 're') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[1] / "scripts")).stdout
    assert "selflearn.storage.screen" not in out
