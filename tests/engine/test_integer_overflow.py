"""Integer arithmetic past 64 bits fails the statement on every database: SQLite yielded a
REAL, silently (read back as an int of another value, or stored in an int column), where
PostgreSQL and MySQL fail it."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    Model,
    QueryExecutionError,
    ValidationError,
    column,
    insert,
    select,
    sql,
    update,
)


class Counter(Model, table="eng_counters"):
    id: int = column(primary_key=True)
    n: int = 0


MODELS = (Counter,)

TOP = 2**63 - 1


@pytest.mark.asyncio
async def test_arithmetic_past_64_bits_is_an_error(db: Any) -> None:
    await db.execute(insert(Counter).values([{"id": 1, "n": TOP}, {"id": 2, "n": 5}]))
    for value in (sql.col("n") + 1, sql.col("n") * 3, sql.col("n") - (-TOP),
                  sql.abs(sql.col("n") * 2) + 0, (sql.col("n") + 1) * 1):
        with pytest.raises(QueryExecutionError):
            await db.execute(select(Counter, ["id"]).where({"id": 1}).add_columns({"x": value}))
    with pytest.raises(QueryExecutionError):
        await db.execute(update(Counter).set({"n": sql.col("n") + 1}).where({"id": 1}))
    rows = (await db.execute(select(Counter).order_by("id"))).all()
    assert [(r.id, r.n) for r in rows] == [(1, TOP), (2, 5)]
    assert type(rows[0].n) is int
    # within 64 bits, arithmetic is exact on every database
    row = (await db.execute(select(Counter, ["id"]).where({"id": 1}).add_columns(
        {"x": sql.col("n") - 1, "y": (sql.col("n") - TOP) * 2}))).one()
    assert (row.x, row.y) == (TOP - 1, 0)
    assert type(row.x) is int
    with pytest.raises(ValidationError, match="outside the 64-bit range"):
        insert(Counter).values({"id": 3, "n": 2**63})


@pytest.mark.asyncio
async def test_a_rounded_int_is_the_same_int(db: Any) -> None:
    # SQLite's ROUND yields a REAL: 2**63 - 1 came back as 2**63, 2**53 + 1 as 2**53, and
    # update().set() stored the REAL in the int column
    await db.execute(insert(Counter).values([{"id": 1, "n": TOP}, {"id": 2, "n": 2**53 + 1},
                                             {"id": 3, "n": -TOP - 1}]))
    rows = (await db.execute(select(Counter, ["id"]).add_columns({
        "whole": sql.round("n"),
        "places": sql.round("n", 2),
        "window": sql.round(sql.sum("n").over(partition_by=["id"])),
    }).order_by("id"))).all()
    assert [tuple(r) for r in rows] == [(1, TOP, TOP, TOP), (2, 2**53 + 1, 2**53 + 1, 2**53 + 1),
                                        (3, -TOP - 1, -TOP - 1, -TOP - 1)]
    assert {type(v) for r in rows for v in r} == {int}
    await db.execute(update(Counter).set({"n": sql.round("n")}).where({"id": 2}))
    assert (await db.execute(select(Counter).where({"id": 2}))).one().n == 2**53 + 1
