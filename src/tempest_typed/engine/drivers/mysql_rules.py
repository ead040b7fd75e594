"""MySQL 8 and MariaDB: what the driver decides without waiting.

PyMySQL (the blocking driver) is pure Python, maintained, and installs everywhere without a C
toolchain or client library; it speaks to MySQL and MariaDB alike, and asyncmy (the asyncio
driver) is a port of it, with the same connection options, error classes and codes. So one
MySQLRules serves both: the options a connection is made with, value adapters, error
translation, and which server the first connection found. Connections are set to UTC, READ
COMMITTED (as PostgreSQL's default, and what lets SKIP LOCKED claimers avoid gap locks), and
report matched rather than changed rows, so `rows_affected()` means the same on every dialect.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, ClassVar

from typing_extensions import override

from ...dialects import Dialect, get_dialect
from ...dialects.mysql import STORED_DECIMAL
from ...errors import (
    ConfigurationError,
    DialectError,
    IntegrityError,
    LockNotAvailable,
    QueryExecutionError,
    TempestError,
    TransactionConflict,
)
from .. import types as t
from ..types import Adapters
from ..url import DatabaseURL
from .base import (
    MISSING_COLUMN_HINT,
    MISSING_TABLE_HINT,
    DriverRules,
    hinted,
    isolation_sql,
    statement_start,
)

try:
    import pymysql
    import pymysql.constants.CLIENT
    import pymysql.constants.SERVER_STATUS
    import pymysql.cursors
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "mysql:// and mariadb:// need PyMySQL: pip install 'tempest-typed[mysql]'"
    ) from exc

__all__ = ["IN_TRANSACTION", "MySQLRules", "begin_statements", "log_warnings", "logger",
           "ignores", "setup_statements", "upsert_count",
           "url_option_names"]

_INTEGRITY_KINDS = {1062: "unique", 1452: "foreign_key", 1451: "foreign_key", 1048: "not_null",
                    3819: "check", 4025: "check"}
_LOCK_ERRORS = {3572, 1205}  # NOWAIT on MySQL 8; lock wait (NOWAIT) on MariaDB
_CONFLICT_ERRORS = {1213, 1020}  # deadlock; MariaDB's "record has changed since last read"
_DISCONNECT_ERRORS = {2006, 2013, 2014, 2045, 2055, 4031, 1927}
_HINTS = {1146: MISSING_TABLE_HINT, 1054: MISSING_COLUMN_HINT}  # no such table; unknown column
_KEY_NAME = re.compile(r"for key '([^']+)'")
# 1451/1452 (foreign key) and 3819/4025 (check) name the constraint as CONSTRAINT `name`.
_CONSTRAINT_NAME = re.compile(r"constraint [`']([^`']+)[`']", re.IGNORECASE)
# The statements MySQL and MariaDB commit the open transaction before (and run outside it): DDL.
# A temporary table's CREATE and DROP are the exception.
_COMMITTING = re.compile(r"(CREATE|ALTER|DROP|TRUNCATE|RENAME)\b((?:\s+OR\s+REPLACE)?\s+TEMPORARY\b)?",
                         re.IGNORECASE)


#: the bit of a connection's server_status (from the last OK packet) that says a transaction
#: is open on it
IN_TRANSACTION = pymysql.constants.SERVER_STATUS.SERVER_STATUS_IN_TRANS

#: What every new connection runs first, after the driver's connect() (and a caller's
#: init_command, which it runs; this comes after, so none undoes it):
#: - datetimes are UTC: NOW() and a DATETIME's value are read and written in UTC;
#: - NO_AUTO_VALUE_ON_ZERO: an explicit 0 in an identity column is stored as 0, as on
#:   PostgreSQL and SQLite, instead of asking for the next generated value;
#: - sql_notes = 0: IF [NOT] EXISTS raises no note, which counts as a warning ("Unknown
#:   table ..." on every drop_all, logged at DEBUG: see log_warnings).
_SESSION = ("SET time_zone = '+00:00', sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO'), "
            "sql_notes = 0")

#: ... and its transactions' default isolation, on either server
_SETUP = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"

#: The session variables every connection is set to, so that a result is the one PostgreSQL
#: and SQLite give:
#: - strings are ordered and ranked by their first 8 KiB rather than 1 KiB: MariaDB's sort
#:   (ORDER BY, a window's order) reads max_sort_length bytes of a string (1024 by default),
#:   so strings equal in those ordered as equal. The larger it is, the fewer keys one sort
#:   holds in sort_buffer_size ("Out of sort memory" below 15): a 256th of it (8 KiB of the
#:   default 2 MiB) lets a sort by 16 text columns run;
#: - a quotient and an average of a Decimal keep 30 places (div_precision_increment: 4 by
#:   default, avg() of a DECIMAL(10, 2) read 0.336667 where PostgreSQL gives
#:   0.33666666666666666667);
#: - SHOW WARNINGS lists every warning of a statement, up to 65535 (64 by default): an
#:   INSERT IGNORE's are read to tell a row skipped as a duplicate from one skipped for an
#:   error (MySQLRules.ignored_error), and a statement binds fewer rows than that.
_VARIABLES = ("SET SESSION max_sort_length = GREATEST(@@max_sort_length, "
              "LEAST(8388608, @@sort_buffer_size DIV 256)), div_precision_increment = 30, "
              "max_error_count = 65535")

#: The session variables a connection is set to after those, per server:
#: - a recursive query runs until its step finds no rows: MariaDB stops one after 1000
#:   iterations without an error (max_recursive_iterations), MySQL 8 raises at 1000 levels
#:   (cte_max_recursion_depth); both are set to their maximum.
_SERVER_SETUP = {
    "mariadb": "SET SESSION max_recursive_iterations = 4294967295",
    "mysql": "SET SESSION cte_max_recursion_depth = 4294967295",
}


def setup_statements(server_version: str) -> list[str]:
    """The statements a new connection to this server (its version string) runs first."""
    server = "mariadb" if "mariadb" in server_version.lower() else "mysql"
    return [_SESSION, _SETUP, _VARIABLES, _SERVER_SETUP[server]]

#: The engine's logger. A statement's warnings (INSERT IGNORE skipping a duplicate: "Duplicate
#: entry ...") are logged here at DEBUG, read with SHOW WARNINGS (the connection's
#: show_warnings(), on both libraries) only when DEBUG is on; the drivers print nothing of
#: their own. PyMySQL only counts them; asyncmy would read each back with an extra SHOW
#: WARNINGS and log it to its own logger, which Python's last-resort handler prints to stderr.
logger = logging.getLogger("tempest_typed.sql")


#: the warning of a row INSERT IGNORE skipped as a duplicate, which on_conflict_do_nothing()
#: means; any other is an error the statement would have raised without IGNORE
_DUPLICATE = 1062


def ignores(sql: str) -> bool:
    """True for an INSERT IGNORE (on_conflict_do_nothing()), whose warnings are read."""
    return sql.startswith("INSERT IGNORE")


def log_warnings(sql: str, warnings: Sequence[Sequence[Any]] | None) -> None:
    """Log the rows of SHOW WARNINGS (level, code, message) that `sql` left, at DEBUG."""
    for level, code, message in warnings or ():
        logger.debug("MySQL %s %s: %s (after: %s)", str(level).lower(), code, message, sql)


#: SET TRANSACTION (neither SESSION nor GLOBAL) sets the next transaction's isolation or
#: access mode: outside a transaction, whichever comes next on the connection, the next user's
#: of the pooled connection too (a READ ONLY one refused that user's writes)
_NEXT_TRANSACTION = re.compile(r"SET\s+TRANSACTION\b", re.IGNORECASE)

_UPSERT = re.compile(r"\bON\s+DUPLICATE\s+KEY\s+UPDATE\b", re.IGNORECASE)
_RECORDS = re.compile(rb"Records:\s*(\d+)")


def upsert_count(sql: str, count: int, info: bytes | str | None) -> int:
    """Rows affected as PostgreSQL and SQLite count them: an INSERT ... ON DUPLICATE KEY
    UPDATE's row inserted or updated is 1 (MySQL counts an updated row 2, and with
    CLIENT_FOUND_ROWS a row set to the values it had 1), read from the statement's info
    ("Records: n  Duplicates: d ...", the rows it took) when it has several rows; any
    other statement's count as it is."""
    if count < 2 or ("DUPLICATE" not in sql and "duplicate" not in sql.lower()):
        return count
    if _UPSERT.search(sql) is None:
        return count
    if isinstance(info, str):
        info = info.encode()
    found = _RECORDS.search(info or b"")
    return int(found.group(1)) if found else 1  # no info: one row, updated


