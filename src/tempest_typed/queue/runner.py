"""The threaded shell of the worker loop: handlers on daemon threads, signals, a condition.

The loop is `Loop`'s (loop.py, generated from loop_aio.py); what both shells share is
shell.py's. Here, only what threads do differently: handlers run on the process's pool of
daemon threads (shell.THREADS), the calling thread (the coordinator) does all the database
work on one session and sleeps on a condition the handlers notify, and SIGTERM and SIGINT
stop the loop (on the main thread only; restored on return).

In the steady state of run() on PostgreSQL, the handler thread that finds no lease left to
start does the step's database work itself (the acks and the next claim, one statement), then
goes on with the leases it claimed: no thread hands a batch to another. The coordinator then
wakes for heartbeats, stops and errors only. One lock (`_db_lock`) keeps the session's work to
one thread at a time; the decisions stay the book's, taken under `_lock` as before.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from ..engine import Engine, Session
from .loop import Loop
from .messages import error_text
from .options import refuse_unrun
from .shell import SLICE, THREADS

if TYPE_CHECKING:
    from .core import QueueCore
    from .messages import Lease

__all__ = ["Runner"]


class Runner(Loop):
    """One worker loop (or one batch of it) of a queue and a handler, on threads."""

    def __init__(self, queue: QueueCore[Engine], handler: Callable[[Lease], object], *,
                 batch: int, concurrency: int = 1, grace_seconds: float = 10.0,
                 heartbeat_seconds: float | None = None, poll_interval: float = 1.0,
                 install_signal_handlers: bool = False) -> None:
        super().__init__(queue, batch=batch, concurrency=concurrency,
                         grace_seconds=grace_seconds, heartbeat_seconds=heartbeat_seconds,
                         poll_interval=poll_interval)
        self.queue: QueueCore[Engine] = queue
        self.handler = handler
        self._install_signal_handlers = install_signal_handlers
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._session: Session | None = None
        #: held around every use of the session: the coordinator's steps and a handler
        #: thread's (reentrant: a failed statement closes the session inside the step)
        self._db_lock = threading.RLock()
        #: a handler thread is doing a step's database work now (the coordinator waits)
        self._stepping_here = False
        #: an error a handler thread's step could not wait out, raised by the coordinator
        self._failure: BaseException | None = None

    def _wake(self) -> None:
        self._changed.notify_all()

    def _start_drains(self, count: int) -> None:
        for _ in range(count):
            THREADS.submit(self._drain)

    def _running(self) -> AbstractContextManager[None]:
        return self._signal_handlers(self._install_signal_handlers)

    def _wait(self) -> None:
        """Sleep until a handler reports, a heartbeat or an ack is due, or a slice passes."""
        with self._lock:
            now = time.monotonic()
            settle = self.book.to_settle(now) != ([], []) or not self.book.busy()
            if (settle and not self._stepping_here) or self._failure is not None:
                return
            timeout = min(self.book.wake_at(now) - now, SLICE)
            if timeout > 0:
                self._changed.wait(timeout)

    def _idle_wait(self) -> None:
        self._sleep(self.poll_interval)

    # -- the session, one thread at a time --------------------------------------------------

    def _do_due(self) -> bool:
        with self._db_lock:
            failure, self._failure = self._failure, None
            if failure is not None:
                raise failure
            with self._lock:
                # a handler thread's step failed: its backoff comes first; or one is about
                # to do this step's work, which it has decided on
                elsewhere = bool(self._pause) or self._stepping_here
            return True if elsewhere else super()._do_due()

    def _take_pause(self) -> float:
        with self._db_lock:
            return super()._take_pause()

    def _close_session(self) -> None:
        with self._db_lock:
            super()._close_session()

    def _done_stopping(self) -> bool:
        with self._db_lock:  # a handler thread's claim in flight lands in the book first
            # and its error, if it had one, is raised by the next step, not left behind
            return self.book.idle() and self._failure is None

    # -- handlers, on the pool's threads ----------------------------------------------------

    def _drain(self) -> None:
        """Start waiting leases one after another until none may start."""
        lease = self._next_lease()
        while lease is not None:
            error: str | None = None
            try:
                refuse_unrun(self.handler(lease), blocking=True)
            except BaseException as exc:  # any failure is the message's own, recorded by its nack
                error = error_text(exc)
            lease = self._handled_next(lease, error)

    def _handled_next(self, lease: Lease, error: str | None) -> Lease | None:
        """Record a handler's result and take the next lease; when none is left to start and
        the next claim is this step's to make, make it here (with the acks) and go on with
        what it claimed. None when the drain ends (the coordinator is woken)."""
        with self._lock:
            self.book.finished(lease.id, error)
            if self.book.stopping:
                self._wake()
            following = self._next_to_start(time.monotonic())
            if following is not None:
                return following
            if not self._steps_here():
                self._drain_ended()
                return None
            self._stepping_here = True
        try:
            with self._db_lock:
                super()._do_due()  # the loop's own step: not the coordinator's override
        except BaseException as exc:  # the coordinator raises it, as its own step would
            self._failure = exc
        finally:
            with self._lock:
                self._stepping_here = False
                following = self._next_to_start(time.monotonic())
                if following is None:
                    self._drain_ended()
        return following

    def _steps_here(self) -> bool:
        """Whether a handler thread that found no lease to start does the step's database
        work itself (holding `_lock`): in run()'s steady state, where the worker holds one
        connection for all its work (PostgreSQL, where the acks and the next claim are one
        statement), while no stop, backoff or other such step is under way."""
        return (self._keep_claiming and self.queue._dialect.worker_holds_connection
                and not (self.book.stopping or self._stop_asked() or self._stepping_here
                         or self._pause or self._failure is not None))

    def _drain_ended(self) -> None:
        """A drain ends (holding `_lock`): the coordinator may settle or claim more, unless a
        handler thread's step (which does just that) is under way."""
        self._drains -= 1
        if not self._stepping_here:
            self._wake()

    # -- stopping ---------------------------------------------------------------------------

    @contextmanager
    def _signal_handlers(self, install: bool) -> Iterator[None]:
        """SIGTERM and SIGINT stop the loop, on the main thread only; restored afterwards."""
        if not install or threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, frame: FrameType | None) -> None:
            self._signals += 1  # a plain counter: the loop notices it within SLICE

        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
        for sig in previous:
            signal.signal(sig, on_signal)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
