"""The queue in production, on real databases: slow batches keep their leases, a zombie's ack
is reported as lost, a failing nack or a poison message touches no other message, bad input
is refused before anything is written, and run() stops cleanly and outlives disconnects.

Bounded: every loop has a fixed number of rounds, every handler a fixed sleep; the whole
module runs in well under a minute per database.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import (
    Engine,
    QueryExecutionError,
    ValidationError,
    create_engine,
    select,
    sql,
    update,
)
from tempest_typed.model import meta_of
from tempest_typed.queue import Lease, Message, Queue, QueueMessage, Summary, message_model

from .conftest import Faulty, make_due, table_name
from .processes import create_table_at_once


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


def test_a_row_a_handlers_own_transaction_holds_does_not_stop_the_other_leases_heartbeats(
    engine: Engine, model: type[QueueMessage]
) -> None:
    """A handler that acked its message in its own transaction and went on working in it
    held that row locked; the heartbeat, one statement for the worker's leases, waited on
    the lock, and the other handler's lease ran out while it ran (another worker could take
    the message)."""
    if not engine.dialect.supports_row_locks:
        pytest.skip("SQLite has no row locks: a handler's transaction holds the whole file")
    queue = Queue(engine, "mail", model=model, lease_seconds=1)
    queue.enqueue_many([Message({"n": 0}), Message({"n": 1})])
    go_on = threading.Event()
    seen: dict[str, object] = {}

    def handler(lease: Lease) -> None:
        if lease.payload["n"] == 0:
            with queue.engine.transaction() as tx:
                assert queue.ack(lease, session=tx)
                go_on.wait(15)  # the row stays locked until the other handler has looked
            return
        first = row(queue, lease.id).next_attempt_at
        assert first is not None
        for _ in range(150):  # until a heartbeat has pushed this lease on, 7.5 s at most
            later = row(queue, lease.id).next_attempt_at
            if later is not None and later > first + timedelta(seconds=0.5):
                seen["extended"] = True
                break
            time.sleep(0.05)
        seen["lost"] = lease.lost
        go_on.set()
        queue.stop()

    thread, out = run_in_thread(queue, handler, batch=2, concurrency=2, poll_interval=0.1)
    thread.join(30)
    go_on.set()
    assert not thread.is_alive()
    assert seen == {"extended": True, "lost": False}
    assert (out[0].processed, out[0].leases_lost) == (2, 0)
    assert sorted(r.status for r in rows(queue)) == ["sent", "sent"]


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


def every_row(queue: Queue) -> list[tuple[object, ...]]:
    return sorted((str(r.id), r.status, r.attempts, str(r.lease_token), r.last_error,
                   str(r.next_attempt_at)) for r in rows(queue))


#: a call with one bad argument, and the name its ValidationError must give
BAD_CALLS: dict[str, tuple[Callable[[Queue, Lease], object], str]] = {
    "purge_sent(5)": (lambda q, lease: q.purge_sent(5), "older_than"),  # type: ignore[arg-type]  # the bad input under test
    "purge_sent(None)": (lambda q, lease: q.purge_sent(None), "older_than"),  # type: ignore[arg-type]  # the bad input under test
    "purge_sent(-1 day)": (lambda q, lease: q.purge_sent(timedelta(days=-1)), "older_than"),
    "purge_sent(11 years)": (lambda q, lease: q.purge_sent(timedelta(days=11 * 366)),
                             "older_than"),
    "purge_sent(batch_size=0)": (lambda q, lease: q.purge_sent(timedelta(0), batch_size=0),
                                 "batch_size"),
    "purge_sent(batch_size='9')": (
        lambda q, lease: q.purge_sent(timedelta(0), batch_size="9"), "batch_size"),  # type: ignore[arg-type]  # the bad input under test
    "nack(retry='no')": (lambda q, lease: q.nack(lease, "x", retry="no"), "retry"),  # type: ignore[arg-type]  # the bad input under test
    "nack(retry=None)": (lambda q, lease: q.nack(lease, "x", retry=None), "retry"),  # type: ignore[arg-type]  # the bad input under test
    "nack(error=5)": (lambda q, lease: q.nack(lease, 5), "error"),  # type: ignore[arg-type]  # the bad input under test
    "requeue_failed('abc')": (lambda q, lease: q.requeue_failed("abc"), "ids"),  # type: ignore[arg-type]  # the bad input under test
    "requeue_failed([1])": (lambda q, lease: q.requeue_failed([1]), "ids"),  # type: ignore[list-item]  # the bad input under test
    "requeue_failed(5)": (lambda q, lease: q.requeue_failed(5), "ids"),  # type: ignore[arg-type]  # the bad input under test
    "enqueue_many(42)": (lambda q, lease: q.enqueue_many(42), "enqueue_many"),  # type: ignore[arg-type]  # the bad input under test
    "enqueue_many(Message)": (lambda q, lease: q.enqueue_many(Message({"n": 1})),  # type: ignore[arg-type]  # the bad input under test
                              "enqueue_many"),
    "enqueue(max_attempts=True)": (lambda q, lease: q.enqueue({}, max_attempts=True),
                                   "max_attempts"),
    "enqueue(key='')": (lambda q, lease: q.enqueue({}, key=""), "key"),
    "claim(lease_seconds=0)": (lambda q, lease: q.claim(1, lease_seconds=0), "lease_seconds"),
    "claim_statement(0)": (lambda q, lease: q.claim_statement(0), "limit"),
    "extend(seconds=-1)": (lambda q, lease: q.extend(lease, -1), "seconds"),
    "ack('lease')": (lambda q, lease: q.ack("lease"), "Lease"),  # type: ignore[arg-type]  # the bad input under test
    "enqueue(session='tx')": (lambda q, lease: q.enqueue({}, session="tx"), "session"),  # type: ignore[arg-type]  # the bad input under test
    "ack(session=engine)": (lambda q, lease: q.ack(lease, session=q.engine), "session"),  # type: ignore[arg-type]  # the bad input under test
    "process(None)": (lambda q, lease: q.process(None), "handler"),  # type: ignore[arg-type]  # the bad input under test
    "process(limit=0)": (lambda q, lease: q.process(print, 0), "limit"),
    "run(None)": (lambda q, lease: q.run(None), "handler"),  # type: ignore[arg-type]  # the bad input under test
    "run(batch=0)": (lambda q, lease: q.run(print, batch=0), "batch"),
    "run(poll_interval=0)": (lambda q, lease: q.run(print, poll_interval=0), "poll_interval"),
    "run(poll_interval=nan)": (lambda q, lease: q.run(print, poll_interval=math.nan),
                               "poll_interval"),
    "run(concurrency=0)": (lambda q, lease: q.run(print, concurrency=0), "concurrency"),
    "run(grace_seconds=-1)": (lambda q, lease: q.run(print, grace_seconds=-1), "grace"),
    "run(heartbeat_seconds=0)": (lambda q, lease: q.run(print, heartbeat_seconds=0),
                                 "heartbeat_seconds"),
    "run(install_signal_handlers='yes')": (
        lambda q, lease: q.run(print, install_signal_handlers="yes"),  # type: ignore[arg-type]  # the bad input under test
        "install_signal_handlers"),
}


@pytest.mark.parametrize("call", list(BAD_CALLS))
def test_every_method_refuses_a_bad_argument_before_it_writes(queue: Queue, call: str) -> None:
    """purge_sent(5) and purge_sent(None) raised AttributeError, purge_sent(timedelta(days=-1))
    deleted every sent message, and nack(retry="no") retried."""
    queue.enqueue_many([Message({"n": n}) for n in range(3)])
    leased, sent, failed = queue.claim(3)
    queue.ack(sent)
    queue.nack(failed, "boom", retry=False)
    before = every_row(queue)
    make, name = BAD_CALLS[call]
    with pytest.raises(ValidationError, match=name):
        make(queue, leased)
    assert every_row(queue) == before


#: every method that takes session=, called with `session`
SESSION_CALLS: dict[str, Callable[[Queue, Lease, Any], object]] = {
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
def test_a_session_of_another_engine_is_refused_before_it_writes(
    queue: Queue, url: str, tmp_path: Path, call: str, other: str
) -> None:
    """A session of another engine was taken: enqueue wrote into the other database and ack
    on it changed nothing, leaving the message 'sending'."""
    foreign = create_engine(url if other == "same URL" else f"sqlite:///{tmp_path / 'o.db'}")
    try:
        queue.enqueue_many([Message({"n": n}) for n in range(2)])
        leased = queue.claim(1)
        before = every_row(queue)
        with foreign.transaction() as tx:
            with pytest.raises(ValidationError, match=r"session= takes a Session of the "
                               r"queue's engine .* another engine"):
                SESSION_CALLS[call](queue, leased[0], tx)
            assert tx.in_transaction
        assert every_row(queue) == before
    finally:
        foreign.close()


@pytest.mark.parametrize("options, name", [
    ({"model": str}, "model"), ({"model": None}, "model"), ({"consumer": ""}, "consumer"),
    ({"consumer": "a\x00b"}, "consumer name with no NUL"),
    ({"consumer": "\ud800"}, "consumer name with no NUL"),
])
def test_a_bad_queue_argument_is_refused(engine: Engine, options: dict[str, object],
                                         name: str) -> None:
    arguments: dict[str, object] = {"consumer": "mail", **options}
    with pytest.raises(ValidationError, match=name):
        Queue(engine, **arguments)  # type: ignore[arg-type]  # the bad input under test


def test_a_queue_on_an_async_engine_is_refused_naming_asyncqueue(sqlite_url: str) -> None:
    from tempest_typed import create_async_engine

    with pytest.raises(ValidationError, match="AsyncQueue"):
        Queue(create_async_engine(sqlite_url), "mail")  # type: ignore[arg-type]  # the bad input under test


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


@pytest.mark.parametrize("concurrency", [1, 2])
def test_stop_from_a_fast_handler_starts_no_batch_mate(queue: Queue, concurrency: int) -> None:
    """With concurrency=1 the drain went on to the next lease before the loop saw the stop:
    all 5 messages of the batch started and were acked after stop() had returned."""
    queue.enqueue_many([Message({"n": n}) for n in range(5)])
    started: list[int] = []
    lock = threading.Lock()

    def handler(lease: Lease) -> None:
        with lock:
            started.append(lease.payload["n"])
            first = len(started) == 1
        if first:
            queue.stop()

    thread, out = run_in_thread(queue, handler, batch=5, concurrency=concurrency,
                                poll_interval=0.1)
    thread.join(30)
    summary = out[0]
    assert len(started) == summary.processed <= concurrency
    assert summary.released == 5 - summary.processed
    stored = rows(queue)
    assert sorted(r.status for r in stored).count("sent") == summary.processed
    assert all((r.attempts, r.lease_token) == (0, None) for r in stored if r.status == "queued")
    assert len(queue.claim(10)) == 5 - summary.processed  # handed back at once


def test_stop_stops_every_run_of_one_queue_and_a_later_run_works(queue: Queue) -> None:
    """Two run() of one Queue object: the first to stop cleared the queue's one stop flag,
    so stop() ended one of them and the other ran on for ever."""
    queue.enqueue_many([Message({"n": n}) for n in range(6)])
    seen: list[int] = []
    runs = [run_in_thread(queue, lambda lease: seen.append(lease.payload["n"]),
                          poll_interval=0.1, install_signal_handlers=False) for _ in range(2)]
    wait_until(lambda: len(seen) == 6)
    queue.stop()
    for thread, _ in runs:
        thread.join(15)
    assert not any(thread.is_alive() for thread, _ in runs)
    assert sum(out[0].processed for _, out in runs) == 6 and sorted(seen) == list(range(6))
    queue.enqueue({"n": 6})  # the stop was taken: the next run() handles, then stops
    thread, out = run_in_thread(queue, lambda lease: queue.stop(), poll_interval=0.1)
    thread.join(15)
    assert not thread.is_alive() and out[0].processed == 1


def test_a_handler_that_acks_or_nacks_by_hand_is_counted_as_such_not_as_a_lost_lease(
    queue: Queue
) -> None:
    """The exactly-once ack(lease, session=tx) in a run() handler: the loop acked the message
    again, found its fence gone, and counted a lost lease ("came after another worker took
    the message") for every message."""
    queue.enqueue_many([Message({"n": n}) for n in range(3)])

    def handler(lease: Lease) -> None:
        if lease.payload["n"] == 0:
            with queue.engine.transaction() as tx:
                assert queue.ack(lease, session=tx)
        elif lease.payload["n"] == 1:
            assert queue.nack(lease, "by hand", retry=False) == "failed"
        else:
            assert queue.nack(lease, "by hand") == "queued"

    summary = queue.process(handler, 10)
    assert (summary.processed, summary.dead_lettered, summary.retried,
            summary.leases_lost) == (1, 1, 1, 0)
    assert sorted(r.status for r in rows(queue)) == ["failed", "queued", "sent"]


class _Undo(Exception):
    """Rolls back a handler's own transaction."""


def test_an_ack_or_nack_by_hand_that_rolled_back_or_was_followed_by_a_raise_is_told_apart(
    queue: Queue
) -> None:
    """A handler's ack(lease, session=tx) whose transaction rolled back, the handler then
    returning, was counted as processed and left the message leased, unwatched, until its
    lease ended; a handler that acked or nacked by hand and then raised was counted as a
    lost lease."""
    queue.enqueue_many([Message({"n": n}) for n in range(5)])

    def handler(lease: Lease) -> None:
        n = lease.payload["n"]
        if n in (0, 1):  # by hand in a transaction that rolls back, then return
            with contextlib.suppress(_Undo), queue.engine.transaction() as tx:
                if n == 0:
                    assert queue.ack(lease, session=tx)
                else:
                    assert queue.nack(lease, "by hand", session=tx) == "queued"
                raise _Undo
        elif n == 2:  # in a transaction that commits
            with queue.engine.transaction() as tx:
                assert queue.ack(lease, session=tx)
        elif n == 3:
            assert queue.ack(lease)
            raise RuntimeError("after the ack")
        else:
            assert queue.nack(lease, "by hand", retry=False) == "failed"
            raise RuntimeError("after the nack")

    summary = queue.process(handler, 10)
    assert (summary.processed, summary.retried, summary.dead_lettered,
            summary.leases_lost) == (2, 2, 1, 0)
    by_n = {r.payload["n"]: r for r in rows(queue)}
    assert [by_n[n].status for n in range(5)] == ["queued", "queued", "sent", "sent", "failed"]
    assert "did not commit" in (by_n[0].last_error or "")
    assert "did not commit" in (by_n[1].last_error or "")
    assert by_n[4].last_error == "by hand"


def test_acks_by_hand_in_committed_transactions_cost_one_read_a_batch_and_log_no_failure(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    """The exactly-once ack(lease, session=tx) that committed: each message was nacked by the
    loop to see whether it had, one statement a message, and logged as "failed (lease lost):
    ... did not commit"."""
    queue.enqueue_many([Message({"n": n}) for n in range(4)])

    def handler(lease: Lease) -> None:
        with queue.engine.transaction() as tx:
            assert queue.ack(lease, session=tx)

    caplog.set_level(logging.INFO, logger="tempest_typed")
    caplog.set_level(logging.INFO, logger="tempest_typed.sql")  # whatever set it before
    summary = queue.process(handler, 10)
    assert (summary.processed, summary.retried, summary.leases_lost) == (4, 0, 0)
    assert not [r for r in caplog.records if r.name == "tempest_typed.queue"
                and r.levelno >= logging.INFO and "failed" in r.getMessage()]
    table = meta_of(queue.model).table
    checks = [r for r in caplog.records if r.name == "tempest_typed.sql"
              and any(r.getMessage().lstrip().startswith(f"SELECT {q}id{q} FROM {q}{table}{q}")
                      for q in '"`') and "lease_token" in r.getMessage()]
    nacks = [r for r in caplog.records if r.name == "tempest_typed.sql"
             and any(f"{q}last_error{q} = " in r.getMessage() for q in '"`')]  # a nack's SET
    assert (len(checks), len(nacks)) == (1, 0)


def _generator_handler(lease: Lease) -> Iterator[None]:
    yield  # by mistake: calling the handler runs none of its body


async def _async_generator_handler(lease: Lease) -> AsyncIterator[None]:
    yield


@pytest.mark.parametrize("handler", [_generator_handler, _async_generator_handler])
def test_a_generator_handler_is_refused_and_a_returned_generator_fails_its_message(
    queue: Queue, handler: Callable[[Lease], object]
) -> None:
    """Calling a generator function runs none of its body: the message was acked, its work
    never done."""
    queue.enqueue({"n": 1})
    with pytest.raises(ValidationError, match="generator function"):
        queue.process(handler)
    with pytest.raises(ValidationError, match="generator function"):
        queue.run(handler)
    assert [r.status for r in rows(queue)] == ["queued"]  # nothing claimed
    summary = queue.process(lambda lease: handler(lease))
    assert (summary.processed, summary.retried) == (0, 1)
    assert "generator" in (rows(queue)[0].last_error or "")


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
def test_the_log_of_a_failing_claim_names_the_fix_the_database_error_hints(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """run() on a table not created yet logged "claim failed (relation ... does not exist)"
    and waited it out again and again, the driver's hint that names the fix (create the
    table) cut from the line."""
    queue = Queue(engine, "mail", model=message_model(table_name("not_created")))
    caplog.set_level(logging.WARNING, logger="tempest_typed.queue")
    thread, out = run_in_thread(queue, lambda lease: None, poll_interval=0.1)
    try:
        wait_until(lambda: any("claim failed" in r.getMessage() for r in caplog.records))
    finally:
        queue.stop()
        thread.join(15)
    assert not thread.is_alive() and out[0].database_errors >= 1
    failed = [r.getMessage() for r in caplog.records if "claim failed" in r.getMessage()]
    assert "create_all(Model) creates it" in failed[0]


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


# -- a stop during an outage ------------------------------------------------------------------


def messages_of(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The queue's log messages that contain `text`."""
    return [r.getMessage() for r in caplog.records
            if r.name == "tempest_typed.queue" and text in r.getMessage()]


def first_message_blocks(go: threading.Event,
                         started: threading.Event) -> Callable[[Lease], None]:
    """A handler whose first call waits for `go`; the batch's other messages stay unstarted."""
    def handle(lease: Lease) -> None:
        started.set()
        go.wait(60)
    return handle


def test_stop_during_an_outage_hands_back_the_unstarted_messages_once_the_database_answers(
    faulty: Faulty, caplog: pytest.LogCaptureFixture
) -> None:
    """The hand-back failed once and was not tried again, and the log said "handed back"
    anyway: the messages stayed leased with an attempt charged."""
    engine = create_engine(faulty.url, **faulty.options)  # type: ignore[arg-type]  # each database's own options
    queue = Queue(engine, "mail", model=message_model(table_name("outage")))
    # read and clean up on connections the outage never touched: the worker's pool may
    # still hold a connection the cut killed when the test looks at the rows
    direct = create_engine(faulty.direct)
    watch = Queue(direct, "mail", model=queue.model)
    started, go = threading.Event(), threading.Event()
    try:
        queue.drop_table()
        queue.create_table()
        queue.enqueue_many([Message({"n": n}) for n in range(6)])
        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            thread, out = run_in_thread(queue, first_message_blocks(go, started), batch=6,
                                        grace_seconds=60)
            assert started.wait(15)
            faulty.fault.cut()
            queue.stop()
            wait_until(lambda: bool(messages_of(caplog, "release failed")))
            assert messages_of(caplog, "handed back") == []  # nothing was, yet
            faulty.fault.restore()
            go.set()
            thread.join(60)
        summary = out[0]
        assert (summary.released, summary.processed, summary.abandoned) == (5, 1, 0)
        stored = rows(watch)
        assert sorted((r.status, r.attempts) for r in stored) == [("queued", 0)] * 5 + [
            ("sent", 1)]
        assert all(r.lease_token is None for r in stored)
        assert messages_of(caplog, "handed back") == [
            "worker 'mail': handed back 5 message(s), no attempt charged"]
    finally:
        go.set()
        faulty.fault.restore()
        engine.close()
        watch.drop_table()
        direct.close()


def test_an_outage_past_the_grace_period_is_reported_as_such_not_as_a_hand_back(
    faulty: Faulty, caplog: pytest.LogCaptureFixture
) -> None:
    engine = create_engine(faulty.url, **faulty.options)  # type: ignore[arg-type]  # each database's own options
    queue = Queue(engine, "mail", model=message_model(table_name("outage")))
    # read and clean up on connections the outage never touched: the worker's pool may
    # still hold a connection the cut killed when the test looks at the rows
    direct = create_engine(faulty.direct)
    watch = Queue(direct, "mail", model=queue.model)
    started, go = threading.Event(), threading.Event()
    try:
        queue.drop_table()
        queue.create_table()
        queue.enqueue_many([Message({"n": n}) for n in range(6)])
        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            thread, out = run_in_thread(queue, first_message_blocks(go, started), batch=6,
                                        grace_seconds=1.0)
            assert started.wait(15)
            faulty.fault.cut()
            queue.stop()
            thread.join(60)
            assert out, "run() raised instead of returning its summary"
        faulty.fault.restore()
        summary = out[0]
        assert (summary.released, summary.processed, summary.abandoned) == (0, 0, 6)
        assert messages_of(caplog, "handed back") == []
        assert len(messages_of(caplog, "could not hand back 6 message(s)")) == 1
        # what the log said: still leased, an attempt charged, until the lease ends
        assert {(r.status, r.attempts) for r in rows(watch)} == {("sending", 1)}
    finally:
        go.set()
        faulty.fault.restore()
        engine.close()
        watch.drop_table()
        direct.close()


# -- repeated terminations: the pool, the heartbeats, the handlers told ------------------------


def terminate(killer: Engine, app: str, *, older_than: str = "0 s") -> int:
    """Terminate the backends of the connections named `app` (established `older_than` ago
    at least); how many."""
    count: int = killer.execute_sql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = %s AND backend_start <= now() - %s::interval",
        (app, older_than)).scalar()
    return count


@pytest.mark.postgres
def test_a_pool_whose_idle_connections_were_terminated_hands_out_a_new_one_at_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psycopg_pool's check backed off 1 s, 2 s ... between the dead connections it found:
    with four of them, longer than pool_timeout, and the engine said "no connection free"."""
    from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules

    monkeypatch.setattr(PsycopgRules, "_PING_AFTER_IDLE", 0.0)  # ping every connection
    app = f"tq_pool_{os.getpid()}"
    engine = create_engine(f"{pg_url}?application_name={app}", pool_size=4, pool_timeout=2)
    killer = create_engine(pg_url, pool_size=1)
    try:
        sessions = [engine.session() for _ in range(4)]
        for session in sessions:
            session.execute_sql("SELECT 1")  # four connections, all in use at once
        for session in sessions:
            session.close()  # ... and all idle in the pool now
        assert terminate(killer, app) == 4
        assert engine.execute_sql("SELECT 1").scalar() == 1
    finally:
        killer.close()
        engine.close()


class Ledger:
    """What the handlers of two workers saw: for each message, when each handler ran (one
    process, one clock), and whether its lease was held in the database when it started and
    when it ended."""

    def __init__(self, watch: Queue) -> None:
        self.watch = watch  # on connections nobody terminates
        self.lock = threading.Lock()
        self.runs: dict[UUID, list[tuple[float, float]]] = {}
        self.started_unheld: list[UUID] = []
        self.ended_unheld_untold: list[UUID] = []

    def held(self, lease: Lease) -> bool:
        stored = self.watch.engine.execute(select(self.watch.model).where({"id": lease.id})).one()
        return (stored.lease_token == lease.token and stored.status == "sending"
                and stored.next_attempt_at is not None
                and stored.next_attempt_at > datetime.now(UTC))

    def handler(self, seconds: float, work: Engine) -> Callable[[Lease], None]:
        def handle(lease: Lease) -> None:
            start = time.monotonic()
            if not self.held(lease):
                self.started_unheld.append(lease.id)
            with contextlib.suppress(QueryExecutionError):  # its connection may be killed
                work.execute_sql("SELECT 1")  # the handler's own use of the database
            lease.wait_lost(seconds)  # the work; it stops at once if the lease is lost
            if not self.held(lease) and not lease.lost:
                self.ended_unheld_untold.append(lease.id)
            with self.lock:
                self.runs.setdefault(lease.id, []).append((start, time.monotonic()))
        return handle

    def overlaps(self) -> list[UUID]:
        """The messages two handlers ran at the same time."""
        out = []
        for message, runs in self.runs.items():
            runs = sorted(runs)
            if any(later[0] < earlier[1] for earlier, later in itertools.pairwise(runs)):
                out.append(message)
        return out


@pytest.mark.postgres
def test_run_under_repeated_terminations_never_raises_nor_runs_a_message_twice_at_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terminated backends made the worker wait in the pool's check, miss heartbeats (five
    messages ran twice at once, 18 handlers outside their lease), and then run() raised
    "no connection free"."""
    from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules

    # every connection taken from the pool is pinged, as one idle for a while would be
    monkeypatch.setattr(PsycopgRules, "_PING_AFTER_IDLE", 0.0)
    app = f"tq_terms_{os.getpid()}"
    model = message_model(table_name("terms"))
    engine = create_engine(f"{pg_url}?application_name={app}", pool_size=4, pool_timeout=3)
    clean = create_engine(pg_url, pool_size=4)
    killer = create_engine(pg_url, pool_size=1)
    try:
        watch = Queue(clean, "mail", model=model)
        watch.drop_table()
        watch.create_table()
        watch.enqueue_many([Message({"n": n}) for n in range(40)])
        ledger = Ledger(watch)
        queue = Queue(engine, "mail", model=model, lease_seconds=1.5)
        other = Queue(clean, "mail", model=model, lease_seconds=1.5)
        first, first_out = run_in_thread(queue, ledger.handler(0.2, engine), batch=5,
                                         concurrency=3, poll_interval=0.05)
        second, second_out = run_in_thread(other, ledger.handler(0.2, clean), batch=5,
                                           concurrency=3, poll_interval=0.05)
        kills = 0
        for _ in range(200):  # bounded: about 40 s at most
            if watch.counts()["sent"] == 40:
                break
            kills += terminate(killer, app, older_than="0.2 s")
            time.sleep(0.2)
        queue.stop()
        other.stop()
        first.join(60)
        second.join(60)
        assert kills > 0
        assert first_out and second_out, "run() raised instead of waiting the faults out"
        assert watch.counts() == {"queued": 0, "sending": 0, "sent": 40, "failed": 0}
        assert ledger.overlaps() == []
        assert ledger.started_unheld == []
        assert ledger.ended_unheld_untold == []
        assert first_out[0].database_errors > 0
    finally:
        killer.close()
        Queue(clean, "mail", model=model).drop_table()
        clean.close()
        engine.close()


class FailingHeartbeats:
    """Makes a queue's heartbeats fail while `outage` is set, as if the database were gone
    (the claim, acks and releases still reach it); `over` is set by the first heartbeat that
    reaches the database after a failed one."""

    def __init__(self, queue: Queue | Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outage = threading.Event()
        self.over = threading.Event()
        self.failures = 0
        real = queue._extend_all_op

        def extend_all(leases: Any, seconds: float) -> Any:
            if self.outage.is_set():
                self.failures += 1
                raise QueryExecutionError("connection lost mid-heartbeat", "UPDATE ...", ())
            if self.failures:
                self.over.set()
            return real(leases, seconds)

        monkeypatch.setattr(queue, "_extend_all_op", extend_all)


def test_while_heartbeats_fail_no_handler_starts_and_the_worker_says_so(
    queue: Queue, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Handlers went on starting (and the worker claimed more) while its heartbeats failed,
    on leases that might be ending unseen."""
    queue.lease_seconds = 1.5  # a heartbeat every 0.5 s
    queue.enqueue_many([Message({"n": n}, delay=n * 0.001 - 1) for n in range(3)])
    beats = FailingHeartbeats(queue, monkeypatch)
    first_started, go = threading.Event(), threading.Event()
    started_during_outage: list[int] = []

    def handler(lease: Lease) -> None:
        if lease.payload["n"] == 0:
            first_started.set()
            go.wait(30)
        elif beats.outage.is_set() or (beats.failures and not beats.over.is_set()):
            started_during_outage.append(lease.payload["n"])

    with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
        thread, out = run_in_thread(queue, handler, batch=3, poll_interval=0.05)
        try:
            assert first_started.wait(15)
            beats.outage.set()
            wait_until(lambda: bool(messages_of(caplog, "did not reach the database")))
            go.set()  # the first handler returns while the heartbeats fail ...
            wait_until(lambda: any(r.status == "sent" for r in rows(queue)))
            failed = beats.failures
            wait_until(lambda: beats.failures >= failed + 2)  # ... and they go on failing
            beats.outage.clear()
            wait_until(lambda: queue.counts()["sent"] == 3)
        finally:
            go.set()
            beats.outage.clear()
            queue.stop()
            thread.join(30)
    assert started_during_outage == []
    assert out[0].processed == 3
    assert messages_of(caplog, "did not reach the database: no handler starts")
    assert messages_of(caplog, "heartbeats reach the database again")


def test_a_handler_whose_message_another_worker_took_is_told(
    queue: Queue, second_engine: Engine
) -> None:
    queue.lease_seconds = 1.5  # a heartbeat every 0.5 s
    queue.enqueue({"n": 1})
    other = Queue(second_engine, "mail", model=queue.model)
    told: list[bool] = []

    def handler(lease: Lease) -> None:
        # the lease runs out (a long pause of this process, say) and another worker takes it
        queue.engine.execute(update(queue.model).set({"next_attempt_at": sql.now(plus=-1)})
                             .where({"id": lease.id}))
        assert [taken.id for taken in other.claim(1)] == [lease.id]
        told.append(lease.wait_lost(30))  # the next heartbeat finds it gone

    summary = queue.process(handler, 1)  # returns once the lease is gone: nothing to settle
    wait_until(lambda: bool(told))
    assert told == [True]
    assert (summary.processed, summary.leases_lost) == (0, 1)


def test_a_handler_whose_lease_ran_out_while_heartbeats_failed_is_told(
    queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue.lease_seconds = 1.5
    queue.enqueue({"n": 1})
    beats = FailingHeartbeats(queue, monkeypatch)
    beats.outage.set()
    told: list[bool] = []

    def handler(lease: Lease) -> None:
        told.append(lease.wait_lost(30))  # no heartbeat reaches the database: it runs out

    summary = queue.process(handler, 1)
    assert told == [True]
    # nobody took the message meanwhile: its late ack still counts (the fence decides)
    assert summary.processed == 1 and queue.counts()["sent"] == 1


@pytest.mark.parametrize("backend", ["mysql", "sqlite"])  # PostgreSQL's loop keeps a session
def test_a_pool_with_no_connection_free_is_waited_out_not_raised(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path,
    caplog: pytest.LogCaptureFixture
) -> None:
    """run() raised the pool's "no connection free" (a ConfigurationError) at a heartbeat
    while a handler held the engine's only connection."""
    url = (str(request.getfixturevalue("mysql_url")) if backend == "mysql"
           else f"sqlite:///{tmp_path / 'pool.db'}")
    engine = create_engine(url, pool_size=1, pool_timeout=0.3)
    queue = Queue(engine, "mail", model=message_model(table_name("pool")), lease_seconds=1.5)
    watch_engine = create_engine(url)
    watch = Queue(watch_engine, "mail", model=queue.model)  # on connections of its own
    try:
        watch.drop_table()
        watch.create_table()
        watch.enqueue({"n": 1})

        def handler(lease: Lease) -> None:
            with engine.session() as session:
                session.execute_sql("SELECT 1")  # the engine's only connection, held ...
                wait_until(lambda: bool(messages_of(caplog, "no connection free")))  # ... a while

        with caplog.at_level(logging.INFO, logger="tempest_typed.queue"):
            thread, out = run_in_thread(queue, handler, poll_interval=0.05)
            try:
                wait_until(lambda: watch.counts()["sent"] == 1)
            finally:
                queue.stop()
                thread.join(30)
        assert out, "run() raised instead of waiting for a free connection"
        assert out[0].processed == 1 and out[0].database_errors >= 1
    finally:
        engine.close()
        watch.drop_table()
        watch_engine.close()


# -- create_table() from several processes at once --------------------------------------------


def test_create_table_from_several_processes_at_once(engine: Engine) -> None:
    """On PostgreSQL two at once failed: "tuple concurrently updated" (the shared NOTIFY
    functions replaced by both), or a duplicate key in pg_type / pg_class (the table)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no threads of this process inherited
    url = str(engine.url)
    for round_ in range(2):  # two races, each on a table that does not exist yet
        model = message_model(table_name(f"race{round_}"))
        Queue(engine, "mail", model=model).drop_table()
        start, out = context.Barrier(5), context.Queue()
        workers = [context.Process(target=create_table_at_once,
                                   args=(url, meta_table(model), n % 2 == 1, start, out))
                   for n in range(5)]
        try:
            for worker in workers:
                worker.start()
            results = [out.get(timeout=120) for _ in workers]
        finally:
            for worker in workers:
                worker.join(30)
                if worker.is_alive():
                    worker.kill()
        try:
            assert results == ["ok"] * 5
            queue = Queue(engine, "mail", model=model)
            assert queue.enqueue({"n": 1}) is not None  # the table, indexes, triggers work
        finally:
            Queue(engine, "mail", model=model).drop_table()


def meta_table(model: type[QueueMessage]) -> str:
    return meta_of(model).table
