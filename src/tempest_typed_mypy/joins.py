"""Joins: `join(User, "user").left_join(Order, "order", {"user.id": "order.user_id"})`.

Each call adds its alias to the row type, `Join[Row[TypedDict({'user': User, 'order': Order |
None})]]`, so `row.order` is `Order | None` and every later call (where, order_by, aggregate,
as_subquery) reads the aliases back from the statement's type. The hooks of the calls that
join and grouped statements share (where, order_by, as_subquery) live here too, and the locks
of a join (`for_update(of=[...])`).
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import DictExpr, Expression, ListExpr, TupleExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    Type,
    TypeOfAny,
    TypeType,
    get_proper_type,
)

from .lib.conditions import check_condition
from .lib.families import compared
from .lib.messages import COLUMN, PLAIN_NAME, VALUE, listed, near, plain_name_problem
from .lib.metadata import ModelFacts, model_facts
from .lib.names import NAMED_SELECT_CLASS
from .lib.row_types import aliases_of, fields_of, fields_row, labels_of, row_facts
from .lib.scopes import JoinScope, Scope, group_scope, source_scope, subquery_model
from .lib.syntax import arg, literal_str

__all__ = [
    "add_inner", "add_left", "as_subquery", "lock_share", "lock_update", "order_by", "start",
    "where",
]


def _model(ctx: MethodContext | FunctionContext, index: int) -> ModelFacts | None:
    """The model class given as the `index`-th argument."""
    if len(ctx.arg_types) <= index or not ctx.arg_types[index]:
        return None
    proper = get_proper_type(ctx.arg_types[index][0])
    if isinstance(proper, CallableType) and proper.is_type_obj():
        return model_facts(proper.ret_type)
    if isinstance(proper, TypeType):
        return model_facts(proper.item)
    if isinstance(proper, Instance) and proper.type.fullname == NAMED_SELECT_CLASS \
            and proper.args:
        # sql.cte(...): its rows' fields; a recursive step's table of a whole-model base:
        # that model's columns
        return row_facts(proper.args[0]) or model_facts(proper.args[0])
    return None


def _untyped(api: TypeChecker, default: Type) -> Type:
    """A join that took a table whose columns its type does not say (a named select typed
    `NamedSelect[Row]`, or Any): its aliases are no longer known, so its names go unchecked
    (keeping the aliases so far would report the new one's columns as unknown)."""
    proper = get_proper_type(default)
    if isinstance(proper, Instance) and len(proper.args) == 1:
        return proper.copy_modified(args=[AnyType(TypeOfAny.special_form)])
    return default


def _alias(api: TypeChecker, expr: Expression, taken: list[str], call: str) -> str | None:
    """The alias a literal names, reporting an invalid or a repeated one."""
    alias = literal_str(api, expr)
    if alias is None:
        return None
    problem = plain_name_problem(alias)
    if problem is not None:
        api.fail(f'{call}: the alias "{alias}" {problem}; an alias becomes a row field '
                 f"(row.alias) and qualifies columns ('alias.column'): write {PLAIN_NAME}",
                 expr, code=VALUE)
        return None
    if alias in taken:
        api.fail(f'{call}: the alias "{alias}" is already used (aliases: {listed(taken)}); '
                 "aliases are unique within a statement (a self-join gives each side its own)",
                 expr, code=VALUE)
        return None
    return alias


def _with_aliases(api: TypeChecker, default: Type, aliases: dict[str, Type]) -> Type:
    proper = get_proper_type(default)
    if isinstance(proper, Instance) and len(proper.args) == 1:
        return proper.copy_modified(args=[fields_row(api, aliases)])
    return default


def start(ctx: FunctionContext) -> Type:
    """`join(M, "alias")`: rows keyed by the alias."""
    facts = _model(ctx, 0)
    if facts is None or len(ctx.args) < 2 or not ctx.args[1]:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    alias = _alias(ctx.api, ctx.args[1][0], [], f"join({facts.name}, ...)")
    if alias is None:
        return ctx.default_return_type
    return _with_aliases(ctx.api, ctx.default_return_type, {alias: facts.model})


def _add(ctx: MethodContext, kind: str) -> Type:
    proper = get_proper_type(ctx.type)
    aliases = aliases_of(proper.args[0]) if isinstance(proper, Instance) and proper.args else None
    facts = _model(ctx, 0)
    alias_args = arg(ctx, "alias")
    if aliases is None or not alias_args:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker) and isinstance(proper, Instance)
    if facts is None:
        return _untyped(ctx.api, ctx.default_return_type)
    api = ctx.api
    call = f"join({', '.join(aliases)}).{kind}_join()"
    alias = _alias(api, alias_args[0], list(aliases), call)
    if alias is None:
        return ctx.default_return_type
    before = JoinScope(api, aliases, f"{call} on")
    after = JoinScope(api, {**aliases, alias: (facts, kind == "left")}, f"{call} on")
    for on in arg(ctx, "on"):
        _check_on(before, after, alias, on, call)
    model: Type = facts.left_joined if kind == "left" else facts.model
    items: dict[str, Type] = {a: f.model for a, (f, _) in aliases.items()}
    fields = fields_of(proper.args[0])
    if fields is not None:
        items = dict(fields.items)
    items[alias] = model
    return _with_aliases(api, ctx.default_return_type, items)


