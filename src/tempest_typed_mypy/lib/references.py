"""A value written as a reference to a column: `sql.col("created_at")` or
`sql.scalar(subquery)`, given for (compared with, or assigned to) a column.

Both columns must be of one family (see families.py). A qualified reference whose alias or table
the statement does not have may name an enclosing statement (a correlated subquery): the
enclosing statement checks it when the subquery is written in place there (see
correlation.py), and one edit away from an alias or table of its own statement it is taken for
a typo. Part of the foundation: imports no check.
"""

from __future__ import annotations

from mypy.nodes import CallExpr, Context, Expression
from mypy.types import Instance, get_proper_type

from .correlation import correlate
from .families import RULE, compared, moves_to
from .messages import COLUMN, COMPARE, column_name, describe, unknown_column
from .metadata import Column, column_kind
from .names import COL, SUBQUERY
from .scopes import GroupScope, JoinScope, Scope
from .syntax import callee_name, literal_str
from .tables import table_of
from .typos import typo

__all__ = ["check_reference"]


def _referenced(scope: Scope, name: str, context: Context, written: str) -> Column | None:
    """The column `sql.col(name)` (written in `written`) names in `scope`, reporting an
    unknown one it can judge."""
    where = f"sql.col() in {written}"
    if isinstance(scope, JoinScope | GroupScope):
        return scope.lookup(name, context, correlated=True, where=where)
    qualifier, dot, attr = name.partition(".")
    if dot:
        table = table_of(scope.facts.info)
        if table is None:
            return None
        if qualifier != table:  # an enclosing statement's table or alias, or a typo
            meant = typo(scope.api, qualifier, [table])
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
    if callee_name(expr) == COL:
        name = literal_str(scope.api, arg)
        if name is None:
            return
        other = _referenced(scope, name, arg, where)
        if other is None:
            return
        if (not isinstance(scope, JoinScope | GroupScope) and other.attr == col.attr
                and other.model == col.model and where.startswith(("where", "having"))):
            # as the run time refuses it: a subquery reaching for the row of a statement
            # around it on the same table names its own row by the table's name
            scope.fail(f'{col.model}: {col.attr} compared with sql.col("{name}") compares a '
                       f"column with itself, which holds for every row or for none (in "
                       f"{where}); to read the row of an enclosing statement on the same "
                       f'table, give that statement an alias, join({col.model}, "outer"), and '
                       f'write sql.col("outer.{col.attr}")', expr, COMPARE)
            return
        compared(scope, col, other, f'sql.col("{name}")', where, expr,
                 moved=not where.startswith(("where", "having")))
        return
    sub = get_proper_type(scope.api.lookup_type_or_none(arg))
    if not (isinstance(sub, Instance) and sub.type.fullname == SUBQUERY and len(sub.args) == 2):
        return
    correlate(scope, arg)
    yields = sub.args[1]
    kind, _, _ = column_kind(yields)
    if moves_to(col.kind, kind):
        return
    options = scope.api.options
    scope.fail(f"{column_name(col)} is {describe(col.type, options)}, but sql.scalar() yields "
               f"{describe(yields, options)} (a column of {describe(sub.args[0], options)}) "
               f"in {where}: {RULE}", expr, COMPARE)
