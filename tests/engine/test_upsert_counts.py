"""An upsert's rows_affected() counts each row inserted or updated once, on every database:
MySQL and MariaDB count an updated row of INSERT ... ON DUPLICATE KEY UPDATE twice (and one
set to the values it had once, with CLIENT_FOUND_ROWS), PostgreSQL and SQLite once."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, column, insert, select, sql


class Counter(Model, table="eng_upsert_counters"):
    id: int = column(primary_key=True)
    n: int = 0


class Source(Model, table="eng_upsert_sources"):
    id: int = column(primary_key=True)
    m: int = 0


MODELS = (Counter, Source)

pytestmark = pytest.mark.asyncio


def _target(db: Any) -> list[str] | None:
    return None if db.dialect.name in ("mysql", "mariadb") else ["id"]


def _bump(db: Any, *ids: int) -> Any:
    rows = [{"id": i, "n": 1} for i in ids]
    return insert(Counter).values(rows).on_conflict_do_update(_target(db),
                                                              {"n": sql.col("n") + 1})


async def test_each_row_inserted_or_updated_counts_once(db: Any) -> None:
    async def affected(stmt: Any) -> int:
        return int((await db.execute(stmt)).rows_affected())

    assert await affected(_bump(db, 1)) == 1  # inserted
    assert await affected(_bump(db, 1)) == 1  # updated
    unchanged = insert(Counter).values({"id": 1, "n": 9}).on_conflict_do_update(
        _target(db), {"n": sql.col("n")})
    assert await affected(unchanged) == 1  # set to the values it had: still a row updated
    assert await affected(_bump(db, 1, 2, 3)) == 3  # one updated, two inserted
    assert await affected(_bump(db, 1, 2, 3)) == 3  # three updated
    async with db.transaction() as tx:
        assert (await tx.execute(_bump(db, 3, 4))).rows_affected() == 2
    counts = [(r.id, r.n) for r in (await db.execute(select(Counter).order_by("id"))).all()]
    assert counts == [(1, 4), (2, 2), (3, 3), (4, 1)]


async def test_an_upsert_from_a_select_counts_each_row_once(db: Any) -> None:
    await db.execute(insert(Source).values([{"id": i, "m": 10 * i} for i in (1, 2, 3)]))
    await db.execute(insert(Counter).values({"id": 2, "n": 0}))
    rows = select(Source, ["id"]).add_columns({"n": sql.col("m")}).where({"id": {"gt": 0}})
    stmt = insert(Counter).from_select(rows)
    stmt = stmt.on_conflict_do_update(_target(db), {"n": sql.col("n") + 1})
    assert (await db.execute(stmt)).rows_affected() == 3  # two inserted, one updated
    counts = [(r.id, r.n) for r in (await db.execute(select(Counter).order_by("id"))).all()]
    assert counts == [(1, 10), (2, 1), (3, 30)]


@pytest.mark.parametrize("url", ["mysql"], indirect=True)
async def test_hand_written_upserts_count_each_row_once_on_mysql(db: Any) -> None:
    upsert = ("INSERT INTO eng_upsert_counters (id, n) VALUES (%s, 1), (%s, 1) "
              "on duplicate key update n = n + 1")
    assert (await db.execute_sql(upsert, (1, 2))).rows_affected() == 2
    assert (await db.execute_sql(upsert, (2, 3))).rows_affected() == 2
    one = "INSERT INTO eng_upsert_counters (id, n) VALUES (%s, 1) ON DUPLICATE KEY UPDATE n = 7"
    assert (await db.execute_sql(one, (1,))).rows_affected() == 1
    # other statements' counts are as the server gives them
    assert (await db.execute_sql("UPDATE eng_upsert_counters SET n = 0 WHERE id > 0")
            ).rows_affected() == 3
