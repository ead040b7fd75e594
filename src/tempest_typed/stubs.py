"""Type stubs from the user's models: the mypy plugin's checks, for checkers that run no plugin.

`tempest-typed stubs myapp.models -o stubs/` (or `python -m tempest_typed.stubs ...`) imports
the model modules named, and nothing else, and writes a stub package `stubs/tempest_typed/`
that pyright (and Pylance) read in place of the library's `__init__` and `sql` when
`stubPath` points at `stubs/`, and mypy without the plugin when `mypy_path` does:

- `__init__.pyi` re-exports every public name from the library's own modules, except
  `select`, `insert`, `update` and `delete`, which it declares with one overload per model,
  `and_`/`or_`/`not_`, typed by the where dict of the statement they go in, and `join`,
  keeping each alias as its `Literal` so that the rows are typed per alias;
- `sql.pyi` is `tempest_typed.sql` with each aggregate and function typed by the columns it
  names (`TextOf[Literal['status']]`), units and parts as Literals, `cte` by its statement;
- `_generated.pyi` holds, per model, the column names as a `Literal` union, TypedDicts for
  `where` (an operator dict per column type), `set` and `values` (the required keys), a row
  class generic in the columns fetched, the expressions over its columns that add_columns()
  takes (`OutboundComputed`), and builder subclasses whose methods take those types.

The library's other modules are not shadowed: each checker reads them from the installed
package (mypy looks a module up in every directory of mypy_path, then in the installed
packages, not only in the first that has its package). Where mypy infers what pyright does
not (a list of names, an alias, as `str`), the stubs hold a branch that mypy alone reads
(`if MYPY:`). Everything a stub cannot say (qualified names, aggregate labels, a bool where a
number goes) is listed in docs/static-checking.md. Output is deterministic: models sorted by module and name, columns in
declaration order; `--check` compares instead of writing.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import types
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path

from .errors import ValidationError
from .model import ColumnMeta, Model, ModelMeta, meta_of

__all__ = ["StubError", "generate", "main", "models_of"]

#: the builders the stub package declares per model; every other public name is re-exported
_SHADOWED = ("Condition", "and_", "delete", "insert", "join", "not_", "or_", "select",
             "update")

_PYTHON_TYPES = {
    "str": "str", "int": "int", "float": "float", "bool": "bool", "decimal": "Decimal",
    "bytes": "bytes", "datetime": "datetime", "date": "date", "uuid": "UUID",
}
_ORDERED = frozenset({"int", "float", "decimal", "datetime", "date"})
_TEXT = frozenset({"str", "literal"})
_NUMBERS = frozenset({"int", "float", "decimal"})



#: what the stubs' sql functions make: a class per kind of result, generic in the column names
#: it reads (Never where it reads none: a value, an expression), so that a model's
#: add_columns() takes each over the columns of the right family only (`OrderComputed` per model)
# (a list or tuple, not a Sequence: pyright keeps a list display's names as Literals only so)
_ITEM = "{o} | Expression | tuple[{o} | Expression, Literal['asc', 'desc']]"


def _over(result: str, ordered: bool = False) -> str:
    """over() of a window function making `result[..., _P | _O]`; `ordered`: order_by required.

    mypy, which infers such a list as list[str], reads the names as str, the window's
    columns Never (its add_columns() takes any expression)."""
    order = "" if ordered else " = ..."
    def of(p: str, o: str, made: str) -> str:
        item = _ITEM.format(o=o)
        return (f"        def over(self, *, partition_by: list[{p} | Expression] "
                f"| tuple[{p} | Expression, ...] = ..., order_by: list[{item}] "
                f"| tuple[{item}, ...]{order}) -> {made}: ...")
    return "\n".join(["    if MYPY:", of("str", "str", result.replace("_P | _O", "Never")),
                      "    else:", of("_P", "_O", result)])


_ARITH = "\n".join(
    f"    def __{op}__(self, other: {{other}}) -> NumberOf[{{mine}}_X]: ...\n"
    f"    def __r{op}__(self, other: int | float | Decimal) -> NumberOf[{{rmine}}]: ..."
    for op in ("add", "sub", "mul", "truediv"))


def _arith(mine: bool) -> str:
    """Arithmetic of a class: `+ - * /` with a number, a column or a numeric expression."""
    # a length or a date part is a number whatever its column: only a column or a numeric
    # expression adds the columns it reads
    # (a window's value, and SQL text, which takes the type of the number beside it)
    other = ("ColOf[_X] | NumberOf[_X] | PartOf[Any] | TimePartOf[Any] | LengthOf[Any] | ValueOf "
             "| ExcludedOf | SumOver[Any, Any] | OrderOver[Any, Any] | CountOver[Any, Any] "
             "| WindowOver[Any, Any] | ScalarOf | Raw | Expr | int | float | Decimal")
    return _ARITH.format(other=other, mine="_C_co | " if mine else "",
                         rmine="_C_co" if mine else "Never")


_EXPRESSIONS = "\n".join([
    "# what sql.sum/avg, min/max and count(column) make, by the column they name; over() a",
    "# window, by that column and the window's columns",
    "class SumOf(AggregateFunction[Any], Generic[_C_co]):",
    _over("SumOver[_C_co, _P | _O]"),
    "class OrderOf(AggregateFunction[Any], Generic[_C_co]):",
    _over("OrderOver[_C_co, _P | _O]"),
    "class CountOf(AggregateFunction[int], Generic[_C_co]):",
    _over("CountOver[_C_co, _P | _O]"),
    "# count_distinct: an aggregate per group, over no window (no database computes one)",
    "class DistinctOf(CountOf[_C_co]):",
    _over("DistinctOver[_C_co, _P | _O]"),
    "class DistinctOver(Over, Generic[_C_co, _V_co]): ...",
    "class CountRows(AggregateFunction[int]):",
    _over("CountOver[Never, _P | _O]"),
    "# a window's value takes arithmetic (sql.row_number().over(...) - 1)",
    "class SumOver(Over, Generic[_C_co, _V_co]):",
    _arith(False),
    "class OrderOver(Over, Generic[_C_co, _V_co]):",
    _arith(False),
    "class CountOver(Over, Generic[_C_co, _V_co]):",
    _arith(False),
    "",
    "# sql.row_number/rank/dense_rank (no column) and lag/lead (a column): window functions",
    "# over rows in an order, so over() takes order_by",
    "class WindowCall(Expression, Generic[_C_co]):",
    _over("WindowOver[_C_co, _P | _O]", ordered=True),
    "class WindowOver(Over, Generic[_C_co, _V_co]):",
    _arith(False),
    "",
    "# sql.col(name) and the results of functions: arithmetic keeps the columns it reads",
    "class ColOf(Computed, Generic[_C_co]):",
    _arith(True),
    "class NumberOf(Computed, Generic[_C_co]):  # abs, round, + - * /",
    _arith(True),
    "class TextOf(Computed, Generic[_C_co]): ...  # lower, upper",
    "class LengthOf(Computed, Generic[_C_co]):",
    _arith(False),
    "class TruncOf(Computed, Generic[_C_co]): ...  # date_trunc",
    "class PartOf(Computed, Generic[_C_co]):  # extract of a date part",
    _arith(False),
    "class TimePartOf(Computed, Generic[_C_co]):  # extract of an hour or a minute",
    _arith(False),
    "class CoalesceOf(Computed, Generic[_C_co]): ...",
    "class ValueOf(TypedValue):  # sql.value(x): no column",
    _arith(False),
    "class ExcludedOf(Excluded):  # sql.excluded(column), in an upsert's set",
    _arith(False),
    "class ScalarOf(Computed):  # sql.scalar(subquery): arithmetic as a column's value",
    _arith(False),
    "#: what a computed value takes of any model: values, CASE, subqueries (not SQL text,",
    "#: which has no type of its own; add_columns() takes sql.now() too)",
    "Opaque = ValueOf | CaseValue | ScalarOf",
    "#: what a value in where(), set() or values() takes of the expressions, by the column's",
    "#: family: a function whose result is of it, and any reference, coalesce, value or SQL",
    "#: text (not a window: one is computed after the rows are chosen); sql.now() is a",
    "#: datetime column's only (the run time refuses it for any other)",
    "AnyFamily = ColOf[Any] | CoalesceOf[Any] | Opaque | Raw | Expr | Excluded",
    "NumberExpr = NumberOf[Any] | LengthOf[Any] | PartOf[Any] | TimePartOf[Any] | AnyFamily",
    "TextExpr = TextOf[Any] | AnyFamily",
    "DateExpr = TruncOf[Any] | AnyFamily",
    "DatetimeExpr = DateExpr | Now",
])


_SET_OPERATIONS = ("union", "union_all", "intersect", "except_")
_COMBINED = "Select[Any, Any] | SetQuery[Any] | Grouped[Any, Any, Any] | Projected"

#: the names a row has (a model's row: the fetched columns and labels), which
#: select(cte, [columns]) takes; and the row of those names, each `Any`
_NAMED = """# the names of a row (contravariant: a row of more names is a row of fewer)
class Named(Generic[_F_contra]): ...

