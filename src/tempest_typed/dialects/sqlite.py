"""SQLite: one writer at a time, no row locks, text storage for dates and UUIDs.

What it does differently:
- `for_update()` / `for_share()` raise DialectError: SQLite has no row locks, and a lock that
  does not exist is worse than an error. Serialize the claim in a transaction instead (the
  engine opens write transactions with BEGIN IMMEDIATE, so one claimer runs at a time).
- `?` placeholders; OFFSET needs a LIMIT (`LIMIT -1`).
- Timestamps are stored as UTC text `YYYY-MM-DD HH:MM:SS.ffffff`, so `sql.now()` is spelled
  with strftime in the same format and compares correctly with bound datetimes.
- LIKE escapes with a backslash as on the other dialects (`ESCAPE '\\'`); the engine turns
  on case-sensitive LIKE, so `like` is case-sensitive everywhere and `ilike` lowercases.
  SQLite then counts LIKE as non-deterministic, which an index's WHERE may not be, so
  there the pattern operators are written as GLOB (the same match, case-sensitive).
- Ordered comparisons on Decimal columns, and order_by() on them, raise DialectError: SQLite
  has no exact decimal type, so decimals are stored as text that does not order numerically.
  So do those on a Decimal computed from them (a label, a function, a window, sql.scalar),
  which is text as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from typing_extensions import override

from ..errors import DialectError
from ..model import ColumnMeta, ModelMeta
from ..statements.nodes import (
    Aggregate,
    BackoffDelay,
    Between,
    Compare,
    ConflictNothing,
    ConflictUpdate,
    Function,
    Labeled,
    Like,
    Lock,
    OrderItem,
    Param,
    ScalarSubquery,
    SelectQuery,
    Value,
    operand_column,
)
from .base import Dialect, _Out
from .catalog import Catalog, ExistingIndex, TableColumn

__all__ = ["SQLiteCatalog", "SQLiteDialect", "overflow_hint"]

_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"


# -- the catalog ------------------------------------------------------------------------------

# The table-valued form of PRAGMA table_info takes the table name as a parameter.
_COLUMNS = 'SELECT name, type, "notnull", pk FROM pragma_table_info(?)'

# Names of tables, indexes and views share one namespace and compare without case (ASCII)
# here; a trigger's are apart (an index or a table may bear a trigger's name).
_INDEX = """
SELECT m.type, m.tbl_name, l."unique", m.sql, i.name
FROM sqlite_master m
LEFT JOIN pragma_index_list(m.tbl_name) l ON l.name = m.name
LEFT JOIN pragma_index_info(m.name) i
WHERE m.name = ? COLLATE NOCASE AND m.type != 'trigger'
ORDER BY i.seqno
"""

_RELATION = "SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE AND type != 'trigger'"


def _affinity(declared: str) -> str:
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


class SQLiteCatalog(Catalog):
    """sqlite_master and the table_info / index_list pragmas."""

    cannot_alter = ("SQLite cannot alter a column: rebuild the table (create it anew from the "
                    "model, copy the rows over, drop the old one)")

    @override
    def columns_query(self) -> str:
        return _COLUMNS

    @override
    def columns_of(self, rows: Sequence[Any]) -> list[TableColumn] | None:
        # The rowid alias (a lone INTEGER PRIMARY KEY) holds no NULL, though table_info
        # reports it nullable when the DDL did not say NOT NULL.
        keys = sum(1 for r in rows if r[3])
        columns = [TableColumn(str(r[0]), str(r[1]),
                               not r[2] and not (keys == 1 and r[3]
                                                 and str(r[1]).upper() == "INTEGER"),
                               None, int(r[3]))
                   for r in rows]
        return columns or None

    @override
    def normal_type(self, declared: str) -> str:
        return _affinity(declared)

    @override
    def relation_lookup(self, name: str) -> tuple[str, tuple[object, ...]]:
        return _RELATION, (name,)

    @override
    def relation_kind(self, rows: Sequence[Any]) -> str | None:
        return str(rows[0][0]) if rows else None

    @override
    def index_lookup(self, name: str, table: str) -> tuple[str, tuple[object, ...]]:
        return _INDEX, (name,)

    @override
    def index_of(self, table: str, rows: Sequence[Any]) -> ExistingIndex | None:
        if not rows:
            return None
        kind, on, unique, text, _ = rows[0]
        if kind != "index":
            return ExistingIndex(str(kind))
        predicate = str(text) if text is not None and " WHERE " in str(text) else None
        return ExistingIndex("index", str(on), tuple(r[4] for r in rows), bool(unique),
                             predicate)

    @override
    def same_predicate(self, held: str, predicate: str) -> bool:
        return held.endswith(" WHERE " + predicate)  # the CREATE INDEX text as written

    @override
    def shown_predicate(self, name: str, existing: ExistingIndex, columns: str) -> str:
        assert existing.predicate is not None
        return existing.predicate  # the CREATE INDEX text as written


class SQLiteDialect(Dialect):
    """SQLite 3.35 and newer, through the standard library's sqlite3 (? placeholders)."""

    name = "sqlite"
    catalog_class = SQLiteCatalog
    paramstyle = "qmark"
    max_params = 32766
    # TEXT and BLOB hold any length: values() and set() refuse a longer bound value, but a
    # computed one (from_select, an expression in set()) was stored where PostgreSQL's and
    # MySQL's VARCHAR refuse it, and lookups rely on no row being longer
    unbounded_kinds = frozenset({"str", "literal", "bytes"})
    supports_row_locks = False
    supports_update_from = False  # its RETURNING reads only the table updated
    display_name = "SQLite"
    serializes_write_transactions = True  # BEGIN IMMEDIATE takes the write lock
    offset_without_limit = " LIMIT -1"
    conflict_update_needs_target = False  # since 3.35: the last ON CONFLICT may omit it
    conflict_after_select_needs_where = True  # "the parsing ambiguity" of its upsert page
    case_fold = "lower"  # no ILIKE
    like_escape = " ESCAPE '\\'"  # LIKE has no escape character by default

    _TYPES: ClassVar[dict[str, str]] = {
        "str": "TEXT", "literal": "TEXT", "int": "INTEGER", "float": "REAL", "decimal": "TEXT",
        "bool": "INTEGER", "bytes": "BLOB", "datetime": "TEXT", "date": "TEXT", "uuid": "TEXT",
        "json": "TEXT",
    }

    @override
    def column_type(self, col: ColumnMeta) -> str:
        return self._TYPES[col.kind]


    @override
    def identity(self, col: ColumnMeta) -> str:
        # Only a column declared exactly INTEGER PRIMARY KEY becomes the rowid alias.
        return "PRIMARY KEY"

    @override
    def default_rows(self, meta: ModelMeta, n_rows: int,
                     conflict: ConflictNothing | ConflictUpdate | None) -> str:
        if n_rows == 1 and conflict is None:
            return "DEFAULT VALUES"
        # DEFAULT VALUES is one row and takes no ON CONFLICT, and VALUES has no DEFAULT: a
        # column whose NULL is its default (the rowid alias takes the next id) stands in.
        for col in meta.columns:
            if col.autoincrement or (col.nullable and col.server_default is None):
                return (f"({self.quote(col.name)}) VALUES "
                        + ", ".join(["(NULL)"] * n_rows))
        what = "several rows" if n_rows > 1 else "a row with on_conflict_...()"
        raise DialectError(
            f"insert({meta.name}).values(): {what} of defaults only: SQLite writes DEFAULT "
            "VALUES for one row without a conflict clause, and VALUES has no DEFAULT; give "
            "each row a value for one column, or insert the rows one at a time"
        )

    @override
    def literal(self, value: object) -> str:
        if isinstance(value, bool):
            return "1" if value else "0"
        return super().literal(value)

    @override
    def lock_clause(self, query: SelectQuery, lock: Lock) -> str:
        mode = lock.mode
        raise DialectError(
            f"{self._label(query)}.for_{mode}(): SQLite has no row-level locks; serialize the "
            "claim in a transaction instead (engine.transaction() starts with BEGIN IMMEDIATE, "
            f"so one writer runs at a time): drop for_{mode}() for SQLite"
        )

    @override
    def visit_now(self, plus: Value | None, out: _Out) -> None:
        if plus is None:
            out.parts.append(f"({_NOW} || '000')")
            return
        out.parts.append("(strftime('%Y-%m-%d %H:%M:%f', 'now', (")
        self.visit_value(plus, out)
        out.parts.append(") || ' seconds') || '000')")

    @override
    def visit_excluded(self, col: ColumnMeta, out: _Out) -> None:
        out.parts.append("excluded." + self.quote(col.name))

    @override
    def visit_like(self, node: Like, out: _Out) -> None:
        if out.literals is None or not isinstance(node.pattern, Param):
            super().visit_like(node, out)
            return
        # An index's WHERE: with case_sensitive_like on (the engine's), SQLite counts LIKE
        # as non-deterministic and refuses it there; GLOB matches the same, case-sensitive.
        glob = self.literal(_glob(str(out.literals[node.pattern.value_index])))
        if node.case_insensitive:
            out.parts.append("lower(")
            self.visit_value(node.left, out)
            out.parts.append(f") GLOB lower({glob})")
        else:
            self.visit_value(node.left, out)
            out.parts.append(f" GLOB {glob}")

    @override
    def visit_backoff(self, node: BackoffDelay, out: _Out) -> None:
        # The math functions (power) are a compile-time option of SQLite: a shift doubles.
        self._write(out, "MIN(", node.first, " * (1 << MIN(", node.attempts, " - 1, 30)), ",
                    node.cap, ")")

    def _ordered_decimal(self, operand: Value | Labeled, op: str) -> None:
        col = operand_column(operand)
        if col is not None and col.kind == "decimal":
            raise DialectError(
                f"{col.model_name}.{col.attr} `{op}`: SQLite stores Decimal as text, which "
                "does not order numerically; compare with eq/in, or use float or int "
                "(e.g. cents) for a column you order by on SQLite"
            )
        what = _computed_decimal(operand)
        if what is not None:
            raise DialectError(
                f"{what} `{op}`: SQLite stores Decimal as text, which does not order "
                "numerically, and neither does a value computed from it (a label, a function, "
                "a window, a subquery); order or compare in Python over the fetched rows, or "
                "use float or int (e.g. cents) for a column you order by on SQLite"
            )

    @override
    def check_aggregate(self, node: Aggregate) -> None:
        if node.func != "count" and node.argument is not None:
            col = operand_column(node.argument)
            if col is not None and col.kind == "decimal":
                raise DialectError(
                    f"sql.{node.func}({col.attr!r}): SQLite stores Decimal as text, so it "
                    f"cannot {node.func} {col.model_name}.{col.attr} exactly; compute it in "
                    "Python over the fetched values, or store an int (e.g. cents) or a float "
                    "on SQLite"
                )

    float_type = "REAL"
    length_function = "LENGTH"  # characters of text

    #: strftime formats of date_trunc: a datetime as the fixed-width UTC text it is stored as
    _TRUNC: ClassVar[dict[str, str]] = {
        "year": "%Y-01-01 00:00:00.000000", "month": "%Y-%m-01 00:00:00.000000",
        "day": "%Y-%m-%d 00:00:00.000000", "hour": "%Y-%m-%d %H:00:00.000000",
        "minute": "%Y-%m-%d %H:%M:00.000000",
    }
    _PARTS: ClassVar[dict[str, str]] = {
        "year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "dow": "%w",
    }

    def _decimal_computed(self, node: Function, what: str) -> None:
        if "decimal" in (node.kind, node.source_kind):
            raise DialectError(
                f"{what}: SQLite stores Decimal as text, so it cannot compute with it exactly; "
                "compute it in Python over the fetched values, or store an int (e.g. cents) "
                "or a float on SQLite"
            )

    @override
    def check_arithmetic(self, node: Function) -> None:
        if node.kind == "decimal":
            self._decimal_computed(node, f"arithmetic ({node.name}) on a Decimal")

    @override
    def write_round(self, node: Function, out: _Out) -> None:
        self._decimal_computed(node, "sql.round() of a Decimal")
        super().write_round(node, out)

    @override
    def write_cast(self, node: Function, out: _Out) -> None:
        # a column holds any value: a set operation's int beside a float came back an int, a
        # Decimal (stored as text) beside a float as text
        if node.kind != "float":
            super().write_cast(node, out)
            return
        out.parts.append("CAST(")
        self.visit_value(node.args[0], out)
        out.parts.append(" AS REAL)")

    @override
    def visit_function(self, node: Function, out: _Out) -> None:
        if node.name == "abs":
            self._decimal_computed(node, "sql.abs() of a Decimal")
        if node.name in ("+", "-", "*") and node.kind == "int" and not out.int_checked:
            # Integer arithmetic past 64 bits yields a REAL here, silently (read back as an
            # int of the wrong value, or stored in an int column), where PostgreSQL and MySQL
            # fail the statement: a REAL result is made the error SQLite gives a SUM that
            # overflows, "integer overflow" (ABS of the smallest integer). The arithmetic
            # inside it yields a REAL too, so one check at the outermost serves it all.
            out.int_checked = True
            try:
                out.parts.append("CASE WHEN typeof(")
                super().visit_function(node, out)
                out.parts.append(f") = 'real' THEN {_OVERFLOW} ELSE ")
                super().visit_function(node, out)
                out.parts.append(" END")
            finally:
                out.int_checked = False
            return
        super().visit_function(node, out)

    @override
    def write_date_trunc(self, node: Function, out: _Out) -> None:
        unit = node.option or "day"
        text = self._TRUNC[unit]
        if node.source_kind == "date":
            text = text[:len("%Y-%m-%d")]  # a date is stored as its ISO text
        out.parts.append(f"strftime('{text}', ")
        self._to_the_second(node, out)
        out.parts.append(")")

    def _to_the_second(self, node: Function, out: _Out) -> None:
        # strftime rounds the instant to the millisecond: 9999-12-31 23:59:59.9995 or later
        # became year 10000, and NULL. No unit of date_trunc or extract is below a minute,
        # so the text to the second ("YYYY-MM-DD HH:MM:SS") is read.
        if node.source_kind == "date":
            self.visit_value(node.args[0], out)
            return
        out.parts.append("substr(")
        self.visit_value(node.args[0], out)
        out.parts.append(", 1, 19)")

    @override
    def write_extract(self, node: Function, out: _Out) -> None:
        part = node.option or "day"
        out.parts.append(f"CAST(strftime('{self._PARTS[part]}', ")
        if part == "dow":
            # %w counts from the instant rounded to the millisecond: in the day's last half
            # millisecond (23:59:59.9995) it named the next day. The date alone has one day.
            out.parts.append("substr(")
            self.visit_value(node.args[0], out)
            out.parts.append(", 1, 10)")
        else:
            self._to_the_second(node, out)
        out.parts.append(") AS INTEGER)")

    @override
    def visit_compare(self, node: Compare, out: _Out) -> None:
        if node.op not in ("=", "<>"):
            self._ordered_decimal(node.left, node.op)
        super().visit_compare(node, out)

    @override
    def order_item(self, item: OrderItem, out: _Out) -> None:
        self._ordered_decimal(item.operand, "order_by")
        super().order_item(item, out)

    @override
    def visit_scalar_subquery(self, node: ScalarSubquery, out: _Out) -> None:
        # SQLite takes a scalar subquery's first row where PostgreSQL and MySQL raise when it
        # finds several: the subquery is counted first, and more than one row fails the
        # statement ("integer overflow").
        out.parts.append("(CASE WHEN (SELECT count(*) FROM (")
        self._subquery(node.query, node.offset, out)
        out.parts.append(f"{_SEVERAL_ROWS} ELSE (")
        self._subquery(node.query, node.offset, out)
        out.parts.append(") END)")

    @override
    def visit_between(self, node: Between, out: _Out) -> None:
        self._ordered_decimal(node.left, "between")
        super().visit_between(node, out)


