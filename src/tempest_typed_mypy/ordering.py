"""What a select compares: order_by() and distinct() never compare a JSON column, and a
distinct select is ordered only by what it fetches, whichever of the two is called first.

The columns fetched are read from the statement's type (`Select[M, M]` fetches every column,
`Select[M, Row[...]]` those of its row, a join's row its aliases' columns and its labels);
whether a statement is distinct, and what it was ordered by, from its chain of calls as
written (`select(M, ["a"]).distinct().order_by("b")`, names followed to their one
assignment). Unknown names are reported by the statements' own hooks, not here.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Context, Expression, MemberExpr
from mypy.plugin import MethodContext
from mypy.types import Instance, Type, get_proper_type

from tempest_typed._wording import (
    DISTINCT_NOT_OVER_JSON,
    DISTINCT_ROW_STANDS_FOR,
    JSON_NOT_COMPARED,
    NOT_ORDERED_BY_JSON,
)

from .lib.definitions import chain
from .lib.messages import COMPARE, OPERATOR, column_name
from .lib.metadata import Column, column_kind, model_facts
from .lib.names import GROUPED, JOIN, SELECT
from .lib.row_types import aliases_of, fields_of, labels_of, named_select_facts, row_facts
from .lib.scopes import optional
from .lib.syntax import arg, literal_str

__all__ = ["distinct", "lock_rule", "order_by"]


class _Fetched:
    """A select or join as order_by() and distinct() see it: how messages name it, the
    columns its names mean, and the names it fetches (None: every column)."""

    def __init__(self, label: str, columns: dict[str, Column], fetched: list[str] | None,
                 labels: dict[str, Type]) -> None:
        self.label = label
        self.columns = columns
        self.fetched = fetched
        self.labels = labels


def _statement(typ: Type) -> _Fetched | None:
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance) or not proper.args:
        return None
    if proper.type.fullname == SELECT and len(proper.args) == 2:
        facts = model_facts(proper.args[0]) or named_select_facts(proper)
        if facts is None:
            return None
        rows = proper.args[1]
        labels = labels_of(rows)
        if model_facts(rows) is not None:
            return _Fetched(facts.name, dict(facts.columns), None, labels)
        fields = fields_of(rows)
        if fields is None:
            return None
        return _Fetched(facts.name, dict(facts.columns), list(fields.items), labels)
    if proper.type.fullname == JOIN:
        aliases = aliases_of(proper.args[0])
        if aliases is None:
            return None
        columns = {f"{alias}.{attr}": optional(col) if left else col
                   for alias, (facts, left) in aliases.items()
                   for attr, col in facts.columns.items()}
        labels = labels_of(proper.args[0])
        return _Fetched(f"join({', '.join(aliases)})", columns, [*columns, *labels], labels)
    return None


def _receiver(ctx: MethodContext) -> Expression | None:
    context = ctx.context
    if isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr):
        return context.callee.expr
    return None


def _not_fetched(api: TypeChecker, statement: _Fetched, name: str | None,
                 context: Context) -> None:
    if name is None or statement.fetched is None or name in statement.fetched:
        return
    api.fail(f'{statement.label}: distinct() with order_by("{name}"), which the select does '
             f'not fetch: {DISTINCT_ROW_STANDS_FOR}; select "{name}" too, or drop distinct()',
             context, code=COMPARE)


def order_by(ctx: MethodContext) -> None:
    """`.order_by("column")`: not a JSON column, and on a distinct select a fetched one."""
    statement = _statement(ctx.type)
    if statement is None:
        return
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    receiver = _receiver(ctx)
    distinct = receiver is not None and any(
        call.callee.name == "distinct" for call in chain(api, receiver)
        if isinstance(call.callee, MemberExpr))
    for column in arg(ctx, "column"):
        name = literal_str(api, column)
        if name is None or name in statement.labels:
            continue
        col = statement.columns.get(name)
        if col is None:
            continue  # unknown: the statement's hook reports it
        if col.kind == "json":
            api.fail(f'{statement.label}.order_by("{name}"): {column_name(col)} '
                     f"{JSON_NOT_COMPARED}; {NOT_ORDERED_BY_JSON}", column, code=OPERATOR)
        elif distinct:
            _not_fetched(api, statement, name, column)


def distinct(ctx: MethodContext) -> None:
    """`.distinct()`: no JSON column fetched, and no order_by() of a column not fetched."""
    statement = _statement(ctx.type)
    if statement is None:
        return
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    fetched = list(statement.columns) if statement.fetched is None else statement.fetched
    for name in fetched:
        col = statement.columns.get(name)
        label = statement.labels.get(name)
        kind = col.kind if col is not None else (
            column_kind(label)[0] if label is not None else None)
        if kind == "json":
            api.fail(f'{statement.label}.distinct(): "{name}" {JSON_NOT_COMPARED}, '
                     f"{DISTINCT_NOT_OVER_JSON}", ctx.context, code=OPERATOR)
            return  # the run time names the first
    receiver = _receiver(ctx)
    if receiver is None:
        return
    for call in reversed(chain(api, receiver)):
        if not (isinstance(call.callee, MemberExpr) and call.callee.name == "order_by"
                and call.args):
            continue
        ordered = literal_str(api, call.args[0])
        if ordered in statement.columns and ordered not in statement.labels:
            _not_fetched(api, statement, ordered, ctx.context)


_LOCKS = frozenset({"for_update", "for_share"})
_WHOLE_ROWS = frozenset({"distinct", "aggregate"})


def lock_rule(ctx: MethodContext) -> None:
    """A lock (`for_update()`/`for_share()`) with `distinct()` or `aggregate()`, in either
    order: no database locks an aggregated or distinct row (the run time's DialectError, on
    every dialect). Reported at the call that makes the pair."""
    context = ctx.context
    if not (isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr)):
        return
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    called = context.callee.name
    earlier = [c.callee.name for c in chain(api, context.callee.expr)
               if isinstance(c.callee, MemberExpr)]
    proper = get_proper_type(ctx.type)
    grouped = isinstance(proper, Instance) and proper.type.fullname == GROUPED
    lock: str | None
    if called in _LOCKS:
        what = "aggregate()" if grouped or "aggregate" in earlier else (
            "distinct()" if "distinct" in earlier else None)
        lock = called
    else:
        lock = next((n for n in earlier if n in _LOCKS), None)
        what = f"{called}()" if lock is not None else None
    if what is None or lock is None:
        return
    label = _label(proper)
    api.fail(f"{label}: {lock}() with {what}: an aggregated or distinct row is no row of the "
             "table to lock; lock the rows in a separate select (in the same transaction), "
             "then aggregate", context, code=OPERATOR)


def _label(proper: Type) -> str:
    """How the run time names the statement: `select(Order)`, `join(u, o)`."""
    if isinstance(proper, Instance) and proper.type.fullname == GROUPED and len(proper.args) > 1:
        proper = get_proper_type(proper.args[1])
        facts = model_facts(proper) or row_facts(proper)  # a model, or a named select's Row
        aliases = aliases_of(proper)
        if aliases is not None:
            return f"join({', '.join(aliases)})"
        return f"select({facts.name})" if facts is not None else "aggregate()"
    statement = _statement(proper)
    if statement is None:
        return "the statement"
    return statement.label if statement.label.startswith("join(") \
        else f"select({statement.label})"
