"""stream() of a write with returning(...) hands out the written rows on every database: on
PostgreSQL it ran `DECLARE ... CURSOR FOR INSERT ...`, a syntax error (a cursor takes a select
only), so the write runs there as one statement, as execute() runs it, and its rows come in
chunks. A failure names the statement that ran."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import Model, QueryExecutionError, column, delete, insert, select, update


class Item(Model, table="eng_stream_writes"):
    id: int = column(primary_key=True)
    v: int = 0


MODELS = (Item,)

pytestmark = pytest.mark.asyncio


async def _values(db: Any) -> list[tuple[int, int]]:
    return [(r.id, r.v) for r in (await db.execute(select(Item).order_by("id"))).all()]


async def test_a_write_with_returning_streams_its_rows(db: Any) -> None:
    await db.execute(insert(Item).values([{"id": i, "v": i % 3} for i in range(1, 8)]))
    async with db.session() as session:
        inserted = [r.id async for r in session.stream(
            insert(Item).values([{"id": i} for i in range(8, 13)]).returning("id"),
            chunk_size=2)]
        assert sorted(inserted) == [8, 9, 10, 11, 12]
        if "update" not in db.dialect.supports_returning:  # MariaDB has none on UPDATE
            await session.execute(update(Item).set({"v": 9}).where({"v": 1}))
        else:
            updated = [r.id async for r in session.stream(
                update(Item).set({"v": 9}).where({"v": 1}).returning("id"), chunk_size=1)]
            assert sorted(updated) == [1, 4, 7]
        # the session goes on, and what the streams wrote is committed
        assert (await session.execute_sql("SELECT 1")).scalar() == 1
    async with db.transaction() as tx:
        deleted = [r async for r in tx.stream(delete(Item).where({"v": 2}).returning())]
        assert sorted((r.id, r.v) for r in deleted) == [(2, 2), (5, 2)]
    assert [i for i, _ in await _values(db)] == [1, 3, 4, 6, 7, 8, 9, 10, 11, 12]
    assert [v for i, v in await _values(db) if i in (1, 4, 7)] == [9, 9, 9]


async def test_a_streamed_write_in_a_rolled_back_transaction_is_undone(db: Any) -> None:
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            got = [r.id async for r in tx.stream(insert(Item).values({"id": 1}).returning("id"))]
            assert got == [1]
            raise RuntimeError("undo")
    assert await _values(db) == []


async def test_a_failed_streamed_write_names_the_statement_that_ran(db: Any) -> None:
    await db.execute(insert(Item).values({"id": 1}))
    write = insert(Item).values({"id": 1}).returning("id")
    async with db.session() as session:
        with pytest.raises(QueryExecutionError) as failed:
            [r async for r in session.stream(write)]
        assert failed.value.sql == write.compile(db.dialect.name).sql
        assert "CURSOR" not in failed.value.sql
        assert (await session.execute_sql("SELECT 1")).scalar() == 1
