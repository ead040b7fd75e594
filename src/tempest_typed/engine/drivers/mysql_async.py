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
from .driver_async import AsyncDriver, AsyncPool
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
    # async only: begin
    import asyncmy
    import asyncmy.constants.CLIENT
    import asyncmy.cursors
    import asyncmy.errors
    # async only: end
    # sync: import pymysql
    # sync: import pymysql.cursors
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "create_async_engine('mysql://...') needs asyncmy: pip install 'tempest-typed[async]'"  # sync: "mysql:// and mariadb:// need PyMySQL: pip install 'tempest-typed[mysql]'"
    ) from exc

__all__ = ["AsyncmyDriver"]


# async only: begin
class _Cursor(asyncmy.cursors.Cursor):
    """asyncmy's cursor without its own warning report: after a statement with warnings it
    ran SHOW WARNINGS and logged each to the `asyncmy` logger, printed on stderr when nothing
    is configured. run() logs them itself, as on PyMySQL (DEBUG, tempest_typed.sql)."""

    async def _show_warnings(self, conn: Any) -> None:
        return None


class _SSCursor(asyncmy.cursors.SSCursor):
    """The unbuffered cursor of streams, without its own warning report (see _Cursor)."""

    async def _show_warnings(self, conn: Any) -> None:
        return None


# async only: end
def _close(conn: Any) -> None:
    conn.close()


class AsyncmyDriver(AsyncDriver):
    """asyncmy connections in autocommit mode, pooled; MariaDB or MySQL told apart on connect."""  # sync: """PyMySQL connections in autocommit mode, pooled; MariaDB or MySQL told apart on connect."""

    rules: MySQLRules

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        rules = self.rules = MySQLRules(url, pool_size=pool_size, pool_timeout=pool_timeout,
                                        connect_args=connect_args,
                                        errors=asyncmy.errors)  # sync: errors=pymysql.err)
        self._pool = AsyncPool(self._open, _close, pool_size, pool_timeout, rules._what)
        # The blocking engine may ask for the dialect before its first statement: its rules
        # connect once to learn the server then. The asyncio rules cannot wait there.
        # sync: rules.connect_first = self._connect_once

    async def _connect_once(self) -> None:
        """Connect once, to learn which server this is (MySQL or MariaDB)."""
        await self._pool.release(await self._pool.acquire())

    async def _open(self) -> Any:
        rules = self.rules
        try:
            conn: Any = asyncmy.Connection(**rules._kwargs, cursor_cls=_Cursor)  # type: ignore[no-untyped-call]  # untyped in asyncmy's stub  # sync: conn: Any = pymysql.connect(**rules._kwargs)
            # async only: begin
            # asyncmy asks the server for multi-statements on every connection (its
            # Connection sets CLIENT.MULTI_STATEMENTS), so "...; DROP TABLE t" would run as a
            # second statement; the flag is read at the handshake: take it back before.
            conn._client_flag &= ~asyncmy.constants.CLIENT.MULTI_STATEMENTS
            await conn.connect()
            # async only: end
        except (rules._error, TypeError, ValueError) as exc:  # TypeError, ValueError: a URL
            raise rules._connect_failed(exc) from exc          # option of the wrong type
        server = str(conn.get_server_info())
        statement = ""
        try:
            async with conn.cursor() as cur:
                for statement in setup_statements(server):
                    await cur.execute(statement)
        except rules._error as exc:
            conn.close()
            raise rules._setup_failed(exc, statement) from exc
        rules._know_server(server)
        return conn

    @override
    async def acquire(self) -> Any:
        return await self._pool.acquire()

    @override
    def _in_transaction(self, conn: Any) -> bool:
        return bool(conn.server_status & IN_TRANSACTION)

    @override
    async def _give_back(self, conn: Any, broken: bool) -> None:
        await self._pool.release(conn, broken)

    @override
    async def close(self) -> None:
        await self._pool.close()

    @override
    async def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        async with conn.cursor() as cur:
            count = await cur.execute(sql, params)
            rows = list(await cur.fetchall()) if cur.description is not None else None
            result = cur._result  # the warning count is the result's on both libraries
            if result is not None and result.warning_count:
                ignoring = ignores(sql)
                if ignoring or logger.isEnabledFor(logging.DEBUG):
                    warnings = await conn.show_warnings()
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
    async def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        async with conn.cursor() as cur:
            for sql in begin_statements(isolation, read_only):
                await cur.execute(sql)

    @override
    async def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        # An unbuffered cursor reads rows off the socket as fetched; closing it early reads
        # (and drops) the rest, so the connection is ready for its next statement.
        cur = conn.cursor(_SSCursor)  # sync: cur = conn.cursor(pymysql.cursors.SSCursor)
        await cur.execute(sql, params)
        return cur
