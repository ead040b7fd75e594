"""The asyncio shell of the worker loop: handler tasks, an AsyncSession, LISTEN, cancellation.

Every decision is `WorkerBook`'s, and everything both shells do alike is `LoopShell`'s
(runner.py); this module only awaits. Handlers run as tasks of the running event loop (a
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
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from ..engine.aio import AsyncSession
from ..engine.drivers.base import Listener
from ..errors import ConfigurationError, QueryExecutionError
from ..model import meta_of
from .core import Lease, notify_channel, notify_trigger
from .runner import _SLICE, THREADS, LoopShell, waited_out
from .worker import Summary, error_text

if TYPE_CHECKING:
    from .aio import AsyncHandler, AsyncQueue

__all__ = ["AsyncRunner"]

logger = logging.getLogger("tempest_typed.queue")

R = TypeVar("R")


def _is_async(handler: object) -> bool:
    """Whether calling `handler` gives an awaitable to await on the loop."""
    call = getattr(handler, "__call__", None)  # noqa: B004  # an object with an async __call__
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


class AsyncRunner(LoopShell):
    """One asyncio worker loop (or one batch of it) of an AsyncQueue and a handler."""

    def __init__(self, queue: AsyncQueue, handler: AsyncHandler, *, batch: int,
                 concurrency: int = 1, grace_seconds: float = 10.0,
                 heartbeat_seconds: float | None = None, poll_interval: float = 1.0,
                 listen: bool = False) -> None:
        super().__init__(queue, batch=batch, concurrency=concurrency,
                         grace_seconds=grace_seconds, heartbeat_seconds=heartbeat_seconds,
                         poll_interval=poll_interval)
        self.queue: AsyncQueue = queue
        self.handler = handler
        self._handler_is_async = _is_async(handler)
        self._lock = contextlib.nullcontext()  # one thread: the book needs no lock
        self._changed = asyncio.Event()
        self._session: AsyncSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # the drains
        #: the running handlers, by lease id (a plain handler's: the wait for its thread)
        self._handlers: dict[UUID, asyncio.Future[Any]] = {}
        self._listen = listen
        self._listener: Listener | None = None
        self._cancelled = False

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

    # -- the two loops ----------------------------------------------------------------------

    async def one_batch(self) -> Summary:
        """Claim one batch, handle it, settle it; database errors of the claim propagate."""
        self._keep_claiming = False
        try:
            if await self._claim(self.batch, raise_errors=True):
                while not self.book.idle():
                    try:
                        self._notice_stop()
                        await self._step()
                    except asyncio.CancelledError:
                        self._cancel_noticed()
                    if self._expired_all():
                        break
        finally:
            await self._wind_down()
        if self._cancelled:
            raise asyncio.CancelledError
        return self.book.summary

    async def run(self) -> Summary:
        """Claim and handle until stop() or cancellation; the Summary (CancelledError after
        a clean stop when the task was cancelled)."""
        self._started("async worker")
        try:
            if self._listen:
                await self._check_trigger()
            while True:
                try:
                    self._notice_stop()
                    if self.book.stopping and self.book.idle():
                        break
                    errors = self.book.summary.database_errors
                    stepped = await self._step()
                    if self.book.stopping and self.book.summary.database_errors > errors:
                        self._give_up_if_past_grace()
                    if not stepped and not self.book.stopping and self.book.idle():
                        await self._close_session()  # no connection while the queue is empty
                        await self._idle_wait()
                except asyncio.CancelledError:
                    self._cancel_noticed()
        finally:
            await self._wind_down()
            self.queue._stop_requested = False
        logger.info("worker %r stopped: %s", self.queue.consumer, self.book.summary)
        if self._cancelled:
            raise asyncio.CancelledError
        return self.book.summary

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

    async def _step(self) -> bool:
        """Do what the book says is due; then wait until something is (or the backoff after
        a database error). False when a claim found nothing due."""
        try:
            return await self._step_once()
        finally:
            pause, self._pause = self._pause, 0.0
            if pause:
                await self._sleep(pause)

    async def _step_once(self) -> bool:
        queue = self.queue
        size, releases, acks, nacks, beats = self._due(time.monotonic())
        if releases:
            self._released(releases, *await self._db("release", lambda s: queue._run(
                lambda: queue._release_all_op(releases), s)))
        if acks:
            self._acked(acks, *await self._db("ack", lambda s: queue._run(
                lambda: queue._ack_all_op(acks), s)))
        for lease, error in nacks:  # one by one: one message's failure never touches another
            self._nacked(lease, error, *await self._db("nack", partial(self._nack, lease, error)))
        if beats:
            sent_at = time.monotonic()
            seconds = queue.lease_seconds
            self._heartbeat_done(*await self._db("heartbeat", lambda s: queue._run(
                lambda: queue._extend_all_op(beats, seconds), s)), sent_at)
        if size and not await self._claim(size):
            return not self.book.idle()
        await self._wait()
        return True

    async def _wait(self) -> None:
        """Wait until a handler reports, a heartbeat or an ack is due, or a slice passes."""
        self._changed.clear()
        now = time.monotonic()
        if self.book.to_settle(now) != ([], []) or not self.book.busy():
            return
        timeout = min(self.book.wake_at(now) - now, _SLICE)
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
                await asyncio.sleep(min(left, _SLICE))
                continue
            try:
                if await self._listener.wait(min(left, _SLICE)):
                    return
            except QueryExecutionError as exc:
                logger.warning("worker %r: LISTEN connection lost (%s); polling until it is "
                               "back", self.queue.consumer, str(exc).splitlines()[0])
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
                           self.queue.consumer, str(exc).splitlines()[0], self.poll_interval)
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

    async def _db(self, what: str, work: Callable[[AsyncSession | None], Awaitable[R]],
                  ) -> tuple[bool, R | None]:
        """Run one piece of database work; on a database error log it, drop the session, and
        say it failed (the step ends with the backoff)."""
        try:
            result = await self._shielded(work(self._open_session()))
        except (QueryExecutionError, ConfigurationError) as exc:
            if not waited_out(exc):
                raise
            self._database_error(what, exc)
            await self._close_session()
            return False, None
        self._backoff.reset()
        return True, result

    def _open_session(self) -> AsyncSession | None:
        # As the sync loop: on PostgreSQL the loop's statements share one connection.
        if self._session is None and self.queue._dialect.worker_holds_connection:
            self._session = self.queue.engine.session()
        return self._session

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await self._shielded(session.close())

    async def _claim(self, size: int, raise_errors: bool = False) -> bool:
        queue = self.queue
        now = time.monotonic()
        sweep = queue._sweep_due(now)

        async def claim(session: AsyncSession | None) -> list[Lease]:
            return await queue._run(lambda: queue._claim_op(size, None, sweep), session)

        if raise_errors:
            try:
                leases = await self._shielded(claim(self._open_session()))
            except QueryExecutionError:
                await self._close_session()
                raise
        else:
            ok, got = await self._db("claim", claim)
            if not ok or not got:
                return False
            leases = got
        if not leases:
            return False
        self._claimed(leases, now)
        return True

    async def _nack(self, lease: Lease, error: str, session: AsyncSession | None) -> str | None:
        return await self.queue.nack(lease, error, session=session)

    async def _sleep(self, seconds: float) -> None:
        """Sleep in slices, returning early once a stop is asked for (and while stopping, at
        the end of the grace period)."""
        end = time.monotonic() + seconds
        while (left := self._sleep_left(end)) > 0:
            await asyncio.sleep(min(left, _SLICE))

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
            if handler.cancelled():  # its lease was lost or ran out: not a failure
                self._handler_cancelled(lease)
                continue
            exc = handler.exception()  # any failure is the message's own, recorded by its nack
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

    async def _handle(self, lease: Lease) -> None:
        if self._handler_is_async:
            await self.handler(lease)  # type: ignore[misc]  # _is_async() checked it gives an awaitable
            return
        result = await self._on_thread(lease)
        if inspect.isawaitable(result):
            await result

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
