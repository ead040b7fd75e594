"""AsyncQueue on the three databases: Queue's methods awaited with the same results, and the
asyncio worker loop: heartbeats, a clean stop on stop() or on cancellation, the grace period,
reconnects, and on PostgreSQL the LISTEN that wakes an idle worker.

Bounded: every wait polls a fixed number of rounds; no test asserts a duration.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import multiprocessing
import os
import random
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import (
    QueryExecutionError,
    ValidationError,
    create_async_engine,
    create_engine,
    select,
    sql,
    update,
)
from tempest_typed.model import meta_of
from tempest_typed.queue import AsyncQueue, Lease, Message, QueueMessage, message_model

from .conftest import Faulty, table_name
from .processes import async_run_given_sigterm

pytestmark = pytest.mark.asyncio

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


async def test_enqueue_claim_ack_nack_and_the_operations_as_on_queue(
    url: str
) -> None:
    async with fresh_queue(url, lease_seconds=60,
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
        await queue.engine.execute(update(queue.model).set({"created_at": sql.now(plus=-120)})
                                   .where({"consumer": queue.consumer}))  # two minutes pass
        assert await queue.purge_sent(timedelta(seconds=60)) == 1
        await make_due(queue)
        again = await queue.claim(10)
        assert one[1].id in {lease.id for lease in again}
        assert await queue.dead_letter_expired() == 0


async def test_enqueue_in_the_callers_transaction_rolls_back_with_it(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_run_acks_what_returned_nacks_what_raised_and_stop_returns_the_summary(
    url: str
) -> None:
    async with fresh_queue(url, max_attempts=1) as queue:
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


async def test_a_plain_function_handler_runs_on_a_thread(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
        await queue.enqueue({"n": 1})
        threads: list[str] = []
        summary = await queue.process(lambda lease: threads.append(
            threading.current_thread().name))
        assert summary.processed == 1 and threads != [threading.main_thread().name]


async def test_cancel_finishes_the_message_in_hand_and_hands_back_the_rest_uncharged(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


def _cancelled_by_someone_else() -> None:
    """Raise the CancelledError of a future another task cancelled, as a handler may meet."""
    raise asyncio.CancelledError("the future it awaited was cancelled")


@pytest.mark.parametrize("kind", ["async", "plain"])
async def test_a_cancelled_error_the_handler_raises_itself_is_its_failure(
    url: str, kind: str
) -> None:
    """It was taken for the worker's own cancel: handed back uncharged and delivered again at
    once, 1,446 times in 2 s, and never dead-lettered."""
    async with fresh_queue(url, max_attempts=2, backoff_seconds=0,
                           max_backoff_seconds=0) as queue:
        await queue.enqueue({"mode": "fail"}, delay=-2)  # a batch-mate failing the usual way
        await queue.enqueue({"mode": "cancel"}, delay=-1)
        await queue.enqueue({"mode": "ok"})
        calls: dict[str, int] = {"fail": 0, "cancel": 0, "ok": 0}

        def plain(lease: Lease) -> None:
            calls[lease.payload["mode"]] += 1
            if lease.payload["mode"] == "fail":
                raise ValueError("nope")
            if lease.payload["mode"] == "cancel":
                _cancelled_by_someone_else()

        async def handler(lease: Lease) -> None:
            if lease.payload["mode"] != "cancel":
                plain(lease)
                return
            calls["cancel"] += 1
            future = asyncio.get_running_loop().create_future()
            future.cancel()
            await future

        task = asyncio.create_task(queue.run(handler if kind == "async" else plain, batch=3,
                                             poll_interval=0.05, listen=False))
        await eventually(lambda: calls["cancel"] >= 2 and calls["fail"] >= 2)
        await asyncio.sleep(0.3)
        queue.stop()
        summary = await asyncio.wait_for(task, 30)
        assert calls == {"fail": 2, "cancel": 2, "ok": 1}
        assert (summary.processed, summary.retried, summary.dead_lettered,
                summary.released) == (1, 2, 2, 0)
        by_mode = {r.payload["mode"]: r for r in await rows(queue)}
        assert (by_mode["cancel"].status, by_mode["cancel"].attempts) == ("failed", 2)
        assert (by_mode["cancel"].last_error or "").startswith("CancelledError")
        assert (by_mode["fail"].status, by_mode["fail"].last_error) == ("failed",
                                                                        "ValueError: nope")


async def test_stop_from_a_fast_handler_starts_no_batch_mate(url: str) -> None:
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(5)])
        started: list[int] = []

        async def handler(lease: Lease) -> None:
            started.append(lease.payload["n"])
            if len(started) == 1:
                queue.stop()

        summary = await asyncio.wait_for(queue.run(handler, batch=5, poll_interval=0.1), 30)
        assert len(started) == summary.processed == 1 and summary.released == 4
        assert len(await queue.claim(10)) == 4  # handed back at once


async def test_stop_stops_every_run_of_one_queue_and_a_later_run_works(url: str) -> None:
    """Two run() tasks of one AsyncQueue: stop() ended one of them, the other ran on."""
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        seen: list[int] = []

        async def handler(lease: Lease) -> None:
            seen.append(lease.payload["n"])

        runs = [asyncio.create_task(queue.run(handler, poll_interval=0.1)) for _ in range(2)]
        await eventually(lambda: len(seen) == 6)
        queue.stop()
        summaries = await asyncio.wait_for(asyncio.gather(*runs), 15)
        assert sum(s.processed for s in summaries) == 6 and sorted(seen) == list(range(6))

        async def stopping(lease: Lease) -> None:
            queue.stop()

        await queue.enqueue({"n": 6})  # the stop was taken: the next run() handles, then stops
        summary = await asyncio.wait_for(queue.run(stopping, poll_interval=0.1), 15)
        assert summary.processed == 1


@pytest.mark.parametrize("plain", [False, True])
async def test_a_handler_raising_systemexit_is_its_failure_as_on_queue(
    url: str, plain: bool
) -> None:
    """SystemExit (or KeyboardInterrupt) out of a handler's task ended the event loop, and
    the message went back uncharged: redelivered for ever, never dead-lettered."""
    async with fresh_queue(url, max_attempts=1) as queue:
        first = await queue.enqueue({"n": 1})
        await queue.enqueue({"n": 2})

        def fail(lease: Lease) -> None:
            if lease.payload["n"] == 1:
                raise SystemExit(3)
            raise KeyboardInterrupt("the handler's own")

        async def handler(lease: Lease) -> None:
            fail(lease)

        task = asyncio.create_task(queue.run(fail if plain else handler, poll_interval=0.1))
        await eventually(lambda: _all_failed(queue))
        queue.stop()
        summary = await asyncio.wait_for(task, 15)
        assert summary.dead_lettered == 2 and summary.released == 0
        assert first is not None and (await row(queue, first)).last_error == "SystemExit: 3"


async def _all_failed(queue: AsyncQueue) -> bool:
    return (await queue.counts())["failed"] == 2


async def test_a_handler_that_acks_by_hand_is_counted_as_processed_not_as_a_lost_lease(
    url: str
) -> None:
    """The exactly-once ack(lease, session=tx) in a run() handler was acked again by the loop
    and counted as a lost lease."""
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(2)])

        handled: list[int] = []

        async def handler(lease: Lease) -> None:
            if lease.payload["n"] == 0:
                async with queue.engine.transaction() as tx:
                    assert await queue.ack(lease, session=tx)
            else:
                assert await queue.nack(lease, "by hand", retry=False) == "failed"
            handled.append(lease.payload["n"])
            if len(handled) == 2:
                queue.stop()

        summary = await asyncio.wait_for(queue.run(handler, batch=2, poll_interval=0.1), 30)
        assert (summary.processed, summary.dead_lettered, summary.leases_lost) == (1, 1, 0)
        assert sorted(r.status for r in await rows(queue)) == ["failed", "sent"]


class _Undo(Exception):
    """Rolls back a handler's own transaction."""


