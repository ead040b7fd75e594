"""The plugin's layers, read from its source: imports flow one way.

`lib/` is the foundation (model facts, table names, wording, scopes, the expression language
that several hooks share): it imports nothing of the plugin outside `lib/`. Every other module
but `main` is one check; a check imports the foundation, never another check; `main` routes
hooks to the checks and nothing imports it. No module takes part in an import circle. Every
import counts: at module level, inside a function, under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "tempest_typed_mypy"
SOURCE = Path(__file__).resolve().parents[2] / "src" / PACKAGE
FOUNDATION = f"{PACKAGE}.lib"
ROUTER = f"{PACKAGE}.main"


def module_name(path: Path) -> str:
    """The dotted name of a source file of the package."""
    parts = [PACKAGE, *path.relative_to(SOURCE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of the package that a module's source imports, anywhere in it."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # `from . import metadata` imports a module; `from .x import y` imports x
            targets = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            # `import a.b.c` imports a and a.b too, which run their __init__
            parts = target.split(".")
            found.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return {m for m in found if m in known and m != name}


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module -> the modules of the package it imports, for sources given as
    name -> (text, whether it is a package's __init__)."""
    known = set(sources)
    return {name: imported(ast.parse(text), name, is_package, known)
            for name, (text, is_package) in sources.items()}


def plugin_graph() -> dict[str, set[str]]:
    """The import graph of the plugin as its files stand."""
    return import_graph({module_name(p): (p.read_text(), p.name == "__init__.py")
                         for p in sorted(SOURCE.rglob("*.py"))})


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected components of two or more
    modules (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer(module: str) -> str:
    """"foundation", "router", "package" (the package's own __init__) or "check"."""
    if module == FOUNDATION or module.startswith(FOUNDATION + "."):
        return "foundation"
    if module == ROUTER:
        return "router"
    if module == PACKAGE:
        return "package"
    return "check"


def crossings(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes against the layers."""
    wrong: list[str] = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer(target) == "package":
                continue  # the package's __init__ runs before any of its modules
            if layer(target) == "router":
                wrong.append(f"{module} imports the router {target}")
            elif layer(module) == "foundation" and layer(target) != "foundation":
                wrong.append(f"the foundation's {module} imports the check {target}")
            elif layer(module) == "check" and layer(target) == "check":
                wrong.append(f"the check {module} imports the check {target}")
            elif layer(module) == "package":
                wrong.append(f"the package's __init__ imports {target}")
    return wrong


def test_the_plugin_has_no_import_circle() -> None:
    assert circles(plugin_graph()) == []


def test_imports_flow_from_the_router_to_the_checks_to_the_foundation() -> None:
    assert crossings(plugin_graph()) == []


def test_the_layers_are_there() -> None:
    graph = plugin_graph()
    assert {layer(m) for m in graph} == {"foundation", "router", "package", "check"}
    assert graph[ROUTER] >= {m for m in graph if layer(m) == "check"}, (
        "every check is reached from the router")


def test_every_module_says_what_it_is_for() -> None:
    missing = [module_name(p) for p in sorted(SOURCE.rglob("*.py"))
               if not ast.get_docstring(ast.parse(p.read_text()))]
    assert missing == []


# The reader of the imports is itself checked on sources written for the purpose.

def _graph(**modules: str) -> dict[str, set[str]]:
    return import_graph({f"{PACKAGE}.{name.replace('__', '.')}": (text, False)
                         for name, text in modules.items()})


def test_an_import_inside_a_function_or_under_type_checking_counts() -> None:
    graph = _graph(
        joins="def f():\n    from .aggregates import x\n",
        aggregates="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import joins\n",
    )
    assert circles(graph) == [[f"{PACKAGE}.aggregates", f"{PACKAGE}.joins"]]


@pytest.mark.parametrize(("source", "expected"), [
    ("from .lib import scopes", {PACKAGE, f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes"}),
    ("from .lib.scopes import Scope", {PACKAGE, f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes"}),
    ("import tempest_typed_mypy.lib.scopes",
     {PACKAGE, f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes"}),
])
def test_every_spelling_of_an_import_is_read(source: str, expected: set[str]) -> None:
    known = {PACKAGE, f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes", f"{PACKAGE}.joins"}
    assert imported(ast.parse(source), f"{PACKAGE}.joins", False, known) == expected


def test_a_relative_import_in_the_foundation_is_resolved_from_its_package() -> None:
    known = {PACKAGE, f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes", f"{PACKAGE}.joins"}
    tree = ast.parse("from .. import joins\nfrom . import scopes\n")
    assert imported(tree, f"{PACKAGE}.lib.values", False, known) == {
        PACKAGE, f"{PACKAGE}.joins", f"{PACKAGE}.lib", f"{PACKAGE}.lib.scopes"}


def test_a_check_importing_a_check_is_a_crossing() -> None:
    graph = _graph(aggregates="from .joins import arg\n", joins="from .lib import scopes\n",
                   lib__scopes="from ..values import Scope\n", values="")
    assert crossings(graph) == [
        f"the check {PACKAGE}.aggregates imports the check {PACKAGE}.joins",
        f"the foundation's {PACKAGE}.lib.scopes imports the check {PACKAGE}.values",
    ]
