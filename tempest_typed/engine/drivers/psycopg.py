"""PostgreSQL through psycopg 3, pooled by psycopg_pool. The only file importing psycopg."""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from typing_extensions import override

from ...dialects import get_dialect
from ...errors import (
    ConfigurationError,
    IntegrityError,
    LockNotAvailable,
    QueryExecutionError,
    TransactionConflict,
)
from ..types import Adapters
from ..url import DatabaseURL
from .base import (
    MISSING_COLUMN_HINT,
    MISSING_TABLE_HINT,
    AsyncDriver,
    Driver,
    Listener,
    hinted,
    isolation_sql,
)

try:
    import psycopg
    import psycopg.errors
    from psycopg.types.json import Jsonb
    from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolClosed, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "postgresql:// needs psycopg 3 and psycopg_pool: pip install 'tempest-typed[postgres]'"
    ) from exc

__all__ = ["AsyncPsycopgDriver", "PsycopgDriver"]

#: SQLSTATEs after which the connection is gone: class 08 (connection exception), and the
#: server's shutdowns (57P01 admin shutdown, e.g. pg_terminate_backend; 57P02 crash; 57P03
#: cannot connect now)
_DISCONNECT_STATES = ("57P01", "57P02", "57P03")

_INTEGRITY_KINDS = {
    "23505": "unique", "23503": "foreign_key", "23502": "not_null", "23514": "check",
    "23P01": "exclusion",
}


def url_option_names() -> frozenset[str]:
    """The connection parameters libpq takes (the query options of a postgresql:// URL)."""
    return frozenset(o.keyword.decode() for o in psycopg.pq.Conninfo.get_defaults())


class _OncePerOutage(logging.Filter):
    """Lets one of the pool's identical "error connecting" warnings through per minute:
    while the server is down the pool retries on its own threads, and logged each try."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a repeat, within a minute, of the same warning about our pool."""
        message = record.getMessage()
        if "'tempest_typed'" not in message:
            return True
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(message, float("-inf")) < 60.0:
                return False
            self._last[message] = now
            return True


logging.getLogger("psycopg.pool").addFilter(_OncePerOutage())


#: names the server-side cursors of stream(), unique per process
_STREAMS = itertools.count(1)

#: what every new connection runs: timestamps come back in UTC whatever the server's or the
#: role's time zone
_SETUP = "SET TIME ZONE 'UTC'"


def _jsonb(value: Any) -> Any:
    return Jsonb(value)


