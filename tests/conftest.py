"""Shared fixtures: the three real databases, and Hypothesis profiles.

PostgreSQL and MariaDB are reached at TEMPEST_PG_URL and TEMPEST_MYSQL_URL (defaults: the
local servers that `.ci/run` starts). A test that needs a server that is not running skips
with a line saying how to start it; in CI (CI=true) it fails instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tempest_typed import Engine, create_engine

PG_URL = os.environ.get("TEMPEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("TEMPEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

settings.register_profile(
    "ci", max_examples=300, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "dev", max_examples=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "deep", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if IN_CI else "dev"))

_HOW_TO_START = {
    "postgresql": "start PostgreSQL (`bash .ci/run` starts it) or point TEMPEST_PG_URL at one",
    "mysql": "start MariaDB/MySQL (`bash .ci/run` starts it) or point TEMPEST_MYSQL_URL at one",
}
_reachable: dict[str, str | None] = {}


def _check(name: str, url: str) -> None:
    """Skip (or, in CI, fail) when the server behind `url` cannot be reached."""
    if name not in _reachable:
        try:
            engine = create_engine(url, pool_size=1, pool_timeout=5)
            try:
                engine.execute_sql("SELECT 1")
            finally:
                engine.close()
            _reachable[name] = None
        except Exception as exc:  # any failure to connect means: not reachable
            _reachable[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    error = _reachable[name]
    if error is not None:
        message = f"{name} is not reachable at {url} ({error}); {_HOW_TO_START[name]}"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL URL, once the server is known to answer."""
    _check("postgresql", PG_URL)
    return PG_URL


@pytest.fixture(scope="session")
def mysql_url() -> str:
    """The MySQL/MariaDB URL, once the server is known to answer."""
    _check("mysql", MYSQL_URL)
    return MYSQL_URL


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite database file."""
    return f"sqlite:///{tmp_path / 'test.db'}"


def database_url(request: pytest.FixtureRequest, database: str, tmp_path: Path) -> str:
    """The URL of `database` ("postgresql", "mysql", "sqlite") for this test: the `pg_url` and
    `mysql_url` of the test's directory (tests/engine/ gives each run a schema and a database
    of its own), or a fresh SQLite file; for fixtures that take some of the databases."""
    if database == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    if database == "mysql":
        return str(request.getfixturevalue("mysql_url"))
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture(params=["postgresql", "mysql", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each of the three real databases in turn (database_url)."""
    return database_url(request, request.param, tmp_path)


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    """A blocking engine on each of the three real databases in turn (`url`)."""
    eng = create_engine(url)
    try:
        yield eng
    finally:
        eng.close()
