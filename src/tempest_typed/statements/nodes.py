"""The statement tree: one small immutable node type per SQL idea, holding structure, never values.

A statement is `(key, values)`: `key` is a tree of the nodes below, `values` the bound values
in the order the builder met them (a `Param` names its value by index). Because the key holds
no value, it is also the cache key of the compiled SQL: two statements of the same shape share
one compilation. Two exceptions: a LIMIT's row count is part of the shape (`RowCount`), written
into the SQL as a number, so that the plan a database keeps for the statement knows it; and
an upsert's conflict target predicate holds its values (`ConflictUpdate` says why).

Every node is a `NamedTuple`: hashing and comparing a key is the C code of tuples, as cheap as
the tagged tuples this grammar replaced, and each field has a name and a type. Tuples of
different classes with equal items compare equal, so every node ends with a `tag` field that
is its own: two node types can never stand for each other in a cache key. Columns appear as
their `ColumnMeta` (hashed by identity), tables as their `ModelMeta`.

The grammar, as types:

    Value     = Param | RawSQL | SQLExpr | CurrentTime | ExcludedValue | ScalarSubquery
              | BackoffDelay | RowCount | Operand
    Operand   = ColumnMeta            a column of the statement's one table, unqualified
              | QualifiedColumn       alias.column (a join alias, or a table name)
              | OuterColumn           alias.column of an enclosing statement (correlation)
              | Aggregate             count/sum/avg/min/max over a column (or rows)
              | Function              a function, arithmetic, CASE or a window function
    Condition = Compare | IsNull | Between | InList | InParams | InSubquery | Like
              | And | Or | Not | Exists | TrueCondition | FalseCondition
    Statement = SelectQuery | Compound | InsertStatement | UpdateStatement | DeleteStatement

A subquery's `Param.value_index` counts from the start of its own values; the node that holds the
subquery (`InSubquery`, `Exists`, `ScalarSubquery`) says at which of the enclosing
statement's values they start (`offset`).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypeAlias

from ..model import ColumnMeta, ModelMeta

__all__ = [
    "ALL_COLUMNS", "COMPARISONS", "FALSE", "INT_PARAMS", "OPERATORS", "ORDERED_KINDS",
    "TEXT_KINDS", "TRUE", "Aggregate", "And", "BackoffDelay", "Between", "CommonTable", "Compare",
    "Compound", "Condition",
    "ConflictNothing", "ConflictUpdate", "CurrentTime", "DeleteStatement", "ExcludedValue",
    "Exists", "FalseCondition", "Function", "InList", "InParams", "InSubquery", "InsertStatement", "IsNull",
    "JoinClause", "Labeled", "Like", "Lock", "Not", "Operand", "Or", "OrderItem", "OuterColumn",
    "Param", "QualifiedColumn", "RawSQL", "Returning", "RowCount", "RowParams", "SQLExpr", "ScalarSubquery",
    "PickedRows", "SelectQuery", "Source", "StatementNode", "TrueCondition", "UpdateStatement", "Value",
    "equals", "find_equals", "find_lock", "find_params", "find_raw", "iter_nodes", "lock",
    "new_node", "operand_column", "order_item", "param", "raw_sql", "select_all",
]

# -- values -----------------------------------------------------------------------------------


class Param(NamedTuple):
    """A bound value: values[value_index]; `kind` is the column kind it meets (for adapters),
    or None."""

    value_index: int
    kind: str | None
    tag: Literal["param"] = "param"


class RowCount(NamedTuple):
    """A LIMIT's row count (an int the builder checked), written into the SQL as a number.

    Bound, PostgreSQL's plan of a prepared statement cannot know it: the generic plan
    estimates a tenth of the matching rows, so it plans for many (a hash join over a
    sequential scan) or plans again on each run. With the claim's `LIMIT %s` the server spent
    40% more CPU on the seed's claim and ack than with `LIMIT 10` (BENCHMARKS.md,
    "2026-12-02, night"). OFFSET stays bound: a page number varies from call to call.
    """

    rows: int
    tag: Literal["rowcount"] = "rowcount"


class RawSQL(NamedTuple):
    """Verbatim SQL from sql.raw."""

    text: str
    tag: Literal["raw"] = "raw"


class SQLExpr(NamedTuple):
    """sql.expr: parts[0] values[0] parts[1] ... parts[-1]."""

    parts: tuple[str, ...]
    values: tuple[Value, ...]
    tag: Literal["expr"] = "expr"


class CurrentTime(NamedTuple):
    """sql.now(), plus a number of seconds when `plus` is given."""

    plus: Value | None
    tag: Literal["now"] = "now"


class BackoffDelay(NamedTuple):
    """An exponential retry delay in seconds: `first` times 2 ** (attempts - 1), the
    exponent capped at 30 so that the product never overflows, at most `cap`; each dialect
    spells the power its own way."""

    attempts: Value
    first: Value
    cap: Value
    tag: Literal["backoff"] = "backoff"


class ExcludedValue(NamedTuple):
    """sql.excluded(column): the value an upsert tried to insert."""

    column: ColumnMeta
    tag: Literal["excluded"] = "excluded"


class QualifiedColumn(NamedTuple):
    """`qualifier.column`: a column of a join alias, or of a table named by its table name."""

    qualifier: str
    column: ColumnMeta
    tag: Literal["qcol"] = "qcol"


class OuterColumn(NamedTuple):
    """`qualifier.attr` naming an enclosing statement's alias or table (a correlated subquery).

    It is resolved against the enclosing statements when compiled; `expected` is the column it
    was compared with or assigned to, whose type family it must share.
    """

    qualifier: str
    attr: str
    expected: ColumnMeta | None
    tag: Literal["outer"] = "outer"


class Aggregate(NamedTuple):
    """An aggregate: func(argument), func(DISTINCT argument), or COUNT(*) when argument is None.

    `kind` is the kind of its result (see statements/aggregate.py), `nullable` whether it can
    be NULL (every aggregate but count), `scale` a Decimal result's places (None: as it comes).
    """

    func: Literal["count", "sum", "avg", "min", "max"]
    argument: ColumnMeta | QualifiedColumn | None
    distinct: bool
    kind: str
    nullable: bool
    scale: int | None
    tag: Literal["aggregate"] = "aggregate"


class ScalarSubquery(NamedTuple):
    """sql.scalar(subquery): the one value a one-column subquery yields (NULL for no row)."""

    query: SelectQuery
    offset: int
    tag: Literal["scalar"] = "scalar"


class Function(NamedTuple):
    """A computed value: a function of `args`, arithmetic (`name` one of + - * /), a CASE, or
    a window function.

    `option` is what the function takes as structure (date_trunc's unit, extract's part);
    `source_kind` the kind of its first argument (date or datetime, int or float), which a
    dialect may spell differently; `kind`, `nullable` and `scale` describe the result.
    `name` "case": CASE WHEN conditions[i] THEN args[i] ... [ELSE args[-1]] END.
    `name` "over": args[0] (a ranking Function or an Aggregate) OVER (PARTITION BY args[1:]
    ORDER BY order). One node for all of them keeps the recursive `Value` union small: a
    node type per idea here made mypy --strict take five times as long.
    """

    name: str
    args: tuple[Value, ...]
    option: str | None
    source_kind: str | None
    kind: str
    nullable: bool
    scale: int | None
    conditions: tuple[Condition, ...]
    order: tuple[OrderItem, ...]
    tag: Literal["function"] = "function"


Operand: TypeAlias = "ColumnMeta | QualifiedColumn | OuterColumn | Aggregate | Function"
Value: TypeAlias = (
    "Param | RawSQL | SQLExpr | CurrentTime | ExcludedValue | ScalarSubquery | BackoffDelay"
    " | RowCount | Operand"
)

# -- conditions -------------------------------------------------------------------------------


class Compare(NamedTuple):
    """`left op right`, op one of = <> < <= > >=."""

    left: Operand
    op: str
    right: Value
    tag: Literal["cmp"] = "cmp"


class IsNull(NamedTuple):
    """`left IS [NOT] NULL`."""

    left: Operand
    negated: bool
    tag: Literal["isnull"] = "isnull"


class Between(NamedTuple):
    """`left BETWEEN low AND high`."""

    left: Operand
    low: Value
    high: Value
    tag: Literal["between"] = "between"


class InList(NamedTuple):
    """`left [NOT] IN (items...)`."""

    left: Operand
    items: tuple[Value, ...]
    negated: bool
    tag: Literal["in"] = "in"


class InParams(NamedTuple):
    """`left [NOT] IN (...)` over the run values[start:start + length], bound as `kind`."""

    left: Operand
    start: int
    length: int
    kind: str | None
    negated: bool
    tag: Literal["inparams"] = "inparams"


class InSubquery(NamedTuple):
    """`left [NOT] IN (SELECT ...)`."""

    left: Operand
    query: SelectQuery
    offset: int
    negated: bool
    tag: Literal["insub"] = "insub"


class Like(NamedTuple):
    """`left LIKE pattern`; case-folded for ilike/icontains; `escaped`: the pattern was made
    from literal text whose %, _ and backslash were escaped with a backslash."""

    left: Operand
    pattern: Value
    case_insensitive: bool
    escaped: bool
    tag: Literal["like"] = "like"


class And(NamedTuple):
    """All of the items hold."""

    items: tuple[Condition, ...]
    tag: Literal["and"] = "and"


class Or(NamedTuple):
    """At least one of the items holds."""

    items: tuple[Condition, ...]
    tag: Literal["or"] = "or"


class Not(NamedTuple):
    """The item does not hold."""

    item: Condition
    tag: Literal["not"] = "not"


class Exists(NamedTuple):
    """`[NOT] EXISTS (SELECT ...)`."""

    query: SelectQuery
    offset: int
    negated: bool
    tag: Literal["exists"] = "exists"


class TrueCondition(NamedTuple):
    """A condition that always holds."""

    tag: Literal["true"] = "true"


class FalseCondition(NamedTuple):
    """A condition that never holds (an empty `in` list)."""

    tag: Literal["false"] = "false"


Condition: TypeAlias = (
    "Compare | IsNull | Between | InList | InParams | InSubquery | Like | And | Or | Not"
    " | Exists | TrueCondition | FalseCondition"
)

TRUE = TrueCondition()
FALSE = FalseCondition()

# -- select -----------------------------------------------------------------------------------


class CommonTable(NamedTuple):
    """`[RECURSIVE] name (columns) AS (query [UNION ALL step])`: a named select (sql.cte), its
    `length` values from the enclosing statement's values[offset] (the step's from
    step_offset)."""

    name: str
    columns: tuple[str, ...]
    query: SelectQuery | Compound
    offset: int
    step: SelectQuery | None
    step_offset: int
    length: int = 0
    tag: Literal["cte"] = "cte"


class Source(NamedTuple):
    """A table in FROM or JOIN; `alias` None for a plain select's one table. A named select
    (sql.cte) has its `definition`, written in the statement's WITH; a recursive one's step
    names it without one."""

    meta: ModelMeta
    alias: str | None
    definition: CommonTable | None = None
    tag: Literal["source"] = "source"


class JoinClause(NamedTuple):
    """`INNER JOIN` / `LEFT JOIN` source ON condition."""

    kind: Literal["inner", "left"]
    source: Source
    on: Condition
    tag: Literal["join"] = "join"


class Labeled(NamedTuple):
    """A select item with an output name: an aggregate or a computed value, and its label (in
    ORDER BY and GROUP BY, the item named by its label)."""

    label: str
    value: Value
    tag: Literal["labeled"] = "labeled"


class OrderItem(NamedTuple):
    """One ORDER BY item; `nullable`: the operand can be NULL (PostgreSQL spells NULL order)."""

    operand: Operand | Labeled
    descending: bool
    nullable: bool
    tag: Literal["order"] = "order"


class Lock(NamedTuple):
    """FOR UPDATE / FOR SHARE [OF qualifiers] [SKIP LOCKED | NOWAIT]."""

    mode: Literal["update", "share"]
    skip_locked: bool
    no_wait: bool
    of: tuple[str, ...]
    tag: Literal["lock"] = "lock"


class SelectQuery(NamedTuple):
    """SELECT [DISTINCT] items FROM source [joins] [WHERE] [GROUP BY] [HAVING] [ORDER BY]
    [LIMIT] [OFFSET] [lock].

    `items` None selects every column of every source (rows are models, or models by alias in
    a join); otherwise it is the projection: operands, and labeled aggregates.
    """

    source: Source
    joins: tuple[JoinClause, ...]
    items: tuple[Operand | Labeled, ...] | None
    where: Condition | None
    group_by: tuple[Operand | Labeled, ...] | None
    having: Condition | None
    order: tuple[OrderItem, ...]
    limit: Value | None
    offset: Value | None
    lock: Lock | None
    distinct: bool
    tag: Literal["select"] = "select"


class Compound(NamedTuple):
    """`part UNION part ...` [ORDER BY] [LIMIT] [OFFSET]: `ops[i]` joins parts[i] and
    parts[i + 1], whose values start at the compound's values[offsets[i]]."""

    parts: tuple[SelectQuery, ...]
    offsets: tuple[int, ...]
    ops: tuple[str, ...]
    order: tuple[OrderItem, ...]
    limit: Value | None
    offset: Value | None
    tag: Literal["compound"] = "compound"