class PsycopgDriver(Driver):
    """psycopg 3 connections in autocommit mode; transactions are explicit BEGIN/COMMIT."""

    bind: ClassVar[Adapters] = {"json": _jsonb}
    result: ClassVar[Adapters] = {"float": float}

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_timeout: float = 5.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        self.dialect = get_dialect("postgresql")
        if not isinstance(connect_timeout, int | float) or not connect_timeout > 0:
            raise ConfigurationError(
                f"connect_timeout must be a number of seconds above 0, got {connect_timeout!r}"
            )
        # libpq counts whole seconds (and takes at least 2); the URL's own option wins
        kwargs: dict[str, Any] = {"autocommit": True,
                                  "connect_timeout": max(2, round(connect_timeout))}
        for key, value in (("host", url.host), ("port", url.port), ("user", url.user),
                           ("password", url.password), ("dbname", url.database)):
            if value is not None:
                kwargs[key] = value
        kwargs.update(url.options)
        kwargs.update(connect_args or {})
        self._kwargs = kwargs
        self._connect_timeout = float(connect_timeout)
        self._pool_timeout = float(pool_timeout)
        self._where = f"{url.host or 'localhost'}:{url.port or 5432}"
        self._last_used: dict[int, float] = {}
        self._pool_size = pool_size
        #: what the pool's own connection attempts (on its threads or tasks) tell acquire():
        #: how many are under way, whether one has ended yet, and the error of the last one
        #: to end (None when it connected)
        self._attempts = 0
        self._attempted = False
        self._refused: psycopg.Error | None = None
        self._attempts_lock = threading.Lock()
        if self._pooled:
            self._open_pool(pool_size, pool_timeout)

    #: False for the rules of the async driver, which keeps a pool of its own
    _pooled: ClassVar[bool] = True

    def _open_pool(self, pool_size: int, pool_timeout: float) -> None:
        kwargs = self._kwargs
        self._pool = ConnectionPool(
            kwargs=kwargs, min_size=1, max_size=pool_size, timeout=pool_timeout, open=True,
            configure=self._configure, connection_class=self._watched(),
            name="tempest_typed",
        )  # no check=: _checked_conn() pings, without the pool's backoff

    def _watched(self) -> type[psycopg.Connection[Any]]:
        """The pool's connection class, telling this driver how each attempt of the pool ends."""
        rules = self

        class WatchedConnection(psycopg.Connection[Any]):
            @classmethod
            def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                rules._attempt_began()
                try:
                    conn = super().connect(conninfo, **kwargs)
                except psycopg.Error as exc:
                    rules._attempt_ended(exc)
                    raise
                except BaseException:
                    rules._attempt_ended(None)
                    raise
                rules._attempt_ended(None)
                return conn

        return WatchedConnection

    def _attempt_began(self) -> None:
        with self._attempts_lock:
            self._attempts += 1

    def _attempt_ended(self, error: psycopg.Error | None) -> None:
        with self._attempts_lock:
            self._attempts -= 1
            self._attempted = True
            self._refused = error

    # How often acquire() looks again whether the pool's attempt to connect failed, while
    # one is under way and no connection is free: the server's refusal reaches the caller
    # within this, where waiting on the pool alone lasted connect_timeout.
    _LOOK_AGAIN = 0.05

    def _uncertain(self) -> bool:
        """True while a pool's connection attempt is under way, or none has ended yet."""
        return bool(self._attempts) or not self._attempted

    # A connection handed out again within this many seconds of its last use is not pinged:
    # the ping is a round trip on every acquire, a third of the queue worker's round trips
    # per batch (one process draining 5,000 messages in batches of 10: 1,504 -> 1,003 round
    # trips, 1.26 -> 1.09 s). One idle longer (the server may have closed it meanwhile) is
    # pinged, and replaced when the ping fails.
    _PING_AFTER_IDLE = 2.0

    def _needs_ping(self, conn: Any) -> bool:
        last = self._last_used.get(id(conn))
        return last is None or time.monotonic() - last > self._PING_AFTER_IDLE

    # psycopg_pool's own check (its check= callback) sleeps 1 s, then 2, 4 ... between
    # connections that fail it, as if the server were down: after a few backends of idle
    # connections were terminated, a queue worker waited 5 s for a connection while 2 were
    # free, and missed its heartbeats. A dead connection found here is discarded and the next
    # one taken at once; the pool connects replacements (with its backoff when the server is
    # really down), and getconn() waits for them within the same timeout.
    def _checked_conn(self, timeout: float) -> Any:
        """A pooled connection that answers, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            conn = self._pool.getconn(timeout=max(0.0, deadline - time.monotonic()))
            if not self._needs_ping(conn):
                return conn
            try:
                ConnectionPool.check_connection(conn)
            except BaseException as exc:
                self.release(conn, broken=True)
                if not isinstance(exc, psycopg.Error):
                    raise
                continue
            return conn

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        conn.execute(_SETUP)

    def _returned(self, conn: Any, broken: bool) -> None:
        """Note a connection given back: when it was last used, or forget a broken one."""
        if broken:
            self._last_used.pop(id(conn), None)
        else:
            self._last_used[id(conn)] = time.monotonic()

    def _closed_error(self, exc: BaseException) -> ConfigurationError:
        return ConfigurationError("tempest_typed: the engine is closed")

    def _unreachable(self, exc: psycopg.Error) -> QueryExecutionError:
        cause = " ".join(str(exc).split()) or type(exc).__name__
        waited = f" within connect_timeout {self._connect_timeout:g}s" if (
            "timeout" in cause.lower()) else ""
        return QueryExecutionError(
            f"cannot connect to PostgreSQL at {self._where}{waited}: {cause}", "", ())

    def _exhausted(self) -> ConfigurationError:
        return ConfigurationError(
            f"tempest_typed: no connection free after {self._pool_timeout:g}s "
            f"({self._pool_size} in use); raise pool_size, or release sessions sooner"
        )

    @override
    def sequence_param(self, items: list[Any], where: str) -> Any:
        return items  # an array: `= ANY(%s)`

    @override
    def adapt_untyped(self, value: Any) -> Any:
        if isinstance(value, dict | list):
            return Jsonb(value)
        return value

    def _probe(self) -> None:
        """Connect directly once: raise the server's error (it says no, at once), or return
        when it answers."""
        try:
            psycopg.connect(**self._kwargs).close()
        except psycopg.Error as exc:
            raise self._unreachable(exc) from exc

    @override
    def acquire(self) -> Any:
        # The pool connects on its own threads and, while the server is down, only logs why.
        # Its attempts report how they end (_watched): when the last one failed, connect
        # directly once, which raises the real cause at once or finds the server back.
        # While one is under way, wait in short turns to see how it ends; otherwise wait up
        # to connect_timeout, then, if the pool is still trying, connect directly once: a
        # server that is down fails in connect_timeout, saying why, and a pool whose every
        # connection is in use waits the rest of pool_timeout for one to come back.
        if self._refused is not None:
            self._probe()
        first = min(self._connect_timeout, self._pool_timeout)
        until = time.monotonic() + first
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            try:
                return self._checked_conn(
                    min(left, self._LOOK_AGAIN) if self._uncertain() else left)
            except PoolClosed as exc:
                raise self._closed_error(exc) from exc
            except PoolTimeout:
                pass
            if self._refused is not None:
                self._probe()
        if self._uncertain() or self._refused is not None:
            self._probe()
        try:
            return self._checked_conn(max(0.0, self._pool_timeout - first))
        except PoolClosed as exc:
            raise self._closed_error(exc) from exc
        except PoolTimeout as exc:
            raise self._exhausted() from exc

    @override
    def release(self, conn: Any, *, broken: bool = False) -> None:
        self._returned(conn, broken)
        if broken:
            with contextlib.suppress(Exception):
                conn.close()
        self._pool.putconn(conn)

    @override
    def close(self) -> None:
        self._pool.close()

    @override
    def run(self, conn: Any, sql: str, params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        # One cursor per connection, kept on it: conn.execute() makes a new cursor for every
        # statement, and that is 10 of the 35 us of client CPU a primary-key select of the
        # seed's table costs (median of 15 x 1,000 calls, process CPU time; compare the
        # "client CPU" rows of `.venv/bin/python bench/bench_statements.py`). The rows are
        # fetched at once, so the cursor holds nothing a later statement could trip over.
        try:
            cur = conn._tempest_cursor
        except AttributeError:
            cur = conn._tempest_cursor = conn.cursor()
        if params is None and ";" in sql:
            cur.execute(sql, None, **one_statement(conn))
        else:
            cur.execute(sql, params)
        rows = cur.fetchall() if cur.description is not None else None
        return rows, cur.rowcount

    @override
    def batches_rows(self, n_rows: int, returning: bool) -> bool:
        # psycopg's executemany() pipelines the one-row statements. The seed's idempotent
        # insert with RETURNING, 20,000 rows in transactions of n, rows/s executemany vs one
        # multi-row VALUES: n=10 6,735 vs 7,567; 50 16,459 vs 15,890; 200 24,059 vs 17,879;
        # 1,000 27,095 vs 18,491 (raw psycopg, median of 3; bench/bench_enqueue.py runs the
        # n=1,000 case).
        return n_rows >= 50

    @override
    def run_many(self, conn: Any, sql: str, params: list[Sequence[Any]],
                 returning: bool) -> tuple[list[Any] | None, int]:
        with conn.cursor() as cur:
            cur.executemany(sql, params, returning=returning)
            if not returning:
                return None, max(cur.rowcount, 0)
            # Every result has the same columns: asking for cur.description on each made
            # 1,000 Column objects per batch, 6 of the 8 us per row the batch cost above
            # psycopg's own executemany (cProfile of bench/bench_enqueue.py's batch).
            rows: list[Any] = cur.fetchall()
            total = max(cur.rowcount, 0)
            while cur.nextset():
                rows.extend(cur.fetchall())
                total += max(cur.rowcount, 0)
            return rows, total

    @override
    def begin(self, conn: Any, isolation: str | None, read_only: bool, write: bool) -> None:
        conn.execute(begin_sql(isolation, read_only))

    # A named cursor: DECLARE ... then FETCH FORWARD size at a time. It lives only inside a
    # transaction (stream() opens one when the session is outside transaction()).
    stream_needs_transaction: ClassVar[bool] = True

    @override
    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None, size: int) -> Any:
        cur = conn.cursor(name=f"tempest_stream_{next(_STREAMS)}")
        cur.itersize = size
        cur.execute(sql, params)
        return cur

    @override
    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error,)

    @override
    def is_disconnect(self, exc: BaseException) -> bool:
        # Deadlocks, serialization failures, lock and statement timeouts are
        # OperationalErrors too, on a connection that is fine: only these lose it.
        if not isinstance(exc, psycopg.Error):
            return False
        state = exc.sqlstate
        if state is None:  # raised by the client: the connection failed, or was closed
            return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        return state.startswith("08") or state in _DISCONNECT_STATES

    @override
    def translate(self, exc: BaseException, sql: str, params: Sequence[Any]) -> QueryExecutionError:
        message = str(exc).strip() or type(exc).__name__
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return LockNotAvailable(message, sql, params)
        if isinstance(exc, psycopg.errors.DeadlockDetected | psycopg.errors.SerializationFailure):
            return TransactionConflict(message, sql, params)
        if isinstance(exc, psycopg.errors.IntegrityError):
            diag = exc.diag
            return IntegrityError(
                message, sql, params, constraint=diag.constraint_name,
                kind=_INTEGRITY_KINDS.get(exc.sqlstate or "", "integrity"),
            )
        if isinstance(exc, psycopg.errors.UndefinedTable):
            return QueryExecutionError(hinted(message, MISSING_TABLE_HINT), sql, params)
        if isinstance(exc, psycopg.errors.UndefinedColumn):
            return QueryExecutionError(hinted(message, MISSING_COLUMN_HINT), sql, params)
        return QueryExecutionError(message, sql, params)


def one_statement(conn: Any) -> dict[str, bool]:
    """The execute() options that run a text without parameters as one statement at most.

    psycopg sends a query without parameters with the simple query protocol, which runs every
    statement of the text ("UPDATE t SET n = 9; DELETE FROM t" would run both); a prepared
    statement (the extended protocol) holds one, and the server refuses a second. A text
    without a ; cannot hold two statements, so only those pay the extra round trip of
    preparing. Where preparing is switched off (connect_args prepare_threshold=None), psycopg
    ignores prepare=True: binary results take the extended protocol too.
    """
    if conn.prepare_threshold is None:
        return {"binary": True}
    return {"prepare": True}


def begin_sql(isolation: str | None, read_only: bool) -> str:
    """BEGIN with its isolation level and access mode."""
    text = "BEGIN"
    if isolation:
        text += " ISOLATION LEVEL " + isolation_sql(isolation)
    if read_only:
        text += " READ ONLY"
    return text


class _AsyncRules(PsycopgDriver):
    """The blocking driver's rules for the async driver: no pool of its own."""

    _pooled: ClassVar[bool] = False


