"""The asyncio engine: sessions, transactions and streams whose waits are awaited.

The logic is engine/core.py's, shared with the blocking engine (engine.py); this shell awaits
each driver call. An AsyncEngine is shared by every task of its event loop; an AsyncSession
is one connection, for one task at a time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from ..errors import TempestError, TransactionConflict
from ..statements.base import Statement
from . import core
from .core import EngineCore, SessionCore, Step, Steps, log_ok, log_step, logger, paused, resume
from .drivers.base import AsyncDriver, Listener, ThreadedDriver
from .options import driver_for
from .result import Result
from .url import parse_url

__all__ = ["AsyncEngine", "AsyncSession", "AsyncStream", "create_async_engine"]

R = TypeVar("R")


class AsyncSession(SessionCore):
    """One connection: each execute() commits on its own unless inside transaction()."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        self._io = engine._io
        #: a stream whose loop was left early: closed before the session runs anything else
        self._open_stream: AsyncStream[Any] | None = None

    # -- connection -------------------------------------------------------------------------

    async def _connection(self) -> Any:
        if self._open_stream is not None:
            await self._open_stream.aclose()
        if self._conn is None:
            if self._closed:
                raise self._closed_error()
            self._conn = await self._io.acquire()
        return self._conn

    async def close(self) -> None:
        """Give the connection back to the pool (rolling back an open transaction)."""
        if self._open_stream is not None:
            await self._open_stream.aclose()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            if self._depth and not self._broken:
                try:
                    await self._io.call("rollback", conn)
                except Exception:
                    self._broken = True
            await self._io.release(conn, broken=self._broken)
        self._closed = True

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- running ----------------------------------------------------------------------------

    async def _run(self, sql: str, params: Sequence[object] | None, *,
                   many: list[Sequence[object]] | None = None,
                   returning: bool = False) -> tuple[list[Any] | None, int]:
        """Run one statement, or one per parameter set of `many`: logged, errors translated."""
        conn = await self._connection()
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            if many is None:
                result = await self._io.call("run", conn, sql, params)
            else:
                result = await self._io.call("run_many", conn, sql, many, returning)
        except self._driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, many, started if log else None) from exc
        except TempestError:
            raise
        except core.NOT_DRIVER_ERRORS as exc:
            raise core.bind_failed(exc, sql, params) from exc
        if log:
            log_ok(sql, params, many, started)
        return result  # type: ignore[no-any-return]  # the driver returns (rows, count)

    async def _perform(self, step: Step) -> Any:
        """Run one step of core.py's logic on this session's connection."""
        name, args, sql, params = step
        if name == "run":
            return await self._run(*args)
        if name == "run_many":
            return await self._run(args[0], None, many=args[1], returning=args[2])
        if name == "reconnect":
            await self._io.release(self._conn, broken=True)
            self._conn, self._broken = None, False
            self._conn = await self._io.acquire()
            return self._conn
        conn = self._conn if self._conn is not None else await self._connection()
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            value = await self._io.call(name, conn, *args)
        except self._driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, None, None) from exc
        except TempestError:
            raise
        except core.NOT_DRIVER_ERRORS as exc:
            raise core.bind_failed(exc, sql, params) from exc
        if log:
            log_step(name, args, started)
        return value

    async def _drive(self, steps: Steps, exc: BaseException | None = None) -> Any:
        """Run steps until they pause for the caller or are done (then: what they return)."""
        step, value = resume(steps, None, exc)
        while step is not None and not paused(step):
            try:
                value, exc = await self._perform(step), None
            except BaseException as failed:
                value, exc = None, failed
            step, value = resume(steps, value, exc)
        return step if step is not None else value

    async def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run a statement and fetch its rows, as model instances or Rows."""
        await self._connection()  # first: MySQL and MariaDB are told apart on connecting
        prepared, params = self._plan(stmt)
        if params is None:
            return await self._drive(self._execute_steps(stmt, prepared))  # type: ignore[no-any-return]  # the steps end with this Result
        rows, count = await self._run(prepared.sql, params)
        return prepared.result(rows, count)

    async def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters (the dialect's placeholders)."""
        core.check_sql(sql)
        rows, count = await self._run(sql, core.sql_params(self._driver, params))
        return Result(rows, count, sql)

    def stream(self, stmt: Statement[R], *, chunk_size: int = core.STREAM_CHUNK) -> AsyncStream[R]:
        """The rows of a select as they arrive, chunk_size at a time (async for, async with)."""
        return AsyncStream(self, stmt, chunk_size)

    # -- transactions -----------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self, isolation: str | None = None,
                          read_only: bool = False) -> AsyncIterator[AsyncSession]:
        """BEGIN ... COMMIT, ROLLBACK on any exception; nested, a SAVEPOINT."""
        await self._connection()
        steps = self._transaction_steps(isolation, read_only)
        await self._drive(steps)
        try:
            yield self
        except BaseException as exc:
            await self._drive(steps, exc)
            raise
        await self._drive(steps)


