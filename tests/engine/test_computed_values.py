"""A window function's value takes arithmetic, and sql.now() and SQL text stand in computed
columns and function arguments, with the same values of the same types on every database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql, update


class Sale(Model, table="eng_sales"):
    id: int = column(primary_key=True)
    shop: int = 0
    cents: int = 0
    note: str | None = None
    seen_at: datetime | None = None


MODELS = (Sale,)

ROWS = [
    {"id": 1, "shop": 1, "cents": 300, "note": None, "seen_at": None},
    {"id": 2, "shop": 1, "cents": 100, "note": "x",
     "seen_at": datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)},
    {"id": 3, "shop": 2, "cents": 50, "note": None, "seen_at": None},
]


@pytest.mark.asyncio
async def test_arithmetic_on_a_window_function(db: Any) -> None:
    await db.execute(insert(Sale).values(ROWS))
    rows = (await db.execute(select(Sale, ["id"]).add_columns({
        "pos": sql.row_number().over(partition_by=["shop"], order_by=["id"]) - 1,
        "share": sql.col("cents") * 100 / sql.sum("cents").over(partition_by=["shop"]),
        "twice": 2 * sql.count().over(partition_by=["shop"]),
    }).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, 0, 75.0, 4), (2, 1, 25.0, 4), (3, 0, 100.0, 2)]
    assert [type(v) for v in tuple(rows[0])] == [int, int, float, int]


@pytest.mark.asyncio
async def test_now_and_sql_text_in_computed_values(db: Any) -> None:
    await db.execute(insert(Sale).values(ROWS))
    before = datetime.now(UTC) - timedelta(seconds=5)
    rows = (await db.execute(select(Sale, ["id"]).add_columns({
        "now": sql.now(),
        "later": sql.now(plus=60),
        "seen": sql.coalesce("seen_at", sql.now()),
        "year": sql.extract("year", sql.now()),
        "day": sql.date_trunc("day", sql.now()),
        "note2": sql.coalesce("note", sql.expr("{}", "none")),
        "more": sql.col("cents") + sql.raw("1"),
        "low": sql.lower(sql.expr("{}", "ABC")),
    }).order_by("id"))).all()
    after = datetime.now(UTC) + timedelta(seconds=5)
    for r in rows:
        assert type(r.now) is datetime and before <= r.now <= after
        assert abs((r.later - r.now) - timedelta(seconds=60)) < timedelta(seconds=1)
        assert r.year == r.now.year
        assert r.day == r.now.replace(hour=0, minute=0, second=0, microsecond=0)
        assert r.low == "abc"
    assert [r.seen == r.now for r in rows] == [True, False, True]
    assert rows[1].seen == datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert [(r.note2, r.more) for r in rows] == [("none", 301), ("x", 101), ("none", 51)]


@pytest.mark.asyncio
async def test_a_column_reference_in_values_is_refused(db: Any) -> None:
    # A row being inserted has no column to read: SQLite took the quoted name for a string
    # and stored "shop" in an int column, PostgreSQL and MySQL refused or read another column.
    for value in (sql.col("shop"), sql.col("eng_sales.shop"),
                  sql.expr("{} + 1", sql.col("shop"))):
        with pytest.raises(ValidationError, match="in values\\(\\): a row being inserted has no "
                           "columns to read yet"):
            await db.execute(insert(Sale).values({"id": 1, "cents": value}))
    assert (await db.execute(select(Sale))).all() == []


def test_sql_text_with_no_type_beside_it_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"SQL text has no type to read its value back as"):
        select(Sale, ["id"]).add_columns({"x": sql.expr("{}", 1)})
    with pytest.raises(ValidationError, match=r"no other argument gives one"):
        select(Sale, ["id"]).add_columns({"x": sql.abs(sql.raw("1"))})


@pytest.mark.asyncio
async def test_a_subquery_s_value_takes_arithmetic(db: Any) -> None:
    await db.execute(insert(Sale).values([{"id": 1, "cents": 100}, {"id": 2, "cents": 400}]))
    # sql.scalar(...) * 2 was a TypeError: the value took arithmetic only on the right of one
    most = sql.scalar(select(Sale).aggregate([], {"m": sql.max("cents")}).as_subquery("m"))
    rows = (await db.execute(select(Sale, ["id"]).add_columns(
        {"gap": most - sql.col("cents"), "twice": 2 * most, "share": sql.col("cents") / most})
        .where({"cents": {"lt": most / 2}}))).all()
    assert [tuple(r) for r in rows] == [(1, 300, 800, 0.25)]
    await db.execute(update(Sale).set({"cents": most + 1}).where({"id": 1}))
    assert (await db.execute(select(Sale, ["cents"]).where({"id": 1}))).scalar() == 401
