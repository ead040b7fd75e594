"""The pool hands out the connection given back last: a program using one connection at a
time stays on one, however many the pool grew to (psycopg_pool's own order is the oldest
first, which rotated such a program through all of them, on a cold backend each statement;
the pool of PyMySQL, asyncmy and sqlite3 connections is a stack already). Both engines,
PostgreSQL and MySQL/MariaDB (SQLite has no server-side connection to name)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import pytest

pytestmark = pytest.mark.asyncio

CREATE_MODELS = False


def whoami(db: Any) -> str:
    if db.dialect.name == "sqlite":
        pytest.skip("SQLite has no server-side connection to name")
    return ("SELECT pg_backend_pid()" if db.dialect.name == "postgresql"
            else "SELECT CONNECTION_ID()")


async def test_one_user_at_a_time_stays_on_the_connection_it_gave_back_last(db: Any) -> None:
    sql = whoami(db)
    async with AsyncExitStack() as stack:  # three at once: the pool grows to three
        held = [await stack.enter_async_context(db.session()) for _ in range(3)]
        ids = [(await s.execute_sql(sql)).scalar() for s in held]
    assert len(set(ids)) == 3
    seen = [(await db.execute_sql(sql)).scalar() for _ in range(6)]
    assert len(set(seen)) == 1, seen
    async with db.session() as session:
        assert (await session.execute_sql(sql)).scalar() == seen[-1]
