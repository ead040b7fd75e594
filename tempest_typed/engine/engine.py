"""Engines, sessions and transactions: where compiled statements meet a connection.

The engine owns the driver (and its pool) and, per statement shape, the prepared form of a
statement for that driver: SQL text, the adapter of each parameter, and the row builder. Both
are resolved once per shape, so executing a statement again costs a cache lookup, the value
adaptation and the driver's own work.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from ..dialects import CompiledShape, Dialect
from ..dialects.ddl import create_statements
from ..errors import (
    ConfigurationError,
    QueryExecutionError,
    TempestError,
    TransactionConflict,
    ValidationError,
)
from ..statements.base import Statement
from ..statements.delete import Delete
from ..statements.nodes import ConflictUpdate, InsertStatement, RowParams, StatementNode
from ..statements.update import Update
from . import schema
from .drivers.base import Driver
from .options import driver_options
from .result import Result, row_builder
from .types import Adapter
from .url import DatabaseURL, parse_url

__all__ = ["Engine", "Session", "create_engine"]

logger = logging.getLogger("tempest_typed.sql")

R = TypeVar("R")

_MAX_LOGGED_PARAM = 80


class _Prepared:
    """A statement shape made ready for one driver."""

    __slots__ = ("batch", "binders", "build", "order", "passes_values", "sql")

    def __init__(self, shape: CompiledShape, driver: Driver, dialect: Dialect) -> None:
        self.sql = shape.sql
        self.order = shape.order
        #: for a multi-row insert the driver runs faster one row per statement: the one-row
        #: form, the number of rows, their width and where their values start
        self.batch: tuple[_Prepared, int, int, int] | None = None
        binders = tuple(driver.bind_adapter(k) for k in shape.kinds)
        self.binders: tuple[Adapter | None, ...] | None = (
            binders if any(b is not None for b in binders) else None
        )
        self.build = row_builder(shape.result, driver.result)
        #: the statement's values are the parameters as they are (in order, none adapted)
        self.passes_values = shape.in_order and self.binders is None

    def rows_only(self, start: int, n_values: int) -> bool:
        """True when the values are rows alone (from 0, n_values of them), in order, none
        adapted: the parameters are then a slice of the values."""
        return self.passes_values and start == 0 and len(self.order) == n_values

    def params(self, values: Sequence[object],
               order: Sequence[int] | None = None) -> list[object]:
        if order is None:
            order = self.order
        if self.binders is None:
            return [values[i] for i in order]
        out: list[object] = []
        for i, bind in zip(order, self.binders, strict=True):
            v = values[i]
            out.append(bind(v) if bind is not None and v is not None else v)
        return out


def _shown(params: Sequence[object] | None, many: list[Sequence[object]] | None) -> str:
    """The parameters as the SQL log shows them."""
    if many is not None:
        return f"x {len(many)} parameter sets"
    return _short_params(params or ())


def _short_params(params: Sequence[object]) -> str:
    shown = []
    for p in params[:20]:
        text = repr(p)
        shown.append(text if len(text) <= _MAX_LOGGED_PARAM else text[:_MAX_LOGGED_PARAM - 3] + "...")
    more = f", ... ({len(params)} parameters)" if len(params) > 20 else ""
    return "(" + ", ".join(shown) + more + ")"


_CONTROL = {
    "begin": "BEGIN", "commit": "COMMIT", "rollback": "ROLLBACK", "savepoint": "SAVEPOINT",
    "release_savepoint": "RELEASE SAVEPOINT", "rollback_to": "ROLLBACK TO SAVEPOINT",
}


def _control_text(fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
    """How a transaction-control call reads in the SQL log."""
    name = getattr(fn, "__name__", "transaction")
    text = _CONTROL.get(name, name)
    if name == "begin":
        isolation, read_only = args[0], args[1]
        text += f" ISOLATION LEVEL {isolation}" if isolation else ""
        text += " READ ONLY" if read_only else ""
    elif args:
        text += f" {args[0]}"
    return text


def _check_params(params: object) -> None:
    """Refuse execute_sql() parameters that are not a sequence of values.

    A str or bytes is a sequence too, of characters or of ints: `execute_sql(sql, "1")` would
    bind each character as a parameter of its own.
    """
    if isinstance(params, str | bytes | bytearray | memoryview):
        shown = _short_params((params,))[1:-1]
        raise ValidationError(
            f"execute_sql(sql, {shown}): params is a {type(params).__name__}, which would "
            "bind each of its items as a parameter of its own; pass a tuple or list of "
            f"values, one per placeholder: execute_sql(sql, ({shown},))"
        )
    if not isinstance(params, Sequence):
        raise ValidationError(
            f"execute_sql(sql, params): params is a {type(params).__name__}; pass a tuple or "
            "list of values, one per placeholder, in order (named parameters are not taken)"
        )


class Session:
    """One connection: each execute() commits on its own unless inside transaction()."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._driver = engine._driver
        self._conn: Any = None
        self._broken = False
        self._depth = 0
        self._savepoints = 0
        self._closed = False

    # -- connection -------------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is None:
            if self._closed:
                raise TempestError("this session is closed; open a new one with engine.session()")
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

    # -- execution --------------------------------------------------------------------------

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
            if driver.is_disconnect(exc):
                self._broken = True
            if many is not None:
                # Which row failed is not told: the error carries every row's parameters.
                params = [v for p in many for v in p]
            if log:
                logger.info("%s %s failed after %.3f ms: %s", sql, _shown(params, many),
                            (time.perf_counter() - started) * 1000, exc)
            raise driver.translate(exc, sql, params or ()) from exc
        if log:
            logger.info("%s %s %.3f ms", sql, _shown(params, many),
                        (time.perf_counter() - started) * 1000)
        return result

    def execute(self, stmt: Statement[R]) -> Result[R]:
        """Run a statement and fetch its rows, as model instances or Rows."""
        if (type(stmt) is Update or type(stmt) is Delete) and not stmt.guarded:
            kind = "update" if type(stmt) is Update else "delete"
            raise ValidationError(
                f"{kind}({stmt._meta.name}) has no where(): it would change every row. Add "
                f"where(...), or call .unguarded() to say that every row is meant"
            )
        engine = self._engine
        prepared = engine._prepared_for(stmt)
        if prepared.batch is not None:
            return self._execute_batch(prepared, prepared.batch, stmt._values,
                                       getattr(stmt, "_tuples", None))
        values = stmt._values
        params = values if prepared.passes_values else prepared.params(values)
        if len(params) > engine._max_params:
            return self._execute_in_chunks(stmt, len(params))
        rows, count = self._run(prepared.sql, params)
        if prepared.build is not None:
            # MariaDB answers a DELETE ... RETURNING that matched nothing with no result set.
            rows = prepared.build(rows) if rows is not None else []
        return Result(rows, count, prepared.sql)

    def _execute_batch(self, prepared: _Prepared, batch: tuple[_Prepared, int, int, int],
                       values: tuple[object, ...],
                       tuples: list[tuple[Any, ...]] | None) -> Result[Any]:
        """A multi-row insert as the one-row statement run once per row, atomically."""
        single, n_rows, width, start = batch
        param_sets: list[Sequence[object]]
        if not single.rows_only(start, width):
            end = start + width
            param_sets = [
                single.params(values, [i + first if start <= i < end else i for i in single.order])
                for first in range(0, n_rows * width, width)
            ]
        elif tuples is not None:
            param_sets = tuples  # type: ignore[assignment]
        else:
            param_sets = [values[i:i + width] for i in range(0, n_rows * width, width)]
        returning = prepared.build is not None
        if self._depth:
            fetched, count = self._run(single.sql, None, many=param_sets, returning=returning)
        else:
            with self.transaction():
                fetched, count = self._run(single.sql, None, many=param_sets,
                                           returning=returning)
        rows = None
        if prepared.build is not None:
            rows = prepared.build(fetched) if fetched is not None else []
        return Result(rows, count, prepared.sql)

    def _execute_in_chunks(self, stmt: Statement[R], n_params: int) -> Result[R]:
        """A multi-row insert too large for one statement, as several in one transaction."""
        engine = self._engine
        key = stmt._key()
        rows = key.rows if isinstance(key, InsertStatement) else None
        if not isinstance(key, InsertStatement) or not isinstance(rows, RowParams):
            raise ValidationError(
                f"this statement binds {n_params} parameters, more than {engine.dialect.name} "
                f"takes ({engine._max_params}); split it (e.g. a shorter `in` list)"
            )
        n_rows, start = rows.n_rows, rows.start
        width = len(key.columns)
        per_chunk = max(1, (engine._max_params - (n_params - n_rows * width)) // width)
        values = stmt._values
        out_rows: list[Any] | None = None
        count = 0
        sql = ""
        with self.transaction():
            for first in range(0, n_rows, per_chunk):
                size = min(per_chunk, n_rows - first)
                chunk_key = key._replace(rows=RowParams(size, start))
                prepared = engine._prepared_for_key(chunk_key)
                shift = first * width
                end = start + size * width
                if prepared.rows_only(start, end):
                    params: Sequence[object] = values[shift:shift + end]
                else:
                    order = [i + shift if start <= i < end else i for i in prepared.order]
                    params = prepared.params(values, order)
                fetched, affected = self._run(prepared.sql, params)
                count += max(affected, 0)
                sql = prepared.sql
                if fetched is not None and prepared.build is not None:
                    out_rows = (out_rows or []) + prepared.build(fetched)
        return Result(out_rows, count, sql)

    def execute_sql(self, sql: str, params: Sequence[object] = ()) -> Result[Any]:
        """Run hand-written SQL with bound parameters (the dialect's placeholders)."""
        _check_params(params)
        # No parameters: pass None, so that a literal % in the SQL is not read as a placeholder.
        rows, count = self._run(sql, tuple(params) if params else None)
        return Result(rows, count, sql)

    # -- transactions -----------------------------------------------------------------------

    @contextmanager
    def transaction(self, isolation: str | None = None,
                    read_only: bool = False) -> Iterator[Session]:
        """BEGIN ... COMMIT, ROLLBACK on any exception; nested, a SAVEPOINT."""
        driver = self._driver
        conn = self._connection()
        if self._depth:
            if isolation or read_only:
                raise ConfigurationError(
                    "a nested transaction is a savepoint of the outer one: it cannot set "
                    "isolation or read_only; set them on the outermost transaction()"
                )
            self._savepoints += 1
            name = f"tempest_sp_{self._savepoints}"
            self._call(driver.savepoint, conn, name)
            self._depth += 1
            try:
                yield self
            except BaseException:
                if not self._broken:
                    self._call(driver.rollback_to, conn, name)
                    self._call(driver.release_savepoint, conn, name)
                raise
            else:
                self._call(driver.release_savepoint, conn, name)
            finally:
                self._depth -= 1
            return
        try:
            self._call(driver.begin, conn, isolation, read_only, True)
        except QueryExecutionError:
            if not self._broken:
                raise
            # The connection died while it sat in the pool (a terminated backend, a server
            # restart, an idle timeout) and nothing of this transaction ran on it yet: begin
            # again, once, on a new connection.
            self._driver.release(conn, broken=True)
            self._conn, self._broken = None, False
            conn = self._connection()
            self._call(driver.begin, conn, isolation, read_only, True)
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._roll_back(conn)
            raise
        else:
            self._depth = 0
            try:
                self._call(driver.commit, conn)
            except TempestError:
                self._roll_back(conn)
                raise
        finally:
            self._depth = 0
            if not self._broken:
                try:
                    driver.end_transaction(conn)
                except Exception:
                    self._broken = True

    def _roll_back(self, conn: Any) -> None:
        """ROLLBACK after a failure, unless the connection is broken; if that fails, it is."""
        if not self._broken:
            try:
                self._call(self._driver.rollback, conn)
            except TempestError:
                self._broken = True

    def _call(self, fn: Callable[..., Any], conn: Any, *args: Any) -> None:
        driver = self._driver
        log = logger.isEnabledFor(logging.INFO)
        started = time.perf_counter() if log else 0.0
        try:
            fn(conn, *args)
        except driver.driver_errors() as exc:
            if driver.is_disconnect(exc):
                self._broken = True
            raise driver.translate(exc, getattr(fn, "__name__", "transaction"), ()) from exc
        if log:
            logger.info("%s %.3f ms", _control_text(fn, args),
                        (time.perf_counter() - started) * 1000)

    @property
    def in_transaction(self) -> bool:
        """True inside transaction()."""
        return self._depth > 0


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


class Engine:
    """A database: its dialect, a pool of connections, and the prepared statement shapes."""

    def __init__(self, url: DatabaseURL, driver: Driver, *, echo: bool = False) -> None:
        self.url = url
        self._driver = driver
        self._prepared: dict[CompiledShape, _Prepared] = {}
        # The prepared form by statement key: one lookup where the shape's took two (with
        # in-order params passed as they are, SQLite's 1,000 lookups of bench_sqlite.py went
        # from 0.45x to 0.54x of sqlite3, process time, median of 6).
        self._by_key: dict[StatementNode, _Prepared] = {}
        self._dialect: Dialect | None = None
        self._max_params = 0
        if echo:
            _echo_on()

    @property
    def dialect(self) -> Dialect:
        """The dialect statements are compiled for."""
        if self._dialect is None:
            self._dialect = self._driver.dialect
            self._max_params = self._dialect.max_params
        return self._dialect

    def _prepared_for(self, stmt: Statement[Any]) -> _Prepared:
        key = stmt._key()
        prepared = self._by_key.get(key)
        return prepared if prepared is not None else self._prepared_for_key(key)

    def _prepared_for_key(self, key: StatementNode) -> _Prepared:
        """The prepared form of a statement key: made once per shape, remembered by key."""
        dialect = self._dialect or self.dialect
        shape = dialect.shape_of_key(key)
        prepared = self._prepared.get(shape)
        if prepared is None:
            prepared = _Prepared(shape, self._driver, dialect)
            if len(self._prepared) > 8192:
                self._prepared.clear()
            self._prepared[shape] = prepared
            if isinstance(key, InsertStatement):
                prepared.batch = self._batch_of(key)
        if len(self._by_key) >= 8192:
            self._by_key.clear()
        self._by_key[key] = prepared
        return prepared

    def _batch_of(self, key: InsertStatement) -> tuple[_Prepared, int, int, int] | None:
        """How a multi-row insert runs as one-row statements, when the driver prefers that."""
        rows = key.rows
        if not (isinstance(rows, RowParams) and rows.n_rows > 1):
            return None
        # ON CONFLICT DO UPDATE stays one statement: run row by row, two rows with the same
        # key would both be applied, where the one statement refuses them.
        if isinstance(key.conflict, ConflictUpdate):
            return None
        if not self._driver.batches_rows(rows.n_rows, key.returning is not None):
            return None
        single = self._prepared_for_key(key._replace(rows=RowParams(1, rows.start)))
        return (single, rows.n_rows, len(key.columns), rows.start)

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
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigurationError(f"retries must be an int of at least 0, got {retries!r}")
        for attempt in range(retries + 1):
            try:
                with self.transaction(isolation, read_only) as tx:
                    return work(tx)
            except TransactionConflict as exc:
                if attempt == retries:
                    raise
                pause = min(1.0, 0.01 * 2 ** attempt) * (0.5 + random.random())
                logger.info("transaction conflict, attempt %d of %d; again in %.3f s: %s",
                            attempt + 1, retries + 1, pause, exc.message)
                time.sleep(pause)
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
        ordered = schema.dependency_order(models)
        with self.session() as session:
            dialect = self.dialect
            schema.check_models(_catalog_runner(session), dialect, ordered, missing_ok=True)
            for model in ordered:
                for sql in create_statements(model, dialect):
                    try:
                        session._run(sql, None)
                    except QueryExecutionError as exc:
                        if exc.__cause__ is None or not self._driver.ddl_already_done(exc.__cause__):
                            raise

    def check_schema(self, *models: type) -> None:
        """Compare each model's table with the model; SchemaError lists every difference
        (a missing table, a missing or extra column, a changed type or nullability)."""
        with self.session() as session:
            schema.check_models(_catalog_runner(session), self.dialect, models, missing_ok=False)

    def drop_all(self, *models: type) -> None:
        """DROP TABLE IF EXISTS for each model, children before the tables they reference."""
        from ..model import meta_of

        with self.session() as session:
            for model in reversed(schema.dependency_order(models)):
                table = self.dialect.quote_identifier(meta_of(model).table)
                session._run(f"DROP TABLE IF EXISTS {table}", None)

    def close(self) -> None:
        """Close every pooled connection."""
        self._driver.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Engine {self.url}>"


def _catalog_runner(session: Session) -> schema.Runner:
    """Run a catalog query on `session` and return its rows."""
    def run(sql: str, params: tuple[object, ...]) -> list[Any]:
        return session._run(sql, params)[0] or []
    return run


def _echo_on() -> None:
    if not any(getattr(h, "_tempest_echo", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        handler._tempest_echo = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def create_engine(url: str, *, echo: bool = False, pool_size: int | None = None,
                  pool_timeout: float = 30.0, connect_args: dict[str, Any] | None = None,
                  **options: Any) -> Engine:
    """An engine for a database URL: postgresql://, mysql:// or mariadb://, sqlite:///path.

    Every option is checked before anything connects (see engine/options.py for which
    database takes which): an unknown one, or one another database owns, is a
    ConfigurationError.
    """
    parsed = parse_url(url)
    driver_class: Callable[..., Driver]
    names: Callable[[], frozenset[str]] | None = None
    if parsed.backend == "postgresql":
        from .drivers.psycopg import PsycopgDriver
        from .drivers.psycopg import url_option_names as pg_names

        driver_class, names = PsycopgDriver, pg_names
    elif parsed.backend == "sqlite":
        from .drivers.sqlite import SQLiteDriver

        driver_class = SQLiteDriver
    else:
        from .drivers.mysql import PyMySQLDriver
        from .drivers.mysql import url_option_names as mysql_names

        driver_class, names = PyMySQLDriver, mysql_names
    kwargs = driver_options(parsed, pool_size=pool_size, pool_timeout=pool_timeout,
                            connect_args=connect_args, options=options,
                            url_option_names=names)
    return Engine(parsed, driver_class(parsed, **kwargs), echo=echo)
