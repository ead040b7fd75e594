"""The queue in production, on real databases: slow batches keep their leases, a zombie's ack
is reported as lost, a failing nack or a poison message touches no other message, bad input
is refused before anything is written, and run() stops cleanly and outlives disconnects.

Bounded: every loop has a fixed number of rounds, every handler a fixed sleep; the whole
module runs in well under a minute per database.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from uuid import UUID

import pytest

from tempest_typed import Engine, QueryExecutionError, ValidationError, create_engine, select
from tempest_typed.queue import Lease, Message, Queue, QueueMessage, Summary, message_model

from .conftest import make_due, table_name


def row(queue: Queue, message_id: UUID) -> QueueMessage:
    return queue.engine.execute(select(queue.model).where({"id": message_id})).one()


def rows(queue: Queue) -> list[QueueMessage]:
    return queue.engine.execute(select(queue.model).where({"consumer": queue.consumer})).all()


def run_in_thread(queue: Queue, handler: Callable[[Lease], object],
                  **options: object) -> tuple[threading.Thread, list[Summary]]:
    out: list[Summary] = []
    thread = threading.Thread(target=lambda: out.append(queue.run(handler, **options)),
                              daemon=True)
    thread.start()
    return thread, out


def wait_until(condition: Callable[[], bool], rounds: int = 300, pause: float = 0.05) -> None:
    """Poll `condition` a bounded number of times (15 s at most by default)."""
    for _ in range(rounds):
        if condition():
            return
        time.sleep(pause)
    raise AssertionError("the condition never held")


@pytest.fixture
def second_engine(engine: Engine) -> Iterator[Engine]:
    """Another engine on the same database: a second worker, with its own connections."""
    other = create_engine(str(engine.url))
    try:
        yield other
    finally:
        other.close()


# -- leases are kept while handlers run ------------------------------------------------------


def test_a_slow_batch_keeps_its_leases_and_no_handler_starts_on_a_lost_one(
    queue: Queue, second_engine: Engine
) -> None:
    """Six messages of 0.6 s on a 2 s lease, two workers (the issue saw it with 0.45 s and
    1 s): without heartbeats the second worker took the batch's tail mid-batch."""
    queue.lease_seconds = 2.0
    queue.enqueue_many([Message({"n": n}) for n in range(6)])
    other = Queue(second_engine, "mail", model=queue.model, lease_seconds=2.0)
    handled: list[tuple[str, UUID, bool]] = []
    lock = threading.Lock()

    def handler(worker: str, q: Queue) -> Callable[[Lease], None]:
        def handle(lease: Lease) -> None:
            stored = q.engine.execute(select(q.model).where({"id": lease.id})).one()
            assert stored.next_attempt_at is not None
            held = (stored.lease_token == lease.token
                    and stored.next_attempt_at > datetime.now(UTC))
            with lock:
                handled.append((worker, lease.id, held))
            time.sleep(0.6)
        return handle

    first, first_out = run_in_thread(queue, handler("a", queue), batch=6, poll_interval=0.05)
    wait_until(lambda: bool(handled))
    second, second_out = run_in_thread(other, handler("b", other), batch=6, poll_interval=0.05)
    try:
        wait_until(lambda: queue.counts()["sent"] == 6, rounds=200)
    finally:
        queue.stop()
        other.stop()
        first.join(30)
        second.join(30)
    assert all(held for _, _, held in handled), handled  # every start held its lease
    assert sorted(i for _, i, _ in handled) == sorted(r.id for r in rows(queue))  # once each
    summary = first_out[0]
    summary.add(second_out[0])
    assert (summary.processed, summary.leases_lost) == (6, 0)
    assert {r.attempts for r in rows(queue)} == {1}


