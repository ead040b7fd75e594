"""The worker loop, written once: claim, heartbeat, settle and hand back, step after step,
waiting out database errors with the reconnect delay, until a stop; or one batch of it.

`AsyncLoop` awaits its database work on an AsyncSession; `Loop` (loop.py, generated from
this module by tools/async_to_sync.py) does it on a Session. Each is completed by its shell,
which says how it waits and how handlers run: the asyncio shell (arunner.py: tasks, LISTEN,
a cancel as a stop) and the threaded one (runner.py: threads, signals).
"""

from __future__ import annotations

import asyncio  # sync:
import time
from collections.abc import Awaitable, Callable  # sync: from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..engine import AsyncEngine, AsyncSession  # sync: from ..engine import Engine, Session
from ..errors import ConfigurationError, QueryExecutionError
from .execute_aio import execute_op  # sync: from .execute import execute_op
from .shell import SLICE, LoopShell, logger, waited_out
from .worker import Summary

if TYPE_CHECKING:
    from ..row import Row
    from ..statements import Update
    from .core import QueueCore
    from .messages import Lease
    from .model import QueueMessage
    from .steps import Together

__all__ = ["AsyncLoop"]

R = TypeVar("R")


class AsyncLoop(LoopShell):
    """The worker loop of a queue: its steps and its database work (a shell supplies the
    waiting: `_wait`, `_idle_wait`, `_wind_down`, and how handlers start)."""

    queue: QueueCore[AsyncEngine]
    _session: AsyncSession | None
    #: how the log names the loop
    _kind = "async worker"  # sync: _kind = "worker"
    _cancelled = False  # async only

    # -- the two loops ----------------------------------------------------------------------

    async def one_batch(self) -> Summary:
        """Claim one batch, handle it, settle it; database errors of the claim propagate."""
        self._keep_claiming = False
        try:
            with self._registered():  # stop() reaches this batch
                if await self._claim(self.batch, raise_errors=True):
                    while not self.book.idle():
                        with self._cancel_as_stop():
                            self._notice_stop()  # async only
                            await self._step()
                        if self._expired_all():
                            break
        finally:
            await self._wind_down()
        if self._cancelled:  # async only
            raise asyncio.CancelledError  # async only
        return self.book.summary

    async def run(self) -> Summary:
        """Claim and handle until stopped; the Summary."""
        self._started(self._kind)
        try:
            with self._registered(), self._running():
                await self._prepare()
                while True:
                    with self._cancel_as_stop():
                        self._notice_stop()
                        if self.book.stopping and self._done_stopping():
                            break
                        errors = self.book.summary.database_errors
                        stepped = await self._step()
                        if self.book.stopping and self.book.summary.database_errors > errors:
                            self._give_up_if_past_grace()
                        if not stepped and not self.book.stopping and self.book.idle():
                            await self._close_session()  # no connection while the queue is empty
                            await self._idle_wait()
        finally:
            await self._wind_down()
        logger.info("worker %r stopped: %s", self.queue.consumer, self.book.summary)
        if self._cancelled:  # async only
            raise asyncio.CancelledError  # async only
        return self.book.summary

    async def _step(self) -> bool:
        """Do what the book says is due; then wait until something is (or the backoff after
        a database error). False when a claim found nothing due (the caller decides whether
        to poll again)."""
        try:
            return await self._step_once()
        finally:
            pause = self._take_pause()
            if pause:
                await self._sleep(pause)

    async def _step_once(self) -> bool:
        if not await self._do_due():
            return not self.book.idle()
        await self._wait()
        return True

    async def _do_due(self) -> bool:
        """The database work the book says is due now (releases, acks, nacks, heartbeats, the
        next claim); False when a claim was due and found nothing (or failed)."""
        queue = self.queue
        size, releases, acks, nacks, beats = self._due(time.monotonic())
        if releases:
            self._released(releases, *await self._db("release", lambda s: execute_op(
                queue.engine, lambda: queue._release_all_op(releases), s)))
        # the acks ride with the next claim, in one round trip where the claim is one statement
        picking = queue._picking(acks, size) if acks and size else None
        if acks and picking is None:
            self._acked(acks, *await self._db("ack", lambda s: execute_op(
                queue.engine, lambda: queue._ack_all_op(acks), s)))
        if nacks:
            nacks = await self._told_apart(nacks)
        for lease, error in nacks:  # one by one: one message's failure never touches another
            self._nacked(lease, error, *await self._db("nack", partial(self._nack, lease, error)))
        if beats:
            sent_at = time.monotonic()
            seconds = queue.lease_seconds
            self._heartbeat_done(*await self._db("heartbeat", lambda s: execute_op(
                queue.engine, lambda: queue._extend_all_op(beats, seconds), s)), sent_at)
        if picking is not None:
            return await self._ack_and_claim(acks, picking)
        return not size or await self._claim(size)

    # -- what the shell supplies ------------------------------------------------------------

    def _take_pause(self) -> float:
        """The backoff owed after this step's database errors, cleared."""
        pause, self._pause = self._pause, 0.0
        return pause

    def _done_stopping(self) -> bool:
        """Stopping, and nothing is left to settle or hand back (the threaded shell also waits
        for a handler thread's step in progress)."""
        return self.book.idle()

    def _running(self) -> AbstractContextManager[None]:
        """Around the whole loop of run() (the threaded shell's signal handlers)."""
        return nullcontext()

    async def _prepare(self) -> None:
        """Before the first step of run()."""

    async def _wait(self) -> None:
        """Wait until a handler reports, a heartbeat or an ack is due, or a slice passes."""
        raise NotImplementedError

    async def _idle_wait(self) -> None:
        """The queue is empty: wait for `poll_interval` (or a sign of new messages), and a
        stop at any time."""
        raise NotImplementedError

    async def _wind_down(self) -> None:
        """The loop has ended: give back the session (and whatever else the shell holds)."""
        await self._close_session()

    # async only: begin
    async def _shielded(self, work: Awaitable[R]) -> R:
        """Await database work to its end (the asyncio shell notices a cancel meanwhile)."""
        return await work

    # async only: end
    # -- database work, each step waiting out database errors -------------------------------

    async def _db(self, what: str, work: Callable[[AsyncSession | None], Awaitable[R]],
                  ) -> tuple[bool, R | None]:
        """Run one piece of database work; on a database error log it, drop the session, and
        say it failed (the step ends with the backoff)."""
        try:
            result = await self._shielded(work(self._open_session()))  # sync: result = work(self._open_session())
        except (QueryExecutionError, ConfigurationError) as exc:
            if not waited_out(exc):
                raise
            self._database_error(what, exc)
            await self._close_session()
            return False, None
        self._reconnect.reset()
        return True, result

    def _open_session(self) -> AsyncSession | None:
        # Where the dialect says so (PostgreSQL), the claim, heartbeats and acks share one
        # pooled connection (each took its own before, and the pool's check: 4,694 -> 5,926
        # jobs a second in bench/bench_queues.py). Elsewhere the claim runs in a transaction
        # of its own.
        if self._session is None and self.queue._dialect.worker_holds_connection:
            self._session = self.queue.engine.session()
        return self._session

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await self._shielded(session.close())  # sync: session.close()

    async def _claim(self, size: int, raise_errors: bool = False) -> bool:
        queue = self.queue
        now = time.monotonic()
        sweep = queue._sweep_due(now)

        async def claim(session: AsyncSession | None) -> list[Lease]:
            return await execute_op(queue.engine, lambda: queue._claim_op(size, None, sweep),
                                    session)

        if raise_errors:
            try:
                leases = await self._shielded(claim(self._open_session()))  # sync: leases = claim(self._open_session())
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

    async def _ack_and_claim(self, acks: list[Lease],
                             picking: Together | Update[QueueMessage, Row]) -> bool:
        """Ack finished leases and claim the next batch in one round trip; False when the
        claim found nothing or failed (the acks then failed too, and go again)."""
        queue = self.queue
        now = time.monotonic()
        ok, got = await self._db("ack and claim", lambda s: execute_op(
            queue.engine, lambda: queue._ack_and_claim_op(acks, picking), s))
        if not ok or got is None:
            self._acked(acks, False, None)
            return False
        acked, leases = got
        self._acked(acks, True, acked)
        if not leases:
            return False
        self._claimed(leases, now)
        return True

    async def _told_apart(self, nacks: list[tuple[Lease, str]]) -> list[tuple[Lease, str]]:
        """The nacks to send. Of the leases a handler acked or nacked by hand in its own
        transaction, one read per batch finds those whose rows still carry them (that
        transaction rolled back): only they are nacked; the others are counted as the
        handler settled them."""
        unsure = [lease for lease, _ in nacks if lease._watch.settled_in_tx]
        if not unsure:
            return nacks
        queue = self.queue
        ok, held = await self._db("check", lambda s: execute_op(
            queue.engine, lambda: queue._held_op(unsure), s))
        if not ok or held is None:
            return nacks  # their fenced nacks tell, one by one
        out = []
        for lease, error in nacks:
            if lease._watch.settled_in_tx and lease.id not in held:
                self._settled_by_hand(lease, error)
            else:
                out.append((lease, error))
        return out

    async def _nack(self, lease: Lease, error: str, session: AsyncSession | None) -> str | None:
        outcome: str | None = await self.queue.nack(lease, error, session=session)
        return outcome

    async def _sleep(self, seconds: float) -> None:
        """Sleep in slices, returning early once a stop is asked for (and while stopping, at
        the end of the grace period)."""
        end = time.monotonic() + seconds
        while (left := self._sleep_left(end)) > 0:
            await asyncio.sleep(min(left, SLICE))

