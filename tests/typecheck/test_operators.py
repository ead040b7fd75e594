"""The plugin's where operators are the runtime's: the same names, and on every column kind the
same verdict.

Each operator is written once against a column of each kind with an operand that suits the
column (a value of its type, a pair for `between`, a list for `in`, a pattern or a text for
the text operators), so what is judged is only whether the operator applies to the column. The
builder runs every line and mypy checks the same file: the lines the builder refuses must be
the lines the plugin reports, and no other.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tempest_typed_mypy.lib import names
from test_cache_and_workers import run_mypy

from tempest_typed import ValidationError
from tempest_typed.statements import nodes

MODELS = '''
from datetime import date, datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID

from tempest_typed import Model, column


class Kinds(Model, table="kinds"):
    id: int = column(primary_key=True)
    s: str
    lit: Literal["a", "b"]
    i: int
    f: float
    d: Decimal
    b: bool
    dt: datetime
    day: date
    u: UUID
    raw: bytes
    js: dict[str, str]
'''

HEAD = '''from datetime import UTC, date, datetime
from decimal import Decimal
from uuid import UUID

from tempest_typed import select
from models import Kinds
'''

#: a value of each column, as source text
VALUES = {
    "s": '"a"', "lit": '"a"', "i": "1", "f": "1.5", "d": 'Decimal("1")', "b": "True",
    "dt": "datetime(2000, 1, 1, tzinfo=UTC)", "day": "date(2000, 1, 1)", "u": "UUID(int=1)",
    "raw": 'b"a"', "js": '{"k": "v"}',
}


def operand(op: str, value: str) -> str:
    """The operand of `op` that suits a column whose values are written `value`."""
    if op == "between":
        return f"[{value}, {value}]"
    if op in ("in", "not_in"):
        return f"[{value}]"
    if op == "is_null":
        return "True"
    if op in ("like", "ilike"):
        return '"a%"'
    if op in ("contains", "icontains", "startswith", "endswith"):
        return '"a"'
    return value


def test_the_plugin_knows_the_runtime_operators() -> None:
    assert names.OPERATORS == nodes.OPERATORS


def test_each_operator_applies_to_the_same_column_kinds(tmp_path: Path,
                                                        plugin_config: str) -> None:
    ops = [*nodes.OPERATORS, "nope"]
    lines = [f'select(Kinds).where({{"{col}": {{"{op}": {operand(op, value)}}}}})'
             for op in ops for col, value in VALUES.items()]
    source = HEAD + "\n".join(lines) + "\n"
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "cases.py").write_text(source)
    first = HEAD.count("\n") + 1

    namespace: dict[str, object] = {"__name__": "models"}
    # Compiled without this module's `from __future__ import annotations`: the builder reads
    # the annotations of the class it defines.
    exec(compile(MODELS + HEAD.replace("from models import Kinds\n", ""), "models.py", "exec",
                 dont_inherit=True), namespace)
    refused = set()
    for number, line in enumerate(lines, start=first):
        try:
            eval(line, namespace)
        except ValidationError:
            refused.add(number)

    reported = set()
    for error in run_mypy(tmp_path, "cache"):
        path, number, *_ = error.split(":")
        assert path == "cases.py" and "[tempest-" in error, error
        reported.add(int(number))

    def show(numbers: set[int]) -> list[str]:
        return [lines[n - first] for n in sorted(numbers)]

    assert refused, "the builder refused nothing: the cases test nothing"
    assert show(reported - refused) == [], "the plugin reports what the builder accepts"
    assert show(refused - reported) == [], "the builder refuses what the plugin accepts"


@pytest.mark.parametrize("doc", ["docs/reference.md", "docs/static-checking.md"])
def test_the_docs_list_the_runtime_operators(doc: str) -> None:
    text = (Path(__file__).resolve().parents[2] / doc).read_text()
    listed = re.findall(r"`(eq ne [a-z_ ]+)`", text)
    assert listed, f"{doc} lists no operators"
    assert all(found.split() == list(nodes.OPERATORS) for found in listed), listed
