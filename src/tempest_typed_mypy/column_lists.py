"""A string where a list of column names belongs: `select(M, "id")`, `Index("x", "col")`.

Both take `list[str] | tuple[str, ...]`, so any checker refuses a string with its generic
"no overload matches" / "incompatible type" message. With the plugin the message is ours,
with the fix: the signature seen for this one call accepts the string, after we report it.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.checker import TypeChecker
from mypy.nodes import Expression, MemberExpr, NameExpr, RefExpr, StrExpr, TypeInfo
from mypy.plugin import FunctionSigContext
from mypy.types import FunctionLike, Instance, UnionType, get_proper_type

from .lib.messages import COLUMN, index_label
from .lib.metadata import model_facts
from .lib.names import NAMED_SELECT_CLASS
from .lib.row_types import NAMED_SELECT
from .lib.syntax import literal_str

__all__ = ["index_signature", "select_signature"]


def _string(api: TypeChecker, expr: Expression) -> tuple[bool, str | None]:
    """Whether `expr` is a str (not a list of them), and the string when it is known."""
    if isinstance(expr, StrExpr):
        return True, expr.value
    if not isinstance(expr, RefExpr):
        return False, None
    with api.msg.filter_errors():
        typ = get_proper_type(api.expr_checker.accept(expr))
    if isinstance(typ, Instance) and typ.type.fullname == "builtins.str":
        return True, literal_str(api, expr)
    return False, None


def _report(ctx: FunctionSigContext, position: int, lead: Callable[[], str]) -> FunctionLike:
    sig = ctx.default_signature
    if len(sig.arg_types) <= position or len(ctx.args) <= position or not ctx.args[position]:
        return sig
    expr = ctx.args[position][0]
    assert isinstance(ctx.api, TypeChecker)
    is_string, value = _string(ctx.api, expr)
    if not is_string:
        return sig
    written = (f'"{value}"' if value is not None
               else expr.name if isinstance(expr, NameExpr | MemberExpr) else "...")
    ctx.api.fail(f"{lead()} a list of column names, not the string {written}; write "
                 f"[{written}]", expr, code=COLUMN)
    types = list(sig.arg_types)
    types[position] = UnionType.make_union([types[position], ctx.api.named_type("builtins.str")])
    return sig.copy_modified(arg_types=types)


def select_signature(ctx: FunctionSigContext) -> FunctionLike:
    """`select(M, "id")`: reported, and the call typed as if the list had been written."""
    sig = ctx.default_signature
    if len(sig.arg_types) < 2 or not ctx.args[0]:
        return sig
    model = ctx.args[0][0]

    def lead() -> str:  # only for a message: most calls have nothing to report
        facts = model_facts(model.node) if isinstance(model, RefExpr) and isinstance(
            model.node, TypeInfo) else None
        if facts is not None:
            return f"{facts.name}: select() takes"
        assert isinstance(ctx.api, TypeChecker)
        with ctx.api.msg.filter_errors():
            typ = get_proper_type(ctx.api.expr_checker.accept(model))
        named = isinstance(typ, Instance) and typ.type.fullname == NAMED_SELECT_CLASS
        return f"{NAMED_SELECT if named else 'the model'}: select() takes"

    return _report(ctx, 1, lead)


def index_signature(ctx: FunctionSigContext) -> FunctionLike:
    """`Index("x", "col")`: reported with the fix."""
    label = index_label(ctx.args[0] if ctx.args else [])
    return _report(ctx, 1, lambda: f"{label}: columns must be")