# select(cte) of a named select of a model's rows: where() and order_by() take its names
class NamedSelected(Select[Any, _R_co], Generic[_R_co, _N]):
    def where(self, *conditions: Mapping[_N, Any] | Combined[Mapping[_N, Any]] | ExistsCondition) -> Self: ...
    def order_by(self, column: _N, direction: Literal["asc", "desc"] = "asc") -> Self: ...

# select(cte) of a named select of a model's labeled rows: its names are the columns (_F)
# and the labels (_N), apart: a union of type variables in a return type's arguments
# (NamedSelected[..., _F | _L]) is solved to Unknown by pyright where the call is itself an
# argument, as in execute(select(cte))
class LabeledNamedSelected(Select[Any, _R_co], Generic[_R_co, _F, _N]):
    def where(self, *conditions: Mapping[_F | _N, Any] | Combined[Mapping[_F | _N, Any]] | ExistsCondition) -> Self: ...
    def order_by(self, column: _F | _N, direction: Literal["asc", "desc"] = "asc") -> Self: ...

# a set operation of a model's select: its order_by() takes the first statement's fields
class SetOf(SetQuery[_R_co], Generic[_R_co, _N]):
    def order_by(self, column: _N, direction: Literal["asc", "desc"] = "asc") -> Self: ...
""" + "".join(f"    def {op}(self, other: {_COMBINED}) -> Self: ...\n" for op in _SET_OPERATIONS) + """
class ColumnsRow(Row[Any], Generic[_F_contra]):
    if MYPY:
        def __getattr__(self, name: str) -> Any: ...
        def __getitem__(self, key: str | SupportsIndex | slice) -> Any: ...
    else:
        def __getattr__(self, name: _F_contra) -> Any: ...
        @overload
        def __getitem__(self, key: _F_contra) -> Any: ...
        @overload
        def __getitem__(self, key: SupportsIndex) -> Any: ...
        @overload
        def __getitem__(self, key: slice) -> tuple[Any, ...]: ...
"""


def _where(cond: str, returns: str) -> list[str]:
    """A builder's where(): the model's conditions, and (for pyright) an untyped one.

    mypy reads a dict or an and_() written in place against the whole union of the
    parameter: with `Untyped` in it, it would report a wrong key as a value that is no
    `_Untyped`, and solve and_()'s dict type to neither; so it is pyright's only."""
    return ["    if MYPY:",
            f"        def where(self, *conditions: {cond}) -> {returns}: ...",
            "    else:",
            f"        def where(self, *conditions: Untyped | {cond}) -> {returns}: ...",
            ]


def _expr(col: ColumnMeta) -> str:
    """The expressions a value of the column takes (`NumberExpr` for a number...)."""
    if col.kind in _NUMBERS:
        return "NumberExpr"
    if col.kind in _TEXT:
        return "TextExpr"
    if col.kind == "datetime":
        return "DatetimeExpr"
    return "DateExpr" if col.kind == "date" else "AnyFamily"


class StubError(Exception):
    """A model module that cannot be imported or defines no model; the message is one line."""


def models_of(module_names: Sequence[str]) -> list[type[Model]]:
    """The models defined in the named modules (not those they import), sorted."""
    found: list[type[Model]] = []
    for name in module_names:
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # any failure of the user's module is reported the same way
            detail = str(exc).splitlines()[0] if str(exc) else ""
            raise StubError(
                f"cannot import {name}: {type(exc).__name__}"
                + (f": {detail}" if detail else "")) from exc
        mine = [value for value in vars(module).values()
                if isinstance(value, type) and issubclass(value, Model) and value is not Model
                and value.__module__ == module.__name__]
        if not mine:
            raise StubError(f"{name} defines no model (no class deriving from tempest_typed.Model)")
        found.extend(mine)
    return sorted(set(found), key=lambda m: (m.__module__, m.__qualname__))


@dataclasses.dataclass(frozen=True)
class _Names:
    """The generated names of one model's types (`OutboundWhere`, `OutboundSelect`, ...)."""

    model: str  # the model class, as the stubs refer to it (module.Class)
    prefix: str  # the class name, or module and class name where two models share one

    def of(self, part: str) -> str:
        """The name of the model's `part` type: "Where" -> "OutboundWhere"."""
        return self.prefix + part

    @property
    def column(self) -> str:
        """The Literal union of the column names."""
        return self.of("Column")

    @property
    def where(self) -> str:
        """The TypedDict of where() and the upsert's conditions."""
        return self.of("Where")

    @property
    def set(self) -> str:
        """The TypedDict of update().set() and the upsert's set."""
        return self.of("Set")

    @property
    def values(self) -> str:
        """The TypedDict of insert().values(), its required columns required keys."""
        return self.of("Values")

    @property
    def row(self) -> str:
        """The row class of a partial select or returning(...)."""
        return self.of("Row")

    @property
    def select(self) -> str:
        """The select builder class."""
        return self.of("Select")


