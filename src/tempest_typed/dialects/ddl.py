"""DDL from models: CREATE TABLE and CREATE [UNIQUE] INDEX ... [WHERE], per dialect.

The column types come from each dialect (`column_type`); this module assembles them. DDL is
the one place values are written inline (PostgreSQL takes no parameter in CREATE INDEX ...
WHERE), so only str, int, float, bool and Decimal literals are accepted there (the model
refuses any other when it is defined), each written by its base type and quoted by the
dialect (`Dialect.literal`).
"""

from __future__ import annotations

from ..expressions import Expression
from ..model import Index, ModelMeta, foreign_key_pairs, meta_of, split_reference
from ..statements.where import condition_node, expression_node
from .base import Dialect, _Out

__all__ = [
    "CreateIndex", "CreateTable", "create_index_sql", "create_statements", "create_table_sql",
    "index_predicate_sql",
]


def _default_sql(meta: ModelMeta, value: object, dialect: Dialect) -> str:
    if isinstance(value, Expression):
        values: list[object] = []
        node = expression_node(meta, value, values, "server_default")
        out = _Out(literals=values)
        dialect.visit_value(node, out)
        return "(" + "".join(out.parts) + ")"
    return dialect.literal(value)


def create_table_sql(meta: ModelMeta, dialect: Dialect) -> str:
    """CREATE TABLE IF NOT EXISTS for a model."""
    q = dialect.quote_identifier
    lines: list[str] = []
    #: the foreign keys written as table constraints: (own SQL names, table, its SQL names)
    keys: list[tuple[list[str], str, list[str]]] = []
    inline_pk = False
    for col in meta.columns:
        parts = [dialect.quote_identifier(col.name), dialect.column_type(col)]
        if col.autoincrement:
            identity = dialect.identity(col)
            parts.append(identity)
            inline_pk = "PRIMARY KEY" in identity
        if not col.nullable and "PRIMARY KEY" not in parts[-1]:
            parts.append("NOT NULL")
        if col.server_default is not None:
            parts.append("DEFAULT " + _default_sql(meta, col.server_default, dialect))
        if col.unique and not col.primary_key:
            parts.append("UNIQUE")
        if col.kind == "literal":
            allowed = ", ".join(dialect.literal(v) for v in col.literal_values)
            parts.append(f"CHECK ({dialect.quote_identifier(col.name)} IN ({allowed}))")
        length_check = dialect.length_check(col)
        if length_check is not None:
            parts.append(length_check)
        if col.references:
            table, target = split_reference(meta, col)
            if dialect.inline_references:
                parts.append(f"REFERENCES {q(table)} ({q(target)})")
            else:
                keys.append(([col.name], table, [target]))
        lines.append(" ".join(parts))
    if meta.primary_key and not inline_pk:
        lines.append(f"PRIMARY KEY ({', '.join(q(c.name) for c in meta.primary_key)})")
    for key in meta.foreign_keys:
        pairs = foreign_key_pairs(meta, key)
        keys.append(([own for own, _ in pairs], key.table, [theirs for _, theirs in pairs]))
    for n, (own, table, theirs) in enumerate(keys, 1):
        name = dialect.foreign_key_name(meta.table, n)
        lines.append((f"CONSTRAINT {q(name)} " if name is not None else "")
                     + f"FOREIGN KEY ({', '.join(map(q, own))}) REFERENCES {q(table)} "
                     f"({', '.join(map(q, theirs))})")
    body = ",\n    ".join(lines)
    return (f"CREATE TABLE IF NOT EXISTS {dialect.quote_identifier(meta.table)} (\n    {body}\n)"
            f"{dialect.table_options}")


def create_index_sql(meta: ModelMeta, index: Index, dialect: Dialect, *,
                     on: tuple[str, str] | None = None) -> str:
    """CREATE [UNIQUE] INDEX IF NOT EXISTS for one of a model's indexes (`on`: another
    (index name, table name) to give it, for comparing a definition with the catalog's)."""
    cols = ", ".join(
        dialect.index_column(column, holds_null=column.nullable
                             and not _predicate_excludes_null(index, column.attr))
        for column in (meta.column(c, f"Index {index.name!r}") for c in index.columns)
    )
    prefix = dialect.create_index_prefix().format(unique="UNIQUE " if index.unique else "")
    index_name, table_name = on or (index.name, meta.table)
    name, table = dialect.quote_identifier(index_name), dialect.quote_identifier(table_name)
    text = f"{prefix} {name} ON {table} ({cols})"
    predicate = index_predicate_sql(meta, index, dialect)
    return text if predicate is None else f"{text} WHERE {predicate}"


def index_predicate_sql(meta: ModelMeta, index: Index, dialect: Dialect) -> str | None:
    """The WHERE of an index as the dialect writes it; None for a full index (and on MySQL,
    which has no partial index: a predicate it can drop is dropped, any other refused)."""
    if index.where is None:
        return None
    values: list[object] = []
    node = condition_node(meta, index.where, values, f"Index {index.name!r} where=")
    if not dialect.supports_partial_indexes:
        dialect.without_partial_index(meta, index, node)  # refuses one whose WHERE matters
        return None
    return dialect.inline_condition(node, values)


def _predicate_excludes_null(index: Index, attr: str) -> bool:
    """True when the index's where= says {attr: {"is_null": False}}, as the seed's does."""
    where = index.where
    spec = where.get(attr) if isinstance(where, dict) else None
    return isinstance(spec, dict) and spec.get("is_null") is False


class CreateTable:
    """The CREATE TABLE statement of a model."""

    def __init__(self, model: type) -> None:
        self.meta = meta_of(model)

    def compile(self, dialect: str | Dialect = "postgresql") -> str:
        """The DDL text for `dialect`."""
        from . import get_dialect

        return create_table_sql(self.meta, get_dialect(dialect))


class CreateIndex:
    """The CREATE INDEX statement of one of a model's indexes."""

    def __init__(self, model: type, index: Index) -> None:
        self.meta = meta_of(model)
        self.index = index

    def compile(self, dialect: str | Dialect = "postgresql") -> str:
        """The DDL text for `dialect`."""
        from . import get_dialect

        return create_index_sql(self.meta, self.index, get_dialect(dialect))


def create_statements(model: type, dialect: str | Dialect) -> list[str]:
    """CREATE TABLE then CREATE INDEX for each index of a model, all IF NOT EXISTS."""
    from . import get_dialect

    d = get_dialect(dialect)
    meta = meta_of(model)
    return [create_table_sql(meta, d)] + [create_index_sql(meta, i, d) for i in meta.indexes]
