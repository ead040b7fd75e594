"""The PostgreSQL engine under faults: a conflict keeps its connection, a connection killed
while idle does not fail the next transaction, a server that is not there fails fast with
the cause, and run_transaction() runs a conflicting transaction again."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator

import psycopg.errors
import pytest

from tempest_typed import (
    ConfigurationError,
    Engine,
    Model,
    QueryExecutionError,
    Session,
    TransactionConflict,
    column,
    create_engine,
    insert,
    select,
    update,
)
from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules


class FaultRow(Model, table=f"eng_fault_rows_{os.getpid()}"):
    id: int = column(primary_key=True, default=0)
    n: int = 0


@pytest.fixture
def engines(pg_url: str) -> Iterator[tuple[Engine, Engine]]:
    """Two engines of one connection each on a fresh table of two rows, dropped afterwards."""
    first = create_engine(pg_url, pool_size=1)
    second = create_engine(pg_url, pool_size=1)
    try:
        first.drop_all(FaultRow)
        first.create_all(FaultRow)
        first.execute(insert(FaultRow).values([{"id": 1, "n": 0}, {"id": 2, "n": 0}]))
        yield first, second
    finally:
        try:
            first.drop_all(FaultRow)
        finally:
            first.close()
            second.close()


def backend(engine: Engine) -> int:
    return int(engine.execute_sql("SELECT pg_backend_pid()").scalar())


def conflict_once(tx: Session, other: Engine, state: dict[str, int]) -> int:
    """Read row 1 (the snapshot), let another engine change it, then write it: the first time
    this is a real serialization failure; the next time no one interferes."""
    state["attempts"] += 1
    state.setdefault("pid", int(tx.execute_sql("SELECT pg_backend_pid()").scalar()))
    assert int(tx.execute_sql("SELECT pg_backend_pid()").scalar()) == state["pid"]
    n = tx.execute(select(FaultRow, ["n"]).where({"id": 1})).scalar()
    if state["attempts"] == 1:
        other.execute(update(FaultRow).set({"n": 5}).where({"id": 1}))
    tx.execute(update(FaultRow).set({"n": n + 1}).where({"id": 1}))
    return state["attempts"]


# -- conflicts keep the connection ------------------------------------------------------------


def test_a_serialization_failure_keeps_the_pooled_connection(
    engines: tuple[Engine, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = engines
    before = backend(a)
    with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
        with pytest.raises(TransactionConflict), a.transaction(isolation="repeatable read") as tx:
            conflict_once(tx, b, {"attempts": 0})
        assert backend(a) == before  # the same server process: the connection was kept
    assert not [r for r in caplog.records if "discarding" in r.getMessage()]


@pytest.mark.parametrize("exc, lost", [
    (psycopg.errors.SerializationFailure("could not serialize"), False),
    (psycopg.errors.DeadlockDetected("deadlock detected"), False),
    (psycopg.errors.LockNotAvailable("could not obtain lock"), False),
    (psycopg.errors.QueryCanceled("statement timeout"), False),
    (psycopg.errors.AdminShutdown("terminating connection"), True),
    (psycopg.errors.ConnectionFailure("connection failure"), True),
    (psycopg.OperationalError("server closed the connection unexpectedly"), True),
])
def test_only_a_lost_connection_is_a_disconnect(exc: Exception, lost: bool) -> None:
    assert PsycopgRules.is_disconnect(object.__new__(PsycopgRules), exc) is lost


# -- the retry helper --------------------------------------------------------------------------


def test_run_transaction_runs_a_serialization_failure_again(
    engines: tuple[Engine, Engine]
) -> None:
    a, b = engines
    state = {"attempts": 0}
    result = a.run_transaction(lambda tx: conflict_once(tx, b, state), retries=3,
                               isolation="repeatable read")
    assert result == 2 and state["attempts"] == 2
    # the first attempt's write was rolled back; the second saw the other engine's 5
    assert a.execute(select(FaultRow, ["n"]).where({"id": 1})).scalar() == 6


def test_run_transaction_gives_up_after_its_retries(engines: tuple[Engine, Engine]) -> None:
    a, b = engines
    attempts = []

    def always_conflicts(tx: Session) -> None:
        attempts.append(1)
        n = tx.execute(select(FaultRow, ["n"]).where({"id": 2})).scalar()
        b.execute(update(FaultRow).set({"n": n + 10}).where({"id": 2}))
        tx.execute(update(FaultRow).set({"n": n + 1}).where({"id": 2}))

    with pytest.raises(TransactionConflict):
        a.run_transaction(always_conflicts, retries=2, isolation="repeatable read")
    assert len(attempts) == 3
    assert a.execute(select(FaultRow, ["n"]).where({"id": 2})).scalar() == 30


def test_run_transaction_refuses_a_bad_retry_count(engines: tuple[Engine, Engine]) -> None:
    with pytest.raises(ConfigurationError, match="retries"):
        engines[0].run_transaction(lambda tx: None, retries=-1)


# -- connections that die ----------------------------------------------------------------------


def test_a_connection_killed_while_idle_does_not_fail_the_next_transaction(
    engines: tuple[Engine, Engine]
) -> None:
    a, b = engines
    victim = backend(a)  # a's only connection, now idle in its pool
    assert b.execute_sql("SELECT pg_terminate_backend(%s)", (victim,)).scalar() is True
    for _ in range(100):  # bounded: until the server has ended that process
        if not b.execute_sql("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                             (victim,)).scalar():
            break
        time.sleep(0.02)
    with a.transaction() as tx:
        tx.execute(update(FaultRow).set({"n": 7}).where({"id": 1}))
    assert backend(a) != victim
    assert a.execute(select(FaultRow, ["n"]).where({"id": 1})).scalar() == 7


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the socket is


def test_a_server_that_is_not_there_fails_fast_with_the_cause() -> None:
    engine = create_engine(f"postgresql://postgres@127.0.0.1:{_closed_port()}/none",
                           pool_size=1, pool_timeout=120, connect_timeout=2)
    try:
        started = time.monotonic()
        with pytest.raises(QueryExecutionError) as caught:
            engine.execute_sql("SELECT 1")
        # far below pool_timeout: the wait is connect_timeout, not the pool's 120 s
        assert time.monotonic() - started < 60
    finally:
        engine.close()
    message = str(caught.value)
    assert "cannot connect to PostgreSQL at 127.0.0.1:" in message
    assert "refused" in message.lower()
    assert "SQL:" not in message  # no empty SQL and parameter lines
    assert caught.value.__cause__ is not None


def test_connect_timeout_must_be_positive(pg_url: str) -> None:
    with pytest.raises(ConfigurationError, match="connect_timeout"):
        create_engine(pg_url, connect_timeout=0)
