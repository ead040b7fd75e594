"""MySQL 8 and MariaDB 10.6+: what they cannot express raises DialectError with the way out.

What they do differently from the shared compiler:
- backtick identifiers, `%s` placeholders (PyMySQL), `UTC_TIMESTAMP(6)` for `sql.now()`.
- No LIMIT inside an `IN (SELECT ...)` subquery, and no subquery on the table being updated
  or deleted: both raise DialectError with the way out for the statement written: the
  two-step claim for an update that claims rows (select ... for_update(skip_locked=True) in a
  transaction, then update where id in the fetched ids), the ids first for a delete, the
  subquery's values as a list for a select.
- `ON DUPLICATE KEY UPDATE` has no conflict target and no predicate: a target, `where=`,
  `index_where=` or `update_where=` raises DialectError; call `on_conflict_do_nothing()`
  (spelled INSERT IGNORE) or `on_conflict_do_update(None, set)` without them, which fire on
  any unique key.
- RETURNING: MySQL has none; MariaDB has INSERT/DELETE ... RETURNING but no UPDATE ...
  RETURNING. The DialectError says how to read the rows instead: after an update, select by
  its where (by the ids selected first when the update changes what its where reads); before
  a delete, select by its where.
- Locks: MySQL 8 spells `FOR SHARE` and takes `OF`; MariaDB spells `LOCK IN SHARE MODE` and
  has no `OF`, which the builder only allows for the selected table itself, where leaving it
  out locks the same rows. The engine chooses `mariadb` or `mysql` from the server's version
  string; `compile("mysql")` spells MySQL 8, `compile("mariadb")` MariaDB.
- OFFSET needs a LIMIT (`LIMIT 18446744073709551615`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Final

from typing_extensions import override

from ..errors import DialectError
from ..model import ColumnMeta, Index, ModelMeta
from ..statements.nodes import (
    Aggregate,
    And,
    BackoffDelay,
    Compound,
    Condition,
    ConflictNothing,
    ConflictUpdate,
    DeleteStatement,
    Function,
    InsertStatement,
    InSubquery,
    IsNull,
    Lock,
    Param,
    QualifiedColumn,
    RowParams,
    SelectQuery,
    StatementNode,
    UpdateStatement,
    Value,
    columns_read,
    operand_column,
    param,
)
from .base import Dialect, _Out, in_subqueries, subqueries
from .catalog import Catalog, ExistingIndex, TableColumn, squeeze, text_of

__all__ = ["STORED_DECIMAL", "MariaDBCatalog", "MariaDBDialect", "MySQLCatalog", "MySQLDialect"]


#: the longest name of a table, index or constraint, in characters
_MAX_NAME_CHARACTERS: Final = 64


def _keys(meta: ModelMeta) -> tuple[str | None, str]:
    """The key column a two-step statement selects first (None: not one column), and what
    its values are called."""
    if len(meta.primary_key) != 1:
        return None, "keys"
    key = meta.primary_key[0].attr
    return key, "ids" if key == "id" else f"{key}s"


def _fed(node: InSubquery, meta: ModelMeta | None) -> tuple[str | None, str, str] | None:
    """The column an `in` subquery feeds (of `meta`, given one), what its values are called,
    and the operator (in / not_in); None when it feeds no plain column of that table."""
    col = node.left.column if isinstance(node.left, QualifiedColumn) else node.left
    if not isinstance(col, ColumnMeta) or (meta is not None and col.model_name != meta.name):
        return None
    return col.attr, "ids" if col.attr == "id" else f"{col.attr}s", (
        "not_in" if node.negated else "in")


def _two_step(meta: ModelMeta, returning: bool = False,
              fed: tuple[str | None, str, str] | None = None) -> str:
    """The way out of a single-statement claim (update ... where id in (select ... limit)):
    by the column the subquery feeds (`fed`), else by the table's key."""
    key, ids, op = fed or (*_keys(meta), "in")
    return (
        "use the two-step claim: in engine.transaction(), select the "
        f"{ids} with for_update(skip_locked=True), then "
        f"update({meta.name}).where({_in(key, ids, op)})"
        + (f"; those {ids} are the rows it changed"
           if returning and op == "in" and key in (None, *(c.attr for c in meta.primary_key))
           else "")
    )


