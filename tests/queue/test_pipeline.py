"""The worker loop's acks and next claim in one statement on PostgreSQL: one round trip per
batch in the steady state of Queue.run and AsyncQueue.run, and what a failure of that
statement leaves (the connection dying while the server runs it, the connection lost after
the server committed it, the statement failing after its acks ran): every message handled
once, acked once.

Bounded: every wait polls a fixed number of rounds; no test asserts a duration.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import psycopg
import pytest

from tempest_typed import AsyncEngine, Engine, create_async_engine, create_engine, select
from tempest_typed.model import meta_of
from tempest_typed.queue import (
    AsyncQueue,
    Lease,
    Message,
    Queue,
    QueueMessage,
    Summary,
    message_model,
)

from .conftest import RoundTrips, table_name

pytestmark = pytest.mark.postgres

MESSAGES = 200
BATCH = 10


def wait_until(condition: Callable[[], bool], rounds: int = 600, pause: float = 0.05) -> None:
    """Poll `condition` a bounded number of times (30 s at most by default)."""
    for _ in range(rounds):
        if condition():
            return
        time.sleep(pause)
    raise AssertionError("the condition never held")


async def eventually(condition: Callable[[], Awaitable[bool]], rounds: int = 600,
                     pause: float = 0.05) -> None:
    """Poll `condition` a bounded number of times (30 s at most by default)."""
    for _ in range(rounds):
        if await condition():
            return
        await asyncio.sleep(pause)
    raise AssertionError("the condition never held")


def run_in_thread(queue: Queue, handler: Callable[[Lease], object],
                  **options: object) -> tuple[threading.Thread, list[Summary]]:
    out: list[Summary] = []
    thread = threading.Thread(target=lambda: out.append(queue.run(handler, **options)),
                              daemon=True)
    thread.start()
    return thread, out


@pytest.fixture
def trips(pg_url: str) -> Iterator[RoundTrips]:
    """A proxy to the PostgreSQL server that counts the round trips through it."""
    parts = urlsplit(pg_url)
    proxy = RoundTrips(parts.hostname or "127.0.0.1", parts.port or 5432)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture
def direct(pg_url: str) -> Iterator[Engine]:
    """An engine on the server itself, for the test's own reads and writes; the table the
    test names is dropped afterwards, even on failure."""
    engine = create_engine(pg_url, pool_size=4)
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture
def model(direct: Engine) -> Iterator[type[QueueMessage]]:
    """The message model on a fresh table (with an audit of its acks: `acks_of`), dropped
    afterwards."""
    made = message_model(table_name("pipeline"))
    watch = Queue(direct, "mail", model=made)
    watch.drop_table()
    watch.create_table()
    table, audit = meta_of(made).table, audit_table(made)
    direct.execute_sql(f'DROP TABLE IF EXISTS "{audit}"')
    direct.execute_sql(f'CREATE TABLE "{audit}" (id uuid NOT NULL)')
    # Each change of a row to "sent" that commits: an ack that took effect.
    direct.execute_sql(
        f'CREATE FUNCTION "{audit}"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN '
        f'INSERT INTO "{audit}" (id) VALUES (NEW.id); RETURN NEW; END $$')
    direct.execute_sql(
        f'CREATE TRIGGER "{audit}" AFTER UPDATE ON "{table}" FOR EACH ROW '
        f"WHEN (NEW.status = 'sent' AND OLD.status IS DISTINCT FROM 'sent') "
        f'EXECUTE FUNCTION "{audit}"()')
    try:
        yield made
    finally:
        try:
            watch.drop_table()
        finally:
            direct.execute_sql(f'DROP TABLE IF EXISTS "{audit}"')
            direct.execute_sql(f'DROP FUNCTION IF EXISTS "{audit}"()')


def audit_table(model: type[QueueMessage]) -> str:
    return meta_of(model).table + "_acks"


def acks_of(direct: Engine, model: type[QueueMessage]) -> collections.Counter[UUID]:
    """How many acks took effect, by message."""
    rows = direct.execute_sql(f'SELECT id FROM "{audit_table(model)}"').all()
    return collections.Counter(row[0] for row in rows)


def stored(direct: Engine, model: type[QueueMessage]) -> list[QueueMessage]:
    return direct.execute(select(model)).all()


def sent(direct: Engine, model: type[QueueMessage]) -> int:
    return Queue(direct, "mail", model=model).counts()["sent"]


def enqueue(direct: Engine, model: type[QueueMessage], n: int) -> list[UUID]:
    """`n` messages due one after another (1 ms apart, all in the past), in one insert."""
    watch = Queue(direct, "mail", model=model)
    return watch.enqueue_many([Message({"n": k}, delay=k * 0.001 - 60) for k in range(n)])


# -- one round trip per batch ------------------------------------------------------------------


def per_batch(marks: list[tuple[UUID, int]]) -> list[int]:
    """From (lease token, round trips so far) at each handler's start: the round trips
    between the start of one batch and the start of the next, batch after batch."""
    first: dict[UUID, int] = {}
    for token, turns in marks:
        first.setdefault(token, turns)
    starts = list(first.values())
    return [later - earlier for earlier, later in itertools.pairwise(starts)]


def settled(trips: RoundTrips) -> bool:
    """Whether no round trip went through the proxy for a while: the pool has made its
    connections (it makes another in the background when its first user waits for the
    first, and that connection's handshake is no round trip of a batch)."""
    before = trips.turns
    time.sleep(0.2)
    return trips.turns == before


@pytest.mark.parametrize("concurrency", [1, 3])
def test_queue_run_makes_one_round_trip_per_batch(
    trips: RoundTrips, direct: Engine, model: type[QueueMessage], concurrency: int,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch's acks and the next claim go in one statement, one round trip; the first claim
    (with the dead-letter sweep) is the only one on its own. With several handlers, the
    acks of the last messages of a batch, still running at the next claim, come with the
    next batch's: two lease tokens, fenced each by its own, in the same statement (they went
    before the claim, one round trip each: 3.1 per batch)."""
    enqueue(direct, model, MESSAGES)
    engine = create_engine(trips.url(str(direct.url)), pool_size=2)
    statements = AckAndClaims(engine, monkeypatch)
    try:
        engine.execute_sql("SELECT 1")
        wait_until(lambda: settled(trips), rounds=50, pause=0)
        queue = Queue(engine, "mail", model=model, lease_seconds=60, sweep_interval=3600)
        marks: list[tuple[UUID, int]] = []

        def handler(lease: Lease) -> None:
            marks.append((lease.token, trips.turns))
            time.sleep(0.002)  # the last handlers of a batch still run at the next claim

        thread, out = run_in_thread(queue, handler, batch=BATCH, concurrency=concurrency,
                                    poll_interval=0.05)
        try:
            wait_until(lambda: sent(direct, model) == MESSAGES)
        finally:
            queue.stop()
            thread.join(30)
    finally:
        engine.close()
    assert out and out[0].processed == MESSAGES and out[0].leases_lost == 0
    steady = per_batch(marks)
    assert len(steady) == MESSAGES // BATCH - 1  # every claim took a full batch
    assert_one_round_trip_each(steady, statements)
    assert out[0].database_errors == 0
    # the handler thread that ends a batch sends the acks and the next claim itself: with one
    # handler, the thread of run() (the coordinator: heartbeats, stops) sends none of them
    # (with several, it claims when woken at a time a claim is due)
    assert statements.calls >= MESSAGES // BATCH - 1
    from_handlers = [t for t in statements.threads if t != thread.ident]
    assert from_handlers == statements.threads if concurrency == 1 else from_handlers


def assert_one_round_trip_each(steady: list[int], statements: AckAndClaims) -> None:
    """One round trip per batch, but once for each shape of the statement: psycopg prepares
    a statement on its fifth run, sending the prepare alone first (one more round trip)."""
    assert set(steady) <= {1, 2}, steady
    assert steady.count(2) <= len(statements.shapes), (steady, len(statements.shapes))


@pytest.mark.asyncio
@pytest.mark.parametrize("concurrency", [1, 3])
async def test_async_queue_run_makes_one_round_trip_per_batch(
    trips: RoundTrips, direct: Engine, model: type[QueueMessage], concurrency: int,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    enqueue(direct, model, MESSAGES)
    engine = create_async_engine(trips.url(str(direct.url)), pool_size=2)
    statements = AckAndClaims(engine, monkeypatch)
    try:
        await engine.execute_sql("SELECT 1")
        await eventually(lambda: asyncio.to_thread(settled, trips), rounds=50, pause=0)
        queue = AsyncQueue(engine, "mail", model=model, lease_seconds=60, sweep_interval=3600)
        marks: list[tuple[UUID, int]] = []

        async def handler(lease: Lease) -> None:
            marks.append((lease.token, trips.turns))
            await asyncio.sleep(0.002)

        task = asyncio.create_task(queue.run(handler, batch=BATCH, concurrency=concurrency,
                                             poll_interval=0.05))
        try:
            # the test reads the table on the direct engine, off the event loop's thread
            await eventually(lambda: asyncio.to_thread(
                lambda: sent(direct, model) == MESSAGES))
        finally:
            queue.stop()
            summary = await asyncio.wait_for(task, 30)
    finally:
        await engine.dispose()
    assert summary.processed == MESSAGES and summary.leases_lost == 0
    steady = per_batch(marks)
    assert len(steady) == MESSAGES // BATCH - 1
    assert_one_round_trip_each(steady, statements)
    assert summary.database_errors == 0


def test_the_round_trip_counter_counts_a_pipeline_once(
    trips: RoundTrips, pg_url: str
) -> None:
    """The proxy's count is the client's waits: a pipeline of two statements is one, the
    same two statements one after another are two."""
    with psycopg.connect(trips.url(pg_url), autocommit=True) as conn:
        before = trips.turns
        conn.execute("SELECT %s::int", (1,))
        conn.execute("SELECT %s::int", (2,))
        alone = trips.turns - before
        before = trips.turns
        with conn.pipeline():
            conn.cursor().execute("SELECT %s::int", (1,))
            conn.cursor().execute("SELECT %s::int", (2,))
        together = trips.turns - before
    assert (alone, together) == (2, 1)


# -- failures in the ack-and-claim statement ---------------------------------------------------


SETTLING = 'WITH "settled" AS ('


class AckAndClaims:
    """Wraps what sends the worker's acks and next claim: the driver's run_together (the
    blocking queue: two statements in psycopg's pipeline) or its run of the one statement
    (the asyncio queue). Counts those calls and the ones that failed, and lets a test act
    around the `at`-th one (`around`, given the connection, the statements as (SQL,
    parameters) or the SQL and its parameters, and the real call)."""

    def __init__(self, engine: Engine | AsyncEngine, monkeypatch: pytest.MonkeyPatch,
                 around: Callable[..., Any] | None = None, at: int = 1) -> None:
        self.calls = self.failed = 0
        #: the threads that sent the statements, one entry per call
        self.threads: list[int] = []
        #: the acks' texts sent (one per shape: the sizes of the acks' groups)
        self.shapes: set[str] = set()
        io = engine._io
        if isinstance(engine, AsyncEngine):
            one = io.run

            async def run_async(conn: Any, sql: str, params: Any) -> Any:
                if not sql.startswith(SETTLING):
                    return await one(conn, sql, params)
                self.calls += 1
                self.shapes.add(sql)
                try:
                    if around is None or self.calls != at:
                        return await one(conn, sql, params)
                    return await around(conn, sql, params, one)
                except BaseException:
                    self.failed += 1
                    raise

            monkeypatch.setattr(io, "run", run_async)
        else:
            real = io.run_together

            def run(conn: Any, statements: Any) -> Any:
                self.calls += 1
                self.threads.append(threading.get_ident())
                self.shapes.add(statements[0][0])
                try:
                    if around is None or self.calls != at:
                        return real(conn, statements)
                    return around(conn, statements, real)
                except BaseException:
                    self.failed += 1
                    raise

            monkeypatch.setattr(io, "run_together", run)


def acked_ids(statements: Any) -> list[UUID]:
    """The message ids the acks sent with a claim settle: the ack's UUIDs but its last (the
    lease token)."""
    return [p for p in statements[0][1] if isinstance(p, UUID)][:-1]


def failing_after_the_acks(statements: Any) -> list[tuple[str, Any]]:
    """The acks and a claim that fails on the server once the acks have run."""
    (ack, ack_params), (claim, _) = statements
    assert claim.startswith("UPDATE")
    return [(ack, ack_params), ("SELECT 1 / 0", [])]


def settled_ids(params: Any) -> list[UUID]:
    """The message ids the acks of the one ack-and-claim statement settle: its first UUIDs,
    up to the ack's lease token, the last before the ack's statuses."""
    return [p for p in params[:list(params).index("sending")] if isinstance(p, UUID)][:-1]


def failing_once_settled(sql: str) -> str:
    """The one ack-and-claim statement, failing once its parts have run (division by
    zero)."""
    count = 'SELECT count(*) AS "settled" FROM "settled"'
    assert count in sql
    return sql.replace(count, 'SELECT count(*) / 0 AS "settled" FROM "settled"', 1)


def check_every_message_once(direct: Engine, model: type[QueueMessage], ids: list[UUID],
                             handled: collections.Counter[UUID]) -> None:
    """Each message handled once, acked once, and sent."""
    assert handled == collections.Counter(ids)
    assert acks_of(direct, model) == collections.Counter(ids)
    assert {r.status for r in stored(direct, model)} == {"sent"}


def backend_waiting_on_a_lock(direct: Engine, app: str) -> str | None:
    """The statement the worker's backend waits on a row lock in, if it does.

    pg_stat_activity reads a backend's query text from a snapshot and its wait event live, so
    one read can pair the statement that just ended with the wait of the next: the text is
    read again after the wait was seen (a backend held on a row lock stays in its statement)."""
    def read() -> str | None:
        found = direct.execute_sql(
            "SELECT query FROM pg_stat_activity WHERE application_name = %s "
            "AND wait_event_type = 'Lock'", (app,)).all()
        return str(found[0][0]) if found else None

    return None if read() is None else read()


def is_the_ack(query: str) -> bool:
    """Whether `query` is the worker's acks (sent with the next claim, which takes no row it
    must wait for, SKIP LOCKED: the acks wait), alone or the one statement's first part."""
    return query.startswith(SETTLING) or (query.startswith("UPDATE")
                                          and " RETURNING " not in query)


