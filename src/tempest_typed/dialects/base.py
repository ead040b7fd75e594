"""The one place SQL text is produced: a visitor over the statement tree.

It turns a statement's key (pure structure, see statements/nodes.py) into SQL text and the
order in which the statement's values fill the placeholders. Values are never written into
the text: every value is a placeholder. Identifiers are always quoted. This layer does not
touch a database. A dialect subclass overrides only what its database does differently.

The visitor dispatches on the node's type: one `visit_*` method per node type, found in a
table built once per dialect class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Final, NamedTuple, Protocol, TypeAlias, TypeVar

from ..errors import DialectError, ValidationError
from ..model import DDL_LITERALS, ColumnMeta, DerivedColumn, Index, ModelMeta, ddl_literal_problem
from ..statements.nodes import (
    ALL_COLUMNS,
    Aggregate,
    And,
    BackoffDelay,
    Between,
    CommonTable,
    Compare,
    Compound,
    Condition,
    ConflictNothing,
    ConflictUpdate,
    CurrentTime,
    DeleteStatement,
    ExcludedValue,
    Exists,
    FalseCondition,
    Function,
    InList,
    InParams,
    InsertStatement,
    InSubquery,
    IsNull,
    Labeled,
    Like,
    Lock,
    Not,
    Or,
    OrderItem,
    OuterColumn,
    Param,
    PickedRows,
    QualifiedColumn,
    RawSQL,
    Returning,
    RowCount,
    RowParams,
    ScalarSubquery,
    SelectQuery,
    Source,
    SQLExpr,
    StatementNode,
    TrueCondition,
    UpdateStatement,
    Value,
    iter_nodes,
)
from .catalog import Catalog


class Statement(Protocol):
    """What the compiler reads of a statement (statements/base.py's builders): its node
    tree, and its values in the order the tree's parameters number them."""

    _values: tuple[object, ...]

    def _key(self) -> StatementNode: ...

__all__ = ["PACKED", "Compiled", "CompiledShape", "Dialect", "JoinedModels", "ResultField",
           "packed_kind", "shifted"]

T = TypeVar("T")


class ResultField(NamedTuple):
    """One field of a fetched Row: its name, the kind it is read back as, and whether it is an
    aggregate (whose driver type is coerced: SUM of an int column is a numeric on PostgreSQL)."""

    name: str
    kind: str
    aggregate: bool
    #: a Decimal's scale (places after the point), read back at it
    scale: int | None = None


class JoinedModels(NamedTuple):
    """Rows of a join: one model per alias, in column order; `optional` sides may be None;
    then the computed columns of add_columns(), if any."""

    aliases: tuple[str, ...]
    metas: tuple[ModelMeta, ...]
    optional: tuple[bool, ...]
    extra: tuple[ResultField, ...] = ()


class ComputedModels(NamedTuple):
    """Rows of a set operation whose first statement selects whole models: models, each
    column `computed` where another statement computes it (read as an aggregate is)."""

    meta: ModelMeta
    computed: tuple[bool, ...]


#: what a fetched row becomes: a model, a Row of fields, models by alias, or no rows at all
ResultShape: TypeAlias = (
    "ModelMeta | ComputedModels | tuple[ResultField, ...] | JoinedModels | None")


class CompiledShape:
    """The compilation of one statement shape: SQL text, and how values fill it."""

    __slots__ = ("in_order", "kind", "kinds", "order", "packed", "result", "sql")

    def __init__(self, sql: str, order: tuple[int | slice, ...],
                 kinds: tuple[str | None, ...], kind: str, result: ResultShape) -> None:
        self.sql = sql
        #: for each placeholder, in textual order, the index of its value in the statement,
        #: or the slice of the values it binds as one array (a packed `in` list)
        self.order = order
        #: every value is used once, in the order the builder bound them: params are values
        self.in_order = order == tuple(range(len(order)))
        #: some placeholder binds a slice of the values as one array
        self.packed = any(type(i) is slice for i in order)
        #: for each placeholder, the kind of the column it is compared to or written in
        #: (packed_kind() of it for an array)
        self.kinds = kinds
        #: "select", "insert", "update", "delete"
        self.kind = kind
        #: what a row is
        self.result = result


class Compiled(tuple[str, tuple[object, ...]]):
    """A compiled statement: `sql` and its `params` in placeholder order; a pair, so that
    `sql, params = stmt.compile(...)` types each (Dialect.shape() gives how it was made)."""

    __slots__ = ()

    def __new__(cls, sql: str, params: tuple[object, ...]) -> Compiled:
        """The pair of `sql` and `params`."""
        return tuple.__new__(cls, (sql, params))

    @property
    def sql(self) -> str:
        """The SQL text."""
        return self[0]

    @property
    def params(self) -> tuple[object, ...]:
        """The parameters, in placeholder order."""
        return self[1]

    def __hash__(self) -> int:
        # by the text alone: a parameter may be a list (an array, a JSON document)
        return hash(self[0])

    def __repr__(self) -> str:
        return f"Compiled(sql={self[0]!r}, params={self[1]!r})"


#: the field of an update settling rows before picked ones that counts the rows it settled
_SETTLED: Final = "settled"

#: how a placeholder's kind says it binds an array of values of the kind before it
PACKED: Final = "[]"


def packed_kind(kind: str | None) -> str:
    """The kind of a placeholder binding an array of values of `kind`."""
    return (kind or "") + PACKED


def shifted(order: Sequence[int | slice], start: int, end: int,
            shift: int) -> list[int | slice]:
    """`order` with the value indexes in [start, end) moved by `shift` (a batch's rows)."""
    return [i + shift if type(i) is int and start <= i < end else i for i in order]


def _output_name(item: object) -> str:
    """The output column name of a fetched column: its SQL name."""
    if isinstance(item, ColumnMeta):
        return item.name
    return item.column.name if isinstance(item, QualifiedColumn) else ""


class _Out:
    """The text and placeholder order being produced by one compilation."""

    __slots__ = ("group_labels", "hoisted", "in_lists", "int_checked", "kinds", "literals",
                 "offset", "order", "order_table", "pack_in", "parts", "qualifier", "scopes",
                 "select_items", "statement")

    def __init__(self, literals: list[object] | None = None) -> None:
        self.parts: list[str] = []
        self.order: list[int | slice] = []
        self.kinds: list[str | None] = []
        self.offset = 0
        #: the quoted table that column references are prefixed with, when bare ones would
        #: be ambiguous (an upsert's DO UPDATE ... WHERE also sees EXCLUDED's columns)
        self.qualifier: str | None = None
        #: DDL only: the values to write inline, since CREATE INDEX ... WHERE takes no parameter
        self.literals = literals
        #: the statements being written, innermost last: qualifier -> table (correlation)
        self.scopes: list[dict[str, ModelMeta]] = []
        #: the statement being compiled (a subquery's DialectError names the way out for it)
        self.statement: StatementNode | None = None
        #: while HAVING is written where it names computed groups by label: expression -> label
        self.group_labels: dict[Function, str] | None = None
        #: the members of the set operation being written, whose WITH is written before it
        self.hoisted: set[SelectQuery] | None = None
        #: each `in` list of bound values is written as one array parameter (the statement
        #: binds more than the dialect's packs_in_lists_above)
        self.pack_in = False
        #: how many `in` lists of bound values were written a placeholder a value
        self.in_lists = 0
        #: inside integer arithmetic whose result is checked for overflow (SQLite)
        self.int_checked = False
        #: while a select's ORDER BY is written: its items, which name a label by position
        self.select_items: tuple[object, ...] | None = None
        #: and its quoted table, which names a column that a label's name would hide
        self.order_table: str | None = None


# A statement's SQL is compiled once per shape; a statement built again binds its values
# only (measured: `bench/bench_build.py`, BENCHMARKS.md). Shapes are few in real code; the
# bound keeps a program that generates unbounded shapes (multi-row inserts of every size)
# from growing without end.
_SHAPE_CACHE_SIZE: Final = 4096

_Visit: TypeAlias = Callable[[Any, _Out], None]

#: node type -> name of the method that writes it
_VALUE_VISITORS: dict[type, str] = {
    Param: "visit_param", RawSQL: "visit_raw", SQLExpr: "visit_expr",
    CurrentTime: "visit_current_time", ExcludedValue: "visit_excluded_value",
    ColumnMeta: "visit_column", DerivedColumn: "visit_column", QualifiedColumn: "visit_qualified",
    OuterColumn: "visit_outer", Aggregate: "visit_aggregate",
    ScalarSubquery: "visit_scalar_subquery", Function: "visit_function",
    BackoffDelay: "visit_backoff", RowCount: "visit_row_count",
}
_CONDITION_VISITORS: dict[type, str] = {
    Compare: "visit_compare", IsNull: "visit_is_null", Between: "visit_between",
    InList: "visit_in_list", InParams: "visit_in_params", InSubquery: "visit_in_subquery",
    Like: "visit_like", And: "visit_and", Or: "visit_or", Not: "visit_not",
    Exists: "visit_exists", TrueCondition: "visit_true", FalseCondition: "visit_false",
}


class Dialect:
    """The shared compiler; subclasses override what their database spells differently."""

    name: ClassVar[str] = "base"
    #: the database's name as its own documentation spells it
    display_name: ClassVar[str] = "SQL"
    #: how the database's catalog reads (dialects/catalog.py; each dialect module has one)
    catalog_class: ClassVar[type[Catalog]] = Catalog
    #: "format" (%s) or "qmark" (?)
    paramstyle: ClassVar[str] = "format"
    #: the most bound parameters one statement may carry
    max_params: ClassVar[int] = 65535
    #: the column kinds whose SQL type holds any length, so that a max_length is a CHECK
    #: (length_check); elsewhere the type holds it (varchar(n), VARBINARY(n))
    unbounded_kinds: ClassVar[frozenset[str]] = frozenset()
    # What the database can do: the layers above ask these, never a dialect's name.
    #: the statement kinds that take RETURNING
    supports_returning: ClassVar[frozenset[str]] = frozenset({"insert", "update", "delete"})
    #: row locks: FOR UPDATE / FOR SHARE, with SKIP LOCKED and NOWAIT
    supports_row_locks: ClassVar[bool] = True
    #: UPDATE ... FROM (a select) whose RETURNING reads the select's columns (the ordered
    #: one-statement batch claim)
    supports_update_from: ClassVar[bool] = True
    #: LIMIT inside an IN subquery, and a subquery reading the table an UPDATE or DELETE
    #: changes (the one-statement claim)
    supports_limit_in_subquery: ClassVar[bool] = True
    #: ON CONFLICT (columns): an upsert names the unique key it meets
    supports_conflict_target: ClassVar[bool] = True
    #: CREATE INDEX ... WHERE
    supports_partial_indexes: ClassVar[bool] = True
    #: LISTEN / NOTIFY between connections
    supports_listen_notify: ClassVar[bool] = False
    #: a write transaction holds the database's one write lock from its BEGIN: one writer at
    #: a time, so a transaction is all a claim needs where there are no row locks
    serializes_write_transactions: ClassVar[bool] = False
    #: a worker loop runs its claims, heartbeats and acks on one held connection rather than
    #: a pool checkout (and its liveness check) each: measured faster (bench_queues.py)
    worker_holds_connection: ClassVar[bool] = False
    #: the statement that gives the current connection's server-side id (None: no such id)
    connection_id_sql: ClassVar[str | None] = None
    #: the statement that ends the connection of the id it is given (None: it cannot)
    terminate_connection_sql: ClassVar[str | None] = None
    #: the longest identifier the database keeps whole, in bytes of UTF-8 (None: no limit)
    max_identifier_bytes: ClassVar[int | None] = None
    #: a bulk copy of rows into a table (PostgreSQL's COPY ... FROM STDIN): copy_from_sql()
    supports_copy_from: ClassVar[bool] = False
    #: a statement binding more parameters than this writes each `in` list of bound values
    #: as one array parameter (visit_in_params()); None: it never does
    packs_in_lists_above: ClassVar[int | None] = None

    def __init__(self) -> None:
        self.catalog = self.catalog_class(self)
        self._shapes: dict[StatementNode, CompiledShape] = {}
        self._quoted: dict[str, str] = {}
        self.placeholder = "%s" if self.paramstyle == "format" else "?"
        self._value_visitors: dict[type, _Visit] = {
            t: getattr(self, name) for t, name in _VALUE_VISITORS.items()}
        self._condition_visitors: dict[type, _Visit] = {
            t: getattr(self, name) for t, name in _CONDITION_VISITORS.items()}

    def __repr__(self) -> str:
        return f"<dialect {self.name}>"

    def copy_from_sql(self, table: str, columns: list[str], binary: bool = False) -> str:
        """The statement that takes rows of `columns` into `table` in bulk (where
        supports_copy_from); `binary`, in the database's binary row format."""
        raise DialectError(f"{self.display_name} has no bulk copy: insert the rows with "
                           "insert().values()")

    def copy_types_sql(self, table: str) -> tuple[str, tuple[object, ...]]:
        """The query (and its parameters) that reads the stored type of each column of
        `table` from the catalog, as rows of (column name, type name); no rows when there is
        no such table (where supports_copy_from)."""
        raise DialectError(f"{self.display_name} has no bulk copy")

    def copy_binary_types(self, kinds: Sequence[str],
                          stored: Sequence[str | None]) -> list[str] | None:
        """The type names a binary bulk copy sends columns of these kinds as, when each
        column's `stored` type (from copy_types_sql(), None when not found) is the one its
        kind is written as; None when any is not (the copy is then sent as text)."""
        return None

    # -- entry points -----------------------------------------------------------------------

    def shape(self, stmt: Statement) -> CompiledShape:
        """The compiled shape of a statement, from the cache when it was seen before."""
        return self.shape_of_key(stmt._key())

    def shape_of_key(self, key: StatementNode) -> CompiledShape:
        """The compiled shape of a statement key, compiled on first sight."""
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._compile_key(key)
            if len(self._shapes) >= _SHAPE_CACHE_SIZE:
                self._shapes.clear()
            self._shapes[key] = shape
        return shape

    def compile(self, stmt: Statement) -> Compiled:
        """SQL text and parameters in placeholder order."""
        key = stmt._key()
        shape = self._shapes.get(key) or self.shape_of_key(key)
        values = stmt._values
        params: tuple[object, ...]
        if shape.packed:  # an array is bound as a list (a driver takes no tuple for one)
            params = tuple([list(values[i]) if isinstance(i, slice) else values[i]
                            for i in shape.order])
        else:
            params = (values if shape.in_order and len(values) == len(shape.order)
                      else tuple([values[i] for i in shape.order]))
        # Made without calling the class, whose Python __new__ costs a call more
        # (measured: BENCHMARKS.md, "Fast paths").
        return tuple.__new__(Compiled, (shape.sql, params))

    def _compile_key(self, key: StatementNode) -> CompiledShape:
        out = _Out()
        result = self._write_statement(key, out)
        limit = self.packs_in_lists_above
        if limit is not None and len(out.order) > limit and out.in_lists:
            out = _Out()
            out.pack_in = True
            self._write_statement(key, out)
        return CompiledShape("".join(out.parts), tuple(out.order), tuple(out.kinds), key.tag,
                             result)

    def _write_statement(self, key: StatementNode, out: _Out) -> ResultShape:
        """Write a statement into `out`; what its rows are."""
        out.statement = key
        result: ResultShape
        if type(key) is SelectQuery:
            self.visit_select(key, out)
            result = self.result_of(key)
        elif isinstance(key, Compound):
            self.visit_compound(key, out)
            result = self.compound_result(key)
        elif type(key) is InsertStatement:
            self.visit_insert(key, out)
            result = self.returned(key.meta, key.returning)
        elif type(key) is UpdateStatement:
            self.visit_update(key, out)
            if key.picked is None:
                result = self.returned(key.meta, key.returning)
            else:  # Rows: [the count settled,] the named columns, the picked rows' carried
                result = tuple(ResultField(name, c.kind, False, c.scale)
                               for name, c, _ in self._picked_returned(key, key.picked))
                if key.picked.settled is not None:
                    result = (ResultField(_SETTLED, "int", True), *result)
        elif type(key) is DeleteStatement:
            self.visit_delete(key, out)
            result = self.returned(key.meta, key.returning)
        else:  # pragma: no cover - the builders produce no other statement
            raise ValidationError(f"not a statement: {key!r}")
        return result

    @staticmethod
    def result_of(query: SelectQuery) -> ResultShape:
        """What a row of this select is."""
        items = query.items
        joined = query.source.alias is not None
        sources = [(query.source, False)] + [(j.source, j.kind == "left") for j in query.joins]
        width = sum(len(s.meta.columns) for s, _ in sources)
        # a join's rows are models by alias, and after add_columns() its labels too
        if items is None or (joined and query.group_by is None and len(items) > width
                             and not isinstance(items[0], Labeled)):
            if not joined:
                meta = query.source.meta
                if query.source.definition is not None:  # a named select: Rows of its columns
                    return tuple(_field(c) for c in meta.columns)
                return meta
            return JoinedModels(tuple(s.alias or s.meta.table for s, _ in sources),
                                tuple(s.meta for s, _ in sources),
                                tuple(optional for _, optional in sources),
                                tuple(_field(item) for item in (items or ())[width:]))
        return tuple(_field(item) for item in items)

    @staticmethod
    def compound_result(node: Compound) -> ResultShape:
        """What a row of a set operation is: the first statement's fields, each coerced from
        the driver's type where any statement computes it (an int column beside a SUM is a
        numeric on PostgreSQL and MariaDB)."""
        result = Dialect.result_of(node.parts[0])
        if isinstance(result, ModelMeta):
            width = len(result.columns)
        elif isinstance(result, tuple) and not isinstance(result, JoinedModels | ComputedModels):
            width = len(result)
        else:
            return result
        computed = [False] * width
        for part in node.parts[1:]:
            fields = Dialect.result_of(part)
            if isinstance(fields, tuple) and not isinstance(fields, JoinedModels | ComputedModels):
                computed = [c or f.aggregate for c, f in zip(computed, fields, strict=True)]
        if isinstance(result, ModelMeta):
            return ComputedModels(result, tuple(computed)) if any(computed) else result
        return tuple(f._replace(aggregate=True) if c and not f.aggregate else f
                     for f, c in zip(result, computed, strict=True))

    @staticmethod
    def returned(meta: ModelMeta, returning: Returning) -> ResultShape:
        """What a row of RETURNING is."""
        if returning is None:
            return None
        if returning == ALL_COLUMNS:
            return meta
        return tuple(ResultField(c.attr, c.kind, False, c.scale) for c in returning)

    # -- identifiers and values -------------------------------------------------------------

    def quote(self, name: str) -> str:
        """The identifier quoted for statement text (quotes inside it doubled, `%` escaped)."""
        quoted = self._quoted.get(name)
        if quoted is None:
            # The driver formats statement text: a `%` in a name would read as a placeholder.
            quoted = self.escape_text(self.quote_identifier(name))
            self._quoted[name] = quoted
        return quoted

    def quote_identifier(self, name: str) -> str:
        """The identifier quoted verbatim, for DDL (which runs without parameters)."""
        return '"' + name.replace('"', '""') + '"'

    def escape_text(self, text: str) -> str:
        """Verbatim SQL made safe for the paramstyle (a literal % doubled for format)."""
        return text.replace("%", "%%") if self.paramstyle == "format" else text

    def visit_value(self, node: Value, out: _Out) -> None:
        """Write a value node by dispatching on its type."""
        self._value_visitors[type(node)](node, out)

    def visit_param(self, node: Param, out: _Out) -> None:
        """Write a bound value: a placeholder (inline in DDL)."""
        if out.literals is not None:
            out.parts.append(self.literal(out.literals[node.value_index]))
            return
        out.parts.append(self.placeholder)
        out.order.append(out.offset + node.value_index)
        out.kinds.append(node.kind)

    def visit_row_count(self, node: RowCount, out: _Out) -> None:
        """Write a LIMIT's row count as a number (statements/nodes.py says why)."""
        out.parts.append(str(node.rows))

    def visit_raw(self, node: RawSQL, out: _Out) -> None:
        """Write sql.raw text as it is."""
        out.parts.append(node.text if out.literals is not None else self.escape_text(node.text))

    def visit_expr(self, node: SQLExpr, out: _Out) -> None:
        """Write sql.expr: its text parts around its values."""
        nodes = node.values
        for i, part in enumerate(node.parts):
            out.parts.append(part if out.literals is not None else self.escape_text(part))
            if i < len(nodes):
                self.visit_value(nodes[i], out)

    def visit_current_time(self, node: CurrentTime, out: _Out) -> None:
        """Write sql.now()."""
        self.visit_now(node.plus, out)

    def visit_backoff(self, node: BackoffDelay, out: _Out) -> None:
        """Write an exponential retry delay: first * 2 ** (attempts - 1), capped."""
        self._write(out, "LEAST(", node.first, " * power(2, LEAST(", node.attempts,
                    " - 1, 30)), ", node.cap, ")")

    def _write(self, out: _Out, *pieces: str | Value) -> None:
        """Write SQL text pieces and value nodes in turn."""
        for piece in pieces:
            if isinstance(piece, str):
                out.parts.append(piece)
            else:
                self.visit_value(piece, out)

    def visit_excluded_value(self, node: ExcludedValue, out: _Out) -> None:
        """Write sql.excluded()."""
        self.visit_excluded(node.column, out)

    def visit_column(self, node: ColumnMeta, out: _Out) -> None:
        """Write a column of the statement's one table."""
        out.parts.append(self.column_ref(node, out))

    def visit_qualified(self, node: QualifiedColumn, out: _Out) -> None:
        """Write `qualifier.column`."""
        out.parts.append(self.quote(node.qualifier) + "." + self.quote(node.column.name))

    def visit_outer(self, node: OuterColumn, out: _Out) -> None:
        """Write a column of an enclosing statement, found by its alias or table name."""
        for scope in reversed(out.scopes):
            meta = scope.get(node.qualifier)
            if meta is not None:
                col = meta.column(node.attr, f"sql.col({node.qualifier + '.' + node.attr!r})")
                out.parts.append(self.quote(node.qualifier) + "." + self.quote(col.name))
                return
        raise ValidationError(
            f"sql.col({node.qualifier + '.' + node.attr!r}) names no table or alias of this "
            f"statement or of one that encloses it; qualify with a join alias or the table "
            "name of the statement it belongs to"
        )

    # -- computed values ----------------------------------------------------------------------

    #: the SQL type true division casts its dividend to
    float_type: ClassVar[str] = "DOUBLE PRECISION"
    #: the function counting a string's characters
    length_function: ClassVar[str] = "CHAR_LENGTH"

    #: HAVING names a computed group by its label (MariaDB does not see that the expression
    #: is the one grouped by position); elsewhere the expression is written again
    having_names_labels: ClassVar[bool] = False

    def visit_function(self, node: Function, out: _Out) -> None:
        """Write a function, arithmetic, CASE or window function."""
        name, args, parts = node.name, node.args, out.parts
        if out.group_labels is not None and node in out.group_labels:
            parts.append(self.quote(out.group_labels[node]))
            return
        if name in ("+", "-", "*"):
            self.check_arithmetic(node)
            parts.append("(")
            self.visit_value(args[0], out)
            parts.append(f" {name} ")
            self.visit_value(args[1], out)
            parts.append(")")
        elif name == "/":
            # true division, NULL where the divisor is 0 (PostgreSQL would fail the statement)
            parts.append("(CAST(")
            self.visit_value(args[0], out)
            parts.append(f" AS {self.float_type}) / NULLIF(")
            self.visit_value(args[1], out)
            parts.append(", 0))")
        elif name == "case":
            parts.append("CASE")
            for condition, value in zip(node.conditions, args, strict=False):
                parts.append(" WHEN ")
                self.visit_condition(condition, out)
                parts.append(" THEN ")
                self.visit_value(value, out)
            if node.option == "else":
                parts.append(" ELSE ")
                self.visit_value(args[-1], out)
            parts.append(" END")
        elif name == "over":
            self.visit_window(node, out)
        elif name == "value":
            self.typed_value(node, out)
        elif name == "cast":
            self.write_cast(node, out)
        elif name == "round" and node.source_kind == "int":
            # an int rounded to 0 or more places is itself; SQLite's ROUND yields a REAL,
            # which past 2**53 is another int (2**63 - 1 came back as 2**63)
            self.visit_value(args[0], out)
        elif name == "round":
            self.write_round(node, out)
        elif name == "date_trunc":
            self.write_date_trunc(node, out)
        elif name == "extract":
            self.write_extract(node, out)
        else:
            spelled = self.length_function if name == "length" else name.upper()
            parts.append(spelled + "(")
            self._comma_separated(args, self.visit_value, out)
            parts.append(")")

    def typed_value(self, node: Function, out: _Out) -> None:
        """Write a value bound where no column gives it a type (sql.value, 2 in `col * 2`)."""
        self.visit_value(node.args[0], out)

    def write_cast(self, node: Function, out: _Out) -> None:
        """Write a recursive named select's base column as its kind's type of any length
        (text) or precision (a Decimal), so that the step's values fit it (SQLite: as it is,
        its columns take any value)."""
        self.visit_value(node.args[0], out)

    def check_arithmetic(self, node: Function) -> None:
        """Raise DialectError for arithmetic this database cannot compute exactly."""

    def visit_window(self, node: Function, out: _Out) -> None:
        """Write `function OVER (PARTITION BY ... ORDER BY ...)`."""
        inner = node.args[0]
        if isinstance(inner, Function) and inner.name in ("lag", "lead"):
            out.parts.append(inner.name.upper() + "(")
            self.visit_value(inner.args[0], out)
            if len(inner.args) > 1:
                out.parts.append(", ")
                self.window_offset(inner.args[1], out)
            out.parts.append(")")
        elif isinstance(inner, Function):
            out.parts.append(inner.name.upper() + "()")
        else:
            self.visit_value(inner, out)
        out.parts.append(" OVER (")
        partition = node.args[1:]
        if partition:
            out.parts.append("PARTITION BY ")
            self._comma_separated(partition, self.visit_value, out)
        if node.order:
            out.parts.append(" ORDER BY " if partition else "ORDER BY ")
            self._comma_separated(node.order, self.order_item, out)
        out.parts.append(")")

    def window_offset(self, offset: Value, out: _Out) -> None:
        """Write lag()/lead()'s row offset."""
        self.visit_value(offset, out)

    def write_round(self, node: Function, out: _Out) -> None:
        """Write round(value, digits), halves away from zero."""
        out.parts.append("ROUND(")
        self.visit_value(node.args[0], out)
        out.parts.append(f", {int(node.option or 0)})")

    def write_date_trunc(self, node: Function, out: _Out) -> None:
        """Write a datetime (UTC) or date truncated to node.option."""
        raise NotImplementedError

    def write_extract(self, node: Function, out: _Out) -> None:
        """Write a part of a datetime (UTC) or date as an integer (dow 0 = Sunday)."""
        raise NotImplementedError

    def visit_aggregate(self, node: Aggregate, out: _Out) -> None:
        """Write COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM(col) ..."""
        self.check_aggregate(node)
        if node.argument is None:
            out.parts.append("COUNT(*)")
            return
        out.parts.append(node.func.upper() + ("(DISTINCT " if node.distinct else "("))
        self.visit_value(node.argument, out)
        out.parts.append(")")

    def check_aggregate(self, node: Aggregate) -> None:
        """Raise DialectError for an aggregate this database cannot compute exactly."""

    def visit_scalar_subquery(self, node: ScalarSubquery, out: _Out) -> None:
        """Write `(SELECT ...)` as a value."""
        out.parts.append("(")
        self._subquery(node.query, node.offset, out)
        out.parts.append(")")

    def _subquery(self, query: SelectQuery, offset: int, out: _Out) -> None:
        saved, qualifier = out.offset, out.qualifier
        out.offset, out.qualifier = saved + offset, None
        try:
            self.visit_select(query, out)
        finally:
            out.offset, out.qualifier = saved, qualifier

    def literal(self, value: object) -> str:
        """A value written inline, for DDL only (index predicates, server defaults).

        Each is written by its base type's own method, never its class's: an IntEnum is its
        number, and a subclass of str or int cannot put text of its own into the DDL. A
        Decimal is its canonical text, quoted (SQLite keeps Decimal columns as that text).
        """
        problem = ddl_literal_problem(value)
        if problem is not None:
            raise DialectError(f"{problem}; DDL takes {DDL_LITERALS}, or sql.raw()/sql.now()")
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int):
            return int.__repr__(value)
        if isinstance(value, float):
            return float.__repr__(value)
        if isinstance(value, Decimal):
            text = Decimal.__format__(value, "f")
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            return self.string_literal("0" if text == "-0" else text)
        assert isinstance(value, str)  # ddl_literal_problem() leaves no other type
        return self.string_literal(str.__str__(value))

    def inline_condition(self, node: Condition, values: list[object]) -> str:
        """A condition with its values written inline: an index predicate, as CREATE INDEX
        and an upsert's conflict target write it."""
        out = _Out(literals=values)
        self.visit_condition(node, out)
        return "".join(out.parts)

    def string_literal(self, value: str) -> str:
        """A string written inline, quoted for this dialect (DDL only)."""
        return "'" + value.replace("'", "''") + "'"

    # -- DDL --------------------------------------------------------------------------------

    def column_type(self, col: ColumnMeta) -> str:
        """The SQL type of a column."""
        raise NotImplementedError

    def identity(self, col: ColumnMeta) -> str:
        """The clause that makes an int primary key generated by the database."""
        raise NotImplementedError

    def length_check(self, col: ColumnMeta) -> str | None:
        """The CHECK that holds a column to its max_length where its type does not."""
        if col.max_length is None or col.kind not in self.unbounded_kinds:
            return None
        return f"CHECK (length({self.quote_identifier(col.name)}) <= {col.max_length})"

    def without_partial_index(self, meta: ModelMeta, index: Index, where: Condition) -> None:
        """Where the database has no partial index: refuse an index whose WHERE matters, or
        say (by returning) that a full index serves."""
        raise DialectError(
            f"{meta.name} Index {index.name!r}: {self.display_name} has no partial index")

    def create_index_prefix(self) -> str:
        """The start of CREATE [UNIQUE] INDEX, with `{unique}` to fill in."""
        return "CREATE {unique}INDEX IF NOT EXISTS"

    table_options = ""

    #: a column's `references=` is written in its definition (`"a" bigint REFERENCES ...`);
    #: False: as a table constraint, `FOREIGN KEY ("a") REFERENCES ...`
    inline_references: ClassVar[bool] = True

    def foreign_key_name(self, table: str, n: int) -> str | None:
        """The name the DDL gives the table's `n`-th foreign key (from 1, the columns'
        `references=` first, in order, then `__foreign_keys__`); None: the database's own."""
        return None

    def visit_now(self, plus: Value | None, out: _Out) -> None:
        """Write sql.now(), plus a number of seconds when given."""
        if plus is None:
            out.parts.append("CURRENT_TIMESTAMP")
            return
        out.parts.append("(CURRENT_TIMESTAMP + CAST(")
        self.visit_value(plus, out)
        out.parts.append(" AS DOUBLE PRECISION) * INTERVAL '1 second')")

    def visit_excluded(self, col: ColumnMeta, out: _Out) -> None:
        """Write sql.excluded(column): the row an upsert tried to insert."""
        out.parts.append("EXCLUDED." + self.quote(col.name))

    def column_ref(self, col: ColumnMeta, out: _Out | None = None) -> str:
        """A column as a condition names it (qualified where a clause needs it)."""
        if out is not None and out.literals is not None:
            return self.quote_identifier(col.name)  # DDL: no paramstyle, so no `%` escape
        if out is not None and out.qualifier is not None:
            return out.qualifier + "." + self.quote(col.name)
        return self.quote(col.name)

    # -- conditions -------------------------------------------------------------------------

    def visit_condition(self, node: Condition, out: _Out) -> None:
        """Write a condition node by dispatching on its type."""
        self._condition_visitors[type(node)](node, out)

    def _nested(self, node: Condition, out: _Out) -> None:
        if type(node) is And or type(node) is Or:
            out.parts.append("(")
            self.visit_condition(node, out)
            out.parts.append(")")
        else:
            self.visit_condition(node, out)

    def visit_and(self, node: And, out: _Out) -> None:
        """Write `a AND b ...`."""
        self._junction(node.items, " AND ", out)

    def visit_or(self, node: Or, out: _Out) -> None:
        """Write `a OR b ...`."""
        self._junction(node.items, " OR ", out)

    def _junction(self, items: tuple[Condition, ...], joiner: str, out: _Out) -> None:
        for i, item in enumerate(items):
            if i:
                out.parts.append(joiner)
            self._nested(item, out)

    def visit_not(self, node: Not, out: _Out) -> None:
        """Write `NOT (a)`."""
        out.parts.append("NOT (")
        self.visit_condition(node.item, out)
        out.parts.append(")")

    def visit_true(self, node: TrueCondition, out: _Out) -> None:
        """Write a condition that always holds."""
        out.parts.append("1 = 1")

    def visit_false(self, node: FalseCondition, out: _Out) -> None:
        """Write a condition that never holds (an empty `in`)."""
        out.parts.append("1 = 0")

    def visit_compare(self, node: Compare, out: _Out) -> None:
        """Write `left op right`."""
        self.visit_value(node.left, out)
        out.parts.append(f" {node.op} ")
        self.visit_value(node.right, out)

    def visit_is_null(self, node: IsNull, out: _Out) -> None:
        """Write `left IS [NOT] NULL`."""
        self.visit_value(node.left, out)
        out.parts.append(" IS NOT NULL" if node.negated else " IS NULL")

    def visit_between(self, node: Between, out: _Out) -> None:
        """Write `left BETWEEN low AND high`."""
        self.visit_value(node.left, out)
        out.parts.append(" BETWEEN ")
        self.visit_value(node.low, out)
        out.parts.append(" AND ")
        self.visit_value(node.high, out)

    def visit_in_list(self, node: InList, out: _Out) -> None:
        """Write `left [NOT] IN (values...)`."""
        self.visit_value(node.left, out)
        out.parts.append(" NOT IN (" if node.negated else " IN (")
        self._comma_separated(node.items, self.visit_value, out)
        out.parts.append(")")

    def visit_in_params(self, node: InParams, out: _Out) -> None:
        """Write `left [NOT] IN (%s, ...)` for a run of bound values."""
        self.visit_value(node.left, out)
        out.parts.append(" NOT IN (" if node.negated else " IN (")
        if out.literals is not None:
            for i in range(node.length):
                out.parts.append((", " if i else "") + self.literal(out.literals[node.start + i]))
        else:
            out.parts.append(", ".join([self.placeholder] * node.length))
            base = out.offset + node.start
            out.order.extend(range(base, base + node.length))
            out.kinds.extend([node.kind] * node.length)
            out.in_lists += 1
        out.parts.append(")")

    def visit_in_subquery(self, node: InSubquery, out: _Out) -> None:
        """Write `left [NOT] IN (SELECT ...)`, the subquery's values where it stands."""
        self.check_subquery(node, out)
        self.visit_value(node.left, out)
        out.parts.append(" NOT IN (" if node.negated else " IN (")
        self._subquery(node.query, node.offset, out)
        out.parts.append(")")

    def check_subquery(self, node: InSubquery, out: _Out) -> None:
        """Raise DialectError for an `in` subquery this database rejects."""

    def visit_exists(self, node: Exists, out: _Out) -> None:
        """Write `[NOT] EXISTS (SELECT ...)`."""
        out.parts.append("NOT EXISTS (" if node.negated else "EXISTS (")
        self._subquery(node.query, node.offset, out)
        out.parts.append(")")

    #: the function a case-insensitive LIKE folds both sides with (None: the ILIKE operator)
    case_fold: ClassVar[str | None] = None
    #: what follows a LIKE pattern to make the backslash its escape character
    like_escape: ClassVar[str] = ""

    def visit_like(self, node: Like, out: _Out) -> None:
        """Write `left LIKE pattern` (or its case-insensitive form)."""
        fold = self.case_fold if node.case_insensitive else None
        if fold is None:
            self.visit_value(node.left, out)
            out.parts.append(" ILIKE " if node.case_insensitive else " LIKE ")
            self.visit_value(node.pattern, out)
        else:
            out.parts.append(fold + "(")
            self.visit_value(node.left, out)
            out.parts.append(f") LIKE {fold}(")
            self.visit_value(node.pattern, out)
            out.parts.append(")")
        out.parts.append(self.like_escape)

    # -- statements -------------------------------------------------------------------------

    def column_list(self, cols: tuple[ColumnMeta, ...]) -> str:
        """Quoted column names separated by commas."""
        return ", ".join(self.quote(c.name) for c in cols)

    def source(self, source: Source) -> str:
        """A table in FROM or JOIN, with its alias."""
        table = self.quote(source.meta.table)
        return table if source.alias is None else f"{table} AS {self.quote(source.alias)}"

    def check_select(self, query: SelectQuery) -> None:
        """Raise DialectError for a select no database runs as meant."""
        if query.lock is not None and (query.group_by is not None or query.distinct):
            what = "aggregate()" if query.group_by is not None else "distinct()"
            raise DialectError(
                f"{self._label(query)}: for_{query.lock.mode}() with {what}: an aggregated or "
                "distinct row is no row of the table to lock; lock the rows in a separate "
                "select (in the same transaction), then aggregate"
            )
        if query.lock is not None:
            self._check_lock_reads(query, query.lock)

    def _check_lock_reads(self, query: SelectQuery, lock: Lock) -> None:
        """Refuse a lock of rows no table holds: a window function's select (PostgreSQL
        refuses it, MySQL locked as it read), a named select's rows."""
        call = f"{self._label(query)}.for_{lock.mode}()"
        if any(_has_window(item) for item in query.items or ()):
            raise DialectError(
                f"{call} with a window function: PostgreSQL refuses the lock there; lock the "
                "rows in a separate select (in the same transaction), then compute the window")
        sources = [query.source, *(j.source for j in query.joins)]
        named = [s.alias or s.meta.table for s in sources if s.definition is not None]
        locked = list(lock.of) if lock.of else [s.alias or s.meta.table for s in sources]
        if named and ((lock.of and set(locked) & set(named)) or len(named) == len(sources)):
            raise DialectError(
                f"{call}: {', '.join(repr(n) for n in named if n in locked)} is a named select "
                "(sql.cte), whose rows are no table's: PostgreSQL refuses or skips the lock; "
                "lock the table's rows in the named select's own select, or name only tables "
                "in of=")

    @staticmethod
    def _label(query: SelectQuery) -> str:
        if query.source.alias is None:
            return f"select({query.source.meta.name})"
        aliases = [query.source.alias] + [j.source.alias or "" for j in query.joins]
        return f"join({', '.join(aliases)})"

    def visit_select(self, query: SelectQuery, out: _Out) -> None:
        """Write a SELECT statement."""
        self.check_select(query)
        source = query.source
        scope = {source.alias or source.meta.table: source.meta}
        for join in query.joins:
            scope[join.source.alias or join.source.meta.table] = join.source.meta
        out.scopes.append(scope)
        parts = out.parts
        self.visit_with(query, out)
        parts.append("SELECT DISTINCT " if query.distinct else "SELECT ")
        self.visit_items(query, out)
        parts.append(" FROM " + self.source(source))
        for join in query.joins:
            parts.append((" LEFT JOIN " if join.kind == "left" else " INNER JOIN ")
                         + self.source(join.source) + " ON ")
            self.visit_condition(join.on, out)
        if query.where is not None:
            parts.append(" WHERE ")
            self.visit_condition(query.where, out)
        if query.group_by:
            parts.append(" GROUP BY ")
            items = query.items or ()
            for i, group in enumerate(query.group_by):
                if i:
                    parts.append(", ")
                if isinstance(group, Labeled) and group in items:
                    # By position: the expression written again would bind its values again,
                    # and PostgreSQL groups `f($1)` apart from `f($2)`.
                    parts.append(str(items.index(group) + 1))
                elif isinstance(group, Labeled):  # not selected (a subquery of one column)
                    self.visit_value(group.value, out)
                else:
                    self.visit_value(group, out)
        if query.having is not None:
            parts.append(" HAVING ")
            labels = {g.value: g.label for g in query.group_by or ()
                      if isinstance(g, Labeled) and isinstance(g.value, Function)}
            saved, out.group_labels = out.group_labels, (
                labels if labels and self.having_names_labels else None)
            try:
                self.visit_condition(query.having, out)
            finally:
                out.group_labels = saved
        if query.order:
            parts.append(" ORDER BY ")
            saved_order = out.select_items, out.order_table
            out.select_items = tuple(query.items or ())
            out.order_table = (self.quote(query.source.meta.table)
                               if query.source.alias is None else None)
            try:
                self._comma_separated(query.order, self.order_item, out)
            finally:
                out.select_items, out.order_table = saved_order
        self.visit_limit_offset(query.limit, query.offset, out)
        if query.lock is not None:
            parts.append(" " + self.lock_clause(query, query.lock))
        out.scopes.pop()

    def visit_compound(self, node: Compound, out: _Out) -> None:
        """Write selects combined by UNION / INTERSECT / EXCEPT, then ORDER BY and LIMIT; the
        named selects its members read go in one WITH before them all."""
        if out.hoisted is None or not set(node.parts) <= out.hoisted:
            self._write_with(self._definitions(node.parts, node.offsets), out)
        saved = out.hoisted
        out.hoisted = set(node.parts)
        try:
            for i, part in enumerate(node.parts):
                if i:
                    out.parts.append(f" {node.ops[i - 1]} ")
                self._subquery(part, node.offsets[i], out)
        finally:
            out.hoisted = saved
        if node.order:
            out.parts.append(" ORDER BY ")
            # by position too: the first statement's output names can repeat (a label of a
            # fetched column's SQL name), and ORDER BY "name" was then ambiguous
            first = node.parts[0]
            saved_order = out.select_items, out.order_table
            out.select_items = tuple(
                item if isinstance(item, Labeled) else Labeled(_output_name(item), item)
                for item in (first.items if first.items is not None
                             else first.source.meta.columns))
            out.order_table = None
            try:
                self._comma_separated(node.order, self.order_item, out)
            finally:
                out.select_items, out.order_table = saved_order
        self.visit_limit_offset(node.limit, node.offset, out)

    def visit_with(self, query: SelectQuery, out: _Out) -> None:
        """Write WITH [RECURSIVE] for the named selects the query reads."""
        if out.hoisted is not None and query in out.hoisted:
            return  # a member of a set operation, whose WITH is written before it
        self._write_with(self._definitions((query,), (0,)), out)

    def _definitions(self, queries: tuple[SelectQuery, ...], offsets: tuple[int, ...]
                     ) -> list[tuple[CommonTable, int]]:
        """The named selects the queries read, each once, with where the values of the query
        that reads it start."""
        written: dict[str, tuple[CommonTable, int]] = {}

        def add(query: SelectQuery, base: int) -> None:
            for source in (query.source, *(j.source for j in query.joins)):
                definition = source.definition
                if definition is None:
                    continue
                if definition.name in written:
                    if written[definition.name][0].query != definition.query:
                        raise ValidationError(
                            f"{self._label(query)}: two different selects are named "
                            f"{definition.name!r}; give each sql.cte() its own name")
                    continue
                if definition.step is not None:
                    # the members of its UNION ALL take no WITH of their own (no database
                    # parses one there): the named selects they read come before it
                    start = base + definition.offset
                    body = definition.query
                    if isinstance(body, Compound):
                        for part, at in zip(body.parts, body.offsets, strict=True):
                            add(part, start + at)
                    else:
                        add(body, start)
                    add(definition.step, base + definition.step_offset)
                written[definition.name] = (definition, base)

        for query, base in zip(queries, offsets, strict=True):
            add(query, base)
        return list(written.values())

    def _write_with(self, definitions: list[tuple[CommonTable, int]], out: _Out) -> None:
        if not definitions:
            return
        recursive = any(d.step is not None for d, _ in definitions)
        out.parts.append("WITH RECURSIVE " if recursive else "WITH ")
        for i, (definition, base) in enumerate(definitions):
            out.parts.append((", " if i else "") + self.quote(definition.name) + " ("
                             + ", ".join(self.quote(c) for c in definition.columns) + ") AS (")
            query = definition.query
            # the base of a recursive one with its own order or limit is a member of a UNION
            # ALL: no database takes those there (nor parentheses, SQLite), a derived table does
            wrapped = definition.step is not None and (
                bool(query.order) or query.limit is not None or query.offset is not None)
            if wrapped:
                out.parts.append("SELECT * FROM (")
            hoisted = out.hoisted
            if definition.step is not None:  # what its members read is written before it
                out.hoisted = {*(hoisted or ()), definition.step,
                               *(query.parts if isinstance(query, Compound) else (query,))}
            try:
                if isinstance(query, Compound):
                    saved = out.offset
                    out.offset = saved + base + definition.offset
                    try:
                        self.visit_compound(query, out)
                    finally:
                        out.offset = saved
                else:
                    self._subquery(query, base + definition.offset, out)
                if wrapped:
                    out.parts.append(") AS " + self.quote(definition.name + "_base"))
                if definition.step is not None:
                    out.parts.append(" UNION ALL ")
                    self._subquery(definition.step, base + definition.step_offset, out)
            finally:
                out.hoisted = hoisted
            out.parts.append(")")
        out.parts.append(" ")

    @staticmethod
    def _comma_separated(items: tuple[T, ...], write: Callable[[T, _Out], None],
                         out: _Out) -> None:
        for i, item in enumerate(items):
            if i:
                out.parts.append(", ")
            write(item, out)

    def visit_items(self, query: SelectQuery, out: _Out) -> None:
        """Write the select list."""
        items = query.items
        if items is None:
            if query.source.alias is None and not query.joins:
                out.parts.append(self.column_list(query.source.meta.columns))
                return
            names: list[str] = []
            for source in [query.source, *(j.source for j in query.joins)]:
                alias = self.quote(source.alias or source.meta.table) + "."
                names.extend(alias + self.quote(c.name) for c in source.meta.columns)
            out.parts.append(", ".join(names))
            return
        for i, item in enumerate(items):
            if i:
                out.parts.append(", ")
            if isinstance(item, Labeled):
                self.visit_value(item.value, out)
                out.parts.append(" AS " + self.quote(item.label))
            else:
                self.visit_value(item, out)

    def index_column(self, col: ColumnMeta, *, holds_null: bool) -> str:
        """One column of CREATE INDEX, in the NULL order order_item() sorts it."""
        return self.quote_identifier(col.name)

    def order_item(self, item: OrderItem, out: _Out) -> None:
        """One ORDER BY item (NULLs sort first ascending and last descending everywhere)."""
        operand = item.operand
        items = out.select_items
        if isinstance(operand, Labeled) and items is not None and operand in items:
            # By position: a fetched column of the label's name (a model's SQL name, a joined
            # table's column) made ORDER BY "label" ambiguous on PostgreSQL
            out.parts.append(str(items.index(operand) + 1))
        elif isinstance(operand, Labeled):
            out.parts.append(self.quote(operand.label))
        elif isinstance(operand, ColumnMeta) and items and any(
                isinstance(i, Labeled) and i.label == operand.name for i in items):
            # a label of the column's SQL name: ORDER BY "name" was ambiguous on PostgreSQL,
            # and sorted by the label on MySQL and SQLite
            if operand in items:
                out.parts.append(str(items.index(operand) + 1))
            elif out.order_table is not None:
                out.parts.append(out.order_table + "." + self.quote(operand.name))
            else:
                self.visit_value(operand, out)
        else:
            self.visit_value(operand, out)
        out.parts.append(" DESC" if item.descending else " ASC")

    def visit_limit_offset(self, limit: Value | None, offset: Value | None, out: _Out) -> None:
        """Write LIMIT and OFFSET."""
        if limit is not None:
            out.parts.append(" LIMIT ")
            self.visit_value(limit, out)
        if offset is not None:
            if limit is None:
                out.parts.append(self.offset_without_limit)
            out.parts.append(" OFFSET ")
            self.visit_value(offset, out)

    offset_without_limit = ""
    #: ON CONFLICT DO UPDATE must name the unique index or key it resolves
    conflict_update_needs_target = True

    def lock_clause(self, query: SelectQuery, lock: Lock) -> str:
        """The row-lock clause of a select (FOR UPDATE / FOR SHARE ...)."""
        text = "FOR UPDATE" if lock.mode == "update" else "FOR SHARE"
        if lock.of:
            text += " OF " + ", ".join(self.quote(t) for t in lock.of)
        if lock.skip_locked:
            text += " SKIP LOCKED"
        elif lock.no_wait:
            text += " NOWAIT"
        return text

    def check_returning(self, kind: str, meta: ModelMeta,
                        statement: StatementNode | None = None) -> None:
        """Raise DialectError when this database has no RETURNING for `kind`."""
        if kind not in self.supports_returning:
            raise DialectError(self.returning_error(kind, meta, statement))

    def returning_error(self, kind: str, meta: ModelMeta,
                        statement: StatementNode | None = None) -> str:
        """The message of the DialectError for a RETURNING this database lacks, with the way
        out that fits `statement`."""
        return f"{self.name} has no {kind.upper()} ... RETURNING"

    def visit_returning(self, kind: str, meta: ModelMeta, returning: Returning,
                        out: _Out) -> None:
        """Write RETURNING, when the statement asks for rows."""
        if returning is None:
            return
        self.check_returning(kind, meta, out.statement)
        cols = meta.columns if returning == ALL_COLUMNS else returning
        out.parts.append(" RETURNING " + self.column_list(cols))

    def visit_insert(self, key: InsertStatement, out: _Out) -> None:
        """Write an INSERT statement."""
        meta, cols, rows = key.meta, key.columns, key.rows
        verb = f"{self.insert_verb(key.conflict)} {self.quote(meta.table)} "
        if not cols:  # rows in which every column takes its default
            out.parts.append(verb + self.default_rows(meta, len(rows), key.conflict))
        elif isinstance(rows, SelectQuery | Compound):
            out.parts.append(f"{verb}({self.column_list(cols)}) ")
            wrapped = key.conflict is not None and self.conflict_after_select_needs_where
            if wrapped:
                out.parts.append("SELECT * FROM (")
            if isinstance(rows, SelectQuery):
                self._subquery(rows, 0, out)
            else:
                self.visit_compound(rows, out)
            if wrapped:
                out.parts.append(") WHERE 1")
        elif isinstance(rows, RowParams):
            out.parts.append(f"{verb}({self.column_list(cols)}) VALUES ")
            width = len(cols)
            row_text = "(" + ", ".join([self.placeholder] * width) + ")"
            out.parts.append(", ".join([row_text] * rows.n_rows))
            base = out.offset + rows.start
            out.order.extend(range(base, base + rows.n_rows * width))
            out.kinds.extend([c.kind for c in cols] * rows.n_rows)
        else:
            out.parts.append(f"{verb}({self.column_list(cols)}) VALUES ")
            for r, row in enumerate(rows):
                assert isinstance(row, tuple)  # a row of value nodes
                out.parts.append(", (" if r else "(")
                for i, cell in enumerate(row):
                    if i:
                        out.parts.append(", ")
                    self.visit_value(cell, out)
                out.parts.append(")")
        if key.conflict is not None:
            self.visit_conflict(meta, cols, key.conflict, out)
        self.visit_returning("insert", meta, key.returning, out)

    #: an upsert's ON CONFLICT right after its SELECT would be read as a join's ON unless
    #: the select ends in a WHERE (SQLite): the select is then wrapped in one
    conflict_after_select_needs_where: ClassVar[bool] = False

    def default_rows(self, meta: ModelMeta, n_rows: int,
                     conflict: ConflictNothing | ConflictUpdate | None) -> str:
        """What follows INSERT INTO table for rows in which every column takes its default."""
        if n_rows == 1:
            return "DEFAULT VALUES"
        # DEFAULT VALUES is one row: several name one column and give it DEFAULT each time
        return (f"({self.quote(meta.columns[0].name)}) VALUES "
                + ", ".join(["(DEFAULT)"] * n_rows))

    def insert_verb(self, conflict: ConflictNothing | ConflictUpdate | None) -> str:
        """How the INSERT starts (MySQL skips duplicates with INSERT IGNORE)."""
        return "INSERT INTO"

    def visit_conflict(self, meta: ModelMeta, cols: tuple[ColumnMeta, ...],
                       conflict: ConflictNothing | ConflictUpdate, out: _Out) -> None:
        """Write the upsert clause (ON CONFLICT ...)."""
        target = conflict.target
        index_where = (conflict.where if isinstance(conflict, ConflictNothing)
                       else conflict.index_where)
        out.parts.append(" ON CONFLICT")
        if target is not None:
            out.parts.append(f" ({self.column_list(target)})")
            if index_where is not None:
                # inline, as the index's DDL writes it (nodes.ConflictUpdate says why)
                text = self.inline_condition(index_where, list(conflict.literals))
                out.parts.append(" WHERE " + self.escape_text(text))
        elif isinstance(conflict, ConflictUpdate) and self.conflict_update_needs_target:
            raise DialectError(
                f"insert({meta.name}).on_conflict_do_update(None, ...): {self.name} needs a "
                "conflict target; pass the columns of the unique index or key that may "
                "conflict, e.g. on_conflict_do_update([\"id\"], {...})"
            )
        if isinstance(conflict, ConflictNothing):
            out.parts.append(" DO NOTHING")
            return
        out.parts.append(" DO UPDATE SET ")
        # PostgreSQL: a bare column in the new values or the WHERE is ambiguous between the
        # table and EXCLUDED, so column references there name the table.
        out.qualifier = self.quote(meta.table)
        try:
            self.visit_assignments(conflict.assignments, out)
            if conflict.update_where is not None:
                out.parts.append(" WHERE ")
                self.visit_condition(conflict.update_where, out)
        finally:
            out.qualifier = None

    def visit_assignments(self, items: tuple[tuple[ColumnMeta, Value], ...], out: _Out) -> None:
        """Write `column = value, ...`."""
        for i, (col, value) in enumerate(items):
            out.parts.append((", " if i else "") + self.quote(col.name) + " = ")
            self.visit_value(value, out)

    def visit_update(self, key: UpdateStatement, out: _Out) -> None:
        """Write an UPDATE statement."""
        meta = key.meta
        if key.picked is not None and key.picked.settled is not None:
            self.visit_settled_then_picked(key, key.picked, key.picked.settled, out)
            return
        out.scopes.append({meta.table: meta})
        out.parts.append(f"UPDATE {self.quote(meta.table)} SET ")
        self.visit_assignments(key.assignments, out)
        if key.picked is not None:
            self.visit_picked(key, key.picked, out)
        else:
            self.visit_where_of(meta, key.where, out)
            self.visit_returning("update", meta, key.returning, out)
        out.scopes.pop()

    def visit_picked(self, key: UpdateStatement, picked: PickedRows, out: _Out) -> None:
        """FROM (the picking select) AS alias WHERE table.key = alias.key RETURNING the
        table's columns and the select's carried ones."""
        meta = key.meta
        self._require_update_from(meta)
        self.check_returning("update", meta, out.statement)
        table, alias = self.quote(meta.table), self.quote(picked.alias)
        out.parts.append(" FROM (")
        self._subquery(picked.query, picked.offset, out)
        key_name = self.quote(picked.key.name)
        out.parts.append(f") AS {alias} WHERE {table}.{key_name} = {alias}.{key_name}")
        returned = [f"{alias}.{self.quote(c.name)} AS {self.quote(name)}" if carried
                    else f"{table}.{self.quote(c.name)}"
                    for name, c, carried in self._picked_returned(key, picked)]
        out.parts.append(" RETURNING " + ", ".join(returned))

    def visit_settled_then_picked(self, key: UpdateStatement, picked: PickedRows,
                                  settled: UpdateStatement, out: _Out) -> None:
        """WITH settled AS (the first update RETURNING 1), changed AS (the update from picked
        rows) SELECT how many rows the first changed, and the picked update's rows: one
        statement, one row at least (NULLs after the count when nothing was picked)."""
        meta = key.meta
        self._require_update_from(meta)
        # The names of the WITH hide tables of the same name: they differ from the table's.
        first, then = (f"{name}_" if name == meta.table else name
                       for name in (_SETTLED, "changed"))
        first_q, then_q = self.quote(first), self.quote(then)
        out.parts.append(f"WITH {first_q} AS (")
        saved = out.offset
        out.offset = saved + picked.settled_offset
        try:
            self.visit_update(settled, out)
        finally:
            out.offset = saved
        out.parts.append(f" RETURNING 1), {then_q} AS (")
        self.visit_update(key._replace(picked=picked._replace(settled=None)), out)
        # The count is the join's outer side: the first update runs to its end (waiting for
        # any row lock it meets) before the picking one takes its first row lock.
        settled_q, one_q = self.quote(_SETTLED), self.quote("one")
        out.parts.append(f") SELECT {one_q}.{settled_q}, {then_q}.* FROM (SELECT count(*) AS "
                         f"{settled_q} FROM {first_q}) AS {one_q} LEFT JOIN {then_q} ON TRUE")

    def _require_update_from(self, meta: ModelMeta) -> None:
        """DialectError unless this database has UPDATE ... FROM whose RETURNING reads the
        picked rows."""
        if not self.supports_update_from:
            raise DialectError(
                f"update({meta.name}) from picked rows: {self.name} has no UPDATE ... FROM "
                "whose RETURNING reads the picked rows; select the rows first (for_update() "
                "in a transaction), then update them by key")

    @staticmethod
    def _picked_returned(key: UpdateStatement,
                         picked: PickedRows) -> list[tuple[str, ColumnMeta, bool]]:
        """What an UPDATE ... FROM picked rows returns, each under its row field's name: the
        updated table's named columns, then the picked rows' carried ones (True)."""
        assert isinstance(key.returning, tuple)  # _from_picked() names the columns
        return ([(c.attr, c, False) for c in key.returning]
                + [(label, c, True) for label, c in picked.carried])

    def visit_delete(self, key: DeleteStatement, out: _Out) -> None:
        """Write a DELETE statement."""
        meta = key.meta
        out.scopes.append({meta.table: meta})
        out.parts.append(f"DELETE FROM {self.quote(meta.table)}")
        self.visit_where_of(meta, key.where, out)
        self.visit_returning("delete", meta, key.returning, out)
        out.scopes.pop()

    def visit_where_of(self, meta: ModelMeta, where: Condition | None, out: _Out) -> None:
        """The WHERE of an UPDATE or DELETE on `meta`'s table."""
        if where is not None:
            out.parts.append(" WHERE ")
            self.visit_condition(where, out)


