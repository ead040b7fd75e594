"""The heartbeat, in one place: when the worker loop extends the leases it holds, what it
knows while extensions fail, and the statements that extend them.

A heartbeat is due every `seconds` (a third of the lease by default, so that two can be
missed before a lease ends). One that does not reach the database marks the heartbeat
failing: no handler starts and nothing is claimed until one does (the book asks `failing`),
and the next is tried within a second. The extension is one statement per lease token,
fenced by it; a lease it did not extend was taken by another worker, unless another
transaction held its row locked (skipped, not waited for: its deadline stays).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from .. import sql
from ..dialects.base import Dialect
from ..engine.result import Result
from ..statements import select, update
from .messages import Lease, by_token
from .model import QueueMessage
from .steps import BEGIN, COMMIT, Op

__all__ = ["Heartbeat", "extend_all_op"]


class Heartbeat:
    """When the next heartbeat is due, on the worker's monotonic clock, and whether the last
    one failed to reach the database."""

    __slots__ = ("failing", "last", "seconds")

    def __init__(self, lease_seconds: float, seconds: float | None = None) -> None:
        #: how often held leases are extended
        self.seconds = lease_seconds / 3 if seconds is None else seconds
        #: when the last heartbeat (or the claim that began holding leases) was sent
        self.last = float("inf")
        #: the last heartbeat did not reach the database
        self.failing = False

    def due(self, now: float) -> bool:
        """Whether a heartbeat is due now."""
        return now - self.last >= self.seconds

    def next_at(self) -> float:
        """When the next heartbeat is due."""
        return self.last + self.seconds

    def reached(self, sent_at: float) -> None:
        """A heartbeat (or a claim while no lease was held) sent at `sent_at` reached the
        database: the next is due a period later."""
        self.last = sent_at
        self.failing = False

    def failed(self, now: float) -> bool:
        """A heartbeat did not reach the database: try again within a second; True when
        heartbeats just began to fail."""
        self.last = now - self.seconds + min(1.0, self.seconds)
        began = not self.failing
        self.failing = True
        return began


def extend_all_op(model: type[QueueMessage], dialect: Dialect, leases: Sequence[Lease],
                  seconds: float) -> Op[tuple[list[UUID], list[UUID]]]:
    """Extend leases by `seconds` in one statement per token: (the ids kept, the ids lost).

    Where there are row locks, a row another transaction has locked (a handler's own,
    holding its ack or nack of the message until it commits) is skipped, not waited for:
    waiting held back every other lease of the worker until theirs ran out. A skipped lease
    is neither kept nor lost: its deadline stays where it was."""
    kept: list[UUID] = []
    lost: list[UUID] = []
    for token, ids in by_token(leases).items():
        held = {"id": {"in": ids}, "lease_token": token, "status": "sending"}
        push = update(model).set({
            "next_attempt_at": sql.now(plus=seconds), "updated_at": sql.now(),
        })
        extended: set[UUID] | None = None  # None: every row held was extended
        if not dialect.supports_row_locks:  # writers are serialized: nothing to skip
            result: Result[Any] = yield push.where(held)
            if result.rows_affected() == len(ids):
                kept.extend(ids)
                continue
        elif "update" in dialect.supports_returning:  # one statement
            free = select(model, ["id"]).where(held).for_update(skip_locked=True)
            result = yield push.where({"id": {"in": free.as_subquery("id")}}).returning("id")
            extended = set(result.scalars())
        else:  # the rows locked first, then extended, in one transaction
            yield BEGIN
            locked: Result[Any] = yield (select(model, ["id"]).where(held)
                                         .for_update(skip_locked=True))
            extended = set(locked.scalars())
            if extended:
                yield push.where({"id": {"in": list(extended)}})
            yield COMMIT
        if extended is not None and len(extended) == len(ids):
            kept.extend(ids)
            continue
        found: Result[Any] = yield select(model, ["id"]).where(held)
        still = set(found.scalars())
        kept.extend(i for i in ids if i in still and (extended is None or i in extended))
        lost.extend(i for i in ids if i not in still)
    return kept, lost
