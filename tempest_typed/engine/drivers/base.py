"""The driver interface: the only code that talks to a database library.

A driver opens and pools connections, runs SQL with parameters, begins and ends
transactions and savepoints, adapts values by column kind, and translates the library's
exceptions into tempest_typed's, keeping the original as `__cause__`.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from ...dialects import Dialect
from ...errors import ConfigurationError, DialectError, QueryExecutionError, ValidationError
from ...values import untyped_value
from ..types import Adapter, Adapters

__all__ = ["MISSING_COLUMN_HINT", "MISSING_TABLE_HINT", "AsyncDriver", "AsyncPool", "Driver", "SimplePool",
           "ThreadedDriver", "hinted"]

#: how adapt_any() names the value in its messages when the caller says nothing closer
UNTYPED = "a value bound without a column type"

ISOLATION_LEVELS = {
    "read uncommitted": "READ UNCOMMITTED",
    "read committed": "READ COMMITTED",
    "repeatable read": "REPEATABLE READ",
    "serializable": "SERIALIZABLE",
}


def isolation_sql(level: str) -> str:
    """The SQL spelling of an isolation level name, or ConfigurationError."""
    key = level.lower().replace("_", " ").replace("-", " ")
    found = ISOLATION_LEVELS.get(key)
    if found is None:
        raise ConfigurationError(
            f"unknown isolation level {level!r}; use one of {', '.join(ISOLATION_LEVELS)}"
        )
    return found


class Driver:
    """One database library behind one engine."""

    dialect: Dialect
    #: adapters from a Python value to the driver's, by column kind
    bind: ClassVar[Adapters] = {}
    #: adapters from the driver's value to the annotated Python type, by column kind
    result: ClassVar[Adapters] = {}

    def adapt_any(self, value: Any, where: str = UNTYPED) -> Any:
        """A value bound where no column type is known (sql.expr arguments, sql.now(plus=),
        execute_sql parameters), as this driver stores it; ValidationError for a value that
        not every driver would store as it is (never bound as its str())."""
        return self.adapt_untyped(untyped_value(value, where, json=True))

    def adapt_untyped(self, value: Any) -> Any:
        """A value untyped_value() took, as this driver binds it."""
        return value

    def adapt_param(self, value: Any, where: str) -> Any:
        """An execute_sql() parameter as this driver binds it: a value as adapt_any() takes
        it, a dict as JSON, and a list or tuple of such values as the driver's own sequence
        parameter (PostgreSQL's array, MySQL's parenthesized list for IN %s)."""
        if isinstance(value, list | tuple):
            items = [self.adapt_untyped(untyped_value(v, f"{where}, item {i + 1}"))
                     for i, v in enumerate(value)]
            return self.sequence_param(items, where)
        return self.adapt_any(value, where)

    def sequence_param(self, items: list[Any], where: str) -> Any:
        """A list of bound values as one parameter, where the database takes one."""
        raise ValidationError(
            f"{where} is a list, and {self.dialect.display_name} binds no list as one "
            "parameter: write one placeholder per item"
        )

    def bind_adapter(self, kind: str | None) -> Adapter | None:
        """The adapter for a parameter of a column kind; None when the value passes as is."""
        if kind is None:
            return self.adapt_any
        return self.bind.get(kind)

    @property
    def rules(self) -> Driver:
        """What reads values, names errors and spells statements: this driver itself."""
        return self

    def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the driver call `name` (run, begin, fetch, ...) on `conn`."""
        return getattr(self, name)(conn, *args)

    def listen(self, channel: str) -> Listener:
        """LISTEN on `channel` (PostgreSQL, the asyncio engine only)."""
        raise DialectError("LISTEN/NOTIFY is the asyncio engine's: AsyncEngine.listen()")

    def connect_dialect(self) -> Dialect:
        """The dialect, once known (MySQL and MariaDB are told apart on connecting)."""
        return self.dialect

    def acquire(self) -> Any:
        """A connection from the pool."""
        raise NotImplementedError

    def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        raise NotImplementedError

    def close(self) -> None:
        """Close every pooled connection."""
        raise NotImplementedError

    def run(self, conn: Any, sql: str, params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement: (rows or None when it returns none, rows affected)."""
        raise NotImplementedError

    def batches_rows(self, n_rows: int, returning: bool) -> bool:
        """True when run_many() of a one-row insert beats one multi-row VALUES statement."""
        return False

    def run_many(self, conn: Any, sql: str, params: list[Sequence[Any]],
                 returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set: (the rows all returned, rows affected)."""
        rows: list[Any] = []
        total = 0
        for p in params:
            fetched, count = self.run(conn, sql, p)
            rows.extend(fetched or ())
            total += max(count, 0)
        return (rows if returning else None), total

    def begin(self, conn: Any, isolation: str | None, read_only: bool, write: bool) -> None:
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

    #: True when a cursor left open on the server lives only inside a transaction
    #: (PostgreSQL's named cursors): stream() outside one opens one for the stream's length
    stream_needs_transaction: ClassVar[bool] = False
    #: True when another statement can run on the connection while a stream's cursor is
    #: open there, inside a transaction (not MySQL's unbuffered reads)
    stream_coexists: ClassVar[bool] = True

    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None, size: int) -> Any:
        """Execute a select on a cursor that fetches as asked (stream()): the cursor."""
        cur = conn.execute(sql, params or ())
        cur.arraysize = size
        return cur

    def fetch(self, conn: Any, cursor: Any, size: int) -> list[Any]:
        """The next `size` rows of an open_stream() cursor; empty at the end."""
        return list(cursor.fetchmany(size))

    def close_stream(self, conn: Any, cursor: Any) -> None:
        """Close an open_stream() cursor, leaving the connection ready for the next statement."""
        cursor.close()

    def translate(self, exc: BaseException, sql: str, params: Sequence[Any]) -> QueryExecutionError:
        """The tempest_typed error for a driver exception."""
        return QueryExecutionError(str(exc).strip() or type(exc).__name__, sql, params)

    def is_disconnect(self, exc: BaseException) -> bool:
        """True when the connection is unusable after this exception."""
        return False

    def ddl_already_done(self, exc: BaseException) -> bool:
        """True when a CREATE failed only because what it creates already exists."""
        return False

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        """The exception classes this driver raises for database errors."""
        raise NotImplementedError


