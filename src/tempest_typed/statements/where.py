"""The where language: dicts and and_/or_/not_/exists turned into condition nodes, validated.

Every value met is appended to the statement's value list and replaced by a `Param`, so the
resulting tree is pure structure (see nodes.py). Names are resolved by the statement's scope
(scope.py): bare attributes on one table, `alias.column` in a join.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeGuard, TypeVar

from .._wording import EMPTY_WHERE, FRACTION_FOR_AN_INT, NO_COLUMNS_IN_VALUES, NOW_IS_A_TIMESTAMP
from ..errors import ValidationError
from ..expressions import (
    Backoff,
    ColumnReference,
    Excluded,
    Expr,
    Expression,
    Now,
    Raw,
    ScalarValue,
    TypedValue,
)
from ..model import ColumnMeta, ModelMeta, check_text
from ..values import KEPT, frozen
from .nodes import (
    COMPARISONS,
    FALSE,
    OPERATORS,
    ORDERED_KINDS,
    TEXT_KINDS,
    TRUE,
    And,
    BackoffDelay,
    Between,
    Compare,
    CurrentTime,
    ExcludedValue,
    Exists,
    Function,
    InList,
    InParams,
    InSubquery,
    IsNull,
    Like,
    Not,
    Operand,
    Or,
    OuterColumn,
    QualifiedColumn,
    ScalarSubquery,
    SelectQuery,
    SQLExpr,
    Value,
    columns_read,
    equals,
    find_equals,
    find_raw,
    new_node,
    param,
    raw_sql,
)
from .nodes import (
    Condition as ConditionNode,
)
from .scope import Scope, find_table_scope, table_scope

__all__ = ["Condition", "ExistsCondition", "Subquery", "WhereInput", "and_", "not_", "or_"]

M_co = TypeVar("M_co", covariant=True)
T_co = TypeVar("T_co", covariant=True)


class Subquery(Generic[M_co, T_co]):
    """A one-column select: an `in` / `not_in` operand, or a value through sql.scalar()."""

    __slots__ = ("column", "correlated", "key", "values")

    def __init__(self, key: SelectQuery, values: tuple[object, ...], column: ColumnMeta,
                 correlated: bool = True) -> None:
        self.key = key
        self.values = values
        self.column = column
        #: it may name an enclosing statement's columns (see CORRELATIONS)
        self.correlated = correlated

    def __repr__(self) -> str:
        return f"<Subquery {self.column.model_name}.{self.column.attr}>"


class Condition:
    """A combination of where inputs (`and_`, `or_`, `not_`), checked when a scope is known."""

    __slots__ = ("items", "op")

    def __init__(self, op: str, items: tuple[WhereInput, ...]) -> None:
        self.op = op
        self.items = items

    def __repr__(self) -> str:
        return f"{self.op}_({', '.join(repr(i) for i in self.items)})"


class ExistsCondition:
    """sql.exists(query) / sql.not_exists(query): a condition on whether a subquery has rows."""

    __slots__ = ("correlated", "key", "negated", "values")

    def __init__(self, key: SelectQuery, values: tuple[object, ...], negated: bool,
                 correlated: bool = True) -> None:
        self.key = key
        self.values = values
        self.negated = negated
        self.correlated = correlated

    def __repr__(self) -> str:
        return f"sql.{'not_' if self.negated else ''}exists(...)"


WhereInput: TypeAlias = "Mapping[str, Any] | Condition | ExistsCondition"


def _check_inputs(name: str, items: tuple[object, ...]) -> None:
    for item in items:
        if not isinstance(item, Mapping | Condition | ExistsCondition):
            raise ValidationError(
                f"{name}() takes where dicts, and_/or_/not_ or sql.exists() conditions, got "
                f"{type(item).__name__} {item!r}"
            )


if TYPE_CHECKING:  # a type checker reports and_() or or_() of no condition
    def and_(condition: WhereInput, /, *conditions: WhereInput) -> Condition:
        """All of the conditions hold."""

    def or_(condition: WhereInput, /, *conditions: WhereInput) -> Condition:
        """At least one of the conditions holds."""
else:
    def and_(*conditions: WhereInput) -> Condition:
        """All of the conditions hold."""
        _check_inputs("and_", conditions)
        if not conditions:
            # all of none holds for every row: it would pass for a where() that an update or
            # delete must have, as an empty where dict would
            raise ValidationError(
                "and_() needs at least one condition: an empty and_() matches every row; say "
                "what to match, or call unguarded() on an update/delete meant for every row")
        return Condition("and", conditions)

    def or_(*conditions: WhereInput) -> Condition:
        """At least one of the conditions holds."""
        _check_inputs("or_", conditions)
        if not conditions:
            raise ValidationError("or_() needs at least one condition")
        return Condition("or", conditions)


if TYPE_CHECKING:  # a type checker reports a call with another number of conditions
    def not_(condition: WhereInput) -> Condition:
        """The condition does not hold."""
else:
    def not_(*conditions: WhereInput) -> Condition:
        """The condition does not hold."""
        if len(conditions) != 1:
            raise ValidationError(
                f"not_() takes one condition, got {len(conditions)}: to negate several "
                "together, pass one and_(...) or or_(...) of them, e.g. not_(and_(a, b))")
        _check_inputs("not_", conditions)
        return Condition("not", conditions)


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """isinstance(value, Mapping), answered at once for a dict and for the common scalars."""
    # isinstance() against the Mapping ABC runs Python-level __instancecheck__ code, and
    # building the seed's claim asks it 8 times (measured: BENCHMARKS.md, "Fast paths").
    kind = type(value)
    if kind is dict:
        return True
    if kind in _SCALARS:
        return False
    return isinstance(value, Mapping)


_SCALARS = frozenset({str, int, float, bool, type(None), bytes, _dt.datetime, _dt.date})

NOW_NODE = CurrentTime(None)

#: the type families whose values compare with each other; JSON compares with nothing
FAMILIES = {"int": "number", "float": "number", "decimal": "number", "str": "text",
            "literal": "text", "bool": "bool", "datetime": "datetime", "date": "date",
            "uuid": "UUID", "bytes": "bytes"}


def same_family(a: ColumnMeta, b: ColumnMeta) -> bool:
    """True when values of the two columns can be compared (or one assigned to the other)."""
    family = FAMILIES.get(a.kind)
    return family is not None and family == FAMILIES.get(b.kind)


def moves_to(target: ColumnMeta, source: ColumnMeta) -> bool:
    """True when a value of `source` can be stored in `target` or stand beside its values
    (set, from_select, union_all, coalesce): one family, or JSON beside JSON, which moving
    a value does not compare."""
    return same_family(target, source) or (target.kind == "json" and source.kind == "json")


def _family_error(col: ColumnMeta, other: ColumnMeta, what: str, where: str) -> ValidationError:
    if col.kind == "json" and other.kind == "json":
        return ValidationError(
            f"{col.model_name}.{col.attr} and {what} ({other.model_name}.{other.attr}) are JSON "
            f"columns, which are not compared (in {where}); compare a column of another type")
    return ValidationError(
        f"{col.model_name}.{col.attr} is {col.type_name()}, but {what} is "
        f"{other.model_name}.{other.attr} of type {other.type_name()} (in {where}): compared "
        "columns must be of one family (numbers, text, bool, datetime, date, UUID, bytes)"
    )


def as_scope(scope: Scope | ModelMeta) -> Scope:
    """A scope, given one or the model of a plain statement."""
    if isinstance(scope, ModelMeta):
        return find_table_scope(scope) or table_scope(scope)
    return scope


def _naive(value: object) -> bool:
    return isinstance(value, _dt.datetime) and value.utcoffset() is None


def expression_node(scope: Scope | ModelMeta, expr: Expression, values: list[object],
                    where: str, allow_excluded: bool = False,
                    expected: ColumnMeta | None = None) -> Value:
    """The value node of an sql.* expression; its bound values are appended to `values`.

    `expected` is the column the expression is compared with or assigned to, if any.
    """
    scope = as_scope(scope)
    if isinstance(expr, Raw):
        return raw_sql(expr.text)
    if isinstance(expr, Expr):
        nodes: list[Value] = []
        for value in expr.values:
            if isinstance(value, Expression):
                nodes.append(expression_node(scope, value, values, where, allow_excluded))
            else:
                if _naive(value):
                    raise ValidationError(
                        f"sql.expr in {where}: naive datetime {value!r}; pass an aware one, "
                        "e.g. datetime.now(UTC)"
                    )
                nodes.append(param(len(values), None))
                values.append(value)
        return SQLExpr(expr.parts, tuple(nodes))
    if isinstance(expr, Now):
        if expr.plus is None:
            return NOW_NODE
        if isinstance(expr.plus, Expression):
            return CurrentTime(expression_node(scope, expr.plus, values, where, allow_excluded))
        values.append(expr.plus)
        return CurrentTime(param(len(values) - 1, None))
    if isinstance(expr, Excluded):
        return excluded_value(scope, expr, where, allow_excluded)[0]
    if isinstance(expr, ColumnReference):
        return column_reference(scope, expr.name, where, expected)
    if isinstance(expr, Backoff):
        attempts = column_reference(scope, expr.column, where, None)
        bounds: list[Value] = []
        for value in (expr.first, expr.cap):
            if (isinstance(value, bool) or not isinstance(value, int | float)
                    or not math.isfinite(value)):
                raise ValidationError(
                    f"a backoff in {where} takes finite numbers of seconds, got {value!r}")
            bounds.append(param(len(values), None))
            values.append(value)
        return BackoffDelay(attempts, bounds[0], bounds[1])
    if isinstance(expr, ScalarValue):
        raise ValidationError(
            f"sql.scalar() in {where} stands where a column's value goes: compare a column "
            "with it or set a column to it"
        )
    from .compute import computed, is_computed

    if is_computed(expr):
        node, col = computed(scope, expr, values, where, excluded=allow_excluded)
        if expected is not None and not moves_to(expected, col):
            raise _family_error(expected, col, repr(expr), where)
        return node
    raise ValidationError(f"unknown expression {expr!r} in {where}")


def excluded_value(scope: Scope, expr: Excluded, where: str,
                   allowed: bool) -> tuple[ExcludedValue, ColumnMeta]:
    """sql.excluded(column): the node and its column, where an upsert's set may name it."""
    if not allowed or scope.meta is None:
        raise ValidationError(
            f"sql.excluded({expr.column!r}) in {where}: it names the row an upsert tried to "
            "insert, so it belongs in on_conflict_do_update(..., set)"
        )
    col = scope.meta.column(expr.column, f"sql.excluded() in {where}")
    return ExcludedValue(col), col