def terminate_the_waiting(direct: Engine, app: str) -> int:
    """Terminate the worker's backend that waits on a row lock (not its idle ones); how
    many."""
    count: int = direct.execute_sql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = %s AND wait_event_type = 'Lock'", (app,)).scalar()
    return count


def test_a_connection_that_dies_during_the_ack_and_claim_loses_no_message(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's backend is terminated while the server runs the statement's acks (held up
    by a row lock) and the claim behind it: both are undone, the acks go again, and every
    message is handled and acked once, with no attempt charged for the undone claim."""
    ids = enqueue(direct, model, 30)
    app = f"tq_pipe_{os.getpid()}"
    engine = create_engine(f"{direct.url}?application_name={app}", pool_size=2)
    statements = AckAndClaims(engine, monkeypatch)
    handled: collections.Counter[UUID] = collections.Counter()
    first: list[Lease] = []
    started, go = threading.Event(), threading.Event()

    def handler(lease: Lease) -> None:
        if not first:
            first.append(lease)
            started.set()
            go.wait(30)
        handled[lease.id] += 1

    try:
        queue = Queue(engine, "mail", model=model, lease_seconds=30, sweep_interval=3600)
        thread, out = run_in_thread(queue, handler, batch=BATCH, poll_interval=0.05)
        try:
            assert started.wait(30)
            with direct.transaction() as locker:  # the first batch's ack will wait on it
                locker.execute_sql(f'SELECT id FROM "{meta_of(model).table}" WHERE id = %s '
                                   "FOR UPDATE", (first[0].id,))
                go.set()
                waiting: list[str] = []

                def blocked() -> bool:
                    query = backend_waiting_on_a_lock(direct, app)
                    if query is not None:
                        waiting.append(query)
                    return bool(waiting)

                wait_until(blocked)
                assert is_the_ack(waiting[0])
                assert terminate_the_waiting(direct, app) == 1
            wait_until(lambda: sent(direct, model) == 30)
        finally:
            go.set()
            queue.stop()
            thread.join(30)
    finally:
        engine.close()
    assert statements.failed == 1  # the acks that waited were the ack-and-claim statement's
    check_every_message_once(direct, model, ids, handled)
    assert {r.attempts for r in stored(direct, model)} == {1}  # the undone claim charged none
    summary = out[0]
    assert (summary.claimed, summary.processed, summary.leases_lost) == (30, 30, 0)
    assert summary.database_errors == 1


def test_a_failed_ack_and_claim_undoes_its_acks_which_go_again(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement fails on the server after its acks ran: they are undone with it, and
    the next step sends them again."""
    ids = enqueue(direct, model, 30)
    engine = create_engine(str(direct.url), pool_size=2)
    after_failure: list[set[str]] = []

    def fail_the_claim(conn: Any, statements: Any, real: Any) -> Any:
        with pytest.raises(psycopg.errors.DivisionByZero) as failed:
            real(conn, failing_after_the_acks(statements))
        after_failure.append({r.status for r in direct.execute(
            select(model).where({"id": {"in": acked_ids(statements)}})).all()})
        raise failed.value

    statements = AckAndClaims(engine, monkeypatch, fail_the_claim)
    handled: collections.Counter[UUID] = collections.Counter()

    def handler(lease: Lease) -> None:
        handled[lease.id] += 1

    try:
        queue = Queue(engine, "mail", model=model, lease_seconds=30, sweep_interval=3600)
        thread, out = run_in_thread(queue, handler, batch=BATCH, poll_interval=0.05)
        try:
            wait_until(lambda: sent(direct, model) == 30)
        finally:
            queue.stop()
            thread.join(30)
    finally:
        engine.close()
    assert after_failure == [{"sending"}]  # the acks were undone with the failed claim
    assert statements.calls >= 3  # the acks went again, with the claim
    check_every_message_once(direct, model, ids, handled)
    assert {r.attempts for r in stored(direct, model)} == {1}
    summary = out[0]
    assert (summary.claimed, summary.processed, summary.leases_lost) == (30, 30, 0)
    assert summary.database_errors == 1


def test_a_connection_lost_after_the_ack_and_claim_committed_loses_no_message(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server committed the acks and claim, and the connection was lost before
    their results came back: the worker cannot tell, so it sends the acks again (they find
    the messages sent) and the batch it claimed unknowingly comes back when its lease ends.
    Every message is still handled once and acked once."""
    ids = enqueue(direct, model, 30)
    engine = create_engine(str(direct.url), pool_size=2)

    def lose_the_answer(conn: Any, statements: Any, real: Any) -> Any:
        real(conn, statements)
        conn.close()
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    AckAndClaims(engine, monkeypatch, lose_the_answer)
    handled: collections.Counter[UUID] = collections.Counter()

    def handler(lease: Lease) -> None:
        handled[lease.id] += 1

    try:
        queue = Queue(engine, "mail", model=model, lease_seconds=2, sweep_interval=3600)
        thread, out = run_in_thread(queue, handler, batch=BATCH, poll_interval=0.05)
        try:
            wait_until(lambda: sent(direct, model) == 30)
        finally:
            queue.stop()
            thread.join(30)
    finally:
        engine.close()
    check_every_message_once(direct, model, ids, handled)
    # the second batch was claimed twice: by the lost answer, then after its lease ended
    assert sorted(r.attempts for r in stored(direct, model)) == [1] * 20 + [2] * 10
    summary = out[0]
    assert summary.claimed == 30 and summary.database_errors == 1
    # The acks sent again find their messages sent and their lease token gone: the worker
    # counts them as lost, though its own first ack took them (it cannot tell the two).
    assert (summary.processed, summary.leases_lost) == (20, 10)


def test_an_error_of_a_handler_threads_step_that_is_not_waited_out_ends_run(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acks and next claim sent from a handler thread fail with an error the loop does
    not wait out (a bug, not the database): run() raises it, as when its own thread sends
    the statement, and nothing was acked or claimed by the statement that never ran."""
    enqueue(direct, model, 30)
    engine = create_engine(str(direct.url), pool_size=2)

    class Bug(Exception):
        pass

    def fail(conn: Any, statements: Any, real: Any) -> Any:
        raise Bug("in the statement's adaptation")

    statements = AckAndClaims(engine, monkeypatch, fail)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            queue.run(lambda lease: None, batch=BATCH, poll_interval=0.05)
        except BaseException as exc:
            errors.append(exc)

    try:
        queue = Queue(engine, "mail", model=model, lease_seconds=30, sweep_interval=3600)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(30)
        assert not thread.is_alive()
    finally:
        engine.close()
    assert len(errors) == 1 and isinstance(errors[0], Bug)
    assert statements.calls == 1 and statements.threads[0] != thread.ident
    assert sent(direct, model) == 0  # the first batch's acks never reached the database
    assert len([r for r in stored(direct, model) if r.status == "sending"]) == BATCH


# -- the same on AsyncQueue --------------------------------------------------------------------


async def arun(queue: AsyncQueue, handler: Callable[[Lease], Awaitable[None]],
               direct: Engine, model: type[QueueMessage], n: int,
               during: Callable[[], Awaitable[None]] | None = None) -> Summary:
    """Run the worker until `n` messages are sent (after `during`, if given); its Summary."""
    task = asyncio.create_task(queue.run(handler, batch=BATCH, poll_interval=0.05))
    try:
        if during is not None:
            await during()
        await eventually(lambda: asyncio.to_thread(lambda: sent(direct, model) == n))
    finally:
        queue.stop()
        summary = await asyncio.wait_for(task, 30)
    return summary


@pytest.mark.asyncio
async def test_async_a_connection_that_dies_during_the_ack_and_claim_loses_no_message(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = enqueue(direct, model, 30)
    app = f"tq_apipe_{os.getpid()}"
    engine = create_async_engine(f"{direct.url}?application_name={app}", pool_size=2)
    statements = AckAndClaims(engine, monkeypatch)
    handled: collections.Counter[UUID] = collections.Counter()
    first: list[Lease] = []
    started, go = asyncio.Event(), asyncio.Event()

    async def handler(lease: Lease) -> None:
        if not first:
            first.append(lease)
            started.set()
            await asyncio.wait_for(go.wait(), 30)
        handled[lease.id] += 1

    async def kill_the_ack_and_claim() -> None:
        await asyncio.wait_for(started.wait(), 30)
        locker = create_async_engine(str(direct.url), pool_size=1)
        try:
            async with locker.transaction() as tx:
                await tx.execute_sql(f'SELECT id FROM "{meta_of(model).table}" WHERE id = %s '
                                     "FOR UPDATE", (first[0].id,))
                go.set()
                waiting: list[str] = []

                async def blocked() -> bool:
                    query = await asyncio.to_thread(backend_waiting_on_a_lock, direct, app)
                    if query is not None:
                        waiting.append(query)
                    return bool(waiting)

                await eventually(blocked)
                assert is_the_ack(waiting[0])
                assert await asyncio.to_thread(terminate_the_waiting, direct, app) == 1
        finally:
            await locker.dispose()

    try:
        queue = AsyncQueue(engine, "mail", model=model, lease_seconds=30, sweep_interval=3600)
        summary = await arun(queue, handler, direct, model, 30, kill_the_ack_and_claim)
    finally:
        go.set()
        await engine.dispose()
    assert statements.failed == 1
    check_every_message_once(direct, model, ids, handled)
    assert {r.attempts for r in stored(direct, model)} == {1}
    assert (summary.claimed, summary.processed, summary.leases_lost) == (30, 30, 0)
    assert summary.database_errors == 1


@pytest.mark.asyncio
async def test_async_a_failed_ack_and_claim_undoes_its_acks_which_go_again(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = enqueue(direct, model, 30)
    engine = create_async_engine(str(direct.url), pool_size=2)
    after_failure: list[set[str]] = []

    async def fail_the_claim(conn: Any, sql: str, params: Any, real: Any) -> Any:
        try:
            await real(conn, failing_once_settled(sql), params)
        except psycopg.errors.DivisionByZero:
            after_failure.append(await asyncio.to_thread(lambda: {r.status for r in (
                direct.execute(select(model).where(
                    {"id": {"in": settled_ids(params)}})).all())}))
            raise
        raise AssertionError("the injected claim did not fail")

    statements = AckAndClaims(engine, monkeypatch, fail_the_claim)
    handled: collections.Counter[UUID] = collections.Counter()

    async def handler(lease: Lease) -> None:
        handled[lease.id] += 1

    try:
        queue = AsyncQueue(engine, "mail", model=model, lease_seconds=30, sweep_interval=3600)
        summary = await arun(queue, handler, direct, model, 30)
    finally:
        await engine.dispose()
    assert after_failure == [{"sending"}]
    assert statements.calls >= 3
    check_every_message_once(direct, model, ids, handled)
    assert {r.attempts for r in stored(direct, model)} == {1}
    assert (summary.claimed, summary.processed, summary.leases_lost) == (30, 30, 0)
    assert summary.database_errors == 1


@pytest.mark.asyncio
async def test_async_a_connection_lost_after_the_ack_and_claim_committed_loses_no_message(
    direct: Engine, model: type[QueueMessage], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = enqueue(direct, model, 30)
    engine = create_async_engine(str(direct.url), pool_size=2)

    async def lose_the_answer(conn: Any, sql: str, params: Any, real: Any) -> Any:
        await real(conn, sql, params)
        await conn.close()
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    AckAndClaims(engine, monkeypatch, lose_the_answer)
    handled: collections.Counter[UUID] = collections.Counter()

    async def handler(lease: Lease) -> None:
        handled[lease.id] += 1

    try:
        queue = AsyncQueue(engine, "mail", model=model, lease_seconds=2, sweep_interval=3600)
        summary = await arun(queue, handler, direct, model, 30)
    finally:
        await engine.dispose()
    check_every_message_once(direct, model, ids, handled)
    assert sorted(r.attempts for r in stored(direct, model)) == [1] * 20 + [2] * 10
    assert summary.claimed == 30 and summary.database_errors == 1
    assert (summary.processed, summary.leases_lost) == (20, 10)
