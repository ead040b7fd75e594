"""SQLite through the standard library's sqlite3. The only file importing sqlite3.

Connections run in autocommit mode (`isolation_level=None`); a write transaction starts with
BEGIN IMMEDIATE, so several threads or processes wait for the write lock (busy timeout)
instead of failing halfway through a claim.

Unlike psycopg's and MySQL's, this driver is written blocking, and the asyncio engine runs it
on worker threads (ThreadedDriver): a local file has no socket to await, so the stdlib driver
on a thread is all an asyncio driver could be (aiosqlite is the same: sqlite3 on a thread of
its own per connection). So both engines run one SQLiteDriver, with its rules (SQLiteRules),
its pool, PRAGMAs and busy timeout, and nothing of it is written twice or generated.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from typing_extensions import override

from ...dialects import get_dialect
from ...dialects.sqlite import overflow_hint
from ...errors import ConfigurationError, IntegrityError, LockNotAvailable, QueryExecutionError
from .. import types as t
from ..types import Adapters
from ..url import DatabaseURL
from .base import (
    MEMORY_POOL_FIX,
    MISSING_COLUMN_HINT,
    MISSING_TABLE_HINT,
    POOL_FIX,
    DriverRules,
    hinted,
    isolation_sql,
    pool_exhausted,
    statement_start,
)
from .driver import Driver, Pool
from .driver_async import AsyncDriver, acquire_within

__all__ = ["SQLiteDriver", "SQLiteRules", "ThreadedDriver", "threaded_sqlite_driver"]

#: a PRAGMA that sets what the connection keeps (PRAGMA foreign_keys = OFF), not one that reads
_PRAGMA_SET = re.compile(r"PRAGMA\s+(?:\w+\.)?\w+\s*=", re.IGNORECASE)

_INTEGRITY_KINDS = {
    "SQLITE_CONSTRAINT_UNIQUE": "unique", "SQLITE_CONSTRAINT_PRIMARYKEY": "unique",
    "SQLITE_CONSTRAINT_FOREIGNKEY": "foreign_key", "SQLITE_CONSTRAINT_NOTNULL": "not_null",
    "SQLITE_CONSTRAINT_CHECK": "check",
}


def _auto(value: Any) -> Any:
    """Bind a value whose column is unknown (sql.expr arguments) the way columns store it."""
    import datetime as _dt
    import uuid
    from decimal import Decimal

    if isinstance(value, _dt.datetime):
        return t.datetime_to_utc_text(value)
    if isinstance(value, _dt.date):
        return t.date_to_text(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Decimal):
        return t.decimal_to_text(value)
    if isinstance(value, dict | list):
        return t.json_dumps(value)
    return value


def _close(conn: Any) -> None:
    conn.close()


def _no_string_identifiers(conn: Any) -> None:
    """Turn off SQLite's fallback that reads an unknown double-quoted identifier as a string.

    With it on, a select of a column the table lacks returns the column's name in every row.
    sqlite3 can switch it off from Python 3.12 (Connection.setconfig); on 3.11 it stays on,
    and engine.check_schema() / create_all() are the guard against a table missing a column.
    """
    setconfig = getattr(conn, "setconfig", None)
    dml = getattr(sqlite3, "SQLITE_DBCONFIG_DQS_DML", None)
    ddl = getattr(sqlite3, "SQLITE_DBCONFIG_DQS_DDL", None)
    if setconfig is not None and dml is not None and ddl is not None:
        setconfig(dml, False)
        setconfig(ddl, False)


class SQLiteRules(DriverRules):
    """What sqlite3 decides without a connection: values kept as text, errors by message."""

    #: a call returns whole (an interrupt arrives between calls), and closing an in-memory
    #: database's one connection would lose the database
    interrupt_breaks_connection: ClassVar[bool] = False
    bind: ClassVar[Adapters] = {
        "uuid": t.uuid_to_str, "datetime": t.datetime_to_utc_text, "date": t.date_to_text,
        "decimal": t.decimal_to_text, "json": t.json_dumps,
    }
    result: ClassVar[Adapters] = {
        "uuid": t.str_to_uuid, "datetime": t.utc_text_to_datetime, "date": t.text_to_date,
        "decimal": t.to_decimal, "json": t.json_loads, "bool": t.to_bool, "float": t.to_float,
        "bytes": t.to_bytes,
    }

    def __init__(self, memory: bool = False) -> None:
        self.dialect = get_dialect("sqlite")
        #: the database lives in its one connection, which is never closed to drop a setting
        self.memory = memory

    @override
    def changes_session(self, sql: str) -> bool:
        # PRAGMA foreign_keys = OFF (and the like) stays on the connection, and so do a TEMP
        # table and an ATTACH; in memory, the one connection is the database and stays
        # (documented)
        return not self.memory and (_PRAGMA_SET.match(sql, statement_start(sql)) is not None
                                    or super().changes_session(sql))

    @override
    def adapt_untyped(self, value: Any) -> Any:
        return _auto(value)

    @override
    def batches_rows(self, n_rows: int, returning: bool) -> bool:
        # sqlite3's executemany() steps the one-row statement in C and takes the row tuples
        # values() made as they are. The 20,000-row batch of bench/bench_sqlite.py through the
        # engine, process time against sqlite3's own executemany, two runs each: executemany
        # 0.85x and 0.66x, 8,191-row VALUES statements 0.97x and 0.78x: no steady difference,
        # so the path without 8,191-row statement texts stays. executemany returns no rows, so
        # an insert with RETURNING stays one statement.
        return not returning

    @override
    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    @override
    def is_disconnect(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.ProgrammingError) and "closed" in str(exc)

    @override
    def translate(self, exc: BaseException, sql: str, params: Sequence[Any]) -> QueryExecutionError:
        message = str(exc).strip() or type(exc).__name__
        if isinstance(exc, sqlite3.IntegrityError):
            name = getattr(exc, "sqlite_errorname", "")
            # SQLite names a CHECK constraint (or its column); for UNIQUE, PRIMARY KEY and
            # NOT NULL it lists table.column, which is no constraint name: the message keeps it.
            constraint = None
            if name == "SQLITE_CONSTRAINT_CHECK" and ":" in message:
                constraint = message.split(":", 1)[1].strip()
            return IntegrityError(message, sql, params, constraint=constraint,
                                  kind=_INTEGRITY_KINDS.get(name, "integrity"))
        if isinstance(exc, sqlite3.OperationalError) and "locked" in message:
            return LockNotAvailable(
                message + " (another connection held the write lock past the busy timeout)",
                sql, params,
            )
        if isinstance(exc, sqlite3.OperationalError):
            # SQLite has no error code of its own for these: its message is all it says
            if message.startswith("no such table:"):
                return QueryExecutionError(hinted(message, MISSING_TABLE_HINT), sql, params)
            if message.startswith("no such column:") or " has no column named " in message:
                return QueryExecutionError(hinted(message, MISSING_COLUMN_HINT), sql, params)
            if message == "integer overflow":
                return QueryExecutionError(hinted(message, overflow_hint(sql)), sql, params)
        return QueryExecutionError(message, sql, params)


class SQLiteDriver(Driver):
    """sqlite3 connections; an in-memory database is one connection shared under a lock."""

    rules: SQLiteRules

    def __init__(self, url: DatabaseURL, *, pool_size: int = 5, pool_timeout: float = 30.0,
                 busy_timeout: float = 30.0, journal_mode: str | None = None,
                 synchronous: str | None = None,
                 connect_args: dict[str, Any] | None = None) -> None:
        # The options arrive checked by create_engine() (engine/options.py).
        self.path = url.database or ":memory:"
        self.memory = self.path == ":memory:"
        self.rules = SQLiteRules(self.memory)
        self.busy_timeout = busy_timeout
        self.journal_mode = journal_mode or "wal"
        self.synchronous = synchronous
        self._connect_args = connect_args or {}
        size = 1 if self.memory else pool_size  # create_engine() refused another for memory
        self._pool = Pool(self._open, _close, size, pool_timeout, f"sqlite:///{self.path}",
                          MEMORY_POOL_FIX if self.memory else POOL_FIX)
        self._lock = threading.Lock()

    def _open(self) -> Any:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=self.busy_timeout, **self._connect_args)
        except sqlite3.Error as exc:
            raise QueryExecutionError(
                f"cannot open SQLite database {self.path!r}: {exc}", "", ()) from exc
        except TypeError as exc:
            raise ConfigurationError(
                f"sqlite3.connect() refused connect_args {sorted(self._connect_args)}: {exc}"
            ) from exc
        sql = ""
        try:
            _no_string_identifiers(conn)
            for sql in self._setup():
                if sql.startswith("PRAGMA journal_mode"):
                    with self._lock:
                        conn.execute(sql)
                else:
                    conn.execute(sql)
        except sqlite3.Error as exc:
            conn.close()
            hint = (" (the file is read-only: make it writable, or ask for the journal_mode "
                    "it already has, e.g. ?journal_mode=delete)" if "readonly" in str(exc) else "")
            raise QueryExecutionError(
                f"cannot set up SQLite database {self.path!r}: {exc}{hint}", sql, ()) from exc
        return conn

    def _setup(self) -> list[str]:
        """The PRAGMAs every new connection runs."""
        pragmas = [
            f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}",
            "PRAGMA foreign_keys = ON",
            # LIKE is case-sensitive on PostgreSQL and on MySQL's binary collation: same here.
            "PRAGMA case_sensitive_like = ON",
        ]
        if not self.memory:
            pragmas.append(f"PRAGMA journal_mode = {self.journal_mode}")
        if self.synchronous:
            pragmas.append(f"PRAGMA synchronous = {self.synchronous}")
        return pragmas

    @override
    def acquire(self) -> Any:
        return self._pool.acquire()

    @override
    def _in_transaction(self, conn: Any) -> bool:
        return bool(conn.in_transaction)

    @override
    def _give_back(self, conn: Any, broken: bool) -> None:
        self._pool.release(conn, broken)

    @override
    def close(self) -> None:
        self._pool.close()

    @override
    def run(self, conn: Any, sql: str, params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        cur = conn.execute(sql, params or ())
        rows = cur.fetchall() if cur.description is not None else None
        return rows, cur.rowcount

    @override
    def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]],
                 returning: bool) -> tuple[list[Any] | None, int]:
        cur = conn.executemany(sql, params)
        return None, max(int(cur.rowcount), 0)

    @override
    def begin(self, conn: Any, isolation: str | None, read_only: bool, write: bool) -> None:
        if isolation:
            isolation_sql(isolation)  # every level is honoured: SQLite is serializable
        if read_only:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("BEGIN DEFERRED")
        else:
            conn.execute("BEGIN IMMEDIATE")

    @override
    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None, size: int) -> Any:
        cur = conn.execute(sql, params or ())
        cur.arraysize = size
        return cur

    @override
    def end_transaction(self, conn: Any) -> None:
        conn.execute("PRAGMA query_only = OFF")


class ThreadedDriver(AsyncDriver):
    """A blocking driver run on worker threads, one per pooled connection (SQLite's, on the
    asyncio engine: see the module's docstring)."""

    def __init__(self, driver: Driver, size: int, timeout: float, what: str,
                 fix: str = POOL_FIX) -> None:
        self.rules = driver.rules
        self._driver = driver
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="tempest")
        # Waiting for a free connection happens here, on the event loop: a thread blocked in
        # the blocking pool would hold a worker that a connection's holder needs.
        self._slots = asyncio.Semaphore(size)
        self._timeout = timeout
        self._what = what
        self._fix = fix
        self._size = size
        #: close() was called: no connection is handed out any more, and the worker threads
        #: stop once the last one handed out is given back (a session holding one finishes)
        self._closed = False
        self._out = 0

    async def _thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    @override
    async def acquire(self) -> Any:
        """A connection from the blocking driver's pool, opened on a worker thread."""
        if self._closed:
            raise ConfigurationError(f"{self._what}: the engine is closed")
        if not await acquire_within(self._slots, self._timeout):
            raise pool_exhausted(self._what, self._timeout, self._size, self._fix)
        try:
            conn = await self._thread(self._driver.acquire)
        except BaseException:
            self._slots.release()
            raise
        self._out += 1
        return conn

    @override
    async def release(self, conn: Any, *, broken: bool = False) -> None:
        """Give a connection back (on a worker thread: it may roll back)."""
        try:
            await self._thread(lambda: self._driver.release(conn, broken=broken))
        finally:
            self._slots.release()
            self._out -= 1
            if self._closed and not self._out:
                self._executor.shutdown(wait=False)

    @override
    async def close(self) -> None:
        """Close every pooled connection, and stop the worker threads once no connection is
        handed out."""
        if self._closed:
            return
        self._closed = True
        await self._thread(self._driver.close)
        if not self._out:
            self._executor.shutdown(wait=False)

    @override
    async def call(self, name: str, conn: Any, *args: Any) -> Any:
        """Run the blocking driver's call `name` on a worker thread."""
        return await self._thread(getattr(self._driver, name), conn, *args)

    @override
    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        """Execute one statement on a worker thread."""
        return await self._thread(self._driver.run, conn, sql, params)  # type: ignore[no-any-return]  # the blocking driver's (rows, count)

    @override
    async def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        """Execute one statement per parameter set on a worker thread."""
        return await self._thread(self._driver.run_many, conn, sql, params, returning)  # type: ignore[no-any-return]  # the blocking driver's (rows, count)


def threaded_sqlite_driver(url: DatabaseURL, **kwargs: Any) -> ThreadedDriver:
    """The asyncio engine's SQLite driver: the blocking one, run on worker threads."""
    driver = SQLiteDriver(url, **kwargs)
    return ThreadedDriver(driver, driver._pool.size, float(kwargs.get("pool_timeout", 30.0)),
                          str(url), driver._pool.fix)
