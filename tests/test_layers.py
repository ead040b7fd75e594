"""One place per decision: outside the dialects and the drivers, no code asks a database's name.

What a database can do is a capability flag of its dialect (tempest_typed/dialects/base.py);
the layers above read the flags. This test reads the package's source and fails on a line
that compares a dialect name (`== "postgresql"`, `in ("mysql", "mariadb")`,
`dialect.name == ...`), keys a dict by dialect names, or matches on one. A dialect name as a
parameter's default, or passed to a function, is not a decision and may stay.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from tempest_typed.dialects import _CLASSES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "tempest_typed"
#: the layers whose business is what each database does
EXEMPT = (PACKAGE / "dialects", PACKAGE / "engine" / "drivers")
#: every name a dialect answers to
NAMES = frozenset(_CLASSES) | {cls.name for cls in _CLASSES.values()}


def sources() -> list[Path]:
    """The package's modules outside the exempt layers."""
    return [path for path in sorted(PACKAGE.rglob("*.py"))
            if not any(path.is_relative_to(layer) for layer in EXEMPT)]


def _names_in(node: ast.AST) -> bool:
    """Whether `node` is a dialect name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_in(item) for item in node.elts)
    return False


def _is_dialect_name(node: ast.AST) -> bool:
    """Whether `node` reads a dialect's name: `<...dialect...>.name`."""
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    inner = node.value
    return "dialect" in ast.unparse(inner).lower()


def _keyed_by_names(node: ast.AST) -> bool:
    """Whether `node` is a dict display or a dict() call with a dialect name for a key."""
    if isinstance(node, ast.Dict):
        return any(key is not None and _names_in(key) for key in node.keys)
    return (isinstance(node, ast.Call) and ast.unparse(node.func) == "dict"
            and any(keyword.arg in NAMES for keyword in node.keywords))


def decisions(tree: ast.AST) -> list[tuple[int, str]]:
    """The lines of a module that decide by a dialect's name: (line, why)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_in(side) for side in sides):
                found.append((node.lineno, "compares a dialect name"))
            elif any(_is_dialect_name(side) for side in sides):
                found.append((node.lineno, "compares dialect.name"))
        elif _keyed_by_names(node):
            found.append((node.lineno, "a dict keyed by dialect names"))
        elif isinstance(node, ast.match_case) and any(
                isinstance(pattern, ast.MatchValue) and _names_in(pattern.value)
                for pattern in ast.walk(node.pattern)):
            found.append((node.pattern.lineno, "matches a dialect name"))
    return sorted(found)


def test_the_scan_sees_every_kind_of_decision() -> None:
    code = '''
if engine.dialect.name == other: pass
if name == "postgresql": pass
if self._dialect in ("mysql", "mariadb"): pass
TEMPLATES = {"sqlite": "MIN", "mysql": "LEAST"}
BY_NAME = dict(sqlite=1)
match name:
    case "mariadb": pass
def compile(dialect: str = "postgresql") -> None: pass
compile("postgresql")
if column.name == attr: pass
'''
    assert [line for line, _ in decisions(ast.parse(code))] == [2, 3, 4, 5, 6, 8]


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_decision_by_dialect_name(path: Path) -> None:
    text = path.read_text()
    lines = text.splitlines()
    found = [f"{path.relative_to(PACKAGE)}:{line}: {why}: {lines[line - 1].strip()}"
             for line, why in decisions(ast.parse(text))]
    assert not found, "ask a capability flag of the dialect instead:\n" + "\n".join(found)


# -- the queue's modules: imports flow one way -----------------------------------------------

QUEUE = PACKAGE / "queue"


def _queue_imports(path: Path) -> set[str]:
    """The modules of tempest_typed/queue/ that one of them imports, anywhere in it (at module
    level, in a function, under TYPE_CHECKING). The package's __init__, which only gathers
    the public names, counts only where it is imported by name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                found.update(alias.name for alias in node.names)
            else:
                found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                "tempest_typed.queue."):
            found.add(node.module.split(".")[2])
    known = {p.stem for p in QUEUE.glob("*.py")}
    return {name for name in found if name in known and name != path.stem}


def test_no_import_circle_in_the_queue() -> None:
    graph = {p.stem: _queue_imports(p) for p in sorted(QUEUE.glob("*.py"))
             if p.name != "__init__.py"}

    def reaches(start: str, goal: str) -> list[str] | None:
        paths, seen = [[start]], {start}
        while paths:
            path = paths.pop()
            for nxt in sorted(graph.get(path[-1], ())):
                if nxt == goal:
                    return [*path, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    paths.append([*path, nxt])
        return None

    found = {" -> ".join(loop) for name in graph if (loop := reaches(name, name))}
    assert not found, "import circles in tempest_typed/queue/:\n" + "\n".join(sorted(found))


def test_each_queue_module_says_what_it_holds() -> None:
    for path in sorted(QUEUE.glob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring, f"{path.name} has no module docstring"


def _generated() -> dict[str, str]:
    """The blocking modules tools/async_to_sync.py writes: target -> source, by path."""
    spec = importlib.util.spec_from_file_location("async_to_sync", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return {target: source for source, target in tool.FILES}


TOOL = ROOT / "tools" / "async_to_sync.py"


def test_the_queue_shells_are_generated_from_their_asyncio_sources() -> None:
    generated = _generated()
    for target in ("queue/queue.py", "queue/loop.py", "queue/execute.py"):
        path = f"src/tempest_typed/{target}"
        assert path in generated, f"{path} is not generated by tools/async_to_sync.py"
        assert (ROOT / path).read_text().startswith(
            f"# Generated from {generated[path]} by tools/async_to_sync.py: do not edit.")


def _methods(path: Path) -> set[str]:
    """The names of the methods of a module's classes."""
    return {item.name for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ClassDef) for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_no_two_hand_written_queue_modules_are_twins() -> None:
    generated = {ROOT / target for target in _generated()}
    written = [p for p in sorted(QUEUE.glob("*.py")) if p not in generated]
    twins = []
    for n, one in enumerate(written):
        for other in written[n + 1:]:
            shared = _methods(one) & _methods(other)
            if len(shared) > 10:
                twins.append(f"{one.name} and {other.name}: {sorted(shared)}")
    assert not twins, "write the asyncio side once and generate the other:\n" + "\n".join(twins)
