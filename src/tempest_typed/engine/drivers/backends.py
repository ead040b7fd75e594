"""The databases the engine connects to, one record each: how a URL names it and is written,
the options it owns, the connect() arguments its driver sets itself, and its driver classes.

This is the one table keyed by database: url.py and options.py look a URL's backend up here
and compare no database's name. Importing it imports no database library.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

__all__ = ["BACKENDS", "SCHEMES", "Backend"]

_TRANSACTIONS = ("connections run in autocommit mode and engine.transaction() opens "
                 "transactions: use it (with isolation= and read_only=)")
_ROWS = ("the engine reads the driver's rows as tuples, each value as the driver converts it, "
         "and builds models and Rows from them (rows of another shape were read as their "
         "keys): drop it, and read a row by name with row.column or row['column']")


@dataclasses.dataclass(frozen=True)
class Backend:
    """One database family: its URLs, its options, and its drivers, named in its modules of
    tempest_typed.engine.drivers (importing one imports the driver library): each name as
    `name` (in `module`) or `module:name`."""

    name: str
    #: how the error messages name it
    title: str
    #: the URL schemes that name it
    schemes: tuple[str, ...]
    #: the options only this database takes, keyword or URL
    own_options: tuple[str, ...]
    #: connect() arguments the driver sets itself, and what to use instead
    driver_sets: Mapping[str, str]
    #: what its URL's query options are, for an error naming an unknown one
    url_parameters: str | None
    module: str
    #: the blocking driver class
    blocking: str
    #: the asyncio driver class (or factory)
    asyncio: str
    #: the function naming what the driver's connect() takes (the URL options), if any
    url_option_names: str | None
    #: a file path (or :memory:) after the scheme, not a server
    file: bool = False
    #: the URL must name a database
    needs_database: bool = False
    #: connect() arguments (or URL options) that decide how text crosses the connection, and
    #: the values (lowercased, as text) that keep it UTF-8 both ways; any other reads a str
    #: column back as bytes, or as '?' for what it cannot hold, or fails on some strings
    text_options: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


#: every backend by name
BACKENDS: Mapping[str, Backend] = {backend.name: backend for backend in (
    Backend("postgresql", "PostgreSQL (postgresql://)",
            ("postgresql", "postgres", "postgresql+psycopg"), ("connect_timeout",),
            {"autocommit": _TRANSACTIONS, "row_factory": _ROWS},
            "libpq's connection parameters (sslmode, application_name, options, ...)",
            "psycopg", "PsycopgDriver", "psycopg_async:AsyncPsycopgDriver",
            "psycopg_rules:url_option_names",
            text_options={"client_encoding": ("utf8", "utf-8", "unicode")}),
    Backend("sqlite", "SQLite (sqlite:///path)", ("sqlite",),
            ("busy_timeout", "journal_mode", "synchronous"),
            {"timeout": "use busy_timeout= (seconds)", "isolation_level": _TRANSACTIONS,
             "autocommit": _TRANSACTIONS,
             "check_same_thread": "the pool hands a connection to one thread at a time"},
            None, "sqlite", "SQLiteDriver", "threaded_sqlite_driver", None, file=True),
    Backend("mysql", "MySQL/MariaDB (mysql://, mariadb://)",
            ("mysql", "mariadb", "mysql+pymysql"), (),
            {"autocommit": _TRANSACTIONS, "cursorclass": _ROWS, "cursor_cls": _ROWS, "conv": _ROWS},
            "pymysql.connect()'s parameters (charset, ssl_ca, read_timeout, ...)",
            "mysql", "PyMySQLDriver", "mysql_async:AsyncmyDriver",
            "mysql_rules:url_option_names",
            needs_database=True,
            text_options={"charset": ("utf8mb4",), "use_unicode": ("true", "1")}),
)}
#: the backend a URL scheme names
SCHEMES: Mapping[str, Backend] = {scheme: backend for backend in BACKENDS.values()
                                  for scheme in backend.schemes}
