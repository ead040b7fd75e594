"""Run the YAML cases with a mypy configuration that enables the plugin.

The configuration is written at collection time because mypy needs absolute search paths:
the cases run in a temporary directory, importing tempest_typed from this checkout and the
shared models from `models/`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def mypy_config(extra: str = "") -> str:
    """The mypy configuration of the cases: the plugin on, columns shown, the library quiet."""
    paths = ":".join(str(p) for p in (ROOT / "src", HERE / "models"))
    return (
        "[mypy]\n"
        "plugins = tempest_typed.mypy\n"
        f"mypy_path = {paths}\n"
        "show_column_numbers = True\n"
        "show_error_codes = True\n"
        "warn_unused_ignores = True\n"
        "disallow_any_expr = False\n"
        f"{extra}"
        "[mypy-tempest_typed.*]\n"
        "ignore_errors = True\n"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Point pytest-mypy-plugins at the generated configuration unless one was given."""
    option = config.option
    if getattr(option, "mypy_ini_file", None) or getattr(option, "mypy_pyproject_toml_file", None):
        return
    if not hasattr(option, "mypy_ini_file"):
        return
    if shutil.which("mypy") is None:
        # pytest-mypy-plugins runs `mypy` from PATH: use the one next to this interpreter.
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    fd, name = tempfile.mkstemp(suffix=".ini", prefix="tempest-mypy-")
    with os.fdopen(fd, "w") as handle:
        handle.write(mypy_config())
    option.mypy_ini_file = name


@pytest.fixture
def plugin_config() -> str:
    """The mypy configuration of the cases, for tests that run mypy themselves."""
    return mypy_config()
