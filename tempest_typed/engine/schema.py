"""Existing tables against their models: what differs, and the statement that would fix it.

`create_all()` creates a table only where none exists, so a table made from an older model
stays as it was. On SQLite that is a silent wrong answer: a double-quoted name that matches
no column is read as a string, so a select of a column the table lacks returns its own name
in every row. This module reads each table's columns from the database's catalog
(PostgreSQL's pg_catalog, MySQL/MariaDB's information_schema, SQLite's table_info), compares
them with the DDL the dialect writes for the model (`Dialect.column_type`), and lists every
difference: a missing or extra column, a changed type, a changed nullability.

It also orders models by their foreign keys (`references="table.column"`), so that
create_all() makes parents before children and drop_all() drops children first.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..dialects import Dialect
from ..errors import SchemaDifference, SchemaError
from ..model import ModelMeta, meta_of

__all__ = [
    "TableColumn", "catalog_query", "check_models", "columns_of", "dependency_order",
    "read_columns", "table_differences",
]

#: runs one catalog query with its parameters and returns the rows
Runner = Callable[[str, tuple[object, ...]], list[Any]]


@dataclasses.dataclass(frozen=True)
class TableColumn:
    """One column of an existing table, as the database's catalog describes it."""

    name: str
    type: str
    nullable: bool
    collation: str | None = None


# -- foreign-key order ------------------------------------------------------------------------


def dependency_order(models: Sequence[type]) -> list[type]:
    """The models with every referenced table before the tables that reference it.

    Models that do not reference each other keep the order they were given in; a reference
    to a table outside `models`, or to the model's own table, puts no constraint on the
    order. Models in a reference cycle keep their given order (no order could satisfy them).
    """
    metas = [meta_of(m) for m in models]
    by_table = {meta.table: i for i, meta in enumerate(metas)}
    parents: list[set[int]] = []
    for i, meta in enumerate(metas):
        found = set()
        for col in meta.columns:
            if col.references:
                j = by_table.get(col.references.partition(".")[0])
                if j is not None and j != i:
                    found.add(j)
        parents.append(found)
    done: list[int] = []
    placed: set[int] = set()
    while len(done) < len(metas):
        ready = [i for i in range(len(metas))
                 if i not in placed and parents[i] <= placed]
        if not ready:  # a cycle: take the first remaining model as it was given
            ready = [next(i for i in range(len(metas)) if i not in placed)]
        # One at a time, so that a model given early goes as early as its parents allow.
        done.append(ready[0])
        placed.add(ready[0])
    return [models[i] for i in done]


# -- reading a table's columns ----------------------------------------------------------------

_PG_COLUMNS = """
SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       CASE WHEN a.attcollation = t.typcollation THEN NULL ELSE co.collname END
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
WHERE n.nspname = current_schema() AND c.relname = %s AND c.relkind IN ('r', 'p')
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

_MYSQL_COLUMNS = """
SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES', COLLATION_NAME
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s
ORDER BY ORDINAL_POSITION
"""

# The table-valued form of PRAGMA table_info takes the table name as a parameter.
_SQLITE_COLUMNS = 'SELECT name, type, "notnull", pk FROM pragma_table_info(?)'


def read_columns(run: Runner, dialect: Dialect, table: str) -> list[TableColumn] | None:
    """The columns of `table` as the database has them; None when there is no such table."""
    return columns_of(dialect, run(catalog_query(dialect), (table,)))


def catalog_query(dialect: Dialect) -> str:
    """The catalog query listing one table's columns (its one parameter: the table name)."""
    if dialect.name == "postgresql":
        return _PG_COLUMNS
    if dialect.name == "sqlite":
        return _SQLITE_COLUMNS
    return _MYSQL_COLUMNS


def columns_of(dialect: Dialect, rows: Sequence[Any]) -> list[TableColumn] | None:
    """The columns that catalog_query()'s rows describe; None when there are none (no table)."""
    if dialect.name == "postgresql":
        columns = [TableColumn(str(r[0]), str(r[1]), bool(r[2]), r[3]) for r in rows]
    elif dialect.name == "sqlite":
        # The rowid alias (a lone INTEGER PRIMARY KEY) holds no NULL, though table_info
        # reports it nullable when the DDL did not say NOT NULL.
        columns = [TableColumn(str(r[0]), str(r[1]),
                               not r[2] and not (r[3] and str(r[1]).upper() == "INTEGER"))
                   for r in rows]
    else:
        columns = [TableColumn(_text(r[0]), _text(r[1]), bool(r[2]),
                               _text(r[3]) if r[3] is not None else None) for r in rows]
    return columns or None


def _text(value: object) -> str:
    """information_schema text, which some server versions return as bytes."""
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)


# -- comparing types --------------------------------------------------------------------------

_PG_ALIASES = {
    "timestamptz": "timestamp with time zone", "timestamp": "timestamp without time zone",
    "varchar": "character varying", "char": "character", "int8": "bigint", "int": "integer",
    "int4": "integer", "int2": "smallint", "float8": "double precision", "float4": "real",
    "bool": "boolean", "decimal": "numeric", "time": "time without time zone",
    "timetz": "time with time zone",
}
_MYSQL_ALIASES = {"boolean": "tinyint(1)", "bool": "tinyint(1)", "integer": "int",
                  "dec": "decimal", "numeric": "decimal", "real": "double"}
_MYSQL_WIDTHS = re.compile(r"^(bigint|int|mediumint|smallint)\(\d+\)")
_COLLATE = re.compile(r"\s+COLLATE\s+(\"(?:[^\"]|\"\")+\"|\w+)\s*$", re.IGNORECASE)
_CHARSET = re.compile(r"\s+CHARACTER\s+SET\s+\w+", re.IGNORECASE)


