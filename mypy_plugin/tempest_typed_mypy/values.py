"""Value checks: is this expression a value the column can hold, or an sql.* expression?

mypy infers a value inside `where({...})` or `set({...})` against the loose runtime
signature (`Mapping[str, Any]`), so a literal such as `"queued"` or `["queued", "sent"]` first
comes out as `str` / `list[str]`. When that first type does not fit the column, the value is
inferred once more with the column's type as context (errors silenced: mypy reported them the
first time), which gives a literal its precise type before we judge it; not a name or a
literal, whose first type already says all a context could.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    BytesExpr,
    CallExpr,
    Context,
    Expression,
    FloatExpr,
    IntExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
)
from mypy.subtypes import is_subtype
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    NoneType,
    Type,
    UnionType,
    get_proper_type,
)

from tempest_typed._wording import NOT_A_DATE, NOT_A_NUMBER

from .messages import COLUMN, VALUE, column_name, describe, near, unknown_column
from .metadata import Column, ModelFacts, instance

__all__ = ["EXCLUDED", "EXPRESSION", "Scope", "narrower_refused"]

EXPRESSION = "tempest_typed.expressions.Expression"
#: Expressions whose type a context cannot change but for the literal a name or a literal
#: holds, which fits() reads from the first type's last_known_value: inferring them again
#: with the column's type as context would give the same answer.
CONTEXT_FREE = (NameExpr, MemberExpr, StrExpr, IntExpr, FloatExpr, BytesExpr)
EXCLUDED = "tempest_typed.sql.excluded"


def callee_name(expr: Expression) -> str | None:
    """The full name of the function an expression calls, if it is a call."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        return expr.callee.fullname
    return None


class Scope:
    """One model seen from one place in a statement (`where()`, `set()`, ...)."""

    def __init__(self, api: TypeChecker, facts: ModelFacts, where: str,
                 allow_excluded: bool = False) -> None:
        self.api = api
        self.facts = facts
        self.where = where
        self.allow_excluded = allow_excluded

    def fail(self, message: str, context: Context, code: object) -> None:
        """Report an error at `context`."""
        from mypy.errorcodes import ErrorCode

        assert isinstance(code, ErrorCode)
        self.api.fail(message, context, code=code)

    def column(self, key: Expression) -> Column | None:
        """The column a key expression names, reporting an unknown one; None if not literal."""
        name = literal_str(self.api, key)
        if name is None:
            return None
        col = self.facts.columns.get(name)
        if col is None:
            self.fail(unknown_column(self.facts, name, self.where), key, COLUMN)
        return col

    def columns(self, expr: Expression) -> list[str] | None:
        """The names in a literal list of columns, each checked; None when not a literal list."""
        from mypy.nodes import ListExpr, TupleExpr

        if not isinstance(expr, ListExpr | TupleExpr):
            return None
        names: list[str] | None = []
        for item in expr.items:
            col = self.column(item)
            if col is None:
                names = None
            elif names is not None:
                names.append(col.attr)
        return names

    def named(self, name: str) -> Instance:
        """An instance of a class by its full name."""
        return instance(self.api.modules, name)

    def accepted(self, col: Column, element: Type | None = None) -> Type:
        """What a value of `col` may be: its type or an sql.* expression."""
        base = element if element is not None else col.type
        items: list[Type] = [base, self.named(EXPRESSION)]
        if col.kind == "decimal":
            items.append(self.named("builtins.int"))
        return UnionType.make_union(items)

    def infer(self, expr: Expression, context: Type | None) -> tuple[Type, bool]:
        """The expression's type inferred again with `context`, and whether that inference
        found errors (silenced, and its types kept out of the module's type map)."""
        with self.api.msg.filter_errors() as watcher, self.api.local_type_map:
            typ = self.api.expr_checker.accept(expr, type_context=context)
        return typ, watcher.has_new_errors()

    def fits(self, expr: Expression, target: Type) -> tuple[bool, Type]:
        """Whether `expr` is a `target`, and the type it was judged by."""
        first = self.api.lookup_type_or_none(expr)
        if first is not None and settled(expr, first):
            ok = fits(first, target)
            if ok or isinstance(expr, CONTEXT_FREE):
                return ok, first
        again, errors = self.infer(expr, target)
        if errors:
            # The context made mypy pick the target's type for a call or a comprehension
            # (`set(names)`, `[n for n in names]`) whose arguments then did not fit it: the
            # value is what it is without that context.
            if first is None or not settled(expr, first):
                first, _ = self.infer(expr, None)
            return False, first
        return fits(again, target), again

    def value(self, col: Column, expr: Expression, label: str | None = None) -> None:
        """Check a value (or sql.* expression) given for `col`."""
        where = label or self.where
        callee = callee_name(expr)
        if callee == EXCLUDED:
            self.excluded(expr)
            return
        if callee in ("tempest_typed.sql.col", "tempest_typed.sql.scalar"):
            from .references import check_reference  # it imports this module

            check_reference(self, col, expr, where)
            return
        first = self.api.lookup_type_or_none(expr)
        if first is not None and fits(first, col.type) and settled(expr, first):
            # most values: no union to build
            ok, typ = True, first
        else:
            ok, typ = self.fits(expr, self.accepted(col))
        if ok:
            refused = narrower_refused(col, typ)
            if refused is not None:
                self.fail(f"{column_name(col)} expects {describe(col.type, self.api.options)}, "
                          f"got {describe(typ, self.api.options)} in {where}: {refused}",
                          expr, VALUE)
            return
        if isinstance(get_proper_type(typ), NoneType):
            self.fail(f'{column_name(col)} is not nullable: None is not a value of '
                      f'{describe(col.type, self.api.options)} in {where}', expr, VALUE)
            return
        hint = ""
        value = literal_str(self.api, expr)
        if col.kind == "literal" and value is not None:
            guess = near(value, col.literal_values)
            if guess is not None:
                hint = f'; did you mean "{guess}"?'
        self.fail(f"{column_name(col)} expects {describe(col.type, self.api.options)}, got "
                  f"{describe(typ, self.api.options)} in {where}{hint}", expr, VALUE)

    def excluded(self, call: Expression) -> None:
        """sql.excluded("col"): only in an upsert's set, and of a column of the model."""
        assert isinstance(call, CallExpr)
        if not self.allow_excluded:
            self.fail(f"sql.excluded() in {self.where}: it names the row an upsert tried to "
                      "insert, so it belongs in on_conflict_do_update(..., set)", call, VALUE)
            return
        if call.args:
            inner = Scope(self.api, self.facts, f"sql.excluded() in {self.where}")
            inner.column(call.args[0])


