"""AsyncQueue on the three databases: Queue's methods awaited with the same results, and the
asyncio worker loop: heartbeats, a clean stop on stop() or on cancellation, the grace period,
reconnects, and on PostgreSQL the LISTEN that wakes an idle worker.

Bounded: every wait polls a fixed number of rounds; no test asserts a duration.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import (
    QueryExecutionError,
    ValidationError,
    create_async_engine,
    select,
    sql,
    update,
)
from tempest_typed.queue import AsyncQueue, Lease, Message, QueueMessage, message_model

from .conftest import table_name

pytestmark = pytest.mark.asyncio

BACKENDS = pytest.mark.parametrize("backend", ["postgresql", "mysql", "sqlite"])


def url_of(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'async-queue.db'}"
    return str(request.getfixturevalue("pg_url" if backend == "postgresql" else "mysql_url"))


@asynccontextmanager
async def fresh_queue(url: str, **options: object) -> AsyncIterator[AsyncQueue]:
    """An AsyncQueue of consumer "mail" on a fresh table, dropped afterwards even on failure."""
    engine = create_async_engine(url, pool_size=4)
    queue = AsyncQueue(engine, "mail", model=message_model(table_name("async")),
                       **options)  # type: ignore[arg-type]  # each test passes Queue's own options
    try:
        await queue.drop_table()
        await queue.create_table()
        yield queue
    finally:
        try:
            await engine.dispose()
        finally:  # on an engine of its own: a test may have terminated the queue's connections
            await on_a_new_engine(url, lambda q: q.drop_table(), queue)


async def rows(queue: AsyncQueue) -> list[QueueMessage]:
    return (await queue.engine.execute(select(queue.model))).all()


async def row(queue: AsyncQueue, message_id: UUID) -> QueueMessage:
    return (await queue.engine.execute(select(queue.model).where({"id": message_id}))).one()


async def make_due(queue: AsyncQueue) -> None:
    await queue.engine.execute(update(queue.model).set({"next_attempt_at": sql.now(plus=-1)})
                               .where({"status": {"in": ["queued", "sending"]}}))


async def eventually(condition: Callable[[], Awaitable[bool] | bool], rounds: int = 300,
                     pause: float = 0.05) -> None:
    """Poll `condition` a bounded number of times (15 s at most by default)."""
    for _ in range(rounds):
        got = condition()
        if got if isinstance(got, bool) else await got:
            return
        await asyncio.sleep(pause)
    raise AssertionError("the condition never held")


# -- the methods, awaited ----------------------------------------------------------------------


@BACKENDS
async def test_enqueue_claim_ack_nack_and_the_operations_as_on_queue(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path), lease_seconds=60,
                           max_attempts=2, backoff_seconds=100) as queue:
        first = await queue.enqueue({"n": 0}, key="k")
        assert first is not None and await queue.enqueue({"n": 0}, key="k") is None
        ids = await queue.enqueue_many([Message({"n": n}) for n in range(1, 5)])
        assert len(ids) == 4
        one, two = await queue.claim(2), await queue.claim(10)
        assert len(one) == 2 and len(two) == 3
        assert not {lease.id for lease in one} & {lease.id for lease in two}
        assert all(lease.attempts == 1 for lease in one + two)
        assert await queue.ack(one[0]) and not await queue.ack(one[0])
        assert await queue.nack(one[1], "boom") == "queued"
        assert (await row(queue, one[1].id)).last_error == "boom"
        assert await queue.extend(two[0], 120)
        assert await queue.nack(two[1], retry=False) == "failed"
        assert await queue.counts() == {"queued": 1, "sending": 2, "sent": 1, "failed": 1}
        assert await queue.requeue_failed() == 1
        assert await queue.oldest_waiting_age() is not None
        assert await queue.purge_sent(timedelta(seconds=-60)) == 1
        await make_due(queue)
        again = await queue.claim(10)
        assert one[1].id in {lease.id for lease in again}
        assert await queue.dead_letter_expired() == 0


@BACKENDS
async def test_enqueue_in_the_callers_transaction_rolls_back_with_it(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        with pytest.raises(RuntimeError):
            async with queue.engine.transaction() as tx:
                await queue.enqueue({"order": 1}, key="order-1", session=tx)
                await queue.enqueue_many([Message({"n": n}) for n in range(3)], session=tx)
                raise RuntimeError("the order failed")
        assert await rows(queue) == []
        async with queue.engine.transaction() as tx:
            await queue.enqueue({"order": 2}, session=tx)
        assert len(await rows(queue)) == 1


# -- the worker loop ---------------------------------------------------------------------------


@BACKENDS
async def test_run_acks_what_returned_nacks_what_raised_and_stop_returns_the_summary(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path), max_attempts=1) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(12)])
        handled: list[int] = []

        async def handler(lease: Lease) -> None:
            handled.append(lease.payload["n"])
            await asyncio.sleep(0.01)
            if lease.payload["n"] % 4 == 0:
                raise ValueError(f"bad {lease.payload['n']}")

        task = asyncio.create_task(queue.run(handler, batch=5, concurrency=3,
                                             poll_interval=0.05))
        await eventually(lambda: len(handled) == 12)
        await eventually(lambda: _settled(queue, 12))
        queue.stop()
        summary = await task
        assert sorted(handled) == list(range(12))
        assert (summary.processed, summary.dead_lettered, summary.leases_lost) == (9, 3, 0)
        failed = [r for r in await rows(queue) if r.status == "failed"]
        assert sorted(r.last_error or "" for r in failed) == ["ValueError: bad 0",
                                                              "ValueError: bad 4",
                                                              "ValueError: bad 8"]


async def _settled(queue: AsyncQueue, n: int) -> bool:
    counts = await queue.counts()
    return counts["sent"] + counts["failed"] == n


@BACKENDS
async def test_a_plain_function_handler_runs_on_a_thread(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue({"n": 1})
        threads: list[str] = []
        summary = await queue.process(lambda lease: threads.append(
            threading.current_thread().name))
        assert summary.processed == 1 and threads != [threading.main_thread().name]


@BACKENDS
async def test_cancel_finishes_the_message_in_hand_and_hands_back_the_rest_uncharged(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        started: list[UUID] = []
        finished: list[UUID] = []

        async def handler(lease: Lease) -> None:
            started.append(lease.id)
            await asyncio.sleep(0.3)
            finished.append(lease.id)

        task = asyncio.create_task(queue.run(handler, batch=6, grace_seconds=30))
        await eventually(lambda: bool(started))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert started == finished  # the message in hand was finished, not cut off
        stored = await rows(queue)
        assert {r.id for r in stored if r.status == "sent"} == set(finished)
        rest = [r for r in stored if r.status != "sent"]
        assert rest and all((r.status, r.attempts, r.lease_token) == ("queued", 0, None)
                            for r in rest)


@BACKENDS
async def test_past_the_grace_period_the_handler_is_cancelled_and_its_message_handed_back(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue({"n": 1})
        started = asyncio.Event()
        cancelled: list[bool] = []

        async def handler(lease: Lease) -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        task = asyncio.create_task(queue.run(handler, grace_seconds=0.2))
        await asyncio.wait_for(started.wait(), 15)
        queue.stop()
        summary = await asyncio.wait_for(task, 30)  # far less than the handler's 60 s
        assert summary.released == 1 and cancelled == [True]
        (stored,) = await rows(queue)
        assert (stored.status, stored.attempts, stored.lease_token) == ("queued", 0, None)


@BACKENDS
async def test_a_slow_batch_keeps_its_leases_while_another_worker_claims(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Four messages of 0.5 s on a 1.2 s lease: without heartbeats the second worker would
    take the batch's tail while the first is still on it."""
    url = url_of(backend, request, tmp_path)
    async with fresh_queue(url, lease_seconds=1.2) as queue:
        other_engine = create_async_engine(url, pool_size=2)
        try:
            other = AsyncQueue(other_engine, "mail", model=queue.model, lease_seconds=1.2)
            await queue.enqueue_many([Message({"n": n}) for n in range(4)])
            handled: list[tuple[str, int]] = []

            def handler(name: str) -> Callable[[Lease], Awaitable[None]]:
                async def handle(lease: Lease) -> None:
                    handled.append((name, lease.payload["n"]))
                    await asyncio.sleep(0.5)
                return handle

            first = asyncio.create_task(queue.run(handler("first"), batch=4,
                                                  poll_interval=0.05))
            await eventually(lambda: bool(handled))
            second = asyncio.create_task(other.run(handler("second"), batch=4,
                                                   poll_interval=0.05))
            await eventually(lambda: _settled(queue, 4), rounds=400)
            queue.stop()
            other.stop()
            one, two = await first, await second
        finally:
            await other_engine.dispose()
        assert sorted(n for _, n in handled) == [0, 1, 2, 3]  # each handled once
        assert {name for name, _ in handled} == {"first"}
        assert one.processed == 4 and one.leases_lost == 0 and two.claimed == 0


