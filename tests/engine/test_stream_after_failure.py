"""A stream opened inside a transaction gives no row after a failure rolled that transaction
back: on MySQL and MariaDB its rows were read ahead when another statement ran (an unbuffered
cursor cannot stay open beside it), and its loop went on yielding them from the rolled-back
transaction; a later stream reads the database afresh."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    IntegrityError,
    Model,
    TempestError,
    TransactionAborted,
    column,
    insert,
    select,
    update,
)


class Line(Model, table="eng_stream_failure_lines"):
    id: int = column(primary_key=True)
    name: str = column(max_length=20, unique=True)
    n: int = 0


MODELS = (Line,)

pytestmark = pytest.mark.asyncio


async def _fill(db: Any) -> None:
    await db.execute(insert(Line).values([{"id": i, "name": f"n{i}"} for i in range(1, 8)]))


def _all(session: Any) -> Any:
    """A stream of every line, two rows a chunk (the rows of a chunk fetched are the loop's)."""
    return session.stream(select(Line).order_by("id"), chunk_size=2)


async def test_a_failed_block_takes_back_the_rows_read_ahead(db: Any) -> None:
    await _fill(db)
    async with db.session() as session:
        with pytest.raises(IntegrityError):
            async with session.transaction() as tx:
                await tx.execute(update(Line).set({"n": 5}).where({"id": 7}))
                stream = _all(tx)
                assert [(await stream.__anext__()).id for _ in range(2)] == [1, 2]  # 1 chunk
                await tx.execute(insert(Line).values({"id": 99, "name": "n1"}))  # fails
        with pytest.raises(TempestError, match="its transaction failed"):
            await stream.__anext__()
        rows = [(r.id, r.n) async for r in _all(session)]
        assert rows == [(i, 0) for i in range(1, 8)]  # the update was rolled back


async def test_an_aborted_transaction_gives_no_row_read_ahead(db: Any) -> None:
    await _fill(db)
    async with db.session() as session:
        with pytest.raises(TransactionAborted):
            async with session.transaction() as tx:
                stream = _all(tx)
                assert [(await stream.__anext__()).id for _ in range(2)] == [1, 2]  # 1 chunk
                with pytest.raises(IntegrityError):
                    await tx.execute(insert(Line).values({"id": 99, "name": "n1"}))
                with pytest.raises(TransactionAborted):
                    await stream.__anext__()
        assert [r.id async for r in _all(session)] == list(range(1, 8))


async def test_a_failed_savepoint_leaves_the_outer_stream_alone(db: Any) -> None:
    await _fill(db)
    async with db.session() as session, session.transaction() as tx:
        stream = _all(tx)
        ids = [(await stream.__anext__()).id for _ in range(2)]
        with pytest.raises(IntegrityError):
            async with tx.transaction():
                await tx.execute(insert(Line).values({"id": 99, "name": "n1"}))
        ids += [r.id async for r in stream]
        assert ids == list(range(1, 8))


async def test_rows_read_ahead_outside_a_transaction_stay(db: Any) -> None:
    await _fill(db)
    async with db.session() as session:
        stream = _all(session)
        ids = [(await stream.__anext__()).id for _ in range(2)]
        with pytest.raises(IntegrityError):  # a failure of its own: nothing to roll back
            await session.execute(insert(Line).values({"id": 99, "name": "n1"}))
        ids += [r.id async for r in stream]
        assert ids == list(range(1, 8))
