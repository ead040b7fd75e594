"""An open stream is its opener's use of the session, between its chunks too: another thread
(or asyncio task) that runs a statement on the session, opens a stream on it, or takes the
stream's rows meets the one-user-at-a-time TempestError, instead of rows split between the
two or a statement run in the middle of the other's loop."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tempest_typed import Model, TempestError, column, insert, select

from .both_engines import SyncEngine, _now


class Row(Model, table="eng_stream_owner_rows"):
    id: int = column(primary_key=True)


MODELS = (Row,)

pytestmark = pytest.mark.asyncio


async def _elsewhere(db: Any, work: Callable[[], Awaitable[Any]]) -> BaseException | None:
    """Run `work` on another thread (the blocking engine) or task: what it raised, or None."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            _now(work())
        except BaseException as exc:
            raised.append(exc)

    if isinstance(db, SyncEngine):
        thread = threading.Thread(target=run)
        thread.start()
        thread.join(30)
    else:
        try:
            await asyncio.create_task(work())  # type: ignore[arg-type]  # a coroutine
        except BaseException as exc:
            raised.append(exc)
    return raised[0] if raised else None


async def _fill(db: Any) -> None:
    await db.execute(insert(Row).values([{"id": i} for i in range(1, 11)]))


def _in_use(error: BaseException | None) -> bool:
    return isinstance(error, TempestError) and "in use by another" in str(error) and (
        "iterating a stream" in str(error))


async def test_another_user_cannot_use_a_session_while_its_stream_is_open(db: Any) -> None:
    await _fill(db)
    async with db.session() as session:
        stream = session.stream(select(Row).order_by("id"), chunk_size=2)
        mine = [(await stream.__anext__()).id]

        async def statement() -> Any:
            return await session.execute_sql("SELECT 1")

        async def another_stream() -> Any:
            return session.stream(select(Row))

        async def close() -> None:
            await session.close()

        for work in (statement, another_stream, close):
            assert _in_use(await _elsewhere(db, work))
        # the opener goes on: its own statement between chunks, and every row
        assert (await session.execute_sql("SELECT 2")).scalar() == 2
        mine += [row.id async for row in stream]
        assert mine == list(range(1, 11))
        # the stream is over: another user may have the session now
        assert await _elsewhere(db, statement) is None


async def test_a_stream_left_and_dropped_holds_nothing(db: Any) -> None:
    await _fill(db)
    async with db.session() as session:
        stream = session.stream(select(Row).order_by("id"), chunk_size=2)
        assert (await stream.__anext__()).id == 1
        del stream
        gc.collect()

        async def statement() -> Any:
            return (await session.execute_sql("SELECT 3")).scalar()

        assert await _elsewhere(db, statement) is None