def _squeeze(text: str) -> str:
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


def _sqlite_affinity(declared: str) -> str:
    """The affinity SQLite gives a declared type (section 3.1 of its datatype page)."""
    t = declared.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def normal_type(dialect: Dialect, declared: str) -> str:
    """A column type in one spelling per meaning, so DDL text and catalog text compare."""
    if dialect.name == "sqlite":
        return _sqlite_affinity(declared)
    text = _squeeze(declared)
    base, paren, rest = text.partition("(")
    aliases = _PG_ALIASES if dialect.name == "postgresql" else _MYSQL_ALIASES
    if base in aliases:
        text = aliases[base] + (paren + rest if paren else "")
    if dialect.name == "postgresql":
        return text
    text = _MYSQL_WIDTHS.sub(r"\1", text)  # MariaDB shows bigint(20), MySQL 8 bigint
    if text == "json" and dialect.name == "mariadb":
        return "longtext"  # MariaDB's JSON is LONGTEXT with a json_valid() check
    return text


# -- differences ------------------------------------------------------------------------------


def _key(dialect: Dialect, name: str) -> str:
    # PostgreSQL's quoted identifiers are case-sensitive; MySQL's and SQLite's column names
    # are not.
    return name if dialect.name == "postgresql" else name.casefold()


def _shown_type(column: TableColumn) -> str:
    return column.type + (f" COLLATE {column.collation}" if column.collation else "")


def _null_sql(nullable: bool) -> str:
    return "NULL" if nullable else "NOT NULL"


def table_differences(meta: ModelMeta, columns: list[TableColumn],
                      dialect: Dialect) -> list[SchemaDifference]:
    """Every way the table's columns differ from the model's, each with its fix."""
    q = dialect.quote_identifier
    table = q(meta.table)
    alter = f"ALTER TABLE {table}"
    rebuild = ("SQLite cannot alter a column: rebuild the table (create it anew from the "
               "model, copy the rows over, drop the old one)")
    actual = {_key(dialect, c.name): c for c in columns}
    found: list[SchemaDifference] = []

    def add(column: str, problem: str, expected: str, got: str, fix: str) -> None:
        found.append(SchemaDifference(meta.table, column, problem, expected, got, fix))

    for col in meta.columns:
        ddl = dialect.column_type(col)
        nullable = col.nullable and not col.primary_key
        where = f"{meta.name}.{col.attr}"
        have = actual.pop(_key(dialect, col.name), None)
        if have is None:
            definition = f"{q(col.name)} {ddl}"
            if nullable:
                fix = f"{alter} ADD COLUMN {definition}"
            else:
                fix = (f"{alter} ADD COLUMN {definition} NOT NULL DEFAULT <a value for the rows "
                       "already there>")
            add(col.name, "missing column", f"{ddl} {_null_sql(nullable)}", "no such column",
                f"{fix}; or remove {where} from the model")
            continue
        want_type, want_collation = split_collation(ddl)
        type_differs = normal_type(dialect, want_type) != normal_type(dialect, have.type)
        if want_collation is not None and have.collation != want_collation:
            type_differs = True
        if type_differs:
            if dialect.name == "postgresql":
                fix = f"{alter} ALTER COLUMN {q(col.name)} TYPE {ddl} USING {q(col.name)}::{want_type}"
            elif dialect.name == "sqlite":
                fix = rebuild
            else:
                fix = f"{alter} MODIFY COLUMN {q(col.name)} {ddl} {_null_sql(nullable)}"
            add(col.name, "changed type", ddl, _shown_type(have),
                f"{fix}; or change the annotation of {where} to the table's type")
        if have.nullable != nullable:
            if dialect.name == "postgresql":
                fix = f"{alter} ALTER COLUMN {q(col.name)} {'DROP' if nullable else 'SET'} NOT NULL"
            elif dialect.name == "sqlite":
                fix = rebuild
            else:
                fix = f"{alter} MODIFY COLUMN {q(col.name)} {ddl} {_null_sql(nullable)}"
            if nullable:
                model_fix = f"or annotate {where} without `| None`"
            else:
                model_fix = f"or annotate {where} as `{col.type_name()} | None`"
            if not nullable and dialect.name != "sqlite":
                fix += " (after giving its NULL rows a value)"
            add(col.name, "changed nullability", _null_sql(nullable), _null_sql(have.nullable),
                f"{fix}; {model_fix}")
    for extra in actual.values():
        add(extra.name, "extra column", "no such field",
            f"{_shown_type(extra)} {_null_sql(extra.nullable)}",
            f"{alter} DROP COLUMN {q(extra.name)}; or add a field for it to {meta.name}")
    return found


def check_models(run: Runner, dialect: Dialect, models: Sequence[type], *,
                 missing_ok: bool) -> list[type]:
    """Compare each model's table with the model; raise SchemaError listing every
    difference. Returns the models whose table does not exist (an error itself unless
    `missing_ok`)."""
    differences: list[SchemaDifference] = []
    missing: list[type] = []
    for model in models:
        meta = meta_of(model)
        columns = read_columns(run, dialect, meta.table)
        if columns is None:
            missing.append(model)
            if not missing_ok:
                differences.append(SchemaDifference(
                    meta.table, None, "missing table", "a table", "no such table",
                    f"engine.create_all({meta.name})"))
            continue
        differences.extend(table_differences(meta, columns, dialect))
    if differences:
        raise SchemaError(differences, dialect.name)
    return missing