async def test_an_ack_by_hand_that_rolled_back_or_was_followed_by_a_raise_is_told_apart(
    url: str
) -> None:
    """An ack(lease, session=tx) whose transaction rolled back, the handler then returning,
    was counted as processed and left the message leased until its lease ended; an ack by
    hand followed by a raise was counted as a lost lease."""
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(3)])

        async def handler(lease: Lease) -> None:
            n = lease.payload["n"]
            if n == 0:
                with contextlib.suppress(_Undo):
                    async with queue.engine.transaction() as tx:
                        assert await queue.ack(lease, session=tx)
                        raise _Undo
            elif n == 1:
                async with queue.engine.transaction() as tx:
                    assert await queue.ack(lease, session=tx)
            else:
                assert await queue.ack(lease)
                raise RuntimeError("after the ack")

        summary = await asyncio.wait_for(queue.process(handler, 10), 30)
        assert (summary.processed, summary.retried, summary.leases_lost) == (2, 1, 0)
        by_n = {r.payload["n"]: r for r in await rows(queue)}
        assert [by_n[n].status for n in range(3)] == ["queued", "sent", "sent"]
        assert "did not commit" in (by_n[0].last_error or "")


def _generator_handler(lease: Lease) -> Iterator[None]:
    yield  # by mistake: calling the handler runs none of its body


async def _async_generator_handler(lease: Lease) -> AsyncIterator[None]:
    yield


