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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..dialects import Dialect
from ..errors import SchemaDifference, SchemaError
from ..model import Index, ModelMeta, meta_of, reference_problem, split_reference

__all__ = [
    "ExistingIndex", "TableColumn", "catalog_query", "check_models", "columns_of", "compare_tables",
    "dependency_order", "index_differences", "index_lookup", "index_of",
    "model_set_differences", "read_columns", "reference_differences", "referenced_tables",
    "table_differences",
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
       CASE WHEN a.attcollation = t.typcollation THEN NULL ELSE co.collname END,
       COALESCE((SELECT array_position(k.indkey::int2[], a.attnum)
                        - array_lower(k.indkey::int2[], 1) + 1
                 FROM pg_catalog.pg_index k WHERE k.indrelid = c.oid AND k.indisprimary), 0)
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
SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE = 'YES', c.COLLATION_NAME,
       COALESCE((SELECT s.SEQ_IN_INDEX FROM information_schema.STATISTICS s
                 WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
                   AND s.INDEX_NAME = 'PRIMARY' AND s.COLUMN_NAME = c.COLUMN_NAME), 0)
FROM information_schema.COLUMNS c
WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = %s
ORDER BY c.ORDINAL_POSITION
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
        columns = [TableColumn(str(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4])) for r in rows]
    elif dialect.name == "sqlite":
        # The rowid alias (a lone INTEGER PRIMARY KEY) holds no NULL, though table_info
        # reports it nullable when the DDL did not say NOT NULL.
        keys = sum(1 for r in rows if r[3])
        columns = [TableColumn(str(r[0]), str(r[1]),
                               not r[2] and not (keys == 1 and r[3]
                                                 and str(r[1]).upper() == "INTEGER"),
                               None, int(r[3]))
                   for r in rows]
    else:
        columns = [TableColumn(_text(r[0]), _text(r[1]), bool(r[2]),
                               _text(r[3]) if r[3] is not None else None, int(r[4]))
                   for r in rows]
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
    key_wanted = [c.name for c in meta.primary_key]
    key_held = [c.name for c in sorted((c for c in columns if c.key), key=lambda c: c.key)]
    if [_key(dialect, n) for n in key_wanted] != [_key(dialect, n) for n in key_held]:
        def shown(names: list[str]) -> str:
            return f"PRIMARY KEY ({', '.join(names)})" if names else "no primary key"

        add_key = f"ADD PRIMARY KEY ({', '.join(q(n) for n in key_wanted)})" if key_wanted else ""
        drop = ""
        if key_held:
            drop = ("DROP CONSTRAINT <the primary key's name>" if dialect.name == "postgresql"
                    else "DROP PRIMARY KEY")
        fix = rebuild if dialect.name == "sqlite" else (
            f"{alter} " + ", ".join(part for part in (drop, add_key) if part))
        found.append(SchemaDifference(
            meta.table, None, "changed primary key", shown(key_wanted), shown(key_held),
            f"{fix}; or declare primary_key=True on the table's key columns of {meta.name}"))
    return found


# -- indexes ----------------------------------------------------------------------------------

_PG_INDEX = """
SELECT c.relkind, t.relname, i.indisunique,
       ARRAY(SELECT a.attname
             FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
             LEFT JOIN pg_catalog.pg_attribute a
               ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0
             ORDER BY k.n),
       pg_catalog.pg_get_expr(i.indpred, i.indrelid)
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
WHERE n.nspname = current_schema() AND c.relname = %s
"""

# Names of tables and indexes share one namespace and compare without case (ASCII) here.
_SQLITE_INDEX = """
SELECT m.type, m.tbl_name, l."unique", m.sql, i.name
FROM sqlite_master m
LEFT JOIN pragma_index_list(m.tbl_name) l ON l.name = m.name
LEFT JOIN pragma_index_info(m.name) i
WHERE m.name = ? COLLATE NOCASE
ORDER BY i.seqno
"""

# Index names are per table on MySQL and MariaDB: only the table's own indexes can clash.
_MYSQL_INDEX = """
SELECT NON_UNIQUE = 0, COLUMN_NAME
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s AND INDEX_NAME = %s
ORDER BY SEQ_IN_INDEX
"""

_PG_KINDS = {"i": "index", "I": "index", "r": "table", "p": "table", "v": "view",
             "m": "materialized view", "S": "sequence", "f": "foreign table",
             "c": "composite type"}


def index_lookup(dialect: Dialect, name: str, table: str) -> tuple[str, tuple[object, ...]]:
    """The catalog query (and its parameters) for what bears index `name` of `table`."""
    if dialect.name == "postgresql":
        return _PG_INDEX, (name,)
    if dialect.name == "sqlite":
        return _SQLITE_INDEX, (name,)
    return _MYSQL_INDEX, (table, name)


