"""A set operation's column of numbers has the widest type of its members (as coalesce and
CASE do): an int beside a float is a float on every database (SQLite kept each row's own
type), two Decimals are read at the most places of either (the first's rounded the other),
a Decimal beside a float is a float (PostgreSQL's row failed to read as a Decimal)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Measure(Model, table="eng_measures"):
    id: int = column(primary_key=True)
    n: int = 0
    f: float = 0.0
    d2: Decimal = column(default=Decimal("0"), precision=8, scale=2)
    d4: Decimal = column(default=Decimal("0"), precision=8, scale=4)


class Tally(Model, table="eng_tallies"):
    id: int = column(primary_key=True)
    n: int = 0


MODELS = (Measure, Tally)


@pytest.mark.asyncio
async def test_the_widest_number_types_the_rows(db: Any) -> None:
    await db.execute(insert(Measure).values(
        {"id": 1, "n": 3, "f": 2.5, "d2": Decimal("1.25"), "d4": Decimal("1.2345")}))
    one = select(Measure, ["n"])
    for stmt in (one.union_all(select(Measure, ["f"])), one.union(select(Measure, ["f"])),
                 select(Measure, ["f"]).union_all(one)):
        values = sorted(next(iter(r)) for r in (await db.execute(stmt)).all())
        assert values == [2.5, 3.0]
        assert {type(v) for v in values} == {float}
    rows = (await db.execute(select(Measure, ["d2"]).union_all(select(Measure, ["d4"])))).all()
    assert sorted(r.d2 for r in rows) == [Decimal("1.2345"), Decimal("1.2500")]
    rows = (await db.execute(select(Measure, ["n"]).union_all(select(Measure, ["d4"])))).all()
    assert sorted(r.n for r in rows) == [Decimal("1.2345"), Decimal("3.0000")]
    assert {type(r.n) for r in rows} == {Decimal}
    rows = (await db.execute(select(Measure, ["d2"]).union_all(select(Measure, ["f"])))).all()
    assert sorted(r.d2 for r in rows) == [1.25, 2.5]
    assert {type(r.d2) for r in rows} == {float}
    # a CASE of two Decimals keeps the places of either (it was read at the first's 2)
    row = (await db.execute(select(Measure, ["id"]).add_columns(
        {"c": sql.case(({"id": 2}, "d2"), else_="d4")}))).one()
    assert str(row.c) == "1.2345"
    named = sql.cte("widened", select(Measure, ["n"]).union_all(select(Measure, ["f"])))
    assert sorted(r.n for r in (await db.execute(select(named))).all()) == [2.5, 3.0]


def test_the_casts_per_dialect() -> None:
    stmt = select(Measure, ["n", "d2"]).union_all(select(Measure, ["f", "d4"]))
    assert stmt.compile("sqlite").sql == (
        'SELECT CAST("n" AS REAL) AS "n", "d2" AS "d2" FROM "eng_measures" UNION ALL SELECT '
        '"f", "d4" FROM "eng_measures"')
    assert stmt.compile("postgresql").sql == (
        'SELECT CAST("n" AS double precision) AS "n", CAST("d2" AS numeric) AS "d2" FROM '
        '"eng_measures" UNION ALL SELECT "f", "d4" FROM "eng_measures"')
    assert stmt.compile("mysql").sql == (
        'SELECT CAST(`n` AS DOUBLE) AS `n`, CAST(`d2` AS DECIMAL(65, 4)) AS `d2` FROM '
        '`eng_measures` UNION ALL SELECT `f`, `d4` FROM `eng_measures`')
    with pytest.raises(ValidationError, match=r"the first statement's rows are Measure models, "
                                              r"whose n \(int\) cannot hold"):
        select(Measure).union(select(Measure, ["id", "f", "f", "d2", "d4"]))


@pytest.mark.asyncio
async def test_intersect_after_intersect_runs_and_after_union_is_refused(db: Any) -> None:
    # the check compared the SQL keywords kept ("INTERSECT") with "intersect": a second
    # intersect() was refused as if it followed a union
    await db.execute(insert(Measure).values([{"id": i, "n": i % 3} for i in range(1, 7)]))
    stmt = (select(Measure, ["id"]).where({"n": {"gt": 0}})
            .intersect(select(Measure, ["id"]).where({"id": {"lt": 6}}))
            .intersect(select(Measure, ["id"]).where({"id": {"gt": 1}})).order_by("id"))
    assert [r.id for r in (await db.execute(stmt)).all()] == [2, 4, 5]
    with pytest.raises(ValidationError, match=r"intersect\(\) after union\(\)/except_\(\)"):
        select(Measure, ["id"]).union(select(Measure, ["id"])).intersect(
            select(Measure, ["id"]))
    with pytest.raises(ValidationError, match=r"intersect\(\) after union\(\)/except_\(\)"):
        select(Measure, ["id"]).intersect(select(Measure, ["id"])).except_(
            select(Measure, ["id"])).intersect(select(Measure, ["id"]))


@pytest.mark.asyncio
async def test_a_column_beside_another_statement_s_aggregate(db: Any) -> None:
    await db.execute(insert(Measure).values([{"id": 1, "n": 3}, {"id": 2, "n": 4}]))
    # PostgreSQL and MariaDB give an int column beside a SUM of ints as a numeric: the rows,
    # typed by the first statement, came back Decimals
    rows = (await db.execute(select(Measure, ["n"]).union_all(
        select(Measure).aggregate([], {"total": sql.sum("n")})))).all()
    assert sorted((r.n, type(r.n)) for r in rows) == [(3, int), (4, int), (7, int)]
    rows = (await db.execute(select(Measure, ["id", "n"]).where({"id": 1}).union_all(
        select(Measure).aggregate(["id"], {"m": sql.max("n")}).where({"id": 2})))).all()
    assert sorted((r.id, r.n, type(r.n)) for r in rows) == [(1, 3, int), (2, 4, int)]
    # and so are whole models, the first statement's rows
    await db.execute(insert(Tally).values([{"id": 1, "n": 3}, {"id": 2, "n": 4}]))
    models = (await db.execute(select(Tally).union_all(
        select(Tally).aggregate(["id"], {"n": sql.sum("n")})))).all()
    assert sorted((t.id, t.n, type(t.n)) for t in models) == [
        (1, 3, int), (1, 3, int), (2, 4, int), (2, 4, int)]
