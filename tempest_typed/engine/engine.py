"""The blocking engine: sessions, transactions and streams on the calling thread.

The logic is engine/core.py's, shared with the async engine (aio.py); this shell runs each
driver call and waits for it. An Engine (its pool and its prepared shapes) is shared by
every thread; a Session is one connection, for one thread at a time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from ..errors import TempestError, TransactionConflict
from ..statements.base import Statement
from .core import (
    NOT_DRIVER_ERRORS,
    STREAM_CHUNK,
    Chunk,
    EngineCore,
    SessionCore,
    Step,
    Steps,
    StreamClosed,
    bind_failed,
    check_retries,
    check_sql,
    log_ok,
    log_step,
    logger,
    paused,
    resume,
    retry_pause,
    sql_params,
)
from .options import driver_for
from .result import Result
from .url import parse_url

__all__ = ["Engine", "Session", "Stream", "create_engine"]

R = TypeVar("R")


class Session(SessionCore):
    """One connection: each execute() commits on its own unless inside transaction()."""

    # -- connection -------------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is None:
            if self._closed:
                raise self._closed_error()
            self._conn = self._driver.acquire()
        return self._conn

    def close(self) -> None:
        """Give the connection back to the pool (rolling back an open transaction)."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            if self._depth and not self._broken:
                try:
                    self._driver.rollback(conn)
                except Exception:
                    self._broken = True
            self._driver.release(conn, broken=self._broken)
        self._closed = True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running ----------------------------------------------------------------------------

    def _run(self, sql: str, params: Sequence[object] | None, *,
             many: list[Sequence[object]] | None = None,
             returning: bool = False) -> tuple[list[Any] | None, int]:
        """Run one statement, or one per parameter set of `many`: logged, errors translated."""
        conn = self._connection()
        driver = self._driver
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            if many is None:
                result = driver.run(conn, sql, params)
            else:
                result = driver.run_many(conn, sql, many, returning)
        except driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, many, started if log else None) from exc
        except TempestError:
            raise
        except NOT_DRIVER_ERRORS as exc:
            raise bind_failed(exc, sql, params) from exc
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
        if name == "reconnect":
            self._driver.release(self._conn, broken=True)
            self._conn, self._broken = None, False
            return self._connection()
        driver = self._driver
        conn = self._connection()
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            value = getattr(driver, name)(conn, *args)
        except driver.driver_errors() as exc:
            raise self._failed(exc, sql, params, None, None) from exc
        except TempestError:
            raise
        except NOT_DRIVER_ERRORS as exc:
            raise bind_failed(exc, sql, params) from exc
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
        prepared, params = self._plan(stmt)
        if params is None:
            return self._drive(self._execute_steps(stmt, prepared))  # type: ignore[no-any-return]  # the steps end with this Result
        rows, count = self._run(prepared.sql, params)
        return prepared.result(rows, count)

    def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters (the dialect's placeholders)."""
        check_sql(sql)
        rows, count = self._run(sql, sql_params(self._driver, params))
        return Result(rows, count, sql)

    def stream(self, stmt: Statement[R], *, chunk_size: int = STREAM_CHUNK) -> Stream[R]:
        """The rows of a select as they arrive, chunk_size at a time (for ... in, or with)."""
        return Stream(self, self._stream_steps(stmt, chunk_size))

    # -- transactions -----------------------------------------------------------------------

    @contextmanager
    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> Iterator[Session]:
        """BEGIN ... COMMIT, ROLLBACK on any exception; nested, a SAVEPOINT."""
        self._connection()
        steps = self._transaction_steps(isolation, read_only)
        self._drive(steps)
        try:
            yield self
        except BaseException as exc:
            self._drive(steps, exc)
            raise
        self._drive(steps)


class Stream(Generic[R]):
    """The rows of one select as they arrive: iterate once; leaving early closes the cursor."""

    def __init__(self, session: Session, steps: Steps) -> None:
        self._session = session
        self._steps = steps
        self._started = False
        self._done = False

    def __iter__(self) -> Iterator[R]:
        """The rows, chunk by chunk; a loop left early (break, exception) closes the cursor."""
        try:
            while not self._done:
                self._started = True
                try:
                    out = self._session._drive(self._steps)
                except BaseException:
                    self._done = True  # the steps are over: they closed what they opened
                    raise
                if type(out) is not Chunk:
                    self._done = True
                    return
                yield from out
        finally:
            self.close()

    def close(self) -> None:
        """Close the cursor (and end the transaction stream() began); the session stays."""
        if self._done:
            return
        self._done = True
        if self._started and not self._session._closed:
            self._session._drive(self._steps, StreamClosed())
        else:  # never started, or its session (and the cursor with it) is gone already
            self._steps.close()

    def __enter__(self) -> Stream[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _EngineTransaction:
    """`with engine.transaction() as tx:` — a session that lives for one transaction."""

    def __init__(self, engine: Engine, isolation: str | None, read_only: bool) -> None:
        self._session = Session(engine)
        self._cm = self._session.transaction(isolation, read_only)

    def __enter__(self) -> Session:
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

    Shared by every thread; each thread opens its own sessions."""

    def session(self) -> Session:
        """A session: one pooled connection, each execute committing on its own."""
        return Session(self)

    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> _EngineTransaction:
        """A transaction on a pooled connection: COMMIT on success, ROLLBACK on exception."""
        return _EngineTransaction(self, isolation, read_only)

    def run_transaction(self, work: Callable[[Session], R], *, retries: int = 3,
                        isolation: str | None = None, read_only: bool = False) -> R:
        """Run `work(tx)` in a transaction and return what it returns; when the database
        aborts it as a deadlock victim or a serialization failure (TransactionConflict), roll
        back and run it again, up to `retries` more times, after a short random pause.

        `work` must be safe to run again: only its database writes are undone.
        """
        check_retries(retries)
        for attempt in range(retries + 1):
            try:
                with self.transaction(isolation, read_only) as tx:
                    return work(tx)
            except TransactionConflict as exc:
                if attempt == retries:
                    raise
                time.sleep(retry_pause(attempt, retries, exc))
        raise AssertionError("unreachable")  # the last attempt returned or raised

    def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run one statement in its own session (committed on its own)."""
        with self.session() as session:
            return session.execute(stmt)

    def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters in its own session."""
        with self.session() as session:
            return session.execute_sql(sql, params)

    def create_all(self, *models: type) -> None:
        """CREATE TABLE and CREATE INDEX IF NOT EXISTS for each model, parents first.

        A table that already exists is compared with its model first: if any differs, a
        SchemaError lists every difference and nothing is created.
        """
        with self.session() as session:
            session._drive(session._create_all_steps(models))

    def check_schema(self, *models: type) -> None:
        """Compare each model's table with the model; SchemaError lists every difference
        (a missing table, a missing or extra column, a changed type or nullability)."""
        with self.session() as session:
            session._drive(session._schema_steps(models, False))

    def drop_all(self, *models: type) -> None:
        """DROP TABLE IF EXISTS for each model, children before the tables they reference."""
        with self.session() as session:
            session._drive(session._drop_all_steps(models))

    def close(self) -> None:
        """Close every pooled connection."""
        self._driver.close()

    def dispose(self) -> None:
        """Close every pooled connection (the async engine's name for close())."""
        self.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Engine {self.url}>"


def create_engine(url: str, *, echo: bool = False, pool_size: int | None = None,
                  pool_timeout: float = 30.0, connect_args: dict[str, Any] | None = None,
                  **options: Any) -> Engine:
    """An engine for a database URL: postgresql://, mysql:// or mariadb://, sqlite:///path.

    Every option is checked before anything connects (see engine/options.py for which
    database takes which): an unknown one, or one another database owns, is a
    ConfigurationError.
    """
    parsed = parse_url(url)
    driver_class, kwargs = driver_for(parsed, pool_size=pool_size, pool_timeout=pool_timeout,
                                      connect_args=connect_args, options=options)
    return Engine(parsed, driver_class(parsed, **kwargs), echo=echo)
