"""The claim's SQL, in one place: which messages are due, how they are leased, and how the
exhausted expired leases are dead-lettered first.

The strategy follows the dialect's capabilities, never its name:
- With LIMIT in an IN subquery and UPDATE ... RETURNING (PostgreSQL, SQLite), one message is
  claimed in one statement: UPDATE ... WHERE id IN (SELECT ... LIMIT 1 [FOR UPDATE SKIP
  LOCKED]) RETURNING.
- A batch, where UPDATE ... FROM returns the picked rows' columns (PostgreSQL), is one
  statement too: UPDATE ... FROM (SELECT id, next_attempt_at ... LIMIT n FOR UPDATE SKIP
  LOCKED) RETURNING the lease and the due time it was picked by, the leases then sorted by
  that time (RETURNING promises no order).
- A batch elsewhere is two steps in one transaction: the ids selected oldest due first
  (FOR UPDATE SKIP LOCKED where there are row locks), then leased; without UPDATE ...
  RETURNING (MySQL/MariaDB) the leased rows are read back by their lease token.
- Where a write transaction holds the database's one write lock from its BEGIN (SQLite's
  BEGIN IMMEDIATE), the whole claim, sweep included, is one such transaction: one claimer at
  a time, no row locks needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Never
from uuid import UUID, uuid4

from .. import sql
from ..dialects.base import Dialect
from ..engine.result import Result
from ..errors import QueryExecutionError
from ..row import Row
from ..statements import Select, Update, select, update
from .messages import Lease, new_lease
from .model import QueueMessage
from .steps import BEGIN, COMMIT, Op
from .templates import Template, Templates, markers

__all__ = ["ClaimSQL", "leases_of"]

_EXPIRED_FINAL: Final = "lease expired on the final attempt"
#: what a claim reads back of each leased row: the Lease's fields
LEASE_COLUMNS: Final = ("id", "lease_token", "payload", "idempotency_key", "attempts",
                        "max_attempts", "next_attempt_at")


def _due_time(row: Row) -> Any:
    """A picked row's due time before its claim (what the batch is ordered by)."""
    return row[-1]


