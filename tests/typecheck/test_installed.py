"""The installed package is seen by mypy and pyright from a project of its own.

An editable install (`pip install -e .`, what `scripts/test.sh` makes) must put a plain path
in site-packages, not an import hook: mypy and pyright read `.pth` paths but run no hooks, so
a hook would leave a user's `from tempest_typed import ...` unresolved and every type `Any`.
The checks run in a directory outside the checkout, with no search path given.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_pyright import _pyright

PROGRAM = '''\
from tempest_typed import Model, column, select


class Note(Model, table="notes"):
    id: int = column(primary_key=True)
    body: str


reveal_type(select(Note, ["body"]))
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: one module, outside the checkout."""
    try:
        importlib.metadata.distribution("tempest-typed")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tempest-typed is not installed in this interpreter (pip install -e .)")
    (tmp_path / "app.py").write_text(PROGRAM)
    return tmp_path


def test_mypy_finds_the_installed_package(project: Path) -> None:
    (project / "mypy.ini").write_text("[mypy]\nplugins = tempest_typed.mypy\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "app.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert "import-not-found" not in proc.stdout, proc.stdout
    assert 'Revealed type is "tempest_typed.statements.select.Select[app.Note,' in proc.stdout, \
        proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pyright_finds_the_installed_package(project: Path) -> None:
    proc = subprocess.run([_pyright(), "--outputjson", "--pythonpath", sys.executable, "app.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    messages = [d["message"] for d in report["generalDiagnostics"]]
    assert messages == ['Type of "select(Note, ["body"])" is "Select[Note, Row[Any]]"'], messages
