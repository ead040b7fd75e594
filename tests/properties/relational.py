"""Strategies for relational statements: joins, aggregates, column references, subqueries,
groups of computed values and window functions.

Three fixed models (users, orders, order items) whose tables and columns have names that need
quoting, filled per example with generated rows: NULLs in every nullable column, duplicate
values, foreign ids that match nothing (no foreign keys, so unmatched rows exist on both sides
of a join), and strings that differ only by case or by a leading/trailing space.

Numbers stay where every database computes the same aggregate exactly: ints within +-10**12
(SQLite's SUM raises on int64 overflow where the others widen), floats that are multiples of
1/4 (sums are exact in any order), Decimals within 20 integer digits (a SUM fits MariaDB's
DECIMAL(65, 30)). A Decimal ordered, summed or averaged on SQLite is its documented
DialectError; the other two databases still run and compare the statement.

A window whose result depends on the order of its rows (row_number, lag, lead) orders by a
unique key last (every side's id); rank, dense_rank and aggregates (running totals take the
rows up to this one and its ties) are the same whatever order ties come in, so theirs may end
anywhere. An ordered statement orders by every side's id last, so its order is total.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from hypothesis import strategies as st

from tempest_typed import Model, and_, column, join, not_, or_, select, sql
from tempest_typed.model import meta_of

from .strategies import ORDERED, TEXT


class RelUser(Model, table="prop_rel_user"):
    id: int = column(primary_key=True)
    name: str = column(name="select")
    country: str | None = column(default=None, name="Country Code")
    credit: int | None = None
    score: float | None = column(default=None, name="a%s")
    joined: dt.datetime | None = None
    manager_id: int | None = None
    balance: Decimal | None = None


class RelOrder(Model, table="prop_rel_order s"):
    id: int = column(primary_key=True)
    user_id: int | None = None
    status: Literal["new", "paid", "refunded"] = column(name="order")
    cents: int | None = column(default=None, name="a b")
    price: float | None = None
    created: dt.datetime | None = column(default=None, name='cre"ated')
    day: dt.date | None = None
    note: str | None = column(default=None, name="é")
    amount: Decimal | None = None


class RelItem(Model, table="prop_rel_item%"):
    id: int = column(primary_key=True)
    order_id: int | None = None
    user_id: int | None = column(default=None, name="user")
    qty: int = column(name="group")
    sku: str | None = None
    price: float | None = None


MODELS: tuple[type[Model], ...] = (RelUser, RelOrder, RelItem)

_KINDS = {int: "int", float: "float", str: "str", Decimal: "decimal", dt.datetime: "datetime",
          dt.date: "date"}


@dataclasses.dataclass(frozen=True)
class Col:
    """One column of a relational model, as the generators see it."""

    attr: str
    kind: str
    nullable: bool


@functools.cache
def columns_of(model: type[Model]) -> tuple[Col, ...]:
    """The columns of a model (`id` first)."""
    return tuple(Col(c.attr, c.kind, c.nullable) for c in meta_of(model).columns)


# -- values -------------------------------------------------------------------------------------

#: strings equal but for case, a leading or trailing space, or a non-ASCII letter's case
STRINGS = ("a", "A", "a ", " a", "b", "B", "", "é", "É", "ß", "%", "a_b", "日本", "null")
_T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
#: the same instants written in other zones, which must group and compare as one
_INSTANTS = (_T0, _T0.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30))),
             _T0 + dt.timedelta(microseconds=1), _T0 - dt.timedelta(days=400),
             dt.datetime(1001, 1, 2, tzinfo=dt.UTC), dt.datetime(9998, 12, 30, 23, 59, 59,
                                                                 999999, tzinfo=dt.UTC))
_DAYS = (dt.date(2026, 3, 1), dt.date(2026, 3, 2), dt.date(1000, 1, 1), dt.date(9999, 12, 31))
_DECIMALS = tuple(Decimal(s) for s in ("0", "-0", "1", "1.50", "1.5", "-7.25", "2", "1E-30",
                                       "12345678901234567890.123456789012345678901234567890"))


@functools.cache
def scalars(kind: str, literals: tuple[str, ...] = ()) -> st.SearchStrategy[Any]:
    """Non-NULL values of a kind, often repeated."""
    if kind == "int":
        return st.one_of(st.integers(-3, 3), st.integers(0, 9), st.integers(-(10**12), 10**12))
    if kind == "float":
        return st.sampled_from((0.0, -0.0, 0.25, -1.5)) | st.integers(-4000, 4000).map(
            lambda n: n / 4)
    if kind == "str":
        return st.sampled_from(STRINGS)
    if kind == "literal":
        return st.sampled_from(literals)
    if kind == "decimal":
        return st.sampled_from(_DECIMALS) | st.builds(
            lambda n, p: Decimal(f"{n}E-{p}"), st.integers(-(10**15), 10**15), st.integers(0, 4))
    if kind == "datetime":
        return st.sampled_from(_INSTANTS) | st.datetimes(
            min_value=dt.datetime(1001, 1, 2), max_value=dt.datetime(9998, 12, 30),
            timezones=st.just(dt.UTC))
    if kind == "date":
        return st.sampled_from(_DAYS) | st.dates(min_value=dt.date(1000, 1, 1),
                                                  max_value=dt.date(9999, 12, 31))
    raise AssertionError(kind)


_STATUSES = ("new", "paid", "refunded")


#: columns whose few values repeat (groups of several rows), equal but for case or a space
_FEW = {"country": ("PT", "pt", "PT ", "ES"), "sku": ("a", "A", " a", "b")}


@functools.cache
def _values(col: Col) -> st.SearchStrategy[Any]:
    literals = _STATUSES if col.attr == "status" else _FEW.get(col.attr, ())
    base = scalars("literal" if col.attr in _FEW else col.kind, literals)
    return st.one_of(st.none(), base, base) if col.nullable else base


#: foreign ids: most match (1..6, often the same), some match nothing (0, 99), some are NULL
_FOREIGN = st.sampled_from((1, 1, 2, 2, 3, 3, 4, 5, 6, None, None, 0, 99))

#: what every table holds in one example, by model
Data: TypeAlias = Mapping[type[Model], Sequence[dict[str, Any]]]


@st.composite
def table_rows(draw: st.DrawFn, model: type[Model], max_rows: int = 8) -> list[dict[str, Any]]:
    """Rows of one model: ids within 1..8 (some left out), foreign ids matching or not."""
    ids = draw(st.lists(st.integers(1, 8), min_size=3, max_size=max_rows, unique=True))
    rows = []
    for i in sorted(ids):
        row: dict[str, Any] = {"id": i}
        for col in columns_of(model)[1:]:
            if col.attr.endswith("_id"):
                row[col.attr] = draw(_FOREIGN)
            else:
                row[col.attr] = draw(_values(col))
        rows.append(row)
    return rows


# -- scopes -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Side:
    """One table of a statement: its model, the prefix of its names, its correlation name."""

    model: type[Model]
    #: "alias." in a join, "" in a plain select
    prefix: str
    #: what sql.col() in a subquery qualifies its columns with: the alias, or the table name
    qualifier: str
    #: left-joined: every column may be NULL
    optional: bool = False
    #: the rows every table holds (values to compare with are often held ones)
    data: Mapping[type[Model], Sequence[dict[str, Any]]] = dataclasses.field(
        default_factory=dict, compare=False)

    def name(self, attr: str) -> str:
        """The column as this statement writes it."""
        return self.prefix + attr


#: how a table joins another: (model joined from, its column, model joined, that model's column)
EDGES = (
    (RelUser, "id", RelOrder, "user_id"),
    (RelUser, "id", RelItem, "user_id"),
    (RelOrder, "id", RelItem, "order_id"),
    (RelOrder, "user_id", RelUser, "id"),
    (RelUser, "manager_id", RelUser, "id"),
    (RelItem, "order_id", RelOrder, "id"),
    (RelItem, "user_id", RelUser, "id"),
)

#: aliases, some of them SQL reserved words
ALIASES = {RelUser: ("user", "u", "manager"), RelOrder: ("order", "o", "select"),
           RelItem: ("item", "group", "i")}


def _family(kind: str) -> str:
    return {"int": "number", "float": "number", "decimal": "number", "literal": "text",
            "str": "text"}.get(kind, kind)


def _pick(draw: st.DrawFn, col: Col, side: Side) -> Any:
    """A non-NULL value to compare a column with: most often one a row holds."""
    held = [r[col.attr] for r in side.data.get(side.model, ()) if r[col.attr] is not None]
    if held and draw(st.integers(0, 2)):
        return draw(st.sampled_from(held))
    if col.attr == "id" or col.attr.endswith("_id"):
        return draw(st.integers(0, 8))
    return draw(scalars(col.kind, _STATUSES if col.attr == "status" else ()))


def _leaf(draw: st.DrawFn, sides: Sequence[Side], depth: int, outer: Sequence[Side]) -> Any:
    side = draw(st.sampled_from(sides))
    cols = columns_of(side.model)
    col = draw(st.sampled_from(cols))
    name = side.name(col.attr)
    nullable = col.nullable or side.optional
    ops = ["value", "ne", "in", "not_in", "is_null", "col"]
    if nullable:
        ops.append("null")
    if col.kind in ORDERED:
        ops += ["lt", "gte", "between"]
    if col.kind in TEXT:
        ops += ["like", "contains", "startswith", "endswith"]
    if depth > 0:
        ops += ["exists", "scalar"]
        if col.kind == "int":
            ops.append("in_subquery")
    op = draw(st.sampled_from(ops))
    if op == "value":
        return {name: _pick(draw, col, side)}
    if op == "null":
        return {name: None}
    if op == "is_null":
        return {name: {"is_null": draw(st.booleans())}}
    if op in ("ne", "lt", "gte"):
        return {name: {op: _pick(draw, col, side)}}
    if op == "between":
        return {name: {"between": sorted([_pick(draw, col, side), _pick(draw, col, side)])}}
    if op in ("in", "not_in"):
        return {name: {op: [_pick(draw, col, side)
                            for _ in range(draw(st.integers(0, 3)))]}}
    if op in ("like", "contains", "startswith", "endswith"):
        text = draw(st.sampled_from((*STRINGS, "new", "pa", "%", "_")))
        if op == "like":
            text = draw(st.sampled_from((text, f"{text}%", f"%{text}", "_%", "%")))
        return {name: {op: text}}
    if op == "col":
        return _column_comparison(draw, sides, side, col) or {name: {"is_null": False}}
    if op == "exists":
        return _exists(draw, sides, depth, outer)
    if op == "in_subquery":
        return {name: {draw(st.sampled_from(("in", "not_in"))): _grouped_ids(draw, side)}}
    return _scalar(draw, sides, side, col) or {name: {"is_null": True}}


def _column_comparison(draw: st.DrawFn, sides: Sequence[Side], side: Side,
                       col: Col) -> dict[str, Any] | None:
    """`{column: {op: sql.col(other)}}` with a column of the same family (maybe another side)."""
    others = [(s, c) for s in sides for c in columns_of(s.model)
              if _family(c.kind) == _family(col.kind) and (s, c) != (side, col)]
    if not others:
        return None
    other_side, other = draw(st.sampled_from(others))
    ops = ["eq", "ne"] + (["lt", "lte", "gt", "gte"] if col.kind in ORDERED else [])
    return {side.name(col.attr): {draw(st.sampled_from(ops)): sql.col(other_side.name(other.attr))}}


#: correlations: an outer model's column, the subquery model's column it must equal
_LINKS = {RelUser: ((RelOrder, "id", "user_id"), (RelItem, "id", "user_id"),
                    (RelUser, "manager_id", "id")),
          RelOrder: ((RelItem, "id", "order_id"), (RelUser, "user_id", "id")),
          RelItem: ((RelOrder, "order_id", "id"), (RelUser, "user_id", "id"))}

_SUB_ALIASES = {RelUser: "su", RelOrder: "so", RelItem: "si"}


def _subquery_base(draw: st.DrawFn, sides: Sequence[Side], depth: int,
                   outer: Sequence[Side]) -> tuple[Any, Side, str, Any]:
    """A select (or join) correlated with one of `sides`: the builder, its first side, the
    name of the correlated column inside it, and the reference to the outer column."""
    side = draw(st.sampled_from(sides))
    model, outer_attr, inner_attr = draw(st.sampled_from(_LINKS[side.model]))
    reference = sql.col(f"{side.qualifier}.{outer_attr}")
    taken = {s.qualifier for s in (*sides, *outer)}
    plain_ok = meta_of(model).table not in taken
    if plain_ok and draw(st.booleans()):
        inner = Side(model, "", meta_of(model).table, data=side.data)
        builder: Any = select(model)
        return builder, inner, inner_attr, reference
    alias = _SUB_ALIASES[model] + str(len(taken))
    inner = Side(model, f"{alias}.", alias, data=side.data)
    builder = join(model, alias)
    if draw(st.booleans()):  # a join inside the subquery
        _, from_attr, other, to_attr = draw(st.sampled_from([e for e in EDGES if e[0] is model]))
        joined = alias + "j"
        on = {f"{alias}.{from_attr}": f"{joined}.{to_attr}"}
        builder = (builder.left_join if draw(st.booleans()) else builder.inner_join)(
            other, joined, on)
    return builder, inner, f"{alias}.{inner_attr}", reference


def _exists(draw: st.DrawFn, sides: Sequence[Side], depth: int, outer: Sequence[Side]) -> Any:
    """sql.exists / sql.not_exists of a correlated select, join or as_subquery()."""
    builder, inner, inner_name, reference = _subquery_base(draw, sides, depth, outer)
    if inner.prefix == "":
        inner_name = inner.name(inner_name)
    builder = builder.where({inner_name: reference})
    if draw(st.booleans()):
        builder = builder.where(draw(conditions([inner], depth - 1, outer=[*outer, *sides])))
    if draw(st.integers(0, 3)) == 0:
        builder = builder.as_subquery(inner.name("id"))
    check = sql.not_exists if draw(st.booleans()) else sql.exists
    return check(builder)


def _scalar(draw: st.DrawFn, sides: Sequence[Side], side: Side, col: Col) -> Any:
    """`{column: {op: sql.scalar(...)}}`: the biggest value of a correlated subquery, found
    by order_by + limit(1) or by sql.max (NULL when no row matches)."""
    if col.kind not in ("int", "float", "datetime", "date"):
        return None
    builder, inner, inner_name, reference = _subquery_base(draw, sides, 1, ())
    if inner.prefix == "":
        inner_name = inner.name(inner_name)
    candidates = [c for c in columns_of(inner.model) if c.kind == col.kind]
    if not candidates:
        return None
    target = inner.name(draw(st.sampled_from(candidates)).attr)
    builder = builder.where({inner_name: reference})
    if draw(st.booleans()):
        sub = (builder.where({target: {"is_null": False}}).order_by(target, "desc")
               .limit(1).as_subquery(target))
    else:
        sub = builder.aggregate([], {"top": sql.max(target)}).as_subquery("top")
    op = draw(st.sampled_from(("eq", "lt", "gte", "ne")))
    return {side.name(col.attr): {op: sql.scalar(sub)}}


def _grouped_ids(draw: st.DrawFn, side: Side) -> Any:
    """An uncorrelated `in` operand: the foreign ids found in at least n rows (an aggregate
    with having), or a column that holds NULLs (NOT IN then matches nothing)."""
    model = draw(st.sampled_from(MODELS))
    ints = [c.attr for c in columns_of(model) if c.kind == "int"]
    attr = draw(st.sampled_from(ints))
    if draw(st.booleans()):
        return select(model).where({attr: {"is_null": False}}).as_subquery(attr)
    grouped = select(model).aggregate([attr], {"n": sql.count()})
    return grouped.having({"n": {"gte": draw(st.integers(1, 3))}}).as_subquery(attr)


@st.composite
def conditions(draw: st.DrawFn, sides: Sequence[Side], depth: int = 2,
               outer: Sequence[Side] = ()) -> Any:
    """A where input over the sides: dicts, and_/or_/not_, exists, column comparisons."""
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        return _leaf(draw, sides, depth, outer)
    combinator = draw(st.sampled_from(("and", "or", "not")))
    if combinator == "not":
        return not_(draw(conditions(sides, depth - 1, outer)))
    items = draw(st.lists(conditions(sides, depth - 1, outer), min_size=1, max_size=3))
    return and_(*items) if combinator == "and" else or_(*items)


# -- statements ---------------------------------------------------------------------------------


@dataclasses.dataclass
class RelCase:
    """One generated relational statement and how its rows compare."""

    kind: str
    statement: Any
    #: the rows come in a defined order (a total order: every side's id, or every group column)
    ordered: bool
    #: aggregate labels whose value is a float or Decimal quotient (avg): compared to 1e-12
    approximate: frozenset[str] = frozenset()
    #: the Python type of each aggregate label (checked on every non-NULL value)
    label_types: dict[str, type] = dataclasses.field(default_factory=dict)
    #: the labels that are never NULL (the counts)
    never_null: frozenset[str] = frozenset()
    #: a join's sides, whose row values are their models (None only when left-joined)
    sides: tuple[Side, ...] = ()


@st.composite
def sources(draw: st.DrawFn, data: Data) -> tuple[Any, list[Side]]:
    """A plain select of one model, or a join of 2-3 tables (inner and left)."""
    first = draw(st.sampled_from(MODELS))
    if draw(st.integers(0, 3)) == 0:
        return select(first), [Side(first, "", meta_of(first).table, data=data)]
    alias = draw(st.sampled_from(ALIASES[first]))
    builder = join(first, alias)
    sides = [Side(first, f"{alias}.", alias, data=data)]
    for _ in range(draw(st.integers(1, 2))):
        options = [(s, e) for s in sides for e in EDGES if e[0] is s.model]
        side, (_, from_attr, model, to_attr) = draw(st.sampled_from(options))
        free = [a for a in ALIASES[model] if a not in {s.qualifier for s in sides}]
        if not free:
            continue
        new_alias = draw(st.sampled_from(free))
        on = {side.name(from_attr): f"{new_alias}.{to_attr}"}
        if model is RelItem and side.model is RelOrder and draw(st.booleans()):
            on[side.name("user_id")] = f"{new_alias}.user_id"  # a two-column `on`
        left = draw(st.booleans())
        builder = (builder.left_join if left else builder.inner_join)(model, new_alias, on)
        sides.append(Side(model, f"{new_alias}.", new_alias, optional=left, data=data))
    return builder, sides


def _orderable(sides: Sequence[Side]) -> list[str]:
    return [s.name(c.attr) for s in sides for c in columns_of(s.model)]


@st.composite
def row_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """Rows of a select or join: filtered, maybe ordered (every id last) and limited."""
    builder, sides = draw(sources(data))
    if draw(st.integers(0, 2)):
        builder = builder.where(draw(conditions(sides)))
    if not draw(st.booleans()):
        return RelCase("rows", builder, ordered=False, sides=_joined(sides))
    for name in draw(st.lists(st.sampled_from(_orderable(sides)), max_size=2, unique=True)):
        builder = builder.order_by(name, draw(st.sampled_from(("asc", "desc"))))
    for side in sides:
        builder = builder.order_by(side.name("id"), draw(st.sampled_from(("asc", "desc"))))
    if draw(st.booleans()):
        builder = builder.limit(draw(st.integers(0, 4)))
    if draw(st.booleans()):
        builder = builder.offset(draw(st.integers(0, 3)))
    return RelCase("rows", builder, ordered=True, sides=_joined(sides))


@st.composite
def distinct_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """select(M, columns).distinct(): each different row once (0.0 and -0.0, two zones'
    writing of one instant are one row; 'a' and 'a ' are two)."""
    model = draw(st.sampled_from(MODELS))
    side = Side(model, "", meta_of(model).table, data=data)
    cols = draw(st.lists(st.sampled_from(columns_of(model)[1:]), min_size=1, max_size=2,
                         unique=True))
    builder = select(model, [c.attr for c in cols]).distinct()
    if draw(st.booleans()):
        builder = builder.where(draw(conditions([side], depth=1)))
    return RelCase("distinct", builder, ordered=False,
                   label_types={c.attr: _PY_TYPES[c.kind] for c in cols},
                   never_null=frozenset(c.attr for c in cols if not c.nullable))


def _joined(sides: Sequence[Side]) -> tuple[Side, ...]:
    return tuple(sides) if sides[0].prefix else ()


_NUMBER_TYPES: dict[str, type] = {"int": int, "float": float, "decimal": Decimal}
_PY_TYPES: dict[str, type] = {**_NUMBER_TYPES, "str": str, "literal": str,
                              "datetime": dt.datetime, "date": dt.date}


def _aggregate(draw: st.DrawFn, sides: Sequence[Side],
               window: bool = False) -> tuple[Any, type, bool]:
    """One aggregate over the sides: the sql.* function, its result type, whether its value
    is a quotient compared approximately (a window takes no count_distinct: no database
    computes one)."""
    func = draw(st.sampled_from(("count", "count_col", *(() if window else ("count_distinct",)),
                                 "sum", "sum", "avg", "avg", "min", "max")))
    if func == "count":
        return sql.count(), int, False
    cols = [(s, c) for s in sides for c in columns_of(s.model)]
    if func in ("sum", "avg"):
        cols = [(s, c) for s, c in cols if c.kind in _NUMBER_TYPES]
    side, col = draw(st.sampled_from(cols))
    name = side.name(col.attr)
    if func == "count_col":
        return sql.count(name), int, False
    if func == "count_distinct":
        return sql.count_distinct(name), int, False
    if func == "sum":
        return sql.sum(name), _NUMBER_TYPES[col.kind], False
    if func == "avg":
        return sql.avg(name), Decimal if col.kind == "decimal" else float, True
    return (sql.min(name) if func == "min" else sql.max(name)), _PY_TYPES[col.kind], False


_GROUPY = frozenset({"user_id", "order_id", "manager_id", "country", "status", "sku"})


@st.composite
def aggregate_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """aggregate(group_by, labels) over a select or join, maybe with having and order_by."""
    builder, sides = draw(sources(data))
    if draw(st.integers(0, 2)) == 0:
        builder = builder.where(draw(conditions(sides, depth=1)))
    # Mostly columns that hold repeated values, so that groups have several rows.
    repeated = [s.name(c.attr) for s in sides for c in columns_of(s.model) if c.attr in _GROUPY]
    group_cols = draw(st.lists(st.sampled_from(repeated) | st.sampled_from(_orderable(sides)),
                               min_size=1 if draw(st.integers(0, 3)) else 0, max_size=2,
                               unique=True))
    fields = [name.rpartition(".")[2] for name in group_cols]
    if len(set(fields)) < len(fields):  # two group columns named by one attribute
        group_cols = group_cols[:1]
        fields = fields[:1]
    labels: dict[str, Any] = {}
    approximate: set[str] = set()
    label_types: dict[str, type] = {}
    never_null: set[str] = set()
    for n in range(draw(st.integers(1, 3))):
        function, result_type, approx = _aggregate(draw, sides)
        labels[f"agg{n}"] = function
        if function.func == "count":
            never_null.add(f"agg{n}")
        label_types[f"agg{n}"] = result_type
        if approx:
            approximate.add(f"agg{n}")
    grouped = builder.aggregate(group_cols, labels)
    exact = [label for label in labels if label not in approximate]
    if exact and draw(st.booleans()):
        label = draw(st.sampled_from(exact))
        if label_types[label] is int:
            having: Any = {label: {draw(st.sampled_from(("gt", "gte", "lt", "ne"))):
                                   draw(st.integers(0, 3))}}
        else:
            having = {label: {"is_null": draw(st.booleans())}}
        if group_cols and draw(st.booleans()):
            having = or_(having, {group_cols[0]: {"is_null": True}})
        grouped = grouped.having(having)
    ordered = bool(draw(st.booleans()))
    if ordered:
        for label in draw(st.lists(st.sampled_from(exact), max_size=1)) if exact else []:
            grouped = grouped.order_by(label, draw(st.sampled_from(("asc", "desc"))))
        for name in group_cols:
            grouped = grouped.order_by(name, draw(st.sampled_from(("asc", "desc"))))
        if draw(st.booleans()):
            grouped = grouped.limit(draw(st.integers(0, 3)))
    return RelCase("aggregate", grouped, ordered=ordered, approximate=frozenset(approximate),
                   label_types=label_types, never_null=frozenset(never_null))


def _computed(draw: st.DrawFn, col: Col) -> tuple[Any, type, bool] | None:
    """A computed value of one column: the sql.* expression, its result type, whether it is a
    quotient compared approximately (None: nothing to compute from this column)."""
    name = col.attr
    if col.kind in _NUMBER_TYPES:
        number = _NUMBER_TYPES[col.kind]
        return draw(st.sampled_from((
            (sql.abs(name), number, False),
            (sql.col(name) * 2 - 1, number, False),
            (sql.col(name) / 4, float, True),
            (sql.round(name, 1), number, False),
            (sql.coalesce(name, sql.value(number(7))), number, False),
        )))
    if col.kind in ("str", "literal"):
        return draw(st.sampled_from((
            (sql.length(name), int, False),
            (sql.coalesce(name, sql.value("-")), str, False),
            (sql.case(({name: {"is_null": True}}, sql.value(0)), else_=sql.length(name)), int,
             False),
        )))
    if col.kind == "datetime":
        unit = draw(st.sampled_from(("year", "month", "day", "hour", "minute")))
        part = draw(st.sampled_from(("year", "month", "day", "hour", "minute", "dow")))
        return draw(st.sampled_from(((sql.date_trunc(unit, name), dt.datetime, False),
                                     (sql.extract(part, name), int, False))))
    if col.kind == "date":
        unit = draw(st.sampled_from(("year", "month", "day")))
        part = draw(st.sampled_from(("year", "month", "day", "dow")))
        return draw(st.sampled_from(((sql.date_trunc(unit, name), dt.date, False),
                                     (sql.extract(part, name), int, False))))
    return None


@st.composite
def computed_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """select(M, ["id"]).add_columns({...}) of functions, arithmetic, CASE and a window."""
    model = draw(st.sampled_from(MODELS))
    side = Side(model, "", meta_of(model).table, data=data)
    labels: dict[str, Any] = {}
    approximate: set[str] = set()
    label_types: dict[str, type] = {"id": int}
    for n, col in enumerate(draw(st.lists(st.sampled_from(columns_of(model)[1:]), min_size=1,
                                          max_size=3))):
        made = _computed(draw, col)
        if made is None:
            continue
        labels[f"c{n}"], label_types[f"c{n}"], approx = made
        if approx:
            approximate.add(f"c{n}")
    if draw(st.booleans()):
        labels["pos"] = sql.row_number().over(order_by=[("id", "desc")])
        label_types["pos"] = int
    if not labels:
        labels["one"] = sql.value(1)
        label_types["one"] = int
    builder = select(model, ["id"]).add_columns(labels)
    if draw(st.booleans()):
        builder = builder.where(draw(conditions([side], depth=1)))
    return RelCase("computed", builder, ordered=False, approximate=frozenset(approximate),
                   label_types=label_types, never_null=frozenset({"id"}))


# -- grouping by expressions, windows -----------------------------------------------------------

#: text columns whose values are all ASCII: lower/upper fold the same on every database there
#: (beyond ASCII only MySQL/MariaDB fold, a documented difference)
_ASCII_TEXT = frozenset({"country", "sku", "status"})


def _group_expression(draw: st.DrawFn, side: Side, col: Col) -> tuple[Any, type] | None:
    """A value of one column to group or partition by, and its result type (None: nothing
    to compute from this column). No quotient: a group key compares exactly."""
    name = side.name(col.attr)
    if col.kind in _NUMBER_TYPES:
        number = _NUMBER_TYPES[col.kind]
        return draw(st.sampled_from((
            (sql.abs(name), number),
            (sql.col(name) * 2 - 1, number),
            (sql.round(name), number),
            (sql.coalesce(name, sql.value(number(0))), number),
            (sql.case(({name: {"gt": number(0)}}, sql.value("plus")), else_=sql.value("other")),
             str),
        )))
    if col.kind in ("str", "literal"):
        options: list[tuple[Any, type]] = [(sql.length(name), int),
                                           (sql.coalesce(name, sql.value("-")), str)]
        if col.attr in _ASCII_TEXT:
            options += [(sql.lower(name), str), (sql.upper(name), str)]
        return draw(st.sampled_from(options))
    if col.kind == "datetime":
        unit = draw(st.sampled_from(("year", "month", "day", "hour", "minute")))
        part = draw(st.sampled_from(("year", "month", "day", "hour", "minute", "dow")))
        return draw(st.sampled_from(((sql.date_trunc(unit, name), dt.datetime),
                                     (sql.extract(part, name), int))))
    if col.kind == "date":
        unit = draw(st.sampled_from(("year", "month", "day")))
        part = draw(st.sampled_from(("year", "month", "day", "dow")))
        return draw(st.sampled_from(((sql.date_trunc(unit, name), dt.date),
                                     (sql.extract(part, name), int))))
    return None


def _binds(expression: Any) -> bool:
    """True when an expression holds a bound value (sql.value, a number in arithmetic, a
    CASE's condition)."""
    if isinstance(expression, int | float | Decimal) or "value(" in repr(expression):
        return True
    return any(_binds(a) for a in getattr(expression, "arguments", ()))


@st.composite
def grouped_expression_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """aggregate() grouped by {label: expression} dicts (and maybe a column) of a select or
    join, with aggregates beside them, maybe having on a group label, ordered totally."""
    builder, sides = draw(sources(data))
    if draw(st.integers(0, 2)) == 0:
        builder = builder.where(draw(conditions(sides, depth=1)))
    candidates = [(s, c) for s in sides for c in columns_of(s.model)]
    group: list[Any] = []
    label_types: dict[str, type] = {}
    group_names: list[str] = []
    binding: set[str] = set()
    for n in range(draw(st.integers(1, 2))):
        side, col = draw(st.sampled_from(candidates))
        made = _group_expression(draw, side, col)
        if made is None:
            continue
        expression, label_types[f"g{n}"] = made
        group.append({f"g{n}": expression})
        group_names.append(f"g{n}")
        if _binds(expression):
            binding.add(f"g{n}")
    if draw(st.booleans()):
        repeated = [s.name(c.attr) for s in sides for c in columns_of(s.model)
                    if c.attr in _GROUPY]
        name = draw(st.sampled_from(repeated))
        group.append(name)
        group_names.append(name)
    if not group:
        side = sides[0]
        group.append({"g9": sql.length(_text_of(side))})
        label_types["g9"] = int
        group_names.append("g9")
    labels: dict[str, Any] = {}
    approximate: set[str] = set()
    never_null: set[str] = set()
    for n in range(draw(st.integers(1, 3))):
        function, result_type, approx = _aggregate(draw, sides)
        labels[f"agg{n}"] = function
        label_types[f"agg{n}"] = result_type
        if function.func == "count":
            never_null.add(f"agg{n}")
        if approx:
            approximate.add(f"agg{n}")
    grouped = builder.aggregate(group, labels)
    # PostgreSQL refuses having() on a group that binds a value (its DialectError).
    computed_groups = [g for g in group_names if g in label_types and g not in binding]
    if computed_groups and draw(st.integers(0, 2)) == 0:
        label = draw(st.sampled_from(computed_groups))
        if label_types[label] is int and draw(st.booleans()):
            having: Any = {label: {draw(st.sampled_from(("gt", "gte", "lt", "ne"))):
                                   draw(st.integers(0, 12))}}
        else:
            having = {label: {"is_null": draw(st.booleans())}}
        grouped = grouped.having(having)
    ordered = bool(draw(st.booleans()))
    if ordered:
        exact = [label for label in labels if label not in approximate]
        for label in draw(st.lists(st.sampled_from(exact), max_size=1)) if exact else []:
            grouped = grouped.order_by(label, draw(st.sampled_from(("asc", "desc"))))
        for name in draw(st.permutations(group_names)):
            grouped = grouped.order_by(name, draw(st.sampled_from(("asc", "desc"))))
        if draw(st.booleans()):
            grouped = grouped.limit(draw(st.integers(0, 3)))
    return RelCase("grouped by expressions", grouped, ordered=ordered,
                   approximate=frozenset(approximate), label_types=label_types,
                   never_null=frozenset(never_null))


def _text_of(side: Side) -> str:
    """A text column of a side (every model has one)."""
    return side.name(next(c.attr for c in columns_of(side.model) if c.kind in TEXT))


def _window_operand(draw: st.DrawFn, sides: Sequence[Side]) -> Any:
    """A column or a function of one (without a bound value) to partition or order a window by."""
    side = draw(st.sampled_from(sides))
    cols = columns_of(side.model)
    repeated = [c for c in cols if c.attr in _GROUPY]  # partitions of several rows
    col = draw(st.sampled_from(repeated if repeated and draw(st.booleans()) else cols))
    name = side.name(col.attr)
    if draw(st.integers(0, 2)):
        return name
    made = _group_expression(draw, side, col)
    if made is None or _binds(made[0]):
        return name
    return made[0]


def _tie_breaker(sides: Sequence[Side]) -> list[Any]:
    """Every side's id: a unique key of the rows (a left-joined side's NULL id included)."""
    return [side.name("id") for side in sides]


def _window(draw: st.DrawFn, sides: Sequence[Side]) -> tuple[Any, type, bool, bool]:
    """One window function: the expression, its result type, whether it is a quotient
    (compared approximately), whether it is never NULL."""
    func = draw(st.sampled_from(("row_number", "rank", "dense_rank", "lag", "lead",
                                 "aggregate", "aggregate", "running")))
    partition = [_window_operand(draw, sides) for _ in range(draw(st.integers(0, 2)))]
    order: list[Any] = []
    for _ in range(draw(st.integers(0, 2))):
        operand = _window_operand(draw, sides)
        order.append((operand, "desc") if draw(st.booleans()) else operand)
    if func in ("row_number", "lag", "lead"):
        # the result depends on the order of the rows: a unique key last makes it total
        order += [(key, draw(st.sampled_from(("asc", "desc")))) for key in _tie_breaker(sides)]
    elif func in ("rank", "dense_rank", "running") and not order:
        order.append(_window_operand(draw, sides))
    if func in ("row_number", "rank", "dense_rank"):
        made = {"row_number": sql.row_number, "rank": sql.rank, "dense_rank": sql.dense_rank}
        return made[func]().over(partition_by=partition, order_by=order), int, False, True
    if func in ("lag", "lead"):
        side = draw(st.sampled_from(sides))
        col = draw(st.sampled_from(columns_of(side.model)))
        n = draw(st.sampled_from((1, 1, 2, 0, 3)))
        call = (sql.lag if func == "lag" else sql.lead)(side.name(col.attr), n=n)
        return call.over(partition_by=partition, order_by=order), _PY_TYPES[col.kind], False, False
    function, result_type, approx = _aggregate(draw, sides, window=True)
    if func == "aggregate" and draw(st.booleans()):
        order = []  # the whole partition
    return (function.over(partition_by=partition, order_by=order), result_type, approx,
            function.func == "count")


@st.composite
def window_queries(draw: st.DrawFn, data: Data) -> RelCase:
    """add_columns() of window functions (ranks, lag/lead, aggregates over partitions, running
    totals) on a select (whole model or some columns) or a join, maybe filtered, maybe named
    with sql.cte() and filtered on a window's label, ordered totally or compared as a
    multiset."""
    builder, sides = draw(sources(data))
    joined = bool(sides[0].prefix)
    labels: dict[str, Any] = {}
    label_types: dict[str, type] = {}
    approximate: set[str] = set()
    never_null: set[str] = set()
    if not joined and draw(st.integers(0, 2)):
        model = sides[0].model
        fetched = ["id", *draw(st.lists(st.sampled_from([c.attr for c in columns_of(model)[1:]]),
                                        max_size=2, unique=True))]
        builder = select(model, fetched)
        # a label named as a column that is not fetched: the windows still read the column
        plain = [c.attr for c in meta_of(model).columns
                 if c.name == c.attr and c.attr not in fetched]
        if plain and draw(st.integers(0, 2)) == 0:
            shadow = draw(st.sampled_from(plain))
            labels[shadow] = sql.col("id") * -1
            label_types[shadow] = int
            never_null.add(shadow)
    for n in range(draw(st.integers(1, 3))):
        labels[f"w{n}"], label_types[f"w{n}"], approx, not_null = _window(draw, sides)
        if approx:
            approximate.add(f"w{n}")
        if not_null:
            never_null.add(f"w{n}")
    builder = builder.add_columns(labels)
    if draw(st.integers(0, 2)) == 0:
        builder = builder.where(draw(conditions(sides, depth=1)))
    exact = [label for label in labels if label not in approximate]
    if not joined and exact and draw(st.integers(0, 3)) == 0:
        # the latest-per-group shape: a window is filtered on through a named select
        builder = select(sql.cte("windowed", builder))
        label = draw(st.sampled_from(exact))
        if label_types[label] is int:
            builder = builder.where({label: {draw(st.sampled_from(("lte", "eq", "gt"))):
                                             draw(st.integers(0, 3))}})
        else:
            builder = builder.where({label: {"is_null": draw(st.booleans())}})
        sides = [Side(sides[0].model, "", "windowed", data=data)]
    ordered = bool(draw(st.booleans()))
    if ordered:
        for label in draw(st.lists(st.sampled_from(exact), max_size=2, unique=True)
                          if exact else st.just([])):
            builder = builder.order_by(label, draw(st.sampled_from(("asc", "desc"))))
        for key in _tie_breaker(sides):
            builder = builder.order_by(key, draw(st.sampled_from(("asc", "desc"))))
        if draw(st.booleans()):
            builder = builder.limit(draw(st.integers(0, 4)))
        if draw(st.booleans()):
            builder = builder.offset(draw(st.integers(0, 3)))
    if not joined:
        label_types = {"id": int, **label_types}
        never_null.add("id")
    return RelCase("windows", builder, ordered=ordered, approximate=frozenset(approximate),
                   label_types=label_types, never_null=frozenset(never_null),
                   sides=_joined(sides))


def relational_queries(data: Data) -> st.SearchStrategy[RelCase]:
    """Any generated relational statement over tables holding `data`."""
    return st.one_of(row_queries(data), row_queries(data), aggregate_queries(data),
                     aggregate_queries(data), distinct_queries(data), computed_queries(data),
                     grouped_expression_queries(data), window_queries(data))
