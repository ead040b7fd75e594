"""Row access: `row.name`, `row["name"]` and `row[0]` on a partial row (`Row[TypedDict(...)]`,
see lib/row_types.py) give the fetched column's type, and a column that was not fetched is an
error; `result.scalar()` and `result.scalars()` give the first column's type.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import IntExpr, MemberExpr
from mypy.plugin import AttributeContext, MethodContext
from mypy.types import AnyType, Instance, Type, TypedDictType, TypeOfAny, get_proper_type

from .lib.messages import COLUMN, listed
from .lib.metadata import model_facts
from .lib.row_types import model_of, row_fields
from .lib.syntax import literal_str

__all__ = ["result_scalar", "result_scalars", "row_attribute", "row_item"]


def _missing(name: str, fields: TypedDictType) -> str:
    fetched = listed(fields.items)
    if fields.items and all(model_of(t) is not None for t in fields.items.values()):
        return f'This row has no alias "{name}"; the join has {fetched}'
    return (f'This row has no column "{name}"; it fetched {fetched} '
            "(add the column to select(...), returning(...) or aggregate(...))")


def row_attribute(ctx: AttributeContext) -> Type:
    """`row.name`: the column's type, or an error for a column that was not fetched."""
    fields = row_fields(ctx.type)
    if fields is None:
        return ctx.default_attr_type
    name = ctx.context.name if isinstance(ctx.context, MemberExpr) else None
    if name is None:
        return ctx.default_attr_type
    if name in fields.items:
        return fields.items[name]
    if name in _ROW_METHODS:  # the row's own count(), index(), keys(), asdict()
        return ctx.default_attr_type
    ctx.api.fail(_missing(name, fields), ctx.context, code=COLUMN)
    return AnyType(TypeOfAny.from_error)


#: the row's methods, declared as properties for the type checker (tempest_typed.row): a
#: fetched column of one of these names is read as the column, as the run time's row does
_ROW_METHODS = frozenset({"count", "index", "keys", "asdict"})


def row_item(ctx: MethodContext) -> Type:
    """`row["name"]` and `row[0]`: the column's type, or an error."""
    fields = row_fields(ctx.type)
    if fields is None or not ctx.args or not ctx.args[0]:
        return ctx.default_return_type
    key = ctx.args[0][0]
    assert isinstance(ctx.api, TypeChecker)
    names = list(fields.items)
    if isinstance(key, IntExpr):
        if -len(names) <= key.value < len(names):
            return fields.items[names[key.value]]
        return ctx.default_return_type
    name = literal_str(ctx.api, key)
    if name is None:
        return ctx.default_return_type
    if name in fields.items:
        return fields.items[name]
    ctx.api.fail(_missing(name, fields), key, code=COLUMN)
    return AnyType(TypeOfAny.from_error)


def _first_column(result: Type) -> Type | None:
    """The type of the first column of a Result's rows: a partial row's first fetched column,
    or a model's first declared column; None when the rows' type does not say."""
    proper = get_proper_type(result)
    if not (isinstance(proper, Instance) and proper.args):
        return None
    rows = proper.args[0]
    fields = row_fields(rows)
    if fields is not None:
        return next(iter(fields.items.values()), None)
    facts = model_facts(rows)
    if facts is not None and facts.columns:
        return next(iter(facts.columns.values())).type
    return None


def result_scalar(ctx: MethodContext) -> Type:
    """`result.scalar()`: the first column's type, not Any."""
    first = _first_column(ctx.type)
    return first if first is not None else ctx.default_return_type


def result_scalars(ctx: MethodContext) -> Type:
    """`result.scalars()`: a list of the first column's type, not of Any."""
    first = _first_column(ctx.type)
    if first is None:
        return ctx.default_return_type
    assert isinstance(ctx.api, TypeChecker)
    return ctx.api.named_generic_type("builtins.list", [first])