def _value_type(col: ColumnMeta, json_hint: str, given: bool = False) -> str:
    """The column's Python type as the stub writes it, without `| None`: as read, or as
    `given` to the builder (a Decimal column takes an int too, a bytes column any buffer)."""
    if given and col.kind == "decimal":
        return "Decimal | int"
    if given and col.kind == "bytes":
        return "bytes | bytearray | memoryview"
    if col.kind == "literal":
        return "Literal[" + ", ".join(repr(v) for v in col.literal_values) + "]"
    if col.kind == "json":
        return json_hint
    return _PYTHON_TYPES[col.kind]


def _spelled(hint: object) -> str:
    """A JSON annotation as the stub writes it: builtin containers and scalars, else Any."""
    if hint in (str, int, float, bool):
        return hint.__name__
    if hint is type(None):
        return "None"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_spelled(a) for a in args)
    if origin in (list, dict) and args:
        return f"{origin.__name__}[{', '.join(_spelled(a) for a in args)}]"
    if hint in (list, dict):
        return f"{hint.__name__}[{'Any' if hint is list else 'str, Any'}]"
    return "Any"


def _json_hint(model: type[Model], attr: str) -> str:
    """The JSON column's annotation (`list[str]`, `dict[str, Any]`...), without `| None`."""
    try:
        hint = typing.get_type_hints(model)[attr]
    except Exception:  # an annotation the stub need not understand: either shape
        return "dict[str, Any] | list[Any]"
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    shapes = [a for a in (typing.get_args(hint) if union else (hint,)) if a is not type(None)]
    return " | ".join(_spelled(a) for a in shapes)


def _ops(n: _Names, col: ColumnMeta, t: str) -> tuple[str, str]:
    """The operator TypedDict of one column: its name and its definition."""
    name = f"_{n.prefix}_{col.attr}_Ops"
    none = " | None" if col.nullable else ""
    fields: list[tuple[str, str]] = []
    if col.kind != "json":
        value = f"{t} | {_expr(col)}"
        fields += [("eq", value + none), ("ne", value + none)]
        if col.kind in _ORDERED:
            fields += [(op, value) for op in ("lt", "lte", "gt", "gte")]
            fields.append(("between", f"tuple[{value}, {value}] | list[{value}]"))
        yields = "str" if col.kind in _TEXT else t
        item = f"{t} | {_expr(col)}"  # a list may hold expressions, as where a value goes
        operand = f"Sequence[{item}] | AbstractSet[{item}] | Subquery[Any, {yields} | None]"
        fields += [("in", operand), ("not_in", operand)]
    fields.append(("is_null", "bool"))
    if col.kind in _TEXT:
        # a pattern: a str, or SQL written out (a column or a function is no pattern)
        fields += [(op, "str | Raw | Expr") for op in ("like", "ilike")]
        fields += [(op, "str") for op in ("contains", "icontains", "startswith", "endswith")]
    body = ", ".join(f"{k!r}: {v}" for k, v in fields)
    return name, f'{name} = TypedDict("{name}", {{{body}}}, total=False)'


