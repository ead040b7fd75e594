"""Computed columns: `add_columns({label: expression})` on a select or a join, and a join's
`project({...})`.

Rows are `Row`s of the fetched fields, then the labels, each typed by its expression (see
lib/computed.py): a whole-model select's columns by attribute, a partial select's fetched
columns, a join's aliases (a left-joined one `| None`); `project()` keeps the labels only.
The labels follow the aggregate rules: identifiers, no clash with a fetched name.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, DictExpr, MemberExpr
from mypy.plugin import MethodContext
from mypy.types import Instance, Type, get_proper_type

from .lib.computed import computed_type
from .lib.conditions import check_condition
from .lib.definitions import chain
from .lib.messages import PLAIN_NAME, VALUE, plain_name_problem
from .lib.metadata import instance, model_facts
from .lib.names import NAMED_SELECT_CLASS
from .lib.row_types import fields_of, fields_row, named_select_facts
from .lib.scopes import JoinScope, Scope, source_scope
from .lib.syntax import arg, literal_str

__all__ = ["join_columns", "join_project", "select_columns"]


def _labeled(ctx: MethodContext, scope: Scope, fetched: dict[str, Type],
             keep: bool = True) -> Type:
    """The statement's type with rows of `fetched` and then the labels of the dict given
    (`keep`: add_columns(), which a statement takes once; not a join's project())."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    given = arg(ctx, "columns")
    default = get_proper_type(ctx.default_return_type)
    if not given or not isinstance(given[0], DictExpr) or not isinstance(default, Instance) \
            or not default.args:
        return ctx.default_return_type
    name = scope.label if isinstance(scope, JoinScope) else scope.facts.name
    context = ctx.context
    if keep and isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr) and any(
            isinstance(c.callee, MemberExpr) and c.callee.name == "add_columns"
            for c in chain(api, context.callee.expr)):
        scope.fail(f"{name}: add_columns() is called once per statement: pass every computed "
                   "column in one dict", context, VALUE)
    fields = dict(fetched)
    complete = True
    for key, value in given[0].items:
        label = literal_str(api, key) if key is not None else None
        if label is None or key is None:
            complete = False
            continue
        problem = plain_name_problem(label)
        if problem is not None:
            scope.fail(f'{name}: add_columns() label "{label}" {problem}; a label becomes a '
                       f"row field (row.label): write {PLAIN_NAME}", key, VALUE)
            continue
        if label in fetched:
            scope.fail(f'{name}: add_columns() label "{label}" is also the name of a fetched '
                       "column (or alias); choose another label", key, VALUE)
            continue
        fields[label] = computed_type(scope, label, value, check_condition)
    if not complete:
        return ctx.default_return_type
    row = fields_row(api, fields)
    return default.copy_modified(args=[*default.args[:-1], row])


def select_columns(ctx: MethodContext) -> Type:
    """`select(M[, columns]).add_columns({...})`: the fetched columns, then the labels."""
    assert isinstance(ctx.api, TypeChecker)
    receiver = get_proper_type(ctx.type)
    if not isinstance(receiver, Instance) or len(receiver.args) != 2:
        return ctx.default_return_type
    named = named_select_facts(receiver)
    facts = model_facts(receiver.args[0]) or named
    if facts is None:
        return ctx.default_return_type
    rows = receiver.args[1]
    if model_facts(rows) is not None:
        fetched = {name: col.type for name, col in facts.columns.items()}
    else:
        partial = fields_of(rows)
        if partial is None:
            return ctx.default_return_type
        fetched = dict(partial.items)
    typ = _labeled(ctx, Scope(ctx.api, facts, "add_columns()"), fetched)
    proper = get_proper_type(typ)
    if named is None or not isinstance(proper, Instance) or len(proper.args) != 2:
        return typ
    # `Select[NamedSelect[Row[columns]], Row[columns and labels]]`, as select(cte, [...]) is
    # typed: where() takes the named select's columns, not the labels
    assert isinstance(ctx.api, TypeChecker)
    source = instance(ctx.api.modules, NAMED_SELECT_CLASS, [named.model])
    return proper.copy_modified(args=[source, proper.args[1]])


def _join(ctx: MethodContext, keep: bool) -> Type:
    assert isinstance(ctx.api, TypeChecker)
    receiver = get_proper_type(ctx.type)
    scope = source_scope(ctx.api, ctx.type, "add_columns()")
    if not isinstance(scope, JoinScope) or not isinstance(receiver, Instance) \
            or not receiver.args:
        return ctx.default_return_type
    fields = fields_of(receiver.args[0])
    if fields is None:
        return ctx.default_return_type
    fetched = {alias: fields.items[alias] for alias in scope.aliases} if keep else {}
    return _labeled(ctx, scope, fetched, keep)


def join_columns(ctx: MethodContext) -> Type:
    """`join(...).add_columns({...})`: the aliases' models, then the labels."""
    return _join(ctx, keep=True)


def join_project(ctx: MethodContext) -> Type:
    """`join(...).project({...})`: flat rows of the labels."""
    return _join(ctx, keep=False)
