"""A driver's connections on asyncio: the calls that wait, written once.

This module is the source of driver.py (Driver, Pool), the blocking copy that
tools/async_to_sync.py writes from it: the two differ only in how they wait. What a driver
decides without waiting is its rules' (base.py's DriverRules), which both copies share.
"""

from __future__ import annotations

import asyncio  # sync: import threading
from collections.abc import (  # sync: from collections.abc import Callable, Iterable, Sequence
    Awaitable,
    Callable,
    Iterable,
    Sequence,
)
from contextlib import suppress
from typing import Any

from ...errors import ConfigurationError
from .base import (  # sync: from .base import POOL_FIX, DriverRules, pool_exhausted
    POOL_FIX,
    DriverRules,
    Listener,
    no_listen,
    pool_exhausted,
)

__all__ = ["AsyncDriver", "AsyncPool", "acquire_within"]


class AsyncDriver:
    """One database library's connections behind one engine: the calls that wait."""

    #: what reads values, names errors and spells statements, without a connection
    rules: DriverRules

    async def acquire(self) -> Any:
        """A connection from the pool."""
        raise NotImplementedError

    async def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        if not broken and self._in_transaction(conn):
            # A transaction left open (begun by hand, execute_sql('BEGIN')): rolled back
            # here, or the next user of the connection would run inside it.
            try:
                await self.rollback(conn)
            except Exception:
                broken = True  # a connection that cannot roll back is not handed out again
        await self._give_back(conn, broken)

    def _in_transaction(self, conn: Any) -> bool:
        """Whether `conn` has a transaction open."""
        raise NotImplementedError

    async def _give_back(self, conn: Any, broken: bool) -> None:
        """Return a connection with no transaction open to the pool (a broken one closed)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Close every pooled connection."""
        raise NotImplementedError

    # async only: begin
    async def listen(self, channel: str) -> Listener:
        """A Listener on `channel` over a connection outside the pool (PostgreSQL only)."""
        raise no_listen(self.rules)

    # async only: end
    async def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the driver call `name` (run, begin, fetch, ...) on `conn`."""
        method: Callable[..., Awaitable[Any]] = getattr(self, name)
        return await method(conn, *args)

    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement: (rows or None when it returns none, rows affected)."""
        raise NotImplementedError

    async def run_together(self, conn: Any, statements: Sequence[tuple[str, Sequence[Any]]],
                           ) -> list[tuple[list[Any] | None, int]]:
        """Execute statements in order, as one transaction, sending them all before reading
        the first answer where the driver can (PostgreSQL's pipeline): each one's (rows,
        rows affected). Elsewhere, in turn: the caller holds a transaction around them."""
        return [await self.run(conn, sql, params) for sql, params in statements]

    async def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set: (the rows all returned, rows affected)."""
        rows: list[Any] = []
        total = 0
        for p in params:
            fetched, count = await self.run(conn, sql, p)
            rows.extend(fetched or ())
            total += max(count, 0)
        return (rows if returning else None), total

    async def copy_rows(self, conn: Any, sql: str, rows: Iterable[Sequence[Any]],
                        types: Sequence[str] | None) -> tuple[list[Any] | None, int]:
        """Write the rows with the bulk copy `sql` (where `rules.copies_rows()` says yes),
        in binary as these column `types` when given: (None, rows written)."""
        raise NotImplementedError

    async def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        """Start a transaction with the given isolation and access mode."""
        raise NotImplementedError

    async def commit(self, conn: Any) -> None:
        """Commit the open transaction."""
        await self.run(conn, "COMMIT", None)

    async def rollback(self, conn: Any) -> None:
        """Roll the open transaction back."""
        await self.run(conn, "ROLLBACK", None)

    async def end_transaction(self, conn: Any) -> None:
        """Undo what begin() set on the connection beyond the transaction itself."""

    async def savepoint(self, conn: Any, name: str) -> None:
        """Set a savepoint."""
        await self.run(conn, f"SAVEPOINT {name}", None)

    async def release_savepoint(self, conn: Any, name: str) -> None:
        """Release a savepoint."""
        await self.run(conn, f"RELEASE SAVEPOINT {name}", None)

    async def rollback_to(self, conn: Any, name: str) -> None:
        """Roll back to a savepoint."""
        await self.run(conn, f"ROLLBACK TO SAVEPOINT {name}", None)

    async def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        """Execute a select on a cursor that fetches as asked (stream()): the cursor."""
        raise NotImplementedError

    async def fetch(self, conn: Any, cursor: Any, size: int) -> list[Any]:
        """The next `size` rows of an open_stream() cursor; empty at the end."""
        return list(await cursor.fetchmany(size))

    async def close_stream(self, conn: Any, cursor: Any) -> None:
        """Close an open_stream() cursor, leaving the connection ready for the next statement."""
        await cursor.close()


async def acquire_within(slots: asyncio.Semaphore, timeout: float) -> bool:
    """Take a slot, waiting up to `timeout` seconds; False when none came free in time."""
    # async only: begin
    try:
        await asyncio.wait_for(slots.acquire(), timeout)
    except TimeoutError:
        return False
    return True
    # async only: end
    # sync: return slots.acquire(timeout=timeout)


class AsyncPool:
    """A small pool for drivers whose library has none we use (PyMySQL, asyncmy, sqlite3):
    at most `size` connections, the last one given back handed out first."""

    def __init__(self, connect: Callable[[], Awaitable[Any]], close: Callable[[Any], Any],
                 size: int, timeout: float, what: str, fix: str = POOL_FIX) -> None:
        self._connect = connect
        self._close = close
        # list.append() and list.pop() are atomic: the blocking copy shares it between threads
        self._idle: list[Any] = []
        self._slots = asyncio.Semaphore(size)
        self._timeout = timeout
        self._what = what
        #: what the error of a pool with no connection free in time asks for
        self.fix = fix
        self._closed = False
        self.size = size

    async def acquire(self) -> Any:
        """A connection from the pool."""
        if self._closed:
            raise ConfigurationError(f"{self._what}: the engine is closed")
        if not await acquire_within(self._slots, self._timeout):
            raise pool_exhausted(self._what, self._timeout, self.size, self.fix)
        try:
            return self._idle.pop()
        except IndexError:
            pass
        try:
            return await self._connect()
        except BaseException:
            self._slots.release()
            raise

    async def release(self, conn: Any, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        if broken or self._closed:
            with suppress(Exception):  # closing a broken connection may fail too
                self._close(conn)
        else:
            self._idle.append(conn)
        self._slots.release()

    async def close(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        while True:
            try:
                conn = self._idle.pop()
            except IndexError:
                return
            with suppress(Exception):
                self._close(conn)