#: what the message of a statement on a table the database does not have adds
MISSING_TABLE_HINT = (
    "hint: the database has no such table; engine.create_all(Model) creates it (or the URL "
    "names another database or schema than the one that has it)"
)
#: what the message of a statement naming a column its table does not have adds
MISSING_COLUMN_HINT = (
    "hint: the table in the database has no such column; engine.check_schema(Model) lists "
    "how it differs from its model (create_all() does not alter an existing table)"
)


def hinted(message: str, hint: str | None) -> str:
    """The driver's message, with the hint on a line of its own when there is one."""
    return message if hint is None else f"{message}\n  {hint}"


class SimplePool:
    """A small thread-safe pool for drivers whose library has none (sqlite3, PyMySQL)."""

    def __init__(self, connect: Callable[[], Any], close: Callable[[Any], None], size: int,
                 timeout: float, what: str) -> None:
        self._connect = connect
        self._close = close
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._timeout = timeout
        self._what = what
        self._closed = False
        self.size = size

    def acquire(self) -> Any:
        """A connection from the pool."""
        if self._closed:
            raise ConfigurationError(f"{self._what}: the engine is closed")
        if not self._slots.acquire(timeout=self._timeout):
            raise pool_exhausted(self._what, self._timeout, self.size)
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            try:
                return self._connect()
            except BaseException:
                self._slots.release()
                raise

    def release(self, conn: Any, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        _give_back(conn, broken or self._closed, self._close, self._idle.put)
        self._slots.release()

    def close(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
            with contextlib.suppress(Exception):
                self._close(conn)


def _give_back(conn: Any, discard: bool, close: Callable[[Any], Any],
               keep: Callable[[Any], None]) -> None:
    """Keep a returned connection for the next acquire, or close it (broken, or pool closed)."""
    if discard:
        with contextlib.suppress(Exception):  # closing a broken connection may fail too
            close(conn)
    else:
        keep(conn)


def pool_exhausted(what: str, timeout: float, size: int) -> ConfigurationError:
    """The error of a pool that had no connection free in time."""
    return ConfigurationError(
        f"{what}: no connection free after {timeout:.0f}s ({size} in use); raise pool_size, "
        "or release sessions sooner"
    )


class Listener:
    """A connection of its own that LISTENs on a channel (PostgreSQL): wait() for a NOTIFY."""

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a notification; True when one (or more) came."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop listening and close the connection."""
        raise NotImplementedError


class AsyncDriver:
    """The asyncio side of a driver: only the calls that wait.

    Everything that does not wait (adapters, error translation, the dialect, the SQL of
    BEGIN) is `rules`'s, the blocking driver of the same database, so both engines read
    values, name errors and spell statements alike.
    """

    rules: Driver

    async def acquire(self) -> Any:
        """A connection from the pool."""
        raise NotImplementedError

    async def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        raise NotImplementedError

    async def close(self) -> None:
        """Close every pooled connection."""
        raise NotImplementedError

    async def listen(self, channel: str) -> Listener:
        """A Listener on `channel` over a connection outside the pool (PostgreSQL only)."""
        raise DialectError(
            f"{self.rules.dialect.name} has no LISTEN/NOTIFY: poll instead"
        )

    async def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the driver call `name` (run, begin, fetch, ...: Driver's names) on `conn`."""
        method: Callable[..., Awaitable[Any]] = getattr(self, name)
        return await method(conn, *args)

    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement: (rows or None when it returns none, rows affected)."""
        raise NotImplementedError

    async def run_many(self, conn: Any, sql: str, params: list[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set: (the rows all returned, rows affected)."""
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


class AsyncPool:
    """A small asyncio pool for drivers whose library has none we use (asyncmy)."""

    def __init__(self, connect: Callable[[], Awaitable[Any]], close: Callable[[Any], Any],
                 size: int, timeout: float, what: str) -> None:
        self._connect = connect
        self._close = close
        self._idle: list[Any] = []
        self._slots = asyncio.Semaphore(size)
        self._timeout = timeout
        self._what = what
        self._closed = False
        self.size = size

    async def acquire(self) -> Any:
        """A connection from the pool."""
        if self._closed:
            raise ConfigurationError(f"{self._what}: the engine is closed")
        try:
            await asyncio.wait_for(self._slots.acquire(), self._timeout)
        except TimeoutError:
            raise pool_exhausted(self._what, self._timeout, self.size) from None
        if self._idle:
            return self._idle.pop()
        try:
            return await self._connect()
        except BaseException:
            self._slots.release()
            raise

    async def release(self, conn: Any, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead."""
        _give_back(conn, broken or self._closed, self._close, self._idle.append)
        self._slots.release()

    async def close(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        while self._idle:
            with contextlib.suppress(Exception):
                self._close(self._idle.pop())


class ThreadedDriver(AsyncDriver):
    """A blocking driver run on worker threads, one per pooled connection.

    For SQLite: a local file has no socket to await, so the stdlib driver on a thread is all
    an asyncio driver could be (aiosqlite is the same: sqlite3 on a thread of its own per
    connection), and the blocking driver's own code (its pool, PRAGMAs, busy timeout, error
    translation) serves both engines unchanged, with no dependency added.
    """

    def __init__(self, rules: Driver, size: int, timeout: float, what: str) -> None:
        self.rules = rules
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="tempest")
        # Waiting for a free connection happens here, on the event loop: a thread blocked in
        # the blocking pool would hold a worker that a connection's holder needs.
        self._slots = asyncio.Semaphore(size)
        self._timeout = timeout
        self._what = what
        self._size = size

    async def _thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def acquire(self) -> Any:
        """A connection from the blocking driver's pool, opened on a worker thread."""
        try:
            await asyncio.wait_for(self._slots.acquire(), self._timeout)
        except TimeoutError:
            raise pool_exhausted(self._what, self._timeout, self._size) from None
        try:
            return await self._thread(self.rules.acquire)
        except BaseException:
            self._slots.release()
            raise

    async def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back (on a worker thread: it may roll back)."""
        try:
            await self._thread(lambda: self.rules.release(conn, broken=broken))
        finally:
            self._slots.release()

    async def close(self) -> None:
        """Close every pooled connection and stop the worker threads."""
        await self._thread(self.rules.close)
        self._executor.shutdown(wait=False)

    async def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the blocking driver's call `name` on a worker thread."""
        return await self._thread(getattr(self.rules, name), conn, *args)

    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement on a worker thread."""
        return await self._thread(self.rules.run, conn, sql, params)  # type: ignore[no-any-return]  # the blocking driver's (rows, count)

    async def run_many(self, conn: Any, sql: str, params: list[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set on a worker thread."""
        return await self._thread(self.rules.run_many, conn, sql, params, returning)  # type: ignore[no-any-return]  # the blocking driver's (rows, count)
