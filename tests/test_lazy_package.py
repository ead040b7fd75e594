"""`tempest_typed` imports its public names on first use, so the mypy plugin's entry point
loads no runtime module; what type checkers read and what `from tempest_typed import ...`
gives stay those of the eager imports."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tempest_typed

INIT = Path(tempest_typed.__file__)


def _type_checking_imports() -> dict[str, str]:
    """name -> submodule of the imports under `if TYPE_CHECKING:` in the package's __init__."""
    tree = ast.parse(INIT.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1, ast.dump(stmt)
                for alias in stmt.names:
                    assert alias.asname is None
                    found[alias.name] = stmt.module or alias.name
    return found


def test_the_lazy_table_says_what_the_typed_imports_say() -> None:
    imports = _type_checking_imports()
    assert imports == tempest_typed._HOMES
    assert set(imports) == set(tempest_typed.__all__)


def test_every_public_name_is_the_object_its_submodule_defines() -> None:
    for name, home in tempest_typed._HOMES.items():
        module = importlib.import_module(f"tempest_typed.{home}")
        expected = module if home == name else getattr(module, name)
        assert getattr(tempest_typed, name) is expected, name
    namespace: dict[str, object] = {}
    exec("from tempest_typed import *", namespace)
    assert set(tempest_typed.__all__) <= set(namespace)
    assert set(tempest_typed.__all__) <= set(dir(tempest_typed))


def test_submodules_and_unknown_names() -> None:
    for name in tempest_typed._SUBMODULES:
        assert getattr(tempest_typed, name) is importlib.import_module(f"tempest_typed.{name}")
    missing = "no_such_name"
    with pytest.raises(AttributeError, match=missing):
        getattr(tempest_typed, missing)


def _loaded_after(code: str) -> list[str]:
    """The tempest_typed modules a fresh interpreter holds after running `code`."""
    probe = (f"{code}\nimport sys\n"
             "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('tempest_typed'))))")
    root = INIT.parents[1]
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    return proc.stdout.split()


def test_the_plugin_entry_point_loads_no_runtime_module() -> None:
    loaded = _loaded_after("import tempest_typed.mypy")
    runtime = [m for m in loaded if m.startswith("tempest_typed.")
               and m not in ("tempest_typed.mypy", "tempest_typed._wording")]
    assert runtime == [], runtime
    assert "tempest_typed_mypy.main" in loaded