def column_reference(scope: Scope, name: object, where: str,
                     expected: ColumnMeta | None) -> Value:
    """sql.col(name): a column of this statement, or of an enclosing one (`alias.column`)."""
    if not isinstance(name, str) or not name:
        raise ValidationError(f"sql.col() takes a column name, got {name!r} (in {where})")
    found = scope.names.get(name)
    if found is None:
        qualifier, dot, attr = name.partition(".")
        if not dot or qualifier in scope.qualifiers:
            meta = scope.qualifiers.get(qualifier) if dot else None
            if meta is not None and scope.meta is meta:
                col = meta.column(attr, f"sql.col() in {where}")
                found = (QualifiedColumn(qualifier, col), col)
            else:
                raise ValidationError(scope.unknown(name, f"sql.col() in {where}"))
        else:
            # Another statement's table or alias: this is a correlated subquery, resolved
            # (and its column checked) when it is placed inside the statement it names.
            CORRELATIONS[0] += 1
            return OuterColumn(qualifier, attr, expected)
    operand, col = found
    if expected is not None and not moves_to(expected, col):
        raise _family_error(expected, col, f"sql.col({name!r})", where)
    if col is expected and scope.meta is not None and where.startswith(("where", "having")):
        # the one table's column against itself: true of every row (NULL where it is NULL),
        # what a subquery meant to read the row of a statement around it on the same table
        # writes instead (its own table name names its own row)
        raise ValidationError(
            f"{scope.label}: {col.attr} compared with sql.col({name!r}) compares a column "
            f"with itself, which holds for every row or for none (in {where}); to read the "
            f"row of an "
            f"enclosing statement on the same table, give that statement an alias, "
            f"join({scope.meta.name}, \"outer\"), and write sql.col(\"outer.{col.attr}\")")
    return operand


