"""Results: the fetched rows of one statement, already mapped to their Python types."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ..dialects.base import ComputedModels, JoinedModels, ResultShape
from ..errors import MultipleResultsError, NoResultError, TempestError
from ..model import DerivedColumn, ModelMeta, has_instance_dict
from ..row import row_class
from .types import Adapter, decimal_reader, to_bool, to_float

__all__ = ["Result", "row_builder"]

R_co = TypeVar("R_co", covariant=True)


class Result(Generic[R_co]):
    """The outcome of one execute(): its rows (if it returns any) and the rows it affected."""

    __slots__ = ("_rowcount", "_rows", "_sql")

    def __init__(self, rows: list[Any] | None, rowcount: int, sql: str) -> None:
        self._rows = rows
        self._rowcount = rowcount
        self._sql = sql

    def _fetched(self) -> list[Any]:
        if self._rows is None:
            raise TempestError(
                "this statement returns no rows; add .returning(...) to an insert, update or "
                "delete to fetch what it wrote, or use rows_affected()"
            )
        return self._rows

    def all(self) -> list[R_co]:
        """Every row."""
        return list(self._fetched())

    def first(self) -> R_co | None:
        """The first row, or None when there is none."""
        rows = self._fetched()
        return rows[0] if rows else None

    def one(self) -> R_co:
        """The only row; NoResultError or MultipleResultsError otherwise."""
        return self._only("one")  # type: ignore[no-any-return]  # rows are of this Result's row type

    def _only(self, call: str) -> Any:
        """The only row, for `call()`, or the error naming it and what reads such rows."""
        rows = self._fetched()
        if not rows:
            raise NoResultError(f"{call}() found no row for: {self._sql}\n  where no row is an "
                                "answer, first() or one_or_none() gives None")
        if len(rows) > 1:
            raise MultipleResultsError(f"{call}() found {len(rows)} rows for: {self._sql}\n  "
                                       "all() or scalars() reads several; where() or limit(1) "
                                       "narrows them to one")
        return rows[0]

    def one_or_none(self) -> R_co | None:
        """The only row or None; MultipleResultsError when there are several."""
        rows = self._fetched()
        if len(rows) > 1:
            raise MultipleResultsError(f"one_or_none() found {len(rows)} rows for: {self._sql}")
        return rows[0] if rows else None

    def scalar(self) -> Any:
        """The first column of the only row; NoResultError or MultipleResultsError otherwise."""
        return _first_column(self._only("scalar"))

    def scalars(self) -> list[Any]:
        """The first column of every row."""
        return [_first_column(r) for r in self._fetched()]

    def rows_affected(self) -> int:
        """How many rows the statement inserted, updated, deleted or matched."""
        if self._rowcount < 0 and self._rows is not None:
            return len(self._rows)
        return max(self._rowcount, 0)

    def __iter__(self) -> Iterator[R_co]:
        """Iterate over the rows."""
        return iter(self._fetched())

    def __len__(self) -> int:
        return len(self._fetched())


def _first_column(row: Any) -> Any:
    if isinstance(row, tuple):
        return row[0]
    meta = type(row).__tempest_meta__
    return getattr(row, meta.columns[0].attr)


#: adapters that only call a builtin: the builtin itself saves a Python frame per cell
#: (measured: BENCHMARKS.md, "Fast paths")
_BUILTIN: dict[Any, Any] = {to_bool: bool, to_float: float}

#: how an aggregate's value is read whatever the driver returns: SUM of an int column is a
#: numeric (Decimal) on PostgreSQL and MariaDB, AVG a numeric on both
_AGGREGATE: dict[str, Any] = {"int": int, "float": float}


def _converter(kind: str, adapters: dict[str, Adapter], aggregate: bool = False,
               scale: int | None = None) -> Any:
    convert = _AGGREGATE.get(kind) if aggregate else None
    if convert is None:
        convert = adapters.get(kind)
        if kind == "decimal":
            convert = decimal_reader(convert, scale)
    return _BUILTIN.get(convert, convert)


#: the start of every builder: it turns the fetched list into the result in place, each
#: tuple let go as its row is made, so the fetched tuples and the rows made of them are never
#: all alive at once (a new list would double the peak of a large result)
_IN_PLACE = "    if type(rows) is not list:\n        rows = list(rows)\n    i = 0\n"


def _stores(obj: str, meta: ModelMeta, cells: list[str], indent: str) -> str:
    """The lines storing each cell on the new instance `obj`.

    An attribute store keeps CPython's inline instance values (no per-instance dict is made
    until one is asked for): less memory and less time than filling `obj.__dict__`. A model
    whose class defines its own `__setattr__` is filled through its `__dict__`, as its
    constructor's fields would be without running that hook, or, its instances having no
    `__dict__` (`slots=True`), through `object.__setattr__`.
    """
    pairs = zip(meta.columns, cells, strict=True)
    if meta.model.__setattr__ is object.__setattr__:
        return "".join(f"{indent}{obj}.{c.attr} = {cell}\n" for c, cell in pairs)
    if not has_instance_dict(meta.model):
        return "".join(f"{indent}store({obj}, {c.attr!r}, {cell})\n" for c, cell in pairs)
    return f"{indent}d = {obj}.__dict__\n" + "".join(
        f"{indent}d[{c.attr!r}] = {cell}\n" for c, cell in pairs)


def row_builder(result: ResultShape,
                adapters: dict[str, Adapter]) -> Callable[[Sequence[Any]], list[Any]] | None:
    """The function turning fetched tuples into model instances or Rows, resolved once."""
    if result is None:
        return None
    # The builder is written out as Python source once per statement shape: one unpacking of
    # the fetched tuple, one converter call per column that needs one, one store per
    # attribute (measured against a generic loop: BENCHMARKS.md, "Fast paths").
    names: dict[str, Any] = {"new": object.__new__, "make": tuple.__new__,
                             "store": object.__setattr__}
    if isinstance(result, JoinedModels):
        return _without_gc_pauses(_joined_builder(result, adapters, names))
    if isinstance(result, ComputedModels):  # a column another statement computes
        kinds = [(c.kind, computed, c.scale)
                 for c, computed in zip(result.meta.columns, result.computed, strict=True)]
        result = result.meta
    elif isinstance(result, ModelMeta):
        kinds = [(c.kind, False, c.scale) for c in result.columns]
    else:
        kinds = [(f.kind, f.aggregate, f.scale) for f in result]
    cells: list[str] = []
    for i, (kind, aggregate, scale) in enumerate(kinds):
        convert = _converter(kind, adapters, aggregate, scale)
        if convert is None:
            cells.append(f"v{i}")
        else:
            names[f"c{i}"] = convert
            cells.append(f"(c{i}(v{i}) if v{i} is not None else None)")
    unpack = "".join(f"v{i}, " for i in range(len(kinds)))
    if isinstance(result, ModelMeta):
        names["model"] = result.model
        stores = _stores("obj", result, cells, "        ")
        source = (
            "def build(rows):\n"
            f"{_IN_PLACE}"
            f"    for {unpack}in rows:\n"
            "        obj = new(model)\n"
            f"{stores}"
            "        rows[i] = obj\n"
            "        i += 1\n"
            "    return rows\n"
        )
    else:
        names["row_cls"] = row_class(tuple(f.name for f in result))
        made = ("make(row_cls, raw)" if not any(cell != f"v{i}" for i, cell in enumerate(cells))
                else f"make(row_cls, ({', '.join(cells)},))")
        loop = "raw " if made == "make(row_cls, raw)" else unpack
        source = (
            "def build(rows):\n"
            f"{_IN_PLACE}"
            f"    for {loop}in rows:\n"
            f"        rows[i] = {made}\n"
            "        i += 1\n"
            "    return rows\n"
        )
    exec(source, names)
    built: Callable[[Sequence[Any]], list[Any]] = names["build"]
    return _without_gc_pauses(built)


def _joined_builder(result: JoinedModels, adapters: dict[str, Adapter],
                    names: dict[str, Any]) -> Callable[[Sequence[Any]], list[Any]]:
    """The builder of join rows: one model per alias, None for a left-joined side whose
    primary key (or, without one, every column) is NULL."""
    lines: list[str] = []
    position = 0
    for n, (meta, optional) in enumerate(zip(result.metas, result.optional, strict=True)):
        names[f"model{n}"] = meta.model
        first = position
        # a named select (sql.cte) under an alias is a Row of its columns, a model otherwise
        derived = bool(meta.columns) and type(meta.columns[0]) is DerivedColumn
        cells: list[str] = []
        for col in meta.columns:
            i = position
            position += 1
            convert = _converter(col.kind, adapters, derived, scale=col.scale)
            if convert is None:
                cells.append(f"v{i}")
            else:
                names[f"c{i}"] = convert
                cells.append(f"(c{i}(v{i}) if v{i} is not None else None)")
        body = ([f"o{n} = make(model{n}, ({', '.join(cells)},))"] if derived else
                [f"o{n} = new(model{n})", *_stores(f"o{n}", meta, cells, "").splitlines()])
        if optional:
            keys = meta.primary_key or meta.columns
            test = " and ".join(f"v{first + meta.columns.index(k)} is None" for k in keys)
            lines.append(f"        if {test}:")
            lines.append(f"            o{n} = None")
            lines.append("        else:")
            lines.extend("            " + line for line in body)
        else:
            lines.extend("        " + line for line in body)
    labels: list[str] = []
    for field in result.extra:  # add_columns(): the labels after the models
        i = position
        position += 1
        convert = _converter(field.kind, adapters, field.aggregate, field.scale)
        if convert is None:
            labels.append(f"v{i}")
        else:
            names[f"c{i}"] = convert
            labels.append(f"(c{i}(v{i}) if v{i} is not None else None)")
    names["row_cls"] = row_class((*result.aliases, *(f.name for f in result.extra)))
    unpack = "".join(f"v{i}, " for i in range(position))
    made = ", ".join([f"o{n}" for n in range(len(result.metas))] + labels)
    source = (
        "def build(rows):\n"
        f"{_IN_PLACE}"
        f"    for {unpack}in rows:\n"
        + "".join(line + "\n" for line in lines)
        + f"        rows[i] = make(row_cls, ({made},))\n"
        "        i += 1\n"
        "    return rows\n"
    )
    exec(source, names)
    built: Callable[[Sequence[Any]], list[Any]] = names["build"]
    return built


#: from this many rows on, a result is built with the cyclic garbage collector paused
_GC_PAUSE_ROWS = 1000


def _without_gc_pauses(build: Callable[[Sequence[Any]], list[Any]]
                       ) -> Callable[[Sequence[Any]], list[Any]]:
    """The builder, pausing the cyclic GC while it makes a large result.

    Every new model instance counts towards the collector's thresholds, so a large result
    set off several collections that walk every object alive, for nothing: the rows hold no
    cycles (measured: BENCHMARKS.md, "Fast paths"). The collector is switched back on only if it was on, and
    runs again at its next threshold.
    """
    isenabled, disable, enable = gc.isenabled, gc.disable, gc.enable

    def build_large(rows: Sequence[Any]) -> list[Any]:
        if len(rows) < _GC_PAUSE_ROWS or not isenabled():
            return build(rows)
        disable()
        try:
            return build(rows)
        finally:
            enable()

    return build_large
