"""The drivers keep one hand-written copy of each decision: what waits is written for asyncio
and the blocking module generated from it; what does not wait is one rules class."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ROOT / "src" / "tempest_typed" / "engine" / "drivers"

_spec = importlib.util.spec_from_file_location("async_to_sync", ROOT / "tools" / "async_to_sync.py")
assert _spec is not None and _spec.loader is not None
tool = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("async_to_sync", tool)
_spec.loader.exec_module(tool)

GENERATED = {ROOT / target for _, target in tool.FILES}


def _classes(path: Path) -> dict[str, tuple[set[str], bool]]:
    """Each class of a module: its method names, and whether any of them is async."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            found[f"{path.name}:{node.name}"] = (
                {m.name for m in methods}, any(isinstance(m, ast.AsyncFunctionDef) for m in methods))
    return found


def test_no_hand_written_blocking_and_asyncio_classes_repeat_each_other() -> None:
    classes: dict[str, tuple[set[str], bool]] = {}
    for path in sorted(DRIVERS.glob("*.py")):
        if path not in GENERATED:
            classes.update(_classes(path))
    blocking = {name: m for name, (m, is_async) in classes.items() if not is_async}
    asyncio_ = {name: m for name, (m, is_async) in classes.items() if is_async}
    for (b, b_methods), (a, a_methods) in itertools.product(blocking.items(), asyncio_.items()):
        shared = b_methods & a_methods - {"__init__"}
        assert len(shared) <= 10, f"{b} and {a} both write {sorted(shared)}"


def test_every_module_that_says_it_is_generated_is_registered_and_current() -> None:
    for path in sorted(DRIVERS.glob("*.py")):
        says = path.read_text().startswith("# Generated from ")
        assert says == (path in GENERATED), path.name
    assert tool.main(["--check"]) == 0