class ClaimSQL:
    """The claim's statements for one consumer's messages in one table."""

    def __init__(self, model: type[QueueMessage], consumer: str) -> None:
        self.model = model
        self.consumer = consumer
        #: the ordered batch claim by (limit, lease seconds), bound to each claim's token
        self._templates: Templates[tuple[int, float], QueueMessage, Row] = Templates()

    def _picked_claim(self, limit: int, seconds: float) -> Template[QueueMessage, Row]:
        def build() -> Template[QueueMessage, Row]:
            [token] = markers(1)
            return Template(self._picked(self._lease(token, seconds), self._due(limit)),
                            [token])

        return self._templates.get((limit, seconds), build)

    def claim_op(self, dialect: Dialect, limit: int, seconds: float,
                 sweep: bool = True) -> Op[list[Lease]]:
        """Lease up to `limit` due messages for `seconds`, oldest due first; each claim counts
        an attempt. `sweep`: dead-letter the exhausted expired leases first."""
        # UPDATE ... RETURNING gives its rows in no particular order, and its rows no longer
        # hold the due time they were chosen by: UPDATE ... WHERE id IN (subquery) serves a
        # claim of one message; a batch is one UPDATE ... FROM returning each row's due time
        # where the dialect has it, else two steps, its ids selected oldest due first.
        one_statement = (limit == 1 and dialect.supports_limit_in_subquery
                         and "update" in dialect.supports_returning)
        picking = None if one_statement else self.picked_statement(dialect, limit, seconds)
        if picking is not None:
            if sweep:
                yield from self.dead_letter_op()
            picked: Result[Row] = yield picking
            return self.picked_leases(picked)
        token = uuid4()
        due = self._due(limit)
        lease = self._lease(token, seconds)
        if dialect.serializes_write_transactions:
            yield BEGIN  # a write transaction (BEGIN IMMEDIATE): one claimer at a time
            if sweep:
                yield from self.dead_letter_op()  # under the same write lock
            if one_statement:
                claimed: Result[QueueMessage] = yield lease.where(
                    {"id": {"in": due.as_subquery("id")}}).returning()
                leases = leases_of(claimed.all())  # inside: a failure rolls back
            else:
                found: Result[Any] = yield due
                leases = yield from self._lease_ids(dialect, lease, found.scalars(), token)
            yield COMMIT
            return leases
        if sweep:
            yield from self.dead_letter_op()
        if one_statement:
            sub = due.for_update(skip_locked=True).as_subquery("id")
            claimed = yield lease.where({"id": {"in": sub}}).returning()
            return leases_of(claimed.all())
        yield BEGIN
        found = yield due.for_update(skip_locked=True)
        leases = yield from self._lease_ids(dialect, lease, found.scalars(), token)
        yield COMMIT
        return leases

    def picked_statement(self, dialect: Dialect, limit: int,
                         seconds: float) -> Update[QueueMessage, Row] | None:
        """The batch claim as one statement, where the dialect has UPDATE ... FROM with
        RETURNING and row locks (PostgreSQL): UPDATE ... FROM (the locked due ids and their
        due times) RETURNING both; None elsewhere. Its rows go to picked_leases()."""
        if not self.batch_is_one_statement(dialect):
            return None
        return self._picked_claim(limit, seconds).bind([uuid4()])

    @staticmethod
    def batch_is_one_statement(dialect: Dialect) -> bool:
        """Whether a batch claim is one UPDATE ... FROM statement here (PostgreSQL), which
        picked_statement() and settling_claim() write."""
        return dialect.supports_update_from and not dialect.serializes_write_transactions

    @staticmethod
    def picked_leases(picked: Result[Row]) -> list[Lease]:
        """The leases of a picked_statement()'s rows, in due order (RETURNING has none)."""
        return _picked_leases(picked.all())

    def settling_claim(self, settle: Update[QueueMessage, Never], left_out: Sequence[UUID],
                       token: UUID, limit: int, seconds: float) -> Update[QueueMessage, Row]:
        """`settle` and then the batch claim, in one statement (the dialect's UPDATE ... FROM
        as for picked_statement()): the claim leaves out the messages of `left_out`, which
        `settle` changes unseen by it. Its rows go to settled_leases()."""
        due = self._due(limit).where({"id": {"not_in": list(left_out)}})
        return self._picked(self._lease(token, seconds), due)._settling_first(settle)

    @staticmethod
    def settled_leases(done: Result[Row]) -> tuple[int, list[Lease]]:
        """How many rows a settling_claim() settled, and its leases in due order."""
        rows = done.all()
        settled: int = rows[0][0]
        return settled, _picked_leases([row[1:] for row in rows if row[1] is not None])

    def _lease_ids(self, dialect: Dialect, lease: Update[QueueMessage, Never], ids: list[Any],
                   token: UUID) -> Op[list[Lease]]:
        """The second step of a claim: lease the rows of `ids` (locked, or under SQLite's
        write lock) and give their leases in the order of `ids`."""
        if not ids:
            return []
        if "update" not in dialect.supports_returning:  # read the leased rows back
            yield lease.where({"id": {"in": ids}})
            claimed: Result[QueueMessage] = yield select(self.model).where(
                {"id": {"in": ids}, "lease_token": token})
        else:
            claimed = yield lease.where({"id": {"in": ids}}).returning()
        by_id = {one.id: one for one in leases_of(claimed.all())}
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

    def _picked(self, lease: Update[QueueMessage, Never],
                due: Select[QueueMessage, Row]) -> Update[QueueMessage, Row]:
        """The ordered one-statement batch claim: the due rows locked and leased in one
        UPDATE ... FROM, each returned with the due time it was picked by."""
        return lease.returning(*LEASE_COLUMNS)._from_picked(
            due.for_update(skip_locked=True), "id", ["next_attempt_at"])

    def one_statement(self, dialect: Dialect, limit: int,
                      seconds: float) -> Update[QueueMessage, Any] | Select[QueueMessage, Row]:
        """The one-statement claim, to EXPLAIN: what a claim of `limit` runs where the
        dialect has UPDATE ... FROM with RETURNING (a batch) or LIMIT in a subquery (one
        message); elsewhere (MySQL/MariaDB) the claim's first step, the locked select of
        the due ids, since its UPDATE cannot hold that subquery."""
        due = self._due(limit)
        lease = self._lease(uuid4(), seconds)
        if limit > 1 and dialect.supports_update_from:
            return self._picked(lease, due)
        if dialect.supports_row_locks:
            due = due.for_update(skip_locked=True)
        if not (dialect.supports_limit_in_subquery and "update" in dialect.supports_returning):
            return due
        return lease.where({"id": {"in": due.as_subquery("id")}}).returning()

    def dead_letter_op(self) -> Op[int]:
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


def _picked_leases(rows: list[Any]) -> list[Lease]:
    """The leases of claimed rows (LEASE_COLUMNS and the due time), in due order."""
    rows.sort(key=_due_time)
    out = []
    # read by position (by name, each field is a lookup; measured: BENCHMARKS.md, "Fast
    # paths")
    for id_, token, payload, key, attempts, max_attempts, expires, _ in rows:
        if token is None or expires is None:
            raise _without_lease(id_)
        out.append(new_lease(id_, token, payload, key, attempts, max_attempts, expires))
    return out


def _without_lease(message_id: object) -> QueryExecutionError:
    """The error of a claimed row read back without its lease token or expiry."""
    return QueryExecutionError(
        f"the claim read back message {message_id} without its lease token or expiry: "
        "is another program writing the queue table?", "", ())


def leases_of(rows: Sequence[QueueMessage]) -> list[Lease]:
    """The leases of a claim's rows; raised inside the claim's transaction, so that a row
    without its lease (a table changed under the queue) rolls the claim back."""
    out = []
    for row in rows:
        if row.lease_token is None or row.next_attempt_at is None:
            raise _without_lease(row.id)
        out.append(Lease(id=row.id, token=row.lease_token, payload=row.payload,
                         idempotency_key=row.idempotency_key, attempts=row.attempts,
                         max_attempts=row.max_attempts, expires_at=row.next_attempt_at))
    return out
