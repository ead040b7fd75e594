"""A setting execute_sql() changes for the session (SET lock_timeout, SET @v, SET ROLE, a
PRAGMA of a file database) is not inherited by the next user of the pooled connection: that connection is closed, not
pooled, when the session ends. Settings that end with their transaction stay pooled."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tempest_typed import create_engine, insert, select, update
from tempest_typed.engine.drivers.base import DriverRules

from .conftest import Item


def _probe(dialect: str) -> tuple[str, str, object]:
    """(the SET, the query that reads it, what it reads when nothing was set)."""
    if dialect == "postgresql":
        return ("SET application_name = 'tempest-session-probe'",
                "SELECT current_setting('application_name')", "")
    if dialect == "sqlite":  # each connection is opened with foreign keys on
        return "PRAGMA foreign_keys = OFF", "PRAGMA foreign_keys", 1
    return "SET @tempest_session_probe = 42", "SELECT @tempest_session_probe", None


@pytest.mark.asyncio
async def test_a_session_setting_is_not_inherited_through_the_pool(
        db: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    set_it, read_it, unset = _probe(db.dialect.name)
    async with db.session() as session:
        await session.execute_sql(set_it)
        assert (await session.execute_sql(read_it)).scalar() != unset
    for _ in range(3):  # whichever pooled connection comes next
        async with db.session() as session:
            assert (await session.execute_sql(read_it)).scalar() == unset
    await db.execute_sql(set_it)  # the engine's own session, once
    assert (await db.execute_sql(read_it)).scalar() == unset
    # the same settings made by a function or an assignment in a SELECT
    by_calls = {"postgresql": ["SELECT set_config('application_name', 'tempest-session-probe', "
                               "false)"],
                "sqlite": []}.get(db.dialect.name, ["SELECT @tempest_session_probe := 42",
                                                    "SELECT 42 INTO @tempest_session_probe"])
    for by_call in by_calls:
        async with db.session() as session:
            await session.execute_sql(by_call)
            assert (await session.execute_sql(read_it)).scalar() != unset
        for _ in range(3):
            async with db.session() as session:
                assert (await session.execute_sql(read_it)).scalar() == unset
    # closing the connection is the engine's decision, not a driver's warning on stderr
    # (psycopg_pool warned "discarding closed connection" for each)
    assert [r.getMessage() for r in caplog.records] == []


def test_settings_that_end_with_their_transaction_keep_the_connection() -> None:
    engine = create_engine("sqlite://:memory:")
    try:
        def changes_session(sql: str) -> bool:  # the rule of PostgreSQL and MySQL
            return DriverRules.changes_session(engine._driver, sql)

        for kept in ("SET LOCAL lock_timeout = '5s'", "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                     "SET CONSTRAINTS ALL DEFERRED", "SET STATEMENT max_statement_time=1 FOR SELECT 1",
                     "SELECT 1", "UPDATE settings SET x = 1", "-- SET x\nSELECT 1"):
            assert not changes_session(kept), kept
        for changed in ("  /* c */ set search_path = public", "RESET ALL", "SET ROLE app",
                        "SET SESSION sql_mode = ''", "set @v = 1", "SET NAMES utf8mb4",
                        "SELECT count(*) INTO @n FROM t", "select 1 into  @v"):
            assert changes_session(changed), changed
    finally:
        engine.dispose()


def test_a_pragma_that_sets_is_told_from_one_that_reads(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'p.db'}")
    memory = create_engine("sqlite://:memory:")
    try:
        rules = engine._driver
        assert rules.changes_session("PRAGMA foreign_keys = OFF")
        assert rules.changes_session("pragma main.cache_size=10")
        assert not rules.changes_session("PRAGMA foreign_keys")
        assert not rules.changes_session("PRAGMA table_info(t)")
        # in memory the one connection is the database: it is kept (documented)
        assert not memory._driver.changes_session("PRAGMA foreign_keys = OFF")
    finally:
        engine.dispose()
        memory.dispose()


@pytest.mark.asyncio
async def test_the_next_transactions_mode_set_in_a_session_stays_with_it(db: Any) -> None:
    # MySQL's SET TRANSACTION outside a transaction sets whichever transaction comes next
    # on the connection: pooled, the next session's writes were refused as READ ONLY
    if db.dialect.name == "sqlite":
        pytest.skip("SQLite has no SET TRANSACTION")
    async with db.session() as session:
        await session.execute_sql("SET TRANSACTION READ ONLY")
    for _ in range(3):  # whichever pooled connection comes next
        await db.execute(insert(Item).values({"name": f"w{_}"}))
        async with db.transaction() as tx:
            await tx.execute(update(Item).set({"qty": 1}).where({"name": f"w{_}"}))
    assert len((await db.execute(select(Item).where({"qty": 1}))).all()) == 3


def _temporary_table(dialect: str) -> str:
    columns = {"postgresql": "id bigint, name text, qty bigint, note text",
               "sqlite": "id integer, name text, qty integer, note text",
               }.get(dialect, "id bigint, name varchar(100), qty bigint, note text")
    return f"CREATE TEMPORARY TABLE eng_items ({columns})"


@pytest.mark.asyncio
async def test_what_a_session_leaves_on_its_connection_is_not_the_next_sessions(db: Any) -> None:
    # a temporary table hides the table of its name: pooled, the next session read the
    # temporary one's (no) rows and wrote into it; MySQL's USE sent the next session's
    # statements to another database
    await db.execute(insert(Item).values({"name": "real"}))
    leave = [_temporary_table(db.dialect.name)]
    if db.dialect.name in ("mysql", "mariadb"):
        leave.append("USE information_schema")
    for statement in leave:
        async with db.session() as session:
            await session.execute_sql(statement)
        for _ in range(3):  # whichever pooled connection comes next
            async with db.session() as session:
                rows = (await session.execute(select(Item, ["name"]))).all()
                assert [r.name for r in rows] == ["real"], statement


@pytest.mark.asyncio
async def test_a_session_lock_ends_with_its_session(db: Any) -> None:
    # a session-level lock (PostgreSQL's advisory lock, MySQL's GET_LOCK) was held by the
    # pooled connection for good
    if db.dialect.name == "sqlite":
        pytest.skip("SQLite has no session locks")
    take, free = {
        "postgresql": ("SELECT pg_advisory_lock(424242)",
                       "SELECT NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                       "AND objid = 424242)"),
    }.get(db.dialect.name, ("SELECT GET_LOCK('tempest_session_lock', 0)",
                            "SELECT IS_FREE_LOCK('tempest_session_lock')"))
    async with db.session() as session:
        await session.execute_sql(take)
    assert (await db.execute_sql(free)).scalar() in (True, 1)
