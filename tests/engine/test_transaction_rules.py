"""A failed statement leaves its transaction able only to roll back, on every database.

PostgreSQL's rule made portable (API.md, "Failing loudly"): after a statement fails inside
transaction(), later statements and the block's normal end raise TransactionAborted (the
first failure as its cause) and nothing commits; in a nested transaction() (a savepoint) the
failure rolls back to the savepoint only. Each test runs on both engines and the three
databases (the `db` fixture).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from tempest_typed import (
    IntegrityError,
    QueryExecutionError,
    TempestError,
    TransactionAborted,
    TransactionConflict,
    ValidationError,
    create_async_engine,
    create_engine,
    insert,
    select,
    update,
)

from .conftest import Item

pytestmark = pytest.mark.asyncio


async def names(db: Any) -> list[str]:
    return sorted((await db.execute(select(Item, ["name"]))).scalars())


async def test_a_caught_failure_does_not_commit_what_the_transaction_wrote(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(TransactionAborted) as aborted:
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "first"}))
            with pytest.raises(IntegrityError) as failed:
                await tx.execute(insert(Item).values({"name": "taken"}))
            # the code goes on as if nothing happened: nothing may commit
    assert aborted.value.__cause__ is failed.value
    assert "roll back" in str(aborted.value) and "savepoint" in str(aborted.value)
    assert await names(db) == ["taken"]


async def test_a_statement_after_the_failure_is_refused_without_running(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            with pytest.raises(IntegrityError) as failed:
                await tx.execute(insert(Item).values({"name": "taken"}))
            for later in (insert(Item).values({"name": "later"}), select(Item)):
                with pytest.raises(TransactionAborted) as refused:
                    await tx.execute(later)
                assert refused.value.__cause__ is failed.value
            with pytest.raises(TransactionAborted):
                await tx.execute_sql("SELECT 1")
            with pytest.raises(TransactionAborted):
                async for _ in tx.stream(select(Item)):
                    pass
            with pytest.raises(TransactionAborted):
                async with tx.transaction():
                    pass
    assert await names(db) == ["taken"]


async def test_raw_sql_that_fails_aborts_the_transaction_too(db: Any) -> None:
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "first"}))
            with pytest.raises(QueryExecutionError):
                await tx.execute_sql("SELECT * FROM eng_no_such_table")
    assert await names(db) == []


async def test_the_session_is_usable_after_an_aborted_transaction(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    async with db.session() as s:
        with pytest.raises(TransactionAborted):
            async with s.transaction():
                with pytest.raises(IntegrityError):
                    await s.execute(insert(Item).values({"name": "taken"}))
        assert not s.in_transaction
        await s.execute(insert(Item).values({"name": "after"}))  # autocommits again
        async with s.transaction():
            await s.execute(insert(Item).values({"name": "in a new transaction"}))
    assert await names(db) == ["after", "in a new transaction", "taken"]


async def test_an_error_that_leaves_the_block_is_raised_as_it_is(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(IntegrityError):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "first"}))
            await tx.execute(insert(Item).values({"name": "taken"}))
    assert await names(db) == ["taken"]


async def test_a_builder_mistake_runs_nothing_and_aborts_nothing(db: Any) -> None:
    async with db.transaction() as tx:
        await tx.execute(insert(Item).values({"name": "kept"}))
        with pytest.raises(ValidationError):
            await tx.execute(update(Item).set({"qty": 1}))  # no where(): refused, not run
        await tx.execute(insert(Item).values({"name": "kept too"}))
    assert await names(db) == ["kept", "kept too"]


# -- savepoints -----------------------------------------------------------------------------


async def test_insert_or_update_on_conflict_with_a_savepoint(db: Any) -> None:
    """The idiom of docs/reference.md: try the insert in a savepoint, update if it fails."""
    await db.execute(insert(Item).values({"name": "a", "qty": 1}))
    async with db.transaction() as tx:
        await tx.execute(insert(Item).values({"name": "before"}))
        try:
            async with tx.transaction():
                await tx.execute(insert(Item).values({"name": "a", "qty": 1}))
        except IntegrityError:
            await tx.execute(update(Item).set({"qty": 2}).where({"name": "a"}))
        await tx.execute(insert(Item).values({"name": "after"}))
    assert await names(db) == ["a", "after", "before"]
    assert (await db.execute(select(Item, ["qty"]).where({"name": "a"}))).scalar() == 2


async def test_a_failure_caught_inside_a_savepoint_aborts_the_savepoint_only(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    async with db.transaction() as tx:
        await tx.execute(insert(Item).values({"name": "outer"}))
        with pytest.raises(TransactionAborted) as aborted:
            async with tx.transaction():
                await tx.execute(insert(Item).values({"name": "inner"}))
                with pytest.raises(IntegrityError) as failed:
                    await tx.execute(insert(Item).values({"name": "taken"}))
                with pytest.raises(TransactionAborted):
                    await tx.execute(insert(Item).values({"name": "refused"}))
        assert aborted.value.__cause__ is failed.value
        # rolled back to the savepoint: the outer transaction goes on
        await tx.execute(insert(Item).values({"name": "outer again"}))
    assert await names(db) == ["outer", "outer again", "taken"]


async def test_a_failure_in_the_outer_level_is_not_cleared_by_a_savepoint(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            with pytest.raises(IntegrityError):
                await tx.execute(insert(Item).values({"name": "taken"}))
            with pytest.raises(TransactionAborted):
                async with tx.transaction():
                    await tx.execute(insert(Item).values({"name": "never"}))
    assert await names(db) == ["taken"]


async def test_a_failed_savepoint_inside_a_failed_savepoint(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "taken"}))
    async with db.transaction() as tx, tx.transaction():
        await tx.execute(insert(Item).values({"name": "level 2"}))
        with pytest.raises(IntegrityError):
            async with tx.transaction():
                await tx.execute(insert(Item).values({"name": "level 3"}))
                await tx.execute(insert(Item).values({"name": "taken"}))
        await tx.execute(insert(Item).values({"name": "level 2 again"}))
    assert await names(db) == ["level 2", "level 2 again", "taken"]


# -- a batch is all or nothing ----------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 60, 200])
async def test_a_failed_multi_row_insert_in_a_transaction_leaves_no_row(db: Any, n: int) -> None:
    rows = [{"name": f"row {i}"} for i in range(n - 1)] + [{"name": "row 0"}]  # the last fails
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            with pytest.raises(IntegrityError):
                await tx.execute(insert(Item).values(rows))
    assert await names(db) == []
    # in a savepoint: the batch goes, the rest of the transaction stays
    async with db.transaction() as tx:
        await tx.execute(insert(Item).values({"name": "kept"}))
        with pytest.raises(IntegrityError):
            async with tx.transaction():
                await tx.execute(insert(Item).values(rows))
    assert await names(db) == ["kept"]


async def test_run_transaction_runs_again_after_a_conflict_the_work_caught(db: Any) -> None:
    calls: list[int] = []

    async def work(tx: Any) -> str:
        calls.append(1)
        await tx.execute(insert(Item).values({"name": f"try {len(calls)}"}))
        if len(calls) == 1:
            with contextlib.suppress(TransactionConflict):  # the transaction is aborted all the same
                raise_conflict(tx)
        return "done"

    def raise_conflict(tx: Any) -> None:
        error = TransactionConflict("deadlock detected", "UPDATE ...", ())
        session = getattr(tx, "_s", tx)  # the blocking adapter's session, or the AsyncSession
        session._aborted, session._aborted_at = error, session._depth  # as a deadlock victim's
        raise error

    assert await db.run_transaction(work) == "done"
    assert len(calls) == 2
    assert await names(db) == ["try 2"]


async def test_transaction_aborted_is_a_tempest_error() -> None:
    assert issubclass(TransactionAborted, TempestError)
    assert not issubclass(TransactionAborted, QueryExecutionError)


# -- a statement inside a stream's loop -----------------------------------------------------


async def _fill(db: Any, n: int) -> None:
    await db.execute(insert(Item).values([{"name": f"item {i}", "qty": i} for i in range(n)]))


async def test_a_statement_inside_a_stream_loop_leaves_every_row_to_the_loop(db: Any) -> None:
    await _fill(db, 6)
    seen = []
    async with db.session() as s:
        async for item in s.stream(select(Item).order_by("id"), chunk_size=2):
            seen.append(item.name)
            await s.execute(update(Item).set({"qty": 100}).where({"id": item.id}))
            # each execute commits on its own, inside the loop too: another connection sees it
            qty = (await db.execute(select(Item, ["qty"]).where({"id": item.id}))).scalar()
            assert qty == 100
    assert seen == [f"item {i}" for i in range(6)]


async def test_a_statement_inside_a_stream_loop_in_a_transaction(db: Any) -> None:
    await _fill(db, 6)
    seen = []
    async with db.transaction() as tx:
        async for item in tx.stream(select(Item).order_by("id"), chunk_size=2):
            seen.append(item.name)
            await tx.execute(update(Item).set({"qty": 100}).where({"id": item.id}))
        await tx.execute(insert(Item).values({"name": "after the loop"}))
    assert len(seen) == 6
    assert sorted((await db.execute(select(Item, ["qty"]))).scalars()) == [0] + [100] * 6


async def test_a_stream_inside_a_stream_loop(db: Any) -> None:
    await _fill(db, 5)
    pairs = []
    async with db.session() as s:
        async for a in s.stream(select(Item).order_by("id"), chunk_size=2):
            inner = [b.qty async for b in s.stream(select(Item).order_by("id"), chunk_size=2)]
            pairs.append((a.qty, inner))
    assert pairs == [(i, [0, 1, 2, 3, 4]) for i in range(5)]


async def test_a_transaction_opened_inside_a_stream_loop(db: Any) -> None:
    await _fill(db, 4)
    seen = 0
    async with db.session() as s:
        async for item in s.stream(select(Item).order_by("id"), chunk_size=1):
            seen += 1
            async with s.transaction():  # a transaction of its own, not a savepoint
                await s.execute(update(Item).set({"qty": -1}).where({"id": item.id}))
            assert (await db.execute(select(Item, ["qty"]).where({"id": item.id}))).scalar() == -1
    assert seen == 4


async def test_a_stream_whose_session_closed_raises_in_its_loop(db: Any) -> None:
    await _fill(db, 6)
    async with db.session() as s:
        rows = s.stream(select(Item).order_by("id"), chunk_size=2)
        seen = []
        with pytest.raises(TempestError, match="session closed"):
            async for item in rows:
                seen.append(item.qty)
                if len(seen) == 1:
                    await s.close()
    assert seen == [0, 1]  # the chunk already read, then the error: never a silent end


async def test_an_engine_transaction_runs_its_block_once() -> None:
    # a second `with` of the same engine.transaction() raised contextlib's AttributeError
    with create_engine("sqlite://:memory:") as engine:
        once = engine.transaction()
        with once as tx:
            tx.execute_sql("SELECT 1")
        with pytest.raises(TempestError, match=r"used once: call engine.transaction\(\) again"), \
                once:
            pass
        engine.execute_sql("SELECT 1")


async def test_an_async_engine_transaction_runs_its_block_once() -> None:
    engine = create_async_engine("sqlite://:memory:")
    try:
        once = engine.transaction()
        async with once as tx:
            await tx.execute_sql("SELECT 1")
        with pytest.raises(TempestError, match=r"used once: call engine.transaction\(\) again"):
            async with once:
                pass
        await engine.execute_sql("SELECT 1")
    finally:
        await engine.dispose()


async def test_a_session_transaction_runs_its_block_once() -> None:
    # a second `with` of the same session.transaction() (or a savepoint's) raised
    # contextlib's AttributeError: 'args'
    with create_engine("sqlite://:memory:") as engine, engine.session() as session:
        once = session.transaction()
        with once as tx:
            inner = tx.transaction()
            with inner:
                tx.execute_sql("SELECT 1")
            with pytest.raises(TempestError, match=r"used once: call session.transaction\(\)"), \
                    inner:
                pass
        with pytest.raises(TempestError, match=r"used once: call session.transaction\(\)"), \
                once:
            pass
        with session.transaction() as tx:  # a new one works
            tx.execute_sql("SELECT 1")


async def test_an_async_session_transaction_runs_its_block_once() -> None:
    engine = create_async_engine("sqlite://:memory:")
    try:
        async with engine.session() as session:
            once = session.transaction()
            async with once as tx:
                await tx.execute_sql("SELECT 1")
            with pytest.raises(TempestError, match=r"used once: call session.transaction\(\)"):
                async with once:
                    pass
            async with session.transaction() as tx:
                await tx.execute_sql("SELECT 1")
    finally:
        await engine.dispose()