#: an expression that fails the statement with SQLite's "integer overflow"
_OVERFLOW = "abs(-9223372036854775807 - 1)"
#: how a scalar subquery that finds more than one row fails the statement
_SEVERAL_ROWS = f")) > 1 THEN {_OVERFLOW}"


def overflow_hint(sql: str) -> str:
    """What SQLite's "integer overflow" means for a statement compiled here: SQLite has no
    error of its own for a scalar subquery that finds several rows, which fails as one."""
    if _SEVERAL_ROWS in sql:
        return ("hint: a scalar subquery (sql.scalar) found more than one row, or an integer "
                "left the 64-bit range; PostgreSQL and MySQL refuse either too")
    return "hint: an integer left the 64-bit range; PostgreSQL and MySQL refuse it too"


def _computed_decimal(node: object) -> str | None:
    """What a computed value that is a Decimal is (a label, a function or window, a scalar
    subquery, an aggregate), or None when it is none: SQLite holds it as text."""
    if isinstance(node, Labeled):
        col = operand_column(node.value)
        inner = (f"{col.model_name}.{col.attr}" if col is not None and col.kind == "decimal"
                 else _computed_decimal(node.value))
        return None if inner is None else f"{node.label!r} ({inner})"
    if isinstance(node, Function | Aggregate):
        if node.kind != "decimal":
            return None
        if isinstance(node, Aggregate):
            return f"sql.{node.func}() of a Decimal"
        return ("a window function of a Decimal" if node.name == "over"
                else f"{node.name} of a Decimal" if node.name in ("+", "-", "*")
                else "a Decimal widened beside another member's" if node.name == "cast"
                else f"sql.{node.name}() of a Decimal")
    if isinstance(node, ScalarSubquery):
        items = node.query.items
        if items:
            col = operand_column(items[0])
            if col is not None and col.kind == "decimal":
                return f"sql.scalar() of {col.model_name}.{col.attr}"
            inner = _computed_decimal(items[0])
            return None if inner is None else f"sql.scalar() of {inner}"
    return None


def _glob(pattern: str) -> str:
    """The GLOB pattern of a LIKE pattern escaped with a backslash: `%` is `*`, `_` is `?`,
    and GLOB's own `*`, `?` and `[` match themselves."""
    out: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            char = next(chars, "\\")
        elif char == "%":
            out.append("*")
            continue
        elif char == "_":
            out.append("?")
            continue
        out.append(f"[{char}]" if char in "*?[" else char)
    return "".join(out)
