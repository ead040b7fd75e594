"""A PostgreSQL server that says no fails the statement at once, on both engines, with its
reason; a pool whose every connection is in use still waits pool_timeout for one.

connect_timeout is set far above the test's own timeout: a wait for it fails the test.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from urllib.parse import urlsplit, urlunsplit

import pytest

from tempest_typed import (
    ConfigurationError,
    QueryExecutionError,
    create_async_engine,
    create_engine,
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the socket is


def _no_such_database(pg_url: str) -> str:
    return urlunsplit(urlsplit(pg_url)._replace(path="/tempest_no_such_database", query=""))


def _check(error: QueryExecutionError, reason: str) -> None:
    message = str(error)
    assert message.startswith("cannot connect to PostgreSQL at 127.0.0.1:")
    assert reason in message
    assert "connect_timeout" not in message  # it did not wait for it
    assert error.__cause__ is not None


@pytest.mark.timeout(30)
def test_a_refused_connection_fails_at_once() -> None:
    port = _closed_port()
    with create_engine(f"postgresql://postgres@127.0.0.1:{port}/none",
                       connect_timeout=60, pool_timeout=120) as engine:
        for _ in range(2):  # the first statement, and one after the pool has tried again
            with pytest.raises(QueryExecutionError) as caught:
                engine.execute_sql("SELECT 1")
            _check(caught.value, "Connection refused")


@pytest.mark.timeout(30)
def test_a_refused_connection_fails_at_once_async() -> None:
    port = _closed_port()

    async def run() -> None:
        engine = create_async_engine(f"postgresql://postgres@127.0.0.1:{port}/none",
                                     connect_timeout=60, pool_timeout=120)
        try:
            for _ in range(2):
                with pytest.raises(QueryExecutionError) as caught:
                    await engine.execute_sql("SELECT 1")
                _check(caught.value, "Connection refused")
        finally:
            await engine.dispose()

    asyncio.run(run())


@pytest.mark.timeout(30)
def test_a_server_refusing_the_database_fails_at_once(pg_url: str) -> None:
    url = _no_such_database(pg_url)
    with create_engine(url, connect_timeout=60, pool_timeout=120) as engine, \
            pytest.raises(QueryExecutionError) as caught:
        engine.execute_sql("SELECT 1")
    _check(caught.value, 'database "tempest_no_such_database" does not exist')

    async def run() -> None:
        engine = create_async_engine(url, connect_timeout=60, pool_timeout=120)
        try:
            with pytest.raises(QueryExecutionError) as caught:
                await engine.execute_sql("SELECT 1")
            _check(caught.value, 'database "tempest_no_such_database" does not exist')
        finally:
            await engine.dispose()

    asyncio.run(run())


def test_a_pool_in_use_waits_for_a_connection_to_come_back(pg_url: str) -> None:
    with create_engine(pg_url, pool_size=1, pool_timeout=30) as engine:
        held = engine.session()
        held.execute_sql("SELECT 1")
        got: list[object] = []
        waiter = threading.Thread(
            target=lambda: got.append(engine.execute_sql("SELECT 2").scalar()))
        waiter.start()
        waiter.join(0.5)  # it waits: neither refused nor given a connection yet
        assert waiter.is_alive() and got == []
        held.close()
        waiter.join(30)
        assert got == [2]


def test_a_pool_in_use_fails_after_pool_timeout_naming_the_pool(pg_url: str) -> None:
    with create_engine(pg_url, pool_size=1, pool_timeout=1, connect_timeout=60) as engine, \
            engine.session() as held:
        held.execute_sql("SELECT 1")
        with pytest.raises(ConfigurationError, match=r"no connection free after 1s \(1 in use\)"):
            engine.execute_sql("SELECT 2")

    async def run() -> None:
        engine = create_async_engine(pg_url, pool_size=1, pool_timeout=1, connect_timeout=60)
        try:
            async with engine.session() as held:
                await held.execute_sql("SELECT 1")
                with pytest.raises(ConfigurationError, match=r"no connection free after 1s"):
                    await engine.execute_sql("SELECT 2")
        finally:
            await engine.dispose()

    asyncio.run(run())
