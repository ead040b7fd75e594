"""The asyncio shell of the worker loop: handler tasks, an AsyncSession, LISTEN, cancellation.

Every decision is `WorkerBook`'s, and everything both shells do alike is `LoopShell`'s
(runner.py); this module only awaits. Handlers run as tasks of the running event loop (a
plain function on a worker thread); the task that awaits `run()` does all the database work.
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

from ..engine.aio import AsyncSession
from ..engine.drivers.base import Listener
from ..errors import QueryExecutionError
from ..model import meta_of
from .core import Lease, notify_channel, notify_trigger
from .runner import _SLICE, LoopShell
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
        self._tasks: set[asyncio.Task[None]] = set()
        self._listen = listen
        self._listener: Listener | None = None
        self._cancelled = False

    def _wake(self) -> None:
        self._changed.set()

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
                    if (not await self._step() and not self.book.stopping
                            and self.book.idle()):
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
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:  # past the grace period: their leases were handed back
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _step(self) -> bool:
        """Do what the book says is due; then wait until something is. False when a claim
        found nothing due."""
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
        """Run one piece of database work; on a database error log it, drop the session,
        back off, and say it failed."""
        try:
            result = await self._shielded(work(self._open_session()))
        except QueryExecutionError as exc:
            delay = self._database_error(what, exc)
            await self._close_session()
            await self._sleep(delay)
            return False, None
        self._backoff.reset()
        return True, result

    def _open_session(self) -> AsyncSession | None:
        # As the sync loop: on PostgreSQL the loop's statements share one connection.
        if self._session is None and self.queue._dialect == "postgresql":
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
        for _ in range(self._claimed(leases, now)):
            task = asyncio.create_task(self._drain())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return True

    async def _nack(self, lease: Lease, error: str, session: AsyncSession | None) -> str | None:
        return await self.queue.nack(lease, error, session=session)

    async def _sleep(self, seconds: float) -> None:
        """Sleep in slices, returning early once a stop is asked for."""
        end = time.monotonic() + seconds
        while not self._stop_asked():
            left = end - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, _SLICE))

    # -- handlers, as tasks -----------------------------------------------------------------

    async def _drain(self) -> None:
        """Start waiting leases one after another until none may start."""
        while (lease := self._next_lease()) is not None:
            error: str | None = None
            try:
                await self._handle(lease)
            except asyncio.CancelledError:
                raise  # past the grace period: the lease was handed back
            except BaseException as exc:  # any failure is the message's own, recorded by its nack
                error = error_text(exc)
            self._handled(lease, error)

    async def _handle(self, lease: Lease) -> None:
        if self._handler_is_async:
            await self.handler(lease)  # type: ignore[misc]  # _is_async() checked it gives an awaitable
            return
        result: Any = await asyncio.to_thread(self.handler, lease)
        if inspect.isawaitable(result):
            await result
