"""The where language: `{"col": value}`, `{"col": {op: operand}}` and and_/or_/not_.

Checked wherever a condition is written: `where()`, `index_where=`, `update_where=`,
`on_conflict_do_nothing(where=)` and `Index(where=)`. Conditions nested in and_/or_/not_
written in place are checked too; one held in a variable was built without its model and is
left to the run-time check. Part of the foundation: imports no check.

A value given for a column (here, and in set() and values(): check_given) is a plain value
(values.py) or a computed sql.* expression, typed as add_columns() types it (computed.py,
given this module's check_condition for a CASE's conditions) and of the column's family, as
the run time checks it.
"""

from __future__ import annotations

from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    CallExpr,
    DictExpr,
    Expression,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    SetExpr,
    TupleExpr,
)
from mypy.types import Instance, LiteralType, get_proper_type

from tempest_typed._wording import EMPTY_WHERE, FRACTION_FOR_AN_INT, NO_COLUMNS_IN_VALUES

from .computed import COMPUTED, Typer
from .correlation import correlate
from .definitions import resolved
from .families import RULE, moves_to
from .messages import AGGREGATE, OPERATOR, VALUE, column_name, describe, near
from .metadata import ORDERED_KINDS, TEXT_KINDS, Column, column_kind, instance, non_null
from .names import (
    COL,
    COMBINATORS,
    EXCLUDED,
    EXISTS,
    OPERATORS,
    QUERY,
    ROUND,
    SCALAR,
    SUBQUERY,
    TEXT_OPERATORS,
)
from .scopes import GroupScope, JoinScope, Scope
from .syntax import callee_name, is_none, literal_str
from .values import NARROWER_REFUSED, accepted, check_value, fits, narrower_refused

__all__ = ["check_assigned", "check_condition", "check_given"]


def check_condition(scope: Scope, expr: Expression) -> None:
    """Check one where input: a dict written in place, or and_/or_/not_ of them."""
    if isinstance(expr, DictExpr):
        if not expr.items:  # the run time refuses it: it would pass for an update's where()
            label = scope.label if isinstance(scope, JoinScope | GroupScope) else scope.facts.name
            scope.fail(f"{label}: an empty where dict in {scope.where} {EMPTY_WHERE}", expr,
                       VALUE)
            return
        for key, spec in expr.items:
            if key is None:
                continue
            col = scope.column(key)
            if col is not None:
                _check_spec(scope, col, spec)
    elif isinstance(expr, CallExpr):
        callee = callee_name(expr)
        if callee in COMBINATORS:
            for arg in expr.args:
                check_condition(scope, arg)
        elif callee in EXISTS and expr.args:
            correlate(scope, expr.args[0])


def check_assigned(scope: Scope, col: Column, expr: Expression) -> None:
    """Check what a column is set to (update's set(), an upsert's set, a row of values()):
    what check_given() checks, and that an int column is set to no float or Decimal
    expression (the run time's assigned_node: PostgreSQL and MySQL would round it, SQLite
    store the fraction)."""
    reported = scope.api.msg.errors.num_messages()
    check_given(scope, col, expr)
    if col.kind != "int" or scope.api.msg.errors.num_messages() != reported:
        return  # one error per value, as the run time raises one
    held = resolved(scope.api, expr)
    if _whole(scope, held) or callee_name(held) == EXCLUDED:  # excluded: check_value
        return
    if callee_name(held) not in (COL, SCALAR) and not _is_computed(scope, expr):
        return  # a plain value: check_given() checked its type
    with scope.api.msg.filter_errors():  # reported by check_given, if wrong
        found = Typer(scope, f"in {scope.where}", scope.where, check_condition).value(expr)
    if found is not None and found.kind in ("float", "decimal"):
        what = "a float" if found.kind == "float" else "a Decimal"
        scope.fail(f'{column_name(col)} is "int", and {_shown(expr)} in {scope.where} is '
                   f"{what}: {FRACTION_FOR_AN_INT}", expr, VALUE)


def _whole(scope: Scope, expr: Expression) -> bool:
    """Whether `expr` is sql.round(x) to a whole number (digits 0 or fewer), or its digits
    are not written as a literal (the run time tells)."""
    if not (isinstance(expr, CallExpr) and callee_name(expr) == ROUND):
        return False
    for name, given in zip(expr.arg_names, expr.args, strict=True):
        if name == "digits" or (name is None and given is not expr.args[0]):
            value = scope.api.lookup_type_or_none(given)
            proper = get_proper_type(value) if value is not None else None
            if isinstance(proper, Instance) and proper.last_known_value is not None:
                proper = proper.last_known_value
            if isinstance(proper, LiteralType) and isinstance(proper.value, int):
                return proper.value <= 0
            return True
    return True