def _in(key: str | None, ids: str, op: str = "in") -> str:
    """The where of the second step."""
    if key is None:
        return f"the {ids} selected"
    return '{"' + key + '": {"' + op + '": ' + ids + '}}'


def _keys_first(kind: str, meta: ModelMeta,
                fed: tuple[str | None, str, str] | None = None) -> str:
    """The way out of an update or delete whose rows a subquery on its own table picks (or,
    given `fed`, whose `in` subquery feeds that column)."""
    key, ids, op = fed or (*_keys(meta), "in")
    return (
        f"in engine.transaction(), select the {ids} first (with for_update() so they stay "
        f"as selected), then {kind}({meta.name}).where({_in(key, ids, op)})"
    )


def _read_columns(where: Condition | None) -> set[ColumnMeta]:
    """The columns a condition reads, outside its subqueries."""
    found: set[ColumnMeta] = set()

    def walk(node: object) -> None:
        if isinstance(node, ColumnMeta):
            found.add(node)
        elif isinstance(node, tuple) and not isinstance(node, SelectQuery):
            for child in node:
                walk(child)

    walk(where)
    return found


def _update_returning(meta: ModelMeta, statement: StatementNode | None) -> str:
    """How to read the rows an update changed without UPDATE ... RETURNING."""
    if not isinstance(statement, UpdateStatement):
        return "run the update, then select the rows it changed in the same engine.transaction()"
    if statement.where is None:
        return (f"in engine.transaction(), run the update, then select({meta.name}) reads every "
                "row it changed")
    changed = sorted(c.attr for c, _ in statement.assignments
                     if c in _read_columns(statement.where))
    if changed:
        key, ids = _keys(meta)
        return (
            f"the update sets {', '.join(changed)}, which its where reads, so the same where "
            f"finds other rows afterwards: in engine.transaction(), select the {ids} by the "
            f"where first with for_update() (skip_locked=True to claim rows other workers "
            f"also want: the two-step claim), run update({meta.name}).where({_in(key, ids)}), "
            f"then select the rows by those {ids}"
        )
    return (f"in engine.transaction(), run the update, then select({meta.name}) with the "
            "same where reads the rows it changed")


#: The bind kind of a value stored into a Decimal column without a size: that column is
#: DECIMAL(65, 30), which rounds away digits past the 30th after the point with only a note,
#: so the driver checks each such value (drivers/mysql_rules.py). Comparisons keep the kind
#: "decimal": MySQL compares such a value exactly.
STORED_DECIMAL = "decimal_stored"


def _unsized_decimal(col: ColumnMeta) -> bool:
    return col.kind == "decimal" and col.precision is None


def _stored(value: Value) -> Value:
    return param(value.value_index, STORED_DECIMAL) if type(value) is Param else value


# -- the catalog ------------------------------------------------------------------------------

_COLUMNS = """
SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE = 'YES', c.COLLATION_NAME,
       COALESCE((SELECT s.SEQ_IN_INDEX FROM information_schema.STATISTICS s
                 WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
                   AND s.INDEX_NAME = 'PRIMARY' AND s.COLUMN_NAME = c.COLUMN_NAME), 0)
FROM information_schema.COLUMNS c
WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = %s
ORDER BY c.ORDINAL_POSITION
"""

# Index names are per table on MySQL and MariaDB: only the table's own indexes can clash.
_INDEX = """
SELECT NON_UNIQUE = 0, COLUMN_NAME
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s AND INDEX_NAME = %s
ORDER BY SEQ_IN_INDEX
"""

# An index bears no table's name here (index names are per table), a view or a MariaDB
# sequence may.
_RELATION = """
SELECT TABLE_TYPE FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s
"""

_RELATION_KINDS = {"BASE TABLE": "table", "SYSTEM VERSIONED": "table", "TEMPORARY": "table",
                   "VIEW": "view", "SYSTEM VIEW": "view", "SEQUENCE": "sequence"}

_ALIASES = {"boolean": "tinyint(1)", "bool": "tinyint(1)", "integer": "int",
            "dec": "decimal", "numeric": "decimal", "real": "double"}
_WIDTHS = re.compile(r"^(bigint|int|mediumint|smallint)\(\d+\)")


