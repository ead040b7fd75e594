"""The asyncio shell of the worker loop: handler tasks, LISTEN, cancellation.

The loop is `AsyncLoop`'s (loop_aio.py), what both shells share is shell.py's; here, only
what asyncio does differently. Handlers run as tasks of the running event loop (a
plain function on one of the daemon threads Queue.run uses, which never hold the interpreter's
exit); the task that awaits `run()` does all the database work. An async handler whose lease
is lost (taken by another worker, or run out while heartbeats failed) is cancelled.
Database work is shielded from cancellation, so that a cancel never cuts a claim or an ack in
half: it is a stop request, noticed when that work is done. On PostgreSQL an idle loop waits
on LISTEN (AsyncEngine.listen) for the NOTIFY of the queue table's trigger.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Final, TypeVar
from uuid import UUID

from ..engine.aio import AsyncEngine, AsyncSession
from ..engine.drivers.base import Listener
from ..errors import QueryExecutionError
from ..model import meta_of
from .loop_aio import AsyncLoop
from .messages import Lease, error_text
from .notify import notify_channel, notify_trigger
from .options import is_async_handler, refuse_unrun
from .shell import SLICE, THREADS, error_line, logger

if TYPE_CHECKING:
    from .core import QueueCore

__all__ = ["AsyncHandler", "AsyncRunner"]

#: a handler of AsyncQueue.run(): an async function of a Lease (a plain one runs on a thread)
AsyncHandler = Callable[[Lease], Awaitable[object]] | Callable[[Lease], object]

R = TypeVar("R")

#: the runs of each event loop that SIGTERM and SIGINT stop (several run() tasks share the
#: loop's one handler per signal), and the handlers before the first of them
_SIGNALLED: dict[asyncio.AbstractEventLoop,
                 tuple[set[AsyncRunner], dict[signal.Signals, Any]]] = {}
_STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def _on_signals(loop: asyncio.AbstractEventLoop, runner: AsyncRunner) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGINT stop `runner` (and the other runs of `loop`
    in such a block), each where no handler of its own was installed; the handlers before
    the first are restored after the last."""
    if loop not in _SIGNALLED:
        # only a signal left to its default: one a framework (or asyncio.run's SIGINT)
        # handles already stays its, which cancels the run's task, also a clean stop
        before: dict[signal.Signals, Any] = {
            sig: handler for sig in _STOP_SIGNALS
            if (handler := signal.getsignal(sig)) in (signal.SIG_DFL, signal.default_int_handler)}
        if not before:
            yield
            return
        runners: set[AsyncRunner] = set()

        def on_signal() -> None:
            for one in tuple(runners):
                one._signalled()

        try:
            for sig in before:
                loop.add_signal_handler(sig, on_signal)
        except NotImplementedError:  # an event loop without signal handlers
            yield
            return
        _SIGNALLED[loop] = (runners, before)
    runners, previous = _SIGNALLED[loop]
    runners.add(runner)
    try:
        yield
    finally:
        runners.discard(runner)
        if not runners:
            del _SIGNALLED[loop]
            for sig, handler in previous.items():
                loop.remove_signal_handler(sig)
                if handler is not None:
                    signal.signal(sig, handler)