def test_process_extends_the_leases_while_its_handlers_run(
    queue: Queue, second_engine: Engine
) -> None:
    queue.lease_seconds = 2.0
    queue.enqueue_many([Message({"n": n}) for n in range(4)])
    other = Queue(second_engine, "mail", model=queue.model)
    result: list[Summary] = []
    started = threading.Event()

    def handler(lease: Lease) -> None:
        started.set()
        time.sleep(0.7)

    worker = threading.Thread(target=lambda: result.append(queue.process(handler, 4)))
    worker.start()
    assert started.wait(15)  # the batch is claimed: from now on, nobody else may take it
    stolen = []
    for _ in range(400):  # bounded (20 s): the batch takes about 2.8 s, past its lease
        if not worker.is_alive():
            break
        stolen.extend(other.claim(10))
        time.sleep(0.05)
    worker.join(30)
    assert stolen == []
    assert (result[0].processed, result[0].leases_lost) == (4, 0)


def test_a_zombies_fenced_ack_is_reported_as_lost_not_processed(
    queue: Queue, second_engine: Engine
) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(2)])
    other = Queue(second_engine, "mail", model=queue.model)
    taken: list[Lease] = []

    def handler(lease: Lease) -> None:
        if not taken:  # the lease runs out meanwhile and another worker takes the message
            make_due(queue)
            taken.extend(other.claim(1))

    summary = queue.process(handler, 2)
    assert len(taken) == 1
    assert (summary.claimed, summary.processed, summary.leases_lost) == (2, 1, 1)
    assert row(queue, taken[0].id).lease_token == taken[0].token  # the new holder's


def test_a_late_ack_of_a_final_attempt_succeeds_after_the_sweep(
    queue: Queue, second_engine: Engine
) -> None:
    message = queue.enqueue({"n": 1}, max_attempts=1)
    (lease,) = queue.claim()
    make_due(queue)  # the handler ran past its lease ...
    assert Queue(second_engine, "mail", model=queue.model).claim() == []  # ... the sweep ran
    assert message is not None and row(queue, message).status == "failed"
    assert queue.ack(lease) is True  # the handler's ack still counts: the message was handled
    stored = row(queue, message)
    assert (stored.status, stored.lease_token) == ("sent", None)


# -- one message's failure never touches another ----------------------------------------------


def test_a_failing_nack_neither_aborts_the_batch_nor_loses_the_error(
    queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = queue.enqueue_many([Message({"n": n}) for n in range(4)])
    real_nack = queue.nack
    failures = []

    def flaky_nack(lease: Lease, error: str = "", **kw: object) -> object:
        if not failures:
            failures.append(lease.id)
            raise QueryExecutionError("connection lost mid-nack", "UPDATE ...", ())
        return real_nack(lease, error, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(queue, "nack", flaky_nack)

    def handler(lease: Lease) -> None:
        if lease.payload["n"] == 0:
            raise ValueError("provider said no")

    summary = queue.process(handler, 4)
    assert failures  # the first nack did fail
    assert (summary.processed, summary.retried, summary.database_errors) == (3, 1, 1)
    failed = next(r for r in rows(queue) if r.payload["n"] == 0)
    assert (failed.status, failed.last_error) == ("queued", "ValueError: provider said no")
    assert sorted(r.status for r in rows(queue)) == ["queued", "sent", "sent", "sent"]
    assert len(ids) == 4


def test_a_poison_message_is_nacked_with_clean_bounded_text_and_its_batch_mates_acked(
    queue: Queue
) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(5)])

    def handler(lease: Lease) -> None:
        if lease.payload["n"] == 2:
            raise RuntimeError("NUL \x00 and a lone \udc80 surrogate " + "x" * 50_000)

    summary = queue.process(handler, 5)
    assert (summary.processed, summary.retried) == (4, 1)
    poisoned = next(r for r in rows(queue) if r.payload["n"] == 2)
    assert poisoned.status == "queued" and poisoned.last_error is not None
    assert poisoned.last_error.startswith("RuntimeError: NUL \\x00 and a lone \\udc80")
    assert "\x00" not in poisoned.last_error and len(poisoned.last_error) <= 2000