def _check_on(before: JoinScope, after: JoinScope, alias: str, on: Expression,
              call: str) -> None:
    """Each `on` pair: a column joined so far, equal to a column of the new alias."""
    if not isinstance(on, DictExpr):
        return
    if not on.items:
        first = next(iter(before.aliases))
        before.fail(f"{call}: `on` maps columns of the tables joined so far to columns of "
                    f'"{alias}", e.g. {{"{first}.id": "{alias}.{first}_id"}}', on, VALUE)
        return
    where = f"{call} on"
    for key, value in on.items:
        if key is None:
            continue
        left = before.column(key)
        right_name = literal_str(before.api, value)
        if right_name is None:
            continue
        if not right_name.startswith(alias + "."):
            left_name = literal_str(before.api, key)
            before.fail(f'{call}: in `on`, "{left_name}" maps to a column of the new table '
                        f'"{alias}", written "{alias}.column", got "{right_name}"', value,
                        COLUMN)
            continue
        right = after.lookup(right_name, value)
        if left is not None and right is not None:
            compared(before, left, right, f'"{right_name}"', where, value)


def _scope(ctx: MethodContext, where: str, grouped: bool) -> Scope | None:
    assert isinstance(ctx.api, TypeChecker)
    if grouped:
        scope = group_scope(ctx.api, ctx.type, where)
        if scope is not None:
            return scope
    return source_scope(ctx.api, ctx.type, where)


def add_inner(ctx: MethodContext) -> Type:
    """`.inner_join(M, "alias", on)`: the alias is added as `M`."""
    return _add(ctx, "inner")


def add_left(ctx: MethodContext) -> Type:
    """`.left_join(M, "alias", on)`: the alias is added as `M | None`."""
    return _add(ctx, "left")


def where(ctx: MethodContext) -> Type:
    """`.where(...)` on a join, or on a grouped statement (the names before grouping)."""
    scope = _scope(ctx, "where()", grouped=False)
    if scope is not None:
        for condition in arg(ctx, "conditions"):
            check_condition(scope, condition)
    return ctx.default_return_type


def order_by(ctx: MethodContext) -> Type:
    """`.order_by("alias.column")`; after aggregate(), a group column or a label."""
    scope = _scope(ctx, "order_by()", grouped=True)
    proper = get_proper_type(ctx.type)
    labels = labels_of(proper.args[0]) if (
        isinstance(scope, JoinScope) and isinstance(proper, Instance) and proper.args) else {}
    if scope is not None:
        for column in arg(ctx, "column"):
            if literal_str(scope.api, column) not in labels:
                scope.column(column)
    return ctx.default_return_type


def as_subquery(ctx: MethodContext) -> Type:
    """`.as_subquery("alias.column")` (or a label): a `Subquery` typed by that column."""
    scope = _scope(ctx, "as_subquery()", grouped=True)
    column = arg(ctx, "column")
    proper = get_proper_type(ctx.default_return_type)
    if scope is None or not column or not isinstance(proper, Instance) or len(proper.args) != 2:
        return ctx.default_return_type
    receiver = get_proper_type(ctx.type)
    if isinstance(scope, JoinScope) and isinstance(receiver, Instance) and receiver.args:
        label = labels_of(receiver.args[0]).get(literal_str(scope.api, column[0]) or "")
        model = subquery_model(ctx.type)
        if label is not None:  # a computed column's label (add_columns())
            return proper if model is None else proper.copy_modified(args=[model, label])
    col = scope.column(column[0])
    model = subquery_model(ctx.type)
    if col is None or model is None:
        return ctx.default_return_type
    if isinstance(scope, JoinScope):
        name = literal_str(scope.api, column[0]) or ""
        entry = scope.aliases.get(name.partition(".")[0])
        if entry is not None:
            model = entry[0].model
    return proper.copy_modified(args=[model, col.type])


def _locked(ctx: MethodContext, mode: str) -> Type:
    """`for_update(of=["order"])`: each name is an alias of the join."""
    proper = get_proper_type(ctx.type)
    aliases = aliases_of(proper.args[0]) if isinstance(proper, Instance) and proper.args else None
    if aliases is None:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    known = listed(aliases)
    for of in arg(ctx, "of"):
        items = of.items if isinstance(of, ListExpr | TupleExpr) else [of]
        for item in items:
            name = literal_str(ctx.api, item)
            if name is not None and name not in aliases:
                guess = near(name, aliases)
                hint = f'; did you mean "{guess}"?' if guess else ""
                ctx.api.fail(f'join({", ".join(aliases)}): for_{mode}(of=["{name}"]) names no '
                             f"alias of this join{hint} (aliases: {known})", item, code=COLUMN)
    return ctx.default_return_type


def lock_update(ctx: MethodContext) -> Type:
    """`.for_update(of=[...])` on a join."""
    return _locked(ctx, "update")


def lock_share(ctx: MethodContext) -> Type:
    """`.for_share(of=[...])` on a join."""
    return _locked(ctx, "share")
