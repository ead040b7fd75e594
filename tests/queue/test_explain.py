"""The claim uses an index at any backlog: EXPLAIN on 50,000 rows shows no sequential scan
and no sort."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tempest_typed import Engine, create_engine, sql, update
from tempest_typed.queue import Message, Queue
from tempest_typed.queue.model import message_model

from .conftest import table_name

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def backlog(pg_url: str) -> Iterator[Queue]:
    """50,000 messages: 40,000 of "mail" (30,000 sent, 10,000 waiting), 10,000 of "sms"."""
    model = message_model(table_name("explain"))
    engine = create_engine(pg_url)
    engine.drop_all(model)
    engine.create_all(model)
    mail = Queue(engine, "mail", model=model)
    sms = Queue(engine, "sms", model=model)
    mail.enqueue_many([Message({"n": n}, delay=n % 600 - 300) for n in range(40_000)])
    sms.enqueue_many([Message({"n": n}) for n in range(10_000)])
    sent = mail._claims._due(30_000).as_subquery("id")
    engine.execute(update(model).set({"status": "sent", "next_attempt_at": None,
                                      "updated_at": sql.now()}).where({"id": {"in": sent}}))
    engine.execute_sql(f'ANALYZE "{model.__tempest_meta__.table}"')  # type: ignore[union-attr]
    try:
        yield mail
    finally:
        engine.drop_all(model)
        engine.close()


def plan(engine: Engine, compiled_sql: str, params: tuple[object, ...]) -> str:
    rows = engine.execute_sql("EXPLAIN " + compiled_sql, params).all()
    return "\n".join(r[0] for r in rows)


def test_the_claim_reads_the_due_index_not_the_table(backlog: Queue) -> None:
    engine = backlog.engine
    compiled = backlog.claim_statement(10).compile(engine.dialect)
    text = plan(engine, compiled.sql, compiled.params)
    table = backlog.model.__tempest_meta__.table  # type: ignore[union-attr]
    assert f"Seq Scan on {table}" not in text, text
    assert f"{table}_due" in text, text
    # The index gives the order too: a Sort node would sort every due row on every claim.
    assert "Sort" not in text, text


def test_the_dead_letter_sweep_reads_an_index_not_the_table(backlog: Queue) -> None:
    engine = backlog.engine
    sweep = backlog._claims._dead_letter_statement()
    compiled = sweep.compile(engine.dialect)
    text = plan(engine, compiled.sql, compiled.params)
    assert "Seq Scan" not in text, text
    assert "Index" in text, text
