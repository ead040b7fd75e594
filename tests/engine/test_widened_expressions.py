"""A coalesce or CASE of an int and a float (or a Decimal) is a float (a Decimal), as
arithmetic is: the row reader never cuts the fraction, on any database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import DialectError, Model, ValidationError, column, insert, select, sql, update


class Reading(Model, table="eng_readings"):
    id: int = column(primary_key=True)
    whole: int | None = None
    part: float = 0.0
    price: Decimal | None = column(default=None, precision=6, scale=2)


class Priced(Model, table="eng_priced"):
    id: int = column(primary_key=True)
    cents: Decimal | None = column(default=None, precision=10, scale=2)
    mills: Decimal | None = column(default=None, precision=10, scale=3)
    free: Decimal | None = None


MODELS = (Reading, Priced)


@pytest.mark.asyncio
async def test_a_coalesce_of_decimals_keeps_the_most_places(db: Any) -> None:
    await db.execute(insert(Priced).values(
        {"id": 1, "mills": Decimal("1.234"), "free": Decimal("2.345678")}))
    row = (await db.execute(select(Priced, ["id"]).add_columns({
        "a": sql.coalesce("cents", "mills"), "b": sql.coalesce("cents", "free"),
        "c": sql.coalesce("cents", Decimal("9.999")),
        "d": sql.case(({"id": 1}, sql.col("mills")), else_=sql.col("cents")),
    }))).one()
    assert (row.a, row.b, row.c, row.d) == (
        Decimal("1.234"), Decimal("2.345678"), Decimal("9.999"), Decimal("1.234"))
    assert str(row.a) == "1.234"


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


@pytest.mark.asyncio
async def test_an_int_column_is_set_to_whole_numbers_only(db: Any) -> None:
    await db.execute(insert(Reading).values({"id": 1, "whole": 5, "part": 2.5}))
    for value in (sql.col("whole") / 2, sql.col("part") * 2, sql.col("part"),
                  sql.coalesce("whole", "price"), sql.round("part", digits=1)):
        with pytest.raises(ValidationError, match=r"Reading\.whole is int, and .* in set\(\) is a"
                                                  r" (float|Decimal): PostgreSQL and MySQL would "
                                                  r"round it, SQLite store the fraction"):
            update(Reading).set({"whole": value}).where({"id": 1})
    # Each value reads the row as it was, on MySQL too (which sets left to right: the
    # dialect writes `price` first, since it reads `whole`).
    await db.execute(update(Reading).set({"whole": sql.round("part"),
                                          "price": sql.col("whole") * 2}).where({"id": 1}))
    row = (await db.execute(select(Reading).where({"id": 1}))).one()
    assert (row.whole, row.part, row.price) == (3, 2.5, Decimal("10.00"))
    assert type(row.whole) is int


def test_mysql_refuses_values_that_read_each_other_s_columns() -> None:
    swap = update(Reading).set({"whole": sql.round("part"), "part": sql.col("whole") * 1.0})
    swap = swap.where({"id": 1})
    assert swap.compile("postgresql").sql.startswith('UPDATE "eng_readings" SET "whole" = ')
    for dialect in ("mysql", "mariadb"):
        with pytest.raises(DialectError, match=r"the new values of whole, part read each "
                                               r"other's columns.*set them in two statements"):
            swap.compile(dialect)
    ordered = update(Reading).set({"whole": 1, "part": sql.col("whole") * 1.0}).where({"id": 1})
    assert ordered.compile("mysql").sql == (
        "UPDATE `eng_readings` SET `part` = (`whole` * %s), `whole` = %s WHERE `id` = %s")


@pytest.mark.asyncio
async def test_round_of_a_float_rounds_the_float_itself(db: Any) -> None:
    # PostgreSQL's CAST(double AS numeric) kept 15 digits: 100.49999999999999 became 100.5
    values = [2305843009213693952.0, 100.49999999999999, 28.499999999999996, -2.5]
    await db.execute(insert(Reading).values(
        [{"id": i, "part": v} for i, v in enumerate(values, 1)]))
    rows = (await db.execute(select(Reading, ["id"]).add_columns({
        "r": sql.round("part"), "e": sql.round(sql.col("part") * 1, digits=0),
        "d": sql.round("part", digits=13),
    }).order_by("id"))).all()
    assert [r.r for r in rows] == [2305843009213693952.0, 100.0, 28.0, -3.0]
    assert [r.e for r in rows] == [r.r for r in rows]
    assert rows[1].d == 100.5 and rows[2].d == 28.5
