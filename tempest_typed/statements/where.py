"""The where language: dicts and and_/or_/not_ turned into condition nodes, validated.

Every value met is appended to the statement's value list and replaced by a param node, so
the resulting tree is pure structure (see nodes.py).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeAlias, TypeGuard, TypeVar

from ..errors import ValidationError
from ..expressions import Excluded, Expr, Expression, Now, Raw
from ..model import ColumnMeta, ModelMeta, check_text
from .nodes import COMPARISONS, FALSE, OPERATORS, ORDERED_KINDS, TEXT_KINDS, TRUE, Node

__all__ = ["Condition", "Subquery", "WhereInput", "and_", "not_", "or_"]

M_co = TypeVar("M_co", covariant=True)
T_co = TypeVar("T_co", covariant=True)


class Subquery(Generic[M_co, T_co]):
    """A one-column select, usable only as an `in` / `not_in` operand."""

    __slots__ = ("column", "key", "values")

    def __init__(self, key: Node, values: tuple[object, ...], column: ColumnMeta) -> None:
        self.key = key
        self.values = values
        self.column = column

    def __repr__(self) -> str:
        return f"<Subquery {self.column.model_name}.{self.column.attr}>"


class Condition:
    """A combination of where inputs (`and_`, `or_`, `not_`), checked when a model is known."""

    __slots__ = ("items", "op")

    def __init__(self, op: str, items: tuple[WhereInput, ...]) -> None:
        self.op = op
        self.items = items

    def __repr__(self) -> str:
        return f"{self.op}_({', '.join(repr(i) for i in self.items)})"


WhereInput: TypeAlias = "Mapping[str, Any] | Condition"


def _check_inputs(name: str, items: tuple[object, ...]) -> None:
    for item in items:
        if not isinstance(item, Mapping | Condition):
            raise ValidationError(
                f"{name}() takes where dicts or and_/or_/not_ conditions, got "
                f"{type(item).__name__} {item!r}"
            )


def and_(*conditions: WhereInput) -> Condition:
    """All of the conditions hold."""
    _check_inputs("and_", conditions)
    return Condition("and", conditions)


def or_(*conditions: WhereInput) -> Condition:
    """At least one of the conditions holds."""
    _check_inputs("or_", conditions)
    if not conditions:
        raise ValidationError("or_() needs at least one condition")
    return Condition("or", conditions)


def not_(condition: WhereInput) -> Condition:
    """The condition does not hold."""
    _check_inputs("not_", (condition,))
    return Condition("not", (condition,))


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """isinstance(value, Mapping), answered at once for a dict and for the common scalars."""
    # isinstance() against the Mapping ABC runs Python-level __instancecheck__ code, and
    # building the seed's claim asks it 8 times: answered here first, the build takes 9.6 us
    # instead of 12.5 (timeit, best of 7 x 20,000; bench/bench_statements.py times it with
    # the compile as "claim: build + compile").
    kind = type(value)
    if kind is dict:
        return True
    if kind in _SCALARS:
        return False
    return isinstance(value, Mapping)


_SCALARS = frozenset({str, int, float, bool, type(None), bytes, _dt.datetime, _dt.date})


NOW_NODE: Node = ("now", None)


def _naive(value: object) -> bool:
    return isinstance(value, _dt.datetime) and value.utcoffset() is None


def expression_node(meta: ModelMeta, expr: Expression, values: list[object], where: str,
                    allow_excluded: bool = False) -> Node:
    """The value node of an sql.* expression; its bound values are appended to `values`."""
    if isinstance(expr, Raw):
        return ("raw", expr.text)
    if isinstance(expr, Expr):
        nodes: list[Node] = []
        for value in expr.values:
            if isinstance(value, Expression):
                nodes.append(expression_node(meta, value, values, where, allow_excluded))
            else:
                if _naive(value):
                    raise ValidationError(
                        f"sql.expr in {where}: naive datetime {value!r}; pass an aware one, "
                        "e.g. datetime.now(UTC)"
                    )
                nodes.append(("param", len(values), None))
                values.append(value)
        return ("expr", expr.parts, tuple(nodes))
    if isinstance(expr, Now):
        if expr.plus is None:
            return NOW_NODE
        if isinstance(expr.plus, Expression):
            return ("now", expression_node(meta, expr.plus, values, where, allow_excluded))
        values.append(expr.plus)
        return ("now", ("param", len(values) - 1, None))
    if isinstance(expr, Excluded):
        if not allow_excluded:
            raise ValidationError(
                f"sql.excluded({expr.column!r}) in {where}: it names the row an upsert tried to "
                "insert, so it belongs in on_conflict_do_update(..., set)"
            )
        return ("excluded", meta.column(expr.column, f"sql.excluded() in {where}"))
    raise ValidationError(f"unknown expression {expr!r} in {where}")


def value_node(col: ColumnMeta, meta: ModelMeta, value: object, values: list[object], where: str,
               allow_excluded: bool = False) -> Node:
    """A bound value checked against the column's type, or an expression node."""
    if col.accepts(value):
        values.append(value)
        return ("param", len(values) - 1, col.kind)
    return checked_value_node(col, meta, value, values, where, allow_excluded)


