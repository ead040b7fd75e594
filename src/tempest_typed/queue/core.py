"""What `Queue` and `AsyncQueue` share: the queue's options, its statements, and every
operation, written once as steps (steps.py) that each shell runs.

Delivery is at-least-once: a message is handed to one lease holder at a time, and it is
redelivered when its lease expires before an ack (a worker that died, or one too slow), so a
handler must tolerate seeing a message twice.

Each piece has its own module: the messages and leases (messages.py), the options' checks
(options.py), the claim's SQL (claim.py), the heartbeat (heartbeat.py), the retry policies
(retry.py), LISTEN/NOTIFY (notify.py). What a database can do is its dialect's capability
flags: enqueue deduplicates with ON CONFLICT (consumer, idempotency_key) where the dialect
names a conflict target, with INSERT IGNORE elsewhere (the unique index ignores NULL keys),
and reads the inserted ids back where INSERT has no RETURNING.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Never, Protocol, TypeVar
from uuid import UUID, uuid4

from .. import sql
from ..dialects.base import Dialect
from ..engine.result import Result
from ..errors import IntegrityError, TempestError, ValidationError
from ..model import meta_of
from ..row import Row
from ..statements import Select, Statement, Update, delete, insert, or_, select, update
from .claim import ClaimSQL
from .heartbeat import extend_all_op
from .messages import Lease, Message, by_token, clean_error
from .model import QueueMessage, Status
from .notify import trigger_sql
from .options import (
    MAX_CLAIM,
    RunOptions,
    age_option,
    count_option,
    flag_option,
    id_list_option,
    lease_option,
    seconds_option,
)
from .retry import RetryStrategy
from .steps import BEGIN, COMMIT, Op, Together
from .templates import Template, Templates, markers

__all__ = ["CREATE_ATTEMPTS", "QueueCore", "created_meanwhile"]

if TYPE_CHECKING:
    from ..engine.core import EngineCore


class _Stoppable(Protocol):
    """A worker loop as stop() sees it (shell.py's LoopShell): a flag it reads."""

    _stop_requested: bool


#: the engine a queue runs on: Engine (Queue) or AsyncEngine (AsyncQueue)
E = TypeVar("E", bound="EngineCore")

_CHUNK: Final = 500  # rows per INSERT: expression cells are not split by the engine
#: how many times create_table() runs create_all() again after another process created the
#: same table or index at the same moment (each run gets past what the other one made)
CREATE_ATTEMPTS: Final = 10


def created_meanwhile(exc: BaseException) -> bool:
    """Whether create_all() failed because another process created the same table or index
    at the same moment: on PostgreSQL a unique violation in the catalogs (pg_type, pg_class);
    DDL violates no constraint of a table of ours."""
    return isinstance(exc, IntegrityError)


def _encodable(text: str) -> bool:
    """True when `text` is valid Unicode, encodable as UTF-8 (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class QueueCore(Generic[E]):
    """A durable queue of one consumer's messages in one table: everything but the waiting."""

    #: the shell's nack (Queue.nack, or AsyncQueue.nack, awaited), which the worker loop
    #: calls for a failed handler
    nack: Callable[..., Any]
    #: how the shell's worker loop sends a batch's acks with the next claim on PostgreSQL:
    #: two statements together (psycopg's pipeline), or one statement (work.py, work_aio.py)
    _sends_together: ClassVar[bool]

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
        if "\x00" in consumer or not _encodable(consumer):
            # refused here, not at the first statement: every one of them carries the name
            raise ValidationError(
                f"{type(self).__name__} needs a consumer name with no NUL character and no "
                f"lone surrogate (no database stores them in text), got {consumer!r}"
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
        #: when a failed message is tried again, and when it is dead-lettered
        self.retry = RetryStrategy(
            count_option("Queue(max_attempts)", max_attempts),
            seconds_option("Queue(backoff_seconds)", backoff_seconds),
            seconds_option("Queue(max_backoff_seconds)", max_backoff_seconds))
        self._claims = ClaimSQL(model, consumer)
        #: the grouped ack, and the grouped ack with the next claim, by the sizes of the
        #: groups of one lease token (and the claim's limit): built once, bound per batch
        self._ack_templates: Templates[tuple[int, ...], QueueMessage, Never] = Templates()
        self._ack_and_claim_templates: Templates[tuple[tuple[int, ...], int], QueueMessage,
                                                 Row] = Templates()
        #: how often the worker loop dead-letters exhausted expired leases (claim() always does)
        self.sweep_interval = seconds_option("Queue(sweep_interval)", sweep_interval)
        self._last_sweep = float("-inf")
        #: the worker loops of this queue now running (run(), process()): stop() asks each
        #: of them, however many run on this one object
        self._loops: set[_Stoppable] = set()
        #: a stop() asked while no run() was running: the next run() to look stops at once
        #: (a plain flag, safe to set from a signal handler)
        self._stop_pending = False
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

    def _sweep_is_due(self, now: float) -> bool:
        """Whether the worker loop's next claim should also dead-letter expired leases."""
        return now - self._last_sweep >= self.sweep_interval

    def _sweep_due(self, now: float) -> bool:
        """As _sweep_is_due(), the sweep then counted as done now."""
        if self._sweep_is_due(now):
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
        return self._claims.claim_op(self._dialect, limit, seconds, sweep)

    def _picking(self, acks: Sequence[Lease],
                 limit: int) -> Together | Update[QueueMessage, Row] | None:
        """These acks and the next claim in one round trip, where the claim is one statement
        (PostgreSQL: UPDATE ... FROM) and no dead-letter sweep is due; else None (they go in
        turn). Sent together, or as one statement: as the shell says (`_sends_together`)."""
        if (not self._claims.batch_is_one_statement(self._dialect)
                or self._sweep_is_due(time.monotonic())):
            return None
        if self._sends_together:
            claim = self._claims.picked_statement(self._dialect, limit, self.lease_seconds)
            assert claim is not None  # batch_is_one_statement() said so
            return Together((self._ack_template(acks), claim))
        grouped = [(ids, token) for token, ids in by_token(acks).items()]
        sizes = tuple(len(ids) for ids, _ in grouped)

        def build() -> Template[QueueMessage, Row]:
            groups = [(markers(n), markers(1)[0]) for n in sizes]
            # the claim leaves out the rows the acks change (the statement's parts do not see
            # each other's changes): other markers, the same ids bound
            left_out, [token] = markers(sum(sizes)), markers(1)
            return Template(self._claims.settling_claim(
                self._ack_statement(groups), left_out, token, limit, self.lease_seconds),
                [*_flat(groups), *left_out, token])

        template = self._ack_and_claim_templates.get((sizes, limit), build)
        return template.bind([*_flat(grouped), *(i for ids, _ in grouped for i in ids),
                              uuid4()])

    def _ack_and_claim_op(self, acks: Sequence[Lease], picking: Together | Update[
            QueueMessage, Row]) -> Op[tuple[int, list[Lease]]]:
        """The acks of finished leases and the next claim of _picking(): (how many acks were
        still held, the new leases). They succeed or fail together."""
        if isinstance(picking, Together):
            acked, picked = yield picking
            return acked.rows_affected(), self._claims.picked_leases(picked)
        done: Result[Row] = yield picking
        return self._claims.settled_leases(done)

    def _dead_letter_op(self) -> Op[int]:
        """Fail the messages whose lease expired on their final attempt; how many."""
        return self._claims.dead_letter_op()

    def claim_statement(self, limit: int = 10) -> Update[QueueMessage, Any] | Select[
            QueueMessage, Row]:
        """The statement a claim of `limit` runs, to EXPLAIN: on PostgreSQL the whole claim
        (a batch: UPDATE ... FROM the locked due rows), on SQLite a claim of one message;
        on MySQL/MariaDB the claim's first step (the locked SELECT of the due ids)."""
        size = count_option("claim_statement(limit)", limit, maximum=MAX_CLAIM)
        return self._claims.one_statement(self._dialect, size, self.lease_seconds)

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

    def _ack_op(self, lease: Lease, in_tx: bool = False) -> Op[bool]:
        """The fenced ack; `in_tx`: in a transaction of the caller's, which may roll back."""
        acked = yield from self._fenced_op(lease, {
            "status": "sent", "next_attempt_at": None, "lease_token": None,
            "updated_at": sql.now(),
        })
        if acked:  # a handler of run() that acks by hand: the loop acks it no more
            _settled(lease, "sent", in_tx)
        return acked

    def _nack_op(self, lease: Lease, error: str, retry: bool,
                 in_tx: bool = False) -> Op[Status | None]:
        # The token proves the row's attempts are still lease.attempts: no claim came between.
        if not isinstance(lease, Lease):
            raise ValidationError(f"nack() expects a Lease from claim(), got {lease!r}")
        if not isinstance(error, str):
            raise ValidationError(f"nack(error) must be a str, got {error!r}")
        flag_option("nack(retry)", retry)
        dead = not self.retry.retries(lease.attempts, lease.max_attempts, retry=retry)
        changes: dict[str, object] = {
            "status": "failed" if dead else "queued",
            "next_attempt_at": None if dead else sql.now(plus=self.backoff()),
            "lease_token": None, "last_error": clean_error(error) or None,
            "updated_at": sql.now(),
        }
        if not (yield from self._fenced_op(lease, changes)):
            return None
        _settled(lease, "failed" if dead else "queued", in_tx)  # settled: see _ack_op
        return "failed" if dead else "queued"

    def _extend_op(self, lease: Lease, seconds: float) -> Op[bool]:
        return self._fenced_op(lease, {"next_attempt_at": sql.now(plus=seconds),
                                       "updated_at": sql.now()}, late=False)

    @property
    def max_attempts(self) -> int:
        """The attempts a message gets unless it says otherwise (the retry strategy's)."""
        return self.retry.max_attempts

    @max_attempts.setter
    def max_attempts(self, value: int) -> None:
        self.retry = dataclasses.replace(self.retry, max_attempts=value)

    @property
    def backoff_seconds(self) -> float:
        """The wait before the first retry (the retry strategy's)."""
        return self.retry.backoff_seconds

    @backoff_seconds.setter
    def backoff_seconds(self, value: float) -> None:
        self.retry = dataclasses.replace(self.retry, backoff_seconds=value)

    @property
    def max_backoff_seconds(self) -> float:
        """The longest wait before a retry (the retry strategy's)."""
        return self.retry.max_backoff_seconds

    @max_backoff_seconds.setter
    def max_backoff_seconds(self, value: float) -> None:
        self.retry = dataclasses.replace(self.retry, max_backoff_seconds=value)

    def backoff(self) -> sql.Expression:
        """The retry delay in seconds, computed in SQL from the attempts column."""
        return self.retry.delay()

    def stop(self) -> None:
        """Ask every `run()` of this queue to stop cleanly (from any thread or a signal
        handler)."""
        loops = tuple(self._loops)  # a snapshot: a loop may end on another thread meanwhile
        for loop in loops:
            loop._stop_requested = True
        if not loops:
            self._stop_pending = True

    # -- the worker loop's statements (fenced by the lease token, grouped by token) ----------

    def _extend_all_op(self, leases: Sequence[Lease],
                       seconds: float) -> Op[tuple[list[UUID], list[UUID]]]:
        """Extend leases in one statement per token: (the ids kept, the ids lost)."""
        return extend_all_op(self.model, self._dialect, leases, seconds)

    def _held_op(self, leases: Sequence[Lease]) -> Op[set[UUID]]:
        """The ids of these leases whose rows still carry them (one read per token)."""
        held: set[UUID] = set()
        for token, ids in by_token(leases).items():
            found: Result[Any] = yield select(self.model, ["id"]).where(
                {"id": {"in": ids}, "lease_token": token, "status": {"in": ["sending", "failed"]}})
            held.update(found.scalars())
        return held

    def _release_all_op(self, leases: Sequence[Lease]) -> Op[int]:
        """Hand leases back, due at once, with their attempt uncounted; how many were held."""
        released = 0
        for token, ids in by_token(leases).items():
            result: Result[Any] = yield update(self.model).set({
                "status": "queued", "next_attempt_at": sql.now(), "lease_token": None,
                "attempts": sql.raw("attempts - 1"), "updated_at": sql.now(),
            }).where({"id": {"in": ids}, "lease_token": token, "status": "sending"})
            released += result.rows_affected()
        return released

    def _ack_all_op(self, leases: Sequence[Lease]) -> Op[int]:
        """Ack leases in one statement, each fenced by its lease token; how many were still
        held."""
        result: Result[Any] = yield self._ack_template(leases)
        return result.rows_affected()

    def _ack_template(self, leases: Sequence[Lease]) -> Update[QueueMessage, Never]:
        """The grouped ack of these leases, bound (its shape kept by their group sizes)."""
        grouped = [(ids, token) for token, ids in by_token(leases).items()]
        sizes = tuple(len(ids) for ids, _ in grouped)

        def build() -> Template[QueueMessage, Never]:
            groups = [(markers(n), markers(1)[0]) for n in sizes]
            return Template(self._ack_statement(groups), _flat(groups))

        return self._ack_templates.get(sizes, build).bind(_flat(grouped))

    def _ack_statement(self, groups: Sequence[tuple[Sequence[UUID], UUID]],
                       ) -> Update[QueueMessage, Never]:
        """The grouped ack: the ids of each lease token, fenced by it."""
        fenced = [{"id": {"in": list(ids)}, "lease_token": token} for ids, token in groups]
        return update(self.model).set({
            "status": "sent", "next_attempt_at": None, "lease_token": None,
            "updated_at": sql.now(),
        }).where(fenced[0] if len(fenced) == 1 else or_(*fenced),
                 {"status": {"in": ["sending", "failed"]}})  # failed: a late final ack

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
        """The NOTIFY triggers of this queue's table (notify.py)."""
        return trigger_sql(meta_of(self.model).table)


def _settled(lease: Lease, status: Status, in_tx: bool) -> None:
    """Tell the worker loop that the handler settled its lease by hand (`in_tx`: in its own
    transaction, whose commit the loop cannot see: it checks with a fenced nack)."""
    watch = lease._watch
    watch.settled = status
    watch.settled_in_tx = in_tx


def _flat(groups: Sequence[tuple[Sequence[UUID], UUID]]) -> list[UUID]:
    """The values of grouped acks in the order their statement binds them: each group's ids,
    then its lease token."""
    return [value for ids, token in groups for value in (*ids, token)]
