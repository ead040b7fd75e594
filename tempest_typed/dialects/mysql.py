"""MySQL 8 and MariaDB 10.6+: what they cannot express raises DialectError with the way out.

What they do differently from the shared compiler:
- backtick identifiers, `%s` placeholders (PyMySQL), `UTC_TIMESTAMP(6)` for `sql.now()`.
- No LIMIT inside an `IN (SELECT ...)` subquery, and no subquery on the table being updated
  or deleted: both raise DialectError pointing to the two-step claim (select ... for_update
  in a transaction, then update where id in the fetched ids).
- `ON DUPLICATE KEY UPDATE` has no conflict target and no predicate: a target, `where=`,
  `index_where=` or `update_where=` raises DialectError; call `on_conflict_do_nothing()`
  (spelled INSERT IGNORE) or `on_conflict_do_update(None, set)` without them, which fire on
  any unique key.
- RETURNING: MySQL has none; MariaDB has INSERT/DELETE ... RETURNING but no UPDATE ...
  RETURNING.
- Locks: MySQL 8 spells `FOR SHARE` and takes `OF`; MariaDB spells `LOCK IN SHARE MODE` and
  has no `OF`, which the builder only allows for the selected table itself, where leaving it
  out locks the same rows. The engine chooses `mariadb` or `mysql` from the server's version
  string; `compile("mysql")` spells MySQL 8, `compile("mariadb")` MariaDB.
- OFFSET needs a LIMIT (`LIMIT 18446744073709551615`).
"""

from __future__ import annotations

from typing import ClassVar

from typing_extensions import override

from ..errors import DialectError
from ..model import ColumnMeta, ModelMeta
from ..statements.nodes import Node
from .base import Dialect, _Out, subqueries

__all__ = ["MariaDBDialect", "MySQLDialect"]

_TWO_STEP = (
    "use the two-step claim: in engine.transaction(), select the ids with "
    "for_update(skip_locked=True), then update(...).where({\"id\": {\"in\": ids}})"
)


