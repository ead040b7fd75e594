"""A session of a disposed (closed) engine: a statement that needs a connection is the closed
engine's ConfigurationError, on every database and both engines (the asyncio SQLite engine
raised a bare RuntimeError from its stopped worker threads; the asyncio PostgreSQL engine
disposed before its first statement opened its pool again); a session that holds its
connection finishes its work, and closing either is quiet."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import ConfigurationError, create_async_engine, create_engine

from .both_engines import SyncEngine

pytestmark = pytest.mark.asyncio


def _engines(url: str) -> list[Any]:
    return [SyncEngine(create_engine(url)), create_async_engine(url)]


async def test_a_session_without_a_connection_raises_configuration_error(url: str) -> None:
    for engine in _engines(url):
        async with engine.session() as session:
            await engine.dispose()
            with pytest.raises(ConfigurationError, match=r"the engine is closed.*make a new one"):
                await session.execute_sql("SELECT 1")
        # closing it was quiet; so is the engine's second close
        await engine.dispose()


async def test_an_engine_disposed_unused_stays_closed(url: str) -> None:
    for engine in _engines(url):
        await engine.dispose()
        with pytest.raises(ConfigurationError, match="the engine is closed"):
            await engine.execute_sql("SELECT 1")


async def test_a_session_holding_its_connection_finishes_its_work(url: str) -> None:
    for engine in _engines(url):
        async with engine.session() as session:
            assert (await session.execute_sql("SELECT 1")).scalar() == 1
            await engine.dispose()
            assert (await session.execute_sql("SELECT 2")).scalar() == 2
            async with session.transaction() as tx:
                assert (await tx.execute_sql("SELECT 3")).scalar() == 3
        with pytest.raises(ConfigurationError, match="the engine is closed"):
            await engine.execute_sql("SELECT 1")
