"""How a database describes what it holds: the catalog queries of `check_schema()` and
`create_all()`, and how their rows, type names and fixes read on each database.

Each dialect module has its catalog (a subclass of `Catalog`), as it has its compiler: the
queries and the spellings of one database are in its own file. The comparison of a table
with its model is the engine's (engine/schema.py), the same for every database. Nothing here
talks to a database: a catalog writes queries and reads the rows it is given.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["Catalog", "ExistingIndex", "PredicateProbe", "TableColumn"]


@dataclasses.dataclass(frozen=True)
class TableColumn:
    """One column of an existing table, as the database's catalog describes it."""

    name: str
    type: str
    nullable: bool
    collation: str | None = None
    #: its place in the primary key, from 1; 0 when it is not part of it
    key: int = 0


@dataclasses.dataclass(frozen=True)
class ExistingIndex:
    """What the database holds under an index's name: an index, or another kind of object."""

    #: "index", or what else bears the name ("table", "view", "sequence", ...)
    kind: str
    #: the table the index is on (None for an object that is not an index)
    table: str | None = None
    #: the SQL names of its columns in order; None for an expression
    columns: tuple[str | None, ...] = ()
    unique: bool = False
    #: its WHERE as the database keeps it (SQLite: the whole CREATE INDEX text); None: full
    predicate: str | None = None


@dataclasses.dataclass(frozen=True)
class PredicateProbe:
    """Statements that make the database print a model index's WHERE its own way: run
    `setup`, read the text from `query`'s first row, then run `teardown` (always)."""

    setup: tuple[str, ...]
    query: str
    params: tuple[object, ...]
    teardown: tuple[str, ...]


class _Quoting(Protocol):
    def quote_identifier(self, name: str) -> str: ...


#: writes the model index's CREATE INDEX on another table under another name: (name, table)
IndexOn = Callable[[str, str], str]


_COLLATE = re.compile(r"\s+COLLATE\s+(\"(?:[^\"]|\"\")+\"|\w+)\s*$", re.IGNORECASE)
_CHARSET = re.compile(r"\s+CHARACTER\s+SET\s+\w+", re.IGNORECASE)


def squeeze(text: str) -> str:
    """Lower case, single spaces, no spaces inside parentheses: `DECIMAL(65, 30)` ->
    `decimal(65,30)`."""
    text = " ".join(text.lower().split())
    text = re.sub(r"\s*\(\s*", "(", text)
    text = re.sub(r"\s*,\s*", ",", text)
    return re.sub(r"\s*\)", ")", text)


def split_collation(ddl: str) -> tuple[str, str | None]:
    """A DDL column type without its COLLATE (and CHARACTER SET) clause, and the collation."""
    collation = None
    found = _COLLATE.search(ddl)
    if found:
        collation = found.group(1)
        if collation.startswith('"'):
            collation = collation[1:-1].replace('""', '"')
        ddl = ddl[:found.start()]
    return _CHARSET.sub("", ddl), collation


class Catalog:
    """One database's catalog: its queries, and how their rows and spellings read."""

    #: names of tables and columns compare without case (MySQL, SQLite); PostgreSQL's
    #: quoted identifiers keep theirs
    folds_case = True
    #: index names are per schema (PostgreSQL, SQLite), where CREATE INDEX IF NOT EXISTS
    #: skips an index of that name on another table; per table on MySQL
    indexes_per_schema = True
    #: tables and indexes share one namespace
    shares_index_namespace = True
    #: what the database cannot alter in place, and how to get there instead (None: it can)
    cannot_alter: str | None = None

    def __init__(self, dialect: _Quoting) -> None:
        self.quote = dialect.quote_identifier

    def key(self, name: str) -> str:
        """A table or column name as the database compares it."""
        return name.casefold() if self.folds_case else name

    # -- columns ----------------------------------------------------------------------------

    def columns_query(self) -> str:
        """The query listing one table's columns (its one parameter: the table name)."""
        raise NotImplementedError

    def columns_of(self, rows: Sequence[Any]) -> list[TableColumn] | None:
        """The columns that columns_query()'s rows describe; None when there are none."""
        raise NotImplementedError

    def normal_type(self, declared: str) -> str:
        """A column type in one spelling per meaning, so DDL text and catalog text compare."""
        raise NotImplementedError

    def change_type(self, table: str, column: str, ddl: str, bare_type: str,
                    nullable: bool) -> str:
        """The statement that gives a column its model's type (quoted names given)."""
        return f"ALTER TABLE {table} MODIFY COLUMN {column} {ddl} {_null(nullable)}"

    def change_nullability(self, table: str, column: str, ddl: str, nullable: bool) -> str:
        """The statement that makes a column nullable or NOT NULL (quoted names given)."""
        return f"ALTER TABLE {table} MODIFY COLUMN {column} {ddl} {_null(nullable)}"

    def drop_primary_key(self) -> str:
        """The ALTER TABLE clause that drops a table's primary key."""
        return "DROP PRIMARY KEY"

    # -- what bears a table's name -----------------------------------------------------------

    def relation_lookup(self, name: str) -> tuple[str, tuple[object, ...]]:
        """The query (and its parameters) for what bears the table name `name`: a table, or
        an object that CREATE TABLE IF NOT EXISTS would take for one and skip (an index or a
        sequence where they share the tables' namespace, a view)."""
        raise NotImplementedError

    def relation_kind(self, rows: Sequence[Any]) -> str | None:
        """What relation_lookup()'s rows say bears the name ("table", "index", "view", ...);
        None when nothing does."""
        raise NotImplementedError

    def drop_relation(self, kind: str, name: str) -> str:
        """The statement that drops an object relation_kind() named (quoted name given)."""
        return f"DROP {kind.upper()} {name}"

    # -- indexes ----------------------------------------------------------------------------

    def index_lookup(self, name: str, table: str) -> tuple[str, tuple[object, ...]]:
        """The query (and its parameters) for what bears index `name` of `table`."""
        raise NotImplementedError

    def index_of(self, table: str, rows: Sequence[Any]) -> ExistingIndex | None:
        """What index_lookup()'s rows describe; None when nothing bears the name."""
        raise NotImplementedError

    def predicate_probe(self, table: str, index_on: IndexOn) -> PredicateProbe | None:
        """How to read a model index's WHERE (on `table`) as the database prints it back;
        None where the catalog keeps the text as written (compare the DDL's own)."""
        return None

    def same_predicate(self, held: str, predicate: str) -> bool:
        """True when the catalog's WHERE `held` is the model's `predicate`."""
        return held == predicate

    def shown_predicate(self, name: str, existing: ExistingIndex, columns: str) -> str:
        """An existing partial index as a difference shows it."""
        text = f"{'UNIQUE ' if existing.unique else ''}INDEX {name} ({columns})"
        return f"{text} WHERE {existing.predicate}"

    def drop_index(self, index: str, table: str) -> str:
        """DROP INDEX for an index of a table (quoted names given)."""
        return f"DROP INDEX {index}"

    def own_index_names(self, table: str, key: Sequence[str], unique: Sequence[str],
                        identity: str | None) -> set[str]:
        """The names the database gives what it makes with a table (the index of its primary
        key `key`, of its `unique` columns, the sequence of its `identity` column), which an
        index of the model's own cannot bear."""
        return set()


def _null(nullable: bool) -> str:
    return "NULL" if nullable else "NOT NULL"


def text_of(value: object) -> str:
    """Catalog text, which some server versions return as bytes."""
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)