@pytest.mark.parametrize("handler", [_generator_handler, _async_generator_handler])
async def test_a_generator_handler_is_refused_and_a_returned_generator_fails_its_message(
    url: str, handler: Callable[[Lease], object]
) -> None:
    """Calling a generator function runs none of its body: the message was acked, its work
    never done."""
    async with fresh_queue(url) as queue:
        await queue.enqueue({"n": 1})
        with pytest.raises(ValidationError, match="generator function"):
            await queue.process(handler)
        with pytest.raises(ValidationError, match="generator function"):
            await queue.run(handler)
        assert [r.status for r in await rows(queue)] == ["queued"]  # nothing claimed
        summary = await queue.process(lambda lease: handler(lease))
        assert (summary.processed, summary.retried) == (0, 1)
        assert "generator" in ((await rows(queue))[0].last_error or "")


async def test_an_awaitable_an_async_handler_returns_is_awaited_as_its_work(url: str) -> None:
    """`return send(lease)` in an async handler, its await forgotten: the message was acked
    with the coroutine never awaited, its work not done."""
    async with fresh_queue(url) as queue:
        await queue.enqueue({"n": 1})
        sent: list[int] = []

        async def send(lease: Lease) -> None:
            sent.append(lease.payload["n"])

        async def handler(lease: Lease) -> Any:
            return send(lease)

        summary = await queue.process(handler)
        assert summary.processed == 1 and sent == [1]


async def test_sigterm_stops_run_cleanly_as_it_stops_queue_run(url: str) -> None:
    """AsyncQueue.run() installed no signal handler: SIGTERM (a service manager's stop)
    killed the process with the batch in hand, its messages left leased with an attempt
    charged until their leases ran out. Two runs on one event loop both stop."""
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(3)])
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        worker = context.Process(target=async_run_given_sigterm,
                                 args=(url, meta_of(queue.model).table, out))
        worker.start()
        await asyncio.to_thread(worker.join, 60)
        worker.kill()
        assert worker.exitcode == 0
        processed, released, restored = out.get(timeout=5)
        # at least the two unstarted messages handed back (the idle run's claim, in flight
        # at the signal, may hand back what it took too)
        assert (processed, released >= 2, restored) == (1, True, True)
        stored = await rows(queue)
        assert sorted((r.status, r.attempts) for r in stored) == [
            ("queued", 0), ("queued", 0), ("sent", 1)]


