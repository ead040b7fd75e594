"""create_engine(url): the URL schemes, what a malformed URL says, and a missing driver."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tempest_typed import (
    ConfigurationError,
    QueryExecutionError,
    create_async_engine,
    create_engine,
)
from tempest_typed.engine.url import parse_url


@pytest.mark.parametrize(("url", "backend", "host", "port", "user", "database"), [
    ("postgresql://app@localhost/app", "postgresql", "localhost", None, "app", "app"),
    ("postgres://app:secret@127.0.0.1:5433/db", "postgresql", "127.0.0.1", 5433, "app", "db"),
    ("postgresql+psycopg://u@h/d", "postgresql", "h", None, "u", "d"),
    ("mysql://root@127.0.0.1:3306/test", "mysql", "127.0.0.1", 3306, "root", "test"),
    ("mariadb://root@localhost/test", "mysql", "localhost", None, "root", "test"),
    ("mysql+pymysql://root@localhost/test", "mysql", "localhost", None, "root", "test"),
])
def test_server_urls_are_split_into_their_parts(url: str, backend: str, host: str,
                                                 port: int | None, user: str,
                                                 database: str) -> None:
    parsed = parse_url(url)
    assert (parsed.backend, parsed.host, parsed.port, parsed.user, parsed.database) == (
        backend, host, port, user, database)


def test_a_password_is_decoded_and_never_shown() -> None:
    parsed = parse_url("postgresql://app:p%40ss%2Fword@localhost/app")
    assert parsed.password == "p@ss/word"
    assert "p@ss" not in str(parsed) and "p@ss" not in repr(parsed)


def test_query_options_are_kept() -> None:
    assert parse_url("postgresql://u@h/d?sslmode=disable").options == {"sslmode": "disable"}


@pytest.mark.parametrize(("url", "database"), [
    ("sqlite:///app.db", "app.db"),
    ("sqlite:///dir/app.db", "dir/app.db"),
    ("sqlite:////var/data/app.db", "/var/data/app.db"),
    ("sqlite://:memory:", ":memory:"),
    ("sqlite:///:memory:", ":memory:"),
])
def test_sqlite_urls_name_a_relative_path_an_absolute_path_or_memory(url: str,
                                                                    database: str) -> None:
    parsed = parse_url(url)
    assert (parsed.backend, parsed.database) == ("sqlite", database)


@pytest.mark.parametrize(("url", "says"), [
    ("localhost/app", "has no scheme"),
    ("", "has no scheme"),
    ("oracle://scott@localhost/orcl", "unknown scheme 'oracle'"),
    ("postgresql:///app", "names no host"),
    ("mysql://root@localhost", "names no database"),
    ("mysql://root@localhost:notaport/test", "port"),
    ("sqlite://", "sqlite:///relative/path.db"),
    ("sqlite://relative.db", "sqlite:///relative/path.db"),
])
def test_a_malformed_url_is_refused_with_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match="database URL") as info:
        create_engine(url)
    assert says in str(info.value)


def test_sqlite_memory_engine_runs_statements() -> None:
    with create_engine("sqlite://:memory:") as engine:
        assert engine.dialect.name == "sqlite"
        assert engine.execute_sql("SELECT 1 + 1").scalar() == 2


def test_sqlite_file_engine_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with create_engine(f"sqlite:///{path}") as engine:
        engine.execute_sql("CREATE TABLE eng_t (x INTEGER)")
    assert path.exists()


def test_postgresql_engine_uses_a_psycopg_pool(pg_url: str) -> None:
    from psycopg_pool import ConnectionPool

    with create_engine(pg_url, pool_size=2) as engine:
        assert engine.dialect.name == "postgresql"
        assert isinstance(engine._io._pool, ConnectionPool)  # type: ignore[attr-defined]
        assert engine.execute_sql("SELECT 1").scalar() == 1


def test_mysql_engine_tells_mariadb_from_mysql_on_connecting(mysql_url: str) -> None:
    with create_engine(mysql_url) as engine:
        version = engine.execute_sql("SELECT VERSION()").scalar()
        assert engine.dialect.name == ("mariadb" if "mariadb" in version.lower() else "mysql")


def test_mariadb_scheme_chooses_the_mariadb_dialect(mysql_url: str) -> None:
    with create_engine(mysql_url.replace("mysql://", "mariadb://", 1)) as engine:
        assert engine.dialect.name == "mariadb"


@pytest.mark.parametrize(("url", "blocked", "module", "extra"), [
    ("postgresql://u@localhost/d", "psycopg", "tempest_typed.engine.drivers.psycopg",
     "tempest-typed[postgres]"),
    ("postgresql://u@localhost/d", "psycopg_pool", "tempest_typed.engine.drivers.psycopg",
     "tempest-typed[postgres]"),
    ("mysql://u@localhost/d", "pymysql", "tempest_typed.engine.drivers.mysql",
     "tempest-typed[mysql]"),
    ("mariadb://u@localhost/d", "pymysql", "tempest_typed.engine.drivers.mysql",
     "tempest-typed[mysql]"),
])
def test_a_missing_driver_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch, url: str,
                                                     blocked: str, module: str,
                                                     extra: str) -> None:
    # A None entry in sys.modules makes `import name` raise ImportError, as if not installed.
    for name in list(sys.modules):
        if name == blocked or name.startswith(blocked + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, blocked, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ConfigurationError, match=r"pip install") as info:
        create_engine(url)
    assert extra in str(info.value)
    assert isinstance(info.value.__cause__, ImportError)


@pytest.mark.parametrize(("url", "options"), [
    ("postgresql://postgres@127.0.0.1:1/test", {"pool_timeout": 1}),
    ("mysql://root@127.0.0.1:1/test", {"connect_args": {"connect_timeout": 2}}),
    ("sqlite:////nonexistent-dir/cannot/open.db", {}),
])
def test_a_database_that_cannot_be_reached_is_a_query_execution_error(
        url: str, options: dict[str, object]) -> None:
    with create_engine(url, **options) as engine, \
            pytest.raises(QueryExecutionError, match=r"cannot (connect|open)") as info:
        engine.execute_sql("SELECT 1")
    assert info.value.__cause__ is not None


def test_pool_size_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="pool_size"):
        create_engine("sqlite://:memory:", pool_size=0)


@pytest.mark.parametrize(("url", "connect_args", "says"), [
    # libpq and the MySQL handshake end a name at a NUL: "te%00st" connected to database "te"
    ("postgresql://postgres@127.0.0.1:5432/te%00st", None, "the database holds a NUL"),
    ("mysql://ro%00ot@127.0.0.1:3306/test", None, "the user holds a NUL"),
    ("postgresql://u:p%00w@127.0.0.1/test", None, "the password holds a NUL"),
    ("postgresql://u@127.0.0.1/test?application_name=a%00b", None, "?application_name= option"),
    ("postgresql://u@127.0.0.1/test", {"application_name": "a\x00b"}, "the value holds a NUL"),
    # sqlite3.connect() raised a bare ValueError / UnicodeEncodeError at the first statement
    ("sqlite:///pe%00x.db", None, "the path holds a NUL"),
    ("sqlite:///pe\ud800x.db", None, "the path is not valid Unicode"),
    # psycopg's pool failed every connection, and after pool_timeout said "raise pool_size"
    ("postgresql://u@127.0.0.1/test?application_name=\ud800", None, "not valid Unicode"),
    ("mysql://root@127.0.0.1/test", {"init_command": "SET @a = '\ud800'"}, "not valid Unicode"),
])
def test_text_a_driver_would_cut_or_cannot_send_is_refused_before_connecting(
        url: str, connect_args: dict[str, object] | None, says: str) -> None:
    for create in (create_engine, create_async_engine):
        with pytest.raises(ConfigurationError, match="remove the character") as info:
            create(url, connect_args=connect_args)
        assert says in str(info.value)
        assert "p%00w" not in str(info.value)  # never the password


@pytest.mark.parametrize("create", [create_engine, create_async_engine])
def test_sqlite_memory_is_one_connection_and_refuses_another_pool_size(create: Any) -> None:
    # pool_size=2 was taken and dropped: a second session then waited, and was told to
    # raise pool_size
    with pytest.raises(ConfigurationError, match=r"pool_size=2 does not apply to "
                       r"sqlite://:memory:.*drop pool_size, or use a file"):
        create("sqlite://:memory:", pool_size=2)
    create("sqlite://:memory:", pool_size=1)


MEMORY_FIX = r"an in-memory database is one connection.*use a file"


def test_a_second_session_of_sqlite_memory_names_its_one_connection() -> None:
    with create_engine("sqlite://:memory:", pool_timeout=0.01) as engine, engine.session() as a:
        a.execute_sql("SELECT 1")
        with pytest.raises(ConfigurationError, match=MEMORY_FIX) as info, engine.session() as b:
            b.execute_sql("SELECT 1")
        assert "raise pool_size" not in str(info.value)


@pytest.mark.asyncio
async def test_a_second_async_session_of_sqlite_memory_names_its_one_connection() -> None:
    engine = create_async_engine("sqlite://:memory:", pool_timeout=0.01)
    try:
        async with engine.session() as a:
            await a.execute_sql("SELECT 1")
            with pytest.raises(ConfigurationError, match=MEMORY_FIX) as info:
                async with engine.session() as b:
                    await b.execute_sql("SELECT 1")
            assert "raise pool_size" not in str(info.value)
    finally:
        await engine.dispose()


@pytest.mark.parametrize(("url", "connect_args"), [
    # PostgreSQL: SQL_ASCII read every str column back as bytes, LATIN1 failed on '€'
    ("postgresql://u@127.0.0.1/test?client_encoding=SQL_ASCII", None),
    ("postgresql://u@127.0.0.1/test", {"client_encoding": "latin1"}),
    # MySQL: charset=ascii read 'ñ' back as '?', utf8 (utf8mb3) has no emoji, latin1 failed
    # on one; use_unicode=False read str columns as bytes
    ("mysql://root@127.0.0.1/test?charset=ascii", None),
    ("mysql://root@127.0.0.1/test", {"charset": "utf8"}),
    ("mysql://root@127.0.0.1/test", {"charset": "latin1"}),
    ("mysql://root@127.0.0.1/test", {"use_unicode": False}),
])
def test_a_connection_encoding_other_than_utf8_is_refused_before_connecting(
        url: str, connect_args: dict[str, object] | None) -> None:
    for create in (create_engine, create_async_engine):
        with pytest.raises(ConfigurationError, match=r"another encoding than UTF-8.*Drop"):
            create(url, connect_args=connect_args)


@pytest.mark.parametrize(("url", "connect_args"), [
    ("postgresql://u@127.0.0.1/test?client_encoding=UTF8", None),
    ("postgresql://u@127.0.0.1/test", {"client_encoding": "utf-8"}),
    ("mysql://root@127.0.0.1/test?charset=utf8mb4", None),
    ("mysql://root@127.0.0.1/test", {"use_unicode": True}),
])
def test_a_utf8_connection_encoding_is_taken(url: str,
                                             connect_args: dict[str, object] | None) -> None:
    create_engine(url, connect_args=connect_args).dispose()


@pytest.mark.parametrize(("url", "connect_args"), [
    # rows of another shape were read as their keys: returning("id") gave Row(id='id'), and
    # a float column raised a bare ValueError ("could not convert string to float: 'ratio'")
    ("postgresql://u@127.0.0.1/test", {"row_factory": "dict_row"}),
    ("mysql://root@127.0.0.1/test", {"cursorclass": "DictCursor"}),
    ("mysql://root@127.0.0.1/test", {"conv": {}}),
    ("mysql://root@127.0.0.1/test?cursorclass=DictCursor", None),
    ("mysql://root@127.0.0.1/test?autocommit=0", None),
])
def test_how_the_driver_hands_rows_over_is_the_engines(
        url: str, connect_args: dict[str, object] | None) -> None:
    for create in (create_engine, create_async_engine):
        with pytest.raises(ConfigurationError, match=r"the engine sets \w+ itself"):
            create(url, connect_args=connect_args)


@pytest.mark.parametrize("url", [
    "postgresql://app:s3cret@localhost:notaport/app",
    "postgresql://app:s3cret@[::1/app",
    "postgresql://app:s3cret@/app",
    "mysql://root:s3cret@localhost",
    "oracle://scott:s3cret@localhost/orcl",
    "sqlite://app:s3cret@relative.db",
    "app:s3cret@localhost/app",
    "mysql://root:p@s3cret@localhost",  # an unquoted @ in the password
])
def test_a_malformed_url_is_refused_without_showing_its_password(url: str) -> None:
    with pytest.raises(ConfigurationError, match="database URL") as info:
        create_engine(url)
    assert "s3cret" not in str(info.value)
    assert ":***@" in str(info.value)


@pytest.mark.parametrize(("url", "connect_args", "says"), [
    # libpq refused these only when it connected: a QueryExecutionError of the first
    # statement, after the pool's own warnings on stderr
    ("postgresql://u@127.0.0.1/test?sslmode=bogus", None, "use one of disable, allow"),
    ("postgresql://u@127.0.0.1/test?target_session_attrs=readonly", None, "read-only"),
    ("postgresql://u@127.0.0.1/test?connect_timeout=abc", None, "a whole number"),
    ("postgresql://u@127.0.0.1/test", {"keepalives_idle": "soon"}, "a whole number"),
])
def test_a_libpq_parameter_value_libpq_refuses_is_refused_before_connecting(
        url: str, connect_args: dict[str, object] | None, says: str) -> None:
    for create in (create_engine, create_async_engine):
        with pytest.raises(ConfigurationError, match="is not a value libpq takes") as info:
            create(url, connect_args=connect_args)
        assert says in str(info.value)


def test_libpq_parameter_values_libpq_takes_are_taken() -> None:
    create_engine("postgresql://u@127.0.0.1/test?sslmode=disable&connect_timeout=3",
                  connect_args={"keepalives_idle": 30}).dispose()
