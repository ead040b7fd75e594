# Generated from src/tempest_typed/engine/drivers/driver_async.py by tools/async_to_sync.py: do not edit.
# Change the asyncio source and run `python tools/async_to_sync.py`.
"""A driver's connections on asyncio: the calls that wait, written once.

This module is the source of driver.py (Driver, Pool), the blocking copy that
tools/async_to_sync.py writes from it: the two differ only in how they wait. What a driver
decides without waiting is its rules' (base.py's DriverRules), which both copies share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import Any

from ...errors import ConfigurationError
from .base import POOL_FIX, DriverRules, pool_exhausted

__all__ = ["Driver", "Pool", "acquire_within"]


class Driver:
    """One database library's connections behind one engine: the calls that wait."""

    #: what reads values, names errors and spells statements, without a connection
    rules: DriverRules

    def acquire(self) -> Any:
        """A connection from the pool."""
        raise NotImplementedError

    def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        if not broken and self._in_transaction(conn):
            # A transaction left open (begun by hand, execute_sql('BEGIN')): rolled back
            # here, or the next user of the connection would run inside it.
            try:
                self.rollback(conn)
            except Exception:
                broken = True  # a connection that cannot roll back is not handed out again
        self._give_back(conn, broken)

    def _in_transaction(self, conn: Any) -> bool:
        """Whether `conn` has a transaction open."""
        raise NotImplementedError

    def _give_back(self, conn: Any, broken: bool) -> None:
        """Return a connection with no transaction open to the pool (a broken one closed)."""
        raise NotImplementedError

    def close(self) -> None:
        """Close every pooled connection."""
        raise NotImplementedError

    def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the driver call `name` (run, begin, fetch, ...) on `conn`."""
        method: Callable[..., Any] = getattr(self, name)
        return method(conn, *args)

    def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement: (rows or None when it returns none, rows affected)."""
        raise NotImplementedError

    def run_together(self, conn: Any, statements: Sequence[tuple[str, Sequence[Any]]],
                           ) -> list[tuple[list[Any] | None, int]]:
        """Execute statements in order, as one transaction, sending them all before reading
        the first answer where the driver can (PostgreSQL's pipeline): each one's (rows,
        rows affected). Elsewhere, in turn: the caller holds a transaction around them."""
        return [self.run(conn, sql, params) for sql, params in statements]

    def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set: (the rows all returned, rows affected)."""
        rows: list[Any] = []
        total = 0
        for p in params:
            fetched, count = self.run(conn, sql, p)
            rows.extend(fetched or ())
            total += max(count, 0)
        return (rows if returning else None), total

    def copy_rows(self, conn: Any, sql: str, rows: Iterable[Sequence[Any]],
                        types: Sequence[str] | None) -> tuple[list[Any] | None, int]:
        """Write the rows with the bulk copy `sql` (where `rules.copies_rows()` says yes),
        in binary as these column `types` when given: (None, rows written)."""
        raise NotImplementedError

    def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        """Start a transaction with the given isolation and access mode."""
        raise NotImplementedError

    def commit(self, conn: Any) -> None:
        """Commit the open transaction."""
        self.run(conn, "COMMIT", None)

    def rollback(self, conn: Any) -> None:
        """Roll the open transaction back."""
        self.run(conn, "ROLLBACK", None)

    def end_transaction(self, conn: Any) -> None:
        """Undo what begin() set on the connection beyond the transaction itself."""

    def savepoint(self, conn: Any, name: str) -> None:
        """Set a savepoint."""
        self.run(conn, f"SAVEPOINT {name}", None)

    def release_savepoint(self, conn: Any, name: str) -> None:
        """Release a savepoint."""
        self.run(conn, f"RELEASE SAVEPOINT {name}", None)

    def rollback_to(self, conn: Any, name: str) -> None:
        """Roll back to a savepoint."""
        self.run(conn, f"ROLLBACK TO SAVEPOINT {name}", None)

    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        """Execute a select on a cursor that fetches as asked (stream()): the cursor."""
        raise NotImplementedError

    def fetch(self, conn: Any, cursor: Any, size: int) -> list[Any]:
        """The next `size` rows of an open_stream() cursor; empty at the end."""
        return list(cursor.fetchmany(size))

    def close_stream(self, conn: Any, cursor: Any) -> None:
        """Close an open_stream() cursor, leaving the connection ready for the next statement."""
        cursor.close()


def acquire_within(slots: threading.BoundedSemaphore, timeout: float) -> bool:
    """Take a slot, waiting up to `timeout` seconds; False when none came free in time."""
    return slots.acquire(timeout=timeout)


class Pool:
    """A small pool for drivers whose library has none we use (PyMySQL, asyncmy, sqlite3):
    at most `size` connections, the last one given back handed out first."""

    def __init__(self, connect: Callable[[], Any], close: Callable[[Any], Any],
                 size: int, timeout: float, what: str, fix: str = POOL_FIX) -> None:
        self._connect = connect
        self._close = close
        # list.append() and list.pop() are atomic: the blocking copy shares it between threads
        self._idle: list[Any] = []
        self._slots = threading.BoundedSemaphore(size)
        self._timeout = timeout
        self._what = what
        #: what the error of a pool with no connection free in time asks for
        self.fix = fix
        self._closed = False
        self.size = size

    def acquire(self) -> Any:
        """A connection from the pool."""
        if self._closed:
            raise ConfigurationError(f"{self._what}: the engine is closed")
        if not acquire_within(self._slots, self._timeout):
            raise pool_exhausted(self._what, self._timeout, self.size, self.fix)
        try:
            return self._idle.pop()
        except IndexError:
            pass
        try:
            return self._connect()
        except BaseException:
            self._slots.release()
            raise

    def release(self, conn: Any, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        if broken or self._closed:
            with suppress(Exception):  # closing a broken connection may fail too
                self._close(conn)
        else:
            self._idle.append(conn)
        self._slots.release()

    def close(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        while True:
            try:
                conn = self._idle.pop()
            except IndexError:
                return
            with suppress(Exception):
                self._close(conn)
