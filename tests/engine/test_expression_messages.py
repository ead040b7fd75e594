"""An error about a function shows the call as it was written: `sql.round('s', digits=2)`,
`sql.lag('n', n=3)` (they showed the number first, as a quoted column name: `sql.round('2',
's')`), and the same call with a fitting column runs on every database."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Reading(Model, table="eng_expression_messages"):
    id: int = column(primary_key=True)
    label: str = ""
    value: float = 0.0


MODELS = (Reading,)


@pytest.mark.asyncio
async def test_a_function_is_shown_as_written(db: Any) -> None:
    with pytest.raises(ValidationError, match=r"sql\.round\('label', digits=2\) in add_columns"):
        select(Reading, ["id"]).add_columns({"r": sql.round("label", 2)})
    with pytest.raises(ValidationError, match=r"sql\.lag\('label', n=3\)"):
        select(Reading, ["id"]).add_columns({"r": sql.lag("label", n=3).over(order_by=["id"])
                                             + 1})
    with pytest.raises(ValidationError, match=r"sql\.lead\(n=\.\.\.\) takes an int from 0 to "
                                              r"2147483647, got 2147483648"):
        sql.lead("value", n=2**31)
    await db.execute(insert(Reading).values([{"id": 1, "value": 1.25}, {"id": 2, "value": 2.5},
                                             {"id": 3, "value": 0.5}]))
    rows = (await db.execute(select(Reading, ["id"]).add_columns({
        "r": sql.round("value", 1), "back": sql.lag("value", n=2).over(order_by=["id"]),
    }).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, 1.3, None), (2, 2.5, None), (3, 0.5, 1.25)]