# -- bad input is refused, never stored -------------------------------------------------------

BAD_SECONDS = [math.nan, math.inf, -math.inf, 1e12, "5", True]


@pytest.mark.parametrize("delay", [math.nan, math.inf, -math.inf, 1e12, -1e12, "5"])
def test_a_bad_delay_is_refused_and_nothing_written(queue: Queue, delay: object) -> None:
    with pytest.raises(ValidationError, match="delay"):
        queue.enqueue({"n": 1}, delay=delay)  # type: ignore[arg-type]
    assert rows(queue) == []


@pytest.mark.parametrize("seconds", [0, -10, *BAD_SECONDS])
def test_a_bad_claim_lease_is_refused_and_nothing_claimed(queue: Queue, seconds: object) -> None:
    message = queue.enqueue({"n": 1})
    with pytest.raises(ValidationError, match="lease_seconds"):
        queue.claim(lease_seconds=seconds)  # type: ignore[arg-type]
    assert message is not None
    stored = row(queue, message)
    assert (stored.status, stored.attempts) == ("queued", 0)


@pytest.mark.parametrize("seconds", [0, -1, *BAD_SECONDS])
def test_a_bad_extend_is_refused_and_the_lease_unchanged(queue: Queue, seconds: object) -> None:
    queue.enqueue({"n": 1})
    (lease,) = queue.claim()
    with pytest.raises(ValidationError, match="seconds"):
        queue.extend(lease, seconds)  # type: ignore[arg-type]
    assert row(queue, lease.id).next_attempt_at == lease.expires_at


@pytest.mark.parametrize("option, value", [
    ("lease_seconds", math.nan), ("lease_seconds", math.inf), ("lease_seconds", 0),
    ("backoff_seconds", math.nan), ("backoff_seconds", -1),
    ("max_backoff_seconds", -1), ("max_backoff_seconds", math.inf),
    ("sweep_interval", math.nan), ("max_attempts", 0), ("max_attempts", "3"),
])
def test_a_bad_queue_option_is_refused(engine: Engine, option: str, value: object) -> None:
    with pytest.raises(ValidationError, match=option):
        Queue(engine, "mail", **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["ack", "nack", "extend"])
def test_something_that_is_not_a_lease_is_refused(queue: Queue, call: str) -> None:
    with pytest.raises(ValidationError, match="Lease"):
        getattr(queue, call)("not-a-lease")


@pytest.mark.parametrize("limit", ["5", 0, -1, 2.5, True, 10**9])
def test_a_bad_claim_limit_is_refused(queue: Queue, limit: object) -> None:
    queue.enqueue({"n": 1})
    with pytest.raises(ValidationError, match="limit"):
        queue.claim(limit)  # type: ignore[arg-type]
    assert queue.counts()["queued"] == 1


@pytest.mark.parametrize("payload", [None, 42, "abc", [1, 2], {1: "int key"}])
def test_a_payload_that_is_not_a_json_object_is_refused(queue: Queue, payload: object) -> None:
    with pytest.raises(ValidationError, match="payload"):
        queue.enqueue(payload)  # type: ignore[arg-type]
    assert rows(queue) == []


@pytest.mark.parametrize("bad", [
    Message({"n": {1, 2}}),          # not JSON: found when the second chunk is built
    Message({"n": 1}, delay=math.nan),
    Message({"n": 1}, max_attempts=0),
])
def test_a_batch_that_fails_half_way_writes_nothing(queue: Queue, bad: Message) -> None:
    batch = [Message({"n": n}, key=f"k{n}") for n in range(600)]
    batch[550] = bad
    with pytest.raises(ValidationError):
        queue.enqueue_many(batch)
    assert rows(queue) == []


# -- run(): stop, signals, disconnects ------------------------------------------------------


