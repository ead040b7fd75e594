"""The queue's behaviour on PostgreSQL, MariaDB and SQLite: enqueue, claim, ack, nack,
leases and fencing, and the operations."""

from __future__ import annotations

import random
from datetime import timedelta
from uuid import UUID

import pytest

from tempest_typed import Engine, insert, select, sql, update
from tempest_typed.queue import Lease, Message, Queue, QueueMessage

from .conftest import make_due


def row(queue: Queue, message_id: UUID) -> QueueMessage:
    return queue.engine.execute(select(queue.model).where({"id": message_id})).one()


# -- enqueue ---------------------------------------------------------------------------------


def test_a_repeated_idempotency_key_is_enqueued_once(queue: Queue) -> None:
    first = queue.enqueue({"to": "a@example.com"}, key="order-1")
    again = queue.enqueue({"to": "a@example.com"}, key="order-1")
    assert first is not None and again is None
    assert queue.counts()["queued"] == 1


def test_messages_without_a_key_are_never_deduplicated(queue: Queue) -> None:
    ids = [queue.enqueue({"n": 1}), queue.enqueue({"n": 1})]
    assert None not in ids and ids[0] != ids[1]
    assert queue.counts()["queued"] == 2


def test_keys_are_per_consumer(queue: Queue, engine: Engine) -> None:
    other = Queue(engine, "sms", model=queue.model)
    assert queue.enqueue({}, key="k") is not None
    assert other.enqueue({}, key="k") is not None


def test_enqueue_many_returns_the_inserted_ids_skipping_repeats_in_the_batch(queue: Queue) -> None:
    queue.enqueue({"n": 0}, key="k0")
    batch = [Message({"n": 0}, key="k0"), Message({"n": 1}, key="k1"),
             Message({"n": 2}, key="k1"), Message({"n": 3}), Message({"n": 4})]
    ids = queue.enqueue_many(batch)
    assert len(ids) == 3
    payloads = sorted(row(queue, i).payload["n"] for i in ids)
    assert payloads == [1, 3, 4]


def test_enqueue_in_the_callers_transaction_rolls_back_with_it(queue: Queue,
                                                               engine: Engine) -> None:
    with pytest.raises(RuntimeError), engine.transaction() as tx:
        queue.enqueue({"order": 1}, key="order-1", session=tx)
        raise RuntimeError("the business write failed")
    assert queue.counts()["queued"] == 0
    with engine.transaction() as tx:
        queue.enqueue({"order": 1}, key="order-1", session=tx)
    assert queue.counts()["queued"] == 1


# -- claim, ack ------------------------------------------------------------------------------


def test_a_claim_leases_due_messages_and_counts_the_attempt(queue: Queue) -> None:
    ids = queue.enqueue_many([Message({"n": n}) for n in range(3)])
    leases = queue.claim(10)
    assert sorted(lease.id for lease in leases) == sorted(ids)
    assert {lease.attempts for lease in leases} == {1}
    assert len({lease.token for lease in leases}) == 1
    stored = row(queue, ids[0])
    assert stored.status == "sending" and stored.attempts == 1
    assert stored.lease_token == leases[0].token
    assert stored.next_attempt_at == next(x for x in leases if x.id == ids[0]).expires_at


def test_two_claims_take_disjoint_batches(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(5)])
    first, second, third = queue.claim(3), queue.claim(3), queue.claim(3)
    assert len(first) == 3 and len(second) == 2 and third == []
    assert not {x.id for x in first} & {x.id for x in second}


def test_a_claim_takes_the_oldest_due_first_and_skips_delayed_messages(queue: Queue) -> None:
    later = queue.enqueue({"n": "later"}, delay=3600)
    first = queue.enqueue({"n": "first"}, delay=-20)
    second = queue.enqueue({"n": "second"}, delay=-10)
    assert [lease.id for lease in queue.claim(1)] == [first]
    assert [lease.id for lease in queue.claim(5)] == [second]
    assert later is not None and row(queue, later).status == "queued"


