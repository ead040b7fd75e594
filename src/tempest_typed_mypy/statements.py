"""The single-model statements' hooks (select, insert, update, delete): the model is read from
the statement's type, each argument is checked where it was written, and partial rows get
their precise type."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, DictExpr, Expression, ListExpr, MemberExpr, NameExpr, TupleExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import CallableType, Instance, LiteralType, Type, get_proper_type

from tempest_typed._wording import LOCK_NOT_IN_SELECT, LOCK_OF_ONE_TABLE, NO_ROWS

from .lib.conditions import check_assigned, check_condition
from .lib.messages import INSERT, VALUE, listed
from .lib.metadata import ModelFacts, model_facts
from .lib.names import NAMED_SELECT_CLASS
from .lib.row_types import labels_of, named_select_facts, row_facts, row_type
from .lib.scopes import Scope
from .lib.syntax import arg, literal_str
from .lib.tables import table_of

__all__ = [
    "as_subquery", "conflict_nothing", "conflict_update", "insert_values", "lock_targets", "order_by",
    "returning", "row_count", "row_offset", "select_columns", "update_set", "where",
]

#: the largest count limit() and offset() take, the run time's INT_MAX (64-bit integers;
#: tests/typecheck/test_runtime_rules.py holds them equal)
INT_MAX = 2**63 - 1


def _model(typ: Type) -> ModelFacts | None:
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.args:
        return model_facts(proper.args[0]) or named_select_facts(proper)
    return None


def _scope(ctx: MethodContext, where: str, allow_excluded: bool = False) -> Scope | None:
    facts = _model(ctx.type)
    if facts is None:
        return None
    assert isinstance(ctx.api, TypeChecker)
    return Scope(ctx.api, facts, where, allow_excluded)


def _with_rows(default: Type, row: Type) -> Type:
    proper = get_proper_type(default)
    if isinstance(proper, Instance) and len(proper.args) == 2:
        return proper.copy_modified(args=[proper.args[0], row])
    return default


def select_columns(ctx: FunctionContext) -> Type:
    """`select(M, ["a", "b"])`: each column checked; rows are `Row` of exactly those columns.

    `select(cte, ["a"])` is typed `Select[NamedSelect[Row[...]], Row[...]]`: the named
    select's rows first, which where() and order_by() take every column of, then the rows
    fetched."""
    columns = ctx.args[1] if len(ctx.args) > 1 else []  # positional-only: no name to match
    if not columns:
        return ctx.default_return_type
    source = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] \
        else None
    named = source if isinstance(source, Instance) and \
        source.type.fullname == NAMED_SELECT_CLASS and source.args else None
    facts = row_facts(named.args[0]) if named is not None else _model(ctx.default_return_type)
    if facts is None:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    names = Scope(ctx.api, facts, "select()").columns(columns[0])
    if names is None:
        return ctx.default_return_type
    rows = _with_rows(ctx.default_return_type, row_type(ctx.api, facts, names))
    proper = get_proper_type(rows)
    if named is not None and isinstance(proper, Instance):
        return proper.copy_modified(args=[named, *proper.args[1:]])
    return rows


def where(ctx: MethodContext) -> Type:
    """`.where(...)` on a select, update or delete."""
    scope = _scope(ctx, "where()")
    if scope is not None:
        for condition in arg(ctx, "conditions"):
            check_condition(scope, condition)
    return ctx.default_return_type


def order_by(ctx: MethodContext) -> Type:
    """`.order_by("column")`."""
    scope = _scope(ctx, "order_by()")
    if scope is not None:
        labels = _labels(ctx.type)
        for column in arg(ctx, "column"):
            if literal_str(scope.api, column) not in labels:
                scope.column(column)
    return ctx.default_return_type


def _labels(typ: Type) -> dict[str, Type]:
    """The computed columns' labels of a select (after add_columns()), which order_by()
    takes beside the model's columns."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and len(proper.args) == 2:
        return labels_of(proper.args[1])
    return {}


