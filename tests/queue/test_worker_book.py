"""The worker loop's decisions (WorkerBook), on a clock the test moves: no database, no sleep."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from tempest_typed.queue import Lease
from tempest_typed.queue.messages import MAX_ERROR_CHARS, clean_error, error_text
from tempest_typed.queue.worker import WorkerBook

LEASE = 30.0


def leases(n: int, token: UUID | None = None) -> list[Lease]:
    token = token or uuid4()
    return [Lease(id=uuid4(), token=token, payload={}, idempotency_key=None, attempts=1,
                  max_attempts=3, expires_at=datetime.now(UTC)) for _ in range(n)]


def book(**options: float) -> WorkerBook:
    return WorkerBook(LEASE, **options)  # type: ignore[arg-type]


def test_a_heartbeat_is_due_every_third_of_the_lease_for_held_leases() -> None:
    b = book()
    batch = leases(3)
    b.claimed(batch, sent_at=0.0)
    assert b.heartbeat_due(9.9) == []
    assert b.heartbeat_due(10.0) == batch
    b.extended([x.id for x in batch], [], sent_at=10.0)
    assert b.heartbeat_due(19.9) == []
    assert b.wake_at(11.0) == 20.0


def test_no_handler_starts_on_a_lease_near_its_end_it_is_released_instead() -> None:
    b = book()
    first, second = leases(2)
    b.claimed([first, second], sent_at=0.0)
    assert b.next_to_start(0.0) == first
    b.finished(first.id, None)
    # no heartbeat reached the database: 29 s after the claim, 1 s of lease is left
    assert b.next_to_start(29.0) is None
    assert b.to_release(29.0) == [second]
    assert second.id not in b.held


def test_a_heartbeat_keeps_waiting_leases_startable() -> None:
    b = book()
    first, second = leases(2)
    b.claimed([first, second], sent_at=0.0)
    b.next_to_start(0.0)
    b.extended([first.id, second.id], [], sent_at=25.0)
    b.finished(first.id, None)
    assert b.next_to_start(29.0) == second


def test_a_lease_lost_at_a_heartbeat_is_dropped_and_counted() -> None:
    b = book()
    first, second = leases(2)
    b.claimed([first, second], sent_at=0.0)
    b.extended([first.id], [second.id], sent_at=10.0)
    assert second.id not in b.held and b.summary.leases_lost == 1
    assert b.next_to_start(10.0) == first


def test_finished_messages_settle_when_the_batch_is_done_or_a_heartbeat_is_due() -> None:
    b = book()
    ok, bad, later = leases(3)
    b.claimed([ok, bad, later], sent_at=0.0)
    for lease, error in ((ok, None), (bad, "ValueError: no")):
        assert b.next_to_start(1.0) == lease
        b.finished(lease.id, error)
    assert b.to_settle(2.0) == ([], [])  # `later` is still waiting: acks are grouped
    assert b.to_settle(10.0) == ([ok], [(bad, "ValueError: no")])  # ... up to a heartbeat
    assert b.to_settle(2.0, force=True) == ([ok], [(bad, "ValueError: no")])  # or a claim
    b.acked([ok], 1)
    b.nacked(bad, "queued")
    assert b.next_to_start(3.0) == later
    b.finished(later.id, None)
    assert b.to_settle(3.0) == ([later], [])  # nothing waiting or running: at once
    b.acked([later], 0)  # the ack found another holder
    assert (b.summary.processed, b.summary.retried, b.summary.leases_lost) == (1, 1, 1)
    assert b.idle()


def test_a_stop_hands_back_unstarted_leases_at_once_and_waits_for_running_ones() -> None:
    b = book(grace_seconds=5.0)
    running, waiting1, waiting2 = leases(3)
    b.claimed([running, waiting1, waiting2], sent_at=0.0)
    b.next_to_start(0.0)
    b.stop(1.0)
    assert b.claim_size(10) == 0
    assert b.next_to_start(1.0) is None
    assert b.to_release(1.0) == [waiting1, waiting2]
    b.released([waiting1, waiting2], 2)
    assert b.to_release(5.9) == []  # within the grace period the handler may finish
    assert b.wake_at(2.0) == 6.0
    b.finished(running.id, None)
    assert b.to_settle(3.0) == ([running], [])
    b.acked([running], 1)
    assert b.finished_stopping(3.0)
    assert (b.summary.processed, b.summary.released) == (1, 2)


def test_a_claim_that_comes_back_after_a_stop_began_is_handed_back_unstarted() -> None:
    """A handler thread sent the claim just before the stop: its leases are never started,
    and go back with no attempt charged, so the stop still ends."""
    b = book(grace_seconds=5.0)
    b.stop(0.0)
    late = leases(2)
    b.claimed(late, sent_at=0.0)
    assert b.next_to_start(0.1) is None and not b.held
    assert b.to_release(0.1) == late
    b.released(late, 2)
    assert b.finished_stopping(0.2)
    assert (b.summary.claimed, b.summary.released) == (2, 2)


def test_past_the_grace_period_the_running_message_is_released_and_its_result_ignored() -> None:
    b = book(grace_seconds=5.0)
    (running,) = leases(1)
    b.claimed([running], sent_at=0.0)
    b.next_to_start(0.0)
    b.stop(1.0)
    assert b.to_release(5.9) == []
    assert b.to_release(6.0) == [running]
    b.finished(running.id, None)  # the handler returned after all: not ours any more
    assert b.to_settle(7.0) == ([], [])
    assert b.idle()


def test_a_second_stop_ends_the_grace_period() -> None:
    b = book(grace_seconds=60.0)
    (running,) = leases(1)
    b.claimed([running], sent_at=0.0)
    b.next_to_start(0.0)
    b.stop(1.0)
    b.stop(2.0)
    assert b.to_release(2.0) == [running]


def test_claims_wait_for_free_handlers_and_for_waiting_work() -> None:
    b = book(concurrency=2)
    batch = leases(3)
    assert b.claim_size(10) == 10
    b.claimed(batch, sent_at=0.0)
    assert b.claim_size(10) == 0  # work is waiting
    b.next_to_start(0.0)
    b.next_to_start(0.0)
    assert b.claim_size(10) == 0  # one still waiting
    b.next_to_start(0.0)
    assert b.claim_size(10) == 0  # three running, two threads... none free
    b.finished(batch[0].id, None)
    b.finished(batch[1].id, None)
    assert b.claim_size(10) == 10


def test_error_text_is_cleaned_and_bounded() -> None:
    assert error_text(ValueError("bad\x00byte")) == "ValueError: bad\\x00byte"
    assert clean_error("lone \udc80 surrogate") == "lone \\udc80 surrogate"
    long = clean_error("x" * 10_000)
    assert len(long) <= MAX_ERROR_CHARS and long.endswith("(truncated)")

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert error_text(Unprintable()) == "Unprintable: <unprintable>"


def test_while_heartbeats_fail_no_handler_starts_and_nothing_is_claimed() -> None:
    b = book()
    first, second = leases(2)
    b.claimed([first, second], sent_at=0.0)
    assert b.next_to_start(0.0) == first
    assert b.heartbeat_failed(10.0) is True  # just began: the shell says so
    assert b.heartbeat_failed(11.0) is False
    b.finished(first.id, None)
    assert b.next_to_start(11.0) is None and b.startable() == 0  # plenty of lease left, still
    assert b.claim_size(10) == 0
    assert b.to_release(11.0) == []  # the waiting lease is kept, not handed back
    assert b.extended([second.id], [], sent_at=12.0) == []
    assert b.startable() == 1 and b.next_to_start(12.0) == second


def test_a_lease_lost_at_a_heartbeat_is_marked_and_a_running_one_returned_to_be_told() -> None:
    b = book()
    running, waiting = leases(2)
    b.claimed([running, waiting], sent_at=0.0)
    b.next_to_start(0.0)
    assert b.extended([], [running.id, waiting.id], sent_at=10.0) == [running]
    assert running._watch.gone.is_set() and waiting._watch.gone.is_set()
    assert b.summary.leases_lost == 2 and b.idle()


def test_heartbeats_push_the_deadline_the_lease_reports() -> None:
    b = book()
    (lease,) = leases(1)
    b.claimed([lease], sent_at=100.0)
    assert lease._watch.deadline == 100.0 + LEASE
    b.extended([lease.id], [], sent_at=110.0)
    assert lease._watch.deadline == 110.0 + LEASE


def test_a_handler_cancelled_on_a_lease_still_held_hands_it_back() -> None:
    b = book()
    (lease,) = leases(1)
    b.claimed([lease], sent_at=0.0)
    b.next_to_start(0.0)
    b.cancelled(lease.id)
    assert b.to_release(1.0) == [lease]


def test_a_failed_release_is_tried_again_until_the_grace_period_ends() -> None:
    b = book(grace_seconds=5.0)
    running, waiting1, waiting2 = leases(3)
    b.claimed([running, waiting1, waiting2], sent_at=0.0)
    b.next_to_start(0.0)
    b.stop(1.0)
    assert b.to_release(1.0) == [waiting1, waiting2]
    b.release_failed([waiting1, waiting2])
    assert b.give_up(2.0) == ([], [])  # within the grace period: keep trying
    assert b.to_release(2.0) == [waiting1, waiting2]
    b.release_failed([waiting1, waiting2])
    assert not b.idle()
    assert b.give_up(6.0) == ([waiting1, waiting2, running], [])
    assert (b.summary.abandoned, b.summary.released, b.summary.leases_lost) == (3, 0, 0)
    assert running._watch.gone.is_set() and b.idle()


def test_past_the_grace_period_finished_messages_not_acked_are_given_up_as_unsettled() -> None:
    b = book(grace_seconds=5.0)
    (done,) = leases(1)
    b.claimed([done], sent_at=0.0)
    b.next_to_start(0.0)
    b.finished(done.id, None)
    b.stop(1.0)
    assert b.give_up(6.0) == ([], [done])
    assert b.summary.abandoned == 1 and b.idle()


def test_one_batch_gives_up_what_it_could_not_hand_back_once_every_lease_ran_out() -> None:
    b = book()
    (lease,) = leases(1)
    b.claimed([lease], sent_at=0.0)
    b.heartbeat_failed(10.0)
    b.stop(10.0)  # set aside, to be handed back
    b.release_failed(b.to_release(10.0))
    assert not b.abandon_expired(29.0)  # the lease may still hold: keep trying
    assert b.abandon_expired(31.0)
    assert b.summary.abandoned == 1 and b.idle()


def test_a_lease_pickles_and_copies_and_its_copy_is_watched_by_no_loop() -> None:
    import copy
    import pickle

    b = book()
    (lease,) = leases(1)
    b.claimed([lease], sent_at=0.0)
    lease._watch.gone.set()
    for other in (pickle.loads(pickle.dumps(lease)), copy.deepcopy(lease)):
        assert other == lease and not other.lost
