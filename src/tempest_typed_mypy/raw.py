"""`sql.raw(x)` takes a literal string: anything computed is the door to SQL injection; and
`sql.expr(template, *values)` of a literal template is checked as the builder checks it."""

from __future__ import annotations

from mypy.nodes import ARG_POS, StrExpr
from mypy.plugin import FunctionContext
from mypy.types import Instance, LiteralType, Type, get_proper_type

from .lib.messages import RAW, describe

__all__ = ["check_expr", "check_raw"]


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


def check_expr(ctx: FunctionContext) -> Type:
    """`sql.expr("...{}...", value)` of a literal template: its placeholders (`{}` only, a
    brace doubled, none in quotes) and one value for each, as the builder checks them."""
    if not ctx.args or len(ctx.args[0]) != 1 or not ctx.arg_types[0]:
        return ctx.default_return_type
    typ = get_proper_type(ctx.arg_types[0][0])
    if isinstance(typ, Instance) and typ.last_known_value is not None:
        typ = typ.last_known_value
    if not isinstance(typ, LiteralType) or not isinstance(typ.value, str):
        return ctx.default_return_type  # a t-string, or text the run time checks
    template = ctx.args[0][0]
    # The builder's own checks, imported when a literal template is first met: the plugin's
    # entry point loads no runtime module (tests/test_lazy_package.py), and a quote-aware
    # reading of SQL text is no rule to keep a second copy of.
    from tempest_typed.errors import ValidationError
    from tempest_typed.sql import _checked_parts, _split_format
    try:
        parts = _checked_parts(_split_format(typ.value))
    except ValidationError as exc:
        ctx.api.fail(str(exc), template, code=RAW)
        return ctx.default_return_type
    kinds = ctx.arg_kinds[1] if len(ctx.arg_kinds) > 1 else []
    if any(kind != ARG_POS for kind in kinds):
        return ctx.default_return_type  # *values: counted at run time
    if len(parts) != len(kinds) + 1:
        ctx.api.fail(f"sql.expr: {len(parts) - 1} placeholder(s) {{}} but {len(kinds)} "
                     "value(s) given", template, code=RAW)
    return ctx.default_return_type