def test_stop_hands_back_unstarted_messages_without_charging_an_attempt(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(6)])
    started = threading.Event()

    def handler(lease: Lease) -> None:
        started.set()
        time.sleep(0.3)

    thread, out = run_in_thread(queue, handler, batch=6, grace_seconds=30)
    assert started.wait(15)
    queue.stop()
    thread.join(30)
    summary = out[0]
    assert (summary.processed, summary.released, summary.leases_lost) == (1, 5, 0)
    stored = rows(queue)
    assert sorted((r.status, r.attempts) for r in stored) == [("queued", 0)] * 5 + [("sent", 1)]
    assert all(r.lease_token is None for r in stored)
    assert len(queue.claim(10)) == 5  # due at once, not after a lease


def test_past_the_grace_period_the_message_in_hand_is_handed_back(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    started, release = threading.Event(), threading.Event()

    def handler(lease: Lease) -> None:
        started.set()
        release.wait(30)

    thread, out = run_in_thread(queue, handler, grace_seconds=0.2)
    try:
        assert started.wait(15)
        queue.stop()
        thread.join(30)
        assert not thread.is_alive()
    finally:
        release.set()
    assert (out[0].processed, out[0].released) == (0, 1)
    (stored,) = rows(queue)
    assert (stored.status, stored.attempts, stored.lease_token) == ("queued", 0, None)


def test_run_on_the_main_thread_restores_the_signal_handlers(queue: Queue) -> None:
    import signal

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    queue.enqueue({"n": 1})
    during = []

    def handler(lease: Lease) -> None:
        during.append(signal.getsignal(signal.SIGTERM))
        queue.stop()

    summary = queue.run(handler, poll_interval=0.05)
    assert summary.processed == 1
    assert during and during[0] not in before  # installed while running ...
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


@pytest.mark.postgres
def test_run_outlives_terminated_backends(pg_url: str) -> None:
    name = table_name("faults")
    app = f"tq_faults_{os.getpid()}"
    engine = create_engine(f"{pg_url}?application_name={app}", pool_size=2)
    killer = create_engine(pg_url, pool_size=1)
    model = message_model(name)
    try:
        engine.drop_all(model)
        queue = Queue(engine, "mail", model=model, lease_seconds=30)
        queue.create_table()
        queue.enqueue_many([Message({"n": n}) for n in range(300)])
        thread, out = run_in_thread(queue, lambda lease: time.sleep(0.003), batch=10,
                                    poll_interval=0.05)
        watch = Queue(killer, "mail", model=model)  # on connections nobody kills
        kills = 0
        for _ in range(100):  # bounded: about 30 s at most
            if watch.counts()["sent"] == 300:
                break
            # the worker's established connections (a new one is left to finish connecting)
            kills += killer.execute_sql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = %s AND backend_start < now() - interval '0.3 s'",
                (app,)).scalar()
            time.sleep(0.3)
        queue.stop()
        thread.join(30)
        assert kills > 0
        assert out, "run() raised instead of reconnecting"
        assert watch.counts() == {"queued": 0, "sending": 0, "sent": 300, "failed": 0}
        assert out[0].database_errors > 0
    finally:
        killer.close()
        engine.drop_all(model)
        engine.close()


def test_run_with_several_handler_threads_handles_every_message_once(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(9)])
    seen: list[int] = []
    lock = threading.Lock()
    running, most = [0], [0]
    together = threading.Barrier(3, timeout=15)  # passes only with three handlers at once

    def handler(lease: Lease) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            seen.append(lease.payload["n"])
        if lease.payload["n"] >= 6:  # three of them wait for each other: the other handlers
            together.wait()          # finish, so all three threads end up here at once
        with lock:
            running[0] -= 1

    thread, out = run_in_thread(queue, handler, batch=9, concurrency=3, poll_interval=0.05)
    try:
        wait_until(lambda: queue.counts()["sent"] == 9)
    finally:
        queue.stop()
        thread.join(30)
    assert sorted(seen) == list(range(9)) and out[0].processed == 9
    assert most[0] == 3  # side by side, never more than asked