def begin_statements(isolation: str | None, read_only: bool) -> list[str]:
    """The statements that start a transaction with this isolation and access mode."""
    first = ["SET TRANSACTION ISOLATION LEVEL " + isolation_sql(isolation)] if isolation else []
    return [*first, "START TRANSACTION READ ONLY" if read_only else "START TRANSACTION"]


def url_option_names() -> frozenset[str]:
    """The keyword arguments pymysql.connect() takes (the query options of a mysql:// URL)."""
    import inspect

    params = inspect.signature(pymysql.connections.Connection.__init__).parameters
    return frozenset(name for name in params if name != "self")


def _auto(value: Any) -> Any:
    import datetime as _dt
    import uuid

    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        return t.datetime_to_naive_utc(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict | list):
        return t.json_dumps(value)
    return value


class MySQLRules(DriverRules):
    """PyMySQL's or asyncmy's connections in autocommit mode; MariaDB or MySQL told apart on
    the first connection."""

    ignore_skips_errors: ClassVar[bool] = True

    bind: ClassVar[Adapters] = {"uuid": t.uuid_to_str, "datetime": t.datetime_to_naive_utc, "json": t.json_dumps,
                                STORED_DECIMAL: t.unsized_mysql_decimal}
    result: ClassVar[Adapters] = {
        "uuid": t.str_to_uuid, "datetime": t.naive_utc_to_datetime, "json": t.json_loads,
        "bool": t.to_bool, "decimal": t.to_decimal, "float": t.to_float, "bytes": t.to_bytes,
    }

    #: the library's exception classes, read by translate() and is_disconnect(): PyMySQL's,
    #: or asyncmy's (the same errors with the same codes) when its driver says so
    _error: type[Exception] = pymysql.Error
    _integrity_error: type[Exception] = pymysql.err.IntegrityError
    _interface_error: type[Exception] = pymysql.err.InterfaceError

    #: how the blocking driver connects to learn the server before a first statement (see
    #: `dialect`); None for the asyncio driver, which cannot wait here
    connect_first: Callable[[], None] | None = None

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_args: dict[str, Any] | None = None,
                 errors: ModuleType | None = None) -> None:
        self._pool_size, self._pool_timeout, self._what = pool_size, pool_timeout, str(url)
        if errors is not None:  # the driver library's module of exceptions
            self._error = errors.Error
            self._integrity_error = errors.IntegrityError
            self._interface_error = errors.InterfaceError
        kwargs: dict[str, Any] = {
            "host": url.host or "127.0.0.1", "user": url.user or "root",
            "password": url.password or "", "database": url.database, "charset": "utf8mb4",
            "autocommit": True, "client_flag": pymysql.constants.CLIENT.FOUND_ROWS,
        }
        if url.port:
            kwargs["port"] = url.port
        kwargs.update(url.options)
        kwargs.update(connect_args or {})
        flags = kwargs.get("client_flag")
        if isinstance(flags, int):
            # One statement per execute, whatever the options ask: with MULTI_STATEMENTS,
            # "...; DROP TABLE t" in a text would run as a second statement.
            kwargs["client_flag"] = flags & ~pymysql.constants.CLIENT.MULTI_STATEMENTS
        self._kwargs = kwargs
        self._dialect: Dialect | None = None
        if url.scheme == "mariadb":
            self._dialect = get_dialect("mariadb")

    def _connect_failed(self, exc: BaseException) -> TempestError:
        """The error of a connection refused: the server's, or a bad connection option's."""
        if isinstance(exc, self._error):
            return QueryExecutionError(f"cannot connect to MySQL: {exc}", "", ())
        return ConfigurationError(
            f"the driver refused the connection options: {exc}. A URL option is a "
            "string: pass a number or a flag in connect_args (connect_args="
            "{'connect_timeout': 5})")

    def _setup_failed(self, exc: BaseException, sql: str) -> QueryExecutionError:
        return QueryExecutionError(f"cannot set up the MySQL connection: {exc}", sql, ())

    def _know_server(self, version: str) -> None:
        """Tell MariaDB from MySQL by the server's version, on the first connection."""
        if self._dialect is None:
            self._dialect = get_dialect("mariadb" if "mariadb" in version.lower() else "mysql")

    @override
    @property
    def dialect(self) -> Dialect:  # type: ignore[override]  # a property where the base has an attribute
        # The blocking driver connects to find out; the async engine's first connection,
        # which every statement awaits before it is compiled, tells it there.
        if self._dialect is None:
            if self.connect_first is None:
                raise TempestError(
                    "MySQL or MariaDB is known once the async engine has connected: await a "
                    "statement first (await engine.execute_sql('SELECT 1')), or say mariadb://"
                )
            self.connect_first()
        assert self._dialect is not None
        return self._dialect

    @override
    def sequence_param(self, items: list[Any], where: str) -> Any:
        return tuple(items)  # escaped as (a, b, ...): `IN %s`

    @override
    def adapt_untyped(self, value: Any) -> Any:
        return _auto(value)

    #: an unbuffered cursor holds the connection until its last row is read
    stream_coexists: ClassVar[bool] = False
    #: a deadlock victim (1213) and MariaDB's "record has changed" (1020) are rolled back
    #: whole by InnoDB: the transaction's savepoints are gone with it
    conflict_ends_transaction: ClassVar[bool] = True

    def ignored_error(self, warnings: Sequence[Sequence[Any]] | None,
                      count: int) -> Exception | None:
        """The error an INSERT IGNORE turned into a warning besides a duplicate key (a foreign
        key that matches nothing, a CHECK, a value out of range), as the driver raises it
        without IGNORE; None when it skipped duplicates only. `count` is the statement's
        number of warnings: SHOW WARNINGS lists max_error_count of them (set to its largest
        on connect, more than a statement has rows), and what it leaves out is not known to
        be a duplicate."""
        listed = list(warnings or ())
        for _level, code, message in listed:
            if code != _DUPLICATE:
                return self._ignored(int(code), str(message))
        if count > len(listed):
            return self._ignored(0, f"{count} warnings, of which SHOW WARNINGS lists "
                                    f"{len(listed)}, all duplicate keys")
        return None

    def _ignored(self, code: int, message: str) -> Exception:
        text = (f"{message} (on_conflict_do_nothing() is INSERT IGNORE here, which skips such a "
                "row with a warning, where the other databases refuse it: the statement is "
                "refused whole, as there)")
        kind = self._integrity_error if code in _INTEGRITY_KINDS else self._error
        return kind(code, text) if code else kind(text)

    @override
    def changes_session(self, sql: str) -> bool:
        return (super().changes_session(sql)
                or _NEXT_TRANSACTION.match(sql, statement_start(sql)) is not None)

    @override
    def check_in_transaction(self, sql: str) -> None:
        super().check_in_transaction(sql)
        found = _COMMITTING.match(sql, statement_start(sql))
        if found is None or found.group(2):
            return
        keyword = found.group(1).upper()
        raise DialectError(
            f"execute_sql('{keyword} ...') inside transaction(): MySQL and MariaDB commit the "
            f"open transaction before a {keyword} statement (which is never rolled back) and "
            f"run what follows outside any transaction; run the {keyword} outside the "
            "transaction: with engine.execute_sql(), or before transaction() begins"
        )

    @override
    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (self._error,)

    @override
    def ddl_already_done(self, exc: BaseException) -> bool:
        # MySQL 8 has no CREATE INDEX IF NOT EXISTS: an existing index is what was asked for.
        return bool(exc.args) and exc.args[0] == 1061  # ER_DUP_KEYNAME

    @override
    def is_disconnect(self, exc: BaseException) -> bool:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        return isinstance(exc, self._interface_error) or code in _DISCONNECT_ERRORS

    @override
    def translate(self, exc: BaseException, sql: str, params: Sequence[Any]) -> QueryExecutionError:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
        if code is not None:
            message = f"({code}) {message}"
        if code in _LOCK_ERRORS:
            return LockNotAvailable(message, sql, params)
        if code in _CONFLICT_ERRORS:
            return TransactionConflict(message, sql, params)
        if isinstance(exc, self._integrity_error) or code in _INTEGRITY_KINDS:
            found = _KEY_NAME.search(message)
            constraint = found.group(1).rsplit(".", 1)[-1] if found else None
            if constraint is None and code in (1451, 1452, 3819, 4025):
                m = _CONSTRAINT_NAME.search(message)
                constraint = m.group(1) if m else None
            return IntegrityError(message, sql, params, constraint=constraint,
                                  kind=_INTEGRITY_KINDS.get(code or 0, "integrity"))
        return QueryExecutionError(hinted(message, _HINTS.get(code or 0)), sql, params)
