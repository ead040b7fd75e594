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
from ..model import ColumnMeta, ModelMeta
from ..statements.nodes import Node
from .base import Dialect, _Out

__all__ = ["SQLiteDialect"]

_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"


class SQLiteDialect(Dialect):
    """SQLite 3.35 and newer, through the standard library's sqlite3 (? placeholders)."""

    name = "sqlite"
    paramstyle = "qmark"
    max_params = 32766
    offset_without_limit = " LIMIT -1"
    conflict_update_needs_target = False  # since 3.35: the last ON CONFLICT may omit it

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
    def lock_clause(self, meta: ModelMeta, lock: tuple[object, ...]) -> str:
        mode = lock[0]
        raise DialectError(
            f"select({meta.name}).for_{mode}(): SQLite has no row-level locks; serialize the "
            "claim in a transaction instead (engine.transaction() starts with BEGIN IMMEDIATE, "
            "so one writer runs at a time): drop for_{mode}() for SQLite".replace("{mode}", str(mode))
        )

    @override
    def visit_now(self, plus: Node | None, out: _Out) -> None:
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
    def visit_cond_like(self, node: Node, out: _Out) -> None:
        col: ColumnMeta = node[1]  # type: ignore[assignment]
        if node[3]:
            out.parts.append(f"lower({self.column_ref(col, out)}) LIKE lower(")
            self.visit_value(node[2], out)  # type: ignore[arg-type]
            out.parts.append(") ESCAPE '\\'")
        else:
            out.parts.append(f"{self.column_ref(col, out)} LIKE ")
            self.visit_value(node[2], out)  # type: ignore[arg-type]
            out.parts.append(" ESCAPE '\\'")

    def _ordered_decimal(self, col: ColumnMeta, op: str) -> None:
        if col.kind == "decimal":
            raise DialectError(
                f"{col.model_name}.{col.attr} `{op}`: SQLite stores Decimal as text, which "
                "does not order numerically; compare with eq/in, or use float or int "
                "(e.g. cents) for a column you order by on SQLite"
            )

    @override
    def visit_cond_cmp(self, node: Node, out: _Out) -> None:
        if node[2] not in ("=", "<>"):
            self._ordered_decimal(node[1], str(node[2]))  # type: ignore[arg-type]
        super().visit_cond_cmp(node, out)

    @override
    def order_item(self, col: ColumnMeta, descending: bool) -> str:
        self._ordered_decimal(col, "order_by")
        return super().order_item(col, descending)

    @override
    def visit_cond_between(self, node: Node, out: _Out) -> None:
        self._ordered_decimal(node[1], "between")  # type: ignore[arg-type]
        super().visit_cond_between(node, out)
