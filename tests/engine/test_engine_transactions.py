"""Transactions, sessions and savepoints on each database; the UPDATE/DELETE guard; closing."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from tempest_typed import (
    ConfigurationError,
    Engine,
    IntegrityError,
    QueryExecutionError,
    TempestError,
    ValidationError,
    create_engine,
    delete,
    insert,
    select,
    update,
)

from .conftest import Fresh, Item


def names(engine: Engine) -> list[str]:
    return sorted(engine.execute(select(Item, ["name"])).scalars())


class Boom(Exception):
    pass


# -- commit and rollback ---------------------------------------------------------------------

def test_a_transaction_commits_when_the_block_ends(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "a"}))
        tx.execute(insert(Item).values({"name": "b"}))
        assert tx.in_transaction
        assert sorted(tx.execute(select(Item, ["name"])).scalars()) == ["a", "b"]
    assert names(engine) == ["a", "b"]


def test_a_transaction_is_not_seen_by_others_before_it_commits(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "a"}))
        if engine.dialect.name != "sqlite":  # SQLite's WAL readers see the last commit
            assert names(engine) == []
    assert names(engine) == ["a"]


def test_any_exception_rolls_the_transaction_back_and_propagates(fresh: Fresh) -> None:
    engine = fresh(Item)
    with pytest.raises(Boom), engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "a"}))
        raise Boom
    assert names(engine) == []


def test_a_session_commits_each_execute_on_its_own(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.session() as session:
        session.execute(insert(Item).values({"name": "a"}))
        assert not session.in_transaction
        assert names(engine) == ["a"]  # another connection already sees it
        with pytest.raises(IntegrityError):
            session.execute(insert(Item).values({"name": "a"}))
        session.execute(insert(Item).values({"name": "b"}))  # the session is still usable
    assert names(engine) == ["a", "b"]


def test_a_session_transaction_commits_or_rolls_back(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.session() as session:
        with session.transaction():
            session.execute(insert(Item).values({"name": "kept"}))
        with pytest.raises(Boom), session.transaction():
            session.execute(insert(Item).values({"name": "lost"}))
            raise Boom
        session.execute(insert(Item).values({"name": "after"}))
    assert names(engine) == ["after", "kept"]


def test_closing_a_session_inside_a_transaction_rolls_it_back(fresh: Fresh) -> None:
    engine = fresh(Item)
    session = engine.session()
    cm = session.transaction()
    cm.__enter__()
    session.execute(insert(Item).values({"name": "a"}))
    session.close()
    assert names(engine) == []
    with pytest.raises(TempestError, match="closed"):
        session.execute(select(Item))


# -- savepoints ------------------------------------------------------------------------------

def test_a_nested_transaction_is_a_savepoint_rolled_back_alone(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "outer"}))
        with pytest.raises(Boom), tx.transaction():
            tx.execute(insert(Item).values({"name": "inner"}))
            raise Boom
        with tx.transaction():
            tx.execute(insert(Item).values({"name": "inner kept"}))
            with pytest.raises(IntegrityError), tx.transaction():
                tx.execute(insert(Item).values({"name": "outer"}))  # fails in a savepoint
        tx.execute(insert(Item).values({"name": "last"}))  # the transaction is still usable
    assert names(engine) == ["inner kept", "last", "outer"]


def test_a_failing_outer_transaction_undoes_its_released_savepoints(fresh: Fresh) -> None:
    engine = fresh(Item)
    with pytest.raises(Boom), engine.transaction() as tx:
        with tx.transaction():
            tx.execute(insert(Item).values({"name": "inner"}))
        raise Boom
    assert names(engine) == []


def test_a_savepoint_cannot_set_isolation_or_read_only(fresh: Fresh) -> None:
    engine = fresh(Item)
    with engine.transaction() as tx:
        with pytest.raises(ConfigurationError, match="savepoint"), tx.transaction(read_only=True):
            pass
        with pytest.raises(ConfigurationError, match="savepoint"), \
                tx.transaction(isolation="serializable"):
            pass


# -- isolation and read-only -----------------------------------------------------------------

def test_repeatable_read_sees_one_snapshot_and_read_committed_sees_commits(
        fresh: Fresh) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values({"name": "a", "qty": 1}))
    bump = update(Item).set({"qty": 2}).where({"name": "a"})
    read = select(Item, ["qty"]).where({"name": "a"})
    if engine.dialect.name == "sqlite":
        # One writer at a time and snapshot reads: every level behaves as serializable.
        with engine.transaction(isolation="repeatable read") as tx:
            assert tx.execute(read).scalar() == 1
        return
    with engine.transaction(isolation="repeatable read") as tx:
        assert tx.execute(read).scalar() == 1
        engine.execute(bump)
        assert tx.execute(read).scalar() == 1
    engine.execute(update(Item).set({"qty": 1}).where({"name": "a"}))
    with engine.transaction(isolation="read committed") as tx:
        assert tx.execute(read).scalar() == 1
        engine.execute(bump)
        assert tx.execute(read).scalar() == 2


def test_isolation_applies_to_one_transaction_only(fresh: Fresh) -> None:
    engine = fresh(Item)
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite has one isolation level")
    query = {  # MySQL 8 renamed tx_isolation; MariaDB 10 knows only the old name
        "postgresql": "SHOW transaction_isolation",
        "mysql": "SELECT @@transaction_isolation",
        "mariadb": "SELECT @@tx_isolation",
    }[engine.dialect.name]
    with engine.session() as session:
        with session.transaction(isolation="serializable"):
            if engine.dialect.name == "postgresql":
                assert session.execute_sql(query).scalar() == "serializable"
        with session.transaction():
            assert session.execute_sql(query).scalar().lower().replace("-", " ") == "read committed"


def test_an_unknown_isolation_level_is_refused(fresh: Fresh) -> None:
    engine = fresh(Item)
    with pytest.raises(ConfigurationError, match="isolation level 'snapshot'"), \
            engine.transaction(isolation="snapshot"):
        pass


def test_a_read_only_transaction_refuses_writes_and_the_connection_writes_after(
        fresh: Fresh) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values({"name": "a"}))
    with engine.session() as session:
        with pytest.raises(QueryExecutionError), session.transaction(read_only=True):
            assert session.execute(select(Item, ["name"])).scalars() == ["a"]
            session.execute(insert(Item).values({"name": "b"}))
        session.execute(insert(Item).values({"name": "c"}))
    assert names(engine) == ["a", "c"]


# -- the guard -------------------------------------------------------------------------------

def test_update_or_delete_without_where_is_refused_before_reaching_the_database(
        fresh: Fresh, caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values([{"name": "a"}, {"name": "b"}]))
    caplog.set_level(logging.INFO, logger="tempest_typed.sql")
    with pytest.raises(ValidationError, match=r"update\(Item\) has no where\(\).*unguarded"):
        engine.execute(update(Item).set({"qty": 9}))
    with pytest.raises(ValidationError, match=r"delete\(Item\) has no where\(\).*unguarded"):
        engine.execute(delete(Item))
    with engine.transaction() as tx, pytest.raises(ValidationError):
        tx.execute(delete(Item))
    assert not [r for r in caplog.records if "UPDATE" in r.getMessage()
                or "DELETE" in r.getMessage()]
    assert names(engine) == ["a", "b"]


def test_unguarded_update_and_delete_change_every_row(fresh: Fresh) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values([{"name": "a"}, {"name": "b"}]))
    assert engine.execute(update(Item).set({"qty": 9}).unguarded()).rows_affected() == 2
    assert engine.execute(delete(Item).unguarded()).rows_affected() == 2
    assert names(engine) == []


# -- nothing half-written --------------------------------------------------------------------

def test_a_failed_statement_mid_transaction_leaves_nothing_written(fresh: Fresh) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values({"name": "taken"}))
    with pytest.raises(IntegrityError), engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "first"}))
        tx.execute(update(Item).set({"qty": 5}).where({"name": "taken"}))
        tx.execute(insert(Item).values({"name": "taken"}))
        tx.execute(insert(Item).values({"name": "never"}))
    assert names(engine) == ["taken"]
    assert engine.execute(select(Item, ["qty"])).scalar() == 0


def test_a_multi_row_insert_that_fails_writes_no_row(fresh: Fresh) -> None:
    engine = fresh(Item)
    with pytest.raises(IntegrityError):
        engine.execute(insert(Item).values([{"name": "x"}, {"name": "y"}, {"name": "x"}]))
    assert names(engine) == []


def test_an_insert_split_in_chunks_is_all_or_nothing(fresh: Fresh) -> None:
    engine = fresh(Item)
    per_row = 3  # name, qty, note: the identity key is left to the database
    n = engine.dialect.max_params // per_row + 10
    rows = [{"name": f"n{i}"} for i in range(n)]
    assert engine.execute(insert(Item).values(rows)).rows_affected() == n
    assert engine.execute(select(Item, ["id"])).rows_affected() == n
    engine.execute(delete(Item).unguarded())
    rows[-1] = {"name": "n0"}  # the last chunk fails after the first one went in
    with pytest.raises(IntegrityError):
        engine.execute(insert(Item).values(rows))
    assert names(engine) == []


def test_chunks_bind_each_row_once_and_return_rows_in_order(fresh: Fresh) -> None:
    engine = fresh(Item)
    if engine.dialect.name == "mysql":
        pytest.skip("MySQL 8 has no INSERT ... RETURNING")
    n = engine.dialect.max_params // 3 + 10
    rows = [{"name": f"n{i}", "qty": i, "note": None} for i in range(n)]
    got = engine.execute(insert(Item).values(rows).returning("name", "qty")).all()
    assert [(r.name, r.qty) for r in got] == [(f"n{i}", i) for i in range(n)]


# -- SQLite: BEGIN IMMEDIATE and the busy timeout ----------------------------------------------

def test_sqlite_write_transactions_serialize_instead_of_failing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'serial.db'}"
    with create_engine(url) as setup:
        setup.create_all(Item)
        setup.execute(insert(Item).values({"name": "counter"}))
    errors: list[BaseException] = []
    workers, rounds = 4, 40

    def work() -> None:
        # A deliberate read-modify-write: it only adds up if transactions never overlap.
        with create_engine(url, busy_timeout=30) as engine:
            try:
                for _ in range(rounds):
                    with engine.transaction() as tx:
                        qty = tx.execute(select(Item, ["qty"]).where({"name": "counter"})).scalar()
                        tx.execute(update(Item).set({"qty": qty + 1}).where({"name": "counter"}))
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with create_engine(url) as engine:
        assert engine.execute(select(Item, ["qty"])).scalar() == workers * rounds


def test_sqlite_connections_wait_for_the_write_lock(tmp_path: Path) -> None:
    with create_engine(f"sqlite:///{tmp_path / 'busy.db'}?busy_timeout=7") as engine:
        assert engine.execute_sql("PRAGMA busy_timeout").scalar() == 7000
        with engine.session() as session:
            session.execute_sql("CREATE TABLE eng_t (x INTEGER)")
            with session.transaction():
                assert session._conn.in_transaction
                # BEGIN IMMEDIATE took the write lock: a second writer cannot begin.
                other = create_engine(f"sqlite:///{tmp_path / 'busy.db'}?busy_timeout=0.05")
                with pytest.raises(QueryExecutionError, match="locked"), other.transaction():
                    pass
                other.close()


# -- closing ---------------------------------------------------------------------------------

def test_a_closed_engine_refuses_new_work(engine: Engine) -> None:
    engine.execute_sql("SELECT 1")
    engine.close()
    with pytest.raises(ConfigurationError, match="the engine is closed"):
        engine.execute_sql("SELECT 1")
    engine.close()  # closing twice is harmless


def test_closing_the_engine_closes_its_pooled_connections(engine: Engine) -> None:
    with engine.session() as a, engine.session() as b:
        a.execute_sql("SELECT 1")
        b.execute_sql("SELECT 1")
        conns = [a._conn, b._conn]
    engine.close()
    if engine.dialect.name == "postgresql":
        assert all(c.closed for c in conns)
    elif engine.dialect.name == "sqlite":
        for c in conns:
            with pytest.raises(Exception, match="closed"):
                c.execute("SELECT 1")
    else:
        assert not any(c.open for c in conns)
