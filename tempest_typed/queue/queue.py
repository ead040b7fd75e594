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
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, Final, LiteralString, Never, TypeVar
from uuid import UUID, uuid4

from .. import sql
from ..engine import Engine, Result, Session
from ..errors import QueryExecutionError, TransactionConflict, ValidationError
from ..row import Row
from ..statements import Select, Statement, Update, delete, insert, select, update
from .model import QueueMessage, Status
from .worker import clean_error

if TYPE_CHECKING:
    from .worker import Summary

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
#: the longest delay, lease or backoff a queue takes, in seconds (about ten years): a time
#: further off overflows some database's timestamps (MySQL's end in 9999) or is a mistake
MAX_SECONDS: Final = 10 * 366 * 86400.0
#: the most messages one claim takes
MAX_CLAIM: Final = 10_000


def _seconds(name: str, value: object, *, minimum: float | None = 0.0,
             exclusive: bool = False) -> float:
    """A number of seconds checked before anything is written: finite, in range, a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{name} must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or abs(seconds) > MAX_SECONDS:
        raise ValidationError(
            f"{name} must be a finite number of seconds within {MAX_SECONDS:.0f} "
            f"(about ten years), got {value!r}"
        )
    if minimum is not None and (seconds <= minimum if exclusive else seconds < minimum):
        raise ValidationError(
            f"{name} must be {'greater than' if exclusive else 'at least'} {minimum:g} "
            f"seconds, got {value!r}"
        )
    return seconds


def _count(name: str, value: object, *, maximum: int | None = None) -> int:
    """A whole number of at least 1 (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be an int of at least 1, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValidationError(f"{name} must be at most {maximum}, got {value!r}")
    return value


def _lease_seconds(name: str, value: object) -> float:
    return _seconds(name, value, minimum=0.0, exclusive=True)


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
        if not isinstance(consumer, str) or not consumer or len(consumer) > 200:
            raise ValidationError(
                f"Queue needs a consumer name of 1 to 200 characters, got {consumer!r}"
            )
        self.engine = engine
        self.consumer = consumer
        self.model = model
        self.lease_seconds = _lease_seconds("Queue(lease_seconds)", lease_seconds)
        self.max_attempts = _count("Queue(max_attempts)", max_attempts)
        self.backoff_seconds = _seconds("Queue(backoff_seconds)", backoff_seconds)
        self.max_backoff_seconds = _seconds("Queue(max_backoff_seconds)", max_backoff_seconds)
        #: how often process() dead-letters exhausted expired leases (claim() always does)
        self.sweep_interval = _seconds("Queue(sweep_interval)", sweep_interval)
        self._last_sweep = float("-inf")
        #: set by stop(): a plain flag, safe to set from a signal handler
        self._stop_requested = False

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
        body = dict(payload) if isinstance(payload, Mapping) else payload  # checked in _row
        ids = self.enqueue_many([Message(body, key, delay, max_attempts)],
                                session=session)
        return ids[0] if ids else None

    def enqueue_many(self, messages: Iterable[Message],
                     *, session: Session | None = None) -> list[UUID]:
        """Add messages; returns the ids of those inserted, skipping repeated keys.

        Pass `session` (inside its transaction()) to enqueue with the caller's own writes: the
        messages commit or roll back with them (the outbox pattern).
        """
        # Every message is checked before anything is written, and a batch goes in whole or
        # not at all: a bad message at #550 of 600 leaves the table as it was.
        rows: list[dict[str, object]] = []
        for number, message in enumerate(messages):
            if not isinstance(message, Message):
                raise ValidationError(
                    f"enqueue_many() takes Message objects, got {message!r} at #{number}"
                )
            rows.append(self._row(message, number))
        inserted: set[UUID] = set()
        if not rows:
            return []
        chunks = [rows[first:first + _CHUNK] for first in range(0, len(rows), _CHUNK)]
        # One statement is atomic by itself; several (or MySQL 8's insert and read-back, which
        # want one snapshot) run in one transaction, the caller's when it has one.
        if len(chunks) == 1 and self._dialect != "mysql":
            inserted = self._insert(chunks[0], session)
        elif session is not None:
            with session.transaction() as tx:  # a savepoint inside the caller's transaction
                for chunk in chunks:
                    inserted |= self._insert(chunk, tx)
        else:
            with self.engine.transaction() as tx:
                for chunk in chunks:
                    inserted |= self._insert(chunk, tx)
        return [row["id"] for row in rows if row["id"] in inserted]  # type: ignore[misc]  # the rows are dicts of message fields

    def _row(self, message: Message, number: int) -> dict[str, object]:
        """The row of one message, or ValidationError naming what is wrong with it."""
        where = f"message #{number}"
        if not isinstance(message.payload, Mapping) or not all(
            isinstance(k, str) for k in message.payload
        ):
            raise ValidationError(
                f"{where}: payload must be a dict with str keys (a JSON object), got "
                f"{message.payload!r}"
            )
        if message.key is not None and (not isinstance(message.key, str)
                                        or not 0 < len(message.key) <= 200):
            raise ValidationError(
                f"{where}: key must be None or a str of 1 to 200 characters, got {message.key!r}"
            )
        delay = _seconds(f"{where}: delay", message.delay, minimum=None)
        limit = (self.max_attempts if message.max_attempts is None
                 else _count(f"{where}: max_attempts", message.max_attempts))
        return {
            "id": uuid4(), "consumer": self.consumer, "idempotency_key": message.key,
            "payload": dict(message.payload), "status": "queued", "attempts": 0,
            "max_attempts": limit, "next_attempt_at": sql.now(plus=delay),
            "created_at": sql.now(), "updated_at": sql.now(),
        }

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
        _count("claim(limit)", limit, maximum=MAX_CLAIM)
        if lease_seconds is not None:
            _lease_seconds("claim(lease_seconds)", lease_seconds)
        return _retry_deadlocks(lambda: self._claim(limit, lease_seconds))

    def _claim(self, limit: int, lease_seconds: float | None,
               session: Session | None = None, sweep: bool = True) -> list[Lease]:
        seconds = self.lease_seconds if lease_seconds is None else float(lease_seconds)
        token = uuid4()
        model = self.model
        due = self._due(limit)
        lease = self._lease(token, seconds)
        dialect = self._dialect
        if dialect == "postgresql":
            if sweep:
                self.dead_letter_expired(session=session)
            sub = due.for_update(skip_locked=True).as_subquery("id")
            stmt = lease.where({"id": {"in": sub}}).returning()
            return _leases(self._execute(stmt, session).all())
        if dialect == "sqlite":
            with self.engine.transaction() as tx:  # BEGIN IMMEDIATE: one claimer at a time
                if sweep:
                    self.dead_letter_expired(session=tx)  # under the same write lock
                stmt = lease.where({"id": {"in": due.as_subquery("id")}}).returning()
                return _leases(tx.execute(stmt).all())  # inside: a failure rolls back
        if sweep:
            self.dead_letter_expired()
        with self.engine.transaction() as tx:
            ids = tx.execute(due.for_update(skip_locked=True)).scalars()
            if not ids:
                return []
            tx.execute(lease.where({"id": {"in": ids}}))
            read = select(model).where({"id": {"in": ids}, "lease_token": token})
            return _leases(tx.execute(read).all())

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
        # The lease token stays on the row: a late ack of that final attempt (its handler ran,
        # its ack came after the lease) still finds its fence and marks the message sent.
        return update(self.model).set({
            "status": "failed", "next_attempt_at": None,
            "last_error": _EXPIRED_FINAL, "updated_at": sql.now(),
        }).where(self._exhausted())

    # -- the lease holder's writes, fenced by its token --------------------------------------

    def _fenced(self, lease: Lease, changes: Mapping[str, object],
                session: Session | None, *, late: bool = True) -> bool:
        if not isinstance(lease, Lease):
            raise ValidationError(f"expected a Lease from claim(), got {lease!r}")
        # late: the lease of a final attempt that the sweep dead-lettered still counts
        stmt = update(self.model).set(changes).where(
            {"id": lease.id, "lease_token": lease.token, "status": {"in": ["sending", "failed"]}}
            if late else {"id": lease.id, "lease_token": lease.token, "status": "sending"}
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
        if not isinstance(lease, Lease):
            raise ValidationError(f"nack() expects a Lease from claim(), got {lease!r}")
        if not isinstance(error, str):
            raise ValidationError(f"nack(error) must be a str, got {error!r}")
        dead = not retry or lease.final
        changes: dict[str, object] = {
            "status": "failed" if dead else "queued",
            "next_attempt_at": None if dead else sql.now(plus=self.backoff()),
            "lease_token": None, "last_error": clean_error(error) or None,
            "updated_at": sql.now(),
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
        seconds = self.lease_seconds if seconds is None else _lease_seconds(
            "extend(seconds)", seconds)
        return self._fenced(lease, {"next_attempt_at": sql.now(plus=seconds),
                                    "updated_at": sql.now()}, session, late=False)

    def process(self, handler: Callable[[Lease], object], limit: int = 10) -> Summary:
        """Claim one batch and run `handler` on each message, keeping the leases alive while
        it runs; ack what returned, nack what raised. What happened, as a Summary (false
        when nothing was due).

        A handler never starts on a lease near its end (it is released instead); acks are
        grouped and sent before any lease could end. See `run()` for the worker loop.
        """
        from .runner import Runner

        _count("process(limit)", limit, maximum=MAX_CLAIM)
        return Runner(self, handler, batch=limit).one_batch()

    def run(self, handler: Callable[[Lease], object], *, batch: int = 10,
            poll_interval: float = 1.0, concurrency: int = 1, grace_seconds: float = 10.0,
            heartbeat_seconds: float | None = None, install_signal_handlers: bool = True,
            ) -> Summary:
        """Claim and handle messages until `stop()`, SIGTERM or SIGINT; the Summary.

        Handlers run on `concurrency` threads; leases are extended every `heartbeat_seconds`
        (a third of the lease by default) while they run. A lost connection or a server
        restart is waited out with backoff, then the loop goes on. On stop the worker claims
        nothing more, hands back the unstarted messages at once with no attempt charged,
        lets running handlers finish for `grace_seconds`, then hands their messages back too.
        Signal handlers are installed only on the main thread, and restored on return.
        """
        from .runner import Runner

        _count("run(batch)", batch, maximum=MAX_CLAIM)
        _count("run(concurrency)", concurrency, maximum=1000)
        poll = _seconds("run(poll_interval)", poll_interval)
        grace = _seconds("run(grace_seconds)", grace_seconds)
        beat = (None if heartbeat_seconds is None
                else _lease_seconds("run(heartbeat_seconds)", heartbeat_seconds))
        if beat is not None and beat >= self.lease_seconds:
            raise ValidationError(
                f"run(heartbeat_seconds={beat:g}) must be shorter than the lease "
                f"({self.lease_seconds:g} s), or leases end between heartbeats"
            )
        runner = Runner(self, handler, batch=batch, concurrency=concurrency,
                        grace_seconds=grace, heartbeat_seconds=beat, poll_interval=poll)
        return runner.run(install_signal_handlers=install_signal_handlers)

    def stop(self) -> None:
        """Ask `run()` to stop cleanly (from any thread or a signal handler)."""
        self._stop_requested = True

    # -- the worker loop's statements (fenced by the lease token, grouped by token) ----------

    def _extend_all(self, leases: Sequence[Lease], seconds: float,
                    session: Session | None) -> tuple[list[UUID], list[UUID]]:
        """Extend leases in one statement per token: (the ids kept, the ids lost)."""
        kept: list[UUID] = []
        lost: list[UUID] = []
        for token, ids in _by_token(leases).items():
            stmt = update(self.model).set({
                "next_attempt_at": sql.now(plus=seconds), "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token, "status": "sending"})
            if _retry_deadlocks(partial(self._rows_affected, stmt, session)) == len(ids):
                kept.extend(ids)
                continue
            still = set(self._execute(select(self.model, ["id"]).where(
                {"id": {"in": ids}, "lease_token": token, "status": "sending"}), session
            ).scalars())
            kept.extend(i for i in ids if i in still)
            lost.extend(i for i in ids if i not in still)
        return kept, lost

    def _release_all(self, leases: Sequence[Lease], session: Session | None) -> int:
        """Hand leases back, due at once, with their attempt uncounted; how many were held."""
        released = 0
        for token, ids in _by_token(leases).items():
            stmt = update(self.model).set({
                "status": "queued", "next_attempt_at": sql.now(), "lease_token": None,
                "attempts": sql.raw("attempts - 1"), "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token, "status": "sending"})
            released += _retry_deadlocks(partial(self._rows_affected, stmt, session))
        return released

    def _ack_all(self, leases: Sequence[Lease], session: Session | None) -> int:
        """Ack leases in one statement per lease token; how many were still held."""
        acked = 0
        for token, ids in _by_token(leases).items():
            stmt = update(self.model).set({
                "status": "sent", "next_attempt_at": None, "lease_token": None,
                "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token,
                      "status": {"in": ["sending", "failed"]}})  # failed: a late final ack
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


def _by_token(leases: Sequence[Lease]) -> dict[UUID, list[UUID]]:
    by_token: dict[UUID, list[UUID]] = {}
    for lease in leases:
        by_token.setdefault(lease.token, []).append(lease.id)
    return by_token


def _leases(rows: Sequence[QueueMessage]) -> list[Lease]:
    """The leases of a claim's rows; raised inside the claim's transaction, so that a row
    without its lease (a table changed under the queue) rolls the claim back."""
    out = []
    for row in rows:
        if row.lease_token is None or row.next_attempt_at is None:
            raise QueryExecutionError(
                f"the claim read back message {row.id} without its lease token or expiry: "
                "is another program writing the queue table?", "", ())
        out.append(Lease(id=row.id, token=row.lease_token, payload=row.payload,
                         idempotency_key=row.idempotency_key, attempts=row.attempts,
                         max_attempts=row.max_attempts, expires_at=row.next_attempt_at))
    return out
