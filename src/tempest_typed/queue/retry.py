"""The queue's three retry policies, each one object with its own name.

- `RetryStrategy`: when a failed message is tried again, and when it is dead-lettered
  instead: a delay doubling from `backoff_seconds` to `max_backoff_seconds`, computed in SQL
  from the row's attempts column (a dialect spells the power, expressions.Backoff), for up to
  `max_attempts` attempts.
- `ReconnectDelay`: how long the worker loop waits after its database work failed (a lost
  connection, a server restart, a pool with no connection free) before trying again.
- `TransactionRetry` (`TRANSACTION_RETRY`): how often, and after what pause, a deadlock
  victim runs again (steps.run_steps).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Final

from ..expressions import Backoff, Expression

__all__ = ["TRANSACTION_RETRY", "ReconnectDelay", "RetryStrategy", "TransactionRetry"]


@dataclasses.dataclass(frozen=True, slots=True)
class RetryStrategy:
    """The retry schedule of a failed message: `max_attempts` attempts in all, the n-th
    retry after backoff_seconds * 2 ** (n - 1) seconds, at most `max_backoff_seconds`."""

    max_attempts: int = 5
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 300.0

    def delay(self) -> Expression:
        """The wait before the next attempt in seconds, an SQL expression over the row's
        attempts column (the attempts made so far)."""
        return Backoff("attempts", self.backoff_seconds, self.max_backoff_seconds)

    def retries(self, attempts: int, max_attempts: int, *, retry: bool = True) -> bool:
        """Whether a message that failed its attempt number `attempts` (of its own
        `max_attempts`) is queued again, rather than dead-lettered; never when `retry` is
        False."""
        return retry and attempts < max_attempts


class ReconnectDelay:
    """Waits between reconnect attempts: doubling from `first` to `cap`, with jitter."""

    def __init__(self, first: float = 0.1, cap: float = 5.0) -> None:
        self.first = first
        self.cap = cap
        self.failures = 0

    def next_delay(self) -> float:
        """The wait before the next attempt, counting one more failure."""
        self.failures += 1
        delay = min(self.cap, self.first * 2.0 ** (self.failures - 1))
        return delay * (0.5 + random.random() / 2)

    def reset(self) -> None:
        """The database answered again: start from `first` next time."""
        self.failures = 0


@dataclasses.dataclass(frozen=True, slots=True)
class TransactionRetry:
    """How a deadlock victim runs again: up to `attempts` runs in all (a statement alone, or
    a transaction of the queue's whole), each after a short, growing, jittered pause."""

    attempts: int = 5
    #: the pause before run n + 1 is at most step * (n + 1) seconds
    step: float = 0.005

    def pause(self, attempt: int) -> float:
        """The wait before running a deadlock victim again, after run `attempt` (from 0)."""
        return self.step * (attempt + 1) * random.random()


#: the transaction retry of every queue operation
TRANSACTION_RETRY: Final = TransactionRetry()
