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
- Ordered comparisons on Decimal columns, and order_by() on them, raise DialectError: SQLite
  has no exact decimal type, so decimals are stored as text that does not order numerically.
"""

from __future__ import annotations

from typing import ClassVar

from typing_extensions import override

from ..errors import DialectError
from ..model import ColumnMeta
from ..statements.nodes import (
    Aggregate,
    Between,
    Compare,
    Lock,
    OrderItem,
    SelectQuery,
    Value,
    operand_column,
)
from .base import Dialect, _Out

__all__ = ["SQLiteDialect"]

_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"


class SQLiteDialect(Dialect):
    """SQLite 3.35 and newer, through the standard library's sqlite3 (? placeholders)."""

    name = "sqlite"
    paramstyle = "qmark"
    max_params = 32766
    supports_row_locks = False
    serializes_write_transactions = True  # BEGIN IMMEDIATE takes the write lock
    offset_without_limit = " LIMIT -1"
    conflict_update_needs_target = False  # since 3.35: the last ON CONFLICT may omit it
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

    def _ordered_decimal(self, operand: Value, op: str) -> None:
        col = operand_column(operand)
        if col is not None and col.kind == "decimal":
            raise DialectError(
                f"{col.model_name}.{col.attr} `{op}`: SQLite stores Decimal as text, which "
                "does not order numerically; compare with eq/in, or use float or int "
                "(e.g. cents) for a column you order by on SQLite"
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
    def visit_between(self, node: Between, out: _Out) -> None:
        self._ordered_decimal(node.left, "between")
        super().visit_between(node, out)