def as_subquery(ctx: MethodContext) -> Type:
    """`.as_subquery("column")`: a `Subquery` typed by that column."""
    scope = _scope(ctx, "as_subquery()")
    column = arg(ctx, "column")
    if scope is None or not column:
        return ctx.default_return_type
    proper = get_proper_type(ctx.default_return_type)
    col_type = _labels(ctx.type).get(literal_str(scope.api, column[0]) or "")
    if col_type is None:  # not a computed column's label
        col = scope.column(column[0])
        col_type = col.type if col is not None else None
    if col_type is None or not isinstance(proper, Instance) or len(proper.args) != 2:
        return ctx.default_return_type
    return proper.copy_modified(args=[proper.args[0], col_type])


def returning(ctx: MethodContext) -> Type:
    """`.returning("a", "b")`: each column checked; rows are `Row` of exactly those columns."""
    scope = _scope(ctx, "returning()")
    exprs = [e for args in ctx.args for e in args]
    if scope is None or not exprs:
        return ctx.default_return_type
    names: list[str] = []
    seen: set[str] = set()
    for expr in exprs:
        col = scope.column(expr)
        if col is None:
            return ctx.default_return_type
        scope.once(col, seen, expr)
        names.append(col.attr)
    return _with_rows(ctx.default_return_type, row_type(scope.api, scope.facts, names))


def _assignments(scope: Scope, mapping: Expression, sets: bool = False) -> list[str] | None:
    """Check `{column: value}`; the names it sets, or None when they are not all known.
    `sets`: the columns are set (an update's, an upsert's), not inserted."""
    if not isinstance(mapping, DictExpr):
        return None
    if sets and not mapping.items:  # values({}) is a row of defaults; set({}) sets nothing
        scope.fail(f"{scope.facts.name}: {scope.where} needs at least one column to set", mapping,
                   VALUE)
        return None
    names: list[str] | None = []
    for key, value in mapping.items:
        if key is None:
            names = None
            continue
        col = scope.column(key)
        if col is None:
            names = None
            continue
        if names is not None:
            names.append(col.attr)
        check_assigned(scope, col, value)  # a value set or inserted: a column is assigned
    return names


def update_set(ctx: MethodContext) -> Type:
    """`update(M).set({...})`."""
    scope = _scope(ctx, "set()")
    if scope is not None:
        for mapping in arg(ctx, "values"):
            _assignments(scope, mapping, sets=True)
    return ctx.default_return_type


def insert_values(ctx: MethodContext) -> Type:
    """`insert(M).values({...})`, or a list of dicts: keys, values and required columns."""
    scope = _scope(ctx, "values()")
    if scope is None:
        return ctx.default_return_type
    for rows in arg(ctx, "rows"):
        if isinstance(rows, ListExpr | TupleExpr) and not rows.items:
            scope.fail(f"insert({scope.facts.name}).values([]) {NO_ROWS}", rows, VALUE)
        items = rows.items if isinstance(rows, ListExpr | TupleExpr) else [rows]
        for row in items:
            names = _assignments(scope, row)
            if names is None:
                continue
            missing = [c.attr for c in scope.facts.columns.values()
                       if c.required and c.attr not in names]
            if missing:
                scope.fail(f"insert({scope.facts.name}).values() is missing required column(s) "
                           f"{listed(missing)}: they are not nullable and have no default", row,
                           INSERT)
    return ctx.default_return_type


def conflict_nothing(ctx: MethodContext) -> Type:
    """`.on_conflict_do_nothing(target, where=...)`."""
    label = "on_conflict_do_nothing()"
    scope = _scope(ctx, label)
    if scope is None:
        return ctx.default_return_type
    for target in arg(ctx, "target"):
        scope.columns(target, once=True)
    inner = Scope(scope.api, scope.facts, f"{label} where=")
    for condition in arg(ctx, "where"):
        check_condition(inner, condition)
    return ctx.default_return_type


