# Generated from src/tempest_typed/engine/drivers/mysql_async.py by tools/async_to_sync.py: do not edit.
# Change the asyncio source and run `python tools/async_to_sync.py`.
"""MySQL 8 and MariaDB on asyncio through asyncmy: the connections, written once.

asyncmy is a Cython port of PyMySQL, with the same connection, cursor and error API, so this
asyncio module (AsyncmyDriver) is the source of mysql.py (PyMySQLDriver), which
tools/async_to_sync.py writes from it: a few marked lines give the blocking spelling of the
calls that differ (the library imported, how a connection is made, the unbuffered cursor
class). What does not wait (options, value adapters, error translation, which server answered)
is mysql_rules.py's MySQLRules, which both share. Against aiomysql (PyMySQL's own code on
asyncio) asyncmy fetched a 20,000-row result 7x faster with the same round-trip time
(bench/bench_mysql_async.py; BENCHMARKS.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from typing_extensions import override

from ...errors import ConfigurationError
from ..url import DatabaseURL
from .driver import Driver, Pool
from .mysql_rules import (
    IN_TRANSACTION,
    MySQLRules,
    begin_statements,
    ignores,
    log_warnings,
    logger,
    setup_statements,
    upsert_count,
)

try:
    import pymysql
    import pymysql.cursors
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "mysql:// and mariadb:// need PyMySQL: pip install 'tempest-typed[mysql]'"
    ) from exc

__all__ = ["PyMySQLDriver"]


def _close(conn: Any) -> None:
    conn.close()


class PyMySQLDriver(Driver):
    """PyMySQL connections in autocommit mode, pooled; MariaDB or MySQL told apart on connect."""

    rules: MySQLRules

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        rules = self.rules = MySQLRules(url, pool_size=pool_size, pool_timeout=pool_timeout,
                                        connect_args=connect_args,
                                        errors=pymysql.err)
        self._pool = Pool(self._open, _close, pool_size, pool_timeout, rules._what)
        # The blocking engine may ask for the dialect before its first statement: its rules
        # connect once to learn the server then. The asyncio rules cannot wait there.
        rules.connect_first = self._connect_once

    def _connect_once(self) -> None:
        """Connect once, to learn which server this is (MySQL or MariaDB)."""
        self._pool.release(self._pool.acquire())

    def _open(self) -> Any:
        rules = self.rules
        try:
            conn: Any = pymysql.connect(**rules._kwargs)
        except (rules._error, TypeError, ValueError) as exc:  # TypeError, ValueError: a URL
            raise rules._connect_failed(exc) from exc          # option of the wrong type
        server = str(conn.get_server_info())
        statement = ""
        try:
            with conn.cursor() as cur:
                for statement in setup_statements(server):
                    cur.execute(statement)
        except rules._error as exc:
            conn.close()
            raise rules._setup_failed(exc, statement) from exc
        rules._know_server(server)
        return conn

    @override
    def acquire(self) -> Any:
        return self._pool.acquire()

    @override
    def _in_transaction(self, conn: Any) -> bool:
        return bool(conn.server_status & IN_TRANSACTION)

    @override
    def _give_back(self, conn: Any, broken: bool) -> None:
        self._pool.release(conn, broken)

    @override
    def close(self) -> None:
        self._pool.close()

    @override
    def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        with conn.cursor() as cur:
            count = cur.execute(sql, params)
            rows = list(cur.fetchall()) if cur.description is not None else None
            result = cur._result  # the warning count is the result's on both libraries
            if result is not None and result.warning_count:
                ignoring = ignores(sql)
                if ignoring or logger.isEnabledFor(logging.DEBUG):
                    warnings = conn.show_warnings()
                    log_warnings(sql, warnings)
                    failed = (self.rules.ignored_error(warnings, result.warning_count)
                              if ignoring else None)
                    if failed is not None:
                        raise failed
            if rows is not None and result is not None:
                # the result (kept by the connection until its next statement) and the
                # cursor hold the fetched tuples: let them go, so that each is freed as its
                # row is made (the two alive together were a double peak)
                cur._rows = result.rows = None
            if count > 1 and result is not None:
                count = upsert_count(sql, count, result.message)
            return rows, count

    @override
    def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        with conn.cursor() as cur:
            for sql in begin_statements(isolation, read_only):
                cur.execute(sql)

    @override
    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        # An unbuffered cursor reads rows off the socket as fetched; closing it early reads
        # (and drops) the rest, so the connection is ready for its next statement.
        cur = conn.cursor(pymysql.cursors.SSCursor)
        cur.execute(sql, params)
        return cur
