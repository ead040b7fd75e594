"""A coalesce or CASE of an int and a float (or a Decimal) is a float (a Decimal), as
arithmetic is: the row reader never cuts the fraction, on any database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import Model, column, insert, select, sql


class Reading(Model, table="eng_readings"):
    id: int = column(primary_key=True)
    whole: int | None = None
    part: float = 0.0
    price: Decimal | None = column(default=None, precision=6, scale=2)


MODELS = (Reading,)


@pytest.mark.asyncio
async def test_the_wider_number_wins(db: Any) -> None:
    await db.execute(insert(Reading).values([
        {"id": 1, "whole": None, "part": 2.75, "price": Decimal("1.50")},
        {"id": 2, "whole": 3, "part": 1.0}]))
    rows = (await db.execute(select(Reading, ["id"]).add_columns({
        "a": sql.coalesce("whole", "part"),
        "b": sql.case(({"id": 2}, 1), else_=2.75),
        "c": sql.coalesce("whole", "price"),
    }).order_by("id"))).all()
    got = [(r.a, r.b, r.c) for r in rows]
    assert got == [(2.75, 2.75, Decimal("1.50")), (3.0, 1.0, Decimal("3.00"))]
    assert [type(v) for v in got[1]] == [float, float, Decimal]
