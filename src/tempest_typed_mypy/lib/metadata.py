"""Model facts: collected once per model class, read by every check.

Two halves, for the sake of the incremental cache. What only the class body says (which
attributes are columns, `column(primary_key=..., server_default=..., name=...)`, a default)
is collected while mypy analyses the model's module and stored in `TypeInfo.metadata`, which
mypy serialises with the class: a warm run never sees the class body again. What the types
say (a column's type, its kind, nullability) is derived from the class's attributes when a
check runs, because those types are complete only then. Part of the foundation: imports no
check.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    MypyFile,
    NameExpr,
    RefExpr,
    StrExpr,
    TempNode,
    TypeInfo,
    Var,
)
from mypy.plugin import ClassDefContext
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    NoneType,
    ProperType,
    Type,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

from .names import COLUMN_FUNCTION, FIELD
from .syntax import is_none, is_true

__all__ = [
    "KEY", "ORDERED_KINDS", "TEXT_KINDS", "Column", "ModelFacts", "collect_model", "column_kind",
    "instance", "model_facts", "non_null",
]

#: The key of our entry in `TypeInfo.metadata`.
KEY = "tempest_typed"

_KINDS = {
    "builtins.str": "str", "builtins.int": "int", "builtins.float": "float",
    "builtins.bool": "bool", "decimal.Decimal": "decimal", "builtins.bytes": "bytes",
    "datetime.datetime": "datetime", "datetime.date": "date", "uuid.UUID": "uuid",
    "builtins.dict": "json", "builtins.list": "json",
}
ORDERED_KINDS = frozenset({"int", "float", "decimal", "datetime", "date"})
TEXT_KINDS = frozenset({"str", "literal"})


def collect_model(ctx: ClassDefContext) -> None:
    """Record, from the class body, what each column declares beyond its type."""
    global _generation
    info = ctx.cls.info
    columns: list[dict[str, object]] = []
    for stmt in ctx.cls.defs.body:
        if not (isinstance(stmt, AssignmentStmt) and stmt.type is not None
                and len(stmt.lvalues) == 1 and isinstance(stmt.lvalues[0], NameExpr)):
            continue
        name = stmt.lvalues[0].name
        sym = info.names.get(name)
        if sym is None or not isinstance(sym.node, Var) or sym.node.is_classvar:
            continue
        rvalue = stmt.rvalue
        has_default = not isinstance(rvalue, TempNode)
        primary_key = server_default = is_column_call = False
        sql_name: str | None = None
        if (isinstance(rvalue, CallExpr) and isinstance(rvalue.callee, RefExpr)
                and rvalue.callee.fullname in (COLUMN_FUNCTION, FIELD)):
            kwargs = {n: a for n, a in zip(rvalue.arg_names, rvalue.args, strict=True) if n}
            has_default = "default" in kwargs or "default_factory" in kwargs
            primary_key = is_true(kwargs.get("primary_key"))
            server_default = "server_default" in kwargs and not is_none(kwargs["server_default"])
            name_arg = kwargs.get("name")
            sql_name = name_arg.value if isinstance(name_arg, StrExpr) else None
            is_column_call = rvalue.callee.fullname == COLUMN_FUNCTION
        columns.append({"attr": name, "has_default": has_default, "primary_key": primary_key,
                        "server_default": server_default, "sql_name": sql_name,
                        "column_call": is_column_call})
    info.metadata[KEY] = {"columns": columns}
    _generation += 1


# Plain classes, not dataclasses: a dataclass writes and compiles its methods when the class
# is created, which every mypy run that loads the plugin would pay for.


class Column:
    """One column as the checks see it (immutable: the model facts' cache shares it)."""

    __slots__ = ("attr", "init_required", "kind", "literal_values", "model", "nullable",
                 "required", "sql_name", "type")

    def __init__(self, model: str, attr: str, type: Type, kind: str, nullable: bool,
                 required: bool, init_required: bool, sql_name: str | None,
                 literal_values: tuple[str, ...]) -> None:
        self.model: Final = model
        self.attr: Final = attr
        self.type: Final = type
        self.kind: Final = kind
        self.nullable: Final = nullable
        #: an insert must give it a value
        self.required: Final = required
        #: the constructor must be given it: a `column(...)` without a default of any kind
        #: that is not an int primary key (mypy's dataclasses transform sees a default in
        #: every `column(...)`, see Model in tempest_typed/model.py)
        self.init_required: Final = init_required
        self.sql_name: Final = sql_name
        self.literal_values: Final = literal_values

    def nullable_copy(self, type: Type) -> Column:
        """The same column holding `type` (which admits None)."""
        return Column(self.model, self.attr, type, self.kind, True, self.required,
                      self.init_required, self.sql_name, self.literal_values)


class ModelFacts:
    """A model's columns, in declaration order, by attribute name."""

    __slots__ = ("columns", "info", "left_joined", "model", "name")

    def __init__(self, info: TypeInfo, name: str, columns: dict[str, Column],
                 model: Instance | None = None) -> None:
        self.info: Final = info
        self.name: Final = name
        self.columns: Final = columns
        #: the model's type (a named select's: its Row), and a left-joined alias's
        #: `Model | None`: one object each, which the row types of every join of the model
        #: share (see row_types.fields_row)
        self.model: Final = model if model is not None else Instance(info, [])
        self.left_joined: Final = UnionType.make_union([self.model, NoneType()])


def column_kind(typ: Type) -> tuple[str, bool, tuple[str, ...]]:
    """(kind, nullable, literal values) of a column type; kind "any" when unknown."""
    proper = get_proper_type(typ)
    nullable = False
    items: list[ProperType] = [proper]
    if isinstance(proper, UnionType):
        items = [get_proper_type(t) for t in proper.items]
        nullable = any(isinstance(t, NoneType) for t in items)
        items = [t for t in items if not isinstance(t, NoneType)]
    if items and all(isinstance(t, LiteralType) and isinstance(t.value, str) for t in items):
        values = tuple(str(t.value) for t in items if isinstance(t, LiteralType))
        return "literal", nullable, values
    if len(items) == 1 and isinstance(items[0], Instance):
        return _KINDS.get(items[0].type.fullname, "any"), nullable, ()
    return "any", nullable, ()


def non_null(typ: Type) -> Type:
    """The type without None: a union's other members."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        return UnionType.make_union(
            [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)])
    return typ


#: Bumped by collect_model(), the only writer of the class-body entries. The mypy daemon keeps
#: a TypeInfo object across updates and refreshes it in place, so the TypeInfo alone does not
#: say the facts are current: they are derived from the entries of every class of the model's
#: MRO and from the types of their attributes, which change only when one of those class bodies
#: is analysed again, and that runs collect_model(). Facts are used while no model class has
#: been analysed since they were derived (and the class still holds the same entry).
_generation = 0

#: TypeInfo (hashed by identity) -> (its entry, the generation, the facts derived from them)
_cache: dict[TypeInfo, tuple[object, int, ModelFacts]] = {}


def model_facts(typ: Type | TypeInfo) -> ModelFacts | None:
    """The facts of a model type (an instance of a Model subclass), or None for anything else."""
    if isinstance(typ, TypeInfo):
        info = typ
    else:
        proper = get_proper_type(typ)
        if not isinstance(proper, Instance):
            return None
        info = proper.type
    own = info.metadata.get(KEY)
    cached = _cache.get(info)
    if cached is not None and cached[0] is own and cached[1] == _generation:
        return cached[2]
    if own is None:
        return None
    # Several primary-key columns are one composite key: no column of it is an identity.
    keys = {entry["attr"]: entry["primary_key"] for base in reversed(info.mro)
            for entry in base.metadata.get(KEY, {}).get("columns", ())}
    single_key = sum(map(bool, keys.values())) == 1
    columns: dict[str, Column] = {}
    for base in reversed(info.mro):
        for entry in base.metadata.get(KEY, {}).get("columns", ()):
            attr = entry["attr"]
            sym = base.names.get(attr)
            node = sym.node if sym is not None else None
            col_type: Type = AnyType(TypeOfAny.from_error)
            if isinstance(node, Var) and node.type is not None:
                col_type = node.type
            kind, nullable, literals = column_kind(col_type)
            autoincrement = (single_key and entry["primary_key"] and kind == "int"
                             and not entry["has_default"] and not entry["server_default"])
            required = not (nullable or entry["has_default"] or entry["server_default"]
                            or autoincrement)
            init_required = bool(entry.get("column_call") and not entry["has_default"]
                                 and not entry["server_default"] and not autoincrement)
            columns.pop(attr, None)
            columns[attr] = Column(info.name, attr, col_type, kind, nullable, required,
                                   init_required, entry["sql_name"], literals)
    facts = ModelFacts(info, info.name, columns)
    if len(_cache) >= 4096:  # the TypeInfos of earlier builds in one process
        _cache.clear()
    _cache[info] = (own, _generation, facts)
    return facts


def instance(modules: dict[str, MypyFile], fullname: str, args: list[Type] | None = None
             ) -> Instance:
    """An instance of a class named by its full name (its module need not be imported by name
    in the package's `__init__`, unlike mypy's `named_type`)."""
    module, _, name = fullname.rpartition(".")
    node = modules[module].names[name].node
    assert isinstance(node, TypeInfo), fullname
    if args is not None:
        return Instance(node, args)
    hit = _INSTANCES.get(fullname)
    if hit is not None and hit[0] is node:
        return hit[1]
    found = Instance(node, [AnyType(TypeOfAny.special_form)] * len(node.defn.type_vars))
    _INSTANCES[fullname] = (node, found)
    return found


#: full name -> (its TypeInfo, its instance): one object per class while the TypeInfo is the
#: same, so that the row types holding it can be shared (see row_types.fields_row)
_INSTANCES: dict[str, tuple[TypeInfo, Instance]] = {}
