"""What the sync and the async engine share: everything that does not wait on a socket.

The engine owns the driver (and its pool) and, per statement shape, the prepared form of a
statement for that driver: SQL text, the adapter of each parameter, and the row builder. Both
are resolved once per shape, so executing a statement again costs a cache lookup, the value
adaptation and the driver's own work.

A session's logic that talks to the database more than once (transactions and savepoints
and the rule that a failed statement aborts its transaction, a multi-row insert run row by
row or in chunks, streams and what a statement inside a stream's loop does to them, one user
at a time) is written here once, as generators of *steps*: each step names a driver method
and its arguments, and the session shell that drives the generator (aio.py, and engine.py
generated from it) runs it on its connection and sends the outcome back in. The shells only
wait; the bookkeeping is here. The one-statement execute() is not a generator: the shells
call `_plan()` and `_Prepared.result()` around their own driver call, the hot path. The
schema steps (create_all, check_schema) are engine/schema.py's.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
import weakref
from collections.abc import Callable, Generator, Sequence
from itertools import chain
from typing import Any, Final, TypeVar

from .._calls import discard_unrun, unrun_call
from ..dialects import CompiledShape, Dialect, shifted
from ..errors import (
    ConfigurationError,
    QueryExecutionError,
    TempestError,
    TransactionAborted,
    TransactionConflict,
    ValidationError,
)
from ..sqltext import check_statement_text
from ..statements.base import Statement
from ..statements.delete import Delete
from ..statements.insert import RowCells
from ..statements.nodes import (
    ConflictNothing,
    ConflictUpdate,
    DeleteStatement,
    InsertStatement,
    RowParams,
    StatementNode,
    UpdateStatement,
)
from ..statements.update import Update
from . import schema
from .drivers.base import ISOLATION_LEVELS, DriverRules, isolation_sql
from .result import Result, row_builder
from .types import Adapter, adapt_rows
from .url import DatabaseURL

logger = logging.getLogger("tempest_typed.sql")

R = TypeVar("R")

_MAX_LOGGED_PARAM = 80

#: how many rows stream() fetches at a time unless told
STREAM_CHUNK = 1000


class _Prepared:
    """A statement shape made ready for one driver."""

    __slots__ = ("atomic", "batch", "binders", "build", "copy", "in_value_order", "order",
                 "passes_values", "sql")

    def __init__(self, shape: CompiledShape, driver: DriverRules, dialect: Dialect) -> None:
        self.sql = shape.sql
        self.order = shape.order
        #: for a multi-row insert the driver runs faster one row per statement: the one-row
        #: form, the number of rows, their width and where their values start
        self.batch: tuple[_Prepared, int, int, int] | None = None
        #: for a batch the driver writes fastest as a bulk copy (PostgreSQL's COPY): its
        #: table, columns and statements
        self.copy: CopyPlan | None = None
        #: the statement can fail after writing some of its rows (MySQL's INSERT IGNORE of
        #: several rows, refused for a row it skipped other than as a duplicate): outside a
        #: transaction it runs in one of its own (SessionCore._atomic_steps)
        self.atomic = False
        binders = tuple(driver.bind_adapter(k) for k in shape.kinds)
        self.binders: tuple[Adapter | None, ...] | None = (
            binders if any(b is not None for b in binders) else None
        )
        self.build = row_builder(shape.result, driver.result)
        #: the statement's values are the parameters as they are (in order, none adapted)
        self.passes_values = shape.in_order and self.binders is None
        #: parameter i is value i (adapted or not): a batch's rows can be adapted by column
        self.in_value_order = shape.in_order  # the shape's own test, not recomputed

    def column_binders(self, n_values: int) -> tuple[Adapter | None, ...] | None:
        """The adapters of the parameters when they are `n_values` values alone, in order,
        some adapted (rows of them then go through adapt_rows(), a column at a time); else
        None."""
        if self.in_value_order and len(self.order) == n_values:
            return self.binders
        return None

    def rows_only(self, start: int, n_values: int) -> bool:
        """True when the values are rows alone (from 0, n_values of them), in order, none
        adapted: the parameters are then a slice of the values."""
        return self.passes_values and start == 0 and len(self.order) == n_values

    def params(self, values: Sequence[object],
               order: Sequence[int | slice] | None = None) -> list[object]:
        """The driver's parameters for the statement's values (adapted, in SQL order)."""
        if order is None:
            order = self.order
        if self.binders is None:
            return [values[i] for i in order]
        out: list[object] = []
        for i, bind in zip(order, self.binders, strict=True):
            v = values[i]
            out.append(bind(v) if bind is not None and v is not None else v)
        return out

    def result(self, rows: list[Any] | None, count: int) -> Result[Any]:
        """The Result of the fetched rows: built into models or Rows when it returns any."""
        if self.build is not None:
            # MariaDB answers a DELETE ... RETURNING that matched nothing with no result set.
            rows = self.build(rows) if rows is not None else []
        return Result(rows, count, self.sql)


class CopyPlan:
    """How a batch of plain rows is written as a bulk copy: the table and columns, the text
    copy's statement, and the binary one's, used when the catalog's type of every column is
    the one its kind is written as (SessionCore._copy_steps)."""

    __slots__ = ("binary_sql", "columns", "kinds", "table", "text_sql")

    def __init__(self, table: str, columns: list[str], kinds: list[str],
                 dialect: Dialect) -> None:
        self.table = table
        self.columns = columns
        self.kinds = kinds
        self.text_sql = dialect.copy_from_sql(table, columns)
        self.binary_sql = dialect.copy_from_sql(table, columns, binary=True)


# -- the SQL log -------------------------------------------------------------------------------


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


def _control_text(name: str, args: tuple[Any, ...]) -> str:
    """How a transaction-control call reads in the SQL log."""
    text = _CONTROL.get(name, name)
    if name == "begin":
        isolation, read_only = args[0], args[1]
        text += f" ISOLATION LEVEL {isolation}" if isolation else ""
        text += " READ ONLY" if read_only else ""
    elif args and name in _CONTROL:
        text += f" {args[0]}"
    return text


def log_ok(sql: str, params: Sequence[object] | None, many: list[Sequence[object]] | None,
           started: float) -> None:
    """Log a statement that ran (the caller checked that INFO is on)."""
    logger.info("%s %s %.3f ms", sql, _shown(params, many),
                (time.perf_counter() - started) * 1000)


def log_step(name: str, args: tuple[Any, ...], started: float) -> None:
    """Log a transaction-control or cursor step that ran (the caller checked INFO is on)."""
    if name in _CONTROL:
        logger.info("%s %.3f ms", _control_text(name, args),
                    (time.perf_counter() - started) * 1000)


# -- checks made before anything runs ---------------------------------------------------------


def check_params(params: object) -> None:
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


def check_sql(sql: object) -> str:
    """The execute_sql() text, or ValidationError: a str, without a NUL (where libpq would cut
    the statement), valid Unicode. That it runs as one statement is the driver's setting."""
    return check_statement_text(sql)