def check_given(scope: Scope, col: Column, expr: Expression, label: str | None = None) -> None:
    """Check what is given for `col` where a value goes (a where operand, a set() or values()
    value): a computed sql.* expression must be of the column's family; anything else is a
    value (values.check_value). `label` names the place when `scope.where` does not."""
    held = resolved(scope.api, expr)
    if callee_name(held) == COL and scope.where == "values()":
        scope.fail(f"sql.col() in {label or scope.where}: {NO_COLUMNS_IN_VALUES}", expr, VALUE)
        return
    if callee_name(held) in (COL, SCALAR, EXCLUDED):  # a reference, held in a variable or not
        check_value(scope, col, held, label)
        return
    if not _is_computed(scope, expr):
        check_value(scope, col, expr, label)
        return
    where = label or scope.where
    shown = _shown(expr)
    if isinstance(held, CallExpr) and isinstance(held.callee, MemberExpr) \
            and held.callee.name == "over":
        scope.fail(f"{shown} in {where}: a window function is computed after the rows are "
                   "chosen, so it stands in add_columns() only; to filter on it, name the "
                   "select with sql.cte() and select from that", expr, AGGREGATE)
        return
    typer = Typer(scope, f"in {where}", where, check_condition)
    found = typer.value(expr)
    if typer.reads and scope.where == "values()":
        scope.fail(f"{shown} in {where}: {NO_COLUMNS_IN_VALUES}", expr, VALUE)
        return
    if found is None or moves_to(col.kind, found.kind):
        return
    options = scope.api.options
    scope.fail(f"{column_name(col)} expects {describe(col.type, options)}, got "
               f"{describe(found.type, options)} from {shown} in {where}: {RULE}", expr, VALUE)


def _is_computed(scope: Scope, expr: Expression) -> bool:
    """Whether `expr` is a computed sql.* expression (not sql.col(), a reference)."""
    if callee_name(expr) == COL:
        return False
    typ = get_proper_type(scope.api.lookup_type_or_none(expr))
    return isinstance(typ, Instance) and any(typ.type.has_base(name) for name in COMPUTED)


def _shown(expr: Expression) -> str:
    """How a message names a computed expression: `sql.lower()`, `arithmetic ("*")`."""
    callee = callee_name(expr)
    if callee is not None and callee.startswith("tempest_typed.sql."):
        return f"sql.{callee.rpartition('.')[2]}()"
    if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        return f"{_shown(expr.callee.expr)}.{expr.callee.name}()"
    if isinstance(expr, OpExpr):
        return f'arithmetic ("{expr.op}")'
    if isinstance(expr, NameExpr):
        return expr.name
    return "the expression"


def _check_spec(scope: Scope, col: Column, spec: Expression) -> None:
    if isinstance(spec, DictExpr):
        for op_expr, operand in spec.items:
            if op_expr is None:
                continue
            op = literal_str(scope.api, op_expr)
            if op is not None:
                _check_operator(scope, col, op, op_expr, operand)
        return
    if col.kind == "json":
        scope.fail(f"{column_name(col)} is a JSON column: it cannot be compared in "
                   f"{scope.where}", spec, OPERATOR)
        return
    if isinstance(spec, ListExpr | TupleExpr | SetExpr):
        scope.fail(f"{column_name(col)}: a list is not a value of "
                   f"{describe(col.type, scope.api.options)} in {scope.where}; "
                   'write {"in": [...]} to match any of them', spec, VALUE)
        return
    check_given(scope, col, spec)


def _check_operator(scope: Scope, col: Column, op: str, op_expr: Expression,
                    operand: Expression) -> None:
    options = scope.api.options
    if op not in OPERATORS:
        guess = near(op, OPERATORS)
        hint = f'; did you mean "{guess}"?' if guess else ""
        scope.fail(f'{column_name(col)}: unknown operator "{op}" in {scope.where}{hint}',
                   op_expr, OPERATOR)
        return
    if col.kind == "json" and op != "is_null":
        scope.fail(f'{column_name(col)} is a JSON column: "{op}" does not apply', op_expr,
                   OPERATOR)
        return
    ordered = op in ("lt", "lte", "gt", "gte", "between")
    if ordered and col.kind not in ORDERED_KINDS and col.kind != "any":
        scope.fail(f'{column_name(col)} is {describe(col.type, options)}: "{op}" applies to '
                   "numbers, dates and times only", op_expr, OPERATOR)
        return
    if op in TEXT_OPERATORS and col.kind not in TEXT_KINDS and col.kind != "any":
        scope.fail(f'{column_name(col)} is {describe(col.type, options)}: "{op}" applies to '
                   "strings only", op_expr, OPERATOR)
        return
    if op in ("eq", "ne"):
        check_given(scope, col, operand)
    elif op in ("lt", "lte", "gt", "gte"):
        if is_none(operand):
            scope.fail(f'{column_name(col)} "{op}" None: None has no order', operand, VALUE)
        else:
            check_given(scope, col, operand)
    elif op == "between":
        _check_between(scope, col, operand)
    elif op in ("in", "not_in"):
        _check_in(scope, col, op, operand)
    elif op == "is_null":
        ok, typ = fits(scope, operand, instance(scope.api.modules, "builtins.bool"))
        if not ok:
            scope.fail(f'{column_name(col)} "is_null" takes True or False, got '
                       f"{describe(typ, options)}", operand, VALUE)
    elif op in ("like", "ilike"):
        pattern = accepted(scope, col, instance(scope.api.modules, "builtins.str"))
        ok, typ = fits(scope, operand, pattern)
        if not ok:
            scope.fail(f'{column_name(col)} "{op}" takes a pattern string, got '
                       f"{describe(typ, options)}", operand, VALUE)
        elif _not_a_pattern(scope, operand):
            scope.fail(f'{column_name(col)} "{op}" takes a pattern string (a str, sql.raw() or '
                       f"sql.expr()), got {_shown(operand)}", operand, VALUE)
    else:  # contains, icontains, startswith, endswith: the text itself, not an expression
        ok, typ = fits(scope, operand, instance(scope.api.modules, "builtins.str"))
        if not ok:
            scope.fail(f'{column_name(col)} "{op}" takes the text to look for (a str), got '
                       f"{describe(typ, options)}", operand, VALUE)


