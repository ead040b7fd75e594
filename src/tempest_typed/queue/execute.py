# Generated from src/tempest_typed/queue/execute_aio.py by tools/async_to_sync.py: do not edit.
# Change the asyncio source and run `python tools/async_to_sync.py`.
"""Doing an operation's steps: the actions of steps.run_steps, on a session of the engine
or on the engine itself. Written once, for asyncio (execute_aio.py); its blocking twin
(execute.py) is generated from it by tools/async_to_sync.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..engine import Engine, Session
from ..errors import ValidationError
from .steps import Op, run_steps

__all__ = ["check_session", "execute_op"]

R = TypeVar("R")


def _exc_info(exc: BaseException | None) -> tuple[Any, Any, Any]:
    """The arguments of __exit__ for an exception, or for none."""
    return (None, None, None) if exc is None else (type(exc), exc, exc.__traceback__)


def check_session(session: object, engine: Engine) -> None:
    """ValidationError unless `session` is None or a session of `engine` itself (a session
    of another engine, even on the same URL, would write outside the queue's database)."""
    if session is None:
        return
    kind = "a Session"
    if not isinstance(session, Session):
        raise ValidationError(
            f"session= takes {kind} of the queue's engine (engine.session() or "
            f"engine.transaction()), got {session!r}")
    if session._owner is not engine:
        raise ValidationError(
            f"session= takes {kind} of the queue's engine {engine!r}, got one of another "
            f"engine {session._owner!r}: open it with the queue's engine (queue.engine."
            "session() or queue.engine.transaction())")


def execute_op(engine: Engine, make: Callable[[], Op[R]],
                     session: Session | None = None) -> R:
    """Run an operation on `session` (or on the engine): run_steps' actions, done."""
    check_session(session, engine)
    actions = run_steps(make, session is not None and session.in_transaction)
    opened: list[tuple[Any, Session | None]] = []  # (transaction, the session before it)
    current = session
    reply: Any = None
    failure: BaseException | None = None
    while True:
        try:
            kind, arg = actions.send(reply) if failure is None else actions.throw(failure)
        except StopIteration as done:
            returned: R = done.value
            return returned
        reply, failure = None, None
        try:
            if kind == "execute":
                reply = (current.execute(arg) if current is not None
                               else engine.execute(arg))
            elif kind == "together":
                reply = (current._execute_together(arg) if current is not None
                               else engine._execute_together(arg))
            elif kind == "begin":
                tx = current.transaction() if current is not None else engine.transaction()
                entered = tx.__enter__()
                opened.append((tx, current))
                current = entered
            elif kind == "sleep":
                time.sleep(arg)
            else:  # commit, or roll back with the exception
                tx, current = opened.pop()
                tx.__exit__(*_exc_info(arg))
        except BaseException as exc:
            failure = exc
