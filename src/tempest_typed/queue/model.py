"""The queue's table: one row per message, its state, and the indexes the queue's queries use.

One column carries the message's schedule in every state: `next_attempt_at` is when the next
delivery attempt may start. While a message is queued it is the backoff's due time; while it
is leased (status "sending") it is the lease's expiry, after which another worker may claim it;
once the message is sent or failed it is NULL. So "claimable" is one range condition,
`next_attempt_at <= now()`, served by one composite index (consumer, next_attempt_at) at any
backlog and on every database, with no partial index and no OR across columns.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

from .. import sql
from ..model import Index, Model, column

__all__ = ["QueueMessage", "Status", "message_model"]

Status = Literal["queued", "sending", "sent", "failed"]
"""queued: waiting (maybe in backoff); sending: leased to a worker; sent: acked; failed: dead."""


def _index_name(table: str, suffix: str) -> str:
    """`<table>_<suffix>`; for a table name too long for that (identifiers end at 63 bytes,
    and names cut there would collide), a short prefix of it and its hash instead."""
    name = f"{table}_{suffix}"
    if len(name.encode()) <= 63:
        return name
    digest = hashlib.md5(table.encode()).hexdigest()[:10]
    return f"{table.encode()[:30].decode(errors='ignore')}_{digest}_{suffix}"


def _indexes(table: str) -> tuple[Index, ...]:
    # Index names are per schema on PostgreSQL: derive them from the table name.
    return (
        # Idempotent enqueue: a repeated key of the same consumer is a duplicate; rows
        # without a key never are (the partial predicate; MySQL ignores NULL keys anyway).
        Index(_index_name(table, "idempotency"), ["consumer", "idempotency_key"], unique=True,
              where={"idempotency_key": {"is_null": False}}),
        # The claim: consumer = ? AND next_attempt_at <= now() ORDER BY next_attempt_at.
        Index(_index_name(table, "due"), ["consumer", "next_attempt_at"]),
        # Operations: counts by status, the oldest waiting message, purge of sent messages,
        # and the scan of in-flight leases that dead-letters an expired final attempt.
        Index(_index_name(table, "status"), ["consumer", "status", "created_at"]),
    )


class QueueMessage(Model, table="tempest_queue"):
    """One message of a durable queue; `message_model(table)` makes one on another table."""

    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str = column(max_length=200)
    idempotency_key: str | None = column(default=None, max_length=200)
    payload: dict[str, Any] = column(default_factory=dict)
    status: Status = "queued"
    #: delivery attempts started: counted in SQL by each claim
    attempts: int = 0
    #: after this many attempts a failure dead-letters the message (status "failed")
    max_attempts: int = 5
    #: queued: due time; sending: lease expiry; sent/failed: NULL (see the module docstring)
    next_attempt_at: datetime | None = column(server_default=sql.now())
    #: the fencing token of the current lease: ack, nack and extend must present it
    lease_token: UUID | None = None
    last_error: str | None = None
    created_at: datetime = column(server_default=sql.now())
    updated_at: datetime | None = None

    __indexes__ = _indexes("tempest_queue")


_models: dict[str, type[QueueMessage]] = {"tempest_queue": QueueMessage}


def message_model(table: str) -> type[QueueMessage]:
    """The message model stored in `table` (one class per table name, made once)."""
    found = _models.get(table)
    if found is None:

        class Message(QueueMessage, table=table):
            __indexes__ = _indexes(table)

        Message.__name__ = Message.__qualname__ = "QueueMessage"
        found = _models[table] = Message
    return found
