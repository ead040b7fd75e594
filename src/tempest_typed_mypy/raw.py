"""`sql.raw(x)` takes a literal string: anything computed is the door to SQL injection."""

from __future__ import annotations

from mypy.nodes import StrExpr
from mypy.plugin import FunctionContext
from mypy.types import Instance, LiteralType, Type, get_proper_type

from .lib.messages import RAW, describe

__all__ = ["check_raw"]


def check_raw(ctx: FunctionContext) -> Type:
    """Report `sql.raw(x)` unless `x` is a string literal (or a name typed as one)."""
    if not ctx.args or not ctx.args[0]:
        return ctx.default_return_type
    arg = ctx.args[0][0]
    if isinstance(arg, StrExpr):
        return ctx.default_return_type
    typ = get_proper_type(ctx.arg_types[0][0])
    if isinstance(typ, Instance) and typ.last_known_value is not None:
        typ = typ.last_known_value
    if isinstance(typ, LiteralType) and isinstance(typ.value, str):
        return ctx.default_return_type
    ctx.api.fail(
        f"sql.raw() takes a literal string, got {describe(ctx.arg_types[0][0], ctx.api.options)}"
        ': pass values as parameters with sql.expr("... {} ...", value)', arg, code=RAW)
    return ctx.default_return_type
