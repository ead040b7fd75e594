"""What the queue carries: a `Message` to enqueue, the `Lease` a claim hands out, and the
error text a failed attempt stores (cleaned here, for every database).

A `Lease` fences its holder's ack, nack and extend with its token; its `LeaseWatch` is what
the worker loop knows of it (the moment up to which it surely holds, and whether it is gone),
read by a handler through `Lease.lost` and `Lease.wait_lost()`.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final
from uuid import UUID

__all__ = ["MAX_ERROR_CHARS", "Gone", "Lease", "LeaseWatch", "Message", "by_token", "clean_error",
           "error_text", "new_lease"]

#: the longest error text a nack stores; longer text is cut (with a marker) to this size
MAX_ERROR_CHARS: Final = 2000


@dataclasses.dataclass(frozen=True, slots=True)
class Message:
    """A message to enqueue: its payload, and optionally an idempotency key and a delay."""

    payload: dict[str, Any]
    key: str | None = None
    delay: float = 0.0
    max_attempts: int | None = None


_EVENTS: Final = threading.Lock()  # makes a Gone's event, once, for its first waiter


class Gone:
    """A flag set once, as threading.Event's set/is_set/wait, whose event is made only for a
    waiter: the worker loop makes one per lease it claims, and few are ever waited on (an
    Event costs a Condition and a lock; measured: BENCHMARKS.md, "Fast paths")."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: threading.Event | None = None

    def set(self) -> None:
        """Set the flag and wake every waiter."""
        self._set = True
        with _EVENTS:
            event = self._event
        if event is not None:
            event.set()

    def is_set(self) -> bool:
        """True once set()."""
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        """Block until set() or `timeout` seconds have passed; whether it is set."""
        with _EVENTS:
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        if self._set:  # set before the event existed: set() saw no event to wake
            return True
        return event.wait(timeout)


class LeaseWatch:
    """What the worker loop knows of a lease it handles: the moment (monotonic clock) up to
    which the lease surely holds, and whether it was found gone."""

    __slots__ = ("deadline", "gone", "settled", "settled_in_tx")

    def __init__(self) -> None:
        #: pushed on by each heartbeat; infinite for a lease no worker loop watches
        self.deadline = math.inf
        self.gone = Gone()
        #: the status an ack or nack by hand gave the message ("sent", "queued", "failed"):
        #: the loop then settles it no more (the handler did), and counts what it did
        self.settled: str | None = None
        #: that ack or nack ran in a transaction of the caller's (session=tx), which may yet
        #: roll back: the loop then asks the database (a fenced nack) whether it held
        self.settled_in_tx = False

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

    def __hash__(self) -> int:
        """By the message and the lease's token (the payload, a dict, cannot be hashed)."""
        return hash((self.id, self.token))

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
        """Block the thread until the lease is lost (True) or `timeout` seconds pass (False)."""
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


# Lease() runs the frozen dataclass's __init__ (object.__setattr__ for each field) and makes
# its LeaseWatch and Gone by calling their classes: 1.08 us a lease, about 12% of the
# worker's client CPU a message at batch 100. new_lease() stores the same slots through their
# descriptors: 0.64 us (BENCHMARKS.md, "Fast paths").
_LEASE_SLOTS: Final = tuple(getattr(Lease, f.name).__set__ for f in dataclasses.fields(Lease))
_new = object.__new__


def new_lease(id_: UUID, token: UUID, payload: dict[str, Any], idempotency_key: str | None,
              attempts: int, max_attempts: int, expires_at: datetime) -> Lease:
    """`Lease(...)` of these fields, with a new LeaseWatch (made without calling the classes)."""
    gone = _new(Gone)
    gone._set = False
    gone._event = None
    watch = _new(LeaseWatch)
    watch.deadline = math.inf
    watch.gone = gone
    watch.settled = None
    watch.settled_in_tx = False
    lease = _new(Lease)
    s_id, s_token, s_payload, s_key, s_attempts, s_max, s_expires, s_watch = _LEASE_SLOTS
    s_id(lease, id_)
    s_token(lease, token)
    s_payload(lease, payload)
    s_key(lease, idempotency_key)
    s_attempts(lease, attempts)
    s_max(lease, max_attempts)
    s_expires(lease, expires_at)
    s_watch(lease, watch)
    return lease


def error_text(exc: BaseException) -> str:
    """What a nack stores for a handler's exception: its type and text, cleaned and bounded."""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception whose __str__ fails still gets its type recorded
        text = f"{type(exc).__name__}: <unprintable>"
    return clean_error(text)


def clean_error(text: str) -> str:
    """Error text safe for every database: no NUL, valid UTF-8, at most MAX_ERROR_CHARS."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")  # PostgreSQL text cannot hold NUL
    # a lone surrogate (from a bytes-decoding error) cannot be encoded for the driver
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > MAX_ERROR_CHARS:
        marker = " ...(truncated)"
        text = text[:MAX_ERROR_CHARS - len(marker)] + marker
    return text


def by_token(leases: Sequence[Lease]) -> dict[UUID, list[UUID]]:
    """The ids of leases grouped by their token (one statement per token settles a claim's)."""
    grouped: dict[UUID, list[UUID]] = {}
    for lease in leases:
        grouped.setdefault(lease.token, []).append(lease.id)
    return grouped
