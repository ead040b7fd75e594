"""Column references and subqueries: `sql.col(...)`, `sql.scalar(...)` and `sql.exists(...)`.

A value written `sql.col("created_at")` or `sql.scalar(subquery)` is compared with (or
assigned to) a column: both must be of one family (numbers, text, bool, datetime, date, UUID,
bytes); JSON columns are not compared. A qualified reference whose alias or table the statement
does not have may name an enclosing statement (a correlated subquery): the enclosing statement
checks it when the subquery is written in place there (see correlation.py), and one edit away
from an alias or table of its own statement it is taken for a typo.
"""

from __future__ import annotations

from mypy.nodes import CallExpr, Context, Expression
from mypy.plugin import FunctionContext
from mypy.types import AnyType, Instance, Type, get_proper_type

from .correlation import correlate, typo
from .messages import COLUMN, COMPARE, VALUE, column_name, describe, unknown_column
from .metadata import Column, column_kind
from .tables import table_of
from .values import Scope, literal_str

__all__ = [
    "COL", "SCALAR", "check_exists", "check_not_exists", "check_reference", "compared",
    "same_family",
]

COL = "tempest_typed.sql.col"
SCALAR = "tempest_typed.sql.scalar"
QUERY = "tempest_typed.statements.query.Query"
SUBQUERY = "tempest_typed.statements.where.Subquery"

FAMILIES = {
    "int": "number", "float": "number", "decimal": "number", "str": "text", "literal": "text",
    "bool": "bool", "datetime": "datetime", "date": "date", "uuid": "uuid", "bytes": "bytes",
}
_RULE = ("compared columns must be of one family (numbers, text, bool, datetime, date, UUID, "
         "bytes)")


def same_family(a: str, b: str) -> bool:
    """Whether values of two column kinds can be compared (an unknown kind is not judged)."""
    if "any" in (a, b):
        return True
    family = FAMILIES.get(a)
    return family is not None and family == FAMILIES.get(b)


def compared(scope: Scope, col: Column, other: Column, what: str, where: str,
             context: Context) -> None:
    """Report `col` compared with `other` (named `what` where it was written) across
    families."""
    if same_family(col.kind, other.kind):
        return
    options = scope.api.options
    json = "; JSON columns are not compared" if "json" in (col.kind, other.kind) else ""
    scope.fail(f"{column_name(col)} is {describe(col.type, options)}, but {what} is "
               f"{column_name(other)} of type {describe(other.type, options)} (in {where}): "
               f"{_RULE}{json}", context, COMPARE)


def _referenced(scope: Scope, name: str, context: Context, written: str) -> Column | None:
    """The column `sql.col(name)` (written in `written`) names in `scope`, reporting an
    unknown one it can judge."""
    from .scopes import GroupScope, JoinScope

    where = f"sql.col() in {written}"
    if isinstance(scope, JoinScope | GroupScope):
        return scope.lookup(name, context, correlated=True, where=where)
    qualifier, dot, attr = name.partition(".")
    if dot:
        table = table_of(scope.facts.info)
        if table is None:
            return None
        if qualifier != table:  # an enclosing statement's table or alias, or a typo
            meant = typo(scope, qualifier, [table])
            if meant is not None:
                scope.fail(f'sql.col("{name}") in {written} names no table or alias of this '
                           f'statement or of one that encloses it; did you mean "{meant}"?',
                           context, COLUMN)
            return None
        name = attr
    col = scope.facts.columns.get(name)
    if col is None:
        scope.fail(unknown_column(scope.facts, name, where), context, COLUMN)
    return col


def check_reference(scope: Scope, col: Column, expr: Expression, where: str) -> None:
    """`sql.col("x")` or `sql.scalar(subquery)` given as a value of `col`."""
    assert isinstance(expr, CallExpr)
    if not expr.args:
        return
    arg = expr.args[0]
    from .values import callee_name

    if callee_name(expr) == COL:
        name = literal_str(scope.api, arg)
        if name is None:
            return
        other = _referenced(scope, name, arg, where)
        if other is not None:
            compared(scope, col, other, f'sql.col("{name}")', where, expr)
        return
    sub = get_proper_type(scope.api.lookup_type_or_none(arg))
    if not (isinstance(sub, Instance) and sub.type.fullname == SUBQUERY and len(sub.args) == 2):
        return
    correlate(scope, arg)
    yields = sub.args[1]
    kind, _, _ = column_kind(yields)
    if same_family(col.kind, kind):
        return
    options = scope.api.options
    scope.fail(f"{column_name(col)} is {describe(col.type, options)}, but sql.scalar() yields "
               f"{describe(yields, options)} (a column of {describe(sub.args[0], options)}) "
               f"in {where}: {_RULE}", expr, COMPARE)


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