def test_ack_marks_the_message_sent_once(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (lease,) = queue.claim()
    assert queue.ack(lease) is True
    stored = row(queue, lease.id)
    assert (stored.status, stored.lease_token, stored.next_attempt_at) == ("sent", None, None)
    assert queue.ack(lease) is False
    assert queue.claim() == []


def test_process_acks_on_return_and_nacks_on_exception(queue: Queue) -> None:
    good = queue.enqueue({"ok": True})
    bad = queue.enqueue({"ok": False})

    def handler(lease: Lease) -> None:
        if not lease.payload["ok"]:
            raise ValueError("rejected by the provider")

    summary = queue.process(handler)
    assert (summary.claimed, summary.processed, summary.retried) == (2, 1, 1)
    assert summary.leases_lost == summary.dead_lettered == 0
    assert good is not None and bad is not None
    assert row(queue, good).status == "sent"
    assert row(queue, bad).status == "queued"
    assert row(queue, bad).last_error == "ValueError: rejected by the provider"


def test_claim_returns_its_batch_oldest_due_first(queue: Queue) -> None:
    """UPDATE ... RETURNING (and MySQL's read-back of the leased rows) gave a batch in no
    particular order."""
    delays = [-d for d in random.Random(7).sample(range(1, 61), 30)]  # due 1-60 s ago
    queue.enqueue_many([Message({"d": d}, delay=d) for d in delays])
    due = sorted(delays)  # the most negative delay is the oldest due
    got = [[lease.payload["d"] for lease in queue.claim(n)] for n in (10, 1, 19)]
    assert got == [due[:10], due[10:11], due[11:]]


def test_a_batch_claim_orders_fresh_nacked_and_expired_messages_by_due_time(
    queue: Queue, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Due times out of insert (and id) order, mixing fresh messages, nacked ones queued
    again and expired leases: each batch comes oldest due first. On PostgreSQL a batch is
    the one-statement UPDATE ... FROM the picked rows, ordered by the due time it returns."""
    ids = queue.enqueue_many([Message({"n": n}) for n in range(20)])
    taken = queue.claim(6)
    for lease in taken[:3]:
        assert queue.nack(lease, "try again") == "queued"  # attempts 1, queued
    # the other three stay leased, and their leases end (below): status "sending"
    dues = random.Random(11).sample(range(10, 210, 10), 20)  # seconds ago, shuffled
    for message_id, ago in zip(ids, dues, strict=True):
        engine.execute(update(queue.model).set({"next_attempt_at": sql.now(plus=-ago)})
                       .where({"id": message_id}))
    ran: list[str] = []
    real = engine._io.run

    def run(conn: object, text: str, params: object) -> object:
        ran.append(text)
        return real(conn, text, params)

    monkeypatch.setattr(engine._io, "run", run)
    postgresql = engine.dialect.name == "postgresql"
    got = []
    for n in (8, 1, 11):
        with engine.transaction() as tx:
            if postgresql:  # a hash join: the leased rows come back in the table's order
                tx.execute_sql("SET LOCAL enable_nestloop = off")
                tx.execute_sql("SET LOCAL enable_mergejoin = off")
            got.append(queue.claim(n, session=tx))
    expected = [i for _, i in sorted(zip(dues, ids, strict=True), reverse=True)]
    assert [[lease.id for lease in batch] for batch in got] == [
        expected[:8], expected[8:9], expected[9:]]
    earlier = {lease.id for lease in taken}
    assert {lease.id: lease.attempts for batch in got for lease in batch} == {
        i: 2 if i in earlier else 1 for i in ids}
    if postgresql:  # each batch one statement; claim(1) its own
        claims = [text for text in ran if text.startswith("UPDATE")]
        assert len(claims) == 3 and not any("FOR UPDATE" in t for t in ran
                                            if t.startswith("SELECT"))
        assert ['AS "picked"' in text for text in claims] == [True, False, True]


def test_process_hands_its_batch_to_the_handler_oldest_due_first(queue: Queue) -> None:
    delays = [-d for d in random.Random(8).sample(range(1, 61), 10)]
    queue.enqueue_many([Message({"d": d}, delay=d) for d in delays])
    seen: list[int] = []
    queue.process(lambda lease: seen.append(lease.payload["d"]), 10)
    assert seen == sorted(delays)


# -- nack, backoff, dead letters -------------------------------------------------------------


def backoff_of(queue: Queue, message_id: UUID) -> float:
    stored = row(queue, message_id)
    assert stored.next_attempt_at is not None and stored.updated_at is not None
    return (stored.next_attempt_at - stored.updated_at).total_seconds()


def test_nack_backs_off_exponentially_computed_in_sql(queue: Queue) -> None:
    queue.max_attempts = 10
    message = queue.enqueue({"n": 1})
    assert message is not None
    delays = []
    for _ in range(5):
        make_due(queue)
        (lease,) = queue.claim()
        assert queue.nack(lease, "timeout") == "queued"
        delays.append(backoff_of(queue, message))
    # 100 s doubling per attempt, capped at 1000 s
    assert delays == pytest.approx([100, 200, 400, 800, 1000], abs=0.01)
    assert row(queue, message).attempts == 5


def test_a_nacked_message_is_not_claimed_before_its_backoff(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (lease,) = queue.claim()
    queue.nack(lease, "timeout")
    assert queue.claim() == []


def test_the_final_failed_attempt_dead_letters_the_message(queue: Queue) -> None:
    message = queue.enqueue({"n": 1})
    outcomes = []
    for _ in range(3):
        make_due(queue)
        (lease,) = queue.claim()
        outcomes.append(queue.nack(lease, f"attempt {lease.attempts} failed"))
    assert outcomes == ["queued", "queued", "failed"]
    assert message is not None
    stored = row(queue, message)
    assert (stored.status, stored.attempts, stored.next_attempt_at) == ("failed", 3, None)
    assert stored.last_error == "attempt 3 failed"
    make_due(queue)
    assert queue.claim() == []


def test_nack_without_retry_dead_letters_at_once(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (lease,) = queue.claim()
    assert queue.nack(lease, "invalid address", retry=False) == "failed"
    assert queue.counts()["failed"] == 1


# -- leases and fencing ----------------------------------------------------------------------


def test_a_message_whose_lease_expired_is_claimed_again(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (old,) = queue.claim()
    assert queue.claim() == []  # the lease holds
    make_due(queue)  # ... until it expires
    (new,) = queue.claim()
    assert new.id == old.id and new.attempts == 2 and new.token != old.token


def test_a_worker_that_lost_its_lease_changes_nothing(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (old,) = queue.claim()
    make_due(queue)
    (new,) = queue.claim()
    assert queue.ack(old) is False
    assert queue.nack(old, "late failure") is None
    assert queue.extend(old, 3600) is False
    stored = row(queue, new.id)
    assert (stored.status, stored.lease_token, stored.attempts) == ("sending", new.token, 2)
    assert stored.next_attempt_at == new.expires_at
    assert queue.ack(new) is True


def test_extend_pushes_the_lease_expiry(queue: Queue) -> None:
    queue.enqueue({"n": 1})
    (lease,) = queue.claim(lease_seconds=5)
    assert queue.extend(lease, 3600) is True
    stored = row(queue, lease.id)
    assert stored.next_attempt_at is not None
    assert stored.next_attempt_at - lease.expires_at > timedelta(seconds=3000)
    assert queue.ack(lease) is True


def test_an_expired_lease_on_the_final_attempt_is_dead_lettered_not_claimed(queue: Queue) -> None:
    message = queue.enqueue({"n": 1}, max_attempts=1)
    queue.claim()  # the worker dies holding its only attempt
    make_due(queue)
    assert queue.claim() == []
    assert message is not None
    stored = row(queue, message)
    assert (stored.status, stored.attempts) == ("failed", 1)
    assert stored.last_error == "lease expired on the final attempt"


# -- operations ------------------------------------------------------------------------------


def test_counts_by_status_and_the_oldest_waiting_age(queue: Queue) -> None:
    assert queue.oldest_waiting_age() is None
    queue.enqueue_many([Message({"n": n}) for n in range(4)])
    a, b, _c = queue.claim(3)
    queue.ack(a)
    queue.nack(b, "x", retry=False)
    assert queue.counts() == {"queued": 1, "sending": 1, "sent": 1, "failed": 1}
    age = queue.oldest_waiting_age()
    assert age is not None and age >= timedelta(0)


def test_purge_deletes_old_sent_messages_in_batches(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(7)])
    for lease in queue.claim(5):
        queue.ack(lease)
    assert queue.purge_sent(timedelta(hours=1)) == 0  # not old enough
    queue.engine.execute(update(queue.model).set({"created_at": sql.now(plus=-120)})
                         .where({"consumer": queue.consumer}))  # two minutes pass
    assert queue.purge_sent(timedelta(seconds=60), batch_size=2) == 5
    assert queue.counts() == {"queued": 2, "sending": 0, "sent": 0, "failed": 0}


def test_requeue_gives_failed_messages_a_fresh_budget(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(3)])
    leases = queue.claim(3)
    for lease in leases:
        queue.nack(lease, "provider down", retry=False)
    assert queue.requeue_failed([leases[0].id]) == 1
    assert queue.requeue_failed() == 2
    again = queue.claim(5)
    assert len(again) == 3 and {lease.attempts for lease in again} == {1}


def test_messages_of_other_consumers_are_left_alone(queue: Queue, engine: Engine) -> None:
    other = Queue(engine, "sms", model=queue.model)
    other.enqueue({"n": 1})
    assert queue.claim() == []
    assert queue.counts()["queued"] == 0
    assert other.counts()["queued"] == 1


def test_a_message_inserted_with_the_builder_is_due_at_once(queue: Queue, engine: Engine) -> None:
    engine.execute(insert(queue.model).values({"consumer": "mail", "payload": {"n": 1}}))
    (lease,) = queue.claim()
    assert lease.payload == {"n": 1} and lease.attempts == 1


def test_a_loop_of_claims_and_acks_runs_on_one_session(queue: Queue) -> None:
    queue.enqueue_many([Message({"n": n}) for n in range(6)])
    with queue.engine.session() as session:
        done = 0
        while leases := queue.claim(4, session=session):
            done += sum(queue.ack(lease, session=session) for lease in leases)
        assert not session.in_transaction
    assert done == 6 and queue.counts()["sent"] == 6


async def _async_handler(lease: Lease) -> None:
    """Work the blocking worker cannot do: it would only make the coroutine."""


def test_an_async_handler_is_refused_by_the_blocking_worker(queue: Queue) -> None:
    from tempest_typed import ValidationError

    queue.enqueue({"n": 1})
    make_due(queue)
    for call in (lambda: queue.process(_async_handler), lambda: queue.run(_async_handler)):
        with pytest.raises(ValidationError, match="an async handler is awaited by AsyncQueue"):
            call()
    assert queue.counts().get("queued") == 1  # nothing was claimed


def test_a_handler_returning_a_coroutine_fails_its_message(queue: Queue, engine: Engine) -> None:
    # a plain function that calls an async one cannot be told apart before it runs: the
    # message is nacked with the reason, never acked with its work not done
    queue.enqueue({"n": 1})
    make_due(queue)
    summary = queue.process(lambda lease: _async_handler(lease))
    assert summary.processed == 0
    row = engine.execute(select(queue.model)).one()
    assert row.status == "queued" and row.attempts == 1
    assert row.last_error is not None and "an async handler is awaited" in row.last_error


def test_the_claim_statement_explains_on_every_database(queue: Queue) -> None:
    """claim_statement() gave MySQL/MariaDB an UPDATE ... WHERE id IN (SELECT ... LIMIT n)
    that the dialect refuses to compile ("use the two-step claim"), so the queue's own claim
    could not be EXPLAINed there."""
    for limit in (1, 10):
        compiled = queue.claim_statement(limit).compile(queue.engine.dialect)
        assert queue.engine.execute_sql("EXPLAIN " + compiled.sql, compiled.params).all()
