"""Statements sent together (`_execute_together`, what the queue's acks and next claim use):
in order, as one transaction, on both engines and the three databases (the `db` fixture).

On PostgreSQL they go in one round trip (psycopg's pipeline, one Sync); elsewhere in turn,
in a transaction of their own unless inside the caller's. Either way: all commit or none,
each sees what the ones before it wrote, each gives its own Result.
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    IntegrityError,
    TransactionAborted,
    ValidationError,
    insert,
    select,
    update,
)

from .conftest import Item

pytestmark = pytest.mark.asyncio


async def names(db: Any) -> list[str]:
    return sorted((await db.execute(select(Item, ["name"]))).scalars())


async def test_statements_sent_together_commit_together_each_with_its_result(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "a", "qty": 1}))
    wrote, bumped, read = await db._execute_together([
        insert(Item).values({"name": "b", "qty": 2}),
        update(Item).set({"qty": 10}).where({"name": {"in": ["a", "b"]}}),
        select(Item, ["name", "qty"]).where({"qty": 10}).order_by("name"),
    ])
    assert (wrote.rows_affected(), bumped.rows_affected()) == (1, 2)
    # the select sees the update before it (each statement takes its own snapshot)
    assert [(r.name, r.qty) for r in read.all()] == [("a", 10), ("b", 10)]
    assert await names(db) == ["a", "b"]


async def test_a_failure_of_a_later_statement_undoes_the_earlier_ones(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(IntegrityError):
        await db._execute_together([
            update(Item).set({"qty": 5}).where({"name": "taken"}),
            insert(Item).values({"name": "new"}),
            insert(Item).values({"name": "taken"}),
        ])
    rows = (await db.execute(select(Item))).all()
    assert [(r.name, r.qty) for r in rows] == [("taken", 0)]  # nothing of the three stayed
    async with db.session() as session:  # a session that met the failure goes on
        with pytest.raises(IntegrityError):
            await session._execute_together([insert(Item).values({"name": "taken"})])
        await session._execute_together([insert(Item).values({"name": "after"})])
    assert await names(db) == ["after", "taken"]


async def test_inside_the_callers_transaction_they_are_part_of_it(db: Any) -> None:
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            await tx._execute_together([insert(Item).values({"name": "x"}),
                                        insert(Item).values({"name": "y"})])
            assert sorted((await tx.execute(select(Item, ["name"]))).scalars()) == ["x", "y"]
            raise RuntimeError("the caller rolls back")
    assert await names(db) == []
    # a failure among them leaves the caller's transaction able only to roll back
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "kept?"}))
            with pytest.raises(IntegrityError):
                await tx._execute_together([insert(Item).values({"name": "z"}),
                                            insert(Item).values({"name": "z"})])
    assert await names(db) == []


async def test_a_statement_that_runs_as_several_is_refused(db: Any) -> None:
    # a batch on PostgreSQL and SQLite (COPY, executemany); chunks of VALUES on MySQL
    rows = 200 if db.dialect.name not in ("mysql", "mariadb") else 40_000
    many = insert(Item).values([{"name": f"n{i}", "qty": i} for i in range(rows)])
    with pytest.raises(ValidationError, match="cannot be sent together"):
        await db._execute_together([many])
    assert await names(db) == []