def _model_block(model: type[Model], n: _Names) -> list[str]:
    meta: ModelMeta = meta_of(model)
    cols = meta.columns
    types = {c.attr: _value_type(c, _json_hint(model, c.attr) if c.kind == "json" else "")
             for c in cols}
    full = {c.attr: types[c.attr] + (" | None" if c.nullable else "") for c in cols}
    given = {c.attr: _value_type(c, types[c.attr], given=True) for c in cols}
    given_full = {c.attr: given[c.attr] + (" | None" if c.nullable else "") for c in cols}
    out = [f"# {n.model} (table {meta.table!r})", ""]
    out.append(f"{n.column} = Literal[{', '.join(repr(c.attr) for c in cols)}]")
    where: list[tuple[str, str]] = []
    for c in cols:
        ops_name, ops_def = _ops(n, c, given[c.attr])
        out.append(ops_def)
        bare = "" if c.kind == "json" else f"{given_full[c.attr]} | {_expr(c)} | "
        if c.kind == "json" and c.nullable:
            bare = "None | "
        where.append((c.attr, f"{bare}{ops_name}"))
    out.append("")
    out.append(f"class {n.where}(TypedDict, total=False):")
    out += [f"    {attr}: {t}" for attr, t in where]
    out.append("")
    out.append(f"class {n.set}(TypedDict, total=False):")
    out += [f"    {c.attr}: {given_full[c.attr]} | {_expr(c)}" for c in cols]
    out.append("")
    out.append(f"class {n.values}(TypedDict, total=False):")
    for c in cols:
        t = f"{given_full[c.attr]} | {_expr(c)}"
        out.append(f"    {c.attr}: {f'Required[{t}]' if c.required else t}")
    out.append("")
    # The fetched columns, as a TypeVar the call solves to their Literal union.
    out.append(f'{n.of("Fetched")} = TypeVar("{n.of("Fetched")}", bound={n.column})')
    out.append("")
    out += _row_class(n.row, cols, full)
    out += _computed(n, cols)
    out += _row_class(n.of("LabeledRow"), cols, full, labeled=True)
    cond = f"{n.where} | Combined[{n.where}] | ExistsCondition"
    columns = f"list[{n.column}] | tuple[{n.column}, ...]"
    out.append(f"class {n.of('Grouped')}(Grouped[Row]):")
    out += _where(cond, "Self")
    out.append("")
    out.append(f"class {n.select}(Select[{n.model}, _R_co]):")
    out += _where(cond, "Self")
    out.append(f"    def order_by(self, column: {n.column}, "
               'direction: Literal["asc", "desc"] = "asc") -> Self: ...')
    for c in cols:  # one column: one definition (mypy refuses an overload of one)
        out += [*(["    @overload"] if len(cols) > 1 else []),
                f"    def as_subquery(self, column: Literal[{c.attr!r}]) -> "
                f"Subquery[{n.model}, {full[c.attr]}]: ..."]
    # sql.sum("total") is typed SumOf[Literal["total"]] (stubs' sql.pyi), so the dict of
    # aggregates says which columns each function takes: sum/avg numbers, min/max numbers,
    # dates, times and text, count any column but JSON, as the plugin does.
    numbers = _literal(c.attr for c in cols if c.kind in _NUMBERS)
    ordered = _literal(c.attr for c in cols if c.kind in _ORDERED | _TEXT)
    plain = _literal(c.attr for c in cols if c.kind != "json")
    aggregates = (f"Mapping[str, SumOf[{numbers}] | OrderOf[{ordered}] | CountOf[{plain}] "
                  "| CountRows]")
    # a group is a column, or {label: expression} (a computed group): to pyright, an
    # expression over this model's columns, as add_columns() takes
    grouped = f"aggregates: {aggregates}) -> {n.of('Grouped')}: ..."
    for mypy, value in ((True, "Any"), (False, n.of("Computed"))):
        groups = f"{plain} | Mapping[str, {value}]"
        out += ["    if MYPY:" if mypy else "    else:",
                f"        def aggregate(self, group_by: list[{groups}] | tuple[{groups}, ...], "
                + grouped]
    out += _add_columns(n)
    for lock in ("update", "share"):
        out.append(f"    def for_{lock}(self, *, skip_locked: bool = False, no_wait: bool = False, "
                   f"of: type[{n.model}] | Sequence[type[{n.model}]] | None = None) -> Self: ...")
    # a set operation combines rows of columns: selects, aggregates, a projected join; its
    # order_by() names a field of the first statement (SetOf's second parameter)
    sides = ((n.model, n.model, n.column), (f"{n.row}[_F]", f"{n.row}[_F]", "_F"),
             (f"{n.of('LabeledRow')}[_F, _L]", f"{n.of('LabeledRow')}[_F, _L]", "_F | _L"))
    for op in _SET_OPERATIONS:
        for row, kept, names in sides:
            out += ["    @overload",
                    f"    def {op}(self: {n.select}[{row}], other: {_COMBINED}) -> "
                    f"SetOf[{kept}, {names}]: ..."]
    out.append("")
    out += _labeled_select(n, cols, full)
    for kind, base in (("update", "Update"), ("delete", "Delete"), ("insert", "Insert")):
        cls = n.of(base)
        out.append(f"class {cls}({base}[{n.model}, _R_co]):")
        if kind == "update":
            out.append(f"    def set(self, values: {n.set}) -> {cls}[_R_co]: ...")
        if kind != "insert":
            out += _where(cond, f"{cls}[_R_co]")
            out.append(f"    def unguarded(self) -> {cls}[_R_co]: ...")
        else:
            one = f"{n.model} | {n.values}"
            out.append(f"    def values(self, rows: {one} | Sequence[{one}] "
                       f"| Sequence[Mapping[str, object]]) -> {cls}[_R_co]: ...")
            out.append(f"    def on_conflict_do_nothing(self, target: {columns} | None = None, "
                       f"*, where: {cond} | None = None) -> {cls}[_R_co]: ...")
            out.append(f"    def on_conflict_do_update(self, target: {columns} | None, "
                       f"set: {n.set}, *, index_where: {cond} | None = None, "
                       f"update_where: {cond} | None = None) -> {cls}[_R_co]: ...")
        fetched = n.of("Fetched")
        # `*columns: Never`: returning() of no column is the whole model, but `returning(*names)`
        # of a list[str] (names the stubs cannot check) matches no overload, rather than the
        # whole model's while the run time gives rows of those columns
        out += ["    @overload",
                f"    def returning(self, *columns: Never) -> {cls}[{n.model}]: ...",
                "    @overload",
                f"    def returning(self, column: {fetched}, /, *columns: {fetched}) -> "
                f"{cls}[{n.row}[{fetched}]]: ...", ""]
    return out


#: how many tables a join's rows are typed for; a join of more is the library's `Join[Row]`
_JOINED = 4


def _joins() -> list[str]:
    """The join builders and rows, generic in each table's model and alias (not per model).

    An alias is a `LiteralString` type variable, so `join(User, "user")` keeps
    `Literal["user"]`; the row's `__getattr__`/`__getitem__` take each alias's type and give
    its model (`| None` once left-joined), so another name is an error. Qualified column names
    stay strings: no type joins an alias and a column name into "user.email".
    """
    out = [f"# joins: rows keyed by alias (up to {_JOINED} tables)", "",
           "# project({...}) of a join: one row of columns, which sql.cte() and set operations take",
           "class Projected(Join[Row[Any]]): ...", ""]
    for k in range(1, _JOINED + 1):
        params = ", ".join(f"_T{i}, _A{i}" for i in range(1, k + 1))
        out.append(f"class JoinRow{k}(Row[Any], Generic[{params}]):")
        # mypy solves an alias's type variable to `str`, not to its Literal, and takes a
        # __getattr__'s return type whatever the name: it reads this branch (MYPY is always
        # true to mypy), a row of one table typed by its model, of more by Any. pyright reads
        # both branches and takes the last declaration of each name with the overloads
        # just before it: the other branch, a row typed per alias. So nothing here is an
        # overload.
        model = "_T1" if k == 1 else "Any"
        out += ["    if MYPY:",
                f"        def __getattr__(self, name: str) -> {model}: ...",
                "        def __getitem__(self, key: str | SupportsIndex | slice) -> Any: ...",
                "    else:"]
        for i in range(1, k + 1):
            out += [*(["        @overload"] if k > 1 else []),
                    f"        def __getattr__(self, name: _A{i}) -> _T{i}: ..."]
        for i in range(1, k + 1):
            out += ["        @overload", f"        def __getitem__(self, key: _A{i}) -> _T{i}: ..."]
        out += ["        @overload", "        def __getitem__(self, key: SupportsIndex) -> Any: ...",
                "        @overload",
                "        def __getitem__(self, key: slice) -> tuple[Any, ...]: ...", ""]
        aliases = " | ".join(f"_A{i}" for i in range(1, k + 1))
        out.append(f"class Join{k}(Join[JoinRow{k}[{params}]], Generic[{params}]):")
        out.append("    def project(self, columns: Mapping[str, Any]) -> Projected: ...")
        # and_/or_/not_ take their dict type from here: any mapping (qualified names)
        out.append("    def where(self, *conditions: Mapping[str, Any] | Combined[Mapping[str, Any]] "
                   "| ExistsCondition) -> Self: ...")
        for kind, joined, named in (("inner", f"_M{k + 1}", "Row[Any]"),
                                    ("left", f"_M{k + 1} | None", "Row[Any] | None")):
            if k < _JOINED:
                out += ["    @overload",
                        f"    def {kind}_join(self, model: type[_M{k + 1}], alias: _A{k + 1}, "
                        f"on: Mapping[str, str]) -> Join{k + 1}[{params}, {joined}, "
                        f"_A{k + 1}]: ...",
                        # a named select (sql.cte): its rows are Rows, as the library types them
                        "    @overload",
                        f"    def {kind}_join(self, model: NamedSelect[Any], alias: _A{k + 1}, "
                        f"on: Mapping[str, str]) -> Join{k + 1}[{params}, {named}, "
                        f"_A{k + 1}]: ..."]
            else:
                out.append(f"    def {kind}_join(self, model: type[Model] | NamedSelect[Any], "
                           "alias: str, on: Mapping[str, str]) -> Join[Row]: ...")
        for lock in ("update", "share"):
            out.append(f"    def for_{lock}(self, *, skip_locked: bool = False, "
                       f"no_wait: bool = False, of: Sequence[{aliases}] | None = None) -> Self: ...")
        out.append("")
    return out


