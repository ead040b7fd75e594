"""A statement interrupted under way (a cancelled task, KeyboardInterrupt) outside a
transaction leaves no half-read reply in the pool: on MySQL/MariaDB the connection went back
as it was, and the next session's statement read the rest of the old reply ("(0) Cancelled
during execution"). Inside a transaction the failed rollback already discarded it; psycopg
cancels the statement and keeps its connection in step, and sqlite3's calls return whole."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from types import FrameType

import pytest

from tempest_typed import create_async_engine, create_engine

SLEEP = {"postgresql": "SELECT pg_sleep(5)", "mysql": "SELECT SLEEP(5)"}


class Interrupted(BaseException):
    """What this test's SIGINT handler raises (not KeyboardInterrupt, which pytest takes)."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Interrupted


@pytest.mark.parametrize("server", ["postgresql", "mysql"])
def test_a_statement_interrupted_in_a_session_leaves_a_usable_pool(
        server: str, pg_url: str, mysql_url: str) -> None:
    url = pg_url if server == "postgresql" else mysql_url
    previous = signal.signal(signal.SIGINT, _interrupt)
    try:
        with create_engine(url, pool_size=1) as engine:
            timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                with pytest.raises(Interrupted), engine.session() as session:
                    session.execute_sql(SLEEP[server])
            finally:
                timer.join()
            assert engine.execute_sql("SELECT 42").scalar() == 42
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.asyncio
@pytest.mark.parametrize("server", ["postgresql", "mysql"])
async def test_a_statement_cancelled_in_a_session_leaves_a_usable_pool(
        server: str, pg_url: str, mysql_url: str) -> None:
    url = pg_url if server == "postgresql" else mysql_url
    engine = create_async_engine(url, pool_size=1)
    try:
        async def sleep() -> None:
            async with engine.session() as session:
                await session.execute_sql(SLEEP[server])

        task = asyncio.create_task(sleep())
        await asyncio.sleep(0.3)  # the statement under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await engine.execute_sql("SELECT 42")).scalar() == 42
    finally:
        await engine.dispose()
