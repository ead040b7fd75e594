"""Correlated subqueries: a subquery's `sql.col("users.id")` that names the statement it is
placed in.

mypy checks a subquery before the statement around it, so the subquery's own hook cannot tell
what `users` is. The enclosing statement's hook can: its argument holds the subquery written
in place (`sql.exists(select(Order).where({"user_id": sql.col("users.id")}))`, an `in`
operand, `sql.scalar(...)`), so it walks that expression and checks each reference that no
statement inside resolves and that names one of its own tables or aliases, as the builder does
when it places the subquery: the column exists, and it is of the family of the column it is
compared with. A subquery held in a variable was checked where it was built; its references
are left to the run time. Part of the foundation: imports no check.
"""

from __future__ import annotations

from mypy.nodes import (
    CallExpr,
    Context,
    DictExpr,
    Expression,
    ListExpr,
    MemberExpr,
    SetExpr,
    StrExpr,
    TupleExpr,
)
from mypy.types import Instance, get_proper_type

from .families import compared
from .messages import COLUMN, unknown_column
from .metadata import Column, ModelFacts
from .names import COL, OPERATORS
from .scopes import GroupScope, JoinScope, Scope, optional, source_scope
from .syntax import callee_name, literal_str
from .tables import table_of

__all__ = ["correlate", "qualifiers"]

#: the methods whose arguments see the alias they add
JOINING = frozenset({"inner_join", "left_join"})

Qualifiers = dict[str, tuple[ModelFacts, bool]]


class _Names:
    """What one statement inside the walked expression resolves: its qualifiers, and for a
    plain statement its model (whose keys are bare attributes)."""

    __slots__ = ("plain", "qualifiers")

    def __init__(self, qualifiers: Qualifiers, plain: ModelFacts | None) -> None:
        self.qualifiers = qualifiers
        self.plain = plain

    def column(self, name: str) -> Column | None:
        if self.plain is not None:
            return self.plain.columns.get(name)
        alias, _, attr = name.partition(".")
        entry = self.qualifiers.get(alias)
        return entry[0].columns.get(attr) if entry is not None else None


def qualifiers(scope: Scope) -> Qualifiers:
    """The names a qualified column of the statement seen by `scope` may start with: its
    aliases (a join), or its table (a plain statement); none after aggregate()."""
    if isinstance(scope, GroupScope):
        return {}
    if isinstance(scope, JoinScope):
        return scope.aliases
    table = table_of(scope.facts.info)
    return {} if table is None else {table: (scope.facts, False)}


def correlate(outer: Scope, expr: Expression) -> None:
    """Check the references of a subquery written in place to the statement of `outer`."""
    if not _qualified_reference(expr):  # most subqueries: no scope to build
        return
    own = qualifiers(outer)
    if own:
        _statement(outer, own, expr, [])


def _qualified_reference(expr: Expression) -> bool:
    """Whether an `sql.col()` that may be qualified is written anywhere in `expr`."""
    if isinstance(expr, CallExpr):
        if callee_name(expr) == COL:
            return bool(expr.args) and not (isinstance(expr.args[0], StrExpr)
                                            and "." not in expr.args[0].value)
        if isinstance(expr.callee, MemberExpr) and _qualified_reference(expr.callee.expr):
            return True
        return any(_qualified_reference(arg) for arg in expr.args)
    if isinstance(expr, DictExpr):
        return any(_qualified_reference(value) for _, value in expr.items)
    if isinstance(expr, ListExpr | TupleExpr | SetExpr):
        return any(_qualified_reference(item) for item in expr.items)
    return False


def _names(outer: Scope, expr: Expression) -> _Names | None:
    typ = get_proper_type(outer.api.lookup_type_or_none(expr))
    if not isinstance(typ, Instance):
        return None
    scope = source_scope(outer.api, typ, outer.where)
    if scope is None:
        return None
    return _Names(qualifiers(scope), None if isinstance(scope, JoinScope) else scope.facts)


def _statement(outer: Scope, own: Qualifiers, expr: Expression, path: list[_Names]) -> None:
    """A statement's chain of calls, `select(M).where(...).as_subquery(...)`: each call's
    arguments in the scope of the statement it is called on."""
    while isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        receiver = expr.callee.expr
        names = _names(outer, expr if expr.callee.name in JOINING else receiver)
        if names is None:
            return
        inner = [*path, names]
        for arg in expr.args:
            _value(outer, own, arg, inner, None)
        expr = receiver


def _value(outer: Scope, own: Qualifiers, expr: Expression, path: list[_Names],
           expected: Column | None) -> None:
    """An argument of a statement inside: conditions, values, nested subqueries."""
    if isinstance(expr, DictExpr):
        for key, value in expr.items:
            col = expected
            name = literal_str(outer.api, key) if key is not None else None
            if name is not None and name not in OPERATORS:
                col = path[-1].column(name)
            _value(outer, own, value, path, col)
    elif isinstance(expr, ListExpr | TupleExpr | SetExpr):
        for item in expr.items:
            _value(outer, own, item, path, expected)
    elif isinstance(expr, CallExpr):
        if callee_name(expr) == COL:
            name = literal_str(outer.api, expr.args[0]) if expr.args else None
            if name is not None:
                _reference(outer, own, name, path, expected, expr.args[0])
        elif isinstance(expr.callee, MemberExpr) and _names(outer, expr.callee.expr) is not None:
            _statement(outer, own, expr, path)
        else:  # sql.exists(), sql.scalar(), and_/or_/not_ ...
            for arg in expr.args:
                _value(outer, own, arg, path, None)


def _reference(outer: Scope, own: Qualifiers, name: str, path: list[_Names],
               expected: Column | None, context: Context) -> None:
    alias, dot, attr = name.partition(".")
    if not dot or any(alias in names.qualifiers for names in path):
        return  # the statement's own column, or one of a statement inside: checked there
    entry = own.get(alias)
    if entry is None:
        return  # a statement further out, which the run time resolves
    facts, left = entry
    where = f'sql.col("{name}") in a subquery of {outer.where}'
    col = facts.columns.get(attr)
    if col is None:
        hint = f' (alias "{alias}")' if alias != _table(facts) else ""
        outer.fail(unknown_column(facts, attr, where + hint), context, COLUMN)
        return
    if expected is not None:
        compared(outer, expected, optional(col) if left else col, f'sql.col("{name}")',
                 f"a subquery of {outer.where}", context, moved=True)


def _table(facts: ModelFacts) -> str | None:
    return table_of(facts.info)