def sql_params(driver: DriverRules, params: Sequence[object]) -> tuple[object, ...] | None:
    """execute_sql() parameters as the driver binds them; None for none.

    Each is a value every driver stores as it is (as sql.expr takes; a dict as JSON), or a
    list or tuple of such values where the database binds one (an array, an IN list),
    adapted as the driver stores it; anything else is a ValidationError, never bound as its
    str().
    """
    check_params(params)
    if not params:
        # None, so that a literal % in the SQL is not read as a placeholder.
        return None
    adapt = driver.adapt_param
    return tuple(adapt(value, f"execute_sql() parameter {i + 1}")
                 for i, value in enumerate(params))


def bind_failed(exc: BaseException, sql: str,
                params: Sequence[object] | None) -> QueryExecutionError:
    """The error for an exception a driver call raised that is not the library's own error
    class (a TypeError or OverflowError while it binds the parameters, say)."""
    return QueryExecutionError(
        f"the driver could not run the statement: {type(exc).__name__}: {exc}", sql,
        params or ())


#: what a driver raises, besides its own errors, for values or text it could not send
NOT_DRIVER_ERRORS = (TypeError, ValueError, OverflowError, UnicodeError)


def check_guarded(stmt: Statement[Any]) -> None:
    """Refuse an update or delete without where(), unless it says unguarded()."""
    if (type(stmt) is Update or type(stmt) is Delete) and not stmt.guarded:
        kind = "update" if type(stmt) is Update else "delete"
        raise ValidationError(
            f"{kind}({stmt._meta.name}) has no where(): it would change every row. Add "
            f"where(...), or call .unguarded() to say that every row is meant"
        )


def check_chunk_size(chunk_size: object) -> int:
    """The number of rows a stream fetches at a time, or ValidationError."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValidationError(
            f"stream(stmt, chunk_size={chunk_size!r}): chunk_size is the number of rows "
            f"fetched at a time, an int of at least 1 (default {STREAM_CHUNK})"
        )
    return chunk_size


def check_transaction_options(isolation: object, read_only: object) -> None:
    """Refuse a transaction() isolation that is not None or a level's name, and a read_only
    that is not a bool (read_only="no" opened a READ ONLY transaction)."""
    if isolation is not None:
        if not isinstance(isolation, str) or not isolation:
            raise ConfigurationError(
                f"isolation must be None or one of {', '.join(map(repr, ISOLATION_LEVELS))}, "
                f"got {isolation!r}")
        isolation_sql(isolation)  # an unknown name: ConfigurationError listing the names
    if not isinstance(read_only, bool):
        raise ConfigurationError(f"read_only must be True or False, got {read_only!r}")


def check_work(work: object, *, blocking: bool) -> None:
    """Refuse a run_transaction() `work` that cannot be called with the transaction, or
    whose call would not run its body (a generator function; an async function on the
    blocking engine): the transaction would commit without the work."""
    if not callable(work):
        raise ConfigurationError(
            "run_transaction(work) takes a function of the transaction's session (e.g. "
            f"`def work(tx): ...`), got {work!r}")
    unrun = unrun_call(work)
    if unrun == "generator":
        raise ConfigurationError(f"run_transaction(work): {work!r} is a generator function "
                                 f"(its body holds `yield`): {_GENERATOR_WORK}")
    if blocking and unrun == "async":
        raise ConfigurationError(f"run_transaction(work): {work!r} is an async function: "
                                 f"{_ASYNC_WORK}")


_GENERATOR_WORK: Final = ("calling it runs none of its body, and the transaction would commit "
                          "without it; return instead of yielding")
_ASYNC_WORK: Final = ("the blocking Engine would only make its coroutine, and commit with the "
                      "work never done; await it on an AsyncEngine (create_async_engine), or "
                      "pass a plain function")


def check_made(made: object, *, blocking: bool) -> None:
    """Refuse what a run_transaction() `work(tx)` returned when it is not the work done: on
    the blocking engine an awaitable or a generator, on the async one anything that is not
    an awaitable (it is awaited). Raised inside the transaction, which rolls back."""
    unrun = discard_unrun(made, awaitable=blocking)
    if unrun == "generator":
        raise ConfigurationError(f"run_transaction(work) returned {made!r}, a generator: "
                                 f"{_GENERATOR_WORK}")
    if unrun == "awaitable":
        raise ConfigurationError(f"run_transaction(work) returned {made!r}, an awaitable: "
                                 f"{_ASYNC_WORK}")
    if not blocking and not inspect.isawaitable(made):
        raise ConfigurationError(
            f"run_transaction(work) returned {made!r}, not an awaitable: on an AsyncEngine "
            "work is an async function of the transaction (`async def work(tx): ...`, "
            "awaiting each statement), and a plain one could not have run any statement")


def check_retries(retries: object) -> None:
    """Refuse a run_transaction() retry count that is not an int of at least 0."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigurationError(f"retries must be an int of at least 0, got {retries!r}")