def index_of(dialect: Dialect, table: str, rows: Sequence[Any]) -> ExistingIndex | None:
    """What index_lookup()'s rows describe; None when nothing bears the name."""
    if not rows:
        return None
    if dialect.name == "postgresql":
        kind, on, unique, columns, predicate = rows[0]
        kind = _PG_KINDS.get(str(kind), "relation")
        if kind != "index":
            return ExistingIndex(kind)
        return ExistingIndex(kind, str(on), tuple(columns), bool(unique), predicate)
    if dialect.name == "sqlite":
        kind, on, unique, text, _ = rows[0]
        if kind != "index":
            return ExistingIndex(str(kind))
        predicate = str(text) if text is not None and " WHERE " in str(text) else None
        return ExistingIndex("index", str(on), tuple(r[4] for r in rows), bool(unique),
                             predicate)
    return ExistingIndex("index", table, tuple(_text(r[1]) if r[1] is not None else None
                                               for r in rows), bool(rows[0][0]))


#: the databases' names, as their own documentation spells them
_SHOWN = {"postgresql": "PostgreSQL", "sqlite": "SQLite", "mysql": "MySQL",
          "mariadb": "MariaDB"}


def index_differences(meta: ModelMeta, index: Index, existing: ExistingIndex | None,
                      dialect: Dialect, *, predicate: str | None, missing_ok: bool,
                      created: bool = False) -> list[SchemaDifference]:
    """How what bears an index's name differs from the model's index.

    `predicate` is the model's WHERE in the database's own spelling (PostgreSQL's deparsed
    text, SQLite's CREATE INDEX text), or None to compare only whether both are partial.
    `created`: read back after create_all() made the table and the index, so an index of the
    table that differs is one the database made for a key or a unique column.
    """
    from ..dialects.ddl import create_index_sql, index_predicate_sql

    q = dialect.quote_identifier
    want = _index_shown(meta, index, dialect)
    where = f"{meta.name} Index {index.name!r}"
    rename = f"give {where} another name"
    database = _SHOWN.get(dialect.name, dialect.name)
    if existing is None:
        if missing_ok:
            return []
        return [SchemaDifference(meta.table, None, "missing index", want, "no such index",
                                 f"{create_index_sql(meta, index, dialect)}; or "
                                 f"engine.create_all({meta.name})")]
    if existing.kind != "index":
        return [SchemaDifference(
            meta.table, None, "index name taken", want, f"the {existing.kind} {index.name}",
            f"{rename}: tables and indexes share one namespace on {database}")]
    assert existing.table is not None
    if _key(dialect, existing.table) != _key(dialect, meta.table):
        return [SchemaDifference(
            meta.table, None, "index name taken", want,
            f"{index.name} is an index of the table {existing.table}",
            f"{rename}: index names are per schema on {database}, so CREATE INDEX IF NOT "
            f"EXISTS would skip this one")]
    wanted_columns = [_key(dialect, meta.column(c, where).name) for c in index.columns]
    have_columns = [_key(dialect, c) if c is not None else None for c in existing.columns]
    partial = index_predicate_sql(meta, index, dialect) is not None
    same = (wanted_columns == have_columns and existing.unique == index.unique
            and (existing.predicate is not None) == partial)
    if same and partial and predicate is not None:
        assert existing.predicate is not None
        same = (existing.predicate.endswith(" WHERE " + predicate)
                if dialect.name == "sqlite" else existing.predicate == predicate)
    if same:
        return []
    if created:
        return [SchemaDifference(
            meta.table, None, "index name taken", want,
            f"{_existing_shown(index.name, existing, dialect)}, which {database} made for the "
            "table's key or a unique column", f"{rename}: the database chose that name first")]
    drop = (f"DROP INDEX {q(index.name)} ON {q(meta.table)}" if dialect.name in ("mysql", "mariadb")
            else f"DROP INDEX {q(index.name)}")
    return [SchemaDifference(
        meta.table, None, "changed index", want, _existing_shown(index.name, existing, dialect),
        f"{drop}, then engine.create_all({meta.name}); or change {where} to the table's "
        "index")]


def _index_shown(meta: ModelMeta, index: Index, dialect: Dialect) -> str:
    from ..dialects.ddl import index_predicate_sql

    names = ", ".join(meta.column(c, f"Index {index.name!r}").name for c in index.columns)
    predicate = index_predicate_sql(meta, index, dialect)
    return (f"{'UNIQUE ' if index.unique else ''}INDEX {index.name} ({names})"
            + (f" WHERE {predicate}" if predicate is not None else ""))


def _existing_shown(name: str, existing: ExistingIndex, dialect: Dialect) -> str:
    names = ", ".join(c if c is not None else "<expression>" for c in existing.columns)
    text = f"{'UNIQUE ' if existing.unique else ''}INDEX {name} ({names})"
    if existing.predicate is None:
        return text
    if dialect.name == "sqlite":
        return existing.predicate  # the CREATE INDEX text as written
    return f"{text} WHERE {existing.predicate}"