def checked_value_node(col: ColumnMeta, meta: ModelMeta, value: object, values: list[object],
                       where: str, allow_excluded: bool = False) -> Node:
    """value_node() of a value col.accepts() did not settle: an expression, or a value that
    check_value() passes or names as wrong."""
    kind = type(value)
    if kind is Raw:
        return ("raw", value.text)  # type: ignore[attr-defined]
    if kind is Now and value.plus is None and col.kind == "datetime":  # type: ignore[attr-defined]
        return NOW_NODE
    if isinstance(value, Expression):
        if isinstance(value, Now) and col.kind != "datetime":
            raise ValidationError(
                f"{meta.name}.{col.attr} is {col.type_name()}: sql.now() is a timestamp, a value "
                f"of datetime columns only (in {where})"
            )
        if (isinstance(value, Excluded) and allow_excluded
                and (other := meta.column(value.column, f"sql.excluded() in {where}")).kind
                != col.kind and not {other.kind, col.kind} <= TEXT_KINDS):
            raise ValidationError(
                f"{meta.name}.{col.attr} is {col.type_name()}: sql.excluded({value.column!r}) "
                f"is {other.type_name()} (in {where})"
            )
        return expression_node(meta, value, values, where, allow_excluded)
    col.check_value(value, where)
    values.append(value)
    return ("param", len(values) - 1, col.kind)


def _in_node(meta: ModelMeta, col: ColumnMeta, op: str, operand: object, values: list[object],
             where: str) -> Node:
    negated = op == "not_in"
    if isinstance(operand, Subquery):
        sub: Subquery[Any, Any] = operand
        sub_col = sub.column
        if sub_col.kind != col.kind and not ({sub_col.kind, col.kind} <= TEXT_KINDS):
            raise ValidationError(
                f"{meta.name}.{col.attr} `{op}`: the subquery yields {sub_col.model_name}."
                f"{sub_col.attr} of type {sub_col.type_name()}, not {col.type_name()}"
            )
        offset = len(values)
        values.extend(sub.values)
        return ("insub", col, sub.key, offset, negated)
    if hasattr(operand, "as_subquery") and hasattr(operand, "_key"):
        raise ValidationError(
            f"{meta.name}.{col.attr} `{op}` takes a one-column subquery: add "
            f".as_subquery(\"{col.attr}\") (or the column to compare) to the select"
        )
    if isinstance(operand, str | bytes | Mapping) or not isinstance(
        operand, Sequence | set | frozenset
    ):
        raise ValidationError(
            f"{meta.name}.{col.attr} `{op}` takes a list of {col.type_name()} values or "
            f"select(...).as_subquery(column), got {type(operand).__name__} {operand!r}"
        )
    if col.kind == "json":
        raise ValidationError(f"{meta.name}.{col.attr} is a JSON column: `{op}` does not apply")
    items = list(operand)
    if not items:
        return TRUE if negated else FALSE
    if all(map(col.accepts, items)):
        # One node for the run of bound values, where 10 ids made, hashed and compared 10
        # param nodes: the ack of a batch of 10, built and compiled, 83,000 -> 58,000
        # instructions (callgrind); bench/bench_queue.py's batch ack 0.88x -> 1.03x of raw.
        values.extend(items)
        return ("inparams", col, len(values) - len(items), len(items), negated)
    nodes: list[Node] = []
    for item in items:
        if item is None:
            raise ValidationError(
                f"{meta.name}.{col.attr} `{op}`: None never matches in a list; "
                "use {\"is_null\": True} (combined with or_)"
            )
        nodes.append(value_node(col, meta, item, values, f"{where} `{op}`"))
    return ("in", col, tuple(nodes), negated)