class MySQLCatalog(Catalog):
    """information_schema of the connection's database."""

    indexes_per_schema = False
    shares_index_namespace = False

    @override
    def columns_query(self) -> str:
        return _COLUMNS

    @override
    def columns_of(self, rows: Sequence[Any]) -> list[TableColumn] | None:
        columns = [TableColumn(text_of(r[0]), text_of(r[1]), bool(r[2]),
                               text_of(r[3]) if r[3] is not None else None, int(r[4]))
                   for r in rows]
        return columns or None

    @override
    def normal_type(self, declared: str) -> str:
        text = squeeze(declared)
        base, paren, rest = text.partition("(")
        if base in _ALIASES:
            text = _ALIASES[base] + (paren + rest if paren else "")
        return _WIDTHS.sub(r"\1", text)  # MariaDB shows bigint(20), MySQL 8 bigint

    @override
    def relation_lookup(self, name: str) -> tuple[str, tuple[object, ...]]:
        return _RELATION, (name,)

    @override
    def relation_kind(self, rows: Sequence[Any]) -> str | None:
        if not rows:
            return None
        kind = text_of(rows[0][0])
        return _RELATION_KINDS.get(kind, kind.lower())

    @override
    def index_lookup(self, name: str, table: str) -> tuple[str, tuple[object, ...]]:
        return _INDEX, (table, name)

    @override
    def index_of(self, table: str, rows: Sequence[Any]) -> ExistingIndex | None:
        if not rows:
            return None
        return ExistingIndex("index", table, tuple(text_of(r[1]) if r[1] is not None else None
                                                   for r in rows), bool(rows[0][0]))

    @override
    def drop_index(self, index: str, table: str) -> str:
        return f"DROP INDEX {index} ON {table}"

    @override
    def own_index_names(self, table: str, key: Sequence[str], unique: Sequence[str],
                        identity: str | None) -> set[str]:
        # the primary key's index is PRIMARY; a unique column's is named as the column
        return ({"PRIMARY"} if key else set()) | set(unique)


class MariaDBCatalog(MySQLCatalog):
    """MySQL's catalog, where a JSON column is LONGTEXT with a json_valid() check."""

    @override
    def normal_type(self, declared: str) -> str:
        text = super().normal_type(declared)
        return "longtext" if text == "json" else text