def model_set_differences(models: Sequence[type]) -> list[SchemaDifference]:
    """Index names that the models given together would use twice: on two tables, or as the
    name of another model's table. The same on every dialect: PostgreSQL and SQLite name
    indexes per schema (MySQL per table), and a model set is portable or it is not."""
    metas = [meta_of(m) for m in models]
    owners: dict[str, tuple[str, str]] = {}
    for meta in metas:
        owners.setdefault(meta.table.casefold(),
                          (meta.table, f"the table of {meta.name}, given in the same call"))
    found: list[SchemaDifference] = []
    for meta in metas:
        for index in meta.indexes:
            key = index.name.casefold()
            owner = owners.get(key)
            if owner is not None and owner[0] != meta.table:
                found.append(SchemaDifference(
                    meta.table, None, "index name taken", f"INDEX {index.name} on {meta.table}",
                    f"{owner[0]!r} is also {owner[1]}" if owner[0].casefold() == key
                    else f"{index.name} is also {owner[1]}",
                    f"give {meta.name} Index {index.name!r} or the other a name of its own: "
                    "index names are per schema on PostgreSQL and SQLite, where CREATE INDEX "
                    "IF NOT EXISTS would skip the second"))
            elif owner is None:
                owners[key] = (meta.table, f"the name of {meta.name} Index {index.name!r} (table "
                                           f"{meta.table}), given in the same call")
    return found


# -- references -------------------------------------------------------------------------------


def referenced_tables(models: Sequence[type]) -> list[str]:
    """The tables the models' `references=` name that are not the table of one of them."""
    metas = [meta_of(m) for m in models]
    own = {meta.table.casefold() for meta in metas}
    found: list[str] = []
    for meta in metas:
        for col in meta.columns:
            if col.references is not None:
                table, _ = split_reference(meta, col)
                if table.casefold() not in own and table not in found:
                    found.append(table)
    return found


def reference_differences(models: Sequence[type],
                          columns_of_table: Callable[[str], list[TableColumn] | None],
                          dialect: Dialect) -> list[SchemaDifference]:
    """Every `references=` that names nothing: not a model given with it (its column, type
    and key checked as when models are defined), nor a table and column of the database."""
    metas = [meta_of(m) for m in models]
    found: list[SchemaDifference] = []
    for meta in metas:
        for col in meta.columns:
            if col.references is None:
                continue
            table, column = split_reference(meta, col)
            where = f"{meta.name}.{col.attr}"
            targets = [m for m in metas if _key(dialect, m.table) == _key(dialect, table)]
            if targets:
                problems = [reference_problem(col, target, column) for target in targets]
                if all(problems):
                    found.append(SchemaDifference(
                        meta.table, col.name, "unknown reference", f"{table}.{column}",
                        str(problems[-1]), f"correct references= of {where}"))
                continue
            have = columns_of_table(table)
            if have is None:
                found.append(SchemaDifference(
                    meta.table, col.name, "unknown reference", f"{table}.{column}",
                    f"no table {table}",
                    f"give create_all() the model of {table} too, create the table first, "
                    f"or correct references= of {where}"))
            elif not any(_key(dialect, c.name) == _key(dialect, column) for c in have):
                names = ", ".join(c.name for c in have)
                found.append(SchemaDifference(
                    meta.table, col.name, "unknown reference", f"{table}.{column}",
                    f"{table} has no column {column} (its columns: {names})",
                    f"correct references= of {where}"))
    return found


def check_models(run: Runner, dialect: Dialect, models: Sequence[type], *,
                 missing_ok: bool) -> list[type]:
    """Compare each model's table with the model; raise SchemaError listing every
    difference. Returns the models whose table does not exist (an error itself unless
    `missing_ok`)."""
    tables = {meta_of(m).table: read_columns(run, dialect, meta_of(m).table) for m in models}
    missing, differences = compare_tables(tables, dialect, models, missing_ok=missing_ok)
    if differences:
        raise SchemaError(differences, dialect.name)
    return missing


def compare_tables(tables: Mapping[str, list[TableColumn] | None], dialect: Dialect,
                   models: Sequence[type], *, missing_ok: bool
                   ) -> tuple[list[type], list[SchemaDifference]]:
    """(the models whose table does not exist, every difference of the others' tables);
    `tables` holds each table's columns as read_columns() gives them."""
    differences: list[SchemaDifference] = []
    missing: list[type] = []
    for model in models:
        meta = meta_of(model)
        columns = tables[meta.table]
        if columns is None:
            missing.append(model)
            if not missing_ok:
                differences.append(SchemaDifference(
                    meta.table, None, "missing table", "a table", "no such table",
                    f"engine.create_all({meta.name})"))
            continue
        differences.extend(table_differences(meta, columns, dialect))
    return missing, differences
