"""The durable queue: enqueue, claim under a lease, ack/nack fenced by the lease token.

Built only on the public builder API. Delivery is at-least-once: a message is handed to one
lease holder at a time, and it is redelivered when its lease expires before an ack (a worker
that died, or one too slow), so a handler must tolerate seeing a message twice.

What each database does differently is confined to the claim and the backoff expression:
- PostgreSQL claims in one statement: UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP
  LOCKED) RETURNING.
- MySQL/MariaDB cannot put LIMIT in an IN subquery, nor read the updated table there, and
  MariaDB has no UPDATE ... RETURNING: the two-step claim selects the ids FOR UPDATE SKIP LOCKED,
  updates them, and reads the leased rows back, all in one transaction. Enqueue deduplicates
  with INSERT IGNORE (no conflict target there; the unique index ignores NULL keys).
- SQLite has no row locks: the claim runs in engine.transaction(), which begins with BEGIN
  IMMEDIATE, so one claimer at a time holds the write lock; UPDATE ... RETURNING does the rest.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Final, LiteralString, Never, TypeVar
from uuid import UUID, uuid4

from .. import sql
from ..engine import Engine, Result, Session
from ..errors import TransactionConflict, ValidationError
from ..row import Row
from ..statements import Select, Statement, Update, delete, insert, select, update
from .model import QueueMessage, Status

__all__ = ["Lease", "Message", "Queue"]

R = TypeVar("R")

# 2 ** (attempts - 1) seconds-multiplier, capped: the only per-dialect SQL of the queue.
# PostgreSQL and MySQL have power(); SQLite's math functions are a compile-time option, so it
# shifts instead (an integer shift needs no cast there, where PostgreSQL's << wants int4).
# The exponent is capped at 30 so the multiplier never overflows before LEAST/MIN caps it.
_BACKOFF: Final[dict[str, LiteralString]] = {
    "postgresql": "LEAST({} * power(2, LEAST(attempts - 1, 30)), {})",
    "mysql": "LEAST({} * POW(2, LEAST(attempts - 1, 30)), {})",
    "mariadb": "LEAST({} * POW(2, LEAST(attempts - 1, 30)), {})",
    "sqlite": "MIN({} * (1 << MIN(attempts - 1, 30)), {})",
}
_CHUNK: Final = 500  # rows per INSERT: expression cells are not split by the engine
_EXPIRED_FINAL = "lease expired on the final attempt"


@dataclasses.dataclass(frozen=True, slots=True)
class Message:
    """A message to enqueue: its payload, and optionally an idempotency key and a delay."""

    payload: dict[str, Any]
    key: str | None = None
    delay: float = 0.0
    max_attempts: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Lease:
    """A claimed message: what to deliver, and the token that fences its ack or nack."""

    id: UUID
    token: UUID
    payload: dict[str, Any]
    idempotency_key: str | None
    attempts: int
    max_attempts: int
    expires_at: datetime

    @property
    def final(self) -> bool:
        """True when a failure of this attempt dead-letters the message."""
        return self.attempts >= self.max_attempts


class Queue:
    """A durable queue of one consumer's messages in one table, on any of the three databases."""

    def __init__(
        self,
        engine: Engine,
        consumer: str,
        *,
        model: type[QueueMessage] = QueueMessage,
        lease_seconds: float = 30.0,
        max_attempts: int = 5,
        backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 300.0,
        sweep_interval: float = 1.0,
    ) -> None:
        if not consumer:
            raise ValidationError("Queue needs a consumer name")
        if lease_seconds <= 0 or max_attempts < 1 or backoff_seconds < 0:
            raise ValidationError(
                "Queue: lease_seconds must be > 0, max_attempts >= 1, backoff_seconds >= 0"
            )
        self.engine = engine
        self.consumer = consumer
        self.model = model
        self.lease_seconds = float(lease_seconds)
        self.max_attempts = max_attempts
        self.backoff_seconds = float(backoff_seconds)
        self.max_backoff_seconds = float(max_backoff_seconds)
        #: how often process() dead-letters exhausted expired leases (claim() always does)
        self.sweep_interval = float(sweep_interval)
        self._last_sweep = float("-inf")

    def __repr__(self) -> str:
        return f"<Queue {self.consumer!r} on {self.engine.url}>"

    @property
    def _dialect(self) -> str:
        return self.engine.dialect.name

    def _execute(self, stmt: Statement[R], session: Session | None) -> Result[R]:
        if session is not None:
            return session.execute(stmt)
        return self.engine.execute(stmt)

    def create_table(self) -> None:
        """Create the message table and its indexes if they do not exist."""
        self.engine.create_all(self.model)

    # -- enqueue ----------------------------------------------------------------------------

    def enqueue(self, payload: Mapping[str, Any], *, key: str | None = None, delay: float = 0.0,
                max_attempts: int | None = None, session: Session | None = None) -> UUID | None:
        """Add one message; None when its idempotency key was already enqueued."""
        ids = self.enqueue_many([Message(dict(payload), key, delay, max_attempts)],
                                session=session)
        return ids[0] if ids else None

    def enqueue_many(self, messages: Iterable[Message],
                     *, session: Session | None = None) -> list[UUID]:
        """Add messages; returns the ids of those inserted, skipping repeated keys.

        Pass `session` (inside its transaction()) to enqueue with the caller's own writes: the
        messages commit or roll back with them (the outbox pattern).
        """
        rows: list[dict[str, object]] = []
        for message in messages:
            if not isinstance(message, Message):
                raise ValidationError(f"enqueue_many() takes Message objects, got {message!r}")
            limit = self.max_attempts if message.max_attempts is None else message.max_attempts
            if limit < 1:
                raise ValidationError(f"max_attempts must be at least 1, got {limit}")
            rows.append({
                "id": uuid4(), "consumer": self.consumer, "idempotency_key": message.key,
                "payload": message.payload, "status": "queued", "attempts": 0,
                "max_attempts": limit, "next_attempt_at": sql.now(plus=float(message.delay)),
                "created_at": sql.now(), "updated_at": sql.now(),
            })
        inserted: set[UUID] = set()
        if not rows:
            return []
        if session is None and self._dialect == "mysql":
            with self.engine.transaction() as tx:  # MySQL 8 reads the ids back: one snapshot
                for first in range(0, len(rows), _CHUNK):
                    inserted |= self._insert(rows[first:first + _CHUNK], tx)
        else:
            for first in range(0, len(rows), _CHUNK):
                inserted |= self._insert(rows[first:first + _CHUNK], session)
        return [row["id"] for row in rows if row["id"] in inserted]  # type: ignore[misc]

    def _insert(self, rows: list[dict[str, object]], session: Session | None) -> set[UUID]:
        stmt = insert(self.model).values(rows)
        if self._dialect in ("mysql", "mariadb"):
            # INSERT IGNORE: any unique key; MySQL's unique index lets NULL keys repeat.
            stmt = stmt.on_conflict_do_nothing()
        else:
            stmt = stmt.on_conflict_do_nothing(
                ["consumer", "idempotency_key"], where={"idempotency_key": {"is_null": False}}
            )
        if self._dialect == "mysql":  # no RETURNING at all on MySQL 8
            self._execute(stmt, session)
            ids = [row_id for row in rows if isinstance(row_id := row["id"], UUID)]
            found = self._execute(select(self.model, ["id"]).where({"id": {"in": ids}}), session)
            return set(found.scalars())
        return set(self._execute(stmt.returning("id"), session).scalars())

    # -- claim ------------------------------------------------------------------------------

    def claim(self, limit: int = 10, *, lease_seconds: float | None = None) -> list[Lease]:
        """Lease up to `limit` due messages, oldest due first; each claim counts an attempt."""
        return _retry_deadlocks(lambda: self._claim(limit, lease_seconds))

    def _claim(self, limit: int, lease_seconds: float | None,
               session: Session | None = None, sweep: bool = True) -> list[Lease]:
        if limit < 1:
            raise ValidationError(f"claim(limit={limit}) must be at least 1")
        seconds = self.lease_seconds if lease_seconds is None else float(lease_seconds)
        token = uuid4()
        model = self.model
        due = self._due(limit)
        lease = self._lease(token, seconds)
        dialect = self._dialect
        rows: list[QueueMessage]
        if dialect == "postgresql":
            if sweep:
                self.dead_letter_expired(session=session)
            sub = due.for_update(skip_locked=True).as_subquery("id")
            rows = self._execute(lease.where({"id": {"in": sub}}).returning(), session).all()
        elif dialect == "sqlite":
            with self.engine.transaction() as tx:  # BEGIN IMMEDIATE: one claimer at a time
                if sweep:
                    self.dead_letter_expired(session=tx)  # under the same write lock
                rows = tx.execute(
                    lease.where({"id": {"in": due.as_subquery("id")}}).returning()
                ).all()
        else:
            if sweep:
                self.dead_letter_expired()
            with self.engine.transaction() as tx:
                ids = tx.execute(due.for_update(skip_locked=True)).scalars()
                if not ids:
                    return []
                tx.execute(lease.where({"id": {"in": ids}}))
                rows = tx.execute(select(model).where({"id": {"in": ids}, "lease_token": token})).all()
        return [_lease(row) for row in rows]

    def _due(self, limit: int) -> Select[QueueMessage, Row]:
        """The ids of the messages a claim takes: due, not exhausted, oldest due first."""
        return select(self.model, ["id"]).where({
            "consumer": self.consumer,
            "next_attempt_at": {"lte": sql.now()},
            "status": {"in": ["queued", "sending"]},
            # an exhausted expired lease is dead-lettered (below), never claimed again
            "attempts": {"lt": sql.raw("max_attempts")},
        }).order_by("next_attempt_at").limit(limit)

    def _lease(self, token: UUID, seconds: float) -> Update[QueueMessage, Never]:
        return update(self.model).set({
            "status": "sending",
            "lease_token": token,
            "next_attempt_at": sql.now(plus=seconds),
            "updated_at": sql.now(),
            "attempts": sql.raw("attempts + 1"),  # counted in the database, never read back
        })

    def claim_statement(self, limit: int = 10) -> Update[QueueMessage, QueueMessage]:
        """The one-statement claim that PostgreSQL runs (SQLite without the lock), to EXPLAIN."""
        due = self._due(limit)
        if self._dialect == "postgresql":
            due = due.for_update(skip_locked=True)
        return self._lease(uuid4(), self.lease_seconds).where(
            {"id": {"in": due.as_subquery("id")}}
        ).returning()

    def dead_letter_expired(self, *, session: Session | None = None) -> int:
        """Fail the messages whose lease expired on their final attempt; how many.

        Every claim runs it first, so such a message is dead-lettered, not claimed again.
        """
        # Look first with a plain read, which takes no lock: an UPDATE scanning the status
        # index would lock every in-flight row it passes and, on InnoDB, deadlock with acks.
        exhausted = self._execute(
            select(self.model, ["id"]).where(self._exhausted()), session
        ).scalars()
        if not exhausted:
            return 0
        return self._execute(
            self._dead_letter_statement().where({"id": {"in": exhausted}}), session
        ).rows_affected()

    def _exhausted(self) -> dict[str, object]:
        return {
            "consumer": self.consumer, "status": "sending",
            "next_attempt_at": {"lte": sql.now()},
            "attempts": {"gte": sql.raw("max_attempts")},
        }

    def _dead_letter_statement(self) -> Update[QueueMessage, Never]:
        return update(self.model).set({
            "status": "failed", "next_attempt_at": None, "lease_token": None,
            "last_error": _EXPIRED_FINAL, "updated_at": sql.now(),
        }).where(self._exhausted())

    # -- the lease holder's writes, fenced by its token --------------------------------------

    def _fenced(self, lease: Lease, changes: Mapping[str, object],
                session: Session | None) -> bool:
        stmt = update(self.model).set(changes).where(
            {"id": lease.id, "lease_token": lease.token, "status": "sending"}
        )
        if session is not None and session.in_transaction:
            # the caller's transaction: the caller decides to retry
            return session.execute(stmt).rows_affected() == 1
        # The token makes the write idempotent, so a deadlock victim is simply run again.
        return _retry_deadlocks(lambda: self._execute(stmt, session).rows_affected() == 1)

    def ack(self, lease: Lease, *, session: Session | None = None) -> bool:
        """Mark the message sent; False when the lease was lost (another worker has it)."""
        return self._fenced(lease, {
            "status": "sent", "next_attempt_at": None, "lease_token": None,
            "updated_at": sql.now(),
        }, session)

    def nack(self, lease: Lease, error: str = "", *, retry: bool = True,
             session: Session | None = None) -> Status | None:
        """Record a failed attempt: "queued" again after a backoff, or "failed" after the last
        attempt (or with retry=False); None when the lease was lost."""
        # The token proves the row's attempts are still lease.attempts: no claim came between.
        dead = not retry or lease.final
        changes: dict[str, object] = {
            "status": "failed" if dead else "queued",
            "next_attempt_at": None if dead else sql.now(plus=self.backoff()),
            "lease_token": None, "last_error": error[:4000] or None, "updated_at": sql.now(),
        }
        if not self._fenced(lease, changes, session):
            return None
        return "failed" if dead else "queued"

    def backoff(self) -> sql.Expression:
        """The retry delay in seconds, computed in SQL from the attempts column."""
        template = _BACKOFF[self._dialect]
        return sql.expr(template, self.backoff_seconds, self.max_backoff_seconds)

    def extend(self, lease: Lease, seconds: float | None = None, *,
               session: Session | None = None) -> bool:
        """Push the lease's expiry to now + seconds; False when the lease was lost."""
        seconds = self.lease_seconds if seconds is None else float(seconds)
        return self._fenced(lease, {"next_attempt_at": sql.now(plus=seconds),
                                    "updated_at": sql.now()}, session)

    def process(self, handler: Callable[[Lease], object], limit: int = 10) -> int:
        """Claim a batch and run `handler` on each message: nack on exception, and ack the
        others together once the batch is done.

        Returns how many messages were claimed (0: nothing was due).
        """
        # Two fast paths, measured with bench/bench_queues.py (4 worker processes, no-op
        # jobs, PostgreSQL), where an ack per message drained 1,223 jobs a second:
        # - the messages handled without error are acked together, in one fenced UPDATE at
        #   the end of the batch, instead of one UPDATE and one commit each (4,694 a second,
        #   against 1,797 for pgqueuer in the same run).
        #   A message whose lease was lost meanwhile is left to its new holder, as ack()
        #   would; failures are nacked at once, as before;
        # - on PostgreSQL the sweep, the claim and the ack share one pooled connection, where
        #   each took its own (and the pool's liveness check) before (5,926 a second, against
        #   2,290 for pgqueuer in the same run).
        #   Elsewhere the claim runs in a transaction of its own, so no connection is held.
        if self._dialect != "postgresql":
            return self._process(handler, limit, None)
        with self.engine.session() as session:
            return self._process(handler, limit, session)

    def _process(self, handler: Callable[[Lease], object], limit: int,
                 session: Session | None) -> int:
        # The sweep is housekeeping: a claim never takes an exhausted message anyway, so a
        # worker loop runs it once per sweep_interval instead of before every claim, which
        # saves one round trip per batch. With the pool's ping also skipped for a connection
        # just used, bench/bench_queues.py went from 5,559 to 5,977 jobs a second (against
        # pgqueuer's 2,249 and 2,208 in the same runs).
        now = time.monotonic()
        sweep = now - self._last_sweep >= self.sweep_interval
        if sweep:
            self._last_sweep = now
        leases = _retry_deadlocks(lambda: self._claim(limit, None, session, sweep))
        done: list[Lease] = []
        try:
            for lease in leases:
                try:
                    handler(lease)
                except Exception as exc:
                    self.nack(lease, f"{type(exc).__name__}: {exc}", session=session)
                else:
                    done.append(lease)
        finally:
            if done:
                self._ack_all(done, session)
        return len(leases)

    def _ack_all(self, leases: Sequence[Lease], session: Session | None) -> int:
        """Ack leases in one statement per lease token; how many were still held."""
        by_token: dict[UUID, list[UUID]] = {}
        for lease in leases:
            by_token.setdefault(lease.token, []).append(lease.id)
        acked = 0
        for token, ids in by_token.items():
            stmt = update(self.model).set({
                "status": "sent", "next_attempt_at": None, "lease_token": None,
                "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token, "status": "sending"})
            acked += _retry_deadlocks(partial(self._rows_affected, stmt, session))
        return acked

    def _rows_affected(self, stmt: Statement[Any], session: Session | None) -> int:
        return self._execute(stmt, session).rows_affected()

    # -- operations -------------------------------------------------------------------------

    def counts(self) -> dict[Status, int]:
        """How many of this consumer's messages are in each status."""
        rows = self.engine.execute(
            select(self.model).where({"consumer": self.consumer})
            .aggregate(["status"], {"n": sql.count()})
        ).all()
        out: dict[Status, int] = {"queued": 0, "sending": 0, "sent": 0, "failed": 0}
        for row in rows:
            out[row.status] = row.n
        return out

    def oldest_waiting_age(self) -> timedelta | None:
        """How long ago the oldest message not yet sent or failed was enqueued."""
        created = self.engine.execute(
            select(self.model, ["created_at"])
            .where({"consumer": self.consumer, "status": {"in": ["queued", "sending"]}})
            .order_by("created_at").limit(1)
        ).scalars()
        if not created:
            return None
        oldest: datetime = created[0]
        return max(timedelta(0), datetime.now(UTC) - oldest)

    def purge_sent(self, older_than: timedelta, *, batch_size: int = 1000) -> int:
        """Delete sent messages enqueued more than `older_than` ago, in batches; how many."""
        if batch_size < 1:
            raise ValidationError(f"purge_sent(batch_size={batch_size}) must be at least 1")
        cutoff = sql.now(plus=-older_than.total_seconds())
        total = 0
        while True:
            ids = self.engine.execute(
                select(self.model, ["id"])
                .where({"consumer": self.consumer, "status": "sent",
                        "created_at": {"lt": cutoff}})
                .order_by("created_at").limit(batch_size)
            ).scalars()
            if not ids:
                return total
            total += self.engine.execute(
                delete(self.model).where({"id": {"in": ids}, "status": "sent"})
            ).rows_affected()
            if len(ids) < batch_size:
                return total

    def requeue_failed(self, ids: Sequence[UUID] | None = None) -> int:
        """Queue failed messages again (all, or those in `ids`) with a fresh attempt budget."""
        where: dict[str, object] = {"consumer": self.consumer, "status": "failed"}
        if ids is not None:
            where["id"] = {"in": list(ids)}
        return self.engine.execute(
            update(self.model).set({
                "status": "queued", "attempts": 0, "next_attempt_at": sql.now(),
                "lease_token": None, "updated_at": sql.now(),
            }).where(where)
        ).rows_affected()


def _retry_deadlocks(run: Callable[[], R], attempts: int = 5) -> R:
    """Run a statement (or transaction) again when the database chose it as a deadlock victim,
    which rolled it back whole."""
    for attempt in range(attempts):
        try:
            return run()
        except TransactionConflict:
            if attempt == attempts - 1:
                raise
            time.sleep(0.005 * (attempt + 1) * random.random())
    raise AssertionError("unreachable")


def _lease(row: QueueMessage) -> Lease:
    assert row.lease_token is not None and row.next_attempt_at is not None
    return Lease(id=row.id, token=row.lease_token, payload=row.payload,
                 idempotency_key=row.idempotency_key, attempts=row.attempts,
                 max_attempts=row.max_attempts, expires_at=row.next_attempt_at)
