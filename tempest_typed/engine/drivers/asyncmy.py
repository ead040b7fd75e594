"""MySQL 8 and MariaDB on asyncio through asyncmy. The only file importing asyncmy.

asyncmy is a Cython port of PyMySQL: the same connection options, the same error classes
and codes, the same values fetched. So the blocking driver (mysql.py) is this driver's
rules: its options, value adapters and error translation serve both engines. Against
aiomysql (PyMySQL's own code on asyncio) it fetched a 20,000-row result 7x faster with the
same round-trip time (bench/bench_mysql_async.py; BENCHMARKS.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from typing_extensions import override

from ...dialects import Dialect
from ...errors import ConfigurationError, TempestError
from ..url import DatabaseURL
from .base import AsyncDriver, AsyncPool
from .mysql import SETUP, PyMySQLDriver, begin_statements, log_warnings, logger

try:
    import asyncmy
    import asyncmy.constants.CLIENT
    import asyncmy.cursors
    import asyncmy.errors
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "create_async_engine('mysql://...') needs asyncmy: pip install 'tempest-typed[async]'"
    ) from exc

__all__ = ["AsyncmyDriver"]


class _Cursor(asyncmy.cursors.Cursor):
    """asyncmy's cursor without its own warning report: after a statement with warnings it
    ran SHOW WARNINGS and logged each to the `asyncmy` logger, printed on stderr when nothing
    is configured. run() logs them as the blocking driver does (DEBUG, tempest_typed.sql)."""

    async def _show_warnings(self, conn: Any) -> None:
        return None


class _SSCursor(asyncmy.cursors.SSCursor):
    """The unbuffered cursor of streams, without its own warning report (see _Cursor)."""

    async def _show_warnings(self, conn: Any) -> None:
        return None


class _AsyncmyRules(PyMySQLDriver):
    """The blocking driver's rules, reading asyncmy's exception classes."""

    _error: ClassVar[type[Exception]] = asyncmy.errors.Error
    _integrity_error: ClassVar[type[Exception]] = asyncmy.errors.IntegrityError
    _interface_error: ClassVar[type[Exception]] = asyncmy.errors.InterfaceError

    @override
    @property
    def dialect(self) -> Dialect:  # type: ignore[override]  # Driver declares it an attribute
        # The blocking driver connects to find out; here that is the async engine's first
        # connection, which every statement awaits before it is compiled.
        if self._dialect is None:
            raise TempestError(
                "MySQL or MariaDB is known once the async engine has connected: await a "
                "statement first (await engine.execute_sql('SELECT 1')), or say mariadb://"
            )
        return self._dialect


class AsyncmyDriver(AsyncDriver):
    """asyncmy connections in autocommit mode, pooled; MariaDB or MySQL told apart on connect."""

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        rules = self.rules = self._rules = _AsyncmyRules(
            url, pool_size=pool_size, pool_timeout=pool_timeout, connect_args=connect_args)
        self._pool = AsyncPool(self._open, lambda c: c.close(), pool_size, pool_timeout,
                               rules._what)

    async def _open(self) -> Any:
        rules = self._rules
        try:
            conn: Any = asyncmy.Connection(**rules._kwargs, cursor_cls=_Cursor)  # type: ignore[no-untyped-call]  # untyped in asyncmy's stub
            # asyncmy asks the server for multi-statements on every connection (its
            # Connection sets CLIENT.MULTI_STATEMENTS), so "...; DROP TABLE t" would run as a
            # second statement; the flag is read at the handshake: take it back before.
            conn._client_flag &= ~asyncmy.constants.CLIENT.MULTI_STATEMENTS
            await conn.connect()
        except (asyncmy.errors.Error, TypeError, ValueError) as exc:
            raise rules._connect_failed(exc) from exc
        try:
            async with conn.cursor() as cur:
                await cur.execute(SETUP)
        except asyncmy.errors.Error as exc:
            conn.close()
            raise rules._setup_failed(exc) from exc
        rules._know_server(str(conn.get_server_info()))
        return conn

    @override
    async def acquire(self) -> Any:
        return await self._pool.acquire()

    @override
    async def release(self, conn: Any, *, broken: bool = False) -> None:
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
            result = cur._result
            if (result is not None and result.warning_count
                    and logger.isEnabledFor(logging.DEBUG)):
                log_warnings(sql, await conn.show_warnings())
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
        cur = conn.cursor(_SSCursor)
        await cur.execute(sql, params)
        return cur
