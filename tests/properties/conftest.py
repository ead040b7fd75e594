"""Engines on the three databases, shared by every example of a session (tables are not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tempest_typed import Engine, create_engine


@pytest.fixture(scope="session")
def engines(pg_url: str, mysql_url: str,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Engine]]:
    """One engine per database: PostgreSQL, MariaDB/MySQL and SQLite."""
    sqlite_path: Path = tmp_path_factory.mktemp("properties") / "differential.db"
    opened = {
        "postgresql": create_engine(pg_url, pool_size=2),
        "mysql": create_engine(mysql_url, pool_size=2),
        "sqlite": create_engine(f"sqlite:///{sqlite_path}", pool_size=2),
    }
    try:
        yield opened
    finally:
        for engine in opened.values():
            engine.close()