# -- writes -----------------------------------------------------------------------------------

#: returning() of every column
ALL_COLUMNS: Literal["*"] = "*"
Returning: TypeAlias = "Literal['*'] | tuple[ColumnMeta, ...] | None"


class RowParams(NamedTuple):
    """Insert rows that are all bound values, laid out row by row from values[start]."""

    n_rows: int
    start: int
    tag: Literal["rowparams"] = "rowparams"


class ConflictNothing(NamedTuple):
    """ON CONFLICT [(target) [WHERE index predicate]] DO NOTHING.

    The index predicate is written inline, as CREATE INDEX ... WHERE writes it: its `Param`s
    index `literals`, not the statement's values (see ConflictUpdate).
    """

    target: tuple[ColumnMeta, ...] | None
    where: Condition | None
    literals: tuple[object, ...]
    tag: Literal["do_nothing"] = "do_nothing"


class ConflictUpdate(NamedTuple):
    """ON CONFLICT [(target) [WHERE index_where]] DO UPDATE SET ... [WHERE update_where].

    `index_where` is written with its values inline (`literals`, which its `Param`s index):
    the database picks the partial index by proving the predicate implies the index's, and
    a bound value proves nothing (SQLite refuses any; PostgreSQL's generic plan of a prepared
    statement, which it picks from the eleventh run of one on, finds no index).
    """

    target: tuple[ColumnMeta, ...] | None
    assignments: tuple[tuple[ColumnMeta, Value], ...]
    index_where: Condition | None
    update_where: Condition | None
    literals: tuple[object, ...]
    tag: Literal["do_update"] = "do_update"


