"""on_conflict_do_nothing() skips a row that conflicts, and only that: a row that fails for
another reason (a foreign key that matches nothing) is an IntegrityError on every database,
and a statement of several rows leaves none of them. MySQL/MariaDB write it INSERT IGNORE,
which skipped such a row with a warning: rows_affected() 0 for the lone row, and of two rows
the good one written and the other gone, where PostgreSQL and SQLite refused the statement."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import IntegrityError, TransactionAborted, insert, select

from .conftest import Child, Item, Parent

MODELS = (Item, Parent, Child)

pytestmark = pytest.mark.asyncio


async def _children(db: Any) -> list[int]:
    return sorted((await db.execute(select(Child, ["id"]))).scalars())


async def test_a_row_that_fails_other_than_by_a_conflict_is_refused(db: Any) -> None:
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    lone = insert(Child).values({"id": 1, "parent_id": 99}).on_conflict_do_nothing()
    with pytest.raises(IntegrityError) as info:
        await db.execute(lone)
    assert info.value.kind == "foreign_key"
    two = insert(Child).values([{"id": 2, "parent_id": 1},
                                {"id": 3, "parent_id": 99}]).on_conflict_do_nothing()
    with pytest.raises(IntegrityError):
        await db.execute(two)
    with pytest.raises(IntegrityError):
        await db.execute(two.returning("id"))
    assert await _children(db) == []


async def test_in_a_transaction_the_failure_aborts_it(db: Any) -> None:
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    two = insert(Child).values([{"id": 2, "parent_id": 1},
                                {"id": 3, "parent_id": 99}]).on_conflict_do_nothing()
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            with pytest.raises(IntegrityError):
                await tx.execute(two)
    async with db.transaction() as tx:
        await tx.execute(insert(Child).values({"id": 4, "parent_id": 1}))
        with pytest.raises(IntegrityError):
            async with tx.transaction():
                await tx.execute(two)
    assert await _children(db) == [4]


async def test_conflicts_alone_are_still_skipped(db: Any) -> None:
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    await db.execute(insert(Child).values([{"id": i, "parent_id": 1} for i in range(1, 71)]))
    again = [{"id": i, "parent_id": 1} for i in range(1, 71)] + [{"id": 71, "parent_id": 1}]
    result = await db.execute(insert(Child).values(again).on_conflict_do_nothing())
    assert result.rows_affected() == 1
    # 70 skipped as duplicates, then a row refused: more warnings than SHOW WARNINGS lists
    # (64 by default) on MySQL, the rest told by the statement's "Duplicates: 70" line
    late = [*again, {"id": 72, "parent_id": 99}]
    with pytest.raises(IntegrityError):
        await db.execute(insert(Child).values(late).on_conflict_do_nothing())
    assert len(await _children(db)) == 71


async def test_a_streamed_do_nothing_insert_is_refused_whole_too(db: Any) -> None:
    if "insert" not in db.dialect.supports_returning:
        pytest.skip("MySQL 8 has no INSERT ... RETURNING")
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    two = insert(Child).values([{"id": 2, "parent_id": 1}, {"id": 3, "parent_id": 99}])
    with pytest.raises(IntegrityError):
        async with db.session() as session:
            async for _ in session.stream(two.on_conflict_do_nothing().returning("id")):
                pass
    assert await _children(db) == []