def _scalar_node(scope: Scope, col: ColumnMeta | None, value: ScalarValue, values: list[object],
                 where: str) -> Value:
    sub = value.subquery
    if not isinstance(sub, Subquery):
        raise ValidationError(
            f"sql.scalar() takes a one-column subquery, select(...).as_subquery(column), got "
            f"{type(sub).__name__} (in {where})"
        )
    if col is not None and not moves_to(col, sub.column):
        raise _family_error(col, sub.column, "the sql.scalar() subquery's column", where)
    if sub.correlated:
        check_outer(scope, sub.key, where)
    offset = len(values)
    values.extend(sub.values)
    return ScalarSubquery(sub.key, offset)


def value_node(col: ColumnMeta, scope: Scope | ModelMeta, value: object, values: list[object],
               where: str, allow_excluded: bool = False) -> Value:
    """A bound value checked against the column's type, or an expression node."""
    if col.accepts(value):
        values.append(value)
        return param(len(values) - 1, col.kind)
    return checked_value_node(col, scope, value, values, where, allow_excluded)


def assigned_node(col: ColumnMeta, scope: Scope | ModelMeta, value: object,
                  values: list[object], where: str, allow_excluded: bool = False) -> Value:
    """checked_value_node() of a value a column is set to (set(), an upsert's set, a row of
    values()): an int column never takes a float or Decimal expression, which PostgreSQL and
    MySQL would round and SQLite store as it is."""
    node = checked_value_node(col, scope, value, values, where, allow_excluded)
    if (col.kind == "decimal" and isinstance(value, TypedValue)
            and isinstance(value.value, Decimal)):
        col.check_value(value.value, where)  # its places and digits, as a plain Decimal's
    if col.kind in ("int", "decimal"):
        source = (node if isinstance(node, Function | ColumnMeta)
                  else node.column if isinstance(node, QualifiedColumn)
                  else value.subquery.column
                  if isinstance(value, ScalarValue) and isinstance(value.subquery, Subquery)
                  else None)
        if source is not None:
            check_assigned_number(col, source.kind, source.scale, node, repr(value), where)
    return node


