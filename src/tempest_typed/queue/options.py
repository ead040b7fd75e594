"""The queue's options and arguments, each checked before anything is written: a bad one is
a ValidationError naming it and what is accepted."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from datetime import timedelta
from typing import Final
from uuid import UUID

from .._calls import discard_unrun, unrun_call
from .._wording import ASYNC_HANDLER, GENERATOR_HANDLER
from ..errors import ValidationError
from .messages import Message

__all__ = ["ASYNC_HANDLER", "MAX_CLAIM", "MAX_SECONDS", "RunOptions", "age_option", "count_option",
           "flag_option", "handler_option", "id_list_option", "is_async_handler", "lease_option",
           "message_list_option", "seconds_option"]

#: the longest delay, lease or backoff a queue takes, in seconds (about ten years): a time
#: further off overflows some database's timestamps (MySQL's end in 9999) or is a mistake
MAX_SECONDS: Final = 10 * 366 * 86400.0
#: the most messages one claim takes
MAX_CLAIM: Final = 10_000


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


def handler_option(name: str, handler: object, *, blocking: bool = False) -> None:
    """A handler: something to call with each Lease (`blocking`: not an async function)."""
    if not callable(handler):
        raise ValidationError(f"{name} must be a function taking a Lease, got {handler!r}")
    unrun = unrun_call(handler)
    if blocking and unrun == "async":
        raise ValidationError(f"{name}: {ASYNC_HANDLER}")
    if unrun == "generator":
        raise ValidationError(f"{name} is a generator function: {GENERATOR_HANDLER}")


def refuse_unrun(made: object, *, blocking: bool) -> None:
    """A handler's result whose work never ran fails the message: a generator, and on a
    blocking queue an awaitable (e.g. of a lambda calling an async function)."""
    unrun = discard_unrun(made, awaitable=blocking)
    if unrun == "generator":
        raise ValidationError(f"the handler returned {made!r}: {GENERATOR_HANDLER}")
    if unrun == "awaitable":
        raise ValidationError(f"the handler returned {made!r}: {ASYNC_HANDLER}")


def is_async_handler(handler: object) -> bool:
    """Whether calling `handler` gives an awaitable to await on a loop."""
    return unrun_call(handler) == "async"


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
class RunOptions:
    """The worker loop's options, checked before it starts."""

    batch: int
    poll_interval: float
    concurrency: int
    grace_seconds: float
    heartbeat_seconds: float | None
