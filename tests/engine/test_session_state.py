"""A setting execute_sql() changes for the session (SET lock_timeout, SET @v, SET ROLE) is
not inherited by the next user of the pooled connection: that connection is closed, not
pooled, when the session ends. Settings that end with their transaction stay pooled."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import create_engine


def _probe(dialect: str) -> tuple[str, str, object]:
    """(the SET, the query that reads it, what it reads when nothing was set)."""
    if dialect == "postgresql":
        return ("SET application_name = 'tempest-session-probe'",
                "SELECT current_setting('application_name')", None)
    return "SET @tempest_session_probe = 42", "SELECT @tempest_session_probe", None


@pytest.mark.asyncio
async def test_a_session_setting_is_not_inherited_through_the_pool(db: Any) -> None:
    if db.dialect.name == "sqlite":
        pytest.skip("SQLite has no session settings set by SQL (PRAGMA is the engine's)")
    set_it, read_it, _ = _probe(db.dialect.name)
    async with db.session() as session:
        await session.execute_sql(set_it)
        assert (await session.execute_sql(read_it)).scalar() not in (None, "")
    for _ in range(3):  # whichever pooled connection comes next
        async with db.session() as session:
            got = (await session.execute_sql(read_it)).scalar()
            assert got in (None, ""), got
    await db.execute_sql(set_it)  # the engine's own session, once
    assert (await db.execute_sql(read_it)).scalar() in (None, "")


def test_settings_that_end_with_their_transaction_keep_the_connection() -> None:
    engine = create_engine("sqlite://:memory:")
    try:
        rules = engine._driver  # the rule is every database's
        for kept in ("SET LOCAL lock_timeout = '5s'", "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                     "SET CONSTRAINTS ALL DEFERRED", "SET STATEMENT max_statement_time=1 FOR SELECT 1",
                     "SELECT 1", "UPDATE settings SET x = 1", "-- SET x\nSELECT 1"):
            assert not rules.changes_session(kept), kept
        for changed in ("  /* c */ set search_path = public", "RESET ALL", "SET ROLE app",
                        "SET SESSION sql_mode = ''", "set @v = 1", "SET NAMES utf8mb4"):
            assert rules.changes_session(changed), changed
    finally:
        engine.dispose()