def _field(item: Value | Labeled) -> ResultField:
    """The row field a select item becomes: its name, and how its value is read back."""
    if isinstance(item, Labeled):
        value = item.value
        if isinstance(value, Aggregate | Function):
            # computed by the database: read as the kind whatever type the driver returns
            return ResultField(item.label, value.kind, True, value.scale)
        if isinstance(value, ScalarSubquery):
            inner = Dialect.result_of(value.query)
            assert isinstance(inner, tuple) and len(inner) == 1  # as_subquery() selects one
            return inner[0]._replace(name=item.label)
        col = _column_of(value)
        # a named select's column under a label (a join's project(), add_columns()) holds
        # what the database computed (SUM of an int column: a numeric on PostgreSQL) as it
        # does unlabeled
        return ResultField(item.label, col.kind, type(col) is DerivedColumn, col.scale)
    col = _column_of(item)
    return ResultField(col.attr, col.kind, type(col) is DerivedColumn, col.scale)


def _has_window(node: object) -> bool:
    """Whether a select item computes a window function (not inside a subquery)."""
    if isinstance(node, SelectQuery) or not isinstance(node, tuple):
        return False
    if isinstance(node, Function) and node.name == "over":
        return True
    return any(_has_window(child) for child in node)


def _column_of(operand: object) -> ColumnMeta:
    """The column an operand of a select list reads."""
    if isinstance(operand, QualifiedColumn):
        return operand.column
    if isinstance(operand, ColumnMeta):
        return operand
    raise ValidationError(f"a select list holds columns and labeled values, not {operand!r}")


def subqueries(node: tuple[object, ...]) -> list[SelectQuery]:
    """Every subquery inside a node (or the node itself), at any depth."""
    return [n for n in iter_nodes((node,)) if isinstance(n, SelectQuery)]


def in_subqueries(node: tuple[object, ...]) -> list[InSubquery]:
    """Every `in (SELECT ...)` inside a node (or the node itself), at any depth."""
    return [n for n in iter_nodes((node,)) if isinstance(n, InSubquery)]
