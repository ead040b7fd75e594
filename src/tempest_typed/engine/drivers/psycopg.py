# Generated from src/tempest_typed/engine/drivers/psycopg_async.py by tools/async_to_sync.py: do not edit.
# Change the asyncio source and run `python tools/async_to_sync.py`.
"""PostgreSQL through psycopg 3, pooled by psycopg_pool: the connections, written once.

This asyncio module (AsyncPsycopgDriver, on AsyncConnectionPool) is the source of psycopg.py
(PsycopgDriver, on ConnectionPool), which tools/async_to_sync.py writes from it: psycopg's
two sides have the same API, so the pool's watch on its connection attempts, the ping of a
connection idle too long and the statements run are one text. What does not wait (options,
adapters, error translation, what the attempts told) is psycopg_rules.py's. The files importing
psycopg are these three.
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final

from typing_extensions import override

from ...errors import ConfigurationError
from ..types import json_from_utf8
from ..url import DatabaseURL
from .driver import Driver
from .psycopg_rules import SETUP, PsycopgRules, begin_sql, one_statement, stream_name

try:
    import psycopg
    from psycopg.types.json import set_json_loads
    from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigurationError(
        "postgresql:// needs psycopg 3 and psycopg_pool: pip install 'tempest-typed[postgres]'"
    ) from exc

__all__ = ["PsycopgDriver"]


#: the name psycopg_pool gives this driver's pools (in its log, and its tasks' names)
POOL_NAME: Final = "tempest_typed"




class _RecentFirstPool(ConnectionPool[Any]):
    """psycopg_pool's pool, handing out the connection returned last.

    Its own order is the oldest first, so a program using one connection at a time rotates
    through every connection the pool ever grew to (it grows to two at start-up already, when
    the first request comes before the first connection is made): each statement then meets
    a backend and a connection whose caches went cold, 20% more client and server CPU for a
    queue's batch (measured: BENCHMARKS.md, "A pool that hands out its connections in
    turn"). The connections left unused stay at the far end, which the pool's shrinking
    closes first.
    """

    def _get_ready_connection(self, timeout: float | None) -> Any:
        # called under the pool's lock; the newest connection is put where it takes from
        ready = self._pool
        if len(ready) > 1:
            ready.rotate(1)
        return super()._get_ready_connection(timeout)


class PsycopgDriver(Driver):
    """psycopg 3's Connection in a ConnectionPool, opened with the engine."""

    rules: PsycopgRules

    def __init__(self, url: DatabaseURL, *, pool_size: int = 10, pool_timeout: float = 30.0,
                 connect_timeout: float = 5.0,
                 connect_args: dict[str, Any] | None = None) -> None:
        rules = self.rules = PsycopgRules(url, pool_size=pool_size, pool_timeout=pool_timeout,
                                          connect_timeout=connect_timeout,
                                          connect_args=connect_args)
        self._pool = _RecentFirstPool(
            kwargs=rules._kwargs, min_size=1, max_size=pool_size, timeout=pool_timeout,
            open=True, configure=self._configure, name=POOL_NAME,
            connection_class=self._watched(),
        )  # no check=: _checked_conn() pings, without the pool's backoff

    def _watched(self) -> type[psycopg.Connection[Any]]:
        """The pool's connection class, telling the rules how each attempt of the pool ends."""
        rules = self.rules

        class WatchedConnection(psycopg.Connection[Any]):
            @classmethod
            def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
                rules._attempt_began()
                try:
                    conn = super().connect(conninfo, **kwargs)
                except psycopg.Error as exc:
                    rules._attempt_ended(exc)
                    raise
                except BaseException:
                    rules._attempt_ended(None)
                    raise
                rules._attempt_ended(None)
                return conn

        return WatchedConnection

    def _probe(self) -> None:
        """Connect directly once: raise the server's error (it says no, at once), or return
        when it answers."""
        rules = self.rules
        try:
            (psycopg.Connection.connect(**rules._kwargs)).close()
        except psycopg.Error as exc:
            raise rules._unreachable(exc) from exc

    # psycopg_pool's own check (its check= callback) sleeps 1 s, then 2, 4 ... between
    # connections that fail it, as if the server were down: after a few backends of idle
    # connections were terminated, a queue worker waited 5 s for a connection while 2 were
    # free, and missed its heartbeats. A dead connection found here is discarded and the next
    # one taken at once; the pool connects replacements (with its backoff when the server is
    # really down), and getconn() waits for them within the same timeout.
    def _checked_conn(self, timeout: float) -> Any:
        """A pooled connection that answers, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            conn = self._pool.getconn(timeout=max(0.0, deadline - time.monotonic()))
            if not self.rules._needs_ping(conn):
                return conn
            try:
                ConnectionPool.check_connection(conn)
            except BaseException as exc:
                self.release(conn, broken=True)
                if not isinstance(exc, psycopg.Error):
                    raise
                continue
            return conn

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        set_json_loads(json_from_utf8, conn)
        conn.execute(SETUP)

    @override
    def acquire(self) -> Any:
        # The pool connects on its own threads (or tasks) and, while the server is down, only
        # logs why. Its attempts report how they end (_watched): when the last one failed,
        # connect directly once, which raises the real cause at once or finds the server
        # back. While one is under way, wait in short turns to see how it ends; otherwise
        # wait up to connect_timeout, then, if the pool is still trying, connect directly
        # once: a server that is down fails in connect_timeout, saying why, and a pool whose
        # every connection is in use waits the rest of pool_timeout for one to come back.
        rules = self.rules
        if rules._refused is not None:
            self._probe()
        first = min(rules._connect_timeout, rules._pool_timeout)
        until = time.monotonic() + first
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            try:
                return self._checked_conn(
                    min(left, rules._LOOK_AGAIN) if rules._uncertain() else left)
            except PoolClosed as exc:
                raise rules._closed_error(exc) from exc
            except PoolTimeout:
                pass
            if rules._refused is not None:
                self._probe()
        if rules._uncertain() or rules._refused is not None:
            self._probe()
        try:
            return self._checked_conn(max(0.0, rules._pool_timeout - first))
        except PoolClosed as exc:
            raise rules._closed_error(exc) from exc
        except PoolTimeout as exc:
            raise rules._exhausted() from exc

    @override
    def _in_transaction(self, conn: Any) -> bool:
        # rolled back by release(), quietly (the pool would roll it back too, with a warning)
        return bool(conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    @override
    def _give_back(self, conn: Any, broken: bool) -> None:
        self.rules._returned(conn, broken)
        if broken and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            # Alive and idle, only not to be pooled (a session setting changed on it): the
            # pool closes it as past its lifetime, quietly; closed here, the pool would warn
            # "discarding closed connection" on stderr for the engine's own decision.
            conn._expire_at = -math.inf
        elif broken:
            with contextlib.suppress(Exception):
                conn.close()
        self._pool.putconn(conn)

    @override
    def close(self) -> None:
        self._pool.close()

    @override
    def run(self, conn: Any, sql: str,
                  params: Sequence[Any] | None) -> tuple[list[Any] | None, int]:
        # One cursor per connection, kept on it: conn.execute() makes a new cursor for every
        # statement (measured: BENCHMARKS.md, "Fast paths"). The rows are fetched at once, so the cursor holds nothing a later
        # statement could trip over.
        try:
            cur = conn._tempest_cursor
        except AttributeError:
            cur = conn._tempest_cursor = conn.cursor()
        if params is None and ";" in sql:
            cur.execute(sql, None, **one_statement(conn))
        else:
            cur.execute(sql, params)
        rows = _fetched(cur)
        count = cur.rowcount
        if rows is not None and len(rows) >= _LARGE_RESULT:
            # libpq keeps its copy of every row until the cursor's next statement: a large
            # result's is let go now, not left on an idle pooled connection
            del conn._tempest_cursor
            cur.close()
        return rows, count

    @override
    def run_together(self, conn: Any, statements: Sequence[tuple[str, Sequence[Any]]],
                           ) -> list[tuple[list[Any] | None, int]]:
        # psycopg's pipeline: every statement is sent before the first answer is read, and
        # one Sync ends them, so they commit together (an implicit transaction) or, inside
        # the caller's, go on in it. Each statement takes its own snapshot, as in turn.
        try:
            cursors = conn._tempest_cursors
        except AttributeError:
            cursors = conn._tempest_cursors = []
        while len(cursors) < len(statements):
            cursors.append(conn.cursor())
        used = cursors[:len(statements)]
        with conn.pipeline():
            for cur, (sql, params) in zip(used, statements, strict=True):
                cur.execute(sql, params)
        return [(_fetched(cur), cur.rowcount) for cur in used]

    @override
    def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]],
                       returning: bool) -> tuple[list[Any] | None, int]:
        with conn.cursor() as cur:
            cur.executemany(sql, params, returning=returning)
            if not returning:
                return None, max(cur.rowcount, 0)
            # Every result has the same columns: cur.description is not asked of each
            # (measured: BENCHMARKS.md, "Fast paths").
            rows: list[Any] = cur.fetchall()
            total = max(cur.rowcount, 0)
            while cur.nextset():
                rows.extend(cur.fetchall())
                total += max(cur.rowcount, 0)
            return rows, total

    @override
    def copy_rows(self, conn: Any, sql: str, rows: Iterable[Sequence[Any]],
                        types: Sequence[str] | None) -> tuple[list[Any] | None, int]:
        with conn.cursor() as cur:
            with cur.copy(sql) as copy:
                if types is not None:
                    copy.set_types(types)  # each value by its column's binary dumper
                write = copy.write_row
                for row in rows:
                    write(row)
            return None, max(cur.rowcount, 0)

    @override
    def begin(self, conn: Any, isolation: str | None, read_only: bool,
                    write: bool) -> None:
        conn.execute(begin_sql(isolation, read_only))

    @override
    def open_stream(self, conn: Any, sql: str, params: Sequence[Any] | None,
                          size: int) -> Any:
        # A named cursor: DECLARE ... then FETCH FORWARD size at a time.
        cur = conn.cursor(name=stream_name())
        cur.itersize = size
        cur.execute(sql, params)
        return cur




_TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK


#: rows from which a result's cursor is closed once fetched (a new one is made for the next
#: statement) rather than kept holding libpq's copy of them
_LARGE_RESULT: Final = 1_000


def _fetched(cur: Any) -> list[Any] | None:
    """The rows of the cursor's statement (None when it returns none), the cyclic GC paused
    while a large result's tuples are made: they hold no cycle, and the collections their
    number sets off are work for nothing (measured: BENCHMARKS.md, "Reading a select whole";
    the rows' builder pauses it likewise). The collector runs again at its next threshold."""
    if not _returns_rows(cur):
        return None
    if cur.pgresult.ntuples < _LARGE_RESULT or not gc.isenabled():
        return cur.fetchall()  # type: ignore[no-any-return]  # psycopg's rows are Any
    gc.disable()
    try:
        return cur.fetchall()  # type: ignore[no-any-return]  # psycopg's rows are Any
    finally:
        gc.enable()


def _returns_rows(cur: Any) -> bool:
    """Whether the cursor's statement returned rows (RETURNING or a select, rows or none).

    Asked of the result's field count: `cursor.description` makes a Column per field on every
    call (measured: BENCHMARKS.md, "Fast paths")."""
    result = cur.pgresult
    return result is not None and result.status == _TUPLES_OK