def _literal(names: Iterable[str]) -> str:
    """`Literal['a', 'b']` of the names, or Never for none."""
    names = list(names)
    return f"Literal[{', '.join(repr(x) for x in names)}]" if names else "Never"


def _computed(n: _Names, cols: Sequence[ColumnMeta]) -> list[str]:
    """The model's `Computed` union (`OrderComputed`): the expressions add_columns() takes, each over columns
    of the family its function reads (text for lower/upper/length, numbers for abs/round and
    arithmetic, a datetime or date for date_trunc/extract, one family for coalesce)."""
    def of(kinds: Iterable[str]) -> str:
        return _literal(c.attr for c in cols if c.kind in kinds)

    every = n.column  # the Literal union of every column
    text, numbers = of(_TEXT), of(_NUMBERS)
    parts = [f"TextOf[{text}]", f"LengthOf[{text}]", f"NumberOf[{numbers}]", f"ColOf[{every}]",
             f"TruncOf[{of(('datetime', 'date'))}]", f"PartOf[{of(('datetime', 'date'))}]",
             f"TimePartOf[{of(('datetime',))}]"]
    # and JSON beside JSON, which coalesce moves without comparing
    families = [_TEXT, _NUMBERS,
                *({k} for k in ("datetime", "date", "bool", "uuid", "bytes", "json"))]
    parts += list(dict.fromkeys(f"CoalesceOf[{of(f)}]" for f in families))
    parts += [f"SumOver[{numbers}, {every}]", f"OrderOver[{of(_ORDERED | _TEXT)}, {every}]",
              f"CountOver[{of(set(_PYTHON_TYPES) | {'literal'})}, {every}]",
              f"WindowOver[{every}, {every}]", "Opaque", "Now"]
    return [f"{n.of('Computed')} = {' | '.join(parts)}", ""]


def _add_columns(n: _Names) -> list[str]:
    """add_columns() of a model's select: to pyright, expressions over the model's columns,
    rows with the labels as fields (of type Any); to mypy, which widens a name kept in a
    variable to `str`, any mapping, rows as the library types them."""
    labeled = n.of("Labeled")
    row = n.of("LabeledRow")
    mapping = f"Mapping[_L, {n.of('Computed')}]"
    return ["    if MYPY:",
            "        def add_columns(self, columns: Mapping[str, Any]) -> "
            f"Select[{n.model}, Row[Any]]: ...",
            "    else:",
            "        @overload",
            f"        def add_columns(self: {n.select}[{n.model}], columns: {mapping}) -> "
            f"{labeled}[{row}[{n.column}, _L], _L]: ...",
            "        @overload",
            f"        def add_columns(self: {n.select}[{n.row}[{n.of('Fetched')}]], "
            f"columns: {mapping}) -> {labeled}[{row}[{n.of('Fetched')}, _L], _L]: ..."]


def _labeled_select(n: _Names, cols: Sequence[ColumnMeta], full: dict[str, str]) -> list[str]:
    """The select of add_columns(): order_by() and as_subquery() take its labels too."""
    out = [f"class {n.of('Labeled')}({n.select}[_R_co], Generic[_R_co, _L]):",
           f"    def order_by(self, column: {n.column} | _L, "
           'direction: Literal["asc", "desc"] = "asc") -> Self: ...']
    for c in cols:
        out += ["    @overload",
                f"    def as_subquery(self, column: Literal[{c.attr!r}]) -> "
                f"Subquery[{n.model}, {full[c.attr]}]: ..."]
    return [*out, "    @overload", f"    def as_subquery(self, column: _L) -> Subquery[{n.model}, Any]: ...",
            ""]