# -- PostgreSQL: LISTEN/NOTIFY, and reconnects -------------------------------------------------


@pytest.mark.postgres
async def test_an_idle_worker_wakes_on_the_notify_of_an_enqueue_not_the_poll(
    pg_url: str
) -> None:
    async with fresh_queue(pg_url) as queue:
        handled = asyncio.Event()

        async def handler(lease: Lease) -> None:
            handled.set()

        task = asyncio.create_task(queue.run(handler, poll_interval=300))
        try:
            await asyncio.sleep(0.5)  # idle now, waiting on LISTEN
            await queue.enqueue({"n": 1})
            await asyncio.wait_for(handled.wait(), 30)  # the poll would take 300 s
        finally:
            queue.stop()
            await task


@pytest.mark.postgres
async def test_without_the_trigger_the_worker_says_so_and_polls(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with fresh_queue(pg_url) as queue:
        await queue.drop_table()
        await queue.engine.create_all(queue.model)  # the table alone, no trigger
        handled = asyncio.Event()

        async def handler(lease: Lease) -> None:
            handled.set()

        with caplog.at_level(logging.WARNING, logger="tempest_typed.queue"):
            task = asyncio.create_task(queue.run(handler, poll_interval=0.05))
            try:
                await queue.enqueue({"n": 1})
                await asyncio.wait_for(handled.wait(), 30)
            finally:
                queue.stop()
                await task
        assert "no NOTIFY trigger" in caplog.text and "create_table()" in caplog.text


@pytest.mark.postgres
async def test_run_outlives_terminated_backends_and_its_listener_reconnects(
    pg_url: str
) -> None:
    async with fresh_queue(pg_url) as queue:
        handled: set[int] = set()

        async def handler(lease: Lease) -> None:
            handled.add(lease.payload["n"])

        task = asyncio.create_task(queue.run(handler, poll_interval=0.05))
        try:
            for n in range(3):
                await on_a_new_engine(pg_url, lambda q, n=n: q.enqueue({"n": n}), queue)
                await eventually(lambda n=n: n in handled)
                # every other connection of the database: the worker's and its listener
                await on_a_new_engine(pg_url, lambda q: q.engine.execute_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                    "AND backend_type = 'client backend'"), queue)
        finally:
            queue.stop()
            summary = await task
        assert summary.processed == 3 and summary.leases_lost == 0
        assert summary.database_errors > 0


