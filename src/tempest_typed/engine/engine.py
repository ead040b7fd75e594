# Generated from src/tempest_typed/engine/aio.py by tools/async_to_sync.py: do not edit.
# Change the asyncio source and run `python tools/async_to_sync.py`.
"""Sessions, transactions and streams on a driver that waits: the engine's shell.

The logic is engine/core.py's; this shell only waits for each driver call. It is written
once, for asyncio (aio.py: AsyncEngine, AsyncSession), and the blocking engine (engine.py:
Engine, Session) is generated from it by tools/async_to_sync.py. An engine is shared by every
thread or task; a session is one connection, for one thread or task at a time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from ..errors import ConfigurationError, TempestError, TransactionAborted, TransactionConflict
from ..statements.base import Statement
from . import core
from .core import EngineCore, SessionCore, Step, Steps, log_ok, log_step, logger, paused, resume
from .drivers.driver import Driver
from .options import driver_for
from .result import Result
from .streams import Stream
from .url import parse_url

__all__ = ["Engine", "Session", "Stream", "create_engine"]

R = TypeVar("R")


class Session(SessionCore):
    """One connection: each execute() commits on its own unless inside transaction()."""


    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._owner = engine
        self._io = engine._io

    # -- connection -------------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is None:
            if self._closed:
                raise self._closed_error()
            if self._owner._disposed:  # a connection is the engine's, and it is closed
                raise self._owner._disposed_error()
            self._conn = self._io.acquire()
        return self._conn

    def close(self) -> None:
        """Give the connection back to the pool (rolling back an open transaction)."""
        self._hold()
        try:
            if self._stream is not None:
                try:
                    self._drive(self._settle_stream_steps(0, failed=bool(self._depth)))
                except TempestError:
                    self._broken = True
            if self._conn is not None:
                try:
                    self._drive(self._release_steps())
                except Exception:
                    self._broken = True
                conn, self._conn = self._conn, None
                self._io.release(conn, broken=self._broken or self._changed)
            else:
                self._depth, self._owed = 0, []
            self._closed = True
        finally:
            self._unhold()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running ----------------------------------------------------------------------------

    def _run(self, sql: str, params: Sequence[object] | None, *,
                   many: list[Sequence[object]] | None = None,
                   returning: bool = False, copy: bool = False,
                   types: Sequence[str] | None = None,
                   together: list[tuple[str, Sequence[object]]] | None = None) -> Any:
        """Run one statement, one per parameter set of `many`, or a bulk copy of the rows
        `many` (`copy`; binary, of these column `types`, when given): (its rows or None, rows
        affected). Or the statements `together` (`sql` their text, `params` all their values):
        a list of those. Logged, errors translated."""
        conn = self._connection()
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            if together is not None:
                result: Any = self._io.run_together(conn, together)
            elif many is None:
                result = self._io.run(conn, sql, params)
            elif copy:
                result = self._io.copy_rows(conn, sql, many, types)
            else:
                result = self._io.run_many(conn, sql, many, returning)
        except self._driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, many, started if log else None) from exc
        except TempestError:
            raise
        except core.NOT_DRIVER_ERRORS as exc:
            raise core.bind_failed(exc, sql, params) from exc
        except BaseException:
            # Interrupted (cancelled, KeyboardInterrupt) with the statement under way: the
            # connection may be halfway through a reply, which the next user would read.
            self._broken |= self._driver.interrupt_breaks_connection
            raise
        if log:
            log_ok(sql, params, many, started)
        return result

    def _perform(self, step: Step) -> Any:
        """Run one step of core.py's logic on this session's connection."""
        name, args, sql, params = step
        if name == "run":
            return self._run(*args)
        if name == "run_many":
            return self._run(args[0], None, many=args[1], returning=args[2])
        if name == "copy_rows":
            return self._run(args[0], None, many=args[1], copy=True, types=args[2])
        if name == "run_together":
            return self._run(sql, params, together=args[0])
        if name == "reconnect":
            self._io.release(self._conn, broken=True)
            self._conn, self._broken = None, False
            self._conn = self._io.acquire()
            return self._conn
        conn = self._conn if self._conn is not None else self._connection()
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            value = self._io.call(name, conn, *args)
        except self._driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, None, None) from exc
        except TempestError:
            raise
        except core.NOT_DRIVER_ERRORS as exc:
            raise core.bind_failed(exc, sql, params) from exc
        except BaseException:
            self._broken |= self._driver.interrupt_breaks_connection  # as in _run()
            raise
        if log:
            log_step(name, args, started)
        return value

    def _drive(self, steps: Steps, exc: BaseException | None = None) -> Any:
        """Run steps until they pause for the caller or are done (then: what they return)."""
        step, value = resume(steps, None, exc)
        while step is not None and not paused(step):
            try:
                value, exc = self._perform(step), None
            except BaseException as failed:
                value, exc = None, failed
            step, value = resume(steps, value, exc)
        return step if step is not None else value

    def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run a statement and fetch its rows, as model instances or Rows."""
        self._hold()
        try:
            if self._stream is not None:
                self._drive(self._settle_stream_steps())
            self._connection()  # first: MySQL and MariaDB are told apart on connecting
            prepared, params = self._plan(stmt)
            if params is None:
                return self._drive(self._execute_steps(stmt, prepared))  # type: ignore[no-any-return]  # the steps end with this Result
            if prepared.atomic and not self._depth:
                return self._drive(self._atomic_steps(prepared, params))  # type: ignore[no-any-return]  # the steps end with this Result
            rows, count = self._run(prepared.sql, params)
            return prepared.result(rows, count)
        finally:
            self._unhold()

    def _execute_together(self, stmts: Sequence[Statement[Any]]) -> list[Result[Any]]:
        """Run statements in order as one transaction, sent in one round trip where the
        driver pipelines them (PostgreSQL): their Results."""
        self._hold()
        try:
            if self._stream is not None:
                self._drive(self._settle_stream_steps())
            self._connection()
            return self._drive(self._together_steps(stmts))  # type: ignore[no-any-return]  # the steps end with the Results
        finally:
            self._unhold()

    def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters (the dialect's placeholders)."""
        core.check_sql(sql)
        bound = core.sql_params(self._driver, params)
        self._hold()
        try:
            if self._depth:
                self._driver.check_in_transaction(sql)
            self._changed |= self._driver.changes_session(sql)
            if self._stream is not None:
                self._drive(self._settle_stream_steps())
            self._check_usable()
            rows, count = self._run(sql, bound)
            return Result(rows, count, sql)
        finally:
            self._unhold()

    def stream(self, stmt: Statement[R], *, chunk_size: int = core.STREAM_CHUNK) -> Stream[R]:
        """The rows of a select as they arrive, chunk_size at a time (iterate it once)."""
        size = core.check_chunk_size(chunk_size)
        self._hold()  # refused at once while another thread or task uses the session
        self._unhold()
        return Stream(self, stmt, size)

    def _next_chunk(self, stream: Stream[Any]) -> core.Chunk | None:
        """The next rows of `stream` (opening its cursor on first use), None at its end."""
        self._hold()
        try:
            state = stream._state
            if state is None:
                if self._stream is not None:
                    self._drive(self._settle_stream_steps())
                self._connection()
                state = stream._state = self._open_stream_state(
                    stream, stream._stmt, stream._chunk_size)
            return self._drive(self._next_chunk_steps(state))  # type: ignore[no-any-return]  # the steps end with a Chunk or None
        finally:
            self._unhold()

    def _close_stream(self, state: core.StreamState) -> None:
        """Close a stream's cursor (the stream's loop was left)."""
        self._hold()
        try:
            self._drive(self._close_stream_steps(state))
        finally:
            self._unhold()

    # -- transactions -----------------------------------------------------------------------

    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> _SessionTransaction:
        """BEGIN ... COMMIT, ROLLBACK on any exception; nested, a SAVEPOINT.

        A statement that fails inside makes the transaction (or this savepoint) able only
        to roll back: later statements and the block's normal end raise TransactionAborted.
        """
        return _SessionTransaction(self._transaction(isolation, read_only))

    @contextmanager
    def _transaction(self, isolation: str | None,
                           read_only: bool) -> Iterator[Session]:
        self._hold()
        try:
            if self._stream is not None:
                self._drive(self._settle_stream_steps())
            self._connection()
            steps = self._transaction_steps(isolation, read_only)
            self._drive(steps)
            level = self._depth
            try:
                yield self
            except BaseException as exc:
                try:
                    if self._stream is not None:
                        self._drive(self._settle_stream_steps(level, failed=True))
                    self._drive(steps, exc)
                finally:
                    if self._owed:  # the block was left by GeneratorExit
                        self._drive(self._owed_steps())
                raise
            if self._stream is not None:
                self._drive(self._settle_stream_steps(level, self._level_fails(level)))
            self._drive(steps)
        finally:
            self._unhold()


class _SessionTransaction:
    """A session's transaction() block (a savepoint when nested), entered once."""

    __slots__ = ("_cm", "_entered")

    def __init__(self, cm: AbstractContextManager[Session]) -> None:
        self._cm = cm
        self._entered = False

    def __enter__(self) -> Session:
        if self._entered:
            # its block ran (a reused generator said only AttributeError: 'args')
            raise TempestError(
                "this session.transaction() has run its block; each transaction is used once: "
                "call session.transaction() again for the next one")
        self._entered = True
        return self._cm.__enter__()

    def __exit__(self, *exc: Any) -> bool | None:
        return self._cm.__exit__(*exc)


class _EngineTransaction:
    """`async with engine.transaction() as tx:` — a session that lives for one transaction."""

    def __init__(self, engine: Engine, isolation: str | None, read_only: bool) -> None:
        self._session = engine.session()
        self._cm = self._session.transaction(isolation, read_only)

    def __enter__(self) -> Session:
        if self._session._closed:
            # its block ran (a reused generator said only AttributeError: 'args')
            raise TempestError(
                "this engine.transaction() has run its block; each transaction is used once: "
                "call engine.transaction() again for the next one")
        try:
            return self._cm.__enter__()
        except BaseException:
            self._session.close()
            raise

    def __exit__(self, *exc: Any) -> bool | None:
        try:
            return self._cm.__exit__(*exc)
        finally:
            self._session.close()


class Engine(EngineCore):
    """A database: its dialect, a pool of connections, and the prepared statement shapes.

    Shared by every thread (the blocking engine) or by the tasks of one event loop."""

    def __init__(self, url: Any, io: Driver, *, echo: bool = False) -> None:
        super().__init__(url, io.rules, echo=echo)
        self._io = io
        self._disposed = False

    def session(self) -> Session:
        """A session: one pooled connection, each execute committing on its own."""
        if self._disposed:
            raise self._disposed_error()
        return Session(self)

    def _disposed_error(self) -> ConfigurationError:
        return ConfigurationError(
            f"{self.url}: the engine is closed (disposed); make a new one with "
            "create_engine()"
        )

    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> _EngineTransaction:
        """A transaction on a pooled connection: COMMIT on success, ROLLBACK on exception."""
        return _EngineTransaction(self, isolation, read_only)

    def run_transaction(self, work: Callable[[Session], R], *,
                              retries: int = 3, isolation: str | None = None,
                              read_only: bool = False) -> R:
        """Run `work(tx)` in a transaction and return what it returns; when the database
        aborts it as a deadlock victim or a serialization failure (TransactionConflict), roll
        back and run it again, up to `retries` more times, after a short random pause.

        `work` must be safe to run again: only its database writes are undone.
        """
        core.check_work(work, blocking=True)
        core.check_retries(retries)
        core.check_transaction_options(isolation, read_only)
        for attempt in range(retries + 1):
            try:
                with self.transaction(isolation, read_only) as tx:
                    made = work(tx)
                    core.check_made(made, blocking=True)
                    return made
            except (TransactionConflict, TransactionAborted) as exc:
                conflict = core.conflict_of(exc)
                if conflict is None or attempt == retries:
                    raise
                time.sleep(core.retry_pause(attempt, retries, conflict))
        raise AssertionError("unreachable")  # the last attempt returned or raised

    def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run one statement in its own session (committed on its own)."""
        with self.session() as session:
            return session.execute(stmt)

    def _execute_together(self, stmts: Sequence[Statement[Any]]) -> list[Result[Any]]:
        """Run statements in order as one transaction, in their own session."""
        with self.session() as session:
            return session._execute_together(stmts)

    def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters in its own session."""
        with self.session() as session:
            return session.execute_sql(sql, params)

    def _steps_on_a_session(self, make: Callable[[Session], Steps]) -> None:
        with self.session() as session:
            session._connection()
            session._drive(make(session))

    def create_all(self, *models: type) -> None:
        """CREATE TABLE and CREATE INDEX IF NOT EXISTS for each model, parents first.

        A table that already exists is compared with its model first: if any differs, a
        SchemaError lists every difference and nothing is created.
        """
        self._steps_on_a_session(lambda s: s._create_all_steps(models))

    def check_schema(self, *models: type) -> None:
        """Compare each model's table with the model; SchemaError lists every difference
        (a missing table, a missing or extra column, a changed type or nullability)."""
        self._steps_on_a_session(lambda s: s._schema_steps(models, False))

    def drop_all(self, *models: type) -> None:
        """DROP TABLE IF EXISTS for each model, children before the tables they reference."""
        self._steps_on_a_session(lambda s: s._drop_all_steps(models))

    def dispose(self) -> None:
        """Close every pooled connection; using the engine afterwards raises TempestError."""
        if not self._disposed:
            self._disposed = True
            self._io.close()

    close = dispose

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"


def create_engine(url: str, *, echo: bool = False, pool_size: int | None = None,
                        pool_timeout: float = 30.0, connect_args: dict[str, Any] | None = None,
                        **options: Any) -> Engine:
    """An engine for a database URL: postgresql://, mysql:// or mariadb://, sqlite:///path.

    Every option is checked before anything connects (see engine/options.py for which
    database takes which, and which driver serves each): an unknown one, or one another
    database owns, is a ConfigurationError.
    """
    parsed = parse_url(url)
    io = driver_for(parsed, pool_size=pool_size, pool_timeout=pool_timeout,
                          connect_args=connect_args, options=options)
    return Engine(parsed, io, echo=echo)
