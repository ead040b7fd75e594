"""Aggregates and grouping: `aggregate(group_by, {label: sql.count() ...})` and `having`.

An aggregate's result has the same Python type on every database: `count` is an int; `sum`
an int, float or Decimal as its column is; `avg` a float for int and float columns, a Decimal
for Decimal ones; `min`/`max` the column's type. All but `count` can be None (no row, or only
NULLs). The kind recorded on each `Aggregate` node tells the engine how to read it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from typing_extensions import TypeVar as DefaultTypeVar

from .._wording import NOT_A_GROUP_COLUMN
from ..errors import ValidationError
from ..expressions import Over
from ..model import ColumnMeta
from ..row import PLAIN_NAME, plain_name_problem
from .compute import computed
from .nodes import Aggregate, Function, Labeled, Operand, QualifiedColumn
from .query import Context, Query, replaced
from .scope import Scope
from .where import CORRELATIONS, WhereInput, references_in, with_conditions

if TYPE_CHECKING:
    from ..row import Row

__all__ = ["AggregateFunction", "Grouped"]

T_co = TypeVar("T_co", covariant=True)
R_co = TypeVar("R_co", covariant=True)
#: Typing only, filled in by the mypy plugin: the rows of the statement that was grouped (the
#: model of a select, `Row[TypedDict({alias: model})]` of a join), and the group columns as
#: written (`TypedDict({'user.id': int})`), which where(), having() and order_by() check.
S_co = DefaultTypeVar("S_co", covariant=True, default=Any)
G_co = DefaultTypeVar("G_co", covariant=True, default=Any)

AggregateName = Literal["count", "sum", "avg", "min", "max"]

_NUMBERS = frozenset({"int", "float", "decimal"})
_ORDERED = frozenset({"int", "float", "decimal", "datetime", "date", "str", "literal"})


class AggregateFunction(Generic[T_co]):
    """sql.count() / sql.sum("col") ...: an aggregate to compute per group."""

    __slots__ = ("column", "distinct", "func")

    def __init__(self, func: AggregateName, column: str | None, distinct: bool = False) -> None:
        if column is not None and not isinstance(column, str):
            name = "count_distinct" if distinct else func
            raise ValidationError(f"sql.{name}() takes a column name, got {column!r}")
        self.func: AggregateName = func
        self.column = column
        self.distinct = distinct

    @property
    def name(self) -> str:
        """The sql.* function that made this aggregate (count_distinct, count, sum...)."""
        return "count_distinct" if self.distinct else self.func

    def over(self, *, partition_by: object = (), order_by: object = ()) -> Over:
        """This aggregate over a window of rows beside each row (with order_by, a running
        total: the rows up to this one)."""
        if self.distinct:
            raise ValidationError(
                f"{self!r}.over(...): no database computes a DISTINCT aggregate over a window "
                "(PostgreSQL, MySQL/MariaDB and SQLite all refuse it); count the distinct "
                "values per group with aggregate([...], {\"n\": sql.count_distinct(...)}), "
                "name that select with sql.cte() and join it on the group columns"
            )
        return Over(self, partition_by, order_by)

    def __repr__(self) -> str:
        return f"sql.{self.name}({'' if self.column is None else repr(self.column)})"


def _result(func: AggregateName, col: ColumnMeta | None, label: str) -> tuple[str, bool]:
    """The kind of an aggregate's result and whether it can be NULL."""
    if func == "count":
        return "int", False
    assert col is not None  # only count() goes without a column (see sql.py)
    what = f"sql.{func}({col.attr!r}) for {label!r}: {col.model_name}.{col.attr} is {col.type_name()}"
    if func in ("sum", "avg"):
        if col.kind not in _NUMBERS:
            raise ValidationError(f"{what}; {func} takes numbers only (int, float, Decimal)")
        if func == "avg" and col.kind != "decimal":
            return "float", True
        return col.kind, True
    if col.kind not in _ORDERED:
        raise ValidationError(f"{what}; {func} takes numbers, dates, times and strings")
    return col.kind, True


