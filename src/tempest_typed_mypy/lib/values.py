"""Value checks: is this expression a value the column can hold, an sql.* expression, a column
reference (references.py), or sql.excluded() in an upsert's set? Part of the foundation:
imports no check.

mypy infers a value inside `where({...})` or `set({...})` against the loose runtime
signature (`Mapping[str, Any]`), so a literal such as `"queued"` or `["queued", "sent"]` first
comes out as `str` / `list[str]`. When that first type does not fit the column, the value is
inferred once more with the column's type as context (errors silenced: mypy reported them the
first time), which gives a literal its precise type before we judge it; not a name or a
literal, whose first type already says all a context could.
"""

from __future__ import annotations

from mypy.nodes import (
    BytesExpr,
    CallExpr,
    Expression,
    FloatExpr,
    IntExpr,
    MemberExpr,
    NameExpr,
    StrExpr,
    Var,
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

from tempest_typed._wording import NOT_A_DATE, NOT_A_NUMBER, NOW_IS_A_TIMESTAMP

from .definitions import resolved
from .messages import VALUE, column_name, describe, near
from .metadata import TEXT_KINDS, Column, instance
from .names import COL, EXCLUDED, EXPRESSION, NOW, SCALAR
from .references import check_reference
from .scopes import Scope
from .syntax import callee_name, literal_str

__all__ = [
    "NARROWER_REFUSED", "accepted", "assignable", "check_value", "fits", "narrower_refused",
]

#: Expressions whose type a context cannot change but for the literal a name or a literal
#: holds, which assignable() reads from the first type's last_known_value: inferring them again
#: with the column's type as context would give the same answer.
CONTEXT_FREE = (NameExpr, MemberExpr, StrExpr, IntExpr, FloatExpr, BytesExpr)


def check_value(scope: Scope, col: Column, expr: Expression, label: str | None = None) -> None:
    """Check a value (or sql.* expression) given for `col` at the place of `scope`."""
    where = label or scope.where
    callee = callee_name(expr)
    if callee == EXCLUDED:
        _excluded(scope, col, expr, where)
        return
    if callee in (COL, SCALAR):
        check_reference(scope, col, expr, where)
        return
    api = scope.api
    value_expr = expr
    first = api.lookup_type_or_none(expr)
    if col.kind not in ("datetime", "any") and _is_now(first):
        scope.fail(f"{column_name(col)} is {describe(col.type, api.options)}: "
                   f"{NOW_IS_A_TIMESTAMP} (in {where})", expr, VALUE)
        return
    if first is not None and assignable(first, col.type) and settled(expr, first):
        # most values: no union to build
        ok, typ = True, first
    else:
        ok, typ = fits(scope, expr, accepted(scope, col))
    if not ok and col.kind == "literal":
        held = _held_literal(scope, expr)
        if held is not None:  # a name given a literal once: judged by that literal
            ok, typ = fits(scope, held, accepted(scope, col))
            value_expr = held
    if ok:
        refused = narrower_refused(col, typ)
        if refused is not None:
            scope.fail(f"{column_name(col)} expects {describe(col.type, api.options)}, "
                       f"got {describe(typ, api.options)} in {where}: {refused}", expr, VALUE)
        return
    if isinstance(get_proper_type(typ), NoneType):
        scope.fail(f'{column_name(col)} is not nullable: None is not a value of '
                   f'{describe(col.type, api.options)} in {where}', expr, VALUE)
        return
    hint = ""
    value = literal_str(api, value_expr)
    if col.kind == "literal" and value is not None:
        guess = near(value, col.literal_values)
        if guess is not None:
            hint = f'; did you mean "{guess}"?'
    elif col.kind == "literal" and _plain_str(typ):
        hint = (": a str may hold any text; type the value as the column's Literal (annotate "
                "the variable with it, or declare it Final), or narrow it first")
    scope.fail(f"{column_name(col)} expects {describe(col.type, api.options)}, got "
               f"{describe(typ, api.options)} in {where}{hint}", expr, VALUE)


def _is_now(typ: Type | None) -> bool:
    """Whether `typ` is sql.now()'s (written in place or held in a variable)."""
    proper = get_proper_type(typ) if typ is not None else None
    return isinstance(proper, Instance) and proper.type.fullname == NOW


def _held_literal(scope: Scope, expr: Expression) -> StrExpr | None:
    """The string literal a variable was given by its one assignment (`status = "paid"`),
    which mypy types `str` where it is used (pyright, narrowing on assignment, its literal);
    None for anything else."""
    if not (isinstance(expr, NameExpr) and isinstance(expr.node, Var)):
        return None
    held = resolved(scope.api, expr)
    return held if isinstance(held, StrExpr) else None


def _plain_str(typ: Type) -> bool:
    """Whether `typ` is `str` (or `str | None`) holding no known literal."""
    proper = get_proper_type(typ)
    items = proper.items if isinstance(proper, UnionType) else [proper]
    found = False
    for item in map(get_proper_type, items):
        if isinstance(item, NoneType):
            continue
        if not (isinstance(item, Instance) and item.type.fullname == "builtins.str"
                and item.last_known_value is None):
            return False
        found = True
    return found


def _excluded(scope: Scope, col: Column, call: Expression, where: str) -> None:
    """sql.excluded("other"): only in an upsert's set, of a column of the model of the kind
    of the column it sets (text beside text), as the run time checks it."""
    assert isinstance(call, CallExpr)
    if not scope.allow_excluded:
        scope.fail(f"sql.excluded() in {scope.where}: it names the row an upsert tried to "
                   "insert, so it belongs in on_conflict_do_update(..., set)", call, VALUE)
        return
    if not call.args:
        return
    inner = Scope(scope.api, scope.facts, f"sql.excluded() in {scope.where}")
    other = inner.column(call.args[0])
    if (other is not None and "any" not in (other.kind, col.kind) and other.kind != col.kind
            and not {other.kind, col.kind} <= TEXT_KINDS):
        options = scope.api.options
        scope.fail(f'{column_name(col)} is {describe(col.type, options)}: sql.excluded('
                   f'"{other.attr}") is {describe(other.type, options)} (in {where})', call,
                   VALUE)


def accepted(scope: Scope, col: Column, element: Type | None = None) -> Type:
    """What a value of `col` may be: its type (or `element`) or an sql.* expression."""
    base = element if element is not None else col.type
    modules = scope.api.modules
    items: list[Type] = [base, instance(modules, EXPRESSION)]
    if col.kind == "decimal":
        items.append(instance(modules, "builtins.int"))
    return UnionType.make_union(items)


def fits(scope: Scope, expr: Expression, target: Type) -> tuple[bool, Type]:
    """Whether `expr` is a `target`, and the type it was judged by."""
    first = scope.api.lookup_type_or_none(expr)
    if first is not None and settled(expr, first):
        ok = assignable(first, target)
        if ok or isinstance(expr, CONTEXT_FREE):
            return ok, first
    again, errors = _infer(scope, expr, target)
    if errors:
        # The context made mypy pick the target's type for a call or a comprehension
        # (`set(names)`, `[n for n in names]`) whose arguments then did not fit it: the
        # value is what it is without that context.
        if first is None or not settled(expr, first):
            first, _ = _infer(scope, expr, None)
        return False, first
    return assignable(again, target), again


def _infer(scope: Scope, expr: Expression, context: Type | None) -> tuple[Type, bool]:
    """The expression's type inferred again with `context`, and whether that inference
    found errors (silenced, and its types kept out of the module's type map)."""
    api = scope.api
    with api.msg.filter_errors() as watcher, api.local_type_map:
        typ = api.expr_checker.accept(expr, type_context=context)
    return typ, watcher.has_new_errors()


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


def assignable(typ: Type, target: Type) -> bool:
    """Whether a value of `typ` may be given where `target` is expected."""
    proper = get_proper_type(typ)
    if isinstance(proper, AnyType):
        return True
    if (isinstance(proper, Instance) and proper.last_known_value is not None
            and is_subtype(proper.last_known_value, target)):
        return True
    return is_subtype(typ, target)