def assigned_value_node(col: ColumnMeta, scope: Scope | ModelMeta, value: object,
                        values: list[object], where: str) -> Value:
    """value_node() of a value a column is set to: a bound value checked against the
    column's type, or an expression checked as assigned_node() checks it."""
    if col.accepts(value):
        values.append(value)
        return param(len(values) - 1, col.kind)
    return assigned_node(col, scope, value, values, where)


def check_assigned_number(col: ColumnMeta, kind: str, scale: int | None, node: object,
                          shown: str, where: str) -> None:
    """Refuse a computed value (or a select's column) that an int or sized Decimal column
    would round: a float or Decimal into an int column, a Decimal of more places than the
    column's scale (a Decimal value of more places is refused, never rounded, too)."""
    if col.kind == "int" and kind in ("float", "decimal"):
        if (isinstance(node, Function) and node.name == "round"
                and int(str(node.option or 0)) <= 0):
            return  # sql.round(x): a whole number
        what = "a float" if kind == "float" else "a Decimal"
        raise ValidationError(
            f"{col.model_name}.{col.attr} is int, and {shown} in {where} is {what}: "
            f"{FRACTION_FOR_AN_INT}"
        )
    if (col.kind == "decimal" and kind == "decimal" and col.scale is not None
            and scale is not None and scale > col.scale):
        raise ValidationError(
            f"{col.model_name}.{col.attr} holds {col.scale} places after the point, and "
            f"{shown} in {where} has {scale}: the database would round it; round it as you "
            f"mean to (sql.round(..., digits={col.scale})), or raise column(scale=...)"
        )


