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
