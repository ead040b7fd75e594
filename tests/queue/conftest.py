"""Fixtures of the queue's tests: a fresh queue table per test, on each database."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tempest_typed import Engine, sql, update
from tempest_typed.queue import Queue, QueueMessage, message_model


def table_name(what: str) -> str:
    """A table of the queue's tests, unique to this test process."""
    return f"queue_{what}_{os.getpid()}"


@pytest.fixture
def model(engine: Engine) -> Iterator[type[QueueMessage]]:
    """The message model on a freshly created table, dropped afterwards."""
    model = message_model(table_name("unit"))
    engine.drop_all(model)
    engine.create_all(model)
    try:
        yield model
    finally:
        engine.drop_all(model)


@pytest.fixture
def queue(engine: Engine, model: type[QueueMessage]) -> Queue:
    """A queue of consumer "mail" whose backoff starts at 100 s and caps at 1000 s."""
    return Queue(engine, "mail", model=model, lease_seconds=60, max_attempts=3,
                 backoff_seconds=100, max_backoff_seconds=1000)


def make_due(queue: Queue) -> None:
    """Let time pass: every queued message and every lease is due now."""
    queue.engine.execute(
        update(queue.model).set({"next_attempt_at": sql.now(plus=-1)})
        .where({"status": {"in": ["queued", "sending"]}})
    )
