"""Compiler invariants on every generated statement, for every dialect (no database needed).

each placeholder has exactly one parameter, and every value the builder took is bound
exactly once (none is written into the text instead).
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tempest_typed import DialectError
from tempest_typed.dialects import get_dialect

from .strategies import models, rows_for, statements

DIALECTS = ("postgresql", "mysql", "mariadb", "sqlite")
_QUOTED = re.compile(r'"(?:[^"]|"")*"|`(?:[^`]|``)*`|\'(?:[^\']|\'\')*\'')


def placeholders(sql: str, dialect: str) -> int:
    """The number of placeholders in the text, outside quoted names and strings."""
    bare = _QUOTED.sub("", sql)
    if dialect == "sqlite":
        return bare.count("?")
    bare = bare.replace("%%", "")
    return bare.count("%s") + bare.count("%b")  # %b: an array in binary (a long `in` list)


@given(data=st.data())
def test_every_placeholder_has_one_parameter(data: st.DataObject) -> None:
    spec = data.draw(models(prefix="prop_inv_"))
    rows = data.draw(rows_for(spec, data.draw(st.lists(st.integers(1, 30), max_size=4,
                                                       unique=True))))
    case = data.draw(statements(spec, rows))
    for dialect in DIALECTS:
        try:
            compiled = case.statement.compile(dialect)
        except DialectError:
            continue
        assert placeholders(compiled.sql, dialect) == len(compiled.params), compiled
        # each value bound once: alone, or in the one array of its `in` list
        order = get_dialect(dialect).shape(case.statement).order
        bound = [i.stop - i.start if isinstance(i, slice) else 1 for i in order]
        assert sum(bound) == len(case.statement._values)


_IDENTIFIER = re.compile(r'"(?:[^"]|"")*"|`(?:[^`]|``)*`')


def leaked(value: object, sql: str) -> bool:
    """True when a bound string value is written into the text outside quoted names.

    Short strings and words could be keywords or operators of the text; only longer values
    holding something other than letters and spaces are looked for.
    """
    if not isinstance(value, str) or len(value) < 6 or re.fullmatch(r"[A-Za-z_ ]*", value):
        return False
    return value in _IDENTIFIER.sub("", sql)


@given(data=st.data())
def test_no_bound_value_is_written_into_the_text(data: st.DataObject) -> None:
    spec = data.draw(models(prefix="prop_inv_"))
    rows = data.draw(rows_for(spec, data.draw(st.lists(st.integers(1, 30), max_size=4,
                                                       unique=True))))
    case = data.draw(statements(spec, rows))
    for dialect in DIALECTS:
        try:
            compiled = case.statement.compile(dialect)
        except DialectError:
            continue
        for value in compiled.params:
            assert not leaked(value, compiled.sql), (value, compiled.sql)


def test_a_value_that_looks_like_sql_is_bound_not_written() -> None:
    from tempest_typed import Model, column, select

    class Note(Model, table="prop_inv_note"):
        id: int = column(primary_key=True)
        body: str

    stmt = select(Note).where({"body": "x'); DROP TABLE prop_inv_note; --"})
    for dialect in DIALECTS:
        compiled = stmt.compile(dialect)
        assert "DROP" not in compiled.sql
        assert compiled.params == ("x'); DROP TABLE prop_inv_note; --",)
