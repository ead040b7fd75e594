"""The pool of the drivers whose library has none (PyMySQL, asyncmy, sqlite3): written once for
asyncio (AsyncPool), the blocking Pool generated from it; both hand out, take back and close
connections alike."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from tempest_typed import ConfigurationError
from tempest_typed.engine.drivers.driver import Pool
from tempest_typed.engine.drivers.driver_async import AsyncPool


class Connections:
    """Connections numbered as made, and the ones closed."""

    def __init__(self, refuse: bool = False) -> None:
        self._numbers = itertools.count(1)
        self.closed: list[int] = []
        self.refuse = refuse

    def connect(self) -> int:
        if self.refuse:
            raise OSError("refused")
        return next(self._numbers)

    async def aconnect(self) -> int:
        return self.connect()

    def close(self, conn: int) -> None:
        self.closed.append(conn)


class Both:
    """One pool, blocking or asyncio, driven through awaitables alike."""

    def __init__(self, kind: str, made: Connections, size: int, timeout: float) -> None:
        self.kind = kind
        if kind == "blocking":
            self._pool: Any = Pool(made.connect, made.close, size, timeout, "test://pool")
        else:
            self._pool = AsyncPool(made.aconnect, made.close, size, timeout, "test://pool")

    async def _call(self, name: str, *args: Any) -> Any:
        result = getattr(self._pool, name)(*args)
        return await result if self.kind == "asyncio" else result

    async def acquire(self) -> Any:
        return await self._call("acquire")

    async def release(self, conn: Any, broken: bool = False) -> None:
        await self._call("release", conn, broken)

    async def close(self) -> None:
        await self._call("close")


@pytest.fixture(params=["blocking", "asyncio"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_the_connection_given_back_last_is_handed_out_first(kind: str) -> None:
    made = Connections()

    async def scenario() -> list[int]:
        pool = Both(kind, made, 3, 1.0)
        one, two = await pool.acquire(), await pool.acquire()
        await pool.release(one)
        await pool.release(two)
        return [await pool.acquire(), await pool.acquire(), await pool.acquire()]

    assert run(scenario()) == [2, 1, 3]
    assert made.closed == []


def test_a_broken_connection_is_closed_not_kept(kind: str) -> None:
    made = Connections()

    async def scenario() -> int:
        pool = Both(kind, made, 1, 1.0)
        await pool.release(await pool.acquire(), broken=True)
        return int(await pool.acquire())

    assert run(scenario()) == 2
    assert made.closed == [1]


def test_a_full_pool_names_itself_and_the_way_out(kind: str) -> None:
    async def scenario() -> None:
        pool = Both(kind, Connections(), 1, 0.01)
        await pool.acquire()
        await pool.acquire()  # waits out the timeout: the one connection is in use

    with pytest.raises(ConfigurationError, match=r"test://pool: no connection free .*raise pool_size"):
        run(scenario())


def test_a_refused_connection_gives_its_slot_back(kind: str) -> None:
    made = Connections(refuse=True)

    async def scenario() -> int:
        pool = Both(kind, made, 1, 1.0)
        with pytest.raises(OSError):
            await pool.acquire()
        made.refuse = False
        return int(await pool.acquire())  # the one slot is free again

    assert run(scenario()) == 1


def test_closing_closes_the_idle_connections_and_refuses_more(kind: str) -> None:
    made = Connections()

    async def scenario() -> None:
        pool = Both(kind, made, 3, 1.0)
        one, two = await pool.acquire(), await pool.acquire()
        await pool.release(one)
        await pool.close()
        assert made.closed == [1]
        await pool.release(two)  # in use while closing: closed when given back
        assert made.closed == [1, 2]
        with pytest.raises(ConfigurationError, match="the engine is closed"):
            await pool.acquire()

    run(scenario())