def aggregate_node(scope: Scope, spec: AggregateFunction[Any],
                   key: str) -> tuple[Aggregate, ColumnMeta]:
    """The node of an aggregate under `key` and the column its label stands for."""
    label = scope.label
    argument: ColumnMeta | QualifiedColumn | None = None
    of: ColumnMeta | None = None
    if spec.column is not None:
        found, of = scope.lookup(spec.column, f"sql.{spec.name}() for {key!r}")
        if not isinstance(found, ColumnMeta | QualifiedColumn):
            raise ValidationError(f"{label}: sql.{spec.name}() takes a column of the rows")
        argument = found
        if of.kind == "json":
            raise ValidationError(
                f"{label}: sql.{spec.name}({spec.column!r}) for {key!r}: a JSON column "
                "cannot be aggregated"
            )
    kind, nullable = _result(spec.func, of, key)
    # SUM, MIN and MAX of a Decimal column keep its places; AVG has as many as it needs.
    scale = of.scale if of is not None and kind == "decimal" and spec.func != "avg" else None
    aggregate = Aggregate(spec.func, argument, spec.distinct, kind, nullable, scale)
    return aggregate, label_column(key, kind, nullable, of)


def label_column(label: str, kind: str, nullable: bool, like: ColumnMeta | None,
                 scale: int | None = None) -> ColumnMeta:
    """The column an aggregate's label stands for in having() and order_by(): its checks."""
    return ColumnMeta(
        model_name="aggregate", attr=label, name=label, kind=kind, nullable=nullable,
        primary_key=False, has_default=False, server_default=None, autoincrement=False,
        unique=False, max_length=None,
        literal_values=like.literal_values if like is not None and kind == "literal" else (),
        references=None, position=0, indexed=False, scale=scale,
    )


def _check_label(label: str, key: object, fields: Mapping[str, str], call: str) -> None:
    """Refuse a label that is no plain identifier or that names another field of the row."""
    problem = plain_name_problem(key)
    if problem is not None:
        raise ValidationError(
            f"{label}: {call} label {key!r} {problem}; a label becomes a row field "
            f"(row.label): write {PLAIN_NAME}"
        )
    assert isinstance(key, str)  # plain_name_problem() found it is one
    if key in fields:
        raise ValidationError(
            f"{label}: the label {key!r} is also the field of the group column "
            f"{fields[key]!r}; choose another label"
        )


class Grouped(Query[R_co], Generic[R_co, S_co, G_co]):
    """An aggregated select: rows are the group columns, then the labels."""

    __slots__ = ()

    def having(self, *conditions: WhereInput) -> Grouped[R_co, S_co, G_co]:
        """Keep the groups matching every condition (labels and group columns); repeated
        calls AND together."""
        scope = self._ctx.group_scope
        assert scope is not None  # a Grouped is made by grouped(), which sets it
        made = CORRELATIONS[0]
        having, values = with_conditions(scope, self._ctx.having, self._values, conditions,
                                         "having()")
        if CORRELATIONS[0] != made:
            self._check_group_references(having)
        new = self._with("having", having, values)
        if CORRELATIONS[0] != made:
            new._ctx = new._ctx.marked_correlated()
        return new

    def _check_group_references(self, having: tuple[object, ...]) -> None:
        """Refuse a reference by qualifier (sql.col("table.column"), here or in a subquery)
        to a column of this statement's own rows that is not a group column: a group has no
        one value of it (PostgreSQL refuses the statement when it runs; MySQL and SQLite
        read some row's value)."""
        c = self._ctx
        node = self._key()
        sources = {(j.source.alias or j.source.meta.table): j.source
                   for j in reversed(node.joins)}
        sources[c.source.alias or c.source.meta.table] = c.source
        grouped = set(node.group_by or ())
        for ref in references_in(having):
            source = sources.get(ref.qualifier)
            if source is None:
                continue  # an enclosing statement's column: one value per row of it
            col = source.meta.column(ref.attr, f"sql.col({ref.qualifier + '.' + ref.attr!r})")
            if (col if source.alias is None else QualifiedColumn(source.alias, col)) in grouped:
                continue
            raise ValidationError(
                f"{c.scope.label}: having() reads sql.col({ref.qualifier + '.' + ref.attr!r}), "
                f"{NOT_A_GROUP_COLUMN}, or add {ref.attr!r} to the group list")


