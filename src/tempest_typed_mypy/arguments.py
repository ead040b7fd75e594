"""Arguments written as literals that the run time refuses, reported where they are written:
a negative (or bool) `limit()`/`offset()`, `sql.expr()` values that its placeholders do not
match, an unknown isolation level of `transaction()`/`run_transaction()`.

The rules are copies of the run time's (tests/typecheck/test_runtime_rules.py holds them
equal): the plugin loads no part of the runtime but its wording.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import ARG_POS, Expression, IntExpr, NameExpr, UnaryExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import Type

from .lib.messages import ARGUMENT
from .lib.syntax import arg, literal_str

__all__ = ["ISOLATION_LEVELS", "check_expr", "check_isolation", "check_limit",
           "check_offset", "placeholders"]

#: the isolation levels transaction() takes, as the run time spells them
#: (engine/drivers/base.py ISOLATION_LEVELS)
ISOLATION_LEVELS = ("read uncommitted", "read committed", "repeatable read", "serializable")

#: the largest row count limit() and offset() take (the databases' 64-bit counts)
_MOST = 2**63 - 1


def _int_literal(expr: Expression) -> int | bool | None:
    """The int (or bool) an expression is written as, or None."""
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op in ("-", "+") and isinstance(expr.expr, IntExpr):
        return -expr.expr.value if expr.op == "-" else expr.expr.value
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.True", "builtins.False"):
        return expr.fullname == "builtins.True"
    return None


def _count(ctx: MethodContext, what: str) -> Type:
    for given in arg(ctx, "n"):
        value = _int_literal(given)
        if value is not None and (isinstance(value, bool) or not 0 <= value <= _MOST):
            ctx.api.fail(f"{what}() takes an int >= 0 (and <= {_MOST}), got {value!r}", given,
                         code=ARGUMENT)
    return ctx.default_return_type


def check_limit(ctx: MethodContext) -> Type:
    """`limit(n)` with `n` written as a negative int, or a bool."""
    return _count(ctx, "limit")


def check_offset(ctx: MethodContext) -> Type:
    """`offset(n)` with `n` written as a negative int, or a bool."""
    return _count(ctx, "offset")


def placeholders(template: str) -> int | str:
    """How many `{}` a sql.expr template holds, or the run time's reason to refuse it."""
    count, i, n = 0, 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            if template.startswith("{{", i):
                i += 2
                continue
            if template.startswith("{}", i):
                count += 1
                i += 2
                continue
            return (f"sql.expr: only empty placeholders {{}} are allowed, found "
                    f"{template[i:i + 10]!r} (write {{{{ for a literal brace)")
        if ch == "}":
            if template.startswith("}}", i):
                i += 2
                continue
            return "sql.expr: a lone } must be written }}"
        i += 1
    return count


def check_expr(ctx: FunctionContext) -> Type:
    """`sql.expr("... {} ...", values...)` with a literal template: its placeholders are
    well formed, and as many as the values given."""
    if not ctx.args or len(ctx.args[0]) != 1:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    template = literal_str(ctx.api, ctx.args[0][0])
    if template is None:
        return ctx.default_return_type
    found = placeholders(template)
    if isinstance(found, str):
        ctx.api.fail(found, ctx.args[0][0], code=ARGUMENT)
        return ctx.default_return_type
    values = ctx.args[1] if len(ctx.args) > 1 else []
    kinds = ctx.arg_kinds[1] if len(ctx.arg_kinds) > 1 else []
    if all(kind == ARG_POS for kind in kinds) and found != len(values):
        ctx.api.fail(f"sql.expr: {found} placeholder(s) {{}} but {len(values)} value(s) given",
                     ctx.context, code=ARGUMENT)
    return ctx.default_return_type


def check_isolation(ctx: MethodContext) -> Type:
    """`transaction(isolation="...")` / `run_transaction(..., isolation="...")` with a level
    written as a literal that no database has."""
    assert isinstance(ctx.api, TypeChecker)
    for given in arg(ctx, "isolation"):
        level = literal_str(ctx.api, given)
        if level is None:
            continue
        if level.lower().replace("_", " ").replace("-", " ") not in ISOLATION_LEVELS:
            ctx.api.fail(f"unknown isolation level {level!r}; use one of "
                         f"{', '.join(ISOLATION_LEVELS)}", given, code=ARGUMENT)
    return ctx.default_return_type
