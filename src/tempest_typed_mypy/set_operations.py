"""Set operations: `union`, `union_all`, `intersect` and `except_` of selects.

The statements give the same number of columns, pairwise of one family (numbers, text,
bool, datetime, date, UUID, bytes); rows are typed by the first statement (the signature
says so already).
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.plugin import MethodContext
from mypy.types import Type

from .lib.families import RULE, same_family
from .lib.messages import COLUMN, COMPARE, describe, listed, near
from .lib.metadata import column_kind
from .lib.row_types import JOINED_MODELS, joined_models, statement_fields
from .lib.syntax import literal_str

__all__ = ["combined", "order_by"]


def combined(ctx: MethodContext) -> Type:
    """`first.union(other)` and the other set operations."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    if not ctx.args or not ctx.args[0] or not ctx.arg_types[0]:
        return ctx.default_return_type
    first = statement_fields(ctx.type)
    other = statement_fields(ctx.arg_types[0][0])
    op = getattr(ctx.context, "callee", None)
    name = getattr(op, "name", "union")
    where = ctx.args[0][0]
    if joined_models(ctx.arg_types[0][0]):
        api.fail(f"{name}(): {JOINED_MODELS}", where, code=COMPARE)
    if first is None or other is None:
        return ctx.default_return_type
    if len(first) != len(other):
        api.fail(f"{name}(): the statements have {len(first)} columns ({listed(first)}) and "
                 f"{len(other)} ({listed(other)}); combined selects need the same number of "
                 "columns", where, code=COMPARE)
        return ctx.default_return_type
    for (a, a_type), (b, b_type) in zip(first.items(), other.items(), strict=True):
        if not same_family(column_kind(a_type)[0], column_kind(b_type)[0]):
            api.fail(f'{name}(): column "{a}" is {describe(a_type, api.options)} but "{b}" is '
                     f"{describe(b_type, api.options)}; combined columns must be pairwise of "
                     f"one family ({RULE.partition('(')[2]}", where, code=COMPARE)
    return ctx.default_return_type


def order_by(ctx: MethodContext) -> Type:
    """`.order_by("column")` of a combined select: a row field of the first statement."""
    assert isinstance(ctx.api, TypeChecker)
    fields = statement_fields(ctx.type)
    columns = ctx.args[0] if ctx.args else []
    if fields is None or not columns:
        return ctx.default_return_type
    name = literal_str(ctx.api, columns[0])
    if name is not None and name not in fields:
        guess = near(name, fields)
        hint = f'; did you mean "{guess}"?' if guess else ""
        ctx.api.fail(f'order_by("{name}") of a combined select names a column of the first '
                     f"statement{hint} (columns: {listed(fields)})", columns[0], code=COLUMN)
    return ctx.default_return_type
