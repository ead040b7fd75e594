"""Row types: what a partial select or `returning(...)` yields.

`Row` is generic over an anonymous TypedDict of the fetched columns (`Row[TypedDict({'id':
UUID})]`), a type mypy already knows how to cache, so no class is invented per query.
Attribute access (`row.id`) and item access (`row["id"]`, `row[0]`) read it; a column that
was not fetched is an error.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import IntExpr
from mypy.plugin import AttributeContext, MethodContext
from mypy.types import (
    AnyType,
    Instance,
    NoneType,
    Type,
    TypedDictType,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

from .messages import COLUMN
from .metadata import ModelFacts, instance, model_facts
from .values import literal_str

__all__ = ["RESULT", "ROW", "fields_row", "result_scalar", "result_scalars", "row_attribute",
           "row_item", "row_type", "typed_dict"]

ROW = "tempest_typed.row.Row"
RESULT = "tempest_typed.engine.result.Result"


def row_type(api: TypeChecker, facts: ModelFacts, names: list[str]) -> Instance:
    """`Row[TypedDict({...})]` holding the named columns with their declared types."""
    return fields_row(api, {name: facts.columns[name].type for name in names})


#: (field name, id of its type) pairs -> (the field types, the TypedDict, its Row): the
#: statements that fetch the same fields share one row type, so that mypy's caches, which hold
#: pairs of types, compare two statements' rows by identity instead of field by field. The
#: field types are those of the model facts (and of the interned rows), so equal fields are
#: one object; holding them keeps their ids unique.
_ROWS: dict[tuple[tuple[str, int], ...], tuple[list[Type], TypedDictType, Instance]] = {}


def _interned(api: TypeChecker, items: dict[str, Type]) -> tuple[TypedDictType, Instance]:
    key = tuple((name, id(typ)) for name, typ in items.items())
    hit = _ROWS.get(key)
    if hit is not None:
        return hit[1], hit[2]
    fields = TypedDictType(items, set(items), set(), api.named_type("typing._TypedDict"))
    row = instance(api.modules, ROW, [fields])
    if len(_ROWS) >= 4096:
        _ROWS.clear()
    _ROWS[key] = (list(items.values()), fields, row)
    return fields, row


def typed_dict(api: TypeChecker, items: dict[str, Type]) -> TypedDictType:
    """An anonymous `TypedDict({...})` with every key required."""
    return _interned(api, items)[0]


def fields_row(api: TypeChecker, items: dict[str, Type]) -> Instance:
    """`Row[TypedDict({...})]` of fields of the given types (columns, aliases or labels)."""
    return _interned(api, items)[1]


def _fields(typ: Type) -> TypedDictType | None:
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.fullname == ROW and proper.args:
        fields = get_proper_type(proper.args[0])
        if isinstance(fields, TypedDictType):
            return fields
    return None


def _is_model(typ: Type) -> bool:
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        rest = [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)]
        return len(rest) == 1 and model_facts(rest[0]) is not None
    return model_facts(proper) is not None


def _missing(name: str, fields: TypedDictType) -> str:
    fetched = ", ".join(f'"{n}"' for n in fields.items)
    if fields.items and all(_is_model(t) for t in fields.items.values()):
        return f'This row has no alias "{name}"; the join has {fetched}'
    return (f'This row has no column "{name}"; it fetched {fetched} '
            "(add the column to select(...), returning(...) or aggregate(...))")


def row_attribute(ctx: AttributeContext) -> Type:
    """`row.name`: the column's type, or an error for a column that was not fetched."""
    fields = _fields(ctx.type)
    if fields is None:
        return ctx.default_attr_type
    assert isinstance(ctx.context, object)
    from mypy.nodes import MemberExpr

    name = ctx.context.name if isinstance(ctx.context, MemberExpr) else None
    if name is None:
        return ctx.default_attr_type
    if name in fields.items:
        return fields.items[name]
    ctx.api.fail(_missing(name, fields), ctx.context, code=COLUMN)
    return AnyType(TypeOfAny.from_error)


def row_item(ctx: MethodContext) -> Type:
    """`row["name"]` and `row[0]`: the column's type, or an error."""
    fields = _fields(ctx.type)
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
    fields = _fields(rows)
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
