"""A setting execute_sql() changes for the session (SET lock_timeout, SET @v, SET ROLE, a
PRAGMA of a file database), a temporary table, a session-level advisory lock, set_config() or
a variable assigned in a select is not inherited by the next user of the pooled connection:
that connection is closed, not pooled, when the session ends. Settings that end with their
transaction stay pooled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempest_typed import create_engine
from tempest_typed.engine.drivers.base import DriverRules


def _probe(dialect: str) -> tuple[str, str, object]:
    """(the SET, the query that reads it, what it reads when nothing was set)."""
    if dialect == "postgresql":
        return ("SET application_name = 'tempest-session-probe'",
                "SELECT current_setting('application_name')", "")
    if dialect == "sqlite":  # each connection is opened with foreign keys on
        return "PRAGMA foreign_keys = OFF", "PRAGMA foreign_keys", 1
    return "SET @tempest_session_probe = 42", "SELECT @tempest_session_probe", None


@pytest.mark.asyncio
async def test_a_session_setting_is_not_inherited_through_the_pool(db: Any) -> None:
    set_it, read_it, unset = _probe(db.dialect.name)
    async with db.session() as session:
        await session.execute_sql(set_it)
        assert (await session.execute_sql(read_it)).scalar() != unset
    for _ in range(3):  # whichever pooled connection comes next
        async with db.session() as session:
            assert (await session.execute_sql(read_it)).scalar() == unset
    await db.execute_sql(set_it)  # the engine's own session, once
    assert (await db.execute_sql(read_it)).scalar() == unset


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
                        "USE other", "LISTEN jobs", "PREPARE p AS SELECT 1",
                        "LOCK TABLES t WRITE", "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
                        "CREATE TEMP TABLE t (x int)", "create temporary table t (x int)",
                        "SELECT pg_advisory_lock(1)", "select pg_try_advisory_lock_shared(1)",
                        "SELECT GET_LOCK('k', 0)", "SELECT set_config('a.b', 'c', false)",
                        "SELECT @v := 1", "SELECT 1 INTO @v"):
            assert changes_session(changed), changed
        for kept in ("SELECT pg_advisory_xact_lock(1)", "SELECT 'temp'", "CREATE TABLE t (x int)"):
            assert not changes_session(kept), kept
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
        assert rules.changes_session("ATTACH DATABASE 'x.db' AS x")
        assert rules.changes_session("CREATE TEMP TABLE t (x)")
        assert not rules.changes_session("CREATE TABLE t (x)")
        # in memory the one connection is the database: it is kept (documented)
        assert not memory._driver.changes_session("PRAGMA foreign_keys = OFF")
    finally:
        engine.dispose()
        memory.dispose()


RUNS = object()  #: the query only has to run


def _leftovers(dialect: str) -> tuple[list[str], list[tuple[str, object]]]:
    """(statements that leave something on their connection, (a query, what it reads on a
    connection without it))."""
    temp = ("CREATE TEMPORARY TABLE tempest_session_tmp (x int)",)
    if dialect == "postgresql":
        return ([*temp, "SELECT pg_advisory_lock(424242)",
                 "SELECT set_config('application_name', 'tempest-leak', false)"],
                [("SELECT count(*) FROM pg_tables WHERE tablename = 'tempest_session_tmp'", 0),
                 ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242"
                  " AND pid = pg_backend_pid()", 0),
                 ("SELECT current_setting('application_name')", "")])
    if dialect == "sqlite":
        return ([*temp], [("SELECT count(*) FROM sqlite_temp_master", 0)])
    return ([*temp, "SELECT GET_LOCK('tempest_session_lock', 0)", "SELECT @tempest_v := 7"],
            [(temp[0], RUNS),  # MariaDB lists no temporary table: making it again must work
             ("SELECT IS_USED_LOCK('tempest_session_lock') = CONNECTION_ID()", None),
             ("SELECT @tempest_v", None)])


@pytest.mark.asyncio
async def test_what_a_statement_leaves_on_its_connection_is_not_inherited(db: Any) -> None:
    leave, reads = _leftovers(db.dialect.name)
    async with db.session() as session:
        for sql in leave:
            await session.execute_sql(sql)
    for _ in range(3):  # whichever pooled connection comes next
        async with db.session() as session:
            for query, clean in reads:
                result = await session.execute_sql(query)
                if clean is not RUNS:
                    assert result.scalar() in (clean, 0), query