async def on_a_new_engine(url: str, work: Callable[[AsyncQueue], Awaitable[object]],
                          like: AsyncQueue) -> None:
    """Run `work` on a queue of its own engine (which no termination has touched)."""
    engine = create_async_engine(url, pool_size=1)
    try:
        await work(AsyncQueue(engine, like.consumer, model=like.model))
    finally:
        await engine.dispose()


# -- fences and one message's failure, as in test_faults.py ------------------------------------


@BACKENDS
async def test_a_zombies_fenced_ack_is_reported_as_lost_not_processed(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(2)])
        taken: list[Lease] = []

        async def handler(lease: Lease) -> None:
            if not taken:  # the lease runs out meanwhile and another worker takes the message
                await make_due(queue)
                taken.extend(await queue.claim(1))

        summary = await queue.process(handler, 2)
        assert len(taken) == 1
        assert (summary.claimed, summary.processed, summary.leases_lost) == (2, 1, 1)
        assert (await row(queue, taken[0].id)).lease_token == taken[0].token  # the new holder's


@BACKENDS
async def test_a_late_ack_of_a_final_attempt_succeeds_after_the_sweep(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        message = await queue.enqueue({"n": 1}, max_attempts=1)
        (lease,) = await queue.claim()
        await make_due(queue)  # the handler ran past its lease ...
        assert await queue.claim() == []  # ... and the next claim's sweep dead-lettered it
        assert message is not None and (await row(queue, message)).status == "failed"
        assert await queue.ack(lease) is True  # the handler's ack still counts
        stored = await row(queue, message)
        assert (stored.status, stored.lease_token) == ("sent", None)


@BACKENDS
async def test_a_failing_nack_neither_aborts_the_batch_nor_loses_the_error(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(4)])
        real_nack = queue.nack
        failures: list[UUID] = []

        async def flaky_nack(lease: Lease, error: str = "", **kw: Any) -> object:
            if not failures:
                failures.append(lease.id)
                raise QueryExecutionError("connection lost mid-nack", "UPDATE ...", ())
            return await real_nack(lease, error, **kw)

        monkeypatch.setattr(queue, "nack", flaky_nack)

        async def handler(lease: Lease) -> None:
            if lease.payload["n"] == 0:
                raise ValueError("provider said no")

        summary = await queue.process(handler, 4)
        assert failures  # the first nack did fail
        assert (summary.processed, summary.retried, summary.database_errors) == (3, 1, 1)
        stored = await rows(queue)
        failed = next(r for r in stored if r.payload["n"] == 0)
        assert (failed.status, failed.last_error) == ("queued", "ValueError: provider said no")
        assert sorted(r.status for r in stored) == ["queued", "sent", "sent", "sent"]


