"""Existing tables against their models: what differs, and the statement that would fix it.

`create_all()` creates a table only where none exists, so a table made from an older model
stays as it was. On SQLite that is a silent wrong answer: a double-quoted name that matches
no column is read as a string, so a select of a column the table lacks returns its own name
in every row. This module reads each table's columns from the database's catalog
through the dialect's catalog (dialects/catalog.py: each database's queries and spellings are
in its dialect module), compares them with the DDL the dialect writes for the model
(`Dialect.column_type`), and lists every difference with its fix: a missing or extra column,
a changed type, nullability or primary key, an index that differs or whose name is taken,
a table name another kind of object bears (an index, a view).

It also orders models by their foreign keys (`references="table.column"`), so that
create_all() makes parents before children and drop_all() drops children first.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

from ..dialects import Dialect
from ..dialects.catalog import ExistingIndex, TableColumn, split_collation
from ..errors import QueryExecutionError, SchemaDifference, SchemaError
from ..model import (
    ForeignKey,
    Index,
    ModelMeta,
    foreign_key_problem,
    meta_of,
    reference_problem,
    split_reference,
)

__all__ = [
    "ExistingIndex", "TableColumn", "check_models", "compare_tables", "dependency_order",
    "index_differences", "model_set_differences", "own_name_differences", "read_columns",
    "reference_differences", "referenced_tables", "table_differences",
]

#: runs one catalog query with its parameters and returns the rows
Runner = Callable[[str, tuple[object, ...]], list[Any]]


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
        tables = [col.references.partition(".")[0] for col in meta.columns if col.references]
        tables += [key.table for key in meta.foreign_keys]
        for table in tables:
            j = by_table.get(table)
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


def read_columns(run: Runner, dialect: Dialect, table: str) -> list[TableColumn] | None:
    """The columns of `table` as the database has them; None when there is no such table."""
    catalog = dialect.catalog
    return catalog.columns_of(run(catalog.columns_query(), (table,)))


# -- differences ------------------------------------------------------------------------------


def _key(dialect: Dialect, name: str) -> str:
    return dialect.catalog.key(name)


def _shown_type(column: TableColumn) -> str:
    return column.type + (f" COLLATE {column.collation}" if column.collation else "")


def _null_sql(nullable: bool) -> str:
    return "NULL" if nullable else "NOT NULL"


def table_differences(meta: ModelMeta, columns: list[TableColumn],
                      dialect: Dialect) -> list[SchemaDifference]:
    """Every way the table's columns differ from the model's, each with its fix."""
    q = dialect.quote_identifier
    catalog = dialect.catalog
    table = q(meta.table)
    alter = f"ALTER TABLE {table}"
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
        type_differs = catalog.normal_type(want_type) != catalog.normal_type(have.type)
        if want_collation is not None and have.collation != want_collation:
            type_differs = True
        if type_differs:
            fix = catalog.cannot_alter or catalog.change_type(
                table, q(col.name), ddl, want_type, nullable)
            add(col.name, "changed type", ddl, _shown_type(have),
                f"{fix}; or change the annotation of {where} to the table's type")
        if have.nullable != nullable:
            fix = catalog.cannot_alter or catalog.change_nullability(
                table, q(col.name), ddl, nullable)
            if nullable:
                model_fix = f"or annotate {where} without `| None`"
            else:
                model_fix = f"or annotate {where} as `{col.type_name()} | None`"
            if not nullable and catalog.cannot_alter is None:
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
        drop = catalog.drop_primary_key() if key_held else ""
        fix = catalog.cannot_alter or (
            f"{alter} " + ", ".join(part for part in (drop, add_key) if part))
        found.append(SchemaDifference(
            meta.table, None, "changed primary key", shown(key_wanted), shown(key_held),
            f"{fix}; or declare primary_key=True on the table's key columns of {meta.name}"))
    return found


# -- indexes ----------------------------------------------------------------------------------


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
    catalog = dialect.catalog
    database = dialect.display_name
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
        same = catalog.same_predicate(existing.predicate, predicate)
    if same:
        return []
    if created:
        return [SchemaDifference(
            meta.table, None, "index name taken", want,
            f"{_existing_shown(index.name, existing, dialect)}, which {database} made for the "
            "table's key or a unique column", f"{rename}: the database chose that name first")]
    drop = catalog.drop_index(q(index.name), q(meta.table))
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
    return dialect.catalog.shown_predicate(name, existing, names)


def own_name_differences(models: Sequence[type], dialect: Dialect) -> list[SchemaDifference]:
    """Indexes named as the database names what it makes with their table (PostgreSQL's
    `table_pkey`, MySQL's index of a unique column): found before anything is created, where
    CREATE TABLE would make that object and the index be taken for it."""
    catalog = dialect.catalog
    found: list[SchemaDifference] = []
    for meta in [meta_of(m) for m in models]:
        identity = next((c.name for c in meta.columns if c.autoincrement), None)
        own = {catalog.key(name) for name in catalog.own_index_names(
            meta.table, [c.name for c in meta.columns if c.primary_key],
            [c.name for c in meta.columns if c.unique], identity)}
        for index in meta.indexes:
            if catalog.key(index.name) in own:
                found.append(SchemaDifference(
                    meta.table, None, "index name taken", _index_shown(meta, index, dialect),
                    f"{index.name}, the name {dialect.display_name} gives the index made for "
                    "the table's key or a unique column",
                    f"give {meta.name} Index {index.name!r} another name: the database "
                    "chooses that name for its own"))
    return found


def model_set_differences(models: Sequence[type]) -> list[SchemaDifference]:
    """Index names that the models given together would use on two tables. The same on
    every dialect: PostgreSQL and SQLite name indexes per schema (MySQL per table), and a
    model set is portable or it is not. (An index named like another model's table is
    refused when the model is defined.)"""
    owners: dict[str, tuple[str, str]] = {}
    found: list[SchemaDifference] = []
    for meta in [meta_of(m) for m in models]:
        for index in meta.indexes:
            key = index.name.casefold()
            owner = owners.get(key)
            if owner is None:
                owners[key] = (meta.table, f"the name of {meta.name} Index {index.name!r} (table "
                                           f"{meta.table}), given in the same call")
            elif owner[0] != meta.table:
                found.append(SchemaDifference(
                    meta.table, None, "index name taken", f"INDEX {index.name} on {meta.table}",
                    f"{index.name} is also {owner[1]}",
                    f"give {meta.name} Index {index.name!r} or the other a name of its own: "
                    "index names are per schema on PostgreSQL and SQLite, where CREATE INDEX "
                    "IF NOT EXISTS would skip the second"))
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
        for key in meta.foreign_keys:
            if key.table.casefold() not in own and key.table not in found:
                found.append(key.table)
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
        for key in meta.foreign_keys:
            found.extend(_foreign_key_differences(meta, key, metas, columns_of_table, dialect))
    return found


def _foreign_key_differences(meta: ModelMeta, key: ForeignKey, metas: list[ModelMeta],
                             columns_of_table: Callable[[str], list[TableColumn] | None],
                             dialect: Dialect) -> list[SchemaDifference]:
    """A composite foreign key that names nothing: not a model given with it, nor a table
    of the database holding its columns."""
    own = ", ".join(meta.by_attr[attr].name for attr in key.columns)
    target = f"{key.table}({', '.join(key.table_columns)})"
    where = f"the ForeignKey of {meta.name} over ({own})"
    targets = [m for m in metas if _key(dialect, m.table) == _key(dialect, key.table)]
    if targets:
        problems = [foreign_key_problem(meta, key, t) for t in targets]
        if all(problems):
            return [SchemaDifference(meta.table, own, "unknown reference", target,
                                     str(problems[-1]), f"correct {where}")]
        return []
    have = columns_of_table(key.table)
    if have is None:
        return [SchemaDifference(
            meta.table, own, "unknown reference", target, f"no table {key.table}",
            f"give create_all() the model of {key.table} too, create the table first, "
            f"or correct {where}")]
    names = {_key(dialect, c.name) for c in have}
    missing = [c for c in key.table_columns if _key(dialect, c) not in names]
    if missing:
        listed = ", ".join(c.name for c in have)
        return [SchemaDifference(
            meta.table, own, "unknown reference", target,
            f"{key.table} has no column {', '.join(missing)} (its columns: {listed})",
            f"correct {where}")]
    return []


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


# -- the steps a session runs -----------------------------------------------------------------
# Generators of the engine's steps (engine/core.py): ("run", (sql, params), sql, params), each
# answered with (rows, count). Written once for both engines.

Steps = Generator[Any, Any, Any]


def _run(sql: str, params: tuple[object, ...] | None = None) -> Steps:
    rows, _ = yield ("run", (sql, params), sql, params or ())
    return rows or []


def compare_steps(dialect: Dialect, models: Sequence[type], *, missing_ok: bool) -> Steps:
    """Compare the models with the catalog: each table, the tables their `references=`
    name, and what bears each index's name. Raises SchemaError listing every difference;
    returns the models whose table does not exist."""
    catalog = dialect.catalog
    taken: list[SchemaDifference] = []
    for model in models:
        meta = meta_of(model)
        sql, params = catalog.relation_lookup(meta.table)
        kind = catalog.relation_kind((yield from _run(sql, params)))
        if kind is not None and kind != "table":
            taken.append(_table_name_taken(meta, kind, dialect))
    if taken:
        # What bears the name is no table to compare (a view has columns, to SQLite and MySQL).
        models = [m for m in models if meta_of(m).table not in {d.table for d in taken}]
    sql = catalog.columns_query()
    found: dict[str, list[TableColumn] | None] = {}
    for table in [meta_of(m).table for m in models] + referenced_tables(models):
        if table not in found:
            found[table] = catalog.columns_of((yield from _run(sql, (table,))))
    missing, differences = compare_tables(found, dialect, models, missing_ok=missing_ok)
    differences = (taken + differences + model_set_differences(models)
                   + own_name_differences(models, dialect))
    differences += reference_differences(models, found.get, dialect)
    for model in models:
        meta = meta_of(model)
        for index in meta.indexes:
            existing = yield from _index_steps(dialect, meta, index)
            predicate = None
            if (existing is not None and existing.predicate is not None
                    and index.where is not None and existing.table == meta.table):
                predicate = yield from _predicate_steps(dialect, meta, index)
            differences += index_differences(
                meta, index, existing, dialect, predicate=predicate,
                missing_ok=missing_ok or model in missing)
    if differences:
        raise SchemaError(differences, dialect.name)
    return missing


def _table_name_taken(meta: ModelMeta, kind: str, dialect: Dialect) -> SchemaDifference:
    """The difference of a model whose table name an object of another kind bears."""
    drop = dialect.catalog.drop_relation(kind, dialect.quote_identifier(meta.table))
    kinds = kind + ("es" if kind.endswith("x") else "s")
    return SchemaDifference(
        meta.table, None, "table name taken", "a table", f"the {kind} {meta.table}",
        f"{drop}, or give {meta.name} another table=: tables and {kinds} share one namespace "
        f"on {dialect.display_name}, so CREATE TABLE IF NOT EXISTS would skip the table")


def _index_steps(dialect: Dialect, meta: ModelMeta, index: Index) -> Steps:
    """What the database holds under an index's name (None: nothing)."""
    sql, params = dialect.catalog.index_lookup(index.name, meta.table)
    return dialect.catalog.index_of(meta.table, (yield from _run(sql, params)))


def _predicate_steps(dialect: Dialect, meta: ModelMeta, index: Index) -> Steps:
    """An index's WHERE in the database's own spelling, to compare with the catalog's."""
    from ..dialects.ddl import create_index_sql, index_predicate_sql

    probe = dialect.catalog.predicate_probe(
        meta.table, lambda name, table: create_index_sql(meta, index, dialect, on=(name, table)))
    if probe is None:
        return index_predicate_sql(meta, index, dialect)
    try:
        for sql in probe.setup:
            yield from _run(sql)
        rows = yield from _run(probe.query, probe.params)
    finally:
        for sql in probe.teardown:
            yield from _run(sql)
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def create_steps(dialect: Dialect, models: Sequence[type],
                 already_done: Callable[[BaseException], bool]) -> Steps:
    """CREATE TABLE and CREATE INDEX IF NOT EXISTS, parents first, once all compare; then
    each index is read back, so that a name the database gave an object of its own (a
    PostgreSQL table's `_pkey`, a MySQL unique column's index) is never taken for it.
    `already_done`: the driver's test of a CREATE that failed only because it exists."""
    from ..dialects.ddl import create_statements

    ordered = dependency_order(models)
    yield from compare_steps(dialect, ordered, missing_ok=True)
    for model in ordered:
        for sql in create_statements(model, dialect):
            try:
                yield from _run(sql)
            except QueryExecutionError as exc:
                if exc.__cause__ is None or not already_done(exc.__cause__):
                    raise
        meta = meta_of(model)
        for index in meta.indexes:
            existing = yield from _index_steps(dialect, meta, index)
            differences = index_differences(meta, index, existing, dialect, predicate=None,
                                            missing_ok=False, created=True)
            if differences:
                raise SchemaError(differences, dialect.name)


def drop_steps(dialect: Dialect, models: Sequence[type]) -> Steps:
    """DROP TABLE IF EXISTS, children before the tables they reference."""
    for model in reversed(dependency_order(models)):
        yield from _run(f"DROP TABLE IF EXISTS {dialect.quote_identifier(meta_of(model).table)}")