def checked_value_node(col: ColumnMeta, scope: Scope | ModelMeta, value: object,
                       values: list[object], where: str, allow_excluded: bool = False) -> Value:
    """value_node() of a value col.accepts() did not settle: an expression, or a value that
    check_value() passes or names as wrong."""
    if isinstance(value, Raw):
        return find_raw(value.text) or raw_sql(value.text)
    if isinstance(value, Now) and value.plus is None and col.kind == "datetime":
        return NOW_NODE
    if isinstance(value, Expression):
        scope = as_scope(scope)
        if isinstance(value, Now) and col.kind != "datetime":
            raise ValidationError(
                f"{col.model_name}.{col.attr} is {col.type_name()}: {NOW_IS_A_TIMESTAMP} "
                f"(in {where})"
            )
        if isinstance(value, ScalarValue):
            return _scalar_node(scope, col, value, values, where)
        if (isinstance(value, Excluded) and allow_excluded and scope.meta is not None
                and (other := scope.meta.column(value.column, f"sql.excluded() in {where}")).kind
                != col.kind and not {other.kind, col.kind} <= TEXT_KINDS):
            raise ValidationError(
                f"{col.model_name}.{col.attr} is {col.type_name()}: sql.excluded("
                f"{value.column!r}) is {other.type_name()} (in {where})"
            )
        node = expression_node(scope, value, values, where, allow_excluded, expected=col)
        if where == "values()" and columns_read(node):  # any expression that reads one
            raise ValidationError(f"{value!r} in values(): {NO_COLUMNS_IN_VALUES}")
        return node
    col.check_value(value, where)
    # Kept as a copy of its own (a bytearray, a JSON dict) or its plain value (an enum
    # member): a built statement never changes when the caller's object does.
    values.append(value if type(value) in KEPT else frozen(value))
    return param(len(values) - 1, col.kind)


def _in_node(scope: Scope, left: Operand, col: ColumnMeta, op: str, operand: object,
             values: list[object], where: str) -> ConditionNode:
    negated = op == "not_in"
    if col.kind == "json":  # a list or a subquery alike: `in` is equality
        raise ValidationError(
            f"{col.model_name}.{col.attr} is a JSON column: `{op}` does not apply"
        )
    if isinstance(operand, Subquery):
        sub: Subquery[Any, Any] = operand
        sub_col = sub.column
        if sub_col.kind != col.kind and not ({sub_col.kind, col.kind} <= TEXT_KINDS):
            raise ValidationError(
                f"{col.model_name}.{col.attr} `{op}`: the subquery yields {sub_col.model_name}."
                f"{sub_col.attr} of type {sub_col.type_name()}, not {col.type_name()}"
            )
        if sub.correlated:
            check_outer(scope, sub.key, where)
        offset = len(values)
        values.extend(sub.values)
        return new_node(InSubquery, (left, sub.key, offset, negated, "insub"))
    if hasattr(operand, "as_subquery") and hasattr(operand, "_key"):
        raise ValidationError(
            f"{col.model_name}.{col.attr} `{op}` takes a one-column subquery: add "
            f".as_subquery(\"{col.attr}\") (or the column to compare) to the select"
        )
    if isinstance(operand, str | bytes | Mapping) or not isinstance(
        operand, Sequence | set | frozenset
    ):
        raise ValidationError(
            f"{col.model_name}.{col.attr} `{op}` takes a list of {col.type_name()} values or "
            f"select(...).as_subquery(column), got {type(operand).__name__} {operand!r}"
        )
    items = list(operand)
    if not items:
        return TRUE if negated else FALSE
    if col.max_length is not None and not all(map(col.accepts, items)):
        kept = [item for item in items if not _too_long(col, item)]
        if not kept:
            return _every_row(left) if negated else _no_row(left)
        items = kept
    if all(map(col.accepts, items)):
        # One node for the run of bound values, not one param node per item
        # (measured: BENCHMARKS.md, "Fast paths").
        values.extend(items)
        return InParams(left, len(values) - len(items), len(items), col.kind, negated)
    nodes: list[Value] = []
    for item in items:
        if item is None:
            raise ValidationError(
                f"{col.model_name}.{col.attr} `{op}`: None never matches in a list; "
                "use {\"is_null\": True} (combined with or_)"
            )
        nodes.append(value_node(col, scope, item, values, f"{where} `{op}`"))
    return InList(left, tuple(nodes), negated)


#: the escaping operators: how the user's literal text becomes a LIKE pattern
_PATTERNS = {"contains": ("%", "%"), "icontains": ("%", "%"), "startswith": ("", "%"),
             "endswith": ("%", "")}


