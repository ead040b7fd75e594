"""Aggregates: `aggregate(group_by, {label: sql.count() ...})` and `having(...)`.

Rows are typed per field: the group columns by attribute name with their types (a left-joined
alias's as `| None`), then the labels: `count` is `int`; `sum` is the column's number type,
`avg` a `float` (a `Decimal` for Decimal columns) and `min`/`max` the column's type, each
`| None` (no row, or only NULLs). The statement's type keeps the rows it grouped and the group
columns as written, which having() and order_by() check (see lib/scopes.py).
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, DictExpr, Expression, ListExpr, TupleExpr
from mypy.plugin import MethodContext
from mypy.types import (
    AnyType,
    Instance,
    Type,
    TypeOfAny,
    get_proper_type,
)

from .lib.computed import AGGREGATES, aggregate_result, computed_type
from .lib.conditions import check_condition
from .lib.definitions import resolved
from .lib.messages import AGGREGATE, PLAIN_NAME, VALUE, plain_name_problem
from .lib.metadata import instance
from .lib.names import AGGREGATE_FUNCTION
from .lib.row_types import fields_row, named_select_facts, typed_dict
from .lib.scopes import JoinScope, Scope, group_scope, source_scope
from .lib.syntax import arg, callee_name, literal_str

__all__ = ["aggregate", "having"]

def _label(scope: Scope) -> str:
    return scope.label if isinstance(scope, JoinScope) else scope.facts.name


def _result(ctx: MethodContext, label: str, value: Expression) -> Type:
    """The type of one label's values, reporting an aggregate its column does not take."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    value = resolved(api, value)  # `n = sql.sum("total")`, then {"n": n}
    callee = callee_name(value) or ""
    if callee not in AGGREGATES or not isinstance(value, CallExpr):
        # built elsewhere: what its AggregateFunction[T] says
        typ = get_proper_type(api.lookup_type_or_none(value))
        if isinstance(typ, Instance) and typ.type.fullname == AGGREGATE_FUNCTION and typ.args:
            return typ.args[0]
        return AnyType(TypeOfAny.special_form)
    if not value.args:
        return instance(api.modules, "builtins.int")
    scope = source_scope(api, ctx.type, "aggregate()")
    if scope is None:
        return AnyType(TypeOfAny.from_error)
    return aggregate_result(scope, f'for "{label}"', value, callee.rpartition(".")[2])


def aggregate(ctx: MethodContext) -> Type:
    """`.aggregate([group columns], {label: aggregate})` on a select or a join."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    default = get_proper_type(ctx.default_return_type)
    receiver = get_proper_type(ctx.type)
    source = source_scope(api, ctx.type, "aggregate() group_by")
    group_args, aggregate_args = arg(ctx, "group_by"), arg(ctx, "aggregates")
    if (source is None or not group_args or not aggregate_args
            or not isinstance(default, Instance) or len(default.args) != 3
            or not isinstance(receiver, Instance) or not receiver.args):
        return ctx.default_return_type
    groups, aggregates = group_args[0], aggregate_args[0]
    if not isinstance(groups, ListExpr | TupleExpr) or not isinstance(aggregates, DictExpr):
        return ctx.default_return_type
    label = _label(source)
    fields: dict[str, Type] = {}
    written: dict[str, Type] = {}
    by_attr: dict[str, str] = {}
    complete = True
    for item in groups.items:
        if isinstance(item, DictExpr):  # {label: expression}: a computed group
            for key, value in item.items:
                name = literal_str(api, key) if key is not None else None
                if name is None or key is None:
                    complete = False
                    continue
                problem = plain_name_problem(name)
                if problem is not None or name in by_attr:
                    why = problem or "is also the field of another group column"
                    source.fail(f'{label}: aggregate() label "{name}" {why}; a label becomes a '
                                f"row field (row.label): write {PLAIN_NAME}", key, VALUE)
                    continue
                typ = computed_type(source, name, value, check_condition)
                by_attr[name] = name
                fields[name] = typ
                written[name] = typ
            continue
        name = literal_str(api, item)
        col = source.column(item) if name is not None else None
        if name is None or col is None:
            complete = False
            continue
        if col.attr in by_attr:
            source.fail(f'{label}: aggregate() groups by "{by_attr[col.attr]}" and "{name}", '
                        f'which both name a row field "{col.attr}"; a row names a group column '
                        "by its attribute", item, VALUE)
            continue
        if col.kind == "json":
            source.fail(f'{label}: "{name}" is a JSON column and cannot be grouped by', item,
                        AGGREGATE)
        by_attr[col.attr] = name
        fields[col.attr] = col.type
        written[name] = col.type
    for key, value in aggregates.items:
        name = literal_str(api, key) if key is not None else None
        if name is None or key is None:
            complete = False
            continue
        problem = plain_name_problem(name)
        if problem is not None:
            source.fail(f'{label}: aggregate() label "{name}" {problem}; a label becomes a row '
                        f"field (row.label): write {PLAIN_NAME}", key, VALUE)
            continue
        if name in by_attr:
            source.fail(f'{label}: the label "{name}" is also the field of the group column '
                        f'"{by_attr[name]}"; choose another label', key, VALUE)
            continue
        fields[name] = _result(ctx, name, value)
    if not complete:
        return ctx.default_return_type
    # the rows that were grouped: a model, a join's Row, or a named select's whole Row
    named = named_select_facts(receiver)
    grouped = receiver.args[0] if named is None else named.model
    return default.copy_modified(args=[fields_row(api, fields), grouped,
                                       typed_dict(api, written)])


def having(ctx: MethodContext) -> Type:
    """`.having(...)`: the where language over the labels and the group columns."""
    assert isinstance(ctx.api, TypeChecker)
    scope = group_scope(ctx.api, ctx.type, "having()")
    if scope is not None:
        for condition in arg(ctx, "conditions"):
            check_condition(scope, condition)
    return ctx.default_return_type