async def test_cancelling_run_while_a_handler_runs_still_stops_cleanly(url: str) -> None:
    """The handler's own CancelledError is a failure; the worker's cancel of run() is not."""
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(3)])
        started = asyncio.Event()

        async def handler(lease: Lease) -> None:
            started.set()
            await asyncio.sleep(60)

        task = asyncio.create_task(queue.run(handler, batch=3, grace_seconds=0.2))
        await asyncio.wait_for(started.wait(), 15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        stored = await rows(queue)
        assert all((r.status, r.attempts, r.lease_token, r.last_error)
                   == ("queued", 0, None, None) for r in stored)


async def test_past_the_grace_period_the_handler_is_cancelled_and_its_message_handed_back(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_a_slow_batch_keeps_its_leases_while_another_worker_claims(
    url: str
) -> None:
    """Four messages of 0.5 s on a 1.2 s lease: without heartbeats the second worker would
    take the batch's tail while the first is still on it."""
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
    app = f"tq_alisten_{os.getpid()}"
    async with fresh_queue(f"{pg_url}?application_name={app}") as queue:
        handled: set[int] = set()

        async def handler(lease: Lease) -> None:
            handled.add(lease.payload["n"])

        task = asyncio.create_task(queue.run(handler, poll_interval=0.05))
        try:
            for n in range(3):
                await on_a_new_engine(pg_url, lambda q, n=n: q.enqueue({"n": n}), queue)
                await eventually(lambda n=n: n in handled)
                # every connection of the worker's engine: the pool's and its listener's
                # (and no other test's, on a server others use too)
                await terminate(pg_url, app)
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


async def test_a_zombies_fenced_ack_is_reported_as_lost_not_processed(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_a_late_ack_of_a_final_attempt_succeeds_after_the_sweep(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
        message = await queue.enqueue({"n": 1}, max_attempts=1)
        (lease,) = await queue.claim()
        await make_due(queue)  # the handler ran past its lease ...
        assert await queue.claim() == []  # ... and the next claim's sweep dead-lettered it
        assert message is not None and (await row(queue, message)).status == "failed"
        assert await queue.ack(lease) is True  # the handler's ack still counts
        stored = await row(queue, message)
        assert (stored.status, stored.lease_token) == ("sent", None)


async def test_a_failing_nack_neither_aborts_the_batch_nor_loses_the_error(
    url: str,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_a_poison_message_is_nacked_with_clean_bounded_text_and_its_batch_mates_acked(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_bad_input_is_refused_before_anything_is_written(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
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


async def test_a_loop_of_claims_and_acks_runs_on_one_session(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        async with queue.engine.session() as session:
            done = 0
            while leases := await queue.claim(4, session=session):
                for lease in leases:
                    done += await queue.ack(lease, session=session)
            assert not session.in_transaction
        assert done == 6 and (await queue.counts())["sent"] == 6


# -- a stop during an outage, as in test_faults.py ---------------------------------------------


def messages_of(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The queue's log messages that contain `text`."""
    return [r.getMessage() for r in caplog.records
            if r.name == "tempest_typed.queue" and text in r.getMessage()]


@asynccontextmanager
async def queue_behind(faulty: Faulty, **options: object) -> AsyncIterator[AsyncQueue]:
    """An AsyncQueue on a fresh table, its engine reaching the database through the fault."""
    engine = create_async_engine(faulty.url, pool_size=4, **faulty.options)  # type: ignore[arg-type]  # each database's own options
    queue = AsyncQueue(engine, "mail", model=message_model(table_name("aoutage")),
                       **options)  # type: ignore[arg-type]  # each test passes Queue's own options
    try:
        await on_a_new_engine(faulty.direct, lambda q: q.drop_table(), queue)
        await on_a_new_engine(faulty.direct, lambda q: q.create_table(), queue)
        yield queue
    finally:
        faulty.fault.restore()
        try:
            await engine.dispose()
        finally:
            await on_a_new_engine(faulty.direct, lambda q: q.drop_table(), queue)


def first_message_blocks(go: asyncio.Event, started: asyncio.Event,
                         ) -> Callable[[Lease], Awaitable[None]]:
    """A handler whose first call waits for `go`; the batch's other messages stay unstarted."""
    async def handle(lease: Lease) -> None:
        started.set()
        await go.wait()
    return handle


async def test_stop_during_an_outage_hands_back_the_unstarted_messages_once_the_database_answers(
    faulty: Faulty, caplog: pytest.LogCaptureFixture
) -> None:
    async with queue_behind(faulty) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        started, go = asyncio.Event(), asyncio.Event()
        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            task = asyncio.create_task(queue.run(first_message_blocks(go, started), batch=6,
                                                 grace_seconds=60))
            await asyncio.wait_for(started.wait(), 15)
            faulty.fault.cut()
            queue.stop()
            await eventually(lambda: bool(messages_of(caplog, "release failed")))
            assert messages_of(caplog, "handed back") == []  # nothing was, yet
            faulty.fault.restore()
            go.set()
            summary = await asyncio.wait_for(task, 60)
        assert (summary.released, summary.processed, summary.abandoned) == (5, 1, 0)
        stored = await rows(queue)
        assert sorted((r.status, r.attempts) for r in stored) == [("queued", 0)] * 5 + [
            ("sent", 1)]
        assert all(r.lease_token is None for r in stored)
        assert messages_of(caplog, "handed back") == [
            "worker 'mail': handed back 5 message(s), no attempt charged"]


async def test_an_outage_past_the_grace_period_is_reported_as_such_not_as_a_hand_back(
    faulty: Faulty, caplog: pytest.LogCaptureFixture
) -> None:
    async with queue_behind(faulty) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(6)])
        started, go = asyncio.Event(), asyncio.Event()
        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            task = asyncio.create_task(queue.run(first_message_blocks(go, started), batch=6,
                                                 grace_seconds=1.0))
            await asyncio.wait_for(started.wait(), 15)
            faulty.fault.cut()
            queue.stop()
            summary = await asyncio.wait_for(task, 60)
        faulty.fault.restore()
        assert (summary.released, summary.processed, summary.abandoned) == (0, 0, 6)
        assert messages_of(caplog, "handed back") == []
        assert len(messages_of(caplog, "could not hand back 6 message(s)")) == 1
        stored = await on_a_new_engine_rows(faulty.direct, queue)
        assert {(r.status, r.attempts) for r in stored} == {("sending", 1)}


async def on_a_new_engine_rows(url: str, like: AsyncQueue) -> list[QueueMessage]:
    """The rows of the queue's table, read on an engine of its own."""
    engine = create_async_engine(url, pool_size=1)
    try:
        return (await engine.execute(select(like.model))).all()
    finally:
        await engine.dispose()


# -- repeated terminations: the pool, the heartbeats, the handlers told ------------------------


async def terminate(url: str, app: str, older_than: str = "0 s") -> int:
    """Terminate the backends of the connections named `app` (established `older_than` ago
    at least), from an engine of its own; how many."""
    killer = create_async_engine(url, pool_size=1)
    try:
        count: int = (await killer.execute_sql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s AND backend_start <= now() - %s::interval",
            (app, older_than))).scalar()
        return count
    finally:
        await killer.dispose()


@pytest.mark.postgres
async def test_a_pool_whose_idle_connections_were_terminated_hands_out_a_new_one_at_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the blocking engine's (test_faults.py): the pool's check backed off 1 s, 2 s ...
    between dead connections; the worker missed its heartbeats meanwhile."""
    from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules

    monkeypatch.setattr(PsycopgRules, "_PING_AFTER_IDLE", 0.0)  # ping every connection
    app = f"tq_apool_{os.getpid()}"
    engine = create_async_engine(f"{pg_url}?application_name={app}", pool_size=4,
                                 pool_timeout=2)
    try:
        sessions = [engine.session() for _ in range(4)]
        for session in sessions:
            await session.execute_sql("SELECT 1")  # four connections, all in use at once
        for session in sessions:
            await session.close()  # ... and all idle in the pool now
        assert await terminate(pg_url, app) == 4
        assert (await engine.execute_sql("SELECT 1")).scalar() == 1
    finally:
        await engine.dispose()


class Ledger:
    """What the handlers of two workers saw (as test_faults.Ledger): when each handler ran,
    and whether its lease was held when it started, and when it ended if not cancelled."""

    def __init__(self, watch: AsyncQueue) -> None:
        self.watch = watch  # on connections nobody terminates
        self.runs: dict[UUID, list[tuple[float, float]]] = {}
        self.started_unheld: list[UUID] = []
        self.ended_unheld_untold: list[UUID] = []
        self.cancelled = 0

    async def held(self, lease: Lease) -> bool:
        stored = await row(self.watch, lease.id)
        return (stored.lease_token == lease.token and stored.status == "sending"
                and stored.next_attempt_at is not None
                and stored.next_attempt_at > datetime.now(UTC))

    def handler(self, seconds: float, work: AsyncQueue) -> Callable[[Lease], Awaitable[None]]:
        async def handle(lease: Lease) -> None:
            start = loop_time()
            try:
                if not await self.held(lease):
                    self.started_unheld.append(lease.id)
                with contextlib.suppress(QueryExecutionError):  # its connection may be killed
                    await work.engine.execute_sql("SELECT 1")  # the handler's own database use
                await asyncio.sleep(seconds)  # the work; cancelled if the lease is lost
                if not await self.held(lease) and not lease.lost:
                    self.ended_unheld_untold.append(lease.id)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
            finally:
                self.runs.setdefault(lease.id, []).append((start, loop_time()))
        return handle

    def overlaps(self) -> list[UUID]:
        """The messages two handlers ran at the same time."""
        out = []
        for message, runs in self.runs.items():
            runs = sorted(runs)
            if any(later[0] < earlier[1] for earlier, later in itertools.pairwise(runs)):
                out.append(message)
        return out


def loop_time() -> float:
    return asyncio.get_running_loop().time()


@pytest.mark.postgres
async def test_run_under_repeated_terminations_never_raises_nor_runs_a_message_twice_at_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After repeated terminations the async worker waited 6 s in the pool's check, missed
    heartbeats (five messages ran twice at once, 18 handlers outside their lease), and then
    run() raised "no connection free"."""
    from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules

    # every connection taken from the pool is pinged, as one idle for a while would be
    monkeypatch.setattr(PsycopgRules, "_PING_AFTER_IDLE", 0.0)
    app = f"tq_aterms_{os.getpid()}"
    engine = create_async_engine(f"{pg_url}?application_name={app}", pool_size=4,
                                 pool_timeout=3)
    async with fresh_queue(pg_url, lease_seconds=1.5) as other:
        queue = AsyncQueue(engine, "mail", model=other.model, lease_seconds=1.5)
        try:
            await other.enqueue_many([Message({"n": n}) for n in range(40)])
            ledger = Ledger(other)
            first = asyncio.create_task(queue.run(ledger.handler(0.2, queue), batch=5,
                                                  concurrency=3, poll_interval=0.05))
            second = asyncio.create_task(other.run(ledger.handler(0.2, other), batch=5,
                                                   concurrency=3, poll_interval=0.05))
            kills = 0
            for _ in range(200):  # bounded: about 40 s at most
                if (await other.counts())["sent"] == 40:
                    break
                kills += await terminate(pg_url, app, older_than="0.2 s")
                await asyncio.sleep(0.2)
            queue.stop()
            other.stop()
            one, _ = await asyncio.gather(first, second)  # raises if run() raised
        finally:
            await engine.dispose()
        assert kills > 0
        assert await other.counts() == {"queued": 0, "sending": 0, "sent": 40, "failed": 0}
        assert ledger.overlaps() == []
        assert ledger.started_unheld == []
        assert ledger.ended_unheld_untold == []
        assert one.database_errors > 0


class FailingHeartbeats:
    """Makes a queue's heartbeats fail while `outage` is set (the claim, acks and releases
    still reach the database); `over` is set by the first heartbeat that reaches it after a
    failed one."""

    def __init__(self, queue: AsyncQueue, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outage = False
        self.over = False
        self.failures = 0
        real = queue._extend_all_op

        def extend_all(leases: Any, seconds: float) -> Any:
            if self.outage:
                self.failures += 1
                raise QueryExecutionError("connection lost mid-heartbeat", "UPDATE ...", ())
            if self.failures:
                self.over = True
            return real(leases, seconds)

        monkeypatch.setattr(queue, "_extend_all_op", extend_all)


async def test_while_heartbeats_fail_no_handler_starts_and_the_worker_says_so(
    url: str,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async with fresh_queue(url, lease_seconds=1.5) as queue:
        await queue.enqueue_many([Message({"n": n}, delay=n * 0.001 - 1) for n in range(3)])
        beats = FailingHeartbeats(queue, monkeypatch)
        first_started, go = asyncio.Event(), asyncio.Event()
        started_during_outage: list[int] = []

        async def handler(lease: Lease) -> None:
            if lease.payload["n"] == 0:
                first_started.set()
                await go.wait()
            elif beats.outage or (beats.failures and not beats.over):
                started_during_outage.append(lease.payload["n"])

        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            task = asyncio.create_task(queue.run(handler, batch=3, poll_interval=0.05))
            try:
                await asyncio.wait_for(first_started.wait(), 15)
                beats.outage = True
                await eventually(lambda: bool(messages_of(caplog, "did not reach the database")))
                go.set()  # the first handler returns while the heartbeats fail ...
                await eventually(lambda: _settled(queue, 1))
                failed = beats.failures
                await eventually(lambda: beats.failures >= failed + 2)  # ... and go on failing
                beats.outage = False
                await eventually(lambda: _settled(queue, 3))
            finally:
                go.set()
                beats.outage = False
                queue.stop()
                summary = await task
        assert started_during_outage == []
        assert summary.processed == 3
        assert messages_of(caplog, "did not reach the database: no handler starts")
        assert messages_of(caplog, "heartbeats reach the database again")


async def test_a_handler_whose_message_another_worker_took_is_cancelled(
    url: str
) -> None:
    async with fresh_queue(url, lease_seconds=1.5) as queue:
        await queue.enqueue({"n": 1})
        told: list[bool] = []

        async def handler(lease: Lease) -> None:
            # the lease runs out (a long pause of this process) and another worker takes it
            await queue.engine.execute(update(queue.model).set(
                {"next_attempt_at": sql.now(plus=-1)}).where({"id": lease.id}))
            await on_a_new_engine(url, take, queue)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:  # the next heartbeat finds the message taken
                told.append(lease.lost)
                raise

        async def take(other: AsyncQueue) -> None:
            assert len(await other.claim(1)) == 1

        summary = await asyncio.wait_for(queue.process(handler, 1), 30)
        assert told == [True]
        assert (summary.processed, summary.leases_lost) == (0, 1)


async def test_a_handler_whose_lease_ran_out_while_heartbeats_failed_is_cancelled(
    url: str,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    async with fresh_queue(url, lease_seconds=1.5) as queue:
        await queue.enqueue({"n": 1})
        FailingHeartbeats(queue, monkeypatch).outage = True
        told: list[bool] = []

        async def handler(lease: Lease) -> None:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:  # no heartbeat reached the database: it ran out
                told.append(lease.lost)
                raise

        summary = await asyncio.wait_for(queue.process(handler, 1), 30)
        assert told == [True]
        # nobody took it meanwhile: it is handed back, its attempt not charged
        assert (summary.processed, summary.released) == (0, 1)
        (stored,) = await rows(queue)
        assert (stored.status, stored.attempts, stored.lease_token) == ("queued", 0, None)


@pytest.mark.parametrize("url", ["mysql", "sqlite"], indirect=True)  # PostgreSQL's loop keeps a session
async def test_a_pool_with_no_connection_free_is_waited_out_not_raised(
    url: str,
    caplog: pytest.LogCaptureFixture
) -> None:
    async with fresh_queue(url) as watch:  # on connections of its own
        engine = create_async_engine(url, pool_size=1, pool_timeout=0.3)
        queue = AsyncQueue(engine, "mail", model=watch.model, lease_seconds=1.5)
        try:
            await watch.enqueue({"n": 1})

            async def handler(lease: Lease) -> None:
                async with engine.session() as session:
                    await session.execute_sql("SELECT 1")  # the only connection, held ...
                    await eventually(lambda: bool(messages_of(caplog, "no connection free")))

            with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
                task = asyncio.create_task(queue.run(handler, poll_interval=0.05))
                try:
                    await eventually(lambda: _settled(watch, 1))
                finally:
                    queue.stop()
                    summary = await task  # raises if run() raised
            assert summary.processed == 1 and summary.database_errors >= 1
        finally:
            await engine.dispose()


# -- a plain handler past the grace period does not hold the process ---------------------------

#: a process that runs AsyncQueue.run with a plain handler that never returns in time, stops
#: it, and returns from asyncio.run(): its interpreter must then exit
PAST_GRACE = """
import asyncio, sys, threading, time
from tempest_typed import create_async_engine
from tempest_typed.queue import AsyncQueue, message_model

async def main() -> None:
    engine = create_async_engine(sys.argv[1])
    queue = AsyncQueue(engine, "mail", model=message_model(sys.argv[2]))
    started = threading.Event()

    def handler(lease):  # a plain function: it runs on a thread
        started.set()
        time.sleep(120)

    task = asyncio.create_task(queue.run(handler, grace_seconds=0.3, poll_interval=0.05))
    while not started.is_set():
        await asyncio.sleep(0.05)
    queue.stop()
    summary = await task
    print("released", summary.released, flush=True)
    await engine.dispose()

asyncio.run(main())
"""


@pytest.mark.parametrize("url", ["sqlite", "postgresql"], indirect=True)
async def test_a_plain_handler_past_the_grace_period_does_not_hold_the_process(
    url: str
) -> None:
    """Its thread was the event loop's default executor's, which asyncio.run() and the
    interpreter's exit wait for: the process lived until the handler returned."""
    async with fresh_queue(url) as queue:
        await queue.enqueue({"n": 1})
        table = meta_of(queue.model).table
        worker = await asyncio.create_subprocess_exec(
            sys.executable, "-c", PAST_GRACE, url, table,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(worker.communicate(), 60)  # the handler: 120 s
        finally:
            if worker.returncode is None:
                worker.kill()
                await worker.wait()
        assert worker.returncode == 0, err.decode()
        assert out.decode().split() == ["released", "1"]
        (stored,) = await rows(queue)
        assert (stored.status, stored.attempts, stored.lease_token) == ("queued", 0, None)


# -- claim order, bad input: as on Queue -------------------------------------------------------


async def test_claim_returns_its_batch_oldest_due_first(
    url: str
) -> None:
    async with fresh_queue(url) as queue:
        delays = [-d for d in random.Random(7).sample(range(1, 61), 30)]  # due 1-60 s ago
        await queue.enqueue_many([Message({"d": d}, delay=d) for d in delays])
        due = sorted(delays)
        got = [[lease.payload["d"] for lease in await queue.claim(n)] for n in (10, 1, 19)]
        assert got == [due[:10], due[10:11], due[11:]]
        later = [-d for d in random.Random(8).sample(range(1, 61), 10)]
        await queue.enqueue_many([Message({"later": d}, delay=d) for d in later])
        seen: list[int] = []

        async def handler(lease: Lease) -> None:
            seen.append(lease.payload["later"])

        await queue.process(handler, 10)  # one handler at a time, in the claim's order
        assert seen == sorted(later)


#: a call with one bad argument, and the name its ValidationError must give (test_faults.py
#: has the same for Queue)
BAD_CALLS: dict[str, tuple[Callable[[AsyncQueue, Lease], Awaitable[object]], str]] = {
    "purge_sent(5)": (lambda q, lease: q.purge_sent(5), "older_than"),  # type: ignore[arg-type]  # the bad input under test
    "purge_sent(None)": (lambda q, lease: q.purge_sent(None), "older_than"),  # type: ignore[arg-type]  # the bad input under test
    "purge_sent(-1 day)": (lambda q, lease: q.purge_sent(timedelta(days=-1)), "older_than"),
    "purge_sent(batch_size=0)": (lambda q, lease: q.purge_sent(timedelta(0), batch_size=0),
                                 "batch_size"),
    "nack(retry='no')": (lambda q, lease: q.nack(lease, "x", retry="no"), "retry"),  # type: ignore[arg-type]  # the bad input under test
    "requeue_failed('abc')": (lambda q, lease: q.requeue_failed("abc"), "ids"),  # type: ignore[arg-type]  # the bad input under test
    "enqueue_many(42)": (lambda q, lease: q.enqueue_many(42), "enqueue_many"),  # type: ignore[arg-type]  # the bad input under test
    "claim(lease_seconds=0)": (lambda q, lease: q.claim(1, lease_seconds=0), "lease_seconds"),
    "extend(seconds=-1)": (lambda q, lease: q.extend(lease, -1), "seconds"),
    "enqueue(session=a sync one)": (
        lambda q, lease: q.enqueue({}, session=create_engine("sqlite://:memory:").session()),  # type: ignore[arg-type]  # the bad input under test
        "session"),
    "process(None)": (lambda q, lease: q.process(None), "handler"),  # type: ignore[arg-type]  # the bad input under test
    "run(None)": (lambda q, lease: q.run(None), "handler"),  # type: ignore[arg-type]  # the bad input under test
    "run(poll_interval=0)": (lambda q, lease: q.run(print, poll_interval=0), "poll_interval"),
    "run(batch=0)": (lambda q, lease: q.run(print, batch=0), "batch"),
    "run(listen='no')": (lambda q, lease: q.run(print, listen="no"), "listen"),  # type: ignore[arg-type]  # the bad input under test
    "run(install_signal_handlers='yes')": (
        lambda q, lease: q.run(print, install_signal_handlers="yes"),  # type: ignore[arg-type]  # the bad input under test
        "install_signal_handlers"),
}


@pytest.mark.parametrize("call", list(BAD_CALLS))
async def test_every_method_refuses_a_bad_argument_before_it_writes(
    url: str, call: str
) -> None:
    async with fresh_queue(url) as queue:
        await queue.enqueue_many([Message({"n": n}) for n in range(3)])
        leased, sent, failed = await queue.claim(3)
        await queue.ack(sent)
        await queue.nack(failed, "boom", retry=False)
        before = sorted((str(r.id), r.status, r.attempts, str(r.lease_token))
                        for r in await rows(queue))
        make, name = BAD_CALLS[call]
        with pytest.raises(ValidationError, match=name):
            await make(queue, leased)
        assert sorted((str(r.id), r.status, r.attempts, str(r.lease_token))
                      for r in await rows(queue)) == before


#: every method that takes session=, called with `session`
SESSION_CALLS: dict[str, Callable[[AsyncQueue, Lease, Any], Awaitable[object]]] = {
    "enqueue": lambda q, lease, s: q.enqueue({"n": 9}, session=s),
    "enqueue_many": lambda q, lease, s: q.enqueue_many([Message({"n": 9})], session=s),
    "claim": lambda q, lease, s: q.claim(5, session=s),
    "dead_letter_expired": lambda q, lease, s: q.dead_letter_expired(session=s),
    "ack": lambda q, lease, s: q.ack(lease, session=s),
    "nack": lambda q, lease, s: q.nack(lease, "x", session=s),
    "extend": lambda q, lease, s: q.extend(lease, 30, session=s),
}


@pytest.mark.parametrize("other", ["same URL", "SQLite"])
@pytest.mark.parametrize("call", list(SESSION_CALLS))
async def test_a_session_of_another_engine_is_refused_before_it_writes(
    url: str, tmp_path: Path, call: str, other: str
) -> None:
    """A session of another engine was taken: enqueue wrote into the other database and ack
    on it returned False, leaving the message 'sending'."""
    foreign = create_async_engine(url if other == "same URL"
                                  else f"sqlite:///{tmp_path / 'o.db'}")
    try:
        async with fresh_queue(url) as queue:
            await queue.enqueue_many([Message({"n": n}) for n in range(2)])
            leased = await queue.claim(1)
            before = sorted((str(r.id), r.status, r.attempts, str(r.lease_token))
                            for r in await rows(queue))
            async with foreign.transaction() as tx:
                with pytest.raises(ValidationError, match=r"session= takes an AsyncSession of "
                                   r"the queue's engine .* another engine"):
                    await SESSION_CALLS[call](queue, leased[0], tx)
            assert sorted((str(r.id), r.status, r.attempts, str(r.lease_token))
                          for r in await rows(queue)) == before
    finally:
        await foreign.dispose()


@pytest.mark.parametrize("consumer", ["a\x00b", "\ud800"])
async def test_a_consumer_name_no_database_stores_is_refused_at_construction(
    url: str, consumer: str
) -> None:
    """A NUL was taken, and every statement of the queue then failed on the name."""
    engine = create_async_engine(url)
    try:
        with pytest.raises(ValidationError, match="consumer name with no NUL"):
            AsyncQueue(engine, consumer)
    finally:
        await engine.dispose()


async def test_an_async_queue_on_a_blocking_engine_is_refused_naming_queue(
    tmp_path: Path
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with pytest.raises(ValidationError, match="for an Engine use Queue"):
            AsyncQueue(engine, "mail")  # type: ignore[arg-type]  # the bad input under test
    finally:
        engine.close()
