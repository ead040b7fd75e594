"""create_engine()'s options: each database takes its own, with checked values, and anything
else is a ConfigurationError naming the option, raised before a driver is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempest_typed import ConfigurationError, create_engine
from tempest_typed.engine.drivers.mysql import PyMySQLDriver
from tempest_typed.engine.drivers.psycopg import PsycopgDriver
from tempest_typed.engine.drivers.sqlite import SQLiteDriver


@pytest.fixture
def no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every driver constructor fail the test: the options are refused before one runs."""
    def constructed(self: object, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"{type(self).__name__} was constructed")

    for cls in (PsycopgDriver, PyMySQLDriver, SQLiteDriver):
        monkeypatch.setattr(cls, "__init__", constructed)


@pytest.mark.parametrize(("query", "says"), [
    ("busy_timeout=abc", "busy_timeout='abc'"),
    ("busy_timeout=-1", "seconds >= 0"),
    ("busy_timeout=nan", "seconds >= 0"),
    ("journal_mode=fast", "delete, truncate, persist, memory, wal, off"),
    ("journal_mode=wal;DROP TABLE x", "delete, truncate, persist, memory, wal, off"),
    ("synchronous=sometimes", "off, normal, full, extra"),
    ("synchronous=off;PRAGMA x", "off, normal, full, extra"),
    ("journal_mod=wal", "busy_timeout, journal_mode, synchronous"),
])
def test_a_bad_sqlite_url_option_names_the_option_and_the_accepted_values(
        no_driver: None, tmp_path: Path, query: str, says: str) -> None:
    option = query.split("=", 1)[0]
    with pytest.raises(ConfigurationError) as info:
        create_engine(f"sqlite:///{tmp_path / 'x.db'}?{query}")
    assert option in str(info.value) and says in str(info.value)


def test_journal_mode_on_an_in_memory_database_is_refused(no_driver: None) -> None:
    with pytest.raises(ConfigurationError, match=r"journal_mode.*:memory:"):
        create_engine("sqlite://:memory:?journal_mode=wal")


@pytest.mark.parametrize("options", [
    {"busy_timeout": "abc"}, {"busy_timeout": -1}, {"busy_timeout": True},
    {"journal_mode": "wal; PRAGMA x"}, {"synchronous": "maybe"},
    {"pool_size": 0}, {"pool_size": "3"}, {"pool_timeout": 0}, {"pool_timeout": "x"},
    {"connect_args": ["timeout"]},
])
def test_a_bad_keyword_value_is_refused(no_driver: None, tmp_path: Path,
                                        options: dict[str, Any]) -> None:
    (name,) = options
    with pytest.raises(ConfigurationError, match=name):
        create_engine(f"sqlite:///{tmp_path / 'x.db'}", **options)


def test_good_sqlite_options_reach_the_connection(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}?journal_mode=TRUNCATE&synchronous=normal"
    with create_engine(url, busy_timeout=2) as engine:
        assert engine.execute_sql("PRAGMA journal_mode").scalar() == "truncate"
        assert engine.execute_sql("PRAGMA synchronous").scalar() == 1
        assert engine.execute_sql("PRAGMA busy_timeout").scalar() == 2000


@pytest.mark.parametrize("url", [
    "postgresql://postgres@127.0.0.1/test_nothing",
    "mysql://root@127.0.0.1/test_nothing",
    "mariadb://root@127.0.0.1/test_nothing",
])
@pytest.mark.parametrize("option", ["busy_timeout", "journal_mode", "synchronous"])
def test_an_option_sqlite_owns_is_refused_by_the_servers_naming_sqlite(
        no_driver: None, url: str, option: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        create_engine(url, **{option: 5})
    assert f"{option} is an option of SQLite" in str(info.value)
    with pytest.raises(ConfigurationError) as info:
        create_engine(f"{url}?{option}=5")
    assert f"{option} is an option of SQLite" in str(info.value)


@pytest.mark.parametrize("url", [
    "postgresql://postgres@127.0.0.1/test_nothing",
    "mysql://root@127.0.0.1/test_nothing",
    "sqlite://:memory:",
])
def test_an_unknown_keyword_is_refused_listing_what_the_database_takes(
        no_driver: None, url: str) -> None:
    with pytest.raises(ConfigurationError, match=r"unknown option 'pool_sise'.*pool_size"):
        create_engine(url, pool_sise=3)


@pytest.mark.parametrize(("url", "option"), [
    ("postgresql://postgres@127.0.0.1/test_nothing?sslmod=disable", "sslmod"),
    ("mysql://root@127.0.0.1/test_nothing?chrset=utf8mb4", "chrset"),
    ("mysql://root@127.0.0.1/test_nothing?sslmode=disable", "sslmode"),
])
def test_an_unknown_url_option_of_a_server_is_refused(no_driver: None, url: str,
                                                      option: str) -> None:
    with pytest.raises(ConfigurationError, match=f"unknown option '{option}'"):
        create_engine(url)


def test_a_create_engine_keyword_in_the_url_says_where_it_goes(no_driver: None) -> None:
    with pytest.raises(ConfigurationError, match=r"create_engine\(url, pool_size=\.\.\.\)"):
        create_engine("postgresql://postgres@127.0.0.1/test_nothing?pool_size=3")


def test_the_drivers_own_url_options_are_still_taken(pg_url: str, mysql_url: str) -> None:
    joiner = "&" if "?" in pg_url else "?"
    with create_engine(f"{pg_url}{joiner}application_name=tempest_options") as engine:
        assert engine.execute_sql("SHOW application_name").scalar() == "tempest_options"
    with create_engine(f"{mysql_url}?charset=utf8mb4") as engine:
        assert engine.execute_sql("SELECT 1").scalar() == 1


@pytest.mark.parametrize(("url", "name"), [
    ("sqlite:///x.db", "timeout"), ("sqlite:///x.db", "isolation_level"),
    ("sqlite:///x.db", "check_same_thread"),
    ("postgresql://postgres@127.0.0.1/test_nothing", "autocommit"),
    ("mysql://root@127.0.0.1/test_nothing", "autocommit"),
])
def test_a_connect_arg_the_engine_sets_itself_is_refused(no_driver: None, url: str,
                                                         name: str) -> None:
    with pytest.raises(ConfigurationError, match=f"the engine sets {name} itself"):
        create_engine(url, connect_args={name: 1})


def test_a_mysql_url_option_of_the_wrong_type_is_a_configuration_error(mysql_url: str) -> None:
    # URL options are strings; PyMySQL compared "abc" with a number and raised TypeError.
    with create_engine(f"{mysql_url}?connect_timeout=abc") as engine, \
            pytest.raises(ConfigurationError, match="connect_args") as info:
        engine.execute_sql("SELECT 1")
    assert isinstance(info.value.__cause__, TypeError)
