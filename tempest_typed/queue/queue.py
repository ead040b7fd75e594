"""The durable queue on the blocking engine: enqueue, claim under a lease, ack/nack fenced by
the lease token, and the worker loop on threads.

Every statement and every multi-step operation is core.py's (shared with `AsyncQueue`); this
shell runs their steps on a `Session` or on the engine. Built only on the public builder API.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from ..engine import AsyncEngine, Engine, Session
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

if TYPE_CHECKING:
    from .worker import Summary

__all__ = ["Lease", "Message", "Queue"]

R = TypeVar("R")


def _exc_info(exc: BaseException | None) -> tuple[Any, Any, Any]:
    """The arguments of __exit__ for an exception, or for none."""
    return (None, None, None) if exc is None else (type(exc), exc, exc.__traceback__)


class Queue(QueueCore[Engine]):
    """A durable queue of one consumer's messages in one table, on any of the three databases."""

    def _check_engine(self, engine: object) -> None:
        if not isinstance(engine, Engine):
            raise ValidationError(
                f"Queue runs on an Engine from create_engine(), got {engine!r}"
                + ("; for an AsyncEngine use AsyncQueue" if isinstance(engine, AsyncEngine)
                   else ""))

    # -- running an operation's steps -------------------------------------------------------

    def _run(self, make: Callable[[], Op[R]], session: Session | None = None) -> R:
        """Run an operation on `session` (or on the engine): core.run_steps' actions, done."""
        if session is not None and not isinstance(session, Session):
            raise ValidationError(
                f"session= takes a Session of the engine (engine.session() or "
                f"engine.transaction()), got {session!r}")
        actions = run_steps(make, session is not None and session.in_transaction)
        opened: list[tuple[Any, Session | None]] = []  # (transaction, the session before it)
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
                    reply = (current.execute(arg) if current is not None
                             else self.engine.execute(arg))
                elif kind == "begin":
                    tx = current.transaction() if current is not None else self.engine.transaction()
                    entered = tx.__enter__()
                    opened.append((tx, current))
                    current = entered
                elif kind == "sleep":
                    time.sleep(arg)
                else:  # commit, or roll back with the exception
                    tx, current = opened.pop()
                    tx.__exit__(*_exc_info(arg))
            except BaseException as exc:
                failure = exc

    # -- the public operations --------------------------------------------------------------

    def create_table(self) -> None:
        """Create the message table and its indexes if they do not exist (on PostgreSQL also
        the trigger that wakes AsyncQueue workers waiting on LISTEN). Safe to run from several
        processes at once."""
        for attempt in range(CREATE_ATTEMPTS):
            try:
                self.engine.create_all(self.model)
                break
            except QueryExecutionError as exc:
                if not created_meanwhile(exc) or attempt == CREATE_ATTEMPTS - 1:
                    raise
        if self._dialect.supports_listen_notify:
            with self.engine.transaction() as tx:
                tx.execute_sql(DDL_LOCK_SQL, (DDL_LOCK_KEY,))
                for ddl in self._notify_trigger_sql():
                    tx.execute_sql(ddl)

    def drop_table(self) -> None:
        """Drop the message table (on PostgreSQL also the NOTIFY trigger functions, once no
        other queue table uses them)."""
        self.engine.drop_all(self.model)
        if self._dialect.supports_listen_notify:
            for function in NOTIFY_FUNCTIONS:
                # each in a transaction of its own: a drop that fails (another queue table
                # uses the function) ends only its own
                with contextlib.suppress(QueryExecutionError), self.engine.transaction() as tx:
                    tx.execute_sql(DDL_LOCK_SQL, (DDL_LOCK_KEY,))
                    tx.execute_sql(f"DROP FUNCTION IF EXISTS {function}()")

    def enqueue(self, payload: Mapping[str, Any], *, key: str | None = None, delay: float = 0.0,
                max_attempts: int | None = None, session: Session | None = None) -> UUID | None:
        """Add one message; None when its idempotency key was already enqueued."""
        message = self._one_message(payload, key, delay, max_attempts)
        ids = self._run(lambda: self._enqueue_op([message]), session)
        return ids[0] if ids else None

    def enqueue_many(self, messages: Iterable[Message],
                     *, session: Session | None = None) -> list[UUID]:
        """Add messages; returns the ids of those inserted, skipping repeated keys.

        Pass `session` (inside its transaction()) to enqueue with the caller's own writes: the
        messages commit or roll back with them (the outbox pattern).
        """
        batch = message_list_option(messages)
        return self._run(lambda: self._enqueue_op(batch), session)

    def claim(self, limit: int = 10, *, lease_seconds: float | None = None,
              session: Session | None = None) -> list[Lease]:
        """Lease up to `limit` due messages, oldest due first; each claim counts an attempt.

        On `session`, a loop of claims and acks keeps one connection instead of taking one
        from the pool per statement."""
        self._claim_args(limit, lease_seconds)
        return self._run(lambda: self._claim_op(limit, lease_seconds), session)

    def dead_letter_expired(self, *, session: Session | None = None) -> int:
        """Fail the messages whose lease expired on their final attempt; how many.

        Every claim runs it first, so such a message is dead-lettered, not claimed again.
        """
        return self._run(self._dead_letter_op, session)

    def ack(self, lease: Lease, *, session: Session | None = None) -> bool:
        """Mark the message sent; False when the lease was lost (another worker has it)."""
        return self._run(lambda: self._ack_op(lease), session)

    def nack(self, lease: Lease, error: str = "", *, retry: bool = True,
             session: Session | None = None) -> Status | None:
        """Record a failed attempt: "queued" again after a backoff, or "failed" after the last
        attempt (or with retry=False); None when the lease was lost."""
        return self._run(lambda: self._nack_op(lease, error, retry), session)

    def extend(self, lease: Lease, seconds: float | None = None, *,
               session: Session | None = None) -> bool:
        """Push the lease's expiry to now + seconds; False when the lease was lost."""
        length = self._extend_seconds(seconds)
        return self._run(lambda: self._extend_op(lease, length), session)

    def process(self, handler: Callable[[Lease], object], limit: int = 10) -> Summary:
        """Claim one batch and run `handler` on each message, keeping the leases alive while
        it runs; ack what returned, nack what raised. What happened, as a Summary (false
        when nothing was due).

        A handler never starts on a lease near its end (it is released instead); acks are
        grouped and sent before any lease could end. See `run()` for the worker loop.
        """
        from .runner import Runner

        handler_option("process(handler)", handler)
        count_option("process(limit)", limit, maximum=MAX_CLAIM)
        return Runner(self, handler, batch=limit).one_batch()

    def run(self, handler: Callable[[Lease], object], *, batch: int = 10,
            poll_interval: float = 1.0, concurrency: int = 1, grace_seconds: float = 10.0,
            heartbeat_seconds: float | None = None, install_signal_handlers: bool = True,
            ) -> Summary:
        """Claim and handle messages until `stop()`, SIGTERM or SIGINT; the Summary.

        Handlers run on `concurrency` threads; leases are extended every `heartbeat_seconds`
        (a third of the lease by default) while they run, and while heartbeats fail no
        handler starts; a handler is told through `Lease.lost` when its lease is gone. A lost
        connection, a server restart or a pool with no connection free is waited out with
        backoff, never raised. On stop the worker claims nothing more, hands back the
        unstarted messages at once with no attempt charged (trying again until the database
        answers), lets running handlers finish for `grace_seconds`, then hands their
        messages back too. Signal handlers are installed only on the main thread, and
        restored on return.
        """
        from .runner import Runner

        handler_option("run(handler)", handler)
        options = self._run_options(batch, poll_interval, concurrency, grace_seconds,
                                    heartbeat_seconds, self.lease_seconds)
        flag_option("run(install_signal_handlers)", install_signal_handlers)
        runner = Runner(self, handler, batch=options.batch, concurrency=options.concurrency,
                        grace_seconds=options.grace_seconds,
                        heartbeat_seconds=options.heartbeat_seconds,
                        poll_interval=options.poll_interval)
        return runner.run(install_signal_handlers=install_signal_handlers)

    # -- operations -------------------------------------------------------------------------

    def counts(self) -> dict[Status, int]:
        """How many of this consumer's messages are in each status."""
        return self._counts(self.engine.execute(self._counts_statement()).all())

    def oldest_waiting_age(self) -> timedelta | None:
        """How long ago the oldest message not yet sent or failed was enqueued."""
        created = self.engine.execute(self._oldest_statement()).scalars()
        if not created:
            return None
        oldest: datetime = created[0]
        return max(timedelta(0), datetime.now(UTC) - oldest)

    def purge_sent(self, older_than: timedelta, *, batch_size: int = 1000) -> int:
        """Delete sent messages enqueued more than `older_than` ago, in batches; how many."""
        seconds, size = self._purge_args(older_than, batch_size)
        return self._run(lambda: self._purge_op(seconds, size))

    def requeue_failed(self, ids: Iterable[UUID] | None = None) -> int:
        """Queue failed messages again (all, or those in `ids`) with a fresh attempt budget."""
        chosen = self._requeue_ids(ids)
        return self.engine.execute(self._requeue_statement(chosen)).rows_affected()
