"""Row types: `Row[TypedDict({...})]`, made for what a statement fetches and read back from a
statement's type. Part of the foundation: imports no check.

`Row` is generic over an anonymous TypedDict of the fetched fields (`Row[TypedDict({'id':
UUID})]`), a type mypy already knows how to cache, so no class is invented per query. A join's
rows hold its aliases, a left-joined one as `Model | None`: `Row[TypedDict({'user': User,
'order': Order | None})]`.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.types import (
    AnyType,
    Instance,
    NoneType,
    Type,
    TypedDictType,
    UnionType,
    get_proper_type,
)

from .metadata import Column, ModelFacts, column_kind, instance, model_facts
from .names import JOIN, NAMED_SELECT_CLASS, ROW, SELECT

__all__ = [
    "JOINED_MODELS", "NAMED_SELECT", "Aliases", "aliases_of", "fields_of", "fields_row", "joined_models", "labels_of", "model_of",
    "named_select_facts", "row_facts", "row_fields", "row_type", "statement_fields", "typed_dict",
]

#: a join's aliases: alias -> (the model's facts, whether it is left-joined)
Aliases = dict[str, tuple[ModelFacts, bool]]


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


def row_fields(typ: Type) -> TypedDictType | None:
    """The TypedDict of `Row[TypedDict(...)]`; None for any other type."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.fullname == ROW and proper.args:
        fields = get_proper_type(proper.args[0])
        if isinstance(fields, TypedDictType):
            return fields
    return None


def fields_of(typ: Type) -> TypedDictType | None:
    """The TypedDict of `Row[TypedDict(...)]`, or of a bare TypedDict."""
    proper = get_proper_type(typ)
    if type(proper) is Instance and proper.args and proper.type.fullname == ROW:
        proper = get_proper_type(proper.args[0])
    return proper if type(proper) is TypedDictType else None


def model_of(typ: Type) -> tuple[ModelFacts, bool] | None:
    """(facts, optional) of a model type or `Model | None` (a named select's alias: its
    `Row`, see row_facts); None for anything else."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        rest = [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)]
        if len(rest) != 1:
            return None
        facts = model_facts(rest[0]) or row_facts(rest[0])
        return None if facts is None else (facts, True)
    facts = model_facts(proper) or row_facts(proper)
    return None if facts is None else (facts, False)


def aliases_of(typ: Type) -> Aliases | None:
    """alias -> (facts, left-joined) of a join's row type; None when it is not one. The
    fields after the aliases are computed columns' labels (add_columns())."""
    fields = fields_of(typ)
    if fields is None or not fields.items:
        return None
    out: Aliases = {}
    for alias, item in fields.items.items():
        found = model_of(item)
        if found is None:
            break
        out[alias] = found
    return out or None


def labels_of(typ: Type) -> dict[str, Type]:
    """The computed columns' labels of a statement's row type (`Row[...]` after
    add_columns()): the fields that are neither an alias nor a column of `model`."""
    fields = fields_of(typ)
    if fields is None:
        return {}
    return {name: item for name, item in fields.items.items() if model_of(item) is None}


def joined_models(typ: Type) -> bool:
    """Whether a statement's rows are a join's models by alias (not one row of columns)."""
    proper = get_proper_type(typ)
    return (isinstance(proper, Instance) and proper.type.fullname == JOIN
            and bool(proper.args) and aliases_of(proper.args[0]) is not None)


#: what a set operation, a named select and from_select() say of a join's models
JOINED_MODELS = ("a join's rows are models by alias, not one row of columns: project({...}) "
                 "its columns, or aggregate() it")


def statement_fields(typ: Type) -> dict[str, Type] | None:
    """A statement's row fields by name (a whole-model select's columns by attribute), as a
    set operation, a named select or an insert's from_select() takes them; None when its
    type does not say, or its rows are a join's models."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance) or not proper.args:
        return None
    rows = proper.args[1] if proper.type.fullname == SELECT and len(proper.args) == 2 \
        else proper.args[0]
    facts = model_facts(rows)
    if facts is not None:
        return {name: col.type for name, col in facts.columns.items()}
    fields = fields_of(rows)
    if fields is None or any(model_of(t) is not None for t in fields.items.values()):
        return None
    return dict(fields.items)


#: id(TypedDict) -> (it, the facts of a named select of those fields): the TypedDicts are
#: interned (see _interned), so one object per row shape
_NAMED: dict[int, tuple[TypedDictType, ModelFacts]] = {}

#: how messages name a named select (its name is a run-time value)
NAMED_SELECT = "sql.cte()"


def row_facts(typ: Type) -> ModelFacts | None:
    """The columns of a named select whose rows are `typ` (`Row[TypedDict(...)]`), as a
    model's: what `select(cte)` and a join's alias of it read; None for any other type."""
    rows = get_proper_type(typ)
    fields = row_fields(rows)
    if fields is None or not isinstance(rows, Instance):
        return None
    hit = _NAMED.get(id(fields))
    if hit is not None and hit[0] is fields:
        return hit[1]
    columns: dict[str, Column] = {}
    for name, item in fields.items.items():
        kind, nullable, literals = column_kind(item)
        columns[name] = Column(NAMED_SELECT, name, item, kind, nullable, False, False, None,
                               literals)
    facts = ModelFacts(rows.type, NAMED_SELECT, columns, rows)
    if len(_NAMED) >= 4096:
        _NAMED.clear()
    _NAMED[id(fields)] = (fields, facts)
    return facts


def named_select_facts(typ: Type) -> ModelFacts | None:
    """The columns of a select from a named select (`Select[Any, Row[TypedDict(...)]]`, see
    ctes.py, or `Select[NamedSelect[Row[...]], Row[...]]` of some of its columns): its row
    fields, as a model's columns; None for any other statement."""
    proper = get_proper_type(typ)
    if not (isinstance(proper, Instance) and proper.type.fullname == SELECT
            and len(proper.args) == 2):
        return None
    source = get_proper_type(proper.args[0])
    if isinstance(source, AnyType):
        return row_facts(proper.args[1])
    if isinstance(source, Instance) and source.type.fullname == NAMED_SELECT_CLASS \
            and source.args:
        return row_facts(source.args[0])
    return None