class AsyncPsycopgDriver(AsyncDriver):
    """psycopg 3's AsyncConnection in an AsyncConnectionPool, opened on first use."""

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_timeout: float = 5.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        rules = self.rules = _AsyncRules(url, pool_size=pool_size, pool_timeout=pool_timeout,
                                         connect_timeout=connect_timeout,
                                         connect_args=connect_args)
        self._rules = rules
        self._pool = AsyncConnectionPool(
            kwargs=rules._kwargs, min_size=1, max_size=pool_size, timeout=pool_timeout,
            open=False, configure=self._configure, name="tempest_typed",
            connection_class=self._watched(),
        )
        self._opened = False

    def _watched(self) -> type[psycopg.AsyncConnection[Any]]:
        """The pool's connection class, telling the rules how each attempt of the pool ends."""
        rules = self._rules

        class WatchedConnection(psycopg.AsyncConnection[Any]):
            @classmethod
            async def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                rules._attempt_began()
                try:
                    conn = await super().connect(conninfo, **kwargs)
                except psycopg.Error as exc:
                    rules._attempt_ended(exc)
                    raise
                except BaseException:
                    rules._attempt_ended(None)
                    raise
                rules._attempt_ended(None)
                return conn

        return WatchedConnection

    async def _probe(self) -> None:
        """The blocking driver's _probe(), awaited."""
        rules = self._rules
        try:
            await (await psycopg.AsyncConnection.connect(**rules._kwargs)).close()
        except psycopg.Error as exc:
            raise rules._unreachable(exc) from exc

    async def _checked_conn(self, timeout: float) -> Any:
        """A pooled connection that answers, within `timeout` seconds (as the blocking
        driver's: a dead one is discarded and the next taken at once)."""
        deadline = time.monotonic() + timeout
        while True:
            conn = await self._pool.getconn(timeout=max(0.0, deadline - time.monotonic()))
            if not self._rules._needs_ping(conn):
                return conn
            try:
                await AsyncConnectionPool.check_connection(conn)
            except BaseException as exc:
                await self.release(conn, broken=True)
                if not isinstance(exc, psycopg.Error):
                    raise
                continue
            return conn

    @staticmethod
    async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(_SETUP)

    @override
    async def acquire(self) -> Any:
        # As the blocking driver: the pool's attempts report how they end; a refusal is
        # raised at once, a pool whose every connection is in use waits pool_timeout.
        rules = self._rules
        pool = self._pool
        if not self._opened:
            self._opened = True
            await pool.open(wait=False)
        if rules._refused is not None:
            await self._probe()
        first = min(rules._connect_timeout, rules._pool_timeout)
        until = time.monotonic() + first
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            try:
                return await self._checked_conn(
                    min(left, rules._LOOK_AGAIN) if rules._uncertain() else left)
            except PoolClosed as exc:
                raise rules._closed_error(exc) from exc
            except PoolTimeout:
                pass
            if rules._refused is not None:
                await self._probe()
        if rules._uncertain() or rules._refused is not None:
            await self._probe()
        try:
            return await self._checked_conn(max(0.0, rules._pool_timeout - first))
        except PoolClosed as exc:
            raise rules._closed_error(exc) from exc
        except PoolTimeout as exc:
            raise rules._exhausted() from exc

    @override
    async def release(self, conn: Any, *, broken: bool = False) -> None:
        self._rules._returned(conn, broken)
        if broken:
            with contextlib.suppress(Exception):
                await conn.close()
        await self._pool.putconn(conn)

    @override
    async def close(self) -> None:
        await self._pool.close()

    @override
    async def listen(self, channel: str) -> Listener:
        rules = self._rules
        statement = 'LISTEN "' + channel.replace('"', '""') + '"'
        try:
            conn = await psycopg.AsyncConnection.connect(**rules._kwargs)
        except psycopg.Error as exc:
            raise rules._unreachable(exc) from exc
        try:
            await conn.execute(statement)  # the connection is in autocommit mode
        except psycopg.Error as exc:
            await conn.close()
            raise rules.translate(exc, statement, ()) from exc
        return _PsycopgListener(conn, rules, statement)

    @override
    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        # One cursor per connection, kept on it, as the blocking driver does.
        try:
            cur = conn._tempest_cursor
        except AttributeError:
            cur = conn._tempest_cursor = conn.cursor()
        if params is None and ";" in sql:
            await cur.execute(sql, None, **one_statement(conn))
        else:
            await cur.execute(sql, params)
        rows = await cur.fetchall() if cur.description is not None else None
        return rows, cur.rowcount

    @override
    async def run_many(self, conn: Any, sql: str, params: list[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        async with conn.cursor() as cur:
            await cur.executemany(sql, params, returning=returning)
            if not returning:
                return None, max(cur.rowcount, 0)
            rows: list[Any] = await cur.fetchall()
            total = max(cur.rowcount, 0)
            while cur.nextset():
                rows.extend(await cur.fetchall())
                total += max(cur.rowcount, 0)
            return rows, total

    @override
    async def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        await conn.execute(begin_sql(isolation, read_only))

    @override
    async def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        cur = conn.cursor(name=f"tempest_stream_{next(_STREAMS)}")
        cur.itersize = size
        await cur.execute(sql, params)
        return cur


class _PsycopgListener(Listener):
    """LISTEN on a connection of its own; notifications queue on it until wait() reads them."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], rules: PsycopgDriver,
                 statement: str) -> None:
        self._conn = conn
        self._rules = rules
        self._statement = statement

    @override
    async def wait(self, timeout: float) -> bool:
        try:
            got = False
            async for _ in self._conn.notifies(timeout=timeout, stop_after=1):
                got = True
            if got:  # the rest that came meanwhile: one wake-up for all of them
                async for _ in self._conn.notifies(timeout=0.0):
                    pass
            return got
        except psycopg.Error as exc:
            raise self._rules.translate(exc, self._statement, ()) from exc

    @override
    async def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            await self._conn.close()