class MySQLDialect(Dialect):
    """MySQL 8.0 and newer, through PyMySQL (%s placeholders)."""

    name = "mysql"
    catalog_class = MySQLCatalog
    display_name = "MySQL"
    paramstyle = "format"
    max_params = 65535
    offset_without_limit = " LIMIT 18446744073709551615"
    supports_returning: ClassVar[frozenset[str]] = frozenset()
    supports_update_from: ClassVar[bool] = False  # a multi-table UPDATE, with no RETURNING
    supports_limit_in_subquery = False  # 1235 "LIMIT & IN/ALL/ANY/SOME subquery", and 1093
    supports_conflict_target = False  # ON DUPLICATE KEY UPDATE meets any unique key
    supports_partial_indexes = False
    #: an UPDATE/DELETE may read its own table in a subquery (MySQL: error 1093; MariaDB
    #: since 10.3)
    reads_its_table_in_subqueries: ClassVar[bool] = False
    max_identifier_bytes = 64 * 4  # 64 characters, of up to 4 bytes in utf8mb4
    connection_id_sql = "SELECT CONNECTION_ID()"
    terminate_connection_sql = "KILL CONNECTION %s"
    case_fold = "LOWER"  # no ILIKE; the backslash is LIKE's escape character already

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

    # MySQL 8 parses a REFERENCES in a column's definition and ignores it: no foreign key.
    inline_references = False

    @override
    def foreign_key_name(self, table: str, n: int) -> str | None:
        # InnoDB names the n-th unnamed foreign key `<table>_ibfk_<n>` and refuses a name past
        # 64 characters (error 1059, "Identifier name ... is too long": a table name of 58
        # characters and more): such a key is named here, from the table's name cut short and
        # its hash, so that two tables alike up to the cut keep keys of two names.
        if len(f"{table}_ibfk_{n}") <= _MAX_NAME_CHARACTERS:
            return None
        tail = f"_fk{n}_{hashlib.md5(table.encode()).hexdigest()[:8]}"
        return table[:_MAX_NAME_CHARACTERS - len(tail)] + tail

    @override
    def string_literal(self, value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"

    @override
    def quote_identifier(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    @override
    def returning_error(self, kind: str, meta: ModelMeta,
                        statement: StatementNode | None = None) -> str:
        if kind == "update":
            way_out = _update_returning(meta, statement)
        elif kind == "delete":
            way_out = (f"in engine.transaction(), select({meta.name}) with the same where and "
                       "for_update() first (the rows the delete will remove), then run the "
                       "delete")
        else:
            way_out = (
                "in engine.transaction(), run the insert, then select the rows by a key you "
                "gave them (a UUID from default_factory, a unique column); for one row, "
                "tx.execute_sql(\"SELECT LAST_INSERT_ID()\") reads the identity the database "
                "filled"
            )
        return f"{kind}({meta.name}).returning(): {self.name} has no RETURNING; {way_out}"

    @override
    def visit_now(self, plus: Value | None, out: _Out) -> None:
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
    def visit_backoff(self, node: BackoffDelay, out: _Out) -> None:
        self._write(out, "LEAST(", node.first, " * POW(2, LEAST(", node.attempts,
                    " - 1, 30)), ", node.cap, ")")

    @override
    def visit_aggregate(self, node: Aggregate, out: _Out) -> None:
        argument = node.argument
        col = operand_column(argument)
        if node.func == "avg" and argument is not None and col is not None and col.kind == "int":
            # AVG of an integer is a DECIMAL rounded to div_precision_increment (4) places
            # here (29 / 7 read 4.1429): averaged as DECIMAL(65, 30) it keeps 30 places, and
            # reads back as the float the other databases return.
            out.parts.append("AVG(DISTINCT CAST(" if node.distinct else "AVG(CAST(")
            self.visit_value(argument, out)
            out.parts.append(" AS DECIMAL(65, 30)))")
            return
        super().visit_aggregate(node, out)

    @override
    def visit_window(self, node: Function, out: _Out) -> None:
        # A bare name in OVER (PARTITION BY / ORDER BY) means the select's label of that name
        # here, not the column (RANK() OVER (ORDER BY `price`) beside `... AS price` ranked
        # the label): in a select of one table, its columns are written qualified.
        scope = out.scopes[-1] if out.scopes else {}
        if out.qualifier is not None or len(scope) != 1:
            super().visit_window(node, out)
            return
        out.qualifier = self.quote(next(iter(scope)))
        try:
            super().visit_window(node, out)
        finally:
            out.qualifier = None

    float_type = "DOUBLE"
    having_names_labels = True

    #: DATE_FORMAT formats of date_trunc (MySQL's minutes are %i)
    _TRUNC: ClassVar[dict[str, str]] = {
        "year": "%Y-01-01", "month": "%Y-%m-01", "day": "%Y-%m-%d",
        "hour": "%Y-%m-%d %H:00:00", "minute": "%Y-%m-%d %H:%i:00",
    }
    _PARTS: ClassVar[dict[str, str]] = {
        "year": "YEAR", "month": "MONTH", "day": "DAYOFMONTH", "hour": "HOUR", "minute": "MINUTE",
    }

    @override
    def write_cast(self, node: Function, out: _Out) -> None:
        # A recursive query's columns have the types of its base: a VARCHAR(10) there made
        # a longer value of the step an error ("Data too long"), or cut it where not strict.
        # CHAR(16777215) is a LONGTEXT, in the columns' collation (a longer CHAR(n) is refused
        # as larger than max_allowed_packet, CHAR(4294967295) wraps around to a short one).
        out.parts.append("CAST(")
        self.visit_value(node.args[0], out)
        if node.kind in ("str", "literal"):
            out.parts.append(" AS CHAR(16777215) CHARACTER SET utf8mb4) COLLATE "
                             + self.text_collation)
        elif node.kind == "decimal":
            scale = 30 if node.scale is None else min(node.scale, 30)
            out.parts.append(f" AS DECIMAL(65, {scale}))")
        else:  # a float: a set operation's int or Decimal beside a float
            out.parts.append(f" AS {self.float_type})")

    @override
    def write_round(self, node: Function, out: _Out) -> None:
        if node.source_kind != "float":
            super().write_round(node, out)
            return
        # ROUND of a DOUBLE rounds halves to even here: as a DECIMAL, away from zero. A
        # DECIMAL(65, 30) holds 35 whole digits (1e40 became 1e35): a double of 2**52 or more
        # is a whole number, which rounding leaves as it is.
        out.parts.append("CASE WHEN ABS(")
        self.visit_value(node.args[0], out)
        out.parts.append(") >= 4503599627370496 THEN ")
        self.visit_value(node.args[0], out)
        out.parts.append(" ELSE ROUND(CAST(")
        self.visit_value(node.args[0], out)
        out.parts.append(f" AS DECIMAL(65, 30)), {int(node.option or 0)}) END")

    @override
    def typed_value(self, node: Function, out: _Out) -> None:
        # A date or datetime is sent as quoted text: bare, the column it makes (sql.value,
        # or beside a DATE column in coalesce/CASE) was text, and read back as a str.
        if node.kind in ("str", "literal"):
            # bare, text takes the connection's collation, which ignores case: a GROUP BY,
            # DISTINCT or UNION of values alone merged 'b' and 'B', and ORDER BY sorted them
            # unlike the columns' binary collation (and the other databases)
            out.parts.append("CAST(")
            self.visit_value(node.args[0], out)
            out.parts.append(" AS CHAR CHARACTER SET utf8mb4) COLLATE " + self.text_collation)
            return
        cast = {"date": "DATE", "datetime": "DATETIME(6)"}.get(node.kind)
        if cast is None:
            super().typed_value(node, out)
            return
        out.parts.append("CAST(")
        self.visit_value(node.args[0], out)
        out.parts.append(f" AS {cast})")

    @override
    def write_date_trunc(self, node: Function, out: _Out) -> None:
        # DATETIME(6) holds UTC without a zone (engine/types.py): truncating it is in UTC
        text = self.escape_text(self._TRUNC[node.option or "day"])
        out.parts.append("CAST(DATE_FORMAT(")
        self.visit_value(node.args[0], out)
        out.parts.append(f", '{text}') AS "
                         + ("DATE)" if node.source_kind == "date" else "DATETIME(6))"))

    @override
    def write_extract(self, node: Function, out: _Out) -> None:
        part = node.option or "day"
        out.parts.append("(DAYOFWEEK(" if part == "dow" else self._PARTS[part] + "(")
        self.visit_value(node.args[0], out)
        out.parts.append(") - 1)" if part == "dow" else ")")  # DAYOFWEEK: 1 is Sunday

    @override
    def check_subquery(self, node: InSubquery, out: _Out) -> None:
        query = node.query
        if query.limit is not None or query.offset is not None:
            outer = out.statement
            if isinstance(outer, UpdateStatement) and (fed := _fed(node, outer.meta)):
                way_out = _two_step(outer.meta, outer.returning is not None, fed)
            elif isinstance(outer, DeleteStatement) and (fed := _fed(node, outer.meta)):
                way_out = _keys_first("delete", outer.meta, fed)
            else:
                fed = _fed(node, None)
                shown = _in(fed[0], "values", fed[2]) if fed else '{"in": values}'
                way_out = ("run the subquery as a select of its own first, and pass the "
                           f"values it fetched as a list: {shown}")
            raise DialectError(
                f"{self._label(query)}.limit()/offset() inside an `in` subquery: {self.name} "
                f"rejects LIMIT in IN (SELECT ...); {way_out}"
            )

    @override
    def visit_where_of(self, meta: ModelMeta, where: Condition | None, out: _Out) -> None:
        if where is not None:
            for node in in_subqueries(where):
                self.check_subquery(node, out)
            for sub in subqueries(where) if not self.reads_its_table_in_subqueries else ():
                tables = [sub.source.meta] + [j.source.meta for j in sub.joins]
                if meta in tables:
                    kind = "delete" if isinstance(out.statement, DeleteStatement) else "update"
                    claim = kind == "update" and any(
                        s.lock is not None and s.lock.skip_locked for s in subqueries(where))
                    raise DialectError(
                        f"{kind}({meta.name}): {self.name} cannot read the table being updated "
                        f"or deleted in a subquery (error 1093); "
                        + (_two_step(meta, isinstance(out.statement, UpdateStatement)
                                     and out.statement.returning is not None)
                           if claim else _keys_first(kind, meta))
                    )
        super().visit_where_of(meta, where, out)

    @override
    def visit_conflict(self, meta: ModelMeta, cols: tuple[ColumnMeta, ...],
                       conflict: ConflictNothing | ConflictUpdate, out: _Out) -> None:
        if isinstance(conflict, ConflictNothing):
            if conflict.target is not None or conflict.where is not None:
                raise DialectError(
                    f"insert({meta.name}).on_conflict_do_nothing(): {self.name} spells it "
                    "INSERT IGNORE, which has no conflict target and no predicate: it skips a "
                    "row that hits any unique key (rows whose key columns are NULL never "
                    "conflict). Call on_conflict_do_nothing() without a target and without "
                    "where= on this dialect"
                )
            return  # spelled INSERT IGNORE, see insert_verb
        if (conflict.target is not None or conflict.index_where is not None
                or conflict.update_where is not None):
            raise DialectError(
                f"insert({meta.name}).on_conflict_do_update(): {self.name}'s ON DUPLICATE KEY "
                "UPDATE has no conflict target and no predicate; it fires on any unique key "
                "(rows whose key columns are NULL never conflict). Call it without a target "
                "and without index_where/update_where on this dialect, i.e. "
                "on_conflict_do_update(None, set)"
            )
        out.parts.append(" ON DUPLICATE KEY UPDATE ")
        # In an INSERT ... SELECT, a bare column in the new values may be the select's table's
        # too (error 1052, ambiguous): column references there name the table.
        out.qualifier = self.quote(meta.table)
        try:
            self.visit_assignments(conflict.assignments, out)
        finally:
            out.qualifier = None

    @override
    def default_rows(self, meta: ModelMeta, n_rows: int,
                     conflict: ConflictNothing | ConflictUpdate | None) -> str:
        # no DEFAULT VALUES: an empty column list, and an empty row per row
        return "() VALUES " + ", ".join(["()"] * n_rows)

    @override
    def insert_verb(self, conflict: ConflictNothing | ConflictUpdate | None) -> str:
        # INSERT IGNORE skips rows that hit any unique key, and RETURNING (MariaDB) then
        # yields only the rows inserted, as ON CONFLICT DO NOTHING does. ON DUPLICATE KEY
        # UPDATE pk = pk would count and return the existing row instead. IGNORE also turns
        # some other errors into warnings (a foreign key that does not match skips the row):
        # the README lists it among MySQL's differences.
        if isinstance(conflict, ConflictNothing):
            return "INSERT IGNORE INTO"
        return "INSERT INTO"

    @override
    def without_partial_index(self, meta: ModelMeta, index: Index, where: Condition) -> None:
        # A unique index never sees NULL keys as duplicates here, so one whose WHERE only says
        # that indexed columns are not NULL behaves as the partial one; a non-unique partial
        # index is only an access path, which a full one serves.
        items = where.items if isinstance(where, And) else (where,)
        if index.unique and not all(
                isinstance(item, IsNull) and item.negated
                and isinstance(item.left, ColumnMeta) and item.left.attr in index.columns
                for item in items):
            raise DialectError(
                f"{meta.name} Index {index.name!r}: {self.name} has no partial index. Only "
                "a predicate saying the indexed columns are not NULL can be dropped (MySQL "
                "unique indexes ignore NULL keys); enforce this rule another way on MySQL"
            )

    @override
    def visit_insert(self, key: InsertStatement, out: _Out) -> None:
        if key.returning is not None:
            self.check_returning("insert", key.meta, key)
        rows, cols = key.rows, key.columns
        if isinstance(rows, SelectQuery | Compound) or not any(_unsized_decimal(c) for c in cols):
            super().visit_insert(key, out)
            return
        if isinstance(rows, RowParams):
            start = len(out.kinds)  # the rows' parameters come first: the prefix has none
            super().visit_insert(key, out)
            for r in range(rows.n_rows):
                for i, col in enumerate(cols):
                    if _unsized_decimal(col):
                        out.kinds[start + r * len(cols) + i] = STORED_DECIMAL
            return
        stored = tuple(tuple(_stored(cell) if _unsized_decimal(col) else cell
                             for col, cell in zip(cols, row, strict=True)) for row in rows)
        super().visit_insert(key._replace(rows=stored), out)

    @override
    def visit_assignments(self, items: tuple[tuple[ColumnMeta, Value], ...], out: _Out) -> None:
        super().visit_assignments(
            tuple((col, _stored(value) if _unsized_decimal(col) else value)
                  for col, value in self._in_reading_order(items)), out)

    def _in_reading_order(self, items: tuple[tuple[ColumnMeta, Value], ...]
                          ) -> tuple[tuple[ColumnMeta, Value], ...]:
        """The assignments with each one that reads a column before the one that sets it:
        MySQL sets them left to right, a value seeing the columns set before it, where the
        other databases read every value from the row as it was."""
        left = list(items)
        if len(left) < 2:
            return items
        reads = {id(value): columns_read(value) for _, value in left}
        ordered: list[tuple[ColumnMeta, Value]] = []
        while left:
            for i, (col, _) in enumerate(left):
                if not any(col.name in reads[id(other)] for c, other in left if c is not col):
                    ordered.append(left.pop(i))
                    break
            else:
                names = ", ".join(col.attr for col, _ in left)
                raise DialectError(
                    f"set(): the new values of {names} read each other's columns, and "
                    f"{self.name} sets them one after another, each value seeing the ones set "
                    "before it; set them in two statements"
                )
        return tuple(ordered)


class MariaDBDialect(MySQLDialect):
    """MariaDB 10.6 and newer: INSERT/DELETE ... RETURNING, LOCK IN SHARE MODE, no OF."""

    name = "mariadb"
    catalog_class = MariaDBCatalog
    display_name = "MariaDB"
    supports_returning = frozenset({"insert", "delete"})
    reads_its_table_in_subqueries = True
    text_collation = "utf8mb4_nopad_bin"

    @override
    def check_select(self, query: SelectQuery) -> None:
        super().check_select(query)
        if query.items is not None and len(_window_specs(query.items)) > 2:
            # MariaDB orders the windows of a select to share their sorts; with three or more
            # different (partition_by, order_by) some came back computed over another
            # window's order (measured on 10.11: RANK() OVER (ORDER BY id DESC) beside
            # COUNT(*) OVER () and COUNT(*) OVER (PARTITION BY id ORDER BY id) ranked in
            # ascending order). Two different ones never did.
            raise DialectError(
                f"{self._label(query)}.add_columns(): window functions over three or more "
                "different windows (partition_by, order_by) in one select: MariaDB computes "
                "some of them over another window's order, wrong rows. Use at most two "
                "different windows per select: name a select holding some of them with "
                "sql.cte() and add the others in a select from it"
            )

    @override
    def create_index_prefix(self) -> str:
        return "CREATE {unique}INDEX IF NOT EXISTS"

    @override
    def returning_error(self, kind: str, meta: ModelMeta,
                        statement: StatementNode | None = None) -> str:
        return (
            f"{kind}({meta.name}).returning(): MariaDB has RETURNING on INSERT and DELETE "
            f"only, not on {kind.upper()}; {_update_returning(meta, statement)}"
        )

    @override
    def lock_clause(self, query: SelectQuery, lock: Lock) -> str:
        if lock.of and query.source.alias is not None:
            every = [query.source.alias] + [j.source.alias for j in query.joins]
            missing = [a for a in every if a not in lock.of]
            if missing:
                raise DialectError(
                    f"{self._label(query)}.for_{lock.mode}(of={list(lock.of)!r}): MariaDB has "
                    "no OF: a lock takes the rows of every joined table. Lock all of them "
                    f"(drop of=), or select the rows of {', '.join(map(repr, lock.of))} with "
                    "their own locking select in the same transaction"
                )
        # Without a join, OF can only name this table: the same rows.
        text = "FOR UPDATE" if lock.mode == "update" else "LOCK IN SHARE MODE"
        if lock.skip_locked:
            text += " SKIP LOCKED"
        elif lock.no_wait:
            text += " NOWAIT"
        return text


def _window_specs(items: Sequence[object]) -> set[tuple[object, object]]:
    """The different windows, (partition_by, order_by), of a select's items (not of its
    subqueries, which are selects of their own)."""
    specs: set[tuple[object, object]] = set()

    def walk(node: object) -> None:
        if isinstance(node, SelectQuery) or not isinstance(node, tuple):
            return
        if isinstance(node, Function) and node.name == "over":
            specs.add((node.args[1:], node.order))
        for child in node:
            walk(child)

    for item in items:
        walk(item)
    return specs
