"""A statement on a table the database does not have, or naming a column its table lacks,
says so with the way out (create_all, check_schema), on every database and both engines."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tempest_typed import (
    AsyncEngine,
    Model,
    QueryExecutionError,
    create_async_engine,
    create_engine,
    insert,
    select,
)

MISSING_TABLE = (
    "hint: the database has no such table; engine.create_all(Model) creates it (or the URL "
    "names another database or schema than the one that has it)"
)
MISSING_COLUMN = (
    "hint: the table in the database has no such column; engine.check_schema(Model) lists "
    "how it differs from its model (create_all() does not alter an existing table)"
)


class Never(Model, table="eng_hint_never_created"):
    id: int
    name: str


class Narrow(Model, table="eng_hint_narrow"):
    """A model whose table was made without its `name` column."""

    id: int
    name: str


@pytest.fixture
def url(url: str) -> Iterator[str]:
    """Each database in turn (tests/conftest.py's url), with the tables these tests read."""
    with create_engine(url) as engine:
        engine.drop_all(Never, Narrow)
        engine.execute_sql("CREATE TABLE eng_hint_narrow (id INTEGER PRIMARY KEY)")
        try:
            yield url
        finally:
            engine.drop_all(Never, Narrow)


def _hint_of(error: QueryExecutionError) -> str:
    # The hint is the message's last line, before the SQL and its parameters.
    return error.message.splitlines()[-1].strip()


STATEMENTS = [
    ("a select from the table", lambda: select(Never), MISSING_TABLE),
    ("an insert into it", lambda: insert(Never).values({"id": 1, "name": "a"}), MISSING_TABLE),
    ("a select of the column", lambda: select(Narrow), MISSING_COLUMN),
    ("a where on it", lambda: select(Narrow, ["id"]).where({"name": "a"}), MISSING_COLUMN),
    ("an insert of it", lambda: insert(Narrow).values({"id": 1, "name": "a"}), MISSING_COLUMN),
]

#: Before Python 3.12 sqlite3 cannot turn off SQLite's reading of an unknown double-quoted
#: name as a string (docs/reference.md says so): there a select of the missing column reads
#: the text 'name' instead of failing.
_DQS_OFF = sys.version_info >= (3, 12) and hasattr(sqlite3, "SQLITE_DBCONFIG_DQS_DML")


def statements(url: str) -> list[tuple[str, Any, str]]:
    if url.startswith("sqlite") and not _DQS_OFF:
        return [s for s in STATEMENTS if not s[0].startswith(("a select of", "a where"))]
    return STATEMENTS


def test_each_engine_adds_the_hint(url: str) -> None:
    with create_engine(url) as engine:
        for what, build, hint in statements(url):
            with pytest.raises(QueryExecutionError) as caught:
                engine.execute(build())
            assert _hint_of(caught.value) == hint, what
            assert f"{hint}\n  SQL: " in str(caught.value)
            assert caught.value.__cause__ is not None
        with pytest.raises(QueryExecutionError) as caught:
            engine.execute_sql("SELECT phone FROM eng_hint_narrow")
        assert _hint_of(caught.value) == MISSING_COLUMN


def test_each_async_engine_adds_the_hint(url: str) -> None:
    async def run() -> None:
        engine: AsyncEngine = create_async_engine(url)
        try:
            for what, build, hint in statements(url):
                with pytest.raises(QueryExecutionError) as caught:
                    await engine.execute(build())
                assert _hint_of(caught.value) == hint, what
                assert caught.value.__cause__ is not None
        finally:
            await engine.dispose()

    asyncio.run(run())


def test_other_errors_carry_no_hint(url: str) -> None:
    with create_engine(url) as engine, pytest.raises(QueryExecutionError) as caught:
        engine.execute_sql("SELECT * FROM")
    assert "hint: the" not in str(caught.value)