def _op_node(meta: ModelMeta, col: ColumnMeta, op: str, operand: object, values: list[object],
             where: str) -> Node:
    if op in COMPARISONS:
        if col.kind == "json":
            raise ValidationError(
                f"{meta.name}.{col.attr} is a JSON column: `{op}` does not apply"
            )
        if op not in ("eq", "ne") and col.kind not in ORDERED_KINDS:
            raise ValidationError(
                f"{meta.name}.{col.attr} is {col.type_name()}: `{op}` applies to numbers, "
                "dates and times only"
            )
        if operand is None:
            if op not in ("eq", "ne"):
                raise ValidationError(f"{meta.name}.{col.attr} `{op}` None: None has no order")
            col.check_value(None, where)
            return ("isnull", col, op == "ne")
        return ("cmp", col, COMPARISONS[op], value_node(col, meta, operand, values, where))
    if op in ("in", "not_in"):
        return _in_node(meta, col, op, operand, values, where)
    if op == "is_null":
        if not isinstance(operand, bool):
            raise ValidationError(
                f"{meta.name}.{col.attr} `is_null` takes True or False, got {operand!r}"
            )
        return ("isnull", col, not operand)
    if op == "between":
        if col.kind not in ORDERED_KINDS:
            raise ValidationError(
                f"{meta.name}.{col.attr} is {col.type_name()}: `between` applies to numbers, "
                "dates and times only"
            )
        if isinstance(operand, str | bytes) or not isinstance(operand, Sequence) or len(operand) != 2:
            raise ValidationError(
                f"{meta.name}.{col.attr} `between` takes a pair [low, high], got {operand!r}"
            )
        low, high = operand
        if low is None or high is None:
            raise ValidationError(f"{meta.name}.{col.attr} `between`: bounds cannot be None")
        return ("between", col, value_node(col, meta, low, values, where),
                value_node(col, meta, high, values, where))
    if op in ("like", "ilike"):
        if col.kind not in TEXT_KINDS:
            raise ValidationError(
                f"{meta.name}.{col.attr} is {col.type_name()}: `{op}` applies to strings only"
            )
        if isinstance(operand, Raw | Expr):
            node = expression_node(meta, operand, values, where)
        elif isinstance(operand, str):
            check_text(f"{meta.name}.{col.attr} `{op}`", operand)
            values.append(operand)
            node = ("param", len(values) - 1, "str")
        else:
            raise ValidationError(
                f"{meta.name}.{col.attr} `{op}` takes a pattern string, got {operand!r}"
            )
        return ("like", col, node, op == "ilike")
    import difflib

    near = difflib.get_close_matches(str(op), OPERATORS, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise ValidationError(
        f"{meta.name}.{col.attr}: unknown operator {op!r} in {where}{hint} "
        f"(operators: {', '.join(OPERATORS)})"
    )


def _mapping_node(meta: ModelMeta, mapping: Mapping[Any, Any], values: list[object],
                  where: str) -> Node:
    if not mapping:
        raise ValidationError(
            f"{meta.name}: an empty where dict in {where} matches every row; say what to match, "
            "or call unguarded() on an update/delete meant for every row"
        )
    parts: list[Node] = []
    for attr, spec in mapping.items():
        col = meta.column(attr, where)
        if type(spec) is not dict and col.accepts(spec):  # a value of the column's type
            values.append(spec)
            parts.append(("cmp", col, "=", ("param", len(values) - 1, col.kind)))
        elif is_mapping(spec):
            if not spec:
                raise ValidationError(
                    f"{meta.name}.{col.attr}: empty operator dict in {where}; "
                    f"write a value or {{op: value}} with op one of {', '.join(OPERATORS)}"
                )
            for op, operand in spec.items():
                parts.append(_op_node(meta, col, op, operand, values, where))
        elif spec is None:
            col.check_value(None, where)
            parts.append(("isnull", col, False))
        else:
            if col.kind == "json":
                raise ValidationError(
                    f"{meta.name}.{col.attr} is a JSON column: it cannot be compared in {where}"
                )
            if isinstance(spec, list | tuple | set | frozenset):
                raise ValidationError(
                    f"{meta.name}.{col.attr}: a list is not a value of {col.type_name()} in "
                    f"{where}; write {{\"in\": [...]}} to match any of them"
                )
            parts.append(("cmp", col, "=", checked_value_node(col, meta, spec, values, where)))
    return parts[0] if len(parts) == 1 else ("and", tuple(parts))


def condition_node(meta: ModelMeta, item: object, values: list[object], where: str) -> Node:
    """The condition node of one where input (dict or Condition)."""
    if is_mapping(item):
        return _mapping_node(meta, item, values, where)
    if isinstance(item, Condition):
        inner = tuple(condition_node(meta, sub, values, where) for sub in item.items)
        if item.op == "not":
            return ("not", inner[0])
        if not inner:
            return TRUE
        return inner[0] if len(inner) == 1 else (item.op, inner)
    raise ValidationError(
        f"{meta.name}: {where} takes a dict such as {{\"status\": \"queued\"}} or "
        f"and_/or_/not_, got {type(item).__name__} {item!r}"
    )


def with_conditions(meta: ModelMeta, existing: Node | None, bound: tuple[object, ...],
                    conditions: tuple[WhereInput, ...]) -> tuple[Node, tuple[object, ...]]:
    """The where node and bound values after ANDing `conditions` to `existing` (where())."""
    if not conditions:
        raise ValidationError(f"{meta.name}: where() needs a condition")
    values = list(bound)
    if existing is None and len(conditions) == 1:
        item = conditions[0]
        if type(item) is dict:
            return _mapping_node(meta, item, values, "where()"), tuple(values)
        return condition_node(meta, item, values, "where()"), tuple(values)
    nodes = [condition_node(meta, c, values, "where()") for c in conditions]
    return conjunction(existing, nodes), tuple(values)


def conjunction(existing: Node | None, added: Sequence[Node]) -> Node:
    """`existing AND added...`, flattening nested ANDs."""
    parts: list[Node] = []
    for node in ((existing,) if existing is not None else ()) + tuple(added):
        if node[0] == "and":
            parts.extend(node[1])  # type: ignore[arg-type]
        else:
            parts.append(node)
    return parts[0] if len(parts) == 1 else ("and", tuple(parts))
