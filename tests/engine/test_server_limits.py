"""Results past a server's default limit are the same on every database: a recursive query
deeper than 1000 levels, strings that differ past their first 1024 bytes, the places of an
average or a quotient."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, column, insert, join, select, sql


class Link(Model, table="eng_limit_links"):
    id: int = column(primary_key=True)
    parent_id: int | None = None


MODELS = (Link,)


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
