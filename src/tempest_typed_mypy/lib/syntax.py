"""What an expression says as written: the function a call names, the string a literal (or a
name typed as one) holds, the arguments a hook's call gives for a parameter. Part of the
foundation: imports no check.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Expression, NameExpr, RefExpr, StrExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import Instance, LiteralType, get_proper_type

__all__ = ["arg", "callee_name", "is_none", "is_true", "literal_str"]


def callee_name(expr: Expression) -> str | None:
    """The full name of the function an expression calls, if it is a call."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        return expr.callee.fullname
    return None


def literal_str(api: TypeChecker, expr: Expression) -> str | None:
    """The string an expression is known to hold: a literal, or a name typed as one."""
    if isinstance(expr, StrExpr):
        return expr.value
    if isinstance(expr, NameExpr | RefExpr):
        typ = get_proper_type(api.lookup_type_or_none(expr))
        if isinstance(typ, Instance) and typ.last_known_value is not None:
            typ = typ.last_known_value
        if isinstance(typ, LiteralType) and isinstance(typ.value, str):
            return typ.value
    return None


def arg(ctx: MethodContext | FunctionContext, name: str) -> list[Expression]:
    """The expressions a call gives for the parameter `name`."""
    for names, args in zip(ctx.callee_arg_names, ctx.args, strict=False):
        if names == name:
            return args
    return []


def is_true(expr: object) -> bool:
    """Whether `expr` is the name `True`."""
    return isinstance(expr, NameExpr) and expr.fullname == "builtins.True"


def is_none(expr: object) -> bool:
    """Whether `expr` is the name `None`."""
    return isinstance(expr, NameExpr) and expr.fullname == "builtins.None"
