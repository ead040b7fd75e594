"""The durable queue's operations, written once: `AsyncQueue` awaits them on the asyncio
engine, and `Queue` (queue.py, generated from this module by tools/async_to_sync.py) runs
them on the blocking one. Enqueue, claim under a lease, ack/nack fenced by the lease token,
and the maintenance calls, with the same guarantees on both.

Every statement and operation is core.py's; this shell does their steps on a session or on
the engine (execute_aio.py). What differs between the two queues, the engine each takes and the
worker loop (tasks here, threads there), is work_aio.py's and work.py's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID

from ..engine.aio import AsyncSession  # sync: from ..engine import Session
from ..errors import QueryExecutionError
from .core import CREATE_ATTEMPTS, created_meanwhile
from .execute_aio import check_session, execute_op  # sync: from .execute import execute_op
from .messages import Lease, Message
from .model import Status
from .notify import DDL_LOCK_KEY, DDL_LOCK_SQL, NOTIFY_FUNCTIONS
from .options import message_list_option
from .steps import Op
from .work_aio import AsyncWork  # sync: from .work import Work

__all__ = ["AsyncQueue"]

R = TypeVar("R")


class AsyncQueue(AsyncWork):
    """A durable queue of one consumer's messages in one table, on any of the three
    databases (AsyncQueue: on an AsyncEngine, each method awaited)."""

    async def _run(self, make: Callable[[], Op[R]], session: AsyncSession | None = None) -> R:
        """Run an operation on `session` (or on the engine): steps.run_steps' actions, done."""
        check_session(session, self.engine)  # async only: refused before the first statement
        await self._know_dialect()  # async only
        return await execute_op(self.engine, make, session)

    # -- the public operations --------------------------------------------------------------

    async def create_table(self) -> None:
        """Create the message table and its indexes if they do not exist (on PostgreSQL also
        the trigger whose NOTIFY wakes AsyncQueue workers waiting on LISTEN). Safe to run
        from several processes at once."""
        await self._know_dialect()  # async only
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
        await self._know_dialect()  # async only
        await self.engine.drop_all(self.model)
        if self._dialect.supports_listen_notify:
            for function in NOTIFY_FUNCTIONS:
                # each in a transaction of its own: a drop that fails (another queue table
                # uses the function) ends only its own
                with contextlib.suppress(QueryExecutionError):
                    await self._drop_function(function)

    async def _drop_function(self, function: str) -> None:
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
        """Add messages; returns the ids of those inserted, skipping repeated keys.

        Pass `session` (inside its transaction()) to enqueue with the caller's own writes: the
        messages commit or roll back with them (the outbox pattern).
        """
        batch = message_list_option(messages)
        return await self._run(lambda: self._enqueue_op(batch), session)

    async def claim(self, limit: int = 10, *, lease_seconds: float | None = None,
                    session: AsyncSession | None = None) -> list[Lease]:
        """Lease up to `limit` due messages, oldest due first; each claim counts an attempt.

        On `session`, a loop of claims and acks keeps one connection instead of taking one
        from the pool per statement."""
        self._claim_args(limit, lease_seconds)
        return await self._run(lambda: self._claim_op(limit, lease_seconds), session)

    async def dead_letter_expired(self, *, session: AsyncSession | None = None) -> int:
        """Fail the messages whose lease expired on their final attempt; how many.

        Every claim runs it first, so such a message is dead-lettered, not claimed again.
        """
        return await self._run(self._dead_letter_op, session)

    async def ack(self, lease: Lease, *, session: AsyncSession | None = None) -> bool:
        """Mark the message sent; False when the lease was lost (another worker has it)."""
        return await self._run(lambda: self._ack_op(lease, _in_tx(session)), session)

    async def nack(self, lease: Lease, error: str = "", *, retry: bool = True,
                   session: AsyncSession | None = None) -> Status | None:
        """Record a failed attempt: "queued" again after a backoff, or "failed" after the last
        attempt (or with retry=False); None when the lease was lost."""
        return await self._run(lambda: self._nack_op(lease, error, retry, _in_tx(session)),
                               session)

    async def extend(self, lease: Lease, seconds: float | None = None, *,
                     session: AsyncSession | None = None) -> bool:
        """Push the lease's expiry to now + seconds; False when the lease was lost."""
        length = self._extend_seconds(seconds)
        return await self._run(lambda: self._extend_op(lease, length), session)

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


def _in_tx(session: AsyncSession | None) -> bool:
    """Whether a lease's ack or nack on `session` runs in the caller's transaction (which may
    yet roll back)."""
    return session is not None and session.in_transaction