def grouped(query: Query[Any], group_by: Sequence[str | Mapping[str, Any]],
            aggregates: Mapping[str, AggregateFunction[Any]]) -> Grouped[Row]:
    """`query` grouped by `group_by`, with the labeled aggregates."""
    scope = query._ctx.scope
    label = scope.label
    node = query._key()
    if query._ctx.group_scope is not None:
        if query._ctx.group_scope.grouped:
            raise ValidationError(f"{label}: aggregate() is called once per statement")
        raise ValidationError(
            f"{label}: add_columns() and aggregate() do not combine; group by a computed "
            "value with a dict in aggregate()'s group list: [{\"month\": sql.date_trunc(...)}]"
        )
    if isinstance(group_by, str) or not isinstance(group_by, list | tuple):
        raise ValidationError(
            f"{label}: aggregate() takes a list of group columns first, got {group_by!r}"
            + (f"; write [{group_by!r}]" if isinstance(group_by, str) else "")
        )
    if not isinstance(aggregates, Mapping) or not aggregates:
        raise ValidationError(
            f"{label}: aggregate() takes a dict of label -> sql.count()/sql.sum(...)..., got "
            f"{aggregates!r}"
        )
    names: dict[str, tuple[Operand, ColumnMeta]] = {}
    fields: dict[str, str] = {}
    operands: list[Operand] = []
    groups: list[Operand | Labeled] = []
    items: list[Operand | Labeled] = []
    labels: dict[str, tuple[Labeled, ColumnMeta]] = {}
    values = list(query._values)
    for entry in group_by:
        if isinstance(entry, Mapping):
            for key, expression in entry.items():
                _check_label(label, key, fields, "aggregate() group")
                value, col = computed(scope, expression, values, f"aggregate() group {key!r}")
                if not isinstance(value, ColumnMeta | QualifiedColumn | Function):
                    raise ValidationError(
                        f"{label}: aggregate() group {key!r} takes a column or an sql.* function "
                        f"of columns, got {expression!r}"
                    )
                fields[key] = key
                described = label_column(key, col.kind, col.nullable, col, col.scale)
                names[key] = (value, described)
                item = Labeled(key, value)
                labels[key] = (item, described)
                operands.append(value)
                groups.append(item)
                items.append(item)
            continue
        name = entry
        operand, col = scope.lookup(name, "aggregate() group_by")
        if col.attr in fields:
            raise ValidationError(
                f"{label}: aggregate() groups by {fields[col.attr]!r} and {name!r}, which both "
                f"name a row field {col.attr!r}; a row names a group column by its attribute"
            )
        if col.kind == "json":
            raise ValidationError(f"{label}: {name!r} is a JSON column and cannot be grouped by")
        fields[col.attr] = name
        names[name] = (operand, col)
        operands.append(operand)
        groups.append(operand)
        items.append(operand)
    for key, spec in aggregates.items():
        _check_label(label, key, fields, "aggregate()")
        if not isinstance(spec, AggregateFunction):
            raise ValidationError(
                f"{label}: aggregate() label {key!r} takes sql.count(), sql.count_distinct(), "
                f"sql.sum(), sql.avg(), sql.min() or sql.max(), got {spec!r}"
            )
        aggregate, of = aggregate_node(scope, spec, key)
        names[key] = (aggregate, of)
        items.append(Labeled(key, aggregate))
    group_scope = Scope(label, None, names, {}, (), grouped=True, labels=labels)
    for ordered in node.order:
        if ordered.operand not in operands:
            raise ValidationError(
                f"{label}: order_by() before aggregate() names a column that is not a group "
                "column; after aggregate(), order by group columns and labels"
            )
    new: Grouped[Row] = object.__new__(Grouped)
    new._meta = query._meta
    new._values = tuple(values)
    node = replaced(replaced(node, "items", tuple(items)), "group_by", tuple(groups))
    new._set_node(node, Context(node, scope, group_scope, query._ctx.correlated))
    return new