def escape_like(text: str) -> str:
    """Literal text as a LIKE pattern that matches only itself (backslash escapes)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# -- values longer than the column holds ---------------------------------------------------
#
# No row holds a string (or bytes) longer than its column's max_length: PostgreSQL's and MySQL's
# varchar(n) refuse one, and insert() and update() refuse one on SQLite, which has no limit
# of its own. A lookup by such a value (user input, often) is then a question with a known
# answer, not a mistake: `eq` and `in` match no row, `ne` and `not_in` every row whose
# column is not NULL. It is written as the column compared with itself, so the condition is
# unknown where the column is NULL exactly as the comparison with the value would be (under
# not_() too), and the value, which no database is asked about, gives the same answer on
# all three, even for a longer string written to SQLite by other means.


def _too_long(col: ColumnMeta, value: object) -> bool:
    """True when `value` is a string (or bytes) longer than any the column holds (its text
    checked)."""
    limit = col.max_length
    if limit is None:
        return False
    if col.kind == "bytes" and isinstance(value, bytes | bytearray | memoryview):
        return (value.nbytes if isinstance(value, memoryview) else len(value)) > limit
    if not isinstance(value, str) or len(value) <= limit or col.kind != "str":
        return False
    check_text(f"{col.model_name}.{col.attr}", value)
    return True


def _no_row(left: Operand) -> ConditionNode:
    """`left <> left`: false on every row, unknown where `left` is NULL."""
    return Compare(left, "<>", left)


def _every_row(left: Operand) -> ConditionNode:
    """`left = left`: true on every row, unknown where `left` is NULL."""
    return Compare(left, "=", left)


def _shortest_match(pattern: str) -> int:
    """How many characters the shortest string a LIKE pattern matches has (backslash escapes;
    `%` matches none, `_` one)."""
    n = 0
    chars = iter(pattern)
    for ch in chars:
        if ch == "\\":
            n += next(chars, None) is not None
        elif ch != "%":
            n += 1
    return n


def _op_node(scope: Scope, left: Operand, col: ColumnMeta, op: str, operand: object,
             values: list[object], where: str) -> ConditionNode:
    if op == "in" or op == "not_in":
        return _in_node(scope, left, col, op, operand, values, where)
    name = f"{col.model_name}.{col.attr}"
    if op in COMPARISONS:
        if col.kind == "json":
            raise ValidationError(f"{name} is a JSON column: `{op}` does not apply")
        if op not in ("eq", "ne") and col.kind not in ORDERED_KINDS:
            raise ValidationError(
                f"{name} is {col.type_name()}: `{op}` applies to numbers, dates and times only"
            )
        if operand is None:
            if op not in ("eq", "ne"):
                raise ValidationError(f"{name} `{op}` None: None has no order")
            col.check_value(None, where)
            return IsNull(left, op == "ne")
        if op in ("eq", "ne") and _too_long(col, operand):
            return _no_row(left) if op == "eq" else _every_row(left)
        return Compare(left, COMPARISONS[op], value_node(col, scope, operand, values, where))
    if op == "is_null":
        if not isinstance(operand, bool):
            raise ValidationError(f"{name} `is_null` takes True or False, got {operand!r}")
        return IsNull(left, not operand)
    if op == "between":
        if col.kind not in ORDERED_KINDS:
            raise ValidationError(
                f"{name} is {col.type_name()}: `between` applies to numbers, dates and times only"
            )
        if isinstance(operand, str | bytes) or not isinstance(operand, Sequence) or len(operand) != 2:
            raise ValidationError(f"{name} `between` takes a pair [low, high], got {operand!r}")
        low, high = operand
        if low is None or high is None:
            raise ValidationError(f"{name} `between`: bounds cannot be None")
        return Between(left, value_node(col, scope, low, values, where),
                       value_node(col, scope, high, values, where))
    if op in ("like", "ilike") or op in _PATTERNS:
        if col.kind not in TEXT_KINDS:
            raise ValidationError(
                f"{name} is {col.type_name()}: `{op}` applies to strings only"
            )
        escaped = op in _PATTERNS
        node: Value
        if not escaped and isinstance(operand, Raw | Expr):
            node = expression_node(scope, operand, values, where)
        elif isinstance(operand, str):
            check_text(f"{name} `{op}`", operand)
            if not escaped and (len(operand) - len(operand.rstrip("\\"))) % 2:
                # PostgreSQL raised, MySQL matched a backslash, SQLite matched nothing
                raise ValidationError(
                    f"{name} `{op}`: the pattern {operand!r} ends in the escape character \\ "
                    "with nothing to escape; to match a backslash, escape it as \\\\ (in "
                    f"Python source {operand[:-1] + chr(92) * 2!r}), or use `contains`/"
                    "`endswith`, which take the text as it is"
                )
            if col.max_length is not None and col.kind == "str" and (
                    len(operand) if escaped else _shortest_match(operand)) > col.max_length:
                return _no_row(left)  # it matches only strings longer than the column holds
            if escaped:
                before, after = _PATTERNS[op]
                operand = before + escape_like(operand) + after
            values.append(operand)
            node = param(len(values) - 1, "str")
        else:
            what = ("the text to look for" if escaped
                    else "a pattern string (a str, sql.raw() or sql.expr())")
            raise ValidationError(f"{name} `{op}` takes {what}, got {operand!r}")
        return Like(left, node, op in ("ilike", "icontains"), escaped)
    import difflib

    near = difflib.get_close_matches(str(op), OPERATORS, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise ValidationError(
        f"{name}: unknown operator {op!r} in {where}{hint} (operators: {', '.join(OPERATORS)})"
    )


def _mapping_node(scope: Scope, mapping: Mapping[Any, Any], values: list[object],
                  where: str) -> ConditionNode:
    if not mapping:
        raise ValidationError(f"{scope.label}: an empty where dict in {where} {EMPTY_WHERE}")
    parts: list[ConditionNode] = []
    names = scope.names
    for attr, spec in mapping.items():
        found = names.get(attr) if type(attr) is str else None
        left, col = found if found is not None else scope.lookup(attr, where)
        if type(spec) is not dict and col.accepts(spec):  # a value of the column's type
            key = (left, len(values), col.kind)
            values.append(spec)
            parts.append(find_equals(key) or equals(*key))
        elif type(spec) is dict or is_mapping(spec):
            if not spec:
                raise ValidationError(
                    f"{col.model_name}.{col.attr}: empty operator dict in {where}; "
                    f"write a value or {{op: value}} with op one of {', '.join(OPERATORS)}"
                )
            for op, operand in spec.items():
                parts.append(_op_node(scope, left, col, op, operand, values, where))
        elif spec is None:
            col.check_value(None, where)
            parts.append(IsNull(left, False))
        else:
            if col.kind == "json":
                raise ValidationError(
                    f"{col.model_name}.{col.attr} is a JSON column: it cannot be compared in "
                    f"{where}"
                )
            if isinstance(spec, list | tuple | set | frozenset):
                raise ValidationError(
                    f"{col.model_name}.{col.attr}: a list is not a value of {col.type_name()} "
                    f"in {where}; write {{\"in\": [...]}} to match any of them"
                )
            if _too_long(col, spec):
                parts.append(_no_row(left))
                continue
            parts.append(Compare(left, "=", checked_value_node(col, scope, spec, values, where)))
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def condition_node(scope: Scope | ModelMeta, item: object, values: list[object],
                   where: str) -> ConditionNode:
    """The condition node of one where input (dict, and_/or_/not_, or sql.exists)."""
    scope = as_scope(scope)
    if is_mapping(item):
        return _mapping_node(scope, item, values, where)
    if isinstance(item, Condition):
        inner = tuple(condition_node(scope, sub, values, where) for sub in item.items)
        if item.op == "not":
            return Not(inner[0])
        if len(inner) == 1:
            return inner[0]
        return And(inner) if item.op == "and" else Or(inner)
    if isinstance(item, ExistsCondition):
        if item.correlated:
            check_outer(scope, item.key, where)
        offset = len(values)
        values.extend(item.values)
        return Exists(item.key, offset, item.negated)
    raise ValidationError(
        f"{scope.label}: {where} takes a dict such as {{\"status\": \"queued\"}}, "
        f"and_/or_/not_ or sql.exists(...), got {type(item).__name__} {item!r}"
    )


def with_conditions(scope: Scope | ModelMeta, existing: ConditionNode | None,
                    bound: tuple[object, ...], conditions: tuple[WhereInput, ...],
                    where: str = "where()") -> tuple[ConditionNode, tuple[object, ...]]:
    """The condition and bound values after ANDing `conditions` to `existing` (where())."""
    if isinstance(scope, ModelMeta):  # as_scope(), inlined: every where() passes here
        scope = find_table_scope(scope) or table_scope(scope)
    if not conditions:
        raise ValidationError(f"{scope.label}: {where} needs a condition")
    values = list(bound)
    if existing is None and len(conditions) == 1:
        item = conditions[0]
        if type(item) is dict:
            return _mapping_node(scope, item, values, where), tuple(values)
        return condition_node(scope, item, values, where), tuple(values)
    nodes = [condition_node(scope, c, values, where) for c in conditions]
    return conjunction(existing, nodes), tuple(values)


def conjunction(existing: ConditionNode | None, added: Sequence[ConditionNode]) -> ConditionNode:
    """`existing AND added...`, flattening nested ANDs."""
    parts: list[ConditionNode] = []
    for node in ((existing,) if existing is not None else ()) + tuple(added):
        if type(node) is And:
            parts.extend(node.items)
        else:
            parts.append(node)
    return parts[0] if len(parts) == 1 else And(tuple(parts))


# -- correlated references ------------------------------------------------------------------

#: How many references to an enclosing statement were made, ever. A builder that finds it
#: unchanged across one of its calls made none, so its subqueries need no correlation check
#: where they are placed: the seed's claim skips walking its subquery (a hint that can only
#: err towards checking, if another thread makes one meanwhile).
CORRELATIONS = [0]


def qualifiers_of(query: SelectQuery) -> set[str]:
    """The names a column of this query may be qualified with: its aliases, or its table."""
    source = query.source
    names = {source.alias if source.alias is not None else source.meta.table}
    names.update(j.source.alias or j.source.meta.table for j in query.joins)
    return names


def _collect(node: tuple[object, ...], refs: list[OuterColumn],
             nested: list[SelectQuery]) -> None:
    for item in node:
        if isinstance(item, OuterColumn):
            refs.append(item)
        elif isinstance(item, SelectQuery):
            nested.append(item)
        elif isinstance(item, tuple):
            _collect(item, refs, nested)


_FREE: dict[SelectQuery, list[OuterColumn]] = {}


def free_references(query: SelectQuery) -> list[OuterColumn]:
    """The references to enclosing statements that no scope inside `query` resolves."""
    # Remembered by the query's shape, as compiled shapes are: a walk of the subquery on
    # every build would cost more than the build itself.
    found = _FREE.get(query)
    if found is None:
        found = _free_references(query)
        if len(_FREE) >= 4096:
            _FREE.clear()
        _FREE[query] = found
    return found


def _free_references(query: SelectQuery) -> list[OuterColumn]:
    refs: list[OuterColumn] = []
    nested: list[SelectQuery] = []
    _collect(query, refs, nested)
    own = qualifiers_of(query)
    free = [r for r in refs if r.qualifier not in own]
    for sub in nested:
        free.extend(r for r in free_references(sub) if r.qualifier not in own)
    return free


def references_in(node: tuple[object, ...]) -> list[OuterColumn]:
    """The references by qualifier (sql.col("table.column")) in a condition or value that
    no select inside it resolves: to the statement that holds it, or further out."""
    refs: list[OuterColumn] = []
    nested: list[SelectQuery] = []
    _collect(node, refs, nested)
    for sub in nested:
        refs.extend(free_references(sub))
    return refs


def check_outer(scope: Scope, query: SelectQuery, where: str) -> None:
    """Check the subquery's references to this scope: the column exists, and its type family
    is the one of the column it is compared with."""
    for ref in free_references(query):
        meta = scope.qualifiers.get(ref.qualifier)
        if meta is None:
            CORRELATIONS[0] += 1  # it names a statement further out: so does this one
            continue
        found = scope.names.get(f"{ref.qualifier}.{ref.attr}")
        if found is not None:
            col = found[1]
        else:
            col = meta.column(ref.attr, f"sql.col({ref.qualifier + '.' + ref.attr!r}) in {where}")
        if ref.expected is not None and not moves_to(ref.expected, col):
            raise _family_error(ref.expected, col, f"sql.col('{ref.qualifier}.{ref.attr}')",
                                where)

