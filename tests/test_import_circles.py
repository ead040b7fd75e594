"""The package's import graph, read from its source: no circle among the modules' own
imports; counting the imports inside functions and under TYPE_CHECKING too, none outside the
statement grammar (below), and none at all in the queue or the mypy plugin."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src"
PACKAGES = ("tempest_typed", "tempest_typed_mypy")

#: where a circle of deferred imports is allowed, and why: the statement grammar is
#: recursive (a CASE holds where conditions, a condition holds expressions, a named select
#: holds a select, a model's Index(where=) is checked by the where language above it), so its
#: builders reach each other inside functions; and the builders annotate with the compiler's
#: types under TYPE_CHECKING only. Nothing outside these modules is in a circle.
GRAMMAR = ("tempest_typed.model", "tempest_typed.values", "tempest_typed.statements.",
           "tempest_typed.dialects.base")


def _modules(package: Path) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(body: list[ast.stmt], deep: bool) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            if deep:
                out += _imports(node.body, deep)
            out += _imports(node.orelse, deep)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if deep:
                out += _imports(node.body, deep)
        elif isinstance(node, ast.ClassDef | ast.If | ast.With):
            out += _imports(node.body, deep) + _imports(getattr(node, "orelse", []), deep)
        elif isinstance(node, ast.Try):
            out += _imports(node.body + node.orelse + node.finalbody, deep)
            for handler in node.handlers:
                out += _imports(handler.body, deep)
    return out


def graph(package: Path, deep: bool) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (an import of a parent package is none:
    Python has imported it first anyway)."""
    modules = _modules(package)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in _imports(ast.parse(path.read_text()).body, deep):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = ".".join([*here[:len(here) - node.level + 1], node.module or ""]
                                if node.level else [node.module or ""]).rstrip(".")
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            edges[name] |= {t for t in targets
                            if t in modules and t != name and not name.startswith(t + ".")}
    return edges


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_level_import_circle() -> None:
    for package in PACKAGES:
        assert circles(graph(ROOT / package, deep=False)) == [], package


def test_deferred_imports_close_circles_only_within_the_statement_grammar() -> None:
    for package in PACKAGES:
        for circle in circles(graph(ROOT / package, deep=True)):
            outside = sorted(m for m in circle if not m.startswith(GRAMMAR))
            assert outside == [], (package, sorted(circle))


def test_at_most_one_circle_counting_every_import() -> None:
    found = [c for package in PACKAGES for c in circles(graph(ROOT / package, deep=True))]
    assert len(found) <= 1, [sorted(c) for c in found]


def test_no_circle_at_all_in_the_queue() -> None:
    found = circles(graph(ROOT / "tempest_typed", deep=True))
    assert [c for c in found if any(m.startswith("tempest_typed.queue") for m in c)] == []


def test_the_reader_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
