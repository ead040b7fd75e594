"""PostgreSQL: the reference dialect. It can express every statement of the builder.

What it does differently from the shared compiler: `now()` plus seconds through an interval,
and NULL ordering spelled out so that NULLs sort first ascending as on SQLite and MySQL. Its
catalog (pg_catalog) keeps names case-sensitive and prints a partial index's WHERE its own
way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from typing_extensions import override

from ..errors import DialectError
from ..model import ColumnMeta
from ..statements.nodes import (
    Function,
    InParams,
    Labeled,
    Lock,
    OrderItem,
    Param,
    SelectQuery,
    Value,
    iter_nodes,
)
from .base import Dialect, _Out, packed_kind
from .catalog import Catalog, ExistingIndex, IndexOn, PredicateProbe, TableColumn, squeeze

__all__ = ["PostgreSQLCatalog", "PostgreSQLDialect"]


# -- the catalog ------------------------------------------------------------------------------

_COLUMNS = """
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

_INDEX = """
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

# Tables, indexes, views and sequences share one namespace per schema (pg_class).
_RELATION = """
SELECT c.relkind
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = %s
"""

_KINDS = {"i": "index", "I": "index", "r": "table", "p": "table", "v": "view",
          "m": "materialized view", "S": "sequence", "f": "foreign table",
          "c": "composite type"}

_ALIASES = {
    "timestamptz": "timestamp with time zone", "timestamp": "timestamp without time zone",
    "varchar": "character varying", "char": "character", "int8": "bigint", "int": "integer",
    "int4": "integer", "int2": "smallint", "float8": "double precision", "float4": "real",
    "bool": "boolean", "decimal": "numeric", "time": "time without time zone",
    "timetz": "time with time zone",
}


class PostgreSQLCatalog(Catalog):
    """pg_catalog, in the connection's current schema."""

    folds_case = False  # quoted identifiers keep their case

    @override
    def columns_query(self) -> str:
        return _COLUMNS

    @override
    def columns_of(self, rows: Sequence[Any]) -> list[TableColumn] | None:
        columns = [TableColumn(str(r[0]), str(r[1]), bool(r[2]), r[3], int(r[4])) for r in rows]
        return columns or None

    @override
    def normal_type(self, declared: str) -> str:
        text = squeeze(declared)
        base, paren, rest = text.partition("(")
        if base in _ALIASES:
            text = _ALIASES[base] + (paren + rest if paren else "")
        return text

    @override
    def change_type(self, table: str, column: str, ddl: str, bare_type: str,
                    nullable: bool) -> str:
        return f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {ddl} USING {column}::{bare_type}"

    @override
    def change_nullability(self, table: str, column: str, ddl: str, nullable: bool) -> str:
        return f"ALTER TABLE {table} ALTER COLUMN {column} {'DROP' if nullable else 'SET'} NOT NULL"

    @override
    def drop_primary_key(self) -> str:
        return "DROP CONSTRAINT <the primary key's name>"

    @override
    def relation_lookup(self, name: str) -> tuple[str, tuple[object, ...]]:
        return _RELATION, (name,)

    @override
    def relation_kind(self, rows: Sequence[Any]) -> str | None:
        return _KINDS.get(str(rows[0][0]), "relation") if rows else None

    @override
    def drop_relation(self, kind: str, name: str) -> str:
        return f"DROP TYPE {name}" if kind == "composite type" else super().drop_relation(
            kind, name)

    @override
    def index_lookup(self, name: str, table: str) -> tuple[str, tuple[object, ...]]:
        return _INDEX, (name,)

    @override
    def own_index_names(self, table: str, key: Sequence[str], unique: Sequence[str],
                        identity: str | None) -> set[str]:
        # PostgreSQL's own choice (ChooseRelationName): table_pkey, table_column_key,
        # table_column_seq; one past 63 bytes is cut by rules of its own, left to the read-back
        names = {f"{table}_pkey"} if key else set()
        names |= {f"{table}_{column}_key" for column in unique}
        names |= {f"{table}_{identity}_seq"} if identity is not None else set()
        return {name for name in names if len(name.encode()) <= 63}

    @override
    def index_of(self, table: str, rows: Sequence[Any]) -> ExistingIndex | None:
        if not rows:
            return None
        kind, on, unique, columns, predicate = rows[0]
        kind = _KINDS.get(str(kind), "relation")
        if kind != "index":
            return ExistingIndex(kind)
        return ExistingIndex(kind, str(on), tuple(columns), bool(unique), predicate)

    @override
    def predicate_probe(self, table: str, index_on: IndexOn) -> PredicateProbe | None:
        # PostgreSQL keeps a predicate as a parsed tree and prints it back its own way
        # (`"n" IN (1, 2)` becomes `(n = ANY (ARRAY[(1)::bigint, (2)::bigint]))`): the
        # model's is made on an empty temporary copy of the table and printed back the same.
        temp = "tempest_index_check"
        drop = f"DROP TABLE IF EXISTS pg_temp.{self.quote(temp)}"
        return PredicateProbe(
            setup=(drop, f"CREATE TEMPORARY TABLE {self.quote(temp)} (LIKE {self.quote(table)})",
                   index_on(f"{temp}_index", temp)),
            query=("SELECT pg_catalog.pg_get_expr(i.indpred, i.indrelid) "
                   "FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
                   "WHERE c.relname = %s AND c.relnamespace = pg_catalog.pg_my_temp_schema()"),
            params=(f"{temp}_index",),
            teardown=(drop,),
        )


