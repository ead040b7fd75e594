"""A column's server default: `column(server_default=sql.now())` is a datetime column's only.

The current timestamp is a datetime; the run time refuses it as the server default of a
column of any other type (model.py, `_check_server_default`). The library types that call
`datetime`, so a checker refuses it for an int or a str column by the annotation; a date
column (a datetime is a date to a checker) needs this check, and the others get its message.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import AssignmentStmt, CallExpr, NameExpr, Statement
from mypy.plugin import FunctionContext
from mypy.types import AnyType, Instance, Type, TypeOfAny, get_proper_type

from .lib.messages import VALUE, describe
from .lib.metadata import model_facts
from .lib.names import NOW

__all__ = ["check_server_default"]


def check_server_default(ctx: FunctionContext) -> Type:
    """`column(server_default=sql.now())` in a model's class body: a datetime column."""
    call = ctx.context
    if not isinstance(call, CallExpr) or "server_default" not in call.arg_names:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    given = call.args[call.arg_names.index("server_default")]
    typ = get_proper_type(api.lookup_type_or_none(given))
    if not (isinstance(typ, Instance) and typ.type.fullname == NOW):
        return ctx.default_return_type
    info = api.scope.active_class()
    facts = model_facts(info) if info is not None else None
    attr = _attr_of(call, info.defn.defs.body) if info is not None else None
    col = facts.columns.get(attr) if facts is not None and attr is not None else None
    if facts is None or col is None or col.kind in ("datetime", "any"):
        return ctx.default_return_type
    api.fail(f"{facts.name}.{col.attr} server_default=sql.now(): the current timestamp is a "
             f"datetime, and {facts.name}.{col.attr} is {describe(col.type, api.options)}; "
             "give a literal of the column's type, sql.raw()/sql.expr(), or make the column a "
             "datetime", given, code=VALUE)
    return AnyType(TypeOfAny.from_error)  # reported here, not again as the assignment's


def _attr_of(call: CallExpr, body: list[Statement]) -> str | None:
    """The attribute a class body's statement `attr: T = column(...)` assigns the call to."""
    for stmt in body:
        if (isinstance(stmt, AssignmentStmt) and stmt.rvalue is call and stmt.lvalues
                and isinstance(stmt.lvalues[0], NameExpr)):
            return stmt.lvalues[0].name
    return None