def conflict_update(ctx: MethodContext) -> Type:
    """`.on_conflict_do_update(target, set, index_where=..., update_where=...)`."""
    label = "on_conflict_do_update()"
    scope = _scope(ctx, label)
    if scope is None:
        return ctx.default_return_type
    for target in arg(ctx, "target"):
        scope.columns(target, once=True)
    assign = Scope(scope.api, scope.facts, f"{label} set", allow_excluded=True)
    for mapping in arg(ctx, "set"):
        _assignments(assign, mapping, sets=True)
    for name in ("index_where", "update_where"):
        inner = Scope(scope.api, scope.facts, f"{label} {name}=")
        for condition in arg(ctx, name):
            check_condition(inner, condition)
    return ctx.default_return_type


def _literal_int(typ: Type) -> int | None:
    """The int (or bool) a literal argument's type says, or None."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.last_known_value is not None:
        proper = proper.last_known_value
    if isinstance(proper, LiteralType) and isinstance(proper.value, int):
        return proper.value
    return None


def row_offset(ctx: FunctionContext) -> Type:
    """`sql.lag(c, n)` / `sql.lead(c, n)`: a literal `n` from 0 (not a bool), as the builder
    checks it."""
    name = ctx.context.callee.name if isinstance(ctx.context, CallExpr) and isinstance(
        ctx.context.callee, MemberExpr | NameExpr) else "lag"
    for typ, expr in zip(ctx.arg_types[1] if len(ctx.arg_types) > 1 else [],
                         ctx.args[1] if len(ctx.args) > 1 else [], strict=False):
        n = _literal_int(typ)
        if n is not None and (isinstance(n, bool) or not 0 <= n <= 2**31 - 1):
            ctx.api.fail(f"sql.{name}(n=...) takes an int >= 0, got {n!r}", expr, code=VALUE)
    return ctx.default_return_type


def row_count(ctx: MethodContext) -> Type:
    """`.limit(n)` / `.offset(n)`: a literal count must be an int from 0 to INT_MAX (not a
    bool), as the builder checks it."""
    name = ctx.context.callee.name if isinstance(ctx.context, CallExpr) and isinstance(
        ctx.context.callee, MemberExpr) else "limit"
    for typ, expr in zip(ctx.arg_types[0] if ctx.arg_types else [],
                         ctx.args[0] if ctx.args else [], strict=False):
        proper = get_proper_type(typ)
        if isinstance(proper, Instance) and proper.last_known_value is not None:
            proper = proper.last_known_value
        if not isinstance(proper, LiteralType) or not isinstance(proper.value, int):
            continue
        n = proper.value
        if isinstance(n, bool) or not 0 <= n <= INT_MAX:
            ctx.api.fail(f"{name}() takes an int >= 0 (and <= {INT_MAX}), got {n!r}", expr,
                         code=VALUE)
    return ctx.default_return_type


def lock_targets(ctx: MethodContext) -> None:
    """`select(M).for_update(of=[...])`/`for_share(of=[...])`: `of` names M, the one table the
    select reads, as the run time checks (a join's `of` takes its aliases: joins.py)."""
    receiver = get_proper_type(ctx.type)
    context = ctx.context
    if not (isinstance(receiver, Instance) and receiver.args and isinstance(context, CallExpr)
            and isinstance(context.callee, MemberExpr)):
        return
    facts = model_facts(receiver.args[0])
    if facts is None:
        return
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    mode = context.callee.name.removeprefix("for_")
    for of in arg(ctx, "of"):
        for item in of.items if isinstance(of, ListExpr | TupleExpr) else [of]:
            name = literal_str(api, item)
            if name is not None:
                api.fail(f'{facts.name}: for_{mode}(of=["{name}"]) {LOCK_OF_ONE_TABLE}'
                         f"{facts.name}]", item, code=VALUE)
                continue
            typ = get_proper_type(api.lookup_type_or_none(item))
            other = model_facts(typ.ret_type) if isinstance(typ, CallableType) \
                and typ.is_type_obj() else None
            if other is not None and other.info is not facts.info:
                table = table_of(facts.info)
                where = f" (FROM {table})" if table is not None else ""
                api.fail(f"{facts.name}: for_{mode}(of=[{other.name}]) {LOCK_NOT_IN_SELECT}"
                         f"{where}", item, code=VALUE)