def _row_class(name: str, cols: Sequence[ColumnMeta], full: dict[str, str],
               labeled: bool = False) -> list[str]:
    """The row class of a partial select or returning(), generic in the fetched columns.

    Its parameter is the Literal union of the columns fetched, contravariant: `Row[Literal['id',
    'status']]` is a `Row[Literal['id']]`, so each column's property and `__getitem__`
    overload, whose `self` is the row of that one column, applies exactly when the column was
    fetched (the library's row class has a property per fetched column, too). Any other name
    is no attribute: `__getattr__: None` hides the library's `Row.__getattr__`, for mypy and
    pyright alike (mypy reads no name from a `__getattr__`'s parameter).
    """
    # a labeled row's column property applies where the column was fetched or is a label
    # (of Any type then: a label's type is not kept)
    params = "_F_contra, _L_contra" if labeled else "_F_contra"
    me = (f"{name}[Literal[{{attr!r}}], Never] | {name}[Never, Literal[{{attr!r}}]]" if labeled
          else f"{name}[Literal[{{attr!r}}]]")
    names = "_F_contra | _L_contra" if labeled else "_F_contra"
    out = [f"class {name}(Row[Any], Named[{names}], Generic[{params}]):"]
    for c in cols:
        out += ["    @property",
                f"    def {c.attr}(self: {me.format(attr=c.attr)}) -> {full[c.attr]}: ..."]
    if labeled:  # add_columns()'s labels, and no other name
        out += ["    if MYPY:  # mypy takes a __getattr__ of a str only (it never reads this row)",
                "        def __getattr__(self, name: str) -> Any: ...",
                "    else:",
                "        def __getattr__(self, name: _L_contra) -> Any: ..."]
    else:
        out.append("    __getattr__: None  # type: ignore[assignment, misc]  # no other name is a column")
    for c in cols:
        out += ["    @overload",
                f"    def __getitem__(self: {me.format(attr=c.attr)}, "
                f"key: Literal[{c.attr!r}]) -> {full[c.attr]}: ..."]
    if labeled:
        out += ["    @overload", "    def __getitem__(self, key: _L_contra) -> Any: ..."]
    return [*out, "    @overload", "    def __getitem__(self, key: SupportsIndex) -> Any: ...",
            "    @overload", "    def __getitem__(self, key: slice) -> tuple[Any, ...]: ...", ""]


def _names(models: Sequence[type[Model]]) -> dict[type[Model], _Names]:
    """Each model's generated names: its class name, or module and class where two share one."""
    counts: dict[str, int] = {}
    for m in models:
        counts[m.__name__] = counts.get(m.__name__, 0) + 1
    return {m: _Names(f"{m.__module__}.{m.__qualname__}",
                      m.__name__ if counts[m.__name__] == 1
                      else m.__module__.replace(".", "_") + "_" + m.__name__)
            for m in models}


_HEADER = ("# Generated by `tempest-typed stubs {modules}`: do not edit;\n"
           "# regenerate when a model changes (`--check` fails while these are stale).\n"
           # A builder of one model narrows the library's parameters (an override pyright
           # calls incompatible), and a one-column overload comes before the one of any
           # columns it overlaps: both on purpose, so neither checker is to report them here
           # (mypy reports the errors of a stub found on mypy_path, as of the user's code);
           # mypy calls select()'s overload of any columns, which it takes where it infers a
           # list of names as list[str], one that can never match.
           "# pyright: reportIncompatibleMethodOverride=false, reportOverlappingOverload=false\n"
           '# mypy: disable-error-code="override, overload-overlap, overload-cannot-match"\n')


def _generated(models: Sequence[type[Model]], modules: str) -> str:
    names = _names(models)
    lines = [_HEADER.format(modules=modules).rstrip("\n"),
             '"""Per-model types of the builders: column names, where/set/values dicts, rows."""',
             "",
             "from collections.abc import Mapping, Sequence, Set as AbstractSet",
             "from datetime import date, datetime",
             "from decimal import Decimal",
             "from typing import Any, Final, Generic, Literal, LiteralString, Never, Required, Self, "
             "SupportsIndex, TypedDict, TypeVar, overload",
             "from uuid import UUID",
             "",
             *sorted({f"import {m.__module__}" for m in models}),
             "from typing_extensions import TypeVar as TypeVarD",
             "from tempest_typed.expressions import CaseValue, Computed, Excluded, Expr, Expression, Now, "
             "Over, Raw, TypedValue",
             "from tempest_typed.model import Model",
             "from tempest_typed.row import Row",
             "from tempest_typed.statements.cte import NamedSelect",
             "from tempest_typed.statements import (AggregateFunction, Condition, Delete, "
             "ExistsCondition, Grouped, Insert, Join, Select, SetQuery, Subquery, Update)",
             "",
             "# mypy takes `if MYPY:` as always true and skips its else branch; pyright reads",
             "# both branches and keeps each name's last declaration, the else branch's",
             "MYPY: Final = False",
             "",
             '_R_co = TypeVar("_R_co", covariant=True)',
             '_W_co = TypeVar("_W_co", covariant=True)',
             '_C_co = TypeVar("_C_co", covariant=True)',
             '_F_contra = TypeVar("_F_contra", contravariant=True)',
             '_V_co = TypeVar("_V_co", covariant=True)',
             '_P = TypeVarD("_P", bound=LiteralString, default=Never)',
             '_O = TypeVarD("_O", bound=LiteralString, default=Never)',
             '_X = TypeVarD("_X", bound=LiteralString, default=Never)',
             '_L = TypeVarD("_L", bound=LiteralString, default=Never)',
             '_L_contra = TypeVar("_L_contra", contravariant=True)',
             '_F = TypeVar("_F", bound=LiteralString)',
             '_N = TypeVar("_N", bound=LiteralString)',
             *[f'_T{i} = TypeVar("_T{i}")' for i in range(1, _JOINED + 1)],
             *[f'_A{i} = TypeVar("_A{i}", bound=LiteralString)' for i in range(1, _JOINED + 1)],
             *[f'_M{i} = TypeVar("_M{i}", bound=Model)' for i in range(2, _JOINED + 1)],
             "",
             *_EXPRESSIONS.splitlines(),
             "",
             "class Combined(Condition, Generic[_W_co]):",
             '    """and_/or_/not_ of where dicts, typed by the dict the statement around expects."""',
             "",
             "# a where dict whose type says nothing of its values (`dict[str, Any]`, a mapping",
             "# parameter) is taken as it is, as an `Any` would be: no value is an _Untyped, so a",
             "# dict written in place, or of known values, is still checked against the model's.",
             "# Not for mypy (see _where in stubs.py), which reads a dict or and_() written in",
             "# place against the whole union",
             "class _Untyped: ...",
             "Untyped = Mapping[str, _Untyped] | Combined[Mapping[str, _Untyped]]",
             ""]
    lines += _NAMED.splitlines()
    lines += _joins()
    for m in models:
        lines += _model_block(m, names[m])
    return "\n".join(lines).rstrip("\n") + "\n"


