"""A value an int or sized Decimal column would round is refused at build, whether it comes
as a value, an expression in set() or a select's column in insert().from_select(): a float
into an int column, a Decimal of more places than the column's scale. sql.round() says how
to make it fit, and passes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql, update


class Measured(Model, table="eng_rr_measured"):
    id: int = column(primary_key=True)
    whole: int = 0
    part: float = 0.0
    fine: Decimal = column(default=Decimal(0), precision=8, scale=3)


class Kept(Model, table="eng_rr_kept"):
    id: int = column(primary_key=True)
    whole: int = 0
    part: float = 0.0
    coarse: Decimal = column(default=Decimal(0), precision=8, scale=1)
    fine: Decimal = column(default=Decimal(0), precision=8, scale=3)


MODELS = (Measured, Kept)


def test_a_value_that_would_be_rounded_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"Kept\.whole is int, and the select's 'whole' .* "
                                              r"is a float: PostgreSQL and MySQL would round"):
        insert(Kept).from_select(select(Measured, ["id"]).add_columns({"whole": sql.col("part")}))
    with pytest.raises(ValidationError, match=r"Kept\.coarse holds 1 places after the point, "
                                              r"and the select's 'coarse' .* has 3: .*digits=1"):
        insert(Kept).from_select(select(Measured, ["id"]).add_columns({"coarse": sql.col("fine")}))
    with pytest.raises(ValidationError, match=r"Kept\.coarse holds 1 places .* in set\(\) has 3"):
        update(Kept).set({"coarse": sql.col("fine")}).unguarded()
    union = select(Measured, ["id"]).add_columns({"whole": sql.round("part")}).union(
        select(Measured, ["id"]).add_columns({"whole": sql.col("part")}))
    with pytest.raises(ValidationError, match=r"is a float"):
        insert(Kept).from_select(union)



def test_an_expression_inserted_that_would_be_rounded_is_refused() -> None:
    # values() sets the columns of a new row as set() sets those of an existing one
    for value in (sql.value(1.5), sql.value(3) / 2, sql.coalesce(sql.value(1.5), 2)):
        with pytest.raises(ValidationError, match=r"Kept\.whole is int, and .* in values\(\) is "
                                                  r"a float: PostgreSQL and MySQL would round"):
            insert(Kept).values({"id": 1, "whole": value})
    with pytest.raises(ValidationError, match=r"Kept\.coarse holds 1 places .* in values\(\) has "
                                              r"3"):
        insert(Kept).values([{"id": 1}, {
            "id": 2, "coarse": sql.round(sql.value(Decimal("1.255")), digits=3)}])
    with pytest.raises(ValidationError, match=r"Kept\.whole is int, and sql\.scalar\(.*\) in "
                                              r"values\(\) is a float"):
        insert(Kept).values({"id": 1, "whole": sql.scalar(
            select(Measured, ["part"]).limit(1).as_subquery("part"))})
    with pytest.raises(ValidationError, match=r"Kept\.whole is int, and sql\.scalar\(.*\) in "
                                              r"set\(\) is a float"):
        update(Kept).set({"whole": sql.scalar(
            select(Measured, ["part"]).limit(1).as_subquery("part"))}).unguarded()
    insert(Kept).values({"id": 1, "whole": sql.round(sql.value(1.5)), "part": sql.value(2)})



def test_a_decimal_in_sql_value_is_held_to_the_columns_scale() -> None:
    # sql.value(d) sets the column to d, which is checked as d itself is
    for build in (lambda v: update(Kept).set({"coarse": v}).unguarded(),
                  lambda v: insert(Kept).values({"id": 1, "coarse": v}),
                  lambda v: insert(Kept).values({"id": 1}).on_conflict_do_update(
                      ["id"], {"coarse": v})):
        with pytest.raises(ValidationError, match=r"Kept\.coarse: Decimal\('1\.255'\) has 3 "
                                                  r"digits after the point, and the column keeps 1"):
            build(sql.value(Decimal("1.255")))
        with pytest.raises(ValidationError, match=r"has 8 digits before the point"):
            build(sql.value(Decimal("12345678.2")))
        build(sql.value(Decimal("1.2")))


@pytest.mark.asyncio
async def test_a_rounded_value_fits(db: Any) -> None:
    await db.execute(insert(Measured).values({"id": 1, "whole": 4, "part": 2.75}))
    await db.execute(insert(Kept).from_select(select(Measured, ["id"]).add_columns({
        "whole": sql.round("part"), "part": sql.col("whole")})))
    await db.execute(update(Kept).set({"whole": sql.round("part")}).where({"id": 1}))
    assert (await db.execute(select(Kept, ["whole", "part"]))).all() == [(4, 4.0)]


@pytest.mark.parametrize("url", ["postgresql", "mysql"], indirect=True)  # SQLite: no round
@pytest.mark.asyncio
async def test_a_rounded_decimal_fits(db: Any) -> None:
    await db.execute(insert(Measured).values({"id": 1, "fine": Decimal("1.255")}))
    await db.execute(insert(Kept).from_select(select(Measured, ["id", "fine"]).add_columns({
        "coarse": sql.round("fine", digits=1)})))
    assert (await db.execute(select(Kept, ["coarse"]))).scalars() == [Decimal("1.3")]
    await db.execute(update(Kept).set({"coarse": sql.round("fine", digits=0)}).where({"id": 1}))
    assert (await db.execute(select(Kept, ["coarse"]))).scalars() == [Decimal("1.0")]
