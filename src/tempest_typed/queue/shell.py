"""What both worker-loop shells share, free of waiting: `LoopShell` (what is due, what a stop
asks, what each database answer means for the book and the log), the handler threads, and
which database errors the loop waits out.

Every decision is `WorkerBook`'s (worker.py). The loop itself is written once (loop_aio.py,
with its blocking twin loop.py generated from it); the threaded shell (runner.py) and the
asyncio shell (arunner.py) add only how they wait and how handlers run.
"""

from __future__ import annotations

import contextlib
import logging
import queue as stdqueue
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ..errors import ConfigurationError, QueryExecutionError, TempestError
from .retry import ReconnectDelay
from .worker import NOT_COMMITTED, Summary, WorkerBook

if TYPE_CHECKING:
    from .core import QueueCore
    from .messages import Lease

__all__ = ["SLICE", "THREADS", "LoopShell", "error_line", "logger", "waited_out"]

logger = logging.getLogger("tempest_typed.queue")

#: the longest the coordinator sleeps at a time, so that a stop (a flag a signal handler may
#: set, which cannot wake a thread safely) is seen within this long
SLICE = 0.1


class _HandlerThreads:
    """Daemon threads shared by every runner of the process: a handler that outlives its
    worker's grace period keeps its thread, and never holds the interpreter's exit."""

    def __init__(self) -> None:
        self._tasks: stdqueue.SimpleQueue[Callable[[], None]] = stdqueue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._busy = 0

    def submit(self, task: Callable[[], None]) -> None:
        """Run `task` on a free thread, starting one when every thread is busy."""
        with self._lock:
            self._busy += 1
            if self._busy > self._threads:
                self._threads += 1
                threading.Thread(target=self._serve, name=f"tempest-queue-{self._threads}",
                                 daemon=True).start()
        self._tasks.put(task)

    def _serve(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                task()
            finally:
                with self._lock:
                    self._busy -= 1


#: the handler threads of every worker loop of the process, Queue.run and AsyncQueue.run
THREADS = _HandlerThreads()


def error_line(exc: BaseException) -> str:
    """An error for one line of the log: its message's first line, and the hint that names
    the fix when the message has one (a missing table: create it)."""
    first, *rest = str(exc).splitlines() or [""]
    hints = [line.strip() for line in rest if line.strip().startswith("hint:")]
    return "; ".join([first, *hints])


def waited_out(exc: BaseException) -> bool:
    """Whether the worker loop waits out this error of its database work: the database
    refused the statement or could not be reached (QueryExecutionError), or the pool had no
    connection free in time (another user of the engine holds them all for now)."""
    if isinstance(exc, QueryExecutionError):
        return True
    # The pools say "no connection free" (drivers/base.py pool_exhausted, the psycopg
    # driver); any other ConfigurationError (a closed engine) is the program's and raised.
    return isinstance(exc, ConfigurationError) and "no connection free" in str(exc)


class LoopShell:
    """What both worker shells do alike, around `WorkerBook`: what is due, what a stop asks,
    and what each database answer means for the book and the log. A subclass supplies
    `_lock` (a real lock when handlers run on threads), the waiting, and `_start_drains`."""

    _lock: AbstractContextManager[Any]

    def __init__(self, queue: QueueCore[Any], *, batch: int, concurrency: int = 1,
                 grace_seconds: float = 10.0, heartbeat_seconds: float | None = None,
                 poll_interval: float = 1.0) -> None:
        self.queue = queue
        self.batch = batch
        self.poll_interval = poll_interval
        self.book = WorkerBook(queue.lease_seconds, concurrency=concurrency,
                               grace_seconds=grace_seconds,
                               heartbeat_seconds=heartbeat_seconds)
        #: set by queue.stop() while this loop runs: a plain flag, safe from a signal handler
        self._stop_requested = False
        self._drains = 0
        self._reconnect = ReconnectDelay()
        #: stops asked for by a signal (sync) or a task cancellation (async), and noticed
        self._signals = 0
        self._signals_seen = 0
        #: False for one batch (process()): no claim after the first
        self._keep_claiming = True
        #: the backoff owed after this step's database errors, waited at the step's end
        #: (after the book and the log know what failed)
        self._pause = 0.0
        #: an ack, nack or release of this step did not reach the database
        self._settle_failed = False

    @property
    def summary(self) -> Summary:
        """What this runner did so far."""
        return self.book.summary

    def _stop_asked(self) -> bool:
        """A stop (stop(), a signal, a cancel) that the loop has not acted on yet."""
        return ((self._stop_flag() and not self.book.stopping)
                or self._signals != self._signals_seen)

    def _sleep_left(self, end: float) -> float:
        """How long a sleep until `end` may still last: 0 once a new stop is asked, and not
        past the grace period while stopping (what is left to do is then given up)."""
        if self._stop_asked():
            return 0.0
        now = time.monotonic()
        if self.book.stopping and self.book.grace_deadline is not None:
            end = min(end, self.book.grace_deadline)
        return max(0.0, end - now)

    def _notice_stop(self) -> None:
        with self._lock:
            self._notice_stop_held(time.monotonic())

    def _notice_stop_held(self, now: float) -> None:
        """Act on a stop asked since the last look (holding `_lock`): the book stops, and its
        unstarted leases are set aside to be handed back."""
        asked = self._stop_flag() or self._signals_seen < self._signals
        if asked and not self.book.stopping:
            self.book.stop(now)
            logger.info("worker %r stopping: %d handler(s) running, grace %gs",
                        self.queue.consumer, self.book.running(), self.book.grace_seconds)
            self._signals_seen = min(self._signals_seen + 1, self._signals)
        while self._signals_seen < self._signals:  # a second stop ends the grace period
            self._signals_seen += 1
            self.book.stop(now)
            logger.info("worker %r: stop asked again, handing back running messages now",
                        self.queue.consumer)
        if self.book.stopping:
            self._wake()

    def _next_to_start(self, now: float) -> Lease | None:
        """The next lease a drain may start (holding `_lock`); None once a stop is asked,
        even one the coordinator has not looked at yet (a handler's own stop() call: no
        batch-mate starts after it)."""
        self._notice_stop_held(now)
        return self.book.next_to_start(now)

    def _wake(self) -> None:
        """Wake the coordinator's wait (called holding the lock)."""

    def _start_drains(self, count: int) -> None:
        """Start `count` handler drains (threads or tasks) that take waiting leases."""
        raise NotImplementedError

    def _cancel_as_stop(self) -> AbstractContextManager[None]:
        """A block in which a cancel of the loop's task is a stop (the asyncio shell's; the
        threaded shell has no such cancel)."""
        return contextlib.nullcontext()

    def _tell_lost(self, leases: list[Lease]) -> None:
        """These leases are no longer this worker's: their handlers have been told through
        `Lease.lost`; the asyncio shell also cancels async handlers."""

    def _due(self, now: float) -> tuple[int, list[Lease], list[Lease],
                                        list[tuple[Lease, str]], list[Lease]]:
        """What to do now: (claim size, releases, acks, nacks, heartbeats)."""
        with self._lock:
            size = self.book.claim_size(self.batch) if self._keep_claiming else 0
            releases = self.book.to_release(now)
            # acks ride with the next claim: settle everything finished before claiming
            acks, nacks = self.book.to_settle(now, force=size > 0)
            beats = self.book.heartbeat_due(now)
        if self.book.stopping or self._stop_flag():
            size = 0
        if releases:
            self._tell_lost(releases)  # past the grace period some of them are running
        return size, releases, acks, nacks, beats

    def _database_error(self, what: str, exc: TempestError) -> float:
        """Count and log a database error; the backoff to wait before going on."""
        self.book.summary.database_errors += 1
        cause = error_line(exc)
        if self.book.past_grace(time.monotonic()):
            logger.warning("worker %r: %s failed (%s), and the grace period is over",
                           self.queue.consumer, what, cause)
            return 0.0
        if not self._pause:  # one backoff per step, however many of its statements failed
            self._pause = self._reconnect.next_delay()
        logger.warning("worker %r: %s failed (%s); trying again in %.2fs",
                       self.queue.consumer, what, cause, self._pause)
        return self._pause

    def _claimed(self, leases: list[Lease], sent_at: float) -> None:
        """Record a claim's leases, and start the handler drains they need."""
        with self._lock:
            self.book.claimed(leases, sent_at)
            starts = min(self.book.concurrency - self._drains, len(leases))
            self._drains += starts
        self._start_drains(starts)

    def _heartbeat_done(self, ok: bool, result: tuple[list[UUID], list[UUID]] | None,
                        sent_at: float) -> None:
        if not ok or result is None:
            with self._lock:
                began = self.book.heartbeat_failed(time.monotonic())
                running, waiting = self.book.running(), self.book.waiting()
            if began:
                logger.warning("worker %r: a heartbeat did not reach the database: no "
                               "handler starts and nothing is claimed until one does (%d "
                               "running, %d waiting)", self.queue.consumer, running, waiting)
            return
        kept, lost = result
        with self._lock:
            was_failing = self.book.beats_failing
            running_lost = self.book.extended(kept, lost, sent_at)
            # no handler started while heartbeats failed: start the drains that ended
            starts = max(0, min(self.book.concurrency - self._drains, self.book.startable()))
            self._drains += starts
        if was_failing:
            logger.info("worker %r: heartbeats reach the database again", self.queue.consumer)
        if lost:
            logger.warning("worker %r: %d lease(s) lost to another worker (%d of them with "
                           "a handler running, told through Lease.lost)",
                           self.queue.consumer, len(lost), len(running_lost))
            self._tell_lost(running_lost)
        self._start_drains(starts)

    def _acked(self, acks: list[Lease], ok: bool, acked: int | None) -> None:
        self._settle_failed |= not ok
        if ok and acked is not None:
            with self._lock:
                self.book.acked(acks, acked)
            if acked < len(acks):
                logger.warning("worker %r: %d ack(s) came after another worker took the "
                               "message", self.queue.consumer, len(acks) - acked)

    def _nacked(self, lease: Lease, error: str, ok: bool, outcome: str | None) -> None:
        self._settle_failed |= not ok
        if ok:
            with self._lock:
                self.book.nacked(lease, outcome)
            if outcome is None and lease._watch.settled is not None:
                self._settled_by_hand(lease, error, counted=True)
                return
            level = logging.WARNING if outcome == "failed" else logging.INFO
            logger.log(level, "worker %r: message %s attempt %d/%d failed (%s): %s",
                       self.queue.consumer, lease.id, lease.attempts, lease.max_attempts,
                       outcome or "lease lost", error)

    def _settled_by_hand(self, lease: Lease, error: str, *, counted: bool = False) -> None:
        """The handler acked or nacked `lease` itself (its own nack found it settled): count
        what it did, and log the exception it raised afterwards, if it raised."""
        if not counted:
            with self._lock:
                self.book.nacked(lease, None)
        if not error.startswith(NOT_COMMITTED.split("{}")[0]):
            logger.warning("worker %r: message %s: the handler raised after it settled the "
                           "message itself (%s): %s", self.queue.consumer, lease.id,
                           lease._watch.settled, error)

    def _released(self, leases: list[Lease], ok: bool, released: int | None) -> None:
        self._settle_failed |= not ok
        with self._lock:
            if not (ok and released is not None):
                self.book.release_failed(leases)  # tried again, until the grace period ends
                return
            self.book.released(leases, released)
        logger.info("worker %r: handed back %d message(s), no attempt charged%s",
                    self.queue.consumer, released,
                    f"; {len(leases) - released} already taken by another worker"
                    if released < len(leases) else "")

    def _give_up_if_past_grace(self) -> None:
        """Stopping, past the grace period, and the database still failing: leave what is
        not done to the leases' expiry, and say so."""
        with self._lock:
            unreleased, unsettled = self.book.give_up(time.monotonic())
        if unreleased:
            logger.warning("worker %r: could not hand back %d message(s) before the grace "
                           "period ended (the database did not answer): they stay leased, "
                           "an attempt charged, until their lease ends, then are delivered "
                           "again", self.queue.consumer, len(unreleased))
        if unsettled:
            logger.warning("worker %r: could not ack or nack %d handled message(s) before "
                           "the grace period ended (the database did not answer): they are "
                           "delivered again once their lease ends", self.queue.consumer,
                           len(unsettled))

    def _next_lease(self) -> Lease | None:
        """For a handler drain: the next lease to handle, or None (the drain ends)."""
        with self._lock:
            lease = self._next_to_start(time.monotonic())
            if lease is None:
                self._drains -= 1
                self._wake()
            return lease

    def _handled(self, lease: Lease, error: str | None) -> None:
        with self._lock:
            self.book.finished(lease.id, error)
            if self.book.stopping or not self.book.waiting():
                self._wake()  # the coordinator may settle or claim more

    def _handler_cancelled(self, lease: Lease) -> None:
        """A handler this worker cancelled (its lease lost or run out) has ended."""
        with self._lock:
            self.book.cancelled(lease.id)
            self._wake()

    def _expired_all(self) -> bool:
        """For one batch: give up on what the database would not take, once every lease of
        it has run out (an ack or release of this step failed)."""
        failed, self._settle_failed = self._settle_failed, False
        if not failed:
            return False
        with self._lock:
            return self.book.abandon_expired(time.monotonic())

    def _stop_flag(self) -> bool:
        """Whether queue.stop() asked this loop to stop. A stop asked while no run() ran is
        taken by the first run() that looks (its start may have raced the stop): it stops
        every loop of the queue running then."""
        queue = self.queue
        if queue._stop_pending and self._keep_claiming:  # not process()'s single batch
            queue._stop_pending = False
            for loop in (*queue._loops, self):
                loop._stop_requested = True
        return self._stop_requested

    def _registered(self) -> AbstractContextManager[None]:
        """While the loop runs, queue.stop() reaches it (and every other loop of the queue)."""
        loops = self.queue._loops

        @contextlib.contextmanager
        def registered() -> Any:
            loops.add(self)
            try:
                yield
            finally:
                loops.discard(self)

        return registered()

    def _started(self, kind: str) -> None:
        queue = self.queue
        logger.info("%s %r started on %s: batch %d, concurrency %d, lease %gs", kind,
                    queue.consumer, queue._dialect.name, self.batch, self.book.concurrency,
                    queue.lease_seconds)