def _init(models: Sequence[type[Model]], modules: str) -> str:
    import tempest_typed

    names = _names(models)
    homes: dict[str, list[str]] = {}
    for public, home in sorted(tempest_typed._HOMES.items()):
        if public not in _SHADOWED and public != "sql":
            homes.setdefault(home, []).append(public)
    lines = [_HEADER.format(modules=modules).rstrip("\n"),
             '"""tempest_typed, with select/insert/update/delete declared per model and and_/or_/'
             'not_ typed by where they go."""',
             "",
             "from typing import Any, LiteralString, Never, TypeAlias, TypeVar, overload",
             "",
             "from tempest_typed.statements import ExistsCondition",
             "from tempest_typed.statements.cte import NamedSelect",
             "",
             "import tempest_typed.sql as sql"]
    for home in sorted(homes):
        items = ", ".join(f"{p} as {p}" for p in homes[home])
        lines.append(f"from tempest_typed.{home} import {items}")
    lines += [*sorted({f"import {m.__module__}" for m in models}),
              "import tempest_typed._generated as _g",
              "",
              "# what and_/or_/not_ return, typed by no where dict (a function annotated `->",
              "# Condition`): every where() takes it, and a condition of a wrong dict is still",
              "# refused (a where() that took the library's Condition would take any and_() too).",
              "# To pyright the three are typed as the dict they combine (below), and a declared",
              "# type that holds them would be narrowed to that dict on assignment: Any there",
              "if _g.MYPY:",
              "    Condition: TypeAlias = _g.Combined[Any]",
              "else:",
              "    Condition: TypeAlias = Any",
              "",
              f"__all__ = {sorted(tempest_typed.__all__)!r}",
              "",
              '_M = TypeVar("_M", bound=Model)',
              '_R = TypeVar("_R")',
              '_N = TypeVar("_N", bound=LiteralString)',
              '_F = TypeVar("_F", bound=LiteralString)',
              '_L = TypeVar("_L", bound=LiteralString)',
              ""]
    # A model that derives from another comes first: the first overload that matches wins.
    models = sorted(models, key=lambda m: (-len(m.__mro__), m.__module__, m.__qualname__))
    for m in models:
        n = names[m]
        lines += ["@overload", f"def select(model: type[{n.model}], /) -> _g.{n.select}[{n.model}]: ..."]
        fetched = f"_g.{n.of('Fetched')}"
        lines += ["@overload",
                  f"def select(model: type[{n.model}], columns: list[{fetched}] | "
                  f"tuple[{fetched}, ...], /) -> _g.{n.select}[_g.{n.row}[{fetched}]]: ..."]
        # mypy infers a list display of names as list[str], not as a list of the type
        # variable: it takes this one, the names checked, the row typed for every column
        lines += ["@overload",
                  f"def select(model: type[{n.model}], columns: list[_g.{n.column}] | "
                  f"tuple[_g.{n.column}, ...], /) -> _g.{n.select}[_g.{n.row}[_g.{n.column}]]: ..."]
    # a named select of a model's rows: where() and order_by() take its columns and labels
    named_selects = ["# a named select of a model's rows: where() and order_by() take its names"]
    for m in models:
        n = names[m]
        for row, selected in ((f"_g.{n.row}[_F]", "NamedSelected[{row}, _F]"),
                              (f"_g.{n.of('LabeledRow')}[_F, _L]",
                               "LabeledNamedSelected[{row}, _F, _L]"),
                              (n.model, f"NamedSelected[{{row}}, _g.{n.column}]")):
            named_selects += ["@overload", f"def select(model: NamedSelect[{row}], /) -> "
                              f"_g.{selected.format(row=row)}: ..."]
    lines += ["# a model these stubs do not know (a type variable, a model defined elsewhere):",
              "# every column, as the library types it; some columns need a known model",
              "@overload", "def select(model: type[_M], /) -> Select[_M, _M]: ...",
              "# a named select (sql.cte): rows typed as the library types them",
              *named_selects,
              "@overload", "def select(model: NamedSelect[_R], /) -> Select[Any, _R]: ...",
              "# some columns of a named select of a model's columns and labels: those names only",
              "@overload",
              "def select(model: NamedSelect[_g.Named[_N]], columns: list[_N] | tuple[_N, ...], /) "
              "-> Select[Any, _g.ColumnsRow[_N]]: ...",
              "@overload",
              "def select(model: NamedSelect[Any], columns: list[str] | tuple[str, ...], /) "
              "-> Select[Any, Row[Any]]: ...", ""]
    # and_/or_/not_ take their dict type from where the condition goes: in select(M).where()
    # it is M's where dict (a wrong key or value is an error there); in a join, any mapping.
    # To pyright typed as that dict, not as Combined of it: pyright solves a call's type
    # variable from the type expected there only when that type is not a union, and where()
    # takes a union (a dict, a combination, EXISTS), so `where(not_({...}))` read the dict as
    # dict[str, str] and was refused; the dict type itself it finds in the union. mypy solves
    # either, but not a bare type variable against that union: it keeps Combined.
    cond = "_W | _g.Combined[_W] | ExistsCondition"
    lines += ['_W = TypeVar("_W")', "", "if _g.MYPY:"]
    for returned in ("_g.Combined[_W]", "_W"):
        lines += [f"    def and_(condition: {cond}, /, *conditions: {cond}) -> {returned}: ...",
                  f"    def or_(condition: {cond}, /, *conditions: {cond}) -> {returned}: ...",
                  f"    def not_(condition: {cond}) -> {returned}: ..."]
        lines += ["else:"] if returned != "_W" else [""]
    lines += ['_A = TypeVar("_A", bound=LiteralString)', "",
              "@overload", "def join(model: type[_M], alias: _A, /) -> _g.Join1[_M, _A]: ...",
              "@overload",
              "def join(model: NamedSelect[Any], alias: _A, /) -> _g.Join1[Row[Any], _A]: ...", ""]
    for kind in ("insert", "update", "delete"):
        for m in models:
            n = names[m]
            lines += ["@overload",
                      f"def {kind}(model: type[{n.model}], /) -> _g.{n.of(kind.capitalize())}[Never]: ..."]
        lines += ["@overload", f"def {kind}(model: type[_M], /) -> {kind.capitalize()}[_M, Never]: ...",
                  ""]
    return "\n".join(lines).rstrip("\n") + "\n"