class InsertStatement(NamedTuple):
    """INSERT INTO table (columns) VALUES rows [conflict] [RETURNING]."""

    meta: ModelMeta
    columns: tuple[ColumnMeta, ...]
    rows: RowParams | tuple[tuple[Value, ...], ...] | SelectQuery | Compound
    conflict: ConflictNothing | ConflictUpdate | None
    returning: Returning
    tag: Literal["insert"] = "insert"


class PickedRows(NamedTuple):
    """UPDATE ... FROM (a select of the rows to change) AS alias WHERE key = alias.key: the
    select's values start at the statement's values[offset]; `carried` are columns of the
    select returned after the updated row's, under their labels (what the rows were before the
    update, in the order the select chose them).

    With `settled`, another update of the same table runs first in the same statement (its
    values from values[settled_offset]): the statement's rows are then how many rows it
    changed, followed by the picked update's columns (one row of NULLs after the count when
    nothing was picked)."""

    query: SelectQuery
    offset: int
    alias: str
    key: ColumnMeta
    carried: tuple[tuple[str, ColumnMeta], ...]
    settled: UpdateStatement | None = None
    settled_offset: int = 0


class UpdateStatement(NamedTuple):
    """UPDATE table SET assignments [FROM picked] [WHERE] [RETURNING]."""

    meta: ModelMeta
    assignments: tuple[tuple[ColumnMeta, Value], ...]
    where: Condition | None
    returning: Returning
    picked: PickedRows | None = None
    tag: Literal["update"] = "update"


