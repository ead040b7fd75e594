"""The worker loop's decisions, free of I/O: which lease a handler may start, when to send a
heartbeat, when to settle finished messages, what a stop hands back, and the summary.

The worker loop (loop_aio.py, and loop.py generated from it) and its two shells (runner.py:
threads, signals; arunner.py: tasks, LISTEN) are a thin layer over `WorkerBook`, which
keeps the time of heartbeats in a `heartbeat.Heartbeat`. Nothing here sleeps, locks or talks
to a database: every method takes the current time (a monotonic clock, in seconds) and says
what to do; the shell does it and reports back.

Lease times are kept on the worker's own monotonic clock. A lease's *deadline* is the moment
the claim (or the heartbeat) that set it was sent plus its seconds: the database started the
lease no earlier than that, so the lease surely holds until the deadline whatever the clocks
of the two machines say.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, Literal
from uuid import UUID

from .heartbeat import Heartbeat

if TYPE_CHECKING:
    from .messages import Lease

__all__ = ["NOT_COMMITTED", "Held", "Summary", "WorkerBook"]

Phase = Literal["waiting", "running", "ok", "failed"]

#: the error a message is nacked with when its handler acked or nacked it in a transaction
#: of its own and returned, and that transaction rolled back
NOT_COMMITTED: Final = ("the handler returned after {} this message in a transaction that "
                         "did not commit (it rolled back)")


@dataclasses.dataclass
class Summary:
    """What a worker did: the messages it settled, and the leases it lost to another holder."""

    #: messages claimed
    claimed: int = 0
    #: handled without error and acked
    processed: int = 0
    #: handler failed, nacked, queued again after a backoff
    retried: int = 0
    #: handler failed on the final attempt (or said not to retry): status "failed"
    dead_lettered: int = 0
    #: leases another worker held by the time of the heartbeat, ack or nack (not settled here)
    leases_lost: int = 0
    #: handed back with no attempt charged: unstarted (a stop, a lease too near its end), or
    #: still running past the grace period or past its lease
    released: int = 0
    #: database errors the loop waited out (each followed by a reconnect with backoff)
    database_errors: int = 0
    #: left to their lease because the database did not answer in time (a hand-back or an
    #: ack not done when the grace period ended): delivered again once the lease ends
    abandoned: int = 0

    def __bool__(self) -> bool:
        """True when the batch claimed something (so `process(h) or sleep(1)` still reads)."""
        return self.claimed > 0

    def add(self, other: Summary) -> None:
        """Add another summary's figures to this one."""
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def __str__(self) -> str:
        """One line: processed, retried, dead-lettered, leases lost, released, errors,
        abandoned."""
        return (f"processed {self.processed}, retried {self.retried}, dead-lettered "
                f"{self.dead_lettered}, leases lost {self.leases_lost}, released "
                f"{self.released}, database errors {self.database_errors}, abandoned "
                f"{self.abandoned}")


@dataclasses.dataclass
class Held:
    """One lease this worker holds: its deadline on the local clock, and how far it got."""

    lease: Lease
    deadline: float
    phase: Phase = "waiting"
    error: str | None = None