#: tempest_typed.sql as the stubs declare it: the library's signatures, except that an
#: aggregate's or a function's type names its columns (a LiteralString, kept as its Literal in
#: a variable too, by pyright), units and parts are Literals, and a cte has its statement's rows.
#: tests/stubs/test_stubs.py holds its names and parameters to the module's.
_SQL = '''"""tempest_typed.sql, with each aggregate and function typed by the columns it reads."""

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal, LiteralString, Never, overload
from uuid import UUID

from typing_extensions import TypeVar

from tempest_typed._generated import (CoalesceOf, ColOf, CountOf, CountRows, DistinctOf,
                                      ExcludedOf, LengthOf, NumberOf, OrderOf, PartOf, Projected,
                                      ScalarOf, SumOf, TextOf, TimePartOf, TruncOf, ValueOf,
                                      WindowCall)
from tempest_typed.expressions import CaseValue, Expr, Now, Raw
from tempest_typed.expressions import Expression as Expression
from tempest_typed.row import Row
from tempest_typed.statements import Grouped, Select, SetQuery
from tempest_typed.statements.cte import NamedSelect
from tempest_typed.statements.where import ExistsCondition, Subquery

__all__ = {names!r}

# a column name, kept as its Literal; Never where a function reads an expression instead
_C = TypeVar("_C", bound=LiteralString, default=Never)
_C2 = TypeVar("_C2", bound=LiteralString, default=Never)
_C3 = TypeVar("_C3", bound=LiteralString, default=Never)
#: what coalesce() takes beside column names: expressions and values
_Given = Expression | int | float | Decimal | bool | date | datetime | UUID | bytes | None

def raw(text: LiteralString) -> Raw: ...
def expr(template: object, *values: object) -> Expr: ...
def now(plus: float | Expression | None = None) -> Now: ...
def excluded(column: str) -> ExcludedOf: ...
def col(name: _C) -> ColOf[_C]: ...
def exists(query: object) -> ExistsCondition: ...
def not_exists(query: object) -> ExistsCondition: ...
def scalar(subquery: Subquery[Any, Any]) -> ScalarOf: ...
@overload
def count(column: None = None) -> CountRows: ...
@overload
def count(column: _C) -> CountOf[_C]: ...
def count_distinct(column: _C) -> DistinctOf[_C]: ...
def sum(column: _C) -> SumOf[_C]: ...
def avg(column: _C) -> SumOf[_C]: ...
def min(column: _C) -> OrderOf[_C]: ...
def max(column: _C) -> OrderOf[_C]: ...
def value(x: object) -> ValueOf: ...
def coalesce(first: _C | _Given, second: _C2 | _Given, /, *more: _C3 | _Given) -> CoalesceOf[_C | _C2 | _C3]: ...
def lower(column: _C | Expression) -> TextOf[_C]: ...
def upper(column: _C | Expression) -> TextOf[_C]: ...
def length(column: _C | Expression) -> LengthOf[_C]: ...
def abs(column: _C | Expression) -> NumberOf[_C]: ...
def round(column: _C | Expression, digits: int = 0) -> NumberOf[_C]: ...
def date_trunc(unit: Literal["year", "month", "day", "hour", "minute"], column: _C | Expression) -> TruncOf[_C]: ...
@overload
def extract(part: Literal["year", "month", "day", "dow"], column: _C | Expression) -> PartOf[_C]: ...
@overload
def extract(part: Literal["hour", "minute"], column: _C | Expression) -> TimePartOf[_C]: ...
def case(*whens: tuple[object, object], else_: object = None) -> CaseValue: ...
def row_number() -> WindowCall[Never]: ...
def rank() -> WindowCall[Never]: ...
def dense_rank() -> WindowCall[Never]: ...
def lag(column: _C | Expression, n: int = 1) -> WindowCall[_C]: ...
def lead(column: _C | Expression, n: int = 1) -> WindowCall[_C]: ...
# a named select is typed by its statement's rows; a join's rows are models by alias, so a
# join is named once projected (project() makes a Projected)
_R = TypeVar("_R")
@overload
def cte(name: str, statement: Projected) -> NamedSelect[Row[Any]]: ...
@overload
def cte(name: str, statement: Select[Any, _R] | SetQuery[_R] | Grouped[_R, Any, Any]) -> NamedSelect[_R]: ...
# a recursive one by its base's rows, which its step is given as the table being defined
@overload
def recursive_cte(name: str, base: Projected, step: Callable[[NamedSelect[Row[Any]]], object]) -> NamedSelect[Row[Any]]: ...
@overload
def recursive_cte(name: str, base: Select[Any, _R] | SetQuery[_R] | Grouped[_R, Any, Any], step: Callable[[NamedSelect[_R]], object]) -> NamedSelect[_R]: ...
'''


def generate(module_names: Sequence[str]) -> dict[str, str]:
    """The stub files for the models of the named modules: relative path -> text."""
    from . import sql

    models = models_of(module_names)
    modules = " ".join(module_names)
    header = _HEADER.format(modules=modules)
    try:
        return {"tempest_typed/__init__.pyi": _init(models, modules),
                "tempest_typed/_generated.pyi": _generated(models, modules),
                "tempest_typed/sql.pyi": header + _SQL.format(names=sorted(sql.__all__))}
    except ValidationError as exc:  # a model the library refuses once its columns are read
        raise StubError(str(exc).splitlines()[0]) from exc


def _stale(files: dict[str, str], out: Path) -> list[str]:
    return [rel for rel, text in sorted(files.items())
            if not (out / rel).is_file() or (out / rel).read_text(encoding="utf-8") != text]


def main(argv: Iterable[str] | None = None) -> int:
    """`python -m tempest_typed.stubs MODULE... -o DIR [--check]`: write or check the stubs."""
    parser = argparse.ArgumentParser(
        prog="tempest-typed stubs",
        description="Write type stubs from the models of MODULE(s), for pyright/Pylance and "
                    "for mypy without the plugin.")
    parser.add_argument("modules", nargs="+", metavar="MODULE", help="a module defining models")
    parser.add_argument("-o", "--output", default="stubs", help="the stub directory (pyright's stubPath, mypy's mypy_path)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the stubs are missing or stale")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if "" not in sys.path:  # the modules of the current directory, as `python -m` finds them
        sys.path.insert(0, "")
    try:
        files = generate(args.modules)
    except StubError as exc:
        print(f"tempest-typed stubs: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.output)
    stale = _stale(files, out)
    if args.check:
        for rel in stale:
            print(f"tempest-typed stubs: {out / rel} is stale; run tempest-typed stubs "
                  f"{' '.join(args.modules)} -o {args.output}", file=sys.stderr)
        return 1 if stale else 0
    for rel in stale:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[rel], encoding="utf-8")
    return 0


def cli() -> int:
    """The `tempest-typed` command: `tempest-typed stubs MODULE... -o DIR [--check]`."""
    args = sys.argv[1:]
    if not args or args[0] != "stubs":
        print("usage: tempest-typed stubs MODULE... [-o DIR] [--check]", file=sys.stderr)
        return 2
    return main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