@BACKENDS
async def test_a_poison_message_is_nacked_with_clean_bounded_text_and_its_batch_mates_acked(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(5)])

        async def handler(lease: Lease) -> None:
            if lease.payload["n"] == 2:
                raise RuntimeError("NUL \x00 and a lone \udc80 surrogate " + "x" * 50_000)

        summary = await queue.process(handler, 5)
        assert (summary.processed, summary.retried) == (4, 1)
        poisoned = next(r for r in await rows(queue) if r.payload["n"] == 2)
        assert poisoned.status == "queued" and poisoned.last_error is not None
        assert poisoned.last_error.startswith("RuntimeError: NUL \\x00 and a lone \\udc80")
        assert "\x00" not in poisoned.last_error and len(poisoned.last_error) <= 2000


@BACKENDS
async def test_bad_input_is_refused_before_anything_is_written(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        with pytest.raises(ValidationError, match="delay"):
            await queue.enqueue_many([Message({"n": 1}), Message({"n": 2}, delay=math.nan)])
        with pytest.raises(ValidationError, match="payload"):
            await queue.enqueue([1, 2])  # type: ignore[arg-type]  # the bad input under test
        with pytest.raises(ValidationError, match="claim"):
            await queue.claim(0)
        with pytest.raises(ValidationError, match="heartbeat_seconds"):
            await queue.run(lambda lease: None, heartbeat_seconds=60)
        assert await rows(queue) == []


@pytest.mark.postgres
async def test_a_table_name_near_the_identifier_limit_keeps_its_indexes_and_notify(
    pg_url: str
) -> None:
    """A 60-byte table name: `<table>_idempotency` would be cut at 63 bytes (and collide
    with the other indexes cut there), and so would the NOTIFY channel."""
    engine = create_async_engine(pg_url)
    queue = AsyncQueue(engine, "mail", model=message_model("q" * 50 + f"_{os.getpid():09d}"))
    try:
        await queue.drop_table()
        await queue.create_table()
        assert await queue.enqueue({"n": 1}, key="k") is not None
        assert await queue.enqueue({"n": 1}, key="k") is None  # the unique index is there
        handled = asyncio.Event()

        async def handler(lease: Lease) -> None:
            handled.set()

        task = asyncio.create_task(queue.run(handler, poll_interval=300))
        try:
            await asyncio.sleep(0.5)
            await queue.enqueue({"n": 2})
            await asyncio.wait_for(handled.wait(), 30)  # woken by NOTIFY, not the poll
        finally:
            queue.stop()
            await task
    finally:
        try:
            await queue.drop_table()
        finally:
            await engine.dispose()


@BACKENDS
async def test_a_loop_of_claims_and_acks_runs_on_one_session(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with fresh_queue(url_of(backend, request, tmp_path)) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        async with queue.engine.session() as session:
            done = 0
            while leases := await queue.claim(4, session=session):
                for lease in leases:
                    done += await queue.ack(lease, session=session)
            assert not session.in_transaction
        assert done == 6 and (await queue.counts())["sent"] == 6