#: the expressions a like/ilike pattern may be besides a str, as the run time takes them
_PATTERNS = frozenset({"tempest_typed.sql.raw", "tempest_typed.sql.expr"})


def _not_a_pattern(scope: Scope, operand: Expression) -> bool:
    """Whether a like/ilike operand is an sql.* expression other than sql.raw()/sql.expr()
    (a column, a function, a scalar subquery), which the run time refuses as a pattern."""
    held = resolved(scope.api, operand)
    callee = callee_name(held)
    if callee in _PATTERNS:
        return False
    if callee is not None and callee.startswith("tempest_typed.sql."):
        return True
    return _is_computed(scope, operand)


def _check_between(scope: Scope, col: Column, operand: Expression) -> None:
    if isinstance(operand, ListExpr | TupleExpr):
        if len(operand.items) != 2:
            scope.fail(f'{column_name(col)} "between" takes a pair [low, high], got '
                       f"{len(operand.items)} item(s)", operand, VALUE)
            return
        for item in operand.items:
            if is_none(item):
                scope.fail(f'{column_name(col)} "between": bounds cannot be None', item, VALUE)
            else:
                check_given(scope, col, item, f'{scope.where} "between"')
        return
    element = accepted(scope, col, non_null(col.type))
    target = scope.api.named_generic_type("typing.Sequence", [element])
    ok, typ = fits(scope, operand, target)
    if not ok:
        scope.fail(f'{column_name(col)} "between" takes a pair [low, high] of '
                   f"{describe(non_null(col.type), scope.api.options)}, got "
                   f"{describe(typ, scope.api.options)}", operand, VALUE)


def _check_in(scope: Scope, col: Column, op: str, operand: Expression) -> None:
    options = scope.api.options
    element_type = non_null(col.type)
    first = get_proper_type(scope.api.lookup_type_or_none(operand))
    if isinstance(first, Instance) and first.type.fullname == SUBQUERY and len(first.args) == 2:
        yields = first.args[1]
        kind, _, _ = column_kind(yields)
        same = (kind == col.kind or {kind, col.kind} <= TEXT_KINDS
                or "any" in (kind, col.kind))
        if not same:
            model = describe(first.args[0], options)
            scope.fail(f'{column_name(col)} "{op}": the subquery yields {describe(yields, options)}'
                       f" (a column of {model}), not {describe(element_type, options)}",
                       operand, VALUE)
        correlate(scope, operand)
        return
    if isinstance(first, Instance) and first.type.has_base(QUERY):
        scope.fail(f'{column_name(col)} "{op}" takes a one-column subquery, not a whole select: '
                   f'add .as_subquery("{col.attr}") (or the column to compare)', operand, VALUE)
        return
    if isinstance(operand, ListExpr | TupleExpr | SetExpr):
        for item in operand.items:
            if is_none(item):
                scope.fail(f'{column_name(col)} "{op}": None never matches in a list; use '
                           '{"is_null": True} (combined with or_)', item, VALUE)
            else:
                check_given(scope, col, item, f'{scope.where} "{op}"')
        return
    element = accepted(scope, col, element_type)
    sequence = scope.api.named_generic_type("typing.Sequence", [element])
    target = sequence
    ok, typ = fits(scope, operand, target)
    if not ok:
        ok, typ = fits(scope, operand, scope.api.named_generic_type("typing.AbstractSet",
                                                                   [element]))
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.fullname in ("builtins.str",
                                                                 "builtins.bytes"):
        ok = False
    if not ok:
        scope.fail(f'{column_name(col)} "{op}" takes a sequence of '
                   f"{describe(element_type, options)} or select(...).as_subquery(column), got "
                   f"{describe(typ, options)}", operand, VALUE)
    elif (col.kind in NARROWER_REFUSED and isinstance(proper, Instance)
          and proper.type.has_base("typing.Iterable")):
        iterable = scope.api.named_generic_type("typing.Iterable", [element_type]).type
        items = map_instance_to_supertype(proper, iterable).args
        refused = narrower_refused(col, items[0]) if items else None
        if refused is not None:
            scope.fail(f'{column_name(col)} "{op}" takes a sequence of '
                       f"{describe(element_type, options)}, got {describe(typ, options)}: "
                       f"{refused}", operand, VALUE)