#: the subtypes the runtime refuses, though the checker reads them as the column's type:
#: column kind -> (the subtype's full name, why), worded as ColumnMeta.check_value words it
NARROWER_REFUSED = {
    "int": ("builtins.bool", NOT_A_NUMBER),
    "float": ("builtins.bool", NOT_A_NUMBER),
    "decimal": ("builtins.bool", NOT_A_NUMBER),
    "date": ("datetime.datetime", NOT_A_DATE),
}


def narrower_refused(col: Column, typ: Type) -> str | None:
    """Why a value of `typ`, which mypy lets pass as the column's type, is refused at run
    time (a bool for a number, a datetime for a date), or None."""
    refused = NARROWER_REFUSED.get(col.kind)
    if refused is None:
        return None
    fullname, why = refused
    proper = get_proper_type(typ)
    items = proper.items if isinstance(proper, UnionType) else [proper]
    for item in map(get_proper_type, items):
        if isinstance(item, LiteralType):
            item = item.fallback
        if isinstance(item, Instance) and item.type.has_base(fullname):
            return why
    return None


def settled(expr: Expression, first: Type) -> bool:
    """Whether the type mypy first inferred for `expr` says what the value is.

    Not so for a call or a comprehension typed `list[Any]` (or `set[Any]`...): the runtime
    signature's `Any` was its context, so mypy took the item type from it, not from the items.
    """
    if isinstance(expr, CONTEXT_FREE):
        return True
    proper = get_proper_type(first)
    return not (isinstance(proper, Instance)
                and any(isinstance(get_proper_type(a), AnyType) for a in proper.args))


def fits(typ: Type, target: Type) -> bool:
    """Whether a value of `typ` may be given where `target` is expected."""
    proper = get_proper_type(typ)
    if isinstance(proper, AnyType):
        return True
    if (isinstance(proper, Instance) and proper.last_known_value is not None
            and is_subtype(proper.last_known_value, target)):
        return True
    return is_subtype(typ, target)


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
