"""A set operation in sql.exists() is refused with the way out (name it with sql.cte()), which
finds the same rows on every database; it said "got an insert, update or delete"."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, ValidationError, column, insert, select, sql


class Member(Model, table="eng_setsub_members"):
    id: int = column(primary_key=True)


class Guest(Model, table="eng_setsub_guests"):
    id: int = column(primary_key=True)
    member_id: int | None = None


MODELS = (Member, Guest)


@pytest.mark.asyncio
async def test_exists_of_a_set_operation_names_the_way_out(db: Any) -> None:
    await db.execute(insert(Member).values([{"id": 1}, {"id": 2}, {"id": 3}]))
    await db.execute(insert(Guest).values([{"id": 2, "member_id": None},
                                           {"id": 5, "member_id": 3}]))
    either = select(Guest, ["id"]).union(select(Guest, ["member_id"]))
    for make in (sql.exists, sql.not_exists):
        with pytest.raises(ValidationError, match=r"got a set operation .*sql\.cte\(\)"):
            make(either)
    named = sql.cte("eng_setsub_either", either)
    rows = (await db.execute(select(Member, ["id"]).where(sql.exists(
        select(named).where({"id": sql.col("eng_setsub_members.id")}))).order_by("id"))).all()
    assert [r.id for r in rows] == [2, 3]


@pytest.mark.asyncio
async def test_a_set_operation_as_an_in_operand_and_a_value(db: Any) -> None:
    await db.execute(insert(Member).values([{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]))
    await db.execute(insert(Guest).values([{"id": 2, "member_id": None},
                                           {"id": 5, "member_id": 3}]))
    # SetQuery had no as_subquery(): an AttributeError, where a select has one
    either = select(Guest, ["id"]).union(select(Guest, ["member_id"]))
    rows = (await db.execute(select(Member, ["id"]).where(
        {"id": {"in": either.as_subquery("id")}}).order_by("id"))).all()
    assert [r.id for r in rows] == [2, 3]
    last = either.order_by("id", "desc").limit(1)  # MariaDB takes the limit in a named select
    rows = (await db.execute(select(Member, ["id"]).where(
        {"id": {"not_in": last.as_subquery("id")}}).order_by("id"))).all()
    assert [r.id for r in rows] == [1, 2, 3, 4]
    most = sql.scalar(select(Guest, ["id"]).union_all(select(Member, ["id"]))
                      .order_by("id", "desc").limit(1).as_subquery("id"))
    row = (await db.execute(select(Member, ["id"]).where({"id": 1}).add_columns({"m": most}))).one()
    assert (row.id, row.m) == (1, 5)
    with pytest.raises(ValidationError, match=r"names a column of the first statement: id"):
        either.as_subquery("member_id")
    outer = select(Guest, ["id"]).where({"member_id": sql.col("eng_setsub_members.id")})
    with pytest.raises(ValidationError, match="names a column of an enclosing statement"):
        outer.union(select(Guest, ["id"])).as_subquery("id")
    with pytest.raises(ValidationError, match="names a column of an enclosing statement"):
        sql.cte("eng_setsub_outer", outer.union(select(Guest, ["id"])))
