"""core.run_steps: the rules both queue shells share for transactions and deadlock victims,
driven by a fake shell (no database)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tempest_typed import TransactionConflict
from tempest_typed.queue.steps import BEGIN, COMMIT, Op, run_steps


def conflict() -> TransactionConflict:
    return TransactionConflict("deadlock detected", "UPDATE ...", ())


def drive(make: Callable[[], Op[Any]], fail_at: set[int], *, caller_tx: bool = False,
          ) -> tuple[Any, list[str]]:
    """Run the actions; the n-th action (counting from 0) in `fail_at` raises a conflict."""
    actions = run_steps(make, caller_tx)
    done: list[str] = []
    reply: Any = None
    failure: BaseException | None = None
    while True:
        try:
            kind, arg = actions.send(reply) if failure is None else actions.throw(failure)
        except StopIteration as stop:
            return stop.value, done
        reply, failure = None, None
        number = len(done)
        done.append(kind if kind != "execute" else f"execute {arg}")
        if number in fail_at:
            failure = conflict()
        elif kind == "execute":
            reply = f"result of {arg}"


def op_alone() -> Op[list[Any]]:
    first = yield "one"  # type: ignore[misc]  # statements stand in as strings here
    second = yield "two"  # type: ignore[misc]  # as above
    return [first, second]


def op_in_a_transaction() -> Op[str]:
    yield "before"  # type: ignore[misc]  # a statement stands in as a string
    yield BEGIN
    got = yield "inside"  # type: ignore[misc]  # as above
    yield COMMIT
    return str(got)


def test_a_statement_alone_is_run_again_alone() -> None:
    value, done = drive(op_alone, {1})
    assert value == ["result of one", "result of two"]
    assert done == ["execute one", "execute two", "sleep", "execute two"]


def test_a_victim_inside_our_transaction_starts_the_operation_over() -> None:
    value, done = drive(op_in_a_transaction, {2})
    assert value == "result of inside"
    assert done == ["execute before", "begin", "execute inside", "rollback", "sleep",
                    "execute before", "begin", "execute inside", "commit"]


def test_a_conflict_at_commit_starts_the_operation_over() -> None:
    value, done = drive(op_in_a_transaction, {3})
    assert value == "result of inside"
    assert done[:5] == ["execute before", "begin", "execute inside", "commit", "sleep"]


def test_inside_the_callers_transaction_a_victim_is_raised() -> None:
    with pytest.raises(TransactionConflict):
        drive(op_alone, {0}, caller_tx=True)
    with pytest.raises(TransactionConflict):
        drive(op_in_a_transaction, {2}, caller_tx=True)


def test_after_five_attempts_the_conflict_is_raised() -> None:
    with pytest.raises(TransactionConflict):
        drive(op_alone, {0, 2, 4, 6, 8})
    with pytest.raises(TransactionConflict):
        drive(op_in_a_transaction, set(range(100)))
