"""What a refused statement raises: QueryExecutionError with the SQL and parameters, the
integrity kinds with their constraint, LockNotAvailable, and the driver error as __cause__."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import psycopg
import pymysql
import pytest

from tempest_typed import (
    DialectError,
    Engine,
    IntegrityError,
    LockNotAvailable,
    QueryExecutionError,
    create_engine,
    delete,
    insert,
    select,
    update,
)

from .conftest import Child, Fresh, Item, Parent

DRIVER_ERRORS = {"postgresql": psycopg.Error, "mysql": pymysql.Error, "mariadb": pymysql.Error,
                 "sqlite": sqlite3.Error}


def placeholder(engine: Engine) -> str:
    return "?" if engine.dialect.name == "sqlite" else "%s"


def test_a_unique_violation_is_an_integrity_error_naming_its_constraint(fresh: Fresh) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values({"name": "a"}))
    with pytest.raises(IntegrityError) as info:
        engine.execute(insert(Item).values({"name": "a"}))
    error = info.value
    assert error.kind == "unique"
    # What each database says: PostgreSQL and MariaDB name the constraint or index; SQLite
    # names only the columns (kept in the message).
    expected = {"postgresql": "eng_items_name_key", "mariadb": "name", "mysql": "name",
                "sqlite": None}[engine.dialect.name]
    assert error.constraint == expected
    assert "eng_items" in error.message or "name" in error.message
    assert isinstance(error.__cause__, DRIVER_ERRORS[engine.dialect.name])


def test_a_partial_unique_index_is_named_on_the_servers(fresh: Fresh) -> None:
    from datetime import UTC, datetime

    from .conftest import Outbound

    engine = fresh(Outbound)
    when = datetime.now(UTC)
    engine.execute(insert(Outbound).values(Outbound(consumer="c", idempotency_key="k",
                                                    next_attempt_at=when)))
    with pytest.raises(IntegrityError) as info:
        engine.execute(insert(Outbound).values(Outbound(consumer="c", idempotency_key="k",
                                                        next_attempt_at=when)))
    assert info.value.kind == "unique"
    if engine.dialect.name != "sqlite":
        assert info.value.constraint == "outbound_idempotency_unique"


def test_foreign_key_not_null_and_check_violations_say_their_kind(fresh: Fresh) -> None:
    engine = fresh(Parent, Child, Item)
    q, p = engine.dialect.quote, placeholder(engine)
    name = engine.dialect.name

    with pytest.raises(IntegrityError) as info:
        engine.execute(insert(Child).values({"parent_id": 99}))
    assert info.value.kind == "foreign_key"
    assert info.value.constraint == {"postgresql": "eng_children_parent_id_fkey",
                                     "mariadb": "eng_children_ibfk_1",
                                     "mysql": "eng_children_ibfk_1", "sqlite": None}[name]

    engine.execute(insert(Parent).values({"id": 1, "name": "p"}))
    with pytest.raises(IntegrityError) as info:
        # Hand-written SQL: the builder would refuse a value outside the Literal first.
        engine.execute_sql(f"INSERT INTO {q('eng_children')} ({q('parent_id')}, {q('state')}) "
                           f"VALUES ({p}, {p})", [1, "odd"])
    assert info.value.kind == "check"
    assert info.value.constraint == {"postgresql": "eng_children_state_check",
                                     "mariadb": "eng_children.state", "mysql": None,
                                     "sqlite": "state"}.get(name, info.value.constraint)

    with pytest.raises(IntegrityError) as info:
        engine.execute_sql(f"INSERT INTO {q('eng_items')} ({q('name')}, {q('qty')}) "
                           f"VALUES ({p}, 0)", [None])
    assert info.value.kind == "not_null"


def test_the_error_carries_the_sql_and_parameters_with_long_values_cut(fresh: Fresh) -> None:
    engine = fresh(Item)
    long_note = "x" * 5000
    engine.execute(insert(Item).values({"name": "a", "note": long_note}))
    stmt = insert(Item).values({"name": "a", "note": long_note})
    with pytest.raises(IntegrityError) as info:
        engine.execute(stmt)
    error = info.value
    assert error.sql == stmt.compile(engine.dialect).sql
    assert long_note in error.params and "a" in error.params  # the values themselves
    text = str(error)
    assert error.sql in text
    assert long_note not in text and "xxx..." in text and len(text) < 1000


def test_many_parameters_are_summarised_in_the_message(fresh: Fresh) -> None:
    engine = fresh(Item)
    rows = [{"name": f"n{i}"} for i in range(30)] + [{"name": "n0"}]
    with pytest.raises(IntegrityError) as info:
        engine.execute(insert(Item).values(rows))
    assert len(info.value.params) == 31 * 3
    assert "(93 parameters)" in str(info.value)


def test_any_other_refusal_is_a_query_execution_error_with_its_cause(fresh: Fresh) -> None:
    engine = fresh(Item)
    sql = "SELECT no_such_column FROM eng_items"
    with pytest.raises(QueryExecutionError) as info:
        engine.execute_sql(sql)
    assert type(info.value) is QueryExecutionError
    assert info.value.sql == sql and info.value.params == ()
    assert isinstance(info.value.__cause__, DRIVER_ERRORS[engine.dialect.name])


def test_no_wait_meets_a_held_lock_as_lock_not_available(fresh: Fresh) -> None:
    engine = fresh(Item)
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite has no row locks: see the busy-timeout test below")
    engine.execute(insert(Item).values({"name": "held"}))
    lock = select(Item).where({"name": "held"}).for_update()
    with engine.transaction() as holder:
        holder.execute(lock).one()
        with pytest.raises(LockNotAvailable) as info, engine.transaction() as tx:
            tx.execute(select(Item).where({"name": "held"}).for_update(no_wait=True)).all()
        assert "NOWAIT" in info.value.sql.upper()
        assert isinstance(info.value.__cause__, DRIVER_ERRORS[engine.dialect.name])
        # skip_locked passes over the held row instead of failing.
        with engine.transaction() as tx:
            assert tx.execute(select(Item).for_update(skip_locked=True)).all() == []
    # Once the holder commits, the lock is free again.
    with engine.transaction() as tx:
        assert tx.execute(select(Item).for_update(no_wait=True)).one().name == "held"


def test_sqlite_write_lock_held_past_the_busy_timeout_is_lock_not_available(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'locked.db'}"
    with create_engine(url) as holder_engine, \
            create_engine(url + "?busy_timeout=0.1") as impatient:
        holder_engine.create_all(Item)
        with holder_engine.transaction() as holder:
            holder.execute(insert(Item).values({"name": "a"}))
            with pytest.raises(LockNotAvailable, match="busy timeout") as info, \
                    impatient.transaction() as tx:
                tx.execute(insert(Item).values({"name": "b"}))
            assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        assert sorted(holder_engine.execute(select(Item, ["name"])).scalars()) == ["a"]


def test_a_lock_wait_ends_when_the_holder_commits(fresh: Fresh) -> None:
    engine = fresh(Item)
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite has no row locks")
    engine.execute(insert(Item).values({"name": "row", "qty": 0}))
    released = threading.Event()
    got: list[int] = []

    def waiter() -> None:
        with engine.transaction() as tx:
            row = tx.execute(select(Item).where({"name": "row"}).for_update()).one()
            got.append(row.qty)
            released.set()

    with engine.transaction() as holder:
        holder.execute(select(Item).where({"name": "row"}).for_update()).one()
        thread = threading.Thread(target=waiter)
        thread.start()
        assert not released.wait(0.2)  # still blocked behind the holder's lock
        holder.execute(update(Item).set({"qty": 1}).where({"name": "row"}))
    thread.join()
    assert got == [1]  # it saw the committed value


# -- what a dialect cannot express never reaches the database --------------------------------

def test_returning_where_the_dialect_has_none_is_a_dialect_error(fresh: Fresh) -> None:
    engine = fresh(Item)
    name = engine.dialect.name
    engine.execute(insert(Item).values({"name": "a"}))
    if name in ("postgresql", "sqlite"):
        assert engine.execute(update(Item).set({"qty": 1}).where({"name": "a"})
                              .returning("qty")).scalar() == 1
        return
    with pytest.raises(DialectError, match="UPDATE"):
        engine.execute(update(Item).set({"qty": 1}).where({"name": "a"}).returning())
    if name == "mariadb":  # INSERT and DELETE ... RETURNING exist on MariaDB
        assert engine.execute(insert(Item).values({"name": "b"}).returning("name")
                              ).scalar() == "b"
        assert engine.execute(delete(Item).where({"name": "b"}).returning("name")
                              ).scalar() == "b"
    else:
        with pytest.raises(DialectError, match="RETURNING"):
            engine.execute(insert(Item).values({"name": "b"}).returning())
    assert engine.execute(select(Item, ["qty"])).scalars() == [0]
