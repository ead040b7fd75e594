"""The threaded shell of the worker loop: handlers on daemon threads, signals, a condition.

The loop is `Loop`'s (loop.py, generated from loop_aio.py); what both shells share is
shell.py's. Here, only what threads do differently: handlers run on the process's pool of
daemon threads (shell.THREADS), the calling thread (the coordinator) does all the database
work on one session and sleeps on a condition the handlers notify, and SIGTERM and SIGINT
stop the loop (on the main thread only; restored on return).
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
            if self.book.to_settle(now) != ([], []) or not self.book.busy():
                return
            timeout = min(self.book.wake_at(now) - now, SLICE)
            if timeout > 0:
                self._changed.wait(timeout)

    def _idle_wait(self) -> None:
        self._sleep(self.poll_interval)

    # -- handlers, on the pool's threads ----------------------------------------------------

    def _drain(self) -> None:
        """Start waiting leases one after another until none may start."""
        while (lease := self._next_lease()) is not None:
            error: str | None = None
            try:
                self.handler(lease)
            except BaseException as exc:  # any failure is the message's own, recorded by its nack
                error = error_text(exc)
            self._handled(lease, error)

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