class DeleteStatement(NamedTuple):
    """DELETE FROM table [WHERE] [RETURNING]."""

    meta: ModelMeta
    where: Condition | None
    returning: Returning
    tag: Literal["delete"] = "delete"


StatementNode: TypeAlias = (
    "SelectQuery | Compound | InsertStatement | UpdateStatement | DeleteStatement"
)

ORDERED_KINDS = frozenset({"int", "float", "decimal", "datetime", "date"})
TEXT_KINDS = frozenset({"str", "literal"})

#: operator name in the where language -> SQL comparison operator
COMPARISONS = {"eq": "=", "ne": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "between", "in", "not_in", "is_null",
             "like", "ilike", "contains", "icontains", "startswith", "endswith")


def iter_nodes(node: tuple[object, ...]) -> list[tuple[object, ...]]:
    """Every node inside `node` (itself excluded), depth first; columns and tables are leaves."""
    found: list[tuple[object, ...]] = []

    def walk(item: tuple[object, ...]) -> None:
        for child in item:
            if isinstance(child, tuple):
                if hasattr(child, "_fields"):
                    found.append(child)
                walk(child)

    walk(node)
    return found


def operand_column(node: object) -> ColumnMeta | None:
    """The column a value node reads directly (a bare or qualified column), if any."""
    if isinstance(node, ColumnMeta):
        return node
    if isinstance(node, QualifiedColumn):
        return node.column
    return None


