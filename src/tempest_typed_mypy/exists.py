"""`sql.exists(x)` and `sql.not_exists(x)`: x is a statement (a select, a join, a grouped
select) or an as_subquery(); the correlation of the subquery written in place is checked by
the condition that holds it (lib/conditions.py)."""

from __future__ import annotations

from mypy.plugin import FunctionContext
from mypy.types import AnyType, Instance, Type, get_proper_type

from .lib.messages import VALUE, describe
from .lib.names import QUERY, SUBQUERY

__all__ = ["check_exists", "check_not_exists"]


def _is_query(typ: Type) -> bool:
    proper = get_proper_type(typ)
    if isinstance(proper, AnyType):
        return True
    return isinstance(proper, Instance) and (proper.type.has_base(QUERY)
                                             or proper.type.fullname == SUBQUERY)


def _exists(ctx: FunctionContext, name: str) -> Type:
    if ctx.args and ctx.args[0] and ctx.arg_types[0]:
        typ = ctx.arg_types[0][0]
        if not _is_query(typ):
            ctx.api.fail(f"sql.{name}() takes a select, a join or an as_subquery(...), got "
                         f"{describe(typ, ctx.api.options)}", ctx.args[0][0], code=VALUE)
    return ctx.default_return_type


def check_exists(ctx: FunctionContext) -> Type:
    """`sql.exists(x)`: x is a select, a join or an as_subquery()."""
    return _exists(ctx, "exists")


def check_not_exists(ctx: FunctionContext) -> Type:
    """`sql.not_exists(x)`: x is a select, a join or an as_subquery()."""
    return _exists(ctx, "not_exists")
