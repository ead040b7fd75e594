"""Computed values: functions, arithmetic, CASE and window functions as `Function` nodes.

An expression is resolved against the statement's scope into a node and the column that
describes its result (kind, nullability, scale), which checks what it is compared with and
says how the engine reads it back. A `str` argument is a column name; `sql.value(x)` and any
other Python value are bound parameters, typed by their Python type. The result has the same
Python type on every database; what a database spells differently is the dialect's.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Sequence
from decimal import Decimal

from .._wording import JSON_NOT_COMPARED, WINDOW_NOT_BY_JSON
from ..errors import ValidationError
from ..expressions import (
    Call,
    CaseValue,
    ColumnReference,
    Excluded,
    Expr,
    Expression,
    Now,
    Over,
    Raw,
    ScalarValue,
    TypedValue,
)
from ..model import ColumnMeta
from ..values import untyped_value
from .nodes import (
    Function,
    Operand,
    OrderItem,
    OuterColumn,
    Param,
    QualifiedColumn,
    Value,
    order_item,
    param,
)
from .scope import Scope, nullable_column

__all__ = ["DATE_PARTS", "DATE_UNITS", "computed", "described", "UNTYPED", "is_computed", "typed", "widest", "window_order"]

#: date_trunc's units, and extract's parts
DATE_UNITS = ("year", "month", "day", "hour", "minute")
DATE_PARTS = (*DATE_UNITS, "dow")
_NUMBERS = frozenset({"int", "float", "decimal"})
_TEXT = frozenset({"str", "literal"})
_TIMES = frozenset({"datetime", "date"})
_ARITHMETIC = frozenset({"+", "-", "*", "/"})
_RANKING = frozenset({"row_number", "rank", "dense_rank"})
_OFFSETS = frozenset({"lag", "lead"})

#: the kind a bound Python value has where no column gives one
_PY_KINDS: dict[type, str] = {
    bool: "bool", int: "int", float: "float", Decimal: "decimal", str: "str",
    _dt.datetime: "datetime", _dt.date: "date", uuid.UUID: "uuid", bytes: "bytes",
}


def described(what: str, kind: str, nullable: bool, like: ColumnMeta | None = None,
              scale: int | None = None) -> ColumnMeta:
    """The column a computed value stands for: its kind and nullability check comparisons,
    its scale reads a Decimal back."""
    return ColumnMeta(
        model_name="expression", attr=what, name=what, kind=kind, nullable=nullable,
        primary_key=False, has_default=False, server_default=None, autoincrement=False,
        unique=False, max_length=None,
        literal_values=like.literal_values if like is not None and kind == "literal" else (),
        references=None, position=0, indexed=False, scale=scale,
    )


def _bound(value: object, values: list[object], where: str) -> tuple[Value, ColumnMeta]:
    if value is None:
        raise ValidationError(
            f"{where}: None has no type of its own here; leave out else_ for a CASE that is "
            "NULL otherwise, or compare with {\"is_null\": True}"
        )
    kind = next((k for t, k in _PY_KINDS.items() if type(value) is t), None)
    if kind is None:
        kind = next((k for t, k in _PY_KINDS.items() if isinstance(value, t)), None)
    if kind is None or (isinstance(value, Sequence | dict) and not isinstance(value, str | bytes)):
        raise ValidationError(
            f"{where}: {type(value).__name__} {value!r} is no value a function takes; pass a "
            "str (a column name), sql.value(...) of a str, number, bool, date, datetime, UUID "
            "or bytes, or an sql.* expression"
        )
    if kind == "datetime" and isinstance(value, _dt.datetime) and value.utcoffset() is None:
        raise ValidationError(
            f"{where}: naive datetime {value!r}; pass an aware one, e.g. datetime.now(UTC)")
    values.append(untyped_value(value, where))
    # wrapped, so that a dialect can give the value its type where nothing else says it (a
    # recursive CTE's column must have one type in both its parts on PostgreSQL)
    node = Function("value", (param(len(values) - 1, kind),), None, kind, kind, False, None,
                    (), ())
    return node, described(repr(value), kind, False)


def computed(scope: Scope, expr: object, values: list[object], where: str,
             windows: bool = False, excluded: bool = False) -> tuple[Value, ColumnMeta]:
    """The node of a function argument or a computed column, and the column describing it
    (`excluded`: sql.excluded() may stand in it, as in an upsert's set)."""
    if isinstance(expr, str):
        return scope.lookup(expr, where)
    if isinstance(expr, ColumnReference):
        found = scope.names.get(expr.name)
        if found is None:
            from .where import column_reference

            node = column_reference(scope, expr.name, where, None)
            if isinstance(node, OuterColumn):
                raise ValidationError(
                    f"sql.col({expr.name!r}) in {where}: a function reads columns of this "
                    "statement; compare an enclosing statement's column in where() instead"
                )
            if isinstance(node, QualifiedColumn):  # `table.column` of a plain statement
                return node, node.column
            raise ValidationError(scope.unknown(expr.name, where))  # pragma: no cover
        return found
    if isinstance(expr, TypedValue):
        return _bound(expr.value, values, f"sql.value() in {where}")
    if isinstance(expr, Call):
        return _call(scope, expr, values, where, windows, excluded)
    if isinstance(expr, CaseValue):
        return _case(scope, expr, values, where, windows, excluded)
    if isinstance(expr, Excluded):
        from .where import excluded_value

        return excluded_value(scope, expr, where, excluded)
    if isinstance(expr, Over):
        if not windows:
            raise ValidationError(
                f"{expr!r} in {where}: a window function is computed after the rows are "
                "chosen, so it stands in add_columns() only; to filter on it, name the select "
                "with sql.cte() and select from that"
            )
        return _over(scope, expr, values, where)
    if isinstance(expr, ScalarValue):
        from .where import _scalar_node

        node = _scalar_node(scope, None, expr, values, where)
        sub = expr.subquery
        return node, nullable_column(sub.column)  # type: ignore[attr-defined]  # _scalar_node() checked it is a Subquery
    from .aggregate import AggregateFunction

    if isinstance(expr, AggregateFunction):
        raise ValidationError(
            f"{expr!r} in {where}: an aggregate beside each row is a window function, "
            f"{expr!r}.over(partition_by=[...]); aggregate() computes one per group"
        )
    if isinstance(expr, Now):
        from .where import expression_node

        return (_as_value(expression_node(scope, expr, values, where), "datetime", False),
                described(repr(expr), "datetime", False))
    if isinstance(expr, Raw | Expr):
        from .where import expression_node

        # SQL text says no type: it takes the type of the values beside it (_adopted())
        return expression_node(scope, expr, values, where), described(repr(expr), UNTYPED, True)
    if isinstance(expr, Expression):
        raise ValidationError(
            f"{expr!r} in {where}: a function takes columns, values and sql.* functions; "
            "this one stands where a column's value goes"
        )
    return _bound(expr, values, where)


#: the kind of sql.raw/sql.expr text inside a computed value, until the values beside it
#: give it theirs
UNTYPED = "untyped"


def _as_value(node: Value, kind: str, nullable: bool) -> Function:
    """A value the database computes (sql.now(), SQL text) as a computed value of `kind`."""
    return Function("value", (node,), None, kind, kind, nullable, None, (), ())


def typed(node: Value, col: ColumnMeta, expr: object, where: str) -> tuple[Value, ColumnMeta]:
    """A computed value that is a select's column: SQL text with no values beside it to give
    it a type is refused (its value could not be read back as one)."""
    if col.kind == UNTYPED:
        raise ValidationError(
            f"{expr!r} in {where}: SQL text has no type to read its value back as; write it "
            "beside a typed value (sql.coalesce(\"column\", sql.expr(...)), "
            "sql.col(\"n\") + sql.raw(\"1\")), or compute it in where() and set()"
        )
    return node, col


def _adopted(cols: list[ColumnMeta], shown: str, where: str,
             kind: str | None = None) -> list[ColumnMeta]:
    """The argument columns with SQL text's (UNTYPED) taking `kind` or the first typed
    argument's type; refused when nothing gives one."""
    if all(c.kind != UNTYPED for c in cols):
        return cols
    like = next((c for c in cols if c.kind != UNTYPED), None)
    if kind is None and like is None:
        raise ValidationError(
            f"{shown} in {where}: SQL text (sql.raw/sql.expr) has no type of its own, and no "
            "other argument gives one; pass a column or a value beside it"
        )
    kind = kind if kind is not None else like.kind  # type: ignore[union-attr]  # like is set when kind is None
    scale = like.scale if like is not None else None
    return [described(c.attr, kind, True, like, scale) if c.kind == UNTYPED else c for c in cols]


def _call(scope: Scope, expr: Call, values: list[object], where: str,
          windows: bool, excluded: bool) -> tuple[Value, ColumnMeta]:
    name = expr.name
    shown = repr(expr)
    if name in _RANKING or name in _OFFSETS:
        raise ValidationError(
            f"{shown} in {where} is a window function: add .over(partition_by=[...], "
            "order_by=[...]) to say over which rows"
        )
    args = [computed(scope, a, values, f"{shown} in {where}", windows, excluded)
            for a in expr.arguments]
    nodes = tuple(node for node, _ in args)
    cols = [col for _, col in args]
    if name in _ARITHMETIC or name == "coalesce":
        cols = _adopted(cols, shown, where)
    elif name in ("lower", "upper", "length"):
        cols = _adopted(cols, shown, where, "str")
    else:
        cols = _adopted(cols, shown, where, None)
    first = cols[0]

    def made(kind: str, nullable: bool, scale: int | None = None,
             like: ColumnMeta | None = None) -> tuple[Value, ColumnMeta]:
        node = Function(name, nodes, expr.option, first.kind, kind, nullable, scale, (), ())
        return node, described(shown, kind, nullable, like, scale)

    def need(kinds: frozenset[str], what: str) -> None:
        for col in cols:
            if col.kind not in kinds:
                raise ValidationError(
                    f"{shown} in {where}: {_name(col)} is {col.type_name()}; {name} takes {what}"
                )

    if name in _ARITHMETIC:
        need(_NUMBERS, "numbers (int, float, Decimal)")
        kinds = {c.kind for c in cols}
        nullable = any(c.nullable for c in cols)
        if name == "/":
            return made("float", True)  # true division; NULL where the divisor is 0
        if "float" in kinds:
            return made("float", nullable)
        if "decimal" in kinds:
            return made("decimal", nullable)
        return made("int", nullable)
    if name == "coalesce":
        from .where import moves_to

        for col in cols[1:]:
            if not moves_to(first, col):
                raise ValidationError(
                    f"{shown} in {where}: {_name(first)} is {first.type_name()} but "
                    f"{_name(col)} is {col.type_name()}; coalesce takes values of one family"
                )
        kind, scale = widest(cols)
        # the widest scale, not the first argument's: coalesce(2 places, 3 places) read at 2
        # rounded every value the second gave
        if kind != first.kind:
            return made(kind, all(c.nullable for c in cols), scale)
        return made(kind, all(c.nullable for c in cols), scale, first)
    if name in ("lower", "upper"):
        need(_TEXT, "text")
        return made("str", first.nullable)
    if name == "length":
        need(_TEXT, "text")
        return made("int", first.nullable)
    if name == "abs":
        need(_NUMBERS, "numbers")
        return made(first.kind, first.nullable, first.scale)
    if name == "round":
        need(_NUMBERS, "numbers")
        digits = int(expr.option or 0)
        return made(first.kind, first.nullable, digits if first.kind == "decimal" else None)
    if name in ("date_trunc", "extract"):
        need(_TIMES, "a datetime or date column")
        if first.kind == "date" and expr.option in ("hour", "minute"):
            raise ValidationError(
                f"{shown} in {where}: {_name(first)} is a date, which has no {expr.option}")
        if name == "extract":
            return made("int", first.nullable)
        return made(first.kind, first.nullable)
    raise ValidationError(f"unknown function {shown} in {where}")  # pragma: no cover


def _name(col: ColumnMeta) -> str:
    return col.attr if col.model_name == "expression" else f"{col.model_name}.{col.attr}"


def _case(scope: Scope, expr: CaseValue, values: list[object], where: str,
          windows: bool, excluded: bool) -> tuple[Value, ColumnMeta]:
    from .where import condition_node, moves_to

    shown = f"sql.case() in {where}"
    conditions = []
    results: list[tuple[Value, ColumnMeta]] = []
    for when in expr.whens:
        if not isinstance(when, tuple) or len(when) != 2:
            raise ValidationError(
                f"{shown}: each branch is a (condition, value) pair, got {when!r}")
        condition, value = when
        conditions.append(condition_node(scope, condition, values, shown))
        results.append(computed(scope, value, values, shown, windows, excluded))
    if not results:
        raise ValidationError(f"{shown} needs at least one (condition, value) branch")
    if expr.otherwise is not None:
        results.append(computed(scope, expr.otherwise, values, shown, windows, excluded))
    results = list(zip([n for n, _ in results],
                       _adopted([c for _, c in results], "sql.case()", where), strict=True))
    first = results[0][1]
    for _, col in results[1:]:
        if not moves_to(first, col):
            raise ValidationError(
                f"{shown}: the branches are {first.type_name()} and {col.type_name()}; a CASE "
                "yields values of one family"
            )
    kind, scale = widest([col for _, col in results])
    if kind == "literal":
        kind = "str"  # a Literal column beside other text is text
    nullable = expr.otherwise is None or any(col.nullable for _, col in results)
    node = Function("case", tuple(n for n, _ in results), "else" if expr.otherwise is not None
                    else None, None, kind, nullable, scale, tuple(conditions), ())
    return node, described("case", kind, nullable, None, scale)


def widest(cols: Sequence[ColumnMeta]) -> tuple[str, int | None]:
    """The kind (and a Decimal's scale) that holds every value of columns of one family, as
    arithmetic widens: an int beside a float is a float, beside a Decimal a Decimal (of the
    most places of any: None, as it comes, beside an unsized one); a Literal column beside
    other text is text."""
    first = cols[0]
    kinds = {c.kind for c in cols}
    if "float" in kinds and kinds <= _NUMBERS:
        return "float", None
    if "decimal" in kinds and kinds <= _NUMBERS:
        # the most places of any (two Decimals of 2 and 4 places read at 2 rounded the other)
        scales = [c.scale for c in cols if c.kind == "decimal"]
        return "decimal", None if None in scales else max(s for s in scales if s is not None)
    if len(kinds) == 1:
        return first.kind, first.scale
    if first.kind == "literal":
        return "str", None
    return first.kind, first.scale


def window_order(scope: Scope, items: object, where: str) -> tuple[OrderItem, ...]:
    """`order_by=[col or (col, "desc"), ...]` of a window as ORDER BY items."""
    if isinstance(items, str) or not isinstance(items, list | tuple):
        raise ValidationError(
            f"{where}: order_by takes a list of columns or (column, 'desc') pairs, got {items!r}")
    out: list[OrderItem] = []
    for item in items:
        name, direction = (item if isinstance(item, tuple) and len(item) == 2
                           else (item, "asc"))
        if direction not in ("asc", "desc"):
            raise ValidationError(f"{where}: direction is 'asc' or 'desc', got {direction!r}")
        operand, col = _operand(scope, name, where)
        out.append(order_item(operand, direction == "desc", col.nullable))
    return tuple(out)


def _operand(scope: Scope, item: object, where: str) -> tuple[Operand, ColumnMeta]:
    node, col = computed(scope, item, [], where)
    if col.kind == "json":  # partitioning compares, ordering too: JSON is not compared
        raise ValidationError(
            f"{where}: {col.model_name}.{col.attr} {JSON_NOT_COMPARED}; {WINDOW_NOT_BY_JSON}")
    if isinstance(node, ColumnMeta | QualifiedColumn):
        return node, col
    if type(node) is Function and not _binds(node):
        return node, col
    raise ValidationError(
        f"{where}: a window partitions and orders by columns and functions of columns, got "
        f"{item!r}"
    )


def _binds(node: object) -> bool:
    """True when a node holds a bound value (a window's lists take none)."""
    if type(node) is Param:
        return True
    return isinstance(node, tuple) and any(_binds(child) for child in node)


def _over(scope: Scope, expr: Over, values: list[object],
          where: str) -> tuple[Value, ColumnMeta]:
    from .aggregate import AggregateFunction, aggregate_node

    shown = f"{expr!r} in {where}"
    partition_by = expr.partition_by
    if isinstance(partition_by, str) or not isinstance(partition_by, list | tuple):
        raise ValidationError(
            f"{shown}: partition_by takes a list of columns, got {partition_by!r}")
    partition = tuple(_operand(scope, item, shown)[0] for item in partition_by)
    order = window_order(scope, expr.order_by, shown)
    function = expr.function
    inner: Value
    if isinstance(function, AggregateFunction):
        inner, col = aggregate_node(scope, function, shown)
        kind, nullable, scale = col.kind, col.nullable, col.scale
    elif isinstance(function, Call) and function.name in _RANKING:
        if not order:
            raise ValidationError(
                f"{shown}: {function.name} numbers rows in an order: pass order_by=[...]")
        kind, nullable, scale = "int", False, None
        inner = Function(function.name, (), None, None, kind, False, None, (), ())
    elif isinstance(function, Call) and function.name in _OFFSETS:
        if not order:
            raise ValidationError(
                f"{shown}: {function.name} reads another row in an order: pass order_by=[...]")
        node, col = typed(*computed(scope, function.arguments[0], values, shown),
                          function.arguments[0], shown)
        kind, nullable, scale = col.kind, True, col.scale
        args: tuple[Value, ...] = (node,)
        if function.option is not None and function.option != "1":
            values.append(int(function.option))
            args = (node, param(len(values) - 1, "int"))
        inner = Function(function.name, args, None, col.kind, kind, True, scale, (), ())
    else:
        raise ValidationError(
            f"{shown}: over() applies to sql.row_number(), rank(), dense_rank(), lag(), lead() "
            "and the aggregates")
    node = Function("over", (inner, *partition), None, None, kind, nullable, scale, (), order)
    return node, described(repr(expr), kind, nullable, None, scale)


def is_computed(value: object) -> bool:
    """True for the expressions this module resolves (not sql.col, sql.raw, sql.expr...)."""
    return isinstance(value, Call | CaseValue | TypedValue | Over)

