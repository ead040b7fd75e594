"""Compiler invariants on every generated statement, for every dialect (no database needed).

each placeholder has exactly one parameter, and every value the builder took is bound
exactly once (none is written into the text instead).
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tempest_typed import DialectError

from .strategies import models, rows_for, statements

DIALECTS = ("postgresql", "mysql", "mariadb", "sqlite")
_QUOTED = re.compile(r'"(?:[^"]|"")*"|`(?:[^`]|``)*`|\'(?:[^\']|\'\')*\'')


def placeholders(sql: str, dialect: str) -> int:
    """The number of placeholders in the text, outside quoted names and strings."""
    bare = _QUOTED.sub("", sql)
    if dialect == "sqlite":
        return bare.count("?")
    return bare.replace("%%", "").count("%s")


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
        assert len(compiled.params) == len(case.statement._values)
