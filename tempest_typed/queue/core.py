"""What `Queue` and `AsyncQueue` share: options, checks, statements, and every operation.

An operation that talks to the database (enqueue, claim, ack, the worker loop's grouped
writes) is written here once, as a generator of *steps*: a statement to run (the shell sends
back its `Result`), or `BEGIN` / `COMMIT` around statements that must commit together. The
sync shell (queue.py) runs the steps on a `Session` or the engine, the async shell (aio.py)
awaits them on an `AsyncSession` or the async engine; both share `run_steps`' rules for
transactions and deadlock retries, and nothing else.

Delivery is at-least-once: a message is handed to one lease holder at a time, and it is
redelivered when its lease expires before an ack (a worker that died, or one too slow), so a
handler must tolerate seeing a message twice.

What each database does differently is confined to the claim and the backoff expression:
- PostgreSQL claims in one statement: UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP
  LOCKED) RETURNING.
- MySQL/MariaDB cannot put LIMIT in an IN subquery, nor read the updated table there, and
  MariaDB has no UPDATE ... RETURNING: the two-step claim selects the ids FOR UPDATE SKIP LOCKED,
  updates them, and reads the leased rows back, all in one transaction. Enqueue deduplicates
  with INSERT IGNORE (no conflict target there; the unique index ignores NULL keys).
- SQLite has no row locks: the claim runs in a transaction, which begins with BEGIN
  IMMEDIATE there, so one claimer at a time holds the write lock; UPDATE ... RETURNING does
  the rest.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import random
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Generic, Never, TypeAlias, TypeVar
from uuid import UUID, uuid4

from .. import sql
from ..dialects.base import Dialect
from ..engine.result import Result
from ..errors import (
    IntegrityError,
    QueryExecutionError,
    TempestError,
    TransactionConflict,
    ValidationError,
)
from ..expressions import Backoff
from ..model import meta_of
from ..row import Row
from ..statements import Select, Statement, Update, delete, insert, select, update
from .model import QueueMessage, Status
from .worker import clean_error

__all__ = ["BEGIN", "COMMIT", "Lease", "Message", "Op", "QueueCore", "notify_channel",
           "run_steps"]

if TYPE_CHECKING:
    from ..engine.core import EngineCore

R = TypeVar("R")
#: the engine a queue runs on: Engine (Queue) or AsyncEngine (AsyncQueue)
E = TypeVar("E", bound="EngineCore")


class Mark(enum.Enum):
    """The steps that are not statements: open a transaction (a savepoint inside one), and
    commit it."""

    BEGIN = "begin"
    COMMIT = "commit"


BEGIN: Final = Mark.BEGIN
COMMIT: Final = Mark.COMMIT

Step: TypeAlias = "Statement[Any] | Mark"
#: an operation: yields steps, is sent each statement's Result (None after a mark), returns R
Op: TypeAlias = Generator[Step, Any, R]

#: how many times a deadlock victim is run again (a statement alone, or a transaction whole)
DEADLOCK_ATTEMPTS: Final = 5

_CHUNK: Final = 500  # rows per INSERT: expression cells are not split by the engine
_EXPIRED_FINAL = "lease expired on the final attempt"
#: the longest delay, lease or backoff a queue takes, in seconds (about ten years): a time
#: further off overflows some database's timestamps (MySQL's end in 9999) or is a mistake
MAX_SECONDS: Final = 10 * 366 * 86400.0
#: the most messages one claim takes
MAX_CLAIM: Final = 10_000


#: what a shell does for run_steps(): ("execute", statement) -> its Result, ("begin", None)
#: -> None, ("commit", None), ("rollback", the exception), ("sleep", seconds)
Action: TypeAlias = tuple[str, Any]


def deadlock_pause(attempt: int) -> float:
    """The wait before running a deadlock victim again: short, growing, jittered."""
    return 0.005 * (attempt + 1) * random.random()


def run_steps(make: Callable[[], Op[R]], caller_tx: bool) -> Generator[Action, Any, R]:
    """Run an operation as a shell's actions, with the rules both shells share.

    BEGIN opens a transaction (a savepoint inside the caller's: `caller_tx`). A deadlock
    victim runs again: a statement alone by itself; one inside a transaction of ours, the
    whole operation from the start (a transaction rolls back whole); inside the caller's
    transaction the caller decides, so it is raised. A failure the shell meets doing an
    action is thrown back in at that action.
    """
    for attempt in range(DEADLOCK_ATTEMPTS):
        steps = make()
        depth = 0  # transactions of ours open
        committing = False  # a failure now is our transaction's, which the shell has ended
        value: Any = None
        try:
            while True:
                step = steps.send(value)
                if step is BEGIN:
                    value = yield "begin", None
                    depth += 1
                elif step is COMMIT:
                    depth -= 1
                    committing = True
                    value = yield "commit", None
                    committing = False
                else:
                    value = yield from _statement(step, alone=depth == 0 and not caller_tx)
        except StopIteration as done:
            returned: R = done.value
            return returned
        except GeneratorExit:  # the shell was dropped mid-operation: nothing more to do
            steps.close()
            raise
        except BaseException as exc:
            again = (isinstance(exc, TransactionConflict) and (depth > 0 or committing)
                     and not caller_tx)
            for _ in range(depth):
                yield "rollback", exc
            steps.close()
            if not again or attempt == DEADLOCK_ATTEMPTS - 1:
                raise
        yield "sleep", deadlock_pause(attempt)
    raise AssertionError("unreachable")  # the last attempt returned or raised


def _statement(stmt: Statement[Any], *, alone: bool) -> Generator[Action, Any, Any]:
    for attempt in range(DEADLOCK_ATTEMPTS):
        try:
            return (yield "execute", stmt)
        except TransactionConflict:
            if not alone or attempt == DEADLOCK_ATTEMPTS - 1:
                raise
        yield "sleep", deadlock_pause(attempt)
    raise AssertionError("unreachable")  # the last attempt returned or raised


def seconds_option(name: str, value: object, *, minimum: float | None = 0.0,
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


def count_option(name: str, value: object, *, maximum: int | None = None) -> int:
    """A whole number of at least 1 (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be an int of at least 1, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValidationError(f"{name} must be at most {maximum}, got {value!r}")
    return value


def lease_option(name: str, value: object) -> float:
    """A lease length: a number of seconds greater than 0."""
    return seconds_option(name, value, minimum=0.0, exclusive=True)


def flag_option(name: str, value: object) -> bool:
    """True or False (not a truthy string such as "no")."""
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be True or False, got {value!r}")
    return value


def handler_option(name: str, handler: object) -> None:
    """A handler: something to call with each Lease."""
    if not callable(handler):
        raise ValidationError(f"{name} must be a function taking a Lease, got {handler!r}")


def age_option(name: str, value: object) -> float:
    """An age as a timedelta from 0 to about ten years; its seconds."""
    if not isinstance(value, timedelta):
        raise ValidationError(f"{name} must be a datetime.timedelta, got {value!r}")
    seconds = value.total_seconds()
    if not 0 <= seconds <= MAX_SECONDS:
        raise ValidationError(
            f"{name} must be from timedelta(0) (everything before now) to about ten years, "
            f"got {value!r}"
        )
    return seconds


def id_list_option(name: str, ids: object) -> list[UUID]:
    """Message ids: an iterable of UUIDs (not a str, whose characters would be iterated)."""
    if isinstance(ids, str | bytes | UUID) or not isinstance(ids, Iterable):
        raise ValidationError(f"{name} must be an iterable of message ids (UUID), got {ids!r}")
    out = list(ids)
    for number, one in enumerate(out):
        if not isinstance(one, UUID):
            raise ValidationError(f"{name} must hold message ids (UUID), got {one!r} at "
                                  f"#{number}")
    return out


def message_list_option(messages: object) -> list[Message]:
    """enqueue_many()'s messages as a list (each checked when its row is made)."""
    if isinstance(messages, Message):
        raise ValidationError("enqueue_many() takes an iterable of Message objects, got one "
                              "Message: pass [message], or use enqueue()")
    if isinstance(messages, str | bytes) or not isinstance(messages, Iterable):
        raise ValidationError(
            f"enqueue_many() takes an iterable of Message objects, got {messages!r}")
    return messages if isinstance(messages, list) else list(messages)


@dataclasses.dataclass(frozen=True, slots=True)
class Message:
    """A message to enqueue: its payload, and optionally an idempotency key and a delay."""

    payload: dict[str, Any]
    key: str | None = None
    delay: float = 0.0
    max_attempts: int | None = None


class LeaseWatch:
    """What the worker loop knows of a lease it handles: the moment (monotonic clock) up to
    which the lease surely holds, and whether it was found gone."""

    __slots__ = ("deadline", "gone")

    def __init__(self) -> None:
        #: pushed on by each heartbeat; infinite for a lease no worker loop watches
        self.deadline = math.inf
        self.gone = threading.Event()

    def __reduce__(self) -> tuple[type[LeaseWatch], tuple[()]]:
        # A lease pickled (or deep-copied) for another process is watched by no loop there.
        return LeaseWatch, ()


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
    _watch: LeaseWatch = dataclasses.field(default_factory=LeaseWatch, init=False,
                                           repr=False, compare=False)

    @property
    def final(self) -> bool:
        """True when a failure of this attempt dead-letters the message."""
        return self.attempts >= self.max_attempts

    @property
    def lost(self) -> bool:
        """True once the worker loop (run() or process()) can no longer count on this lease:
        another worker took the message, no heartbeat reached the database before the lease
        could end, or the worker stopped past its grace period. A handler should stop then.
        Always False for a lease of claim(), which no loop watches."""
        watch = self._watch
        return watch.gone.is_set() or time.monotonic() >= watch.deadline

    def wait_lost(self, timeout: float | None = None) -> bool:
        """Block until the lease is lost (True) or `timeout` seconds have passed (False)."""
        end = math.inf if timeout is None else time.monotonic() + timeout
        watch = self._watch
        while not self.lost:
            now = time.monotonic()
            if now >= end:
                return False
            # wake at the deadline too, and look again: a heartbeat may have pushed it on
            left = min(end, watch.deadline) - now
            watch.gone.wait(None if left == math.inf else left)
        return True


@dataclasses.dataclass(frozen=True, slots=True)
class RunOptions:
    """The worker loop's options, checked before it starts."""

    batch: int
    poll_interval: float
    concurrency: int
    grace_seconds: float
    heartbeat_seconds: float | None


def notify_channel(table: str) -> str:
    """The LISTEN/NOTIFY channel of a queue table on PostgreSQL: "tempest_queue:<table>", or
    with the md5 of a name too long for a channel (63 bytes at most)."""
    name = table if len(table.encode()) <= 49 else hashlib.md5(table.encode()).hexdigest()
    return f"tempest_queue:{name}"


class QueueCore(Generic[E]):
    """A durable queue of one consumer's messages in one table: everything but the waiting."""

    def __init__(
        self,
        engine: E,
        consumer: str,
        *,
        model: type[QueueMessage] = QueueMessage,
        lease_seconds: float = 30.0,
        max_attempts: int = 5,
        backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 300.0,
        sweep_interval: float = 1.0,
    ) -> None:
        self._check_engine(engine)
        if not isinstance(consumer, str) or not consumer or len(consumer) > 200:
            raise ValidationError(
                f"{type(self).__name__} needs a consumer name of 1 to 200 characters, got "
                f"{consumer!r}"
            )
        if not (isinstance(model, type) and issubclass(model, QueueMessage)):
            raise ValidationError(
                f"{type(self).__name__}(model) must be QueueMessage or a model of "
                f"message_model(table), got {model!r}"
            )
        self.engine = engine
        self.consumer = consumer
        self.model = model
        self.lease_seconds = lease_option("Queue(lease_seconds)", lease_seconds)
        self.max_attempts = count_option("Queue(max_attempts)", max_attempts)
        self.backoff_seconds = seconds_option("Queue(backoff_seconds)", backoff_seconds)
        self.max_backoff_seconds = seconds_option("Queue(max_backoff_seconds)",
                                                  max_backoff_seconds)
        #: how often the worker loop dead-letters exhausted expired leases (claim() always does)
        self.sweep_interval = seconds_option("Queue(sweep_interval)", sweep_interval)
        self._last_sweep = float("-inf")
        #: set by stop(): a plain flag, safe to set from a signal handler
        self._stop_requested = False
        try:
            self._known_dialect: Dialect | None = engine.dialect
        except TempestError:  # the async MySQL engine tells MySQL from MariaDB on connecting
            self._known_dialect = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.consumer!r} on {self.engine.url}>"

    def _check_engine(self, engine: object) -> None:
        """ValidationError unless `engine` is the kind this queue runs on."""
        raise NotImplementedError

    @property
    def _dialect(self) -> Dialect:
        """The database's dialect, whose capabilities choose the queue's statements
        (AsyncQueue learns it before its first statement)."""
        if self._known_dialect is None:
            self._known_dialect = self.engine.dialect
        return self._known_dialect

    # -- checks -----------------------------------------------------------------------------

    @staticmethod
    def _run_options(batch: object, poll_interval: object, concurrency: object,
                     grace_seconds: object, heartbeat_seconds: object,
                     lease_seconds: float) -> RunOptions:
        """run()'s options, each checked, or ValidationError naming the bad one."""
        size = count_option("run(batch)", batch, maximum=MAX_CLAIM)
        tasks = count_option("run(concurrency)", concurrency, maximum=1000)
        # above 0: an idle worker polling without a pause would keep the database busy
        poll = seconds_option("run(poll_interval)", poll_interval, exclusive=True)
        grace = seconds_option("run(grace_seconds)", grace_seconds)
        beat = (None if heartbeat_seconds is None
                else lease_option("run(heartbeat_seconds)", heartbeat_seconds))
        if beat is not None and beat >= lease_seconds:
            raise ValidationError(
                f"run(heartbeat_seconds={beat:g}) must be shorter than the lease "
                f"({lease_seconds:g} s), or leases end between heartbeats"
            )
        return RunOptions(size, poll, tasks, grace, beat)

    def _claim_args(self, limit: object, lease_seconds: object) -> None:
        count_option("claim(limit)", limit, maximum=MAX_CLAIM)
        if lease_seconds is not None:
            lease_option("claim(lease_seconds)", lease_seconds)

    def _extend_seconds(self, seconds: float | None) -> float:
        return self.lease_seconds if seconds is None else lease_option("extend(seconds)",
                                                                        seconds)

    def _sweep_due(self, now: float) -> bool:
        """Whether the worker loop's next claim should also dead-letter expired leases."""
        if now - self._last_sweep >= self.sweep_interval:
            self._last_sweep = now
            return True
        return False

    # -- enqueue ----------------------------------------------------------------------------

    def _enqueue_op(self, messages: Iterable[Message]) -> Op[list[UUID]]:
        """Add messages; the ids of those inserted, skipping repeated keys."""
        # Every message is checked before anything is written, and a batch goes in whole or
        # not at all: a bad message at #550 of 600 leaves the table as it was.
        rows: list[dict[str, object]] = []
        for number, message in enumerate(messages):
            if not isinstance(message, Message):
                raise ValidationError(
                    f"enqueue_many() takes Message objects, got {message!r} at #{number}"
                )
            rows.append(self._row(message, number))
        if not rows:
            return []
        inserted: set[UUID] = set()
        chunks = [rows[first:first + _CHUNK] for first in range(0, len(rows), _CHUNK)]
        # One statement is atomic by itself; several (or an insert and its read-back where
        # INSERT has no RETURNING, which want one snapshot) run in one transaction (a
        # savepoint in the caller's).
        if len(chunks) == 1 and "insert" in self._dialect.supports_returning:
            inserted = yield from self._insert(chunks[0])
        else:
            yield BEGIN
            for chunk in chunks:
                inserted |= yield from self._insert(chunk)
            yield COMMIT
        return [row_id for row in rows if isinstance(row_id := row["id"], UUID)
                and row_id in inserted]

    @staticmethod
    def _one_message(payload: Mapping[str, Any], key: str | None, delay: float,
                     max_attempts: int | None) -> Message:
        body = dict(payload) if isinstance(payload, Mapping) else payload  # checked in _row
        return Message(body, key, delay, max_attempts)

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
        delay = seconds_option(f"{where}: delay", message.delay, minimum=None)
        limit = (self.max_attempts if message.max_attempts is None
                 else count_option(f"{where}: max_attempts", message.max_attempts))
        return {
            "id": uuid4(), "consumer": self.consumer, "idempotency_key": message.key,
            "payload": dict(message.payload), "status": "queued", "attempts": 0,
            "max_attempts": limit, "next_attempt_at": sql.now(plus=delay),
            "created_at": sql.now(), "updated_at": sql.now(),
        }

    def _insert(self, rows: list[dict[str, object]]) -> Op[set[UUID]]:
        stmt = insert(self.model).values(rows)
        if self._dialect.supports_conflict_target:
            stmt = stmt.on_conflict_do_nothing(
                ["consumer", "idempotency_key"], where={"idempotency_key": {"is_null": False}}
            )
        else:
            # INSERT IGNORE: any unique key; MySQL's unique index lets NULL keys repeat.
            stmt = stmt.on_conflict_do_nothing()
        if "insert" not in self._dialect.supports_returning:  # read the inserted ids back
            yield stmt
            ids = [row_id for row in rows if isinstance(row_id := row["id"], UUID)]
            found: Result[Any] = yield select(self.model, ["id"]).where({"id": {"in": ids}})
            return set(found.scalars())
        result: Result[Any] = yield stmt.returning("id")
        return set(result.scalars())

    # -- claim ------------------------------------------------------------------------------

    def _claim_op(self, limit: int, lease_seconds: float | None,
                  sweep: bool = True) -> Op[list[Lease]]:
        """Lease up to `limit` due messages, oldest due first; each claim counts an attempt."""
        seconds = self.lease_seconds if lease_seconds is None else float(lease_seconds)
        token = uuid4()
        due = self._due(limit)
        lease = self._lease(token, seconds)
        dialect = self._dialect
        # UPDATE ... RETURNING gives its rows in no particular order, and its rows no longer
        # hold the due time they were chosen by: the one-statement claim serves a claim of
        # one message; a batch is claimed in two steps, its ids selected oldest due first.
        one_statement = (limit == 1 and dialect.supports_limit_in_subquery
                         and "update" in dialect.supports_returning)
        if dialect.serializes_write_transactions:
            yield BEGIN  # a write transaction (BEGIN IMMEDIATE): one claimer at a time
            if sweep:
                yield from self._dead_letter_op()  # under the same write lock
            if one_statement:
                claimed: Result[QueueMessage] = yield lease.where(
                    {"id": {"in": due.as_subquery("id")}}).returning()
                leases = _leases(claimed.all())  # inside: a failure rolls back
            else:
                found: Result[Any] = yield due
                leases = yield from self._lease_ids(lease, found.scalars(), token)
            yield COMMIT
            return leases
        if sweep:
            yield from self._dead_letter_op()
        if one_statement:
            sub = due.for_update(skip_locked=True).as_subquery("id")
            claimed = yield lease.where({"id": {"in": sub}}).returning()
            return _leases(claimed.all())
        yield BEGIN
        found = yield due.for_update(skip_locked=True)
        leases = yield from self._lease_ids(lease, found.scalars(), token)
        yield COMMIT
        return leases

    def _lease_ids(self, lease: Update[QueueMessage, Never], ids: list[Any],
                   token: UUID) -> Op[list[Lease]]:
        """The second step of a claim: lease the rows of `ids` (locked, or under SQLite's
        write lock) and give their leases in the order of `ids`."""
        if not ids:
            return []
        if "update" not in self._dialect.supports_returning:  # read the leased rows back
            yield lease.where({"id": {"in": ids}})
            claimed: Result[QueueMessage] = yield select(self.model).where(
                {"id": {"in": ids}, "lease_token": token})
        else:
            claimed = yield lease.where({"id": {"in": ids}}).returning()
        by_id = {one.id: one for one in _leases(claimed.all())}
        return [by_id[i] for i in ids if i in by_id]

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
        """The one-statement claim that PostgreSQL runs for one message (SQLite without the
        lock), to EXPLAIN: a batch's first step is its subquery."""
        due = self._due(count_option("claim_statement(limit)", limit, maximum=MAX_CLAIM))
        if self._dialect.supports_row_locks:
            due = due.for_update(skip_locked=True)
        return self._lease(uuid4(), self.lease_seconds).where(
            {"id": {"in": due.as_subquery("id")}}
        ).returning()

    def _dead_letter_op(self) -> Op[int]:
        """Fail the messages whose lease expired on their final attempt; how many."""
        # Look first with a plain read, which takes no lock: an UPDATE scanning the status
        # index would lock every in-flight row it passes and, on InnoDB, deadlock with acks.
        found: Result[Any] = yield select(self.model, ["id"]).where(self._exhausted())
        exhausted = found.scalars()
        if not exhausted:
            return 0
        failed: Result[Any] = yield self._dead_letter_statement().where(
            {"id": {"in": exhausted}})
        return failed.rows_affected()

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

    def _fenced_op(self, lease: Lease, changes: Mapping[str, object], *,
                   late: bool = True) -> Op[bool]:
        if not isinstance(lease, Lease):
            raise ValidationError(f"expected a Lease from claim(), got {lease!r}")
        # late: the lease of a final attempt that the sweep dead-lettered still counts
        result: Result[Any] = yield update(self.model).set(changes).where(
            {"id": lease.id, "lease_token": lease.token, "status": {"in": ["sending", "failed"]}}
            if late else {"id": lease.id, "lease_token": lease.token, "status": "sending"}
        )
        return result.rows_affected() == 1

    def _ack_op(self, lease: Lease) -> Op[bool]:
        return self._fenced_op(lease, {
            "status": "sent", "next_attempt_at": None, "lease_token": None,
            "updated_at": sql.now(),
        })

    def _nack_op(self, lease: Lease, error: str, retry: bool) -> Op[Status | None]:
        # The token proves the row's attempts are still lease.attempts: no claim came between.
        if not isinstance(lease, Lease):
            raise ValidationError(f"nack() expects a Lease from claim(), got {lease!r}")
        if not isinstance(error, str):
            raise ValidationError(f"nack(error) must be a str, got {error!r}")
        flag_option("nack(retry)", retry)
        dead = not retry or lease.final
        changes: dict[str, object] = {
            "status": "failed" if dead else "queued",
            "next_attempt_at": None if dead else sql.now(plus=self.backoff()),
            "lease_token": None, "last_error": clean_error(error) or None,
            "updated_at": sql.now(),
        }
        if not (yield from self._fenced_op(lease, changes)):
            return None
        return "failed" if dead else "queued"

    def _extend_op(self, lease: Lease, seconds: float) -> Op[bool]:
        return self._fenced_op(lease, {"next_attempt_at": sql.now(plus=seconds),
                                       "updated_at": sql.now()}, late=False)

    def backoff(self) -> sql.Expression:
        """The retry delay in seconds, computed in SQL from the attempts column."""
        return Backoff("attempts", self.backoff_seconds, self.max_backoff_seconds)

    def stop(self) -> None:
        """Ask `run()` to stop cleanly (from any thread or a signal handler)."""
        self._stop_requested = True

    # -- the worker loop's statements (fenced by the lease token, grouped by token) ----------

    def _extend_all_op(self, leases: Sequence[Lease],
                       seconds: float) -> Op[tuple[list[UUID], list[UUID]]]:
        """Extend leases in one statement per token: (the ids kept, the ids lost)."""
        kept: list[UUID] = []
        lost: list[UUID] = []
        for token, ids in _by_token(leases).items():
            held = {"id": {"in": ids}, "lease_token": token, "status": "sending"}
            result: Result[Any] = yield update(self.model).set({
                "next_attempt_at": sql.now(plus=seconds), "updated_at": sql.now(),
            }).where(held)
            if result.rows_affected() == len(ids):
                kept.extend(ids)
                continue
            found: Result[Any] = yield select(self.model, ["id"]).where(held)
            still = set(found.scalars())
            kept.extend(i for i in ids if i in still)
            lost.extend(i for i in ids if i not in still)
        return kept, lost

    def _release_all_op(self, leases: Sequence[Lease]) -> Op[int]:
        """Hand leases back, due at once, with their attempt uncounted; how many were held."""
        released = 0
        for token, ids in _by_token(leases).items():
            result: Result[Any] = yield update(self.model).set({
                "status": "queued", "next_attempt_at": sql.now(), "lease_token": None,
                "attempts": sql.raw("attempts - 1"), "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token, "status": "sending"})
            released += result.rows_affected()
        return released

    def _ack_all_op(self, leases: Sequence[Lease]) -> Op[int]:
        """Ack leases in one statement per lease token; how many were still held."""
        acked = 0
        for token, ids in _by_token(leases).items():
            result: Result[Any] = yield update(self.model).set({
                "status": "sent", "next_attempt_at": None, "lease_token": None,
                "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token,
                      "status": {"in": ["sending", "failed"]}})  # failed: a late final ack
            acked += result.rows_affected()
        return acked

    # -- operations -------------------------------------------------------------------------

    def _counts_statement(self) -> Statement[Any]:
        return (select(self.model).where({"consumer": self.consumer})
                .aggregate(["status"], {"n": sql.count()}))

    @staticmethod
    def _counts(rows: Sequence[Any]) -> dict[Status, int]:
        out: dict[Status, int] = {"queued": 0, "sending": 0, "sent": 0, "failed": 0}
        for row in rows:
            out[row.status] = row.n
        return out

    def _oldest_statement(self) -> Statement[Any]:
        return (select(self.model, ["created_at"])
                .where({"consumer": self.consumer, "status": {"in": ["queued", "sending"]}})
                .order_by("created_at").limit(1))

    @staticmethod
    def _purge_args(older_than: object, batch_size: object) -> tuple[float, int]:
        """purge_sent()'s arguments, checked: (the age in seconds, the batch size)."""
        return (age_option("purge_sent(older_than)", older_than),
                count_option("purge_sent(batch_size)", batch_size, maximum=MAX_CLAIM))

    def _purge_op(self, older_than: float, batch_size: int) -> Op[int]:
        """Delete sent messages enqueued more than `older_than` seconds ago, in batches; how
        many."""
        cutoff = sql.now(plus=-older_than)
        total = 0
        while True:
            found: Result[Any] = yield (
                select(self.model, ["id"])
                .where({"consumer": self.consumer, "status": "sent",
                        "created_at": {"lt": cutoff}})
                .order_by("created_at").limit(batch_size)
            )
            ids = found.scalars()
            if not ids:
                return total
            deleted: Result[Any] = yield delete(self.model).where(
                {"id": {"in": ids}, "status": "sent"})
            total += deleted.rows_affected()
            if len(ids) < batch_size:
                return total

    @staticmethod
    def _requeue_ids(ids: object) -> list[UUID] | None:
        """requeue_failed()'s ids, checked (None: every failed message)."""
        return None if ids is None else id_list_option("requeue_failed(ids)", ids)

    def _requeue_statement(self, ids: Sequence[UUID] | None) -> Statement[Any]:
        where: dict[str, object] = {"consumer": self.consumer, "status": "failed"}
        if ids is not None:
            where["id"] = {"in": list(ids)}
        return update(self.model).set({
            "status": "queued", "attempts": 0, "next_attempt_at": sql.now(),
            "lease_token": None, "updated_at": sql.now(),
        }).where(where)

    def _notify_trigger_sql(self) -> list[str]:
        """PostgreSQL: the triggers that NOTIFY waiting workers, in the writing transaction,
        when messages become due now: inserted, or handed back / queued again by an update.
        The two functions serve every queue table of the database."""
        name = meta_of(self.model).table
        table = _quoted(name)
        insert_trigger = _quoted(notify_trigger(name, "insert"))
        update_trigger = _quoted(notify_trigger(name, "update"))
        return [
            f"CREATE OR REPLACE FUNCTION {_NOTIFY_INSERT}() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN PERFORM pg_notify({_CHANNEL_SQL}, c.consumer) FROM (SELECT DISTINCT "
            "consumer FROM tempest_new WHERE status = 'queued' AND next_attempt_at <= now()) c; "
            "RETURN NULL; END $$",
            f"CREATE OR REPLACE FUNCTION {_NOTIFY_UPDATE}() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN PERFORM pg_notify({_CHANNEL_SQL}, NEW.consumer); RETURN NULL; END $$",
            f"CREATE OR REPLACE TRIGGER {insert_trigger} AFTER INSERT ON {table} "
            "REFERENCING NEW TABLE AS tempest_new FOR EACH STATEMENT "
            f"EXECUTE FUNCTION {_NOTIFY_INSERT}()",
            f"CREATE OR REPLACE TRIGGER {update_trigger} AFTER UPDATE ON {table} "
            "FOR EACH ROW WHEN (NEW.status = 'queued' AND OLD.status <> 'queued' AND "
            f"NEW.next_attempt_at <= now()) EXECUTE FUNCTION {_NOTIFY_UPDATE}()",
        ]


_NOTIFY_INSERT: Final = "tempest_queue_notify_insert"
_NOTIFY_UPDATE: Final = "tempest_queue_notify_update"
#: notify_channel() in SQL, for the trigger functions
_CHANNEL_SQL: Final = ("'tempest_queue:' || CASE WHEN octet_length(TG_TABLE_NAME) <= 49 "
                       "THEN TG_TABLE_NAME ELSE md5(TG_TABLE_NAME) END")
#: PostgreSQL: dropped with the last queue table that uses them (an error while another
#: table's triggers still do, which drop_table() ignores)
NOTIFY_FUNCTIONS: Final = (_NOTIFY_INSERT, _NOTIFY_UPDATE)
#: PostgreSQL: taken (for the transaction) by create_table() and drop_table() around the
#: trigger functions every queue table of the database shares: two processes replacing them
#: at once fail with "tuple concurrently updated"
DDL_LOCK_SQL: Final = "SELECT pg_advisory_xact_lock(%s)"
DDL_LOCK_KEY: Final = int.from_bytes(hashlib.md5(b"tempest_typed.queue ddl").digest()[:8],
                                     "big", signed=True)
#: how many times create_table() runs create_all() again after another process created the
#: same table or index at the same moment (each run gets past what the other one made)
CREATE_ATTEMPTS: Final = 10


def created_meanwhile(exc: BaseException) -> bool:
    """Whether create_all() failed because another process created the same table or index
    at the same moment: on PostgreSQL a unique violation in the catalogs (pg_type, pg_class);
    DDL violates no constraint of a table of ours."""
    return isinstance(exc, IntegrityError)


def notify_trigger(table: str, event: str) -> str:
    """The name of a queue table's NOTIFY trigger on `event` (trigger names are per table)."""
    name = f"{table}_notify_{event}"
    return name if len(name.encode()) <= 63 else f"tempest_queue_notify_{event}"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


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