class AsyncStream(Generic[R]):
    """The rows of one select as they arrive: `async for` once; leaving early (break, an
    exception) closes the cursor at the latest when the session runs its next statement or
    closes; `async with` closes it at the end of the block."""

    def __init__(self, session: AsyncSession, stmt: Statement[R], chunk_size: int) -> None:
        self._session = session
        self._stmt = stmt
        self._chunk_size = chunk_size
        self._steps: Steps | None = None
        self._rows: list[Any] = []
        self._at = 0
        self._done = False
        self._closing: asyncio.Future[None] | None = None

    def __aiter__(self) -> AsyncStream[R]:
        return self

    async def __anext__(self) -> R:
        """The next row; a new chunk is fetched when the last one is used up."""
        while self._at >= len(self._rows):
            if self._done:
                raise StopAsyncIteration
            session = self._session
            if self._steps is None:
                await session._connection()
                self._steps = session._stream_steps(self._stmt, self._chunk_size)
                session._open_stream = self
            try:
                out = await session._drive(self._steps)
            except BaseException:
                self._finished()
                raise
            if type(out) is not core.Chunk:
                self._finished()
                raise StopAsyncIteration
            self._rows, self._at = out, 0
        row: R = self._rows[self._at]
        self._at += 1
        return row

    def _finished(self) -> None:
        self._done = True
        self._rows, self._at = [], 0
        if self._session._open_stream is self:
            self._session._open_stream = None

    async def aclose(self) -> None:
        """Close the cursor (and end the transaction stream() began); the session stays."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await self._closing

    async def _close(self) -> None:
        steps, done = self._steps, self._done
        self._finished()
        if steps is not None and not done:
            await self._session._drive(steps, core.StreamClosed())

    async def __aenter__(self) -> AsyncStream[R]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _EngineTransaction:
    """`async with engine.transaction() as tx:` — a session that lives for one transaction."""

    def __init__(self, engine: AsyncEngine, isolation: str | None, read_only: bool) -> None:
        self._session = engine.session()
        self._cm = self._session.transaction(isolation, read_only)

    async def __aenter__(self) -> AsyncSession:
        try:
            return await self._cm.__aenter__()
        except BaseException:
            await self._session.close()
            raise

    async def __aexit__(self, *exc: Any) -> bool | None:
        try:
            return await self._cm.__aexit__(*exc)
        finally:
            await self._session.close()


class AsyncEngine(EngineCore):
    """A database on asyncio: the blocking engine's statements, results, errors and
    transactions, awaited. Shared by the tasks of one event loop."""

    def __init__(self, url: Any, io: AsyncDriver, *, echo: bool = False) -> None:
        super().__init__(url, io.rules, echo=echo)
        self._io = io
        self._disposed = False

    def session(self) -> AsyncSession:
        """A session: one pooled connection, each execute committing on its own."""
        if self._disposed:
            raise TempestError(
                f"{self.url}: this engine was disposed; make a new one with "
                "create_async_engine()"
            )
        return AsyncSession(self)

    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> _EngineTransaction:
        """A transaction on a pooled connection: COMMIT on success, ROLLBACK on exception."""
        return _EngineTransaction(self, isolation, read_only)

    async def run_transaction(self, work: Callable[[AsyncSession], Awaitable[R]], *,
                              retries: int = 3, isolation: str | None = None,
                              read_only: bool = False) -> R:
        """Await `work(tx)` in a transaction and return what it returns, running it again
        after a TransactionConflict up to `retries` more times (as Engine.run_transaction)."""
        core.check_retries(retries)
        for attempt in range(retries + 1):
            try:
                async with self.transaction(isolation, read_only) as tx:
                    return await work(tx)
            except TransactionConflict as exc:
                if attempt == retries:
                    raise
                await asyncio.sleep(core.retry_pause(attempt, retries, exc))
        raise AssertionError("unreachable")  # the last attempt returned or raised

    async def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run one statement in its own session (committed on its own)."""
        async with self.session() as session:
            return await session.execute(stmt)

    async def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters in its own session."""
        async with self.session() as session:
            return await session.execute_sql(sql, params)

    async def _steps_on_a_session(self, make: Callable[[AsyncSession], Steps]) -> None:
        async with self.session() as session:
            await session._connection()
            await session._drive(make(session))

    async def create_all(self, *models: type) -> None:
        """CREATE TABLE and CREATE INDEX IF NOT EXISTS for each model, parents first
        (SchemaError, and nothing created, when an existing table differs)."""
        await self._steps_on_a_session(lambda s: s._create_all_steps(models))

    async def check_schema(self, *models: type) -> None:
        """Compare each model's table with the model; SchemaError lists every difference."""
        await self._steps_on_a_session(lambda s: s._schema_steps(models, False))

    async def drop_all(self, *models: type) -> None:
        """DROP TABLE IF EXISTS for each model, children before the tables they reference."""
        await self._steps_on_a_session(lambda s: s._drop_all_steps(models))

    async def listen(self, channel: str) -> Listener:
        """PostgreSQL: LISTEN on `channel` over a connection of its own (outside the pool);
        `await listener.wait(timeout)` for a NOTIFY, `await listener.close()` at the end.
        DialectError on the other databases, which have no notifications."""
        if self._disposed:
            self.session()  # raises the disposed engine's error
        return await self._io.listen(channel)

    async def dispose(self) -> None:
        """Close every pooled connection; using the engine afterwards raises TempestError."""
        if not self._disposed:
            self._disposed = True
            await self._io.close()

    async def __aenter__(self) -> AsyncEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.dispose()

    def __repr__(self) -> str:
        return f"<AsyncEngine {self.url}>"


def create_async_engine(url: str, *, echo: bool = False, pool_size: int | None = None,
                        pool_timeout: float = 30.0, connect_args: dict[str, Any] | None = None,
                        **options: Any) -> AsyncEngine:
    """An asyncio engine for a database URL (the URLs and options of create_engine()):
    PostgreSQL on psycopg's AsyncConnectionPool, MySQL/MariaDB on asyncmy, SQLite on the
    standard library's sqlite3 run on worker threads. Nothing connects until first used."""
    parsed = parse_url(url)
    driver_class, kwargs = driver_for(parsed, pool_size=pool_size, pool_timeout=pool_timeout,
                                      connect_args=connect_args, options=options)
    io: AsyncDriver
    if parsed.backend == "postgresql":
        from .drivers.psycopg import AsyncPsycopgDriver

        io = AsyncPsycopgDriver(parsed, **kwargs)
    elif parsed.backend == "sqlite":
        rules = driver_class(parsed, **kwargs)
        io = ThreadedDriver(rules, rules._pool.size, float(kwargs["pool_timeout"]), str(parsed))
    else:
        from .drivers.asyncmy import AsyncmyDriver

        io = AsyncmyDriver(parsed, **kwargs)
    return AsyncEngine(parsed, io, echo=echo)
