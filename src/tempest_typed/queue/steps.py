"""An operation as steps, and the rules every shell runs them by.

An operation that talks to the database (enqueue, claim, ack, the worker loop's grouped
writes) is written once, as a generator of *steps*: a statement to run (the shell sends back
its `Result`), statements sent `Together` (their Results), or `BEGIN` / `COMMIT` around
statements that must commit together.
`run_steps` turns an operation into a shell's actions, with the rules both shells share:
transactions (a savepoint inside the caller's) and the transaction retry of a deadlock
victim (retry.TRANSACTION_RETRY). A shell only does the actions: queue.py's on a `Session`,
aio.py's awaited on an `AsyncSession`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator
from typing import Any, Final, TypeAlias, TypeVar

from ..errors import TransactionConflict
from ..statements import Statement
from .retry import TRANSACTION_RETRY

__all__ = ["BEGIN", "COMMIT", "Action", "Mark", "Op", "Step", "Together", "run_steps"]

R = TypeVar("R")


class Mark(enum.Enum):
    """The steps that are not statements: open a transaction (a savepoint inside one), and
    commit it."""

    BEGIN = "begin"
    COMMIT = "commit"


BEGIN: Final = Mark.BEGIN
COMMIT: Final = Mark.COMMIT


class Together(tuple["Statement[Any]", ...]):
    """Statements run in order as one transaction, sent in one round trip where the driver
    pipelines them (PostgreSQL); the step's answer is their Results."""

    __slots__ = ()


Step: TypeAlias = "Statement[Any] | Together | Mark"
#: an operation: yields steps, is sent each statement's Result (None after a mark), returns R
Op: TypeAlias = Generator[Step, Any, R]

#: what a shell does for run_steps(): ("execute", statement) -> its Result, ("together",
#: statements) -> their Results, ("begin", None) -> None, ("commit", None), ("rollback", the
#: exception), ("sleep", seconds)
Action: TypeAlias = tuple[str, Any]


def run_steps(make: Callable[[], Op[R]], caller_tx: bool) -> Generator[Action, Any, R]:
    """Run an operation as a shell's actions, with the rules both shells share.

    BEGIN opens a transaction (a savepoint inside the caller's: `caller_tx`). A deadlock
    victim runs again: a statement alone by itself; one inside a transaction of ours, the
    whole operation from the start (a transaction rolls back whole); inside the caller's
    transaction the caller decides, so it is raised. A failure the shell meets doing an
    action is thrown back in at that action.
    """
    for attempt in range(TRANSACTION_RETRY.attempts):
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
            if not again or attempt == TRANSACTION_RETRY.attempts - 1:
                raise
        yield "sleep", TRANSACTION_RETRY.pause(attempt)
    raise AssertionError("unreachable")  # the last attempt returned or raised


def _statement(stmt: Statement[Any] | Together, *,
               alone: bool) -> Generator[Action, Any, Any]:
    """A statement (or statements together, one transaction), run again as a deadlock
    victim when it is a transaction by itself."""
    action = "together" if isinstance(stmt, Together) else "execute"
    for attempt in range(TRANSACTION_RETRY.attempts):
        try:
            return (yield action, stmt)
        except TransactionConflict:
            if not alone or attempt == TRANSACTION_RETRY.attempts - 1:
                raise
        yield "sleep", TRANSACTION_RETRY.pause(attempt)
    raise AssertionError("unreachable")  # the last attempt returned or raised