def conflict_of(exc: TransactionConflict | TransactionAborted) -> TransactionConflict | None:
    """The conflict that makes a transaction safe to run again: the error itself, or what
    aborted the transaction (the work caught the conflict and went on)."""
    cause = exc if isinstance(exc, TransactionConflict) else exc.__cause__
    return cause if isinstance(cause, TransactionConflict) else None


def retry_pause(attempt: int, retries: int, exc: QueryExecutionError) -> float:
    """The pause before running a conflicted transaction again (logged)."""
    import random

    pause: float = min(1.0, 0.01 * 2 ** attempt) * (0.5 + random.random())
    logger.info("transaction conflict, attempt %d of %d; again in %.3f s: %s",
                attempt + 1, retries + 1, pause, exc.message)
    return pause


# -- steps ------------------------------------------------------------------------------------

#: a step: a driver method's name, its arguments after the connection, and the SQL and
#: parameters an error of it is reported with
Step = tuple[str, tuple[Any, ...], str, Sequence[object]]
Steps = Generator[Any, Any, Any]


class _Body:
    """Yielded by transaction steps where the caller's `with` block runs."""


BODY = _Body()


class Chunk(list[Any]):
    """Yielded by stream steps: rows, built, for the caller."""


class StreamClosed(Exception):
    """Thrown into stream steps when the caller leaves the loop early."""


class StreamState:
    """An open stream: its cursor steps, and the rows read ahead of the caller's loop.

    A session runs one statement at a time on its connection. When it must run another
    while a stream's cursor is open there, and the cursor cannot stay open beside it (MySQL's
    unbuffered reads; a cursor outside the caller's transaction, whose own transaction or
    read would hold back the statement's commit), the rest of the stream is read ahead
    first, so the loop still gets every row. A stream whose loop was left and whose object
    is gone is closed instead.
    """

    __slots__ = ("ahead", "depth", "error", "finished", "owner", "steps", "user")

    def __init__(self, steps: Steps, user: object, depth: int, owner: object) -> None:
        self.steps = steps
        #: the stream object the caller iterates (a weak reference: gone once it is dropped)
        self.user = weakref.ref(user)
        #: the thread or task that opened it: until it ends, the session is that one's
        self.owner = owner
        #: the transaction level it was opened in (0: outside the caller's transactions)
        self.depth = depth
        self.ahead: list[Chunk] = []
        self.error: BaseException | None = None
        self.finished = False

    def live(self) -> bool:
        """True while the session holds it: its cursor open, or rows read ahead left."""
        return not self.finished or bool(self.ahead)


def resume(steps: Steps, value: Any, exc: BaseException | None) -> tuple[Any, Any]:
    """Advance the steps with the outcome of the last one: (the next step, None), or
    (None, what the steps returned) once they are done."""
    try:
        step = steps.throw(exc) if exc is not None else steps.send(value)
    except StopIteration as stop:
        return None, stop.value
    return step, None


def paused(step: Any) -> bool:
    """True when the steps wait for their caller (a `with` block, or rows to be taken)."""
    return step is BODY or type(step) is Chunk


def control(name: str, *args: Any) -> Step:
    """A transaction-control step (its errors report the step's name as the SQL)."""
    return (name, args, name, ())