class AsyncRunner(AsyncLoop):
    """One asyncio worker loop (or one batch of it) of an AsyncQueue and a handler."""

    def __init__(self, queue: QueueCore[AsyncEngine], handler: AsyncHandler, *, batch: int,
                 concurrency: int = 1, grace_seconds: float = 10.0,
                 heartbeat_seconds: float | None = None, poll_interval: float = 1.0,
                 listen: bool = False, install_signal_handlers: bool = False) -> None:
        super().__init__(queue, batch=batch, concurrency=concurrency,
                         grace_seconds=grace_seconds, heartbeat_seconds=heartbeat_seconds,
                         poll_interval=poll_interval)
        self.queue: QueueCore[AsyncEngine] = queue
        self.handler = handler
        self._handler_is_async = is_async_handler(handler)
        self._lock = contextlib.nullcontext()  # one thread: the book needs no lock
        self._changed = asyncio.Event()
        self._session: AsyncSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # the drains
        #: the running handlers, by lease id (a plain handler's: the wait for its thread)
        self._handlers: dict[UUID, asyncio.Future[Any]] = {}
        self._listen = listen
        self._listener: Listener | None = None
        self._cancelled = False
        self._install_signal_handlers = install_signal_handlers

    def _wake(self) -> None:
        self._changed.set()

    def _start_drains(self, count: int) -> None:
        for _ in range(count):
            task = asyncio.create_task(self._drain())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _tell_lost(self, leases: list[Lease]) -> None:
        if not self._handler_is_async:
            return  # a thread cannot be cancelled: Lease.lost tells it
        for lease in leases:
            handler = self._handlers.get(lease.id)
            if handler is not None:
                handler.cancel()

    def _running(self) -> contextlib.AbstractContextManager[None]:
        return self._signal_handlers(self._install_signal_handlers)

    @contextlib.contextmanager
    def _signal_handlers(self, install: bool) -> Iterator[None]:
        """SIGTERM and SIGINT stop the loop as they stop Queue.run's (a second one ends the
        grace period), where the event loop runs on the main thread and the signal has no
        handler yet; the handlers before are restored afterwards."""
        if not install or threading.current_thread() is not threading.main_thread():
            yield
            return
        with _on_signals(asyncio.get_running_loop(), self):
            yield

    def _signalled(self) -> None:
        """SIGTERM or SIGINT arrived: noticed by the loop's next look, as in Queue.run."""
        self._signals += 1
        self._wake()

    @contextlib.contextmanager
    def _cancel_as_stop(self) -> Iterator[None]:
        """A cancel of the task awaiting the loop, met in this block, is a stop."""
        try:
            yield
        except asyncio.CancelledError:
            self._cancel_noticed()

    async def _prepare(self) -> None:
        if self._listen:
            await self._check_trigger()

    def _cancel_noticed(self) -> None:
        """A cancel of the task awaiting the loop: a stop, as a signal is to the sync loop."""
        self._cancelled = True
        self._signals += 1
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # handled here: the loop goes on to stop cleanly

    async def _wind_down(self) -> None:
        await self._close_session()
        await self._close_listener()
        tasks: list[asyncio.Future[Any]] = [
            *(task for task in self._tasks if not task.done()),
            *(handler for handler in self._handlers.values() if not handler.done())]
        for task in tasks:  # past the grace period: their leases were handed back
            task.cancel()
        if tasks:  # a cancelled handler's own clean-up runs to its end
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _wait(self) -> None:
        """Wait until a handler reports, a heartbeat or an ack is due, or a slice passes."""
        self._changed.clear()
        now = time.monotonic()
        if self.book.to_settle(now) != ([], []) or not self.book.busy():
            return
        timeout = min(self.book.wake_at(now) - now, SLICE)
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._changed.wait()

    async def _idle_wait(self) -> None:
        """The queue is empty: wait for a NOTIFY (PostgreSQL) or `poll_interval`, whichever
        comes first, and a stop at any time."""
        if self._listen and self._listener is None and await self._open_listener():
            return  # listening now: claim once more, for what came before the LISTEN
        end = time.monotonic() + self.poll_interval
        while not self._stop_asked():
            left = end - time.monotonic()
            if left <= 0:
                return
            if self._listener is None:
                await asyncio.sleep(min(left, SLICE))
                continue
            try:
                if await self._listener.wait(min(left, SLICE)):
                    return
            except QueryExecutionError as exc:
                logger.warning("worker %r: LISTEN connection lost (%s); polling until it is "
                               "back", self.queue.consumer, error_line(exc))
                await self._close_listener()
                return

    # -- LISTEN -----------------------------------------------------------------------------

    def _channel(self) -> str:
        return notify_channel(meta_of(self.queue.model).table)

    async def _check_trigger(self) -> None:
        """Without create_table()'s trigger no NOTIFY comes: say so, and poll."""
        table = meta_of(self.queue.model).table
        try:
            found = await self.queue.engine.execute_sql(
                "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = %s",
                ('"' + table.replace('"', '""') + '"', notify_trigger(table, "insert")),
            )
        except QueryExecutionError:
            return  # the database is not there yet: the loop waits it out
        if found.first() is None:
            logger.warning("worker %r: table %s has no NOTIFY trigger, so the worker polls "
                           "every %gs; run `await queue.create_table()` once to install it",
                           self.queue.consumer, table, self.poll_interval)
            self._listen = False

    async def _open_listener(self) -> bool:
        try:
            self._listener = await self._shielded(self.queue.engine.listen(self._channel()))
        except QueryExecutionError as exc:
            logger.warning("worker %r: cannot LISTEN (%s); polling every %gs",
                           self.queue.consumer, error_line(exc), self.poll_interval)
            return False
        return True

    async def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.close()

    # -- database work, shielded from cancellation, waiting out database errors -------------

    async def _shielded(self, work: Awaitable[R]) -> R:
        """Await database work to its end: a cancel meanwhile is noticed as a stop."""
        task = asyncio.ensure_future(work)
        while True:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.cancelled():
                    raise  # the work itself was cancelled (the loop is closing)
                self._cancel_noticed()

    # -- handlers, as tasks -----------------------------------------------------------------

    async def _drain(self) -> None:
        """Start waiting leases one after another until none may start."""
        while (lease := self._next_lease()) is not None:
            handler = asyncio.ensure_future(self._handle(lease))
            self._handlers[lease.id] = handler
            try:
                await self._await_handler(lease, handler)
            finally:
                self._handlers.pop(lease.id, None)
            if handler.cancelled():  # this worker cancelled it (lease lost, ran out, or the
                self._handler_cancelled(lease)  # grace period ended): not a failure
                continue
            # any failure is the message's own, recorded by its nack: a CancelledError the
            # handler raised itself too (_handle returns it)
            exc = handler.exception() or handler.result()
            self._handled(lease, None if exc is None else error_text(exc))

    async def _await_handler(self, lease: Lease, handler: asyncio.Future[Any]) -> None:
        """Wait for the handler to end; cancel an async one once its lease's deadline passes
        with no heartbeat having pushed it on (another worker may take the message then)."""
        told = False
        try:
            while not handler.done():
                left = lease._watch.deadline - time.monotonic()
                if left <= 0 and self._handler_is_async and not told:
                    told = True
                    logger.warning("worker %r: the lease of message %s ran out while its "
                                   "handler ran (no heartbeat reached the database): "
                                   "cancelling the handler", self.queue.consumer, lease.id)
                    handler.cancel()
                await asyncio.wait({handler}, timeout=left if left > 0 else None)
        except asyncio.CancelledError:  # the drain itself: the loop is winding down
            handler.cancel()
            raise

    async def _handle(self, lease: Lease) -> BaseException | None:
        """Run the handler on `lease`; a CancelledError it raised itself, not one of this
        worker's cancels, is returned, as a KeyboardInterrupt or SystemExit is: the handler
        failed (it was redelivered at once, again and again, with no attempt charged, when
        taken for a cancel)."""
        try:
            if self._handler_is_async:
                result = await self.handler(lease)  # type: ignore[misc]  # is_async_handler() checked it gives an awaitable
            else:
                result = await self._on_thread(lease)
            # an awaitable returned is the handler's work: a plain function calling an async
            # one, or `return send(lease)` in an async one, its await forgotten (acked with
            # the coroutine never awaited, its work not done)
            if inspect.isawaitable(result):
                await result
            refuse_unrun(result, blocking=False)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker cancelled it: its lease was lost, or the loop is closing
            return exc
        except (KeyboardInterrupt, SystemExit) as exc:
            # the handler's own failure, as on Queue.run's threads: raised out of its task,
            # asyncio ends the event loop with it, and the message went back uncharged, to
            # end the next worker's loop too, never dead-lettered
            return exc
        return None

    async def _on_thread(self, lease: Lease) -> Any:
        """The plain handler's result, called on a daemon thread (asyncio.to_thread's would
        hold the interpreter's exit until a handler past the grace period returns)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(error: BaseException | None, result: Any) -> None:
            if done.done():
                return  # given up past the grace period
            if error is None:
                done.set_result(result)
            else:
                done.set_exception(error)

        def call() -> None:
            try:
                outcome: tuple[BaseException | None, Any] = (None, self.handler(lease))
            except BaseException as exc:  # the handler's own failure, handed to the loop
                outcome = (exc, None)
            with contextlib.suppress(RuntimeError):  # the event loop has closed meanwhile
                loop.call_soon_threadsafe(settle, *outcome)

        THREADS.submit(call)
        return await done
