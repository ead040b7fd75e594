"""PostgreSQL through psycopg 3: what the driver decides without waiting.

The options a connection is made with, value adapters, error translation, and what the pool's
own attempts to connect told: one PsycopgRules per engine, read by both drivers (the asyncio
AsyncPsycopgDriver of psycopg_async.py and the blocking PsycopgDriver generated from it).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any, ClassVar, Final

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
    DriverRules,
    hinted,
    isolation_sql,
)

try:
    import psycopg
    import psycopg.errors
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "postgresql:// needs psycopg 3 and psycopg_pool: pip install 'tempest-typed[postgres]'"
    ) from exc

__all__ = ["PsycopgRules", "begin_sql", "one_statement", "stream_name", "url_option_names"]

#: SQLSTATEs after which the connection is gone: class 08 (connection exception), and the
#: server's shutdowns (57P01 admin shutdown, e.g. pg_terminate_backend; 57P02 crash; 57P03
#: cannot connect now)
_DISCONNECT_STATES = ("57P01", "57P02", "57P03")

_INTEGRITY_KINDS = {
    "23505": "unique", "23503": "foreign_key", "23502": "not_null", "23514": "check",
    "23P01": "exclusion",
}


#: libpq's parameters that take one of a few words: libpq refuses another only when it
#: connects, which made a misspelt one a QueryExecutionError of the first statement
_CHOICES: Final = {
    "sslmode": ("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
    "gssencmode": ("disable", "prefer", "require"),
    "channel_binding": ("disable", "prefer", "require"),
    "target_session_attrs": ("any", "read-write", "read-only", "primary", "standby",
                             "prefer-standby"),
    "load_balance_hosts": ("disable", "random"),
    "sslnegotiation": ("postgres", "direct"),
    "sslcertmode": ("disable", "allow", "require"),
}
#: ... and those that take a whole number
_INTEGERS: Final = ("connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
                    "keepalives_count", "tcp_user_timeout")


def check_libpq_values(options: dict[str, Any]) -> None:
    """Refuse a libpq parameter's value that libpq would refuse on connecting
    (ConfigurationError naming the values it takes), before anything connects."""
    for name, value in options.items():
        words = _CHOICES.get(name)
        if words is not None and value not in words:
            raise ConfigurationError(
                f"create_engine(): {name}={value!r} is not a value libpq takes for {name}; "
                f"use one of {', '.join(words)}")
        if name in _INTEGERS and not (
                (isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, str) and value.strip().lstrip("+-").isdigit())):
            raise ConfigurationError(
                f"create_engine(): {name}={value!r} is not a value libpq takes for {name}; "
                "write a whole number (seconds, or a count)")


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


def stream_name() -> str:
    """A name for the server-side cursor of one stream(), unique in this process."""
    return f"tempest_stream_{next(_STREAMS)}"


#: what every new connection runs: timestamps come back in UTC whatever the server's or the
#: role's time zone
SETUP = "SET TIME ZONE 'UTC'"


def _jsonb(value: Any) -> Any:
    return Jsonb(value)


class PsycopgRules(DriverRules):
    """psycopg 3 connections in autocommit mode; transactions are explicit BEGIN/COMMIT."""

    bind: ClassVar[Adapters] = {"json": _jsonb}
    result: ClassVar[Adapters] = {"float": float}
    pipelines: ClassVar[bool] = True
    interrupt_breaks_connection: ClassVar[bool] = False

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
        check_libpq_values(kwargs)
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

    @override
    def batches_rows(self, n_rows: int, returning: bool) -> bool:
        # psycopg's executemany() pipelines the one-row statements: ahead of one multi-row
        # VALUES statement from about 50 rows (measured: BENCHMARKS.md, "Fast paths").
        return n_rows >= 50

    @override
    def copies_rows(self, n_rows: int) -> bool:
        # COPY ... FROM STDIN, against the pipelined executemany() of the one-row insert
        # (BENCHMARKS.md, "Fast paths"): every batch run_many() takes.
        return True

    @override
    def copies_binary(self, n_rows: int) -> bool:
        # psycopg's binary COPY of 100,000 rows costs the client 128 ms of CPU where the text
        # COPY costs 625 (BENCHMARKS.md, "Bulk writes, binary COPY"), about 5 us a row,
        # against one round trip for the catalog read.
        return n_rows >= 100

    # A named cursor: DECLARE ... then FETCH FORWARD size at a time. It lives only inside a
    # transaction (stream() opens one when the session is outside transaction()).
    stream_needs_transaction: ClassVar[bool] = True
    # DECLARE ... CURSOR FOR takes a SELECT or VALUES only, not INSERT/UPDATE/DELETE
    # ... RETURNING (a syntax error)
    stream_cursor_takes_writes: ClassVar[bool] = False

    @override
    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error,)

    @override
    def ddl_already_done(self, exc: BaseException) -> bool:
        # Every CREATE the schema step runs says IF NOT EXISTS; two sessions running the same
        # one at once can both pass that test, and the second then fails with duplicate_table
        # (42P07, a table or an index) or duplicate_object (42710): what it asked for exists.
        return isinstance(exc, psycopg.Error) and exc.sqlstate in ("42P07", "42710")

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
