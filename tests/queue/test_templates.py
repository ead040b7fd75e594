"""The worker loop's statements built once and bound per batch, and a lease's gone flag."""

from __future__ import annotations

import threading
import time
from typing import Any
from uuid import UUID, uuid4

import pytest

from tempest_typed import Update, ValidationError, sql, update
from tempest_typed.queue.messages import Gone
from tempest_typed.queue.model import message_model
from tempest_typed.queue.templates import Template, markers

Model = message_model("templated")


def ack(ids: list[UUID], token: UUID) -> Update[Any, Any]:
    return update(Model).set({"status": "sent", "updated_at": sql.now()}).where(
        {"id": {"in": ids}, "lease_token": token})


def test_a_bound_template_compiles_as_the_statement_built_with_those_values() -> None:
    ids, [token] = markers(3), markers(1)
    template = Template(ack(ids, token), [*ids, token])
    real_ids, real_token = [uuid4() for _ in range(3)], uuid4()
    bound = template.bind([*real_ids, real_token]).compile("postgresql")
    built = ack(real_ids, real_token).compile("postgresql")
    assert (bound.sql, bound.params) == (built.sql, built.params)


def test_a_marker_the_statement_does_not_hold_is_refused() -> None:
    [token] = markers(1)
    with pytest.raises(AssertionError, match="bound 0 times"):
        Template(ack([uuid4()], uuid4()), [token])


def test_rebinding_takes_as_many_values_as_the_statement_holds() -> None:
    stmt = ack([uuid4()], uuid4())
    with pytest.raises(ValidationError, match="1 values for"):
        stmt._rebound((1,))


def test_gone_wakes_a_waiter_set_before_or_after_it_waits() -> None:
    early = Gone()
    early.set()
    assert early.is_set() and early.wait(0.01)
    late = Gone()
    assert not late.wait(0.01)
    threading.Timer(0.05, late.set).start()
    started = time.monotonic()
    assert late.wait(5)
    assert time.monotonic() - started < 4