class SessionCore:
    """A session's state and the logic both shells share; the shells run the steps."""

    #: who is using the session now: the thread's ident (Session) or the asyncio task
    #: (AsyncSession)
    _user_of: Callable[[], object] = staticmethod(threading.get_ident)
    #: how the rule of one user at a time names that user
    _user_kind = "thread"

    def __init__(self, engine: EngineCore) -> None:
        self._engine = engine
        self._driver: DriverRules = engine._driver
        self._conn: Any = None
        self._broken = False
        #: execute_sql() set what the connection keeps past this session (a SET): closed,
        #: not pooled, when the session ends, so that no later user inherits it
        self._changed = False
        self._depth = 0
        self._savepoints = 0
        self._closed = False
        #: the first failure of a statement in the open transaction, and the transaction
        #: level (1 the outermost, 2 its first savepoint...) that it leaves able only to roll
        #: back
        self._aborted: QueryExecutionError | None = None
        self._aborted_at = 0
        #: the database itself rolled the whole transaction back (MySQL's deadlock victim):
        #: its savepoints are gone, and only the outermost level's ROLLBACK is left to run
        self._gone = False
        #: what a transaction level left without its steps running (a block left by
        #: GeneratorExit: a generator closed inside it) still owes the connection: its
        #: ROLLBACK, run by the shell, or by close() before the connection is pooled again
        self._owed: list[Step] = []
        #: the thread or task using the session, and how many uses of it are open (a
        #: statement, a transaction, a stream's fetch): one user at a time
        self._user: object = None
        self._uses = 0
        self._use_lock = threading.Lock()
        #: the stream whose cursor is open on this session's connection
        self._stream: StreamState | None = None

    # -- one user at a time ---------------------------------------------------------------

    def _hold(self) -> None:
        """Begin a use of the session by the calling thread or task; TempestError while
        another one uses it."""
        me = self._user_of()
        with self._use_lock:
            if self._uses and self._user != me:
                raise self._in_use_error()
            stream = self._stream
            if stream is not None and stream.owner != me and stream.user() is not None:
                # between its chunks, an open stream is its opener's use of the session
                raise self._in_use_error()
            self._user = me
            self._uses += 1

    def _unhold(self) -> None:
        """End a use begun by _hold()."""
        with self._use_lock:
            self._uses -= 1
            if not self._uses:
                self._user = None

    def _in_use_error(self) -> TempestError:
        kind = self._user_kind
        what = ("iterating a stream" if self._stream is not None and not self._uses
                else "inside a transaction" if self._depth else "running a statement")
        return TempestError(
            f"this session is in use by another {kind} ({what}): a session and its "
            f"transactions belong to one {kind} at a time. Open a session per {kind} "
            f"(engine.session() or engine.transaction()); the engine is shared"
        )

    @staticmethod
    def _aborted_error(first: QueryExecutionError) -> TransactionAborted:
        """The error of a statement, or a normal end, in a transaction `first` aborted."""
        error = TransactionAborted(
            f"a statement in this transaction failed, so it can only roll back; leave the "
            f"`with` block (it rolls back), or run a statement that may fail in a nested "
            f"transaction() (a savepoint), which rolls back alone. The failure: "
            f"{first.message}"
        )
        error.__cause__ = first
        return error

    def _check_usable(self) -> None:
        """Refuse a statement in a transaction that a failed statement aborted."""
        if self._aborted is not None:
            raise self._aborted_error(self._aborted)

    def _closed_error(self) -> TempestError:
        return TempestError("this session is closed; open a new one with engine.session()")

    def _failed(self, exc: BaseException, sql: str, params: Sequence[object] | None,
                many: list[Sequence[object]] | None, started: float | None
                ) -> QueryExecutionError:
        """The library's error for a driver's, logged; a lost connection marks the session."""
        driver = self._driver
        if driver.is_disconnect(exc):
            self._broken = True
        if many is not None:
            # Which row failed is not told: the error carries every row's parameters.
            params = [v for p in many for v in p]
        if started is not None:
            logger.info("%s %s failed after %.3f ms: %s", sql, _shown(params, many),
                        (time.perf_counter() - started) * 1000, exc)
        error = driver.translate(exc, sql, params or ())
        if self._depth and driver.conflict_ends_transaction and isinstance(
                error, TransactionConflict):
            # The server rolled back the whole transaction, savepoints and all: every level
            # of it is aborted, and the conflict is what run_transaction() retries on.
            self._aborted, self._aborted_at, self._gone = error, 1, True
        elif self._depth and self._aborted is None:
            # PostgreSQL's rule on every database: the transaction can only roll back now.
            self._aborted, self._aborted_at = error, self._depth
        return error

    def _plan(self, stmt: Statement[Any]) -> tuple[_Prepared, Sequence[object] | None]:
        """The prepared form and parameters of a statement; None for parameters when it runs
        as several statements (`_execute_steps`)."""
        if self._aborted is not None:
            raise self._aborted_error(self._aborted)
        check_guarded(stmt)
        engine = self._engine
        prepared = engine._prepared_for(stmt)
        if prepared.batch is not None:
            return prepared, None
        values = stmt._values
        # a value can be written once and read twice (a named select joined under two
        # aliases carries its values per alias): the values are then no parameter list
        if prepared.passes_values and len(values) == len(prepared.order):
            if len(values) > engine._max_params:
                return prepared, None
            return prepared, values
        if len(prepared.order) > engine._max_params:
            return prepared, None  # chunks, each adapting its own: not adapted here first
        return prepared, prepared.params(values)

    # -- statements run as several --------------------------------------------------------

    def _execute_steps(self, stmt: Statement[Any], prepared: _Prepared) -> Steps:
        """A statement that runs as several: a batch, or chunks of a too-large insert."""
        if prepared.batch is not None:
            return self._batch_steps(prepared, prepared.batch, stmt)
        return self._chunk_steps(stmt)

    def _atomic_steps(self, prepared: _Prepared, params: Sequence[object]) -> Steps:
        """One statement that can fail after writing some of its rows, in a transaction of
        its own (the caller is in none), so that nothing of it stays when it fails."""
        def run() -> Steps:
            rows, count = yield ("run", (prepared.sql, params), prepared.sql, params)
            return prepared.result(rows, count)

        return self._transaction_steps(None, False, run())

    def _batch_steps(self, prepared: _Prepared, batch: tuple[_Prepared, int, int, int],
                     stmt: Statement[Any]) -> Steps:
        """A multi-row insert as the one-row statement run once per row, atomically (its
        values read in one tuple only where its cells are not at hand a column at a time)."""
        single, n_rows, width, start = batch
        cells: RowCells | None = getattr(stmt, "_cells", None)
        param_sets: Sequence[Sequence[object]] | RowCells
        binders = single.column_binders(width) if cells is not None and start == 0 else None
        if cells is not None and binders is not None:
            param_sets = adapt_rows(binders, cells.columns)
        elif not single.rows_only(start, width):
            end = start + width
            values = stmt._values
            param_sets = [
                single.params(values, shifted(single.order, start, end, first))
                for first in range(0, n_rows * width, width)
            ]
        elif cells is not None:
            param_sets = cells  # each row made as it is written
        else:
            values = stmt._values
            param_sets = [values[i:i + width] for i in range(0, n_rows * width, width)]
        returning = prepared.build is not None
        run = (self._run_many_steps(single.sql, param_sets, returning) if prepared.copy is None
               else self._copy_steps(prepared.copy, param_sets))
        fetched, count = yield from (run if self._depth else self._transaction_steps(None, False, run))
        rows = None
        if prepared.build is not None:
            rows = prepared.build(fetched) if fetched is not None else []
        return Result(rows, count, prepared.sql)

    def _together_steps(self, stmts: Sequence[Statement[Any]]) -> Steps:
        """Statements run in order as one transaction, their Results: sent at once where the
        driver pipelines them (psycopg), else one by one in a transaction of their own
        (unless inside the caller's)."""
        planned = [self._plan(stmt) for stmt in stmts]
        together: list[tuple[str, Sequence[object]]] = []
        for prepared, params in planned:
            if params is None:  # a batch or a chunked insert: several statements itself
                raise ValidationError(
                    f"{prepared.sql[:40]}... runs as several statements: it cannot be sent "
                    "together with others; execute it alone")
            together.append((prepared.sql, params))
        run: Steps
        if self._driver.pipelines:
            sql = "; ".join(sql for sql, _ in together)
            params = [value for _, values in together for value in values]
            run = self._step(("run_together", (together,), sql, params))
        else:
            run = self._in_turn_steps(together)
            if not self._depth:
                run = self._transaction_steps(None, False, run)
        answers: list[tuple[list[Any] | None, int]] = yield from run
        return [prepared.result(rows, count)
                for (prepared, _), (rows, count) in zip(planned, answers, strict=True)]

    @staticmethod
    def _step(step: Step) -> Steps:
        return (yield step)

    @staticmethod
    def _in_turn_steps(together: list[tuple[str, Sequence[object]]]) -> Steps:
        answers = []
        for sql, params in together:
            answers.append((yield ("run", (sql, params), sql, params)))
        return answers

    def _run_many_steps(self, sql: str, param_sets: Sequence[Sequence[object]] | RowCells,
                        returning: bool) -> Steps:
        listed = param_sets.rows() if isinstance(param_sets, RowCells) else param_sets
        return (yield ("run_many", (sql, listed, returning), sql, ()))

    def _copy_steps(self, plan: CopyPlan, rows: Sequence[Sequence[object]] | RowCells) -> Steps:
        """The rows as one bulk copy, in the statement's transaction: binary when the batch
        is large enough to pay for reading its columns' types from the catalog first (read
        in the same transaction, never remembered: a table another program altered is seen)
        and every stored type is the one its kind is written as; else text."""
        types = None
        if self._driver.copies_binary(len(rows)):
            dialect = self._engine.dialect
            sql, params = dialect.copy_types_sql(plan.table)
            fetched, _ = yield ("run", (sql, params), sql, params)
            stored = dict(fetched or ())
            types = dialect.copy_binary_types(plan.kinds, [stored.get(c) for c in plan.columns])
        sql = plan.text_sql if types is None else plan.binary_sql
        return (yield ("copy_rows", (sql, rows, types), sql, ()))

    def _chunk_steps(self, stmt: Statement[Any]) -> Steps:
        """A multi-row insert too large for one statement, as several in one transaction."""
        engine = self._engine
        key = stmt._key()
        rows = key.rows if isinstance(key, InsertStatement) else None
        if not isinstance(key, InsertStatement) or not isinstance(rows, RowParams):
            raise ValidationError(
                f"this statement binds {len(engine._prepared_for(stmt).order)} parameters, "
                f"more than {engine.dialect.name} takes ({engine._max_params}); split it "
                "(e.g. a shorter `in` list)"
            )
        return (yield from self._transaction_steps(None, False,
                                                   self._each_chunk(stmt, key, rows)))

    def _each_chunk(self, stmt: Statement[Any], key: InsertStatement, rows: RowParams) -> Steps:
        engine = self._engine
        n_rows, start = rows.n_rows, rows.start
        width = len(key.columns)
        whole = engine._prepared_for(stmt)
        n_params = len(whole.order)
        per_chunk = max(1, (engine._max_params - (n_params - n_rows * width)) // width)
        # The rows alone, a column at a time through their adapters (the chunks then slices
        # of them), where the statement binds nothing else and keeps its cells by column.
        cells: RowCells | None = getattr(stmt, "_cells", None)
        adapted: list[tuple[Any, ...]] | None = None
        binders = (whole.column_binders(n_rows * width) if cells is not None and start == 0
                   else None)
        if cells is not None and binders is not None:
            adapted = adapt_rows(binders[:width], cells.columns)
        out_rows: list[Any] | None = None
        count = 0
        sql = ""
        for first in range(0, n_rows, per_chunk):
            size = min(per_chunk, n_rows - first)
            prepared = engine._prepared_for_key(key._replace(rows=RowParams(size, start)))
            shift = first * width
            end = start + size * width
            if adapted is not None and prepared.in_value_order:
                params: Sequence[object] = list(chain.from_iterable(adapted[first:first + size]))
            elif prepared.rows_only(start, end):
                params = stmt._values[shift:shift + end]  # made flat once, on first use
            else:
                params = prepared.params(stmt._values,
                                         shifted(prepared.order, start, end, shift))
            fetched, affected = yield ("run", (prepared.sql, params), prepared.sql, params)
            count += max(affected, 0)
            sql = prepared.sql
            if fetched is not None and prepared.build is not None:
                out_rows = (out_rows or []) + prepared.build(fetched)
        return Result(out_rows, count, sql)

    # -- transactions ---------------------------------------------------------------------

    def _transaction_steps(self, isolation: str | None, read_only: bool,
                           body: Steps | None = None) -> Steps:
        """BEGIN ... COMMIT, ROLLBACK on any exception; nested, a SAVEPOINT. With no `body`
        the steps pause at BODY while the caller's block runs.

        A statement that fails inside leaves its level (the transaction, or the savepoint it
        ran in) able only to roll back: the level's normal end then rolls back and raises
        TransactionAborted, the first failure as its cause.
        """
        check_transaction_options(isolation, read_only)
        if self._depth:
            if isolation or read_only:
                raise ConfigurationError(
                    "a nested transaction is a savepoint of the outer one: it cannot set "
                    "isolation or read_only; set them on the outermost transaction()"
                )
            self._check_usable()
            self._savepoints += 1
            name = f"tempest_sp_{self._savepoints}"
            yield control("savepoint", name)
            self._depth += 1
            level = self._depth
            try:
                result = yield from self._body(body)
            except GeneratorExit:  # abandoned: its rollback is owed (_owed_steps)
                if self._depth >= level:
                    self._leave(level)
                    if not self._gone:
                        self._owed += [control("rollback_to", name),
                                       control("release_savepoint", name)]
                raise
            except BaseException:
                if self._depth < level:  # the session closed inside, rolling it back
                    raise
                self._leave(level)
                if not self._broken and not self._gone:
                    yield control("rollback_to", name)
                    yield control("release_savepoint", name)
                raise
            if self._depth < level:
                raise self._closed_error()
            first = self._leave(level)
            if self._gone:  # the block caught the conflict: the outer transaction is gone
                assert self._aborted is not None
                raise self._aborted_error(self._aborted)
            if first is not None:
                if not self._broken:
                    yield control("rollback_to", name)
                    yield control("release_savepoint", name)
                raise self._aborted_error(first)
            yield control("release_savepoint", name)
            return result
        try:
            yield control("begin", isolation, read_only, True)
        except QueryExecutionError:
            if not self._broken:
                raise
            # The connection died while it sat in the pool (a terminated backend, a server
            # restart, an idle timeout) and nothing of this transaction ran on it yet: begin
            # again, once, on a new connection.
            yield control("reconnect")
            yield control("begin", isolation, read_only, True)
        self._depth = 1
        try:
            result = yield from self._body(body)
        except GeneratorExit:  # abandoned: its rollback is owed (_owed_steps)
            if self._depth:
                self._leave(1)
                self._owed = [control("rollback"), control("end_transaction")]
            raise
        except BaseException:
            if not self._depth:  # the session closed inside, rolling it back
                raise
            self._leave(1)
            yield from self._roll_back()
            yield from self._end_transaction()
            raise
        if not self._depth:
            raise self._closed_error()
        first = self._leave(1)
        if first is not None:
            yield from self._roll_back()
            yield from self._end_transaction()
            raise self._aborted_error(first)
        try:
            yield control("commit")
        except TempestError:
            yield from self._roll_back()
            yield from self._end_transaction()
            raise
        yield from self._end_transaction()
        return result

    def _level_fails(self, level: int) -> bool:
        """True when transaction level `level`, ending now, rolls back: a failure aborted it."""
        return self._gone or (self._aborted is not None and self._aborted_at >= level)

    def _leave(self, level: int) -> QueryExecutionError | None:
        """Close transaction level `level`: the failure that aborted it, if one did."""
        self._depth = level - 1
        if level == 1:
            self._gone = False
        first = self._aborted
        if first is None or self._aborted_at < level:
            return None
        self._aborted, self._aborted_at = None, 0
        return first

    @staticmethod
    def _body(body: Steps | None) -> Steps:
        if body is None:
            yield BODY
            return None
        return (yield from body)

    def _owed_steps(self) -> Steps:
        """Run what abandoned transaction levels owe the connection (their rollback); a
        connection where that fails is broken."""
        while self._owed:
            step = self._owed.pop(0)
            yield from self._unless_broken(step)
        if self._broken:
            self._owed.clear()

    def _release_steps(self) -> Steps:
        """Before the connection goes back to the pool: roll back the transaction the
        session closed inside (or one abandoned), and undo what its begin() set."""
        if self._depth:
            self._depth, self._aborted, self._aborted_at, self._gone = 0, None, 0, False
            self._owed = [control("rollback"), control("end_transaction")]
        return (yield from self._owed_steps())

    def _roll_back(self) -> Steps:
        """ROLLBACK after a failure, unless the connection is broken; if that fails, it is."""
        return self._unless_broken(control("rollback"))

    def _end_transaction(self) -> Steps:
        """Undo what begin() set on the connection; a connection where that fails is broken."""
        return self._unless_broken(control("end_transaction"))

    def _unless_broken(self, step: Step) -> Steps:
        if not self._broken:
            try:
                yield step
            except TempestError:
                self._broken = True

    # -- streaming ------------------------------------------------------------------------

    def _stream_steps(self, stmt: Statement[Any], chunk_size: object) -> Steps:
        """The rows of a select, fetched chunk_size at a time from a cursor left open on the
        server; in a transaction of its own where the driver's cursor needs one."""
        size = check_chunk_size(chunk_size)
        prepared, params = self._plan(stmt)
        if prepared.build is None or params is None:
            raise ValidationError(
                "stream() takes a statement that returns rows (a select, or a write with "
                "returning(...)) bound with few enough parameters for one statement; use "
                "execute() for this one"
            )
        if prepared.atomic:
            # read whole, its warnings then told (MySQL's INSERT IGNORE), and in a
            # transaction, as execute() runs it
            written = self._written_rows_steps(prepared, params, size)
            if self._depth:
                return (yield from written)
            return (yield from self._transaction_steps(None, False, written))
        if not self._driver.stream_cursor_takes_writes and isinstance(
                stmt._key(), InsertStatement | UpdateStatement | DeleteStatement):
            # a server-side cursor takes a select only (PostgreSQL's DECLARE ... CURSOR FOR):
            # the write runs as it would in execute(), and its rows come in chunks after
            return (yield from self._written_rows_steps(prepared, params, size))
        rows = self._cursor_steps(prepared, params, size)
        if self._depth or not self._driver.stream_needs_transaction:
            return (yield from rows)
        return (yield from self._transaction_steps(None, False, rows))

    def _written_rows_steps(self, prepared: _Prepared, params: Sequence[object],
                            size: int) -> Steps:
        """A write's returned rows, run as one plain statement, chunk_size at a time."""
        build = prepared.build
        assert build is not None
        fetched, _ = yield ("run", (prepared.sql, params), prepared.sql, params)
        raw = list(fetched or ())
        for start in range(0, len(raw), size):
            yield Chunk(build(raw[start:start + size]))

    def _open_stream_state(self, user: object, stmt: Statement[Any],
                           chunk_size: object) -> StreamState:
        """Register a new stream of `stmt` for the stream object `user` (nothing runs yet)."""
        self._check_usable()
        state = StreamState(self._stream_steps(stmt, chunk_size), user, self._depth,
                            self._user)
        self._stream = state
        return state

    def _next_chunk_steps(self, state: StreamState) -> Steps:
        """The stream's next rows (a Chunk), or None at its end."""
        if state.ahead:
            if self._aborted is not None and self._aborted_at <= state.depth:
                # read ahead in a transaction that a failure has since aborted: gone with it
                raise self._aborted_error(self._aborted)
            chunk = state.ahead.pop(0)
            if state.finished and not state.ahead:
                self._detach(state)
            return chunk
        if state.error is not None:
            error, state.error = state.error, None
            raise error
        if state.finished:
            return None
        self._check_usable()
        return (yield from self._relay(state, once=True))

    def _relay(self, state: StreamState, *, once: bool) -> Steps:
        """Run the stream's steps: to its next chunk (`once`), or to its end, reading the
        chunks ahead. A failure of the steps ends the stream: raised (`once`), or kept for
        the stream's loop."""
        value: Any = None
        exc: BaseException | None = None
        while True:
            try:
                step, _ = resume(state.steps, value, exc)
            except BaseException as failed:
                self._stream_done(state)
                if once:
                    raise
                state.error = failed
                return None
            if step is None:
                self._stream_done(state)
                return None
            if type(step) is Chunk:
                if once:
                    return step
                state.ahead.append(step)
                value, exc = None, None
                continue
            try:
                value, exc = (yield step), None
            except BaseException as failed:
                value, exc = None, failed

    def _stream_done(self, state: StreamState) -> None:
        """The stream's cursor is done; the session keeps it while rows read ahead of its
        loop are left (a failure of their transaction takes them back)."""
        state.finished = True
        if not state.ahead:
            self._detach(state)

    def _detach(self, state: StreamState) -> None:
        if self._stream is state:
            self._stream = None

    def _settle_stream_steps(self, ending: int | None = None, failed: bool = False) -> Steps:
        """Make way for another use of the connection while a stream is open.

        Before a statement (`ending` None) the cursor stays open where it can beside the
        statement (inside the caller's transaction, on a driver whose cursors allow it);
        otherwise the rest of the stream is read ahead. When transaction level `ending`
        ends (0: the session closes), a stream opened inside it is read ahead, or closed if
        the level `failed` (its loop, if still running, then raises). A stream whose object
        is gone is closed.
        """
        state = self._stream
        if state is None:
            return
        if state.user() is None:
            yield from self._close_stream_steps(state)
            return
        if ending is not None and state.depth >= ending and (
                (failed and state.depth > 0) or (ending == 0 and not state.finished)):
            # its rows, those read ahead too, went with the rolled-back transaction
            yield from self._close_stream_steps(state)
            why = "its transaction failed" if failed and state.depth > 0 else "its session closed"
            state.error = TempestError(
                f"this stream was closed before its loop ended: {why}; iterate a stream "
                "inside the block that opened it"
            )
            return
        if state.finished:  # all read ahead: its loop takes the rest
            if ending == 0:
                self._detach(state)
            return
        coexists = self._driver.stream_coexists and state.depth > 0
        if not coexists or (ending is not None and state.depth >= ending):
            yield from self._relay(state, once=False)

    def _close_stream_steps(self, state: StreamState) -> Steps:
        """Close the stream's cursor (and end the transaction stream() began), dropping the
        rows read ahead."""
        state.ahead.clear()
        if state.finished:
            self._detach(state)
            return
        self._stream_done(state)
        try:
            step, _ = resume(state.steps, None, StreamClosed())
            while step is not None:
                try:
                    value = yield step
                except BaseException as failed:
                    step, _ = resume(state.steps, None, failed)
                else:
                    step, _ = resume(state.steps, value, None)
        except StreamClosed:
            pass

    def _cursor_steps(self, prepared: _Prepared, params: Sequence[object], size: int) -> Steps:
        sql = prepared.sql
        build = prepared.build
        assert build is not None
        cursor = yield ("open_stream", (sql, params, size), sql, params)
        try:
            while True:
                raw = yield ("fetch", (cursor, size), sql, params)
                if not raw:
                    break
                yield Chunk(build(raw))
        except StreamClosed:
            pass
        except GeneratorExit:  # abandoned by its shell: the cursor goes with the connection
            raise
        except BaseException:
            if not self._broken:
                try:
                    yield ("close_stream", (cursor,), sql, params)
                except TempestError:
                    self._broken = True
            raise
        yield ("close_stream", (cursor,), sql, params)

    # -- schema ---------------------------------------------------------------------------

    def _schema_steps(self, models: Sequence[type], missing_ok: bool) -> Steps:
        """Compare the models with the catalog (engine/schema.py); SchemaError on a
        difference. Returns the models whose table does not exist."""
        return schema.compare_steps(self._engine.dialect, models, missing_ok=missing_ok)

    def _create_all_steps(self, models: Sequence[type]) -> Steps:
        """CREATE TABLE and CREATE INDEX IF NOT EXISTS, parents first, once all compare."""
        return schema.create_steps(self._engine.dialect, models, self._driver.ddl_already_done)

    def _drop_all_steps(self, models: Sequence[type]) -> Steps:
        """DROP TABLE IF EXISTS, children before the tables they reference."""
        return schema.drop_steps(self._engine.dialect, models)

    @property
    def in_transaction(self) -> bool:
        """True inside transaction()."""
        return self._depth > 0


class EngineCore:
    """A database: its dialect, a pool of connections, and the prepared statement shapes."""

    def __init__(self, url: DatabaseURL, driver: DriverRules, *, echo: bool = False) -> None:
        self.url = url
        self._driver = driver
        self._prepared: dict[CompiledShape, _Prepared] = {}
        # The prepared form by statement key: one lookup where the shape's took two
        # (measured: BENCHMARKS.md, "Fast paths").
        self._by_key: dict[StatementNode, _Prepared] = {}
        self._dialect: Dialect | None = None
        self._max_params = 0
        if echo:
            echo_on()

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
                rows = key.rows
                prepared.atomic = (
                    self._driver.ignore_skips_errors and isinstance(key.conflict, ConflictNothing)
                    and not (isinstance(rows, RowParams) and rows.n_rows == 1))
                prepared.batch = self._batch_of(key)
                if prepared.batch is not None:
                    prepared.copy = self._copy_of(key, dialect)
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


    def _copy_of(self, key: InsertStatement, dialect: Dialect) -> CopyPlan | None:
        """The bulk copy a batch is written with, when its database and driver have one and
        the insert asks for nothing a copy cannot do (no conflict clause, no RETURNING)."""
        rows = key.rows
        if (key.conflict is not None or key.returning is not None
                or not isinstance(rows, RowParams) or not dialect.supports_copy_from
                or not self._driver.copies_rows(rows.n_rows)):
            return None
        return CopyPlan(key.meta.table, [c.name for c in key.columns],
                        [c.kind for c in key.columns], dialect)


def echo_on() -> None:
    """Send the SQL log to stderr (create_engine(..., echo=True))."""
    if not any(getattr(h, "_tempest_echo", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        handler._tempest_echo = True  # type: ignore[attr-defined]  # a mark to find our handler again
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