def columns_read(node: object) -> set[str]:
    """The names of the statement's own columns a value node reads, inside functions too.

    A subquery's columns are its own rows' and EXCLUDED's the row tried, so neither counts.
    """
    if isinstance(node, ColumnMeta):
        return {node.name}
    if isinstance(node, QualifiedColumn):
        return {node.column.name}
    if isinstance(node, ExcludedValue | SelectQuery) or not isinstance(node, tuple):
        return set()
    found: set[str] = set()
    for child in node:
        found |= columns_read(child)
    return found


# -- making nodes -----------------------------------------------------------------------------
# Making a NamedTuple runs its Python-level __new__, which costs ten times a tuple literal:
# the builders' hot paths make their nodes with `new_node` instead, from the tuple of every
# field, the tag included; the nodes every statement makes again and again are made once and
# shared, and the hot paths look them up with the `find_*` lookups below (dict.get bound
# once: `NAME.get(...)` on an imported name makes a bound method per call) before calling
# the function that makes them (measured: BENCHMARKS.md, "Fast paths").

#: `new_node(InSubquery, (left, query, offset, negated, "insub"))`: the node from all its
#: fields in order, the tag last, without the NamedTuple's Python-level __new__
new_node = tuple.__new__


_PARAMS: dict[str | None, list[Param]] = {}
#: `find_params(kind, ())`: the shared Params of `kind` by index (param() adds the missing ones)
find_params = _PARAMS.get
#: the shared Params of int values (limit, offset), by index
INT_PARAMS: list[Param] = _PARAMS.setdefault("int", [])


def param(index: int, kind: str | None) -> Param:
    """The Param of values[index] bound as `kind` (shared)."""
    row = _PARAMS.get(kind)
    if row is not None and index < len(row):
        return row[index]
    if row is None:
        row = _PARAMS[kind] = []
    if index < 256:
        row.extend(Param(i, kind) for i in range(len(row), index + 1))
        return row[index]
    return Param(index, kind)


_EQUALS: dict[tuple[Operand, int, str | None], Compare] = {}
#: `find_equals((left, index, kind))`: the shared `left = values[index]`, or None
find_equals = _EQUALS.get


def equals(left: Operand, index: int, kind: str | None) -> Compare:
    """`left = values[index]` (shared)."""
    key = (left, index, kind)
    found = _EQUALS.get(key)
    if found is None:
        if len(_EQUALS) >= 8192:
            _EQUALS.clear()
        found = _EQUALS[key] = Compare(left, "=", param(index, kind))
    return found


_ORDER_ITEMS: dict[tuple[object, bool, bool], OrderItem] = {}


def order_item(operand: Operand | Labeled, descending: bool, nullable: bool) -> OrderItem:
    """One ORDER BY item (shared)."""
    key = (operand, descending, nullable)
    found = _ORDER_ITEMS.get(key)
    if found is None:
        if len(_ORDER_ITEMS) >= 8192:
            _ORDER_ITEMS.clear()
        found = _ORDER_ITEMS[key] = OrderItem(operand, descending, nullable)
    return found


_LOCKS: dict[tuple[Literal["update", "share"], bool, bool, tuple[str, ...]], Lock] = {}
#: `find_lock((mode, skip_locked, no_wait, of))`: the shared row-lock clause, or None
find_lock = _LOCKS.get


def lock(mode: Literal["update", "share"], skip_locked: bool, no_wait: bool,
         of: tuple[str, ...]) -> Lock:
    """A row-lock clause (shared)."""
    key = (mode, skip_locked, no_wait, of)
    found = _LOCKS.get(key)
    if found is None:
        if len(_LOCKS) >= 1024:
            _LOCKS.clear()
        found = _LOCKS[key] = Lock(mode, skip_locked, no_wait, of)
    return found


_FROM: dict[ModelMeta, SelectQuery] = {}


def select_all(meta: ModelMeta) -> SelectQuery:
    """SELECT every column FROM the model's table, nothing else yet (shared)."""
    found = _FROM.get(meta)
    if found is None:
        if len(_FROM) >= 4096:
            _FROM.clear()
        found = _FROM[meta] = SelectQuery(Source(meta, None), (), None, None, None, None, (),
                                          None, None, None, False)
    return found


_RAW: dict[str, RawSQL] = {}
#: `find_raw(text)`: the shared verbatim text, or None
find_raw = _RAW.get


def raw_sql(text: str) -> RawSQL:
    """Verbatim SQL text (shared)."""
    found = _RAW.get(text)
    if found is None:
        if len(_RAW) >= 4096:
            _RAW.clear()
        found = _RAW[text] = RawSQL(text)
    return found
