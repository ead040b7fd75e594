"""Every driver error reaches the user as a QueryExecutionError (or a subclass), the
driver's error as __cause__: at connect, while a new connection is set up, in BEGIN and
COMMIT, and when the parameters do not fit the SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest

from tempest_typed import Engine, QueryExecutionError, create_engine, insert

from .conftest import Fresh, Item


def _read_only_url(path: Path) -> str:
    """A URL opening `path` read-only (an SQLite URI: a chmod does not stop root)."""
    return f"sqlite:///{quote(f'file:{path}?mode=ro', safe='/:')}"


@pytest.fixture
def read_only_db(tmp_path: Path) -> Path:
    path = tmp_path / "ro.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE eng_ro (x INTEGER)")
    conn.close()
    return path


def test_a_read_only_sqlite_file_is_a_query_execution_error_at_connect(
        read_only_db: Path) -> None:
    # The engine sets journal_mode=wal on each new connection: a write the file refuses.
    with create_engine(_read_only_url(read_only_db), connect_args={"uri": True}) as engine, \
            pytest.raises(QueryExecutionError, match="read-only") as info:
        engine.execute_sql("SELECT 1")
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert info.value.sql == "PRAGMA journal_mode = wal"


def test_a_read_only_sqlite_file_refuses_writes_as_query_execution_errors(
        read_only_db: Path) -> None:
    url = _read_only_url(read_only_db) + "?journal_mode=delete"
    with create_engine(url, connect_args={"uri": True}) as engine:
        assert engine.execute_sql("SELECT count(*) FROM eng_ro").scalar() == 0
        with pytest.raises(QueryExecutionError, match="readonly") as info:
            engine.execute_sql("INSERT INTO eng_ro (x) VALUES (1)")
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        with pytest.raises(QueryExecutionError) as info, engine.transaction() as tx:
            tx.execute_sql("INSERT INTO eng_ro (x) VALUES (1)")
        assert isinstance(info.value.__cause__, sqlite3.Error)
        assert engine.execute_sql("SELECT 1").scalar() == 1  # the pool still serves


def test_a_failed_commit_is_a_query_execution_error(fresh: Fresh) -> None:
    engine: Engine = fresh(Item)
    name = engine.dialect.name
    if name != "postgresql":
        pytest.skip("a deferred constraint that fails at COMMIT is PostgreSQL's")
    engine.execute_sql("ALTER TABLE eng_items DROP CONSTRAINT eng_items_name_key")
    engine.execute_sql("ALTER TABLE eng_items ADD CONSTRAINT eng_items_name_key UNIQUE (name) "
                       "DEFERRABLE INITIALLY DEFERRED")
    with pytest.raises(QueryExecutionError) as info, engine.transaction() as tx:
        tx.execute(insert(Item).values([{"name": "a"}, {"name": "a"}]))
    assert info.value.sql == "commit"
    assert info.value.__cause__ is not None
