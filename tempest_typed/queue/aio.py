"""The durable queue on the asyncio engine: `AsyncQueue`, Queue's constructor and methods,
awaited, with the same lease and fencing guarantees.

Every statement and operation is core.py's, shared with `Queue`; this shell awaits their
steps on an `AsyncSession` or on the async engine. On PostgreSQL an idle `run()` waits on
LISTEN for the NOTIFY that `create_table()`'s trigger sends when messages become due.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from ..engine.aio import AsyncEngine, AsyncSession
from ..errors import QueryExecutionError, ValidationError
from .core import (
    CREATE_ATTEMPTS,
    DDL_LOCK_KEY,
    DDL_LOCK_SQL,
    MAX_CLAIM,
    NOTIFY_FUNCTIONS,
    Lease,
    Message,
    Op,
    QueueCore,
    count_option,
    created_meanwhile,
    flag_option,
    handler_option,
    message_list_option,
    run_steps,
)
from .model import Status
from .queue import _exc_info

if TYPE_CHECKING:
    from .worker import Summary

__all__ = ["AsyncQueue"]

R = TypeVar("R")

#: a handler of AsyncQueue.run(): an async function of a Lease (a plain one runs on a thread)
AsyncHandler = Callable[[Lease], Awaitable[object]] | Callable[[Lease], object]


class AsyncQueue(QueueCore[AsyncEngine]):
    """A durable queue on an AsyncEngine: Queue's constructor and methods, awaited."""

    def _check_engine(self, engine: object) -> None:
        if not isinstance(engine, AsyncEngine):
            raise ValidationError(
                f"AsyncQueue runs on an AsyncEngine from create_async_engine(), got "
                f"{engine!r}; for an Engine use Queue")

    async def _know_dialect(self) -> None:
        """Learn MySQL from MariaDB by connecting, before building the first statement."""
        if self._known_dialect is None:
            await self.engine.execute_sql("SELECT 1")
            self._known_dialect = self.engine.dialect

    # -- running an operation's steps (the rules of Queue._run, awaited) ---------------------

    async def _run(self, make: Callable[[], Op[R]], session: AsyncSession | None = None) -> R:
        """Run an operation on `session` (or on the engine): core.run_steps' actions, awaited."""
        if session is not None and not isinstance(session, AsyncSession):
            raise ValidationError(
                f"session= takes an AsyncSession of the engine (engine.session() or "
                f"engine.transaction()), got {session!r}")
        await self._know_dialect()
        actions = run_steps(make, session is not None and session.in_transaction)
        opened: list[tuple[Any, AsyncSession | None]] = []
        current = session
        reply: Any = None
        failure: BaseException | None = None
        while True:
            try:
                kind, arg = actions.send(reply) if failure is None else actions.throw(failure)
            except StopIteration as done:
                returned: R = done.value
                return returned
            reply, failure = None, None
            try:
                if kind == "execute":
                    reply = await (current.execute(arg) if current is not None
                                   else self.engine.execute(arg))
                elif kind == "begin":
                    tx = current.transaction() if current is not None else self.engine.transaction()
                    entered = await tx.__aenter__()
                    opened.append((tx, current))
                    current = entered
                elif kind == "sleep":
                    await asyncio.sleep(arg)
                else:  # commit, or roll back with the exception
                    tx, current = opened.pop()
                    await tx.__aexit__(*_exc_info(arg))
            except BaseException as exc:
                failure = exc

    # -- the public operations --------------------------------------------------------------

    async def create_table(self) -> None:
        """Create the message table and its indexes if they do not exist (on PostgreSQL also
        the trigger whose NOTIFY wakes workers waiting on LISTEN). Safe to run from several
        processes at once."""
        await self._know_dialect()
        for attempt in range(CREATE_ATTEMPTS):
            try:
                await self.engine.create_all(self.model)
                break
            except QueryExecutionError as exc:
                if not created_meanwhile(exc) or attempt == CREATE_ATTEMPTS - 1:
                    raise
        if self._dialect.supports_listen_notify:
            async with self.engine.transaction() as tx:
                await tx.execute_sql(DDL_LOCK_SQL, (DDL_LOCK_KEY,))
                for ddl in self._notify_trigger_sql():
                    await tx.execute_sql(ddl)

    async def drop_table(self) -> None:
        """Drop the message table (on PostgreSQL also the NOTIFY trigger functions, once no
        other queue table uses them)."""
        await self._know_dialect()
        await self.engine.drop_all(self.model)
        if self._dialect.supports_listen_notify:
            for function in NOTIFY_FUNCTIONS:
                # each in a transaction of its own, as Queue.drop_table()
                with contextlib.suppress(QueryExecutionError):
                    async with self.engine.transaction() as tx:
                        await tx.execute_sql(DDL_LOCK_SQL, (DDL_LOCK_KEY,))
                        await tx.execute_sql(f"DROP FUNCTION IF EXISTS {function}()")

    async def enqueue(self, payload: Mapping[str, Any], *, key: str | None = None,
                      delay: float = 0.0, max_attempts: int | None = None,
                      session: AsyncSession | None = None) -> UUID | None:
        """Add one message; None when its idempotency key was already enqueued."""
        message = self._one_message(payload, key, delay, max_attempts)
        ids = await self._run(lambda: self._enqueue_op([message]), session)
        return ids[0] if ids else None

    async def enqueue_many(self, messages: Iterable[Message], *,
                           session: AsyncSession | None = None) -> list[UUID]:
        """Add messages; the ids of those inserted, skipping repeated keys (in the caller's
        transaction when `session` is inside one: the outbox pattern)."""
        batch = message_list_option(messages)
        return await self._run(lambda: self._enqueue_op(batch), session)

    async def claim(self, limit: int = 10, *, lease_seconds: float | None = None,
                    session: AsyncSession | None = None) -> list[Lease]:
        """Lease up to `limit` due messages, oldest due first; each claim counts an attempt
        (on `session`: one connection for a loop of claims and acks)."""
        self._claim_args(limit, lease_seconds)
        return await self._run(lambda: self._claim_op(limit, lease_seconds), session)

    async def dead_letter_expired(self, *, session: AsyncSession | None = None) -> int:
        """Fail the messages whose lease expired on their final attempt; how many."""
        return await self._run(self._dead_letter_op, session)

    async def ack(self, lease: Lease, *, session: AsyncSession | None = None) -> bool:
        """Mark the message sent; False when the lease was lost (another worker has it)."""
        return await self._run(lambda: self._ack_op(lease), session)

    async def nack(self, lease: Lease, error: str = "", *, retry: bool = True,
                   session: AsyncSession | None = None) -> Status | None:
        """Record a failed attempt: "queued" again after a backoff, or "failed" after the last
        attempt (or with retry=False); None when the lease was lost."""
        return await self._run(lambda: self._nack_op(lease, error, retry), session)

    async def extend(self, lease: Lease, seconds: float | None = None, *,
                     session: AsyncSession | None = None) -> bool:
        """Push the lease's expiry to now + seconds; False when the lease was lost."""
        length = self._extend_seconds(seconds)
        return await self._run(lambda: self._extend_op(lease, length), session)

    async def process(self, handler: AsyncHandler, limit: int = 10) -> Summary:
        """Claim one batch and await `handler` on each message, keeping the leases alive;
        ack what returned, nack what raised; the Summary (false when nothing was due)."""
        from .arunner import AsyncRunner

        handler_option("process(handler)", handler)
        count_option("process(limit)", limit, maximum=MAX_CLAIM)
        await self._know_dialect()
        return await AsyncRunner(self, handler, batch=limit).one_batch()

    async def run(self, handler: AsyncHandler, *, batch: int = 10, poll_interval: float = 1.0,
                  concurrency: int = 1, grace_seconds: float = 10.0,
                  heartbeat_seconds: float | None = None, listen: bool = True) -> Summary:
        """Claim and handle messages until `stop()` or the task is cancelled; the Summary.

        Up to `concurrency` handlers run at once as tasks of this event loop (a plain
        function runs on a daemon thread); leases are extended while they run, an async
        handler whose lease is lost is cancelled, database and pool errors are waited out
        with backoff, and a stop hands back unstarted messages at once and gives running
        handlers `grace_seconds` (as Queue.run). Cancelling the task stops the same
        way, then raises CancelledError; a second cancel ends the grace period. While the
        queue is empty it waits on LISTEN on PostgreSQL (woken within milliseconds by an
        enqueue; `listen=False` polls), and polls every `poll_interval` seconds elsewhere.
        """
        from .arunner import AsyncRunner

        handler_option("run(handler)", handler)
        options = self._run_options(batch, poll_interval, concurrency, grace_seconds,
                                    heartbeat_seconds, self.lease_seconds)
        flag_option("run(listen)", listen)
        await self._know_dialect()
        runner = AsyncRunner(self, handler, batch=options.batch,
                             concurrency=options.concurrency,
                             grace_seconds=options.grace_seconds,
                             heartbeat_seconds=options.heartbeat_seconds,
                             poll_interval=options.poll_interval,
                             listen=listen and self._dialect.supports_listen_notify)
        return await runner.run()

    # -- operations -------------------------------------------------------------------------

    async def counts(self) -> dict[Status, int]:
        """How many of this consumer's messages are in each status."""
        return self._counts((await self.engine.execute(self._counts_statement())).all())

    async def oldest_waiting_age(self) -> timedelta | None:
        """How long ago the oldest message not yet sent or failed was enqueued."""
        created = (await self.engine.execute(self._oldest_statement())).scalars()
        if not created:
            return None
        oldest: datetime = created[0]
        return max(timedelta(0), datetime.now(UTC) - oldest)

    async def purge_sent(self, older_than: timedelta, *, batch_size: int = 1000) -> int:
        """Delete sent messages enqueued more than `older_than` ago, in batches; how many."""
        seconds, size = self._purge_args(older_than, batch_size)
        return await self._run(lambda: self._purge_op(seconds, size))

    async def requeue_failed(self, ids: Iterable[UUID] | None = None) -> int:
        """Queue failed messages again (all, or those in `ids`) with a fresh attempt budget."""
        chosen = self._requeue_ids(ids)
        return (await self.engine.execute(self._requeue_statement(chosen))).rows_affected()