class MySQLDialect(Dialect):
    """MySQL 8.0 and newer, through PyMySQL (%s placeholders)."""

    name = "mysql"
    paramstyle = "format"
    max_params = 65535
    offset_without_limit = " LIMIT 18446744073709551615"
    supports_returning: ClassVar[frozenset[str]] = frozenset()

    table_options = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    #: a binary collation without trailing-space padding: strings compare as on PostgreSQL
    text_collation = "utf8mb4_0900_bin"

    @override
    def column_type(self, col: ColumnMeta) -> str:
        kind = col.kind
        text = f" CHARACTER SET utf8mb4 COLLATE {self.text_collation}"
        if kind == "str":
            if col.max_length:
                return f"VARCHAR({col.max_length})" + text
            # An index key must have a bounded length; 255 utf8mb4 characters fit every engine.
            return ("VARCHAR(255)" if col.indexed else "LONGTEXT") + text
        if kind == "literal":
            return f"VARCHAR({max(len(v) for v in col.literal_values)})" + text
        if kind == "bytes":
            if col.max_length:
                return f"VARBINARY({col.max_length})"
            return "VARBINARY(255)" if col.indexed else "LONGBLOB"
        if kind == "decimal" and col.precision is not None:
            return f"DECIMAL({col.precision}, {col.scale})"
        return {
            "int": "BIGINT", "float": "DOUBLE", "decimal": "DECIMAL(65, 30)", "bool": "BOOLEAN",
            "datetime": "DATETIME(6)", "date": "DATE",
            "uuid": "CHAR(36) CHARACTER SET ascii COLLATE ascii_bin", "json": "JSON",
        }[kind]

    @override
    def identity(self, col: ColumnMeta) -> str:
        return "AUTO_INCREMENT"

    @override
    def create_index_prefix(self) -> str:
        return "CREATE {unique}INDEX"  # MySQL 8 has no IF NOT EXISTS here; the engine checks

    @override
    def string_literal(self, value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"

    @override
    def quote_identifier(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    @override
    def returning_error(self, kind: str, meta: ModelMeta) -> str:
        return (
            f"{kind}({meta.name}).returning(): {self.name} has no RETURNING; run the "
            "statement, then select the rows you need in the same transaction"
        )

    @override
    def visit_now(self, plus: Node | None, out: _Out) -> None:
        if plus is None:
            out.parts.append("UTC_TIMESTAMP(6)")
            return
        out.parts.append("(UTC_TIMESTAMP(6) + INTERVAL ROUND((")
        self.visit_value(plus, out)
        out.parts.append(") * 1000000) MICROSECOND)")

    @override
    def visit_excluded(self, col: ColumnMeta, out: _Out) -> None:
        out.parts.append(f"VALUES({self.quote(col.name)})")

    @override
    def visit_cond_like(self, node: Node, out: _Out) -> None:
        col: ColumnMeta = node[1]  # type: ignore[assignment]
        if node[3]:
            out.parts.append(f"LOWER({self.column_ref(col, out)}) LIKE LOWER(")
            self.visit_value(node[2], out)  # type: ignore[arg-type]
            out.parts.append(")")
        else:
            out.parts.append(f"{self.column_ref(col, out)} LIKE ")
            self.visit_value(node[2], out)  # type: ignore[arg-type]

    @override
    def check_subquery(self, sub: Node, out: _Out) -> None:
        meta: ModelMeta = sub[1]  # type: ignore[assignment]
        if sub[5] is not None or sub[6] is not None:
            raise DialectError(
                f"select({meta.name}).limit()/offset() inside an `in` subquery: {self.name} "
                f"rejects LIMIT in IN (SELECT ...); {_TWO_STEP}"
            )

    @override
    def visit_where_of(self, meta: ModelMeta, where: Node | None, out: _Out) -> None:
        found = subqueries(where)
        for sub in found:
            self.check_subquery(sub, out)
        for sub in found:
            if sub[1] is meta:
                raise DialectError(
                    f"{meta.name}: {self.name} cannot read the table being updated or deleted "
                    f"in an `in` subquery (error 1093); {_TWO_STEP}"
                )
        super().visit_where_of(meta, where, out)

    @override
    def visit_conflict(self, meta: ModelMeta, cols: tuple[ColumnMeta, ...], conflict: Node,
                       out: _Out) -> None:
        action = conflict[0]
        predicates = (conflict[2],) if action == "nothing" else (conflict[3], conflict[4])
        if conflict[1] is not None or any(p is not None for p in predicates):
            what = "on_conflict_do_nothing" if action == "nothing" else "on_conflict_do_update"
            raise DialectError(
                f"insert({meta.name}).{what}(): {self.name}'s ON DUPLICATE KEY UPDATE has no "
                "conflict target and no predicate; it fires on any unique key (rows whose key "
                "columns are NULL never conflict). Call it without a target and without "
                "where/index_where/update_where on this dialect"
                + (", i.e. on_conflict_do_nothing()" if action == "nothing" else
                   ", i.e. on_conflict_do_update(None, set)")
            )
        if action == "nothing":
            return  # spelled INSERT IGNORE, see insert_verb
        out.parts.append(" ON DUPLICATE KEY UPDATE ")
        self.visit_assignments(conflict[2], out)  # type: ignore[arg-type]

    @override
    def insert_verb(self, conflict: Node | None) -> str:
        # INSERT IGNORE skips rows that hit any unique key, and RETURNING (MariaDB) then
        # yields only the rows inserted, as ON CONFLICT DO NOTHING does. ON DUPLICATE KEY
        # UPDATE pk = pk would count and return the existing row instead. IGNORE also turns
        # some other errors into warnings (a foreign key that does not match skips the row):
        # the README lists it among MySQL's differences.
        if conflict is not None and conflict[0] == "nothing":
            return "INSERT IGNORE INTO"
        return "INSERT INTO"

    @override
    def visit_insert(self, key: Node, out: _Out) -> None:
        meta: ModelMeta = key[1]  # type: ignore[assignment]
        if key[5] is not None:
            self.check_returning("insert", meta)
        super().visit_insert(key, out)


class MariaDBDialect(MySQLDialect):
    """MariaDB 10.6 and newer: INSERT/DELETE ... RETURNING, LOCK IN SHARE MODE, no OF."""

    name = "mariadb"
    supports_returning = frozenset({"insert", "delete"})
    text_collation = "utf8mb4_nopad_bin"

    @override
    def create_index_prefix(self) -> str:
        return "CREATE {unique}INDEX IF NOT EXISTS"

    @override
    def returning_error(self, kind: str, meta: ModelMeta) -> str:
        return (
            f"{kind}({meta.name}).returning(): MariaDB has RETURNING on INSERT and DELETE "
            f"only, not on {kind.upper()}; {_TWO_STEP}, and the ids you selected are the "
            "rows you changed"
        )

    @override
    def lock_clause(self, meta: ModelMeta, lock: tuple[object, ...]) -> str:
        mode, skip_locked, no_wait, _of = lock  # OF can only name this table: same rows.
        text = "FOR UPDATE" if mode == "update" else "LOCK IN SHARE MODE"
        if skip_locked:
            text += " SKIP LOCKED"
        elif no_wait:
            text += " NOWAIT"
        return text