class PostgreSQLDialect(Dialect):
    """PostgreSQL 12 and newer, through psycopg 3 (%s placeholders)."""

    name = "postgresql"
    catalog_class = PostgreSQLCatalog
    paramstyle = "format"
    max_params = 65535
    # bytea holds any length, where MySQL's VARBINARY(n) refuses a longer value
    unbounded_kinds = frozenset({"bytes"})
    supports_listen_notify = True
    worker_holds_connection = True
    connection_id_sql = "SELECT pg_backend_pid()"
    terminate_connection_sql = "SELECT pg_terminate_backend(%s)"
    supports_copy_from = True
    display_name = "PostgreSQL"
    max_identifier_bytes = 63  # NAMEDATALEN - 1: a longer name is cut there
    # psycopg parses a query of more than 50 parameters again on every run (its cache keeps
    # none longer: psycopg._queries.MAX_CACHED_STATEMENT_PARAMS), and one statement text per
    # list length is never prepared twice: past 50 each `in` list is one array parameter,
    # `= ANY(%b)` (binary: measured cheaper to send than text). Below, a list's placeholders
    # are measured cheaper than an array (BENCHMARKS.md, "Fast paths").
    packs_in_lists_above = 50

    _TYPES: ClassVar[dict[str, str]] = {
        "int": "bigint", "float": "double precision", "decimal": "numeric", "bool": "boolean",
        "bytes": "bytea", "datetime": "timestamptz", "date": "date", "uuid": "uuid",
        "json": "jsonb",
    }

    @override
    def visit_in_params(self, node: InParams, out: _Out) -> None:
        """Write `left [NOT] IN (%s, ...)`; packed, `left = ANY(%b)` (`<> ALL(%b)`) over one
        array of the values: the same answer for every value, NULL included."""
        if not out.pack_in or out.literals is not None:
            super().visit_in_params(node, out)
            return
        self.visit_value(node.left, out)
        out.parts.append(" <> ALL(%b)" if node.negated else " = ANY(%b)")
        base = out.offset + node.start
        out.order.append(slice(base, base + node.length))
        out.kinds.append(packed_kind(node.kind))

    @override
    def column_type(self, col: ColumnMeta) -> str:
        if col.kind in ("str", "literal"):
            # Byte order, as on SQLite and MySQL's binary collation: the same comparisons and
            # ORDER BY on every dialect, and LIKE 'prefix%' can use a btree index.
            base = f"varchar({col.max_length})" if col.max_length else "text"
            return base + ' COLLATE "C"'
        if col.kind == "decimal" and col.precision is not None:
            return f"numeric({col.precision}, {col.scale})"
        return self._TYPES[col.kind]


    @override
    def copy_from_sql(self, table: str, columns: list[str], binary: bool = False) -> str:
        q = self.quote_identifier
        text = f"COPY {q(table)} ({', '.join(q(c) for c in columns)}) FROM STDIN"
        return text + " (FORMAT BINARY)" if binary else text

    @override
    def copy_types_sql(self, table: str) -> tuple[str, tuple[object, ...]]:
        # to_regclass() resolves the name as the statement would (search_path) and gives NULL,
        # not an error, for a table that is not there: the COPY then reports it.
        return ("SELECT a.attname, t.typname FROM pg_attribute a "
                "JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped",
                (self.quote_identifier(table),))

    #: the catalog types (pg_type.typname) a column kind's values are written as in binary:
    #: the first is what create_all() makes; a binary value is only read right by the type
    #: it was made for, so any other stored type (int4, a domain, timestamp without zone)
    #: takes the text copy, where the server converts
    _BINARY_TYPES: ClassVar[dict[str, tuple[str, ...]]] = {
        "int": ("int8",), "float": ("float8",), "decimal": ("numeric",), "bool": ("bool",),
        "bytes": ("bytea",), "datetime": ("timestamptz",), "date": ("date",),
        "uuid": ("uuid",), "json": ("jsonb", "json"), "str": ("text", "varchar"),
        "literal": ("text", "varchar"),
    }

    @override
    def copy_binary_types(self, kinds: Sequence[str],
                          stored: Sequence[str | None]) -> list[str] | None:
        known = self._BINARY_TYPES
        out: list[str] = []
        for kind, typname in zip(kinds, stored, strict=True):
            if typname is None or typname not in known.get(kind, ()):
                return None
            out.append(typname)
        return out

    @override
    def identity(self, col: ColumnMeta) -> str:
        return "GENERATED BY DEFAULT AS IDENTITY"

    @override
    def visit_now(self, plus: Value | None, out: _Out) -> None:
        if plus is None:
            out.parts.append("now()")
            return
        out.parts.append("(now() + CAST(")
        self.visit_value(plus, out)
        out.parts.append(" AS double precision) * interval '1 second')")

    float_type = "double precision"

    @override
    def visit_select(self, query: SelectQuery, out: _Out) -> None:
        if query.having is not None and query.group_by:
            used = set(iter_nodes((query.having,)))
            for group in query.group_by:
                if (isinstance(group, Labeled) and group.value in used
                        and any(type(n) is Param for n in iter_nodes((group.value,)))):
                    raise DialectError(
                        f"{self._label(query)}.having() on {group.label!r}, a computed group "
                        "that binds a value: PostgreSQL sees the value bound again in HAVING "
                        "as another expression than the one grouped by. Name the grouped "
                        "select with sql.cte() and filter it with where(), or group by an "
                        "expression without a bound value"
                    )
        super().visit_select(query, out)

    @override
    def typed_value(self, node: Function, out: _Out) -> None:
        # psycopg sends an int as the smallest type that holds it, and a str as unknown. Text
        # takes the columns' "C" collation: in the database's default one, values alone
        # sorted, grouped and were upper()/lower()-cased unlike the columns
        out.parts.append("CAST(")
        self.visit_value(node.args[0], out)
        out.parts.append(f" AS {self._VALUE_TYPES[node.kind]})"
                         + (' COLLATE "C"' if node.kind in ("str", "literal") else ""))

    @override
    def write_cast(self, node: Function, out: _Out) -> None:
        # a recursive query's column has the type and collation of its base: varchar(10) or
        # numeric(6, 2) there refused the step's text and numbers, and so did a text value
        # (the default collation) beside the step's columns' "C"
        out.parts.append("CAST(")
        self.visit_value(node.args[0], out)
        if node.kind in ("str", "literal"):
            out.parts.append(' AS text) COLLATE "C"')
        else:
            out.parts.append(f" AS {self._VALUE_TYPES[node.kind]})")

    _VALUE_TYPES: ClassVar[dict[str, str]] = {
        "int": "bigint", "float": "double precision", "decimal": "numeric", "bool": "boolean",
        "str": "text", "literal": "text", "bytes": "bytea", "datetime": "timestamptz",
        "date": "date", "uuid": "uuid", "json": "jsonb",
    }

    @override
    def write_round(self, node: Function, out: _Out) -> None:
        # round(double precision) rounds halves to even and takes no digits: rounded as
        # numeric, halves go away from zero as on SQLite and MySQL. A double goes through
        # its text, the shortest that reads back as it: CAST(double AS numeric) keeps 15
        # significant digits, and rounded 100.49999999999999 to 101.
        text = node.source_kind == "float"
        out.parts.append("round(CAST(CAST(" if text else "round(CAST(")
        self.visit_value(node.args[0], out)
        out.parts.append((" AS text)" if text else "") + f" AS numeric), {int(node.option or 0)})")

    def _utc(self, node: Function, out: _Out) -> None:
        self.visit_value(node.args[0], out)
        if node.source_kind == "datetime":
            out.parts.append(" AT TIME ZONE 'UTC'")  # the session's zone is no part of it

    @override
    def write_date_trunc(self, node: Function, out: _Out) -> None:
        out.parts.append(f"(date_trunc('{node.option}', ")
        self._utc(node, out)
        out.parts.append(") AT TIME ZONE 'UTC')" if node.source_kind == "datetime"
                         else ")::date)")

    @override
    def write_extract(self, node: Function, out: _Out) -> None:
        out.parts.append(f"CAST(EXTRACT({(node.option or 'day').upper()} FROM ")
        self._utc(node, out)
        out.parts.append(") AS integer)")

    @override
    def window_offset(self, offset: Value, out: _Out) -> None:
        out.parts.append("CAST(")  # lag(value, integer): a bound int may be a bigint
        self.visit_value(offset, out)
        out.parts.append(" AS integer)")

    @override
    def index_column(self, col: ColumnMeta, *, holds_null: bool) -> str:
        # An index serves ORDER BY only in its own NULL order (or the reverse of it). Built in
        # PostgreSQL's default order, NULLS LAST, it could not serve order_item()'s NULLS FIRST,
        # and the queue's claim sorted the whole table (measured: BENCHMARKS.md, "Fast paths").
        text = self.quote_identifier(col.name)
        return text + " NULLS FIRST" if holds_null else text

    @override
    def order_item(self, item: OrderItem, out: _Out) -> None:
        super().order_item(item, out)
        if item.nullable:
            # PostgreSQL sorts NULLs last ascending; the other dialects sort them first.
            out.parts.append(" NULLS LAST" if item.descending else " NULLS FIRST")

    @override
    def lock_clause(self, query: SelectQuery, lock: Lock) -> str:
        optional = [j.source.alias for j in query.joins if j.kind == "left"]
        locked = [a for a in optional if not lock.of or a in lock.of]
        if locked:
            inner = [query.source.alias] + [j.source.alias for j in query.joins
                                           if j.kind == "inner"]
            raise DialectError(
                f"{self._label(query)}.for_{lock.mode}(): PostgreSQL cannot lock the nullable "
                f"side of a LEFT JOIN ({', '.join(map(repr, locked))}); name the aliases to lock, "
                f"e.g. for_{lock.mode}(of={[a for a in inner if a]!r})"
            )
        return super().lock_clause(query, lock)
