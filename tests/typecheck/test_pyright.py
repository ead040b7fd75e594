"""pyright reads the models and statements as the runtime does, without any plugin.

Runs pyright (`pip install pyright`, on the installed Node.js) over small programs and checks
its exact diagnostics. Without pyright or Node.js the tests skip with a line saying so; in CI
(CI=true) they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _pyright() -> str:
    """The pyright command, or a skip (a failure in CI) saying what is missing."""
    found = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    missing = None
    if not Path(found).exists():
        missing = "pyright is not installed (pip install pyright, or the dev extra)"
    elif shutil.which("node") is None:
        missing = "Node.js is not installed, and pyright runs on it"
    if missing is not None:
        if IN_CI:
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    return found


def pyright(tmp_path: Path, body: str) -> list[str]:
    """pyright's diagnostics for MODELS + `body`, as `line:col: severity: message` lines
    (a message's first line) whose line numbers count from the first line of `body`."""
    source = MODELS + body
    command = _pyright()
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "extraPaths": [str(ROOT / "src")], "pythonVersion": "3.11", "typeCheckingMode": "standard",
    }))
    (tmp_path / "app.py").write_text(source)
    proc = subprocess.run(
        [command, "--outputjson", "--pythonpath", sys.executable, "app.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    offset = MODELS.count("\n")
    return [f"{d['range']['start']['line'] + 1 - offset}:{d['range']['start']['character'] + 1}: "
            f"{d['severity']}: {d['message'].splitlines()[0]}" for d in report["generalDiagnostics"]]


MODELS = '''\
from datetime import datetime
from decimal import Decimal
from typing import Literal

from tempest_typed import Model, column, sql


class User(Model, table="users"):
    id: int = column(primary_key=True)
    email: str
    country: str
    credit_limit: Decimal = Decimal(0)
    manager_id: int | None = column(default=None, references="users.id")
    created_at: datetime = column(server_default=sql.now())


class Order(Model, table="orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="users.id")
    total: Decimal
    status: Literal["new", "paid", "refunded"]
'''


def test_identity_keys_and_server_defaults_may_be_left_out(tmp_path: Path) -> None:
    body = '''\
User(email="a@b.c", country="PT")
User(id=7, email="a@b.c", country="PT", created_at=datetime(2000, 1, 1))
Order(user_id=1, total=Decimal("9.99"), status="new")
reveal_type(User(email="a@b.c", country="PT").id)
'''
    assert pyright(tmp_path, body) == ['4:13: information: Type of "User(email="a@b.c", '
                                         'country="PT").id" is "int"']


def test_the_constructor_is_still_checked(tmp_path: Path) -> None:
    body = '''\
User(country="PT")
User(id="7", email="a@b.c", country="PT")
'''
    assert pyright(tmp_path, body) == [
        '1:1: error: Argument missing for parameter "email"',
        '2:9: error: Argument of type "Literal[\'7\']" cannot be assigned to parameter "id" of '
        'type "int" in function "__init__"',
    ]


def test_a_slotted_model_is_a_model_to_pyright(tmp_path: Path) -> None:
    body = '''\
class Ticket(Model, table="tickets", slots=True):
    id: int = column(primary_key=True)
    title: str
t = Ticket(title="a")
t.title = "b"
t.other = 1
Ticket()
'''
    assert pyright(tmp_path, body) == [
        '6:3: error: Cannot assign to attribute "other" for class "Ticket"',
        '7:1: error: Argument missing for parameter "title"',
    ]


def test_a_string_for_a_list_of_column_names_is_an_error(tmp_path: Path) -> None:
    body = '''\
from tempest_typed import Index, select
select(User, ["id", "email"])
select(User, "id")
Index("users_email", "email")
'''
    # two overloads take columns (a model's, a named select's): pyright says none matches,
    # then still points at the argument that fits neither
    assert pyright(tmp_path, body) == [
        '3:1: error: No overloads for "select" match the provided arguments',
        '3:14: error: Argument of type "Literal[\'id\']" cannot be assigned to parameter '
        '"columns" of type "list[str] | tuple[str, ...]" in function "select"',
        '4:22: error: Argument of type "Literal[\'email\']" cannot be assigned to parameter '
        '"columns" of type "list[str] | tuple[str, ...]" in function "__init__"',
    ]


def test_some_columns_of_a_named_select_are_a_select(tmp_path: Path) -> None:
    body = '''\
from tempest_typed import select, sql
latest = sql.cte("latest", select(User, ["id", "email"]))
reveal_type(select(latest, ["id"]))
'''
    assert pyright(tmp_path, body) == [
        '3:13: information: Type of "select(latest, ["id"])" is "Select[Any, Row[Any]]"',
    ]


def test_a_window_takes_arithmetic_and_now_is_a_computed_column(tmp_path: Path) -> None:
    body = '''
from tempest_typed import select
q = select(Order, ["id"]).add_columns({
    "pos": sql.row_number().over(order_by=["id"]) - 1,
    "share": sql.count().over(partition_by=["user_id"]) * 2,
    "now": sql.now(),
    "seen": sql.coalesce("status", sql.value("x")),
})
'''
    assert pyright(tmp_path, body) == []