class WorkerBook:
    """The leases a worker holds and the decisions about them (no I/O, no locks, no clock).

    The shell calls, in a loop: `claim_size()` and `claimed()`; handler runners call
    `next_to_start()` and `finished()` (or `cancelled()`); the shell asks `heartbeat_due()`,
    `to_settle()`, `to_release()`, `wake_at()`, and reports what the database said with
    `extended()` / `heartbeat_failed()`, `acked()`, `nacked()`, `released()` /
    `release_failed()`. `stop()` starts a clean shutdown; `give_up()` ends one that the
    database did not let finish within the grace period.
    """

    def __init__(self, lease_seconds: float, *, concurrency: int = 1,
                 grace_seconds: float = 10.0, heartbeat_seconds: float | None = None) -> None:
        self.lease_seconds = lease_seconds
        self.concurrency = concurrency
        self.grace_seconds = grace_seconds
        #: when held leases are extended (heartbeat.py)
        self.heartbeat = Heartbeat(lease_seconds, heartbeat_seconds)
        #: a handler starts only on a lease with at least this long left to run
        self.start_margin = min(lease_seconds / 3, self.heartbeat.seconds)
        #: every lease held, in claim order; change it only through the methods below, which
        #: keep the counts by phase (a batch of 100 would otherwise be scanned per message)
        self.held: dict[UUID, Held] = {}
        self._phases: dict[Phase, int] = {"waiting": 0, "running": 0, "ok": 0, "failed": 0}
        self._queue: deque[Held] = deque()  # waiting leases, oldest first (stale ones skipped)
        self.summary = Summary()
        self.stopping = False
        self.grace_deadline: float | None = None
        #: leases to hand back (a stop, too near their end to start, past the grace period or
        #: their lease), kept until a release reaches the database
        self._release: list[Lease] = []

    @property
    def beats_failing(self) -> bool:
        """The last heartbeat did not reach the database: no handler starts, nothing is
        claimed, until one does (the leases held may be ending unseen)."""
        return self.heartbeat.failing

    # -- claiming ---------------------------------------------------------------------------

    def claim_size(self, batch: int) -> int:
        """How many messages to claim now: 0 while stopping, while work is still waiting, or
        while heartbeats are failing."""
        if self.stopping or self.waiting() or (self.beats_failing and self.held):
            return 0
        if self.running() >= self.concurrency:
            return 0
        return batch

    def claimed(self, leases: Sequence[Lease], sent_at: float) -> None:
        """Record a claim's leases; `sent_at` is when the claim was sent. A claim that comes
        back after a stop began (sent from a handler thread just before) is handed back."""
        if not self.held:
            self.heartbeat.reached(sent_at)  # no lease left from the outage
        deadline = sent_at + self.lease_seconds
        self.summary.claimed += len(leases)
        if self.stopping:
            for lease in leases:
                lease._watch.deadline = deadline
            self._release.extend(leases)
            return
        for lease in leases:
            held = self.held[lease.id] = Held(lease, deadline)
            lease._watch.deadline = deadline
            self._queue.append(held)
        self._phases["waiting"] += len(leases)

    def _move(self, held: Held, phase: Phase) -> None:
        self._phases[held.phase] -= 1
        self._phases[phase] += 1
        held.phase = phase

    def _drop(self, lease_id: UUID) -> Held | None:
        held = self.held.pop(lease_id, None)
        if held is not None:
            self._phases[held.phase] -= 1
        return held

    # -- handlers ---------------------------------------------------------------------------

    def next_to_start(self, now: float) -> Lease | None:
        """The next waiting lease a handler may start now, marked running; None if none.

        None while heartbeats are failing (no lease is known to hold long enough). A lease
        with less than `start_margin` left is not started: it is set aside to be released
        (another worker will take it), never handled on a lease that may be gone.
        """
        if self.stopping or self.beats_failing:
            return None
        while self._queue:
            held = self._queue.popleft()
            if self.held.get(held.lease.id) is not held or held.phase != "waiting":
                continue  # lost at a heartbeat, or set aside
            if held.deadline - now < self.start_margin:
                self._set_aside(held)
                continue
            self._move(held, "running")
            return held.lease
        return None

    def startable(self) -> int:
        """How many waiting leases handlers could start now (0 while heartbeats fail)."""
        return 0 if self.stopping or self.beats_failing else self.waiting()

    def _set_aside(self, held: Held) -> None:
        self._drop(held.lease.id)
        self._release.append(held.lease)

    def finished(self, lease_id: UUID, error: str | None) -> None:
        """A handler returned (error None) or raised (its cleaned error text)."""
        held = self.held.get(lease_id)
        if held is None or held.phase != "running":
            return  # released past the grace period, or lost: the result is not ours to settle
        # The handler acked or nacked it itself and returned (one that raised may have done
        # so in a transaction that rolled back: its nack, fenced, tells)
        watch = held.lease._watch
        if error is None and watch.settled is not None:
            if not watch.settled_in_tx:
                self._drop(lease_id)
                self._count_settled(held.lease)
                return
            # in its own transaction: if that rolled back, the row still carries this
            # lease, and the fenced nack finds it (else it changes nothing, and nacked()
            # counts what the handler did)
            error = NOT_COMMITTED.format("acking" if watch.settled == "sent" else "nacking")
        held.error = error
        self._move(held, "ok" if error is None else "failed")

    def _count_settled(self, lease: Lease) -> bool:
        """Count a lease the handler acked or nacked by hand (`ack(lease)` in it, or the
        exactly-once `ack(lease, session=tx)`) as what it did; False if it did neither."""
        settled = lease._watch.settled
        if settled == "sent":
            self.summary.processed += 1
        elif settled == "queued":
            self.summary.retried += 1
        elif settled == "failed":
            self.summary.dead_lettered += 1
        return settled is not None

    def cancelled(self, lease_id: UUID) -> None:
        """The shell cancelled a handler whose lease was lost or ran out: if the lease is still
        held, hand it back (it did not fail)."""
        held = self.held.get(lease_id)
        if held is not None and held.phase == "running":
            self._set_aside(held)

    def waiting(self) -> int:
        """Leases claimed and not started yet."""
        return self._phases["waiting"]

    def running(self) -> int:
        """Handlers running now."""
        return self._phases["running"]

    def busy(self) -> bool:
        """True while some lease is waiting or running."""
        return self._phases["waiting"] + self._phases["running"] > 0

    def idle(self) -> bool:
        """True when nothing is held and nothing is left to release."""
        return not self.held and not self._release

    # -- heartbeats -------------------------------------------------------------------------

    def heartbeat_due(self, now: float) -> list[Lease]:
        """The leases to extend now (waiting and running ones), or [] when not yet due."""
        if not self.heartbeat.due(now):
            return []
        return [h.lease for h in self.held.values() if h.phase in ("waiting", "running")]

    def extended(self, kept: Iterable[UUID], lost: Iterable[UUID],
                 sent_at: float) -> list[Lease]:
        """A heartbeat sent at `sent_at` kept these leases and found these taken by another
        worker; the lost leases whose handlers are running (to be told), which are dropped
        like the waiting ones (their results will be discarded)."""
        self.heartbeat.reached(sent_at)
        deadline = sent_at + self.lease_seconds
        for lease_id in kept:
            held = self.held.get(lease_id)
            if held is not None:
                held.deadline = deadline
                held.lease._watch.deadline = deadline
        running = []
        for lease_id in lost:
            dropped = self._drop(lease_id)
            if dropped is not None and self._count_settled(dropped.lease):
                continue  # not lost: its running handler acked or nacked it by hand
            if dropped is not None:
                self.summary.leases_lost += 1
                dropped.lease._watch.gone.set()
                if dropped.phase == "running":
                    running.append(dropped.lease)
        return running

    def heartbeat_failed(self, now: float) -> bool:
        """The heartbeat did not reach the database: start no handler until one does, and
        try again at the next wake-up. True when heartbeats just began to fail."""
        # Deadlines stay as they were: a lease whose deadline passes is reported lost.
        return self.heartbeat.failed(now)

    # -- settling ---------------------------------------------------------------------------

    def to_settle(self, now: float, *, force: bool = False,
                  ) -> tuple[list[Lease], list[tuple[Lease, str]]]:
        """The finished leases to ack and to nack now: when no handler is waiting or running,
        when a heartbeat is due (acks ride with it), before a claim (`force`), when a lease
        would end before the next heartbeat, or while stopping; else none yet."""
        if not self._phases["ok"] + self._phases["failed"]:
            return [], []
        done = [h for h in self.held.values() if h.phase in ("ok", "failed")]
        waiting_for_more = (not force and self.busy() and not self.stopping
                            and not self._ack_near(done, now)
                            and not self.heartbeat.due(now))
        if waiting_for_more:
            return [], []
        acks = [h.lease for h in done if h.phase == "ok"]
        nacks = [(h.lease, h.error or "") for h in done if h.phase == "failed"]
        return acks, nacks

    def _ack_near(self, done: list[Held], now: float) -> bool:
        """True when a finished lease would end before the next heartbeat could ack it."""
        return any(h.deadline - now < self.start_margin for h in done)

    def acked(self, leases: Sequence[Lease], acked: int) -> None:
        """An ack of these leases changed `acked` rows; the rest were held by another worker."""
        for lease in leases:
            self._drop(lease.id)
        self.summary.processed += acked
        self.summary.leases_lost += len(leases) - acked

    def nacked(self, lease: Lease, outcome: str | None) -> None:
        """A nack's outcome: "queued", "failed", or None when the lease was lost."""
        self._drop(lease.id)
        if outcome is None and self._count_settled(lease):
            return  # not lost: the handler acked or nacked it by hand, then raised
        if outcome == "queued":
            self.summary.retried += 1
        elif outcome == "failed":
            self.summary.dead_lettered += 1
        else:
            self.summary.leases_lost += 1

    # -- stopping and releasing -------------------------------------------------------------

    def stop(self, now: float) -> None:
        """Stop claiming; unstarted leases go back at once, running ones get the grace period.

        A second stop ends the grace period now.
        """
        if self.stopping:
            self.grace_deadline = now
            return
        self.stopping = True
        self.grace_deadline = now + self.grace_seconds
        for held in list(self.held.values()):
            if held.phase == "waiting":
                self._set_aside(held)

    def past_grace(self, now: float) -> bool:
        """True once a stop's grace period is over."""
        return self.stopping and self.grace_deadline is not None and now >= self.grace_deadline

    def to_release(self, now: float) -> list[Lease]:
        """The leases to hand back now, uncharged: those set aside (and not yet handed back),
        and past the grace period the running ones (their handlers' results will not be
        settled; each is marked lost)."""
        if self.past_grace(now):
            for held in list(self.held.values()):
                if held.phase == "running":
                    held.lease._watch.gone.set()
                    self._set_aside(held)
        out, self._release = self._release, []
        return out

    def released(self, leases: Sequence[Lease], released: int) -> None:
        """A release of these leases changed `released` rows; the rest were lost already."""
        self.summary.released += released
        self.summary.leases_lost += len(leases) - released

    def release_failed(self, leases: Sequence[Lease]) -> None:
        """A release did not reach the database: it is tried again (until `give_up()`)."""
        self._release = [*leases, *self._release]

    def give_up(self, now: float) -> tuple[list[Lease], list[Lease]]:
        """Past the grace period, with the database not answering: drop every lease still to
        hand back or to settle, counted as abandoned (each is delivered again once its lease
        ends). (The leases not handed back, running ones included; the finished ones not
        acked or nacked.)"""
        if not self.past_grace(now):
            return [], []
        unreleased, self._release = self._release, []
        unsettled: list[Lease] = []
        for held in list(self.held.values()):
            self._drop(held.lease.id)
            (unsettled if held.phase in ("ok", "failed") else unreleased).append(held.lease)
        for lease in (*unreleased, *unsettled):
            lease._watch.gone.set()
        self.summary.abandoned += len(unreleased) + len(unsettled)
        return unreleased, unsettled

    def abandon_expired(self, now: float) -> bool:
        """Give up on what is left to settle or hand back once no handler runs and every
        lease's deadline has passed (they will be delivered again): for one batch after
        database errors. True when it gave up."""
        left = [h.lease for h in self.held.values()] + self._release
        if not left or self.busy() or any(lease._watch.deadline > now for lease in left):
            return False
        self.summary.abandoned += len(left)
        for lease in left:
            self._drop(lease.id)
            lease._watch.gone.set()
        self._release = []
        return True

    def finished_stopping(self, now: float) -> bool:
        """True when a stop is complete: nothing running, settled, or left to release."""
        return self.stopping and self.idle()

    # -- waiting ----------------------------------------------------------------------------

    def wake_at(self, now: float) -> float:
        """The latest time the shell may sleep until before it must act (heartbeat, an ack
        before its lease ends, the end of the grace period)."""
        times = []
        if self.held:
            times.append(self.heartbeat.next_at())
            done = [h.deadline - self.start_margin for h in self.held.values()
                    if h.phase in ("ok", "failed")]
            times.extend(done)
        if self.stopping and self.grace_deadline is not None and (self.running()
                                                                  or self._release):
            times.append(self.grace_deadline)
        return max(now, min(times)) if times else now + self.heartbeat.seconds
