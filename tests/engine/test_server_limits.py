"""Results past a server's default limit are the same on every database: a recursive query
deeper than 1000 levels, strings that differ past their first 1024 bytes, the places of an
average or a quotient."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import Model, QueryExecutionError, column, insert, join, select, sql, update


class Link(Model, table="eng_limit_links"):
    id: int = column(primary_key=True)
    parent_id: int | None = None


class Note(Model, table="eng_limit_notes"):
    id: int = column(primary_key=True)
    body: str
    amount: Decimal = column(precision=10, scale=2)
    ratio: float = 0.0


MODELS = (Link, Note)


@pytest.mark.asyncio
async def test_a_recursive_query_runs_past_1000_levels(db: Any) -> None:
    # MariaDB stopped after 1000 iterations without an error, MySQL 8 raised at 1000 levels.
    await db.execute(insert(Link).values([{"id": 1}]))
    await db.execute(insert(Link).values([{"id": i + 1, "parent_id": i} for i in range(1, 1200)]))
    base = select(Link, ["id"]).where({"id": 1}).add_columns({"depth": sql.value(0)})
    chain = sql.recursive_cte("eng_limit_chain", base, lambda up: join(Link, "n").inner_join(
        up, "up", {"n.parent_id": "up.id"}).project({"id": "n.id", "depth": sql.col("up.depth") + 1}))
    row = (await db.execute(select(chain).aggregate([], {"n": sql.count(), "m": sql.max("depth")}))).one()
    assert (row.n, row.m) == (1200, 1199)


@pytest.mark.asyncio
async def test_strings_equal_in_their_first_kilobytes_order_by_the_rest(db: Any) -> None:
    # MariaDB ordered and ranked strings by their first 1024 bytes only.
    prefix = "a" * 5000
    await db.execute(insert(Note).values([{"body": prefix + tail, "amount": Decimal(0)}
                                          for tail in ("c", "a", "b", "a")]))
    ordered = (await db.execute(select(Note, ["id"]).order_by("body").order_by("id", "desc"))).scalars()
    assert ordered == [4, 2, 3, 1]
    ranked = (await db.execute(select(Note, ["id"]).add_columns(
        {"r": sql.dense_rank().over(order_by=["body"])}).order_by("id"))).all()
    assert [r.r for r in ranked] == [3, 1, 2, 1]
    groups = (await db.execute(select(Note).aggregate(["body"], {"n": sql.count()}))).all()
    assert sorted(g.n for g in groups) == [1, 1, 2]
    assert len((await db.execute(select(Note, ["body"]).distinct())).all()) == 3


@pytest.mark.asyncio
async def test_the_average_of_a_decimal_keeps_postgresql_s_places(db: Any, url: str) -> None:
    # MySQL and MariaDB kept the column's scale plus 4 places (0.336667).
    if url.startswith("sqlite"):
        pytest.skip("SQLite stores a Decimal as text: avg() of one is a DialectError")
    await db.execute(insert(Note).values([{"body": "x", "amount": Decimal(v)} for v in ("1.00", "0.00", "0.01")]))
    got = (await db.execute(select(Note).aggregate([], {"a": sql.avg("amount")}))).scalar()
    assert got.quantize(Decimal("1e-20")) == Decimal("0.33666666666666666667")


@pytest.mark.asyncio
async def test_rounding_a_float_past_35_digits_keeps_it(db: Any) -> None:
    # MySQL and MariaDB rounded a float as a DECIMAL(65, 30): 1e40 came back as 1e35.
    values = (1e40, -1.5e300, 1234.5678, 2.5)
    await db.execute(insert(Note).values([{"id": i, "body": "x", "amount": Decimal(0), "ratio": v}
                                          for i, v in enumerate(values, 1)]))
    rows = (await db.execute(select(Note, ["id"]).add_columns(
        {"r": sql.round("ratio", 2), "w": sql.round("ratio")}).order_by("id"))).all()
    assert [r.r for r in rows] == [1e40, -1.5e300, 1234.57, 2.5]
    assert [r.w for r in rows] == [1e40, -1.5e300, 1235.0, 3.0]


class Moment(Model, table="eng_limit_moments"):
    id: int = column(primary_key=True)
    at: datetime


@pytest.mark.asyncio
async def test_the_last_microsecond_of_year_9999_has_its_parts(db: Any) -> None:
    # SQLite's strftime rounded 23:59:59.999999 up to year 10000 and gave NULL.
    await db.create_all(Moment)
    try:
        await db.execute(insert(Moment).values({"id": 1, "at": datetime(9999, 12, 31, 23, 59, 59, 999999,
                                                                        tzinfo=UTC)}))
        row = (await db.execute(select(Moment, ["id"]).add_columns({
            "y": sql.extract("year", "at"), "d": sql.extract("day", "at"),
            "m": sql.date_trunc("minute", "at")}))).one()
        assert (row.y, row.d, row.m) == (9999, 31, datetime(9999, 12, 31, 23, 59, tzinfo=UTC))
    finally:
        await db.drop_all(Moment)


@pytest.mark.asyncio
async def test_a_scalar_subquery_finding_several_rows_raises(db: Any) -> None:
    # SQLite took the first row where PostgreSQL and MySQL raise.
    await db.execute(insert(Link).values([{"id": 1}, {"id": 2}, {"id": 3, "parent_id": 1}]))
    several = sql.scalar(select(Link, ["id"]).where({"id": {"lt": 3}}).as_subquery("id"))
    for stmt in (select(Link, ["id"]).where({"id": several}),
                 select(Link, ["id"]).add_columns({"x": several}),
                 update(Link).set({"parent_id": several}).where({"id": 3})):
        with pytest.raises(QueryExecutionError) as caught:
            await db.execute(stmt)
        # each database says so (SQLite, which has no such error, through the hint)
        assert re.search(r"more than (one|1) row", str(caught.value)), caught.value
    one = sql.scalar(select(Link, ["id"]).where({"id": 2}).as_subquery("id"))
    got = (await db.execute(select(Link, ["id"]).where({"parent_id": None, "id": one}))).scalars()
    assert got == [2]
