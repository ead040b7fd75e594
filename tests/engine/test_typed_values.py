"""sql.value(...) of every type reads back as that type on every database, alone and beside
a column in coalesce and CASE (MySQL sends a date as text, and the column it made was text)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import Model, column, insert, select, sql


class Dated(Model, table="eng_tv_dated"):
    id: int = column(primary_key=True)
    d: date | None = None
    t: datetime | None = None


MODELS = (Dated,)


@pytest.mark.asyncio
async def test_a_value_reads_back_as_its_type(db: Any) -> None:
    await db.execute(insert(Dated).values([{"id": 1}, {"id": 2, "d": date(2024, 5, 1)}]))
    at = datetime(2024, 1, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = (await db.execute(select(Dated, ["id"]).add_columns({
        "d": sql.value(date(2024, 1, 1)), "t": sql.value(at), "m": sql.value(Decimal("1.5")),
        "b": sql.value(True), "u": sql.value(UUID(int=5)),
        "cd": sql.coalesce("d", sql.value(date(2000, 1, 1))),
        "ct": sql.coalesce("t", sql.value(at)),
        "k": sql.case(({"d": None}, sql.value(date(1999, 1, 1))), else_="d"),
    }).order_by("id"))).all()
    first = rows[0]
    assert (first.d, first.t, first.m, first.b, first.u) == (
        date(2024, 1, 1), at, Decimal("1.5"), True, UUID(int=5))
    assert [type(v) for v in (first.d, first.t, first.m, first.b, first.u)] == [
        date, datetime, Decimal, bool, UUID]
    assert [(r.cd, r.ct, r.k) for r in rows] == [
        (date(2000, 1, 1), at, date(1999, 1, 1)), (date(2024, 5, 1), at, date(2024, 5, 1))]
    assert {type(r.cd) for r in rows} == {type(r.k) for r in rows} == {date}
