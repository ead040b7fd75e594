"""What every statement shares: its model, its bound values, compile(), and the small parsers
(assignments, returning, order) that more than one builder uses."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._wording import NAMED_TWICE
from ..errors import ValidationError
from ..expressions import Expression
from ..model import INT_MAX, ColumnMeta, ModelMeta
from .nodes import (
    ALL_COLUMNS,
    Returning,
    RowCount,
    StatementNode,
    Value,
    find_params,
    new_node,
    param,
)
from .where import assigned_node, is_mapping

if TYPE_CHECKING:
    from ..dialects.base import Compiled, Dialect

__all__ = ["Statement"]

R_co = TypeVar("R_co", covariant=True)


class Statement(Generic[R_co]):
    """An immutable SQL statement whose rows are of type R_co; every method returns a new one."""

    __slots__ = ("_meta", "_values")

    _meta: ModelMeta
    _values: tuple[object, ...]

    def _key(self) -> StatementNode:
        raise NotImplementedError

    def compile(self, dialect: str | Dialect = "postgresql") -> Compiled:
        """The SQL text and parameters of this statement for `dialect`."""
        if isinstance(dialect, _DIALECT_TYPES):
            return dialect.compile(self)
        found = _NAMED.get(dialect) if type(dialect) is str else None
        if found is None:
            found = _resolve(dialect)
        return found.compile(self)

    @property
    def model(self) -> type[Any]:
        """The model class this statement reads or writes."""
        return self._meta.model

    def __repr__(self) -> str:
        try:
            text = self.compile("postgresql").sql
        except Exception as exc:  # a repr must not raise
            text = f"<not compilable: {exc}>"
        return f"<{type(self).__name__} {text}>"


def _dialects() -> ModuleType:
    """The dialects package, imported on first use (it imports the statement nodes)."""
    # Looked up in sys.modules: a function-level import runs the import machinery on every
    # compile() (measured: BENCHMARKS.md, "Fast paths").
    module = sys.modules.get(_DIALECTS)
    if module is None:
        module = importlib.import_module(_DIALECTS)
    return module


_DIALECTS = __name__.rsplit(".", 2)[0] + ".dialects"

#: (Dialect,) once the dialects are imported, and the dialects found by name: compile() then
#: makes no call before the dialect's own (measured: BENCHMARKS.md, "Fast paths").
_DIALECT_TYPES: tuple[type[Dialect], ...] = ()
_NAMED: dict[str, Dialect] = {}


def _resolve(dialect: object) -> Dialect:
    """The dialect named or given (DialectError for anything else), remembered by name."""
    global _DIALECT_TYPES
    module = _dialects()
    _DIALECT_TYPES = (module.Dialect,)
    found: Dialect = module.get_dialect(dialect)
    if type(dialect) is str:
        _NAMED[dialect] = found
    return found


def row_count(call: str, n: object, scope: str | None = None) -> int:
    """`n` checked as the count of limit() or offset() (`call`; `scope` names the statement
    in the error)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= INT_MAX:
        where = call if scope is None else f"{scope}: {call}"
        raise ValidationError(f"{where} takes an int >= 0 (and <= {INT_MAX}), got {n!r}")
    return n


def limit_node(n: object, scope: str | None = None) -> RowCount:
    """The LIMIT node of `n`, checked (`scope` names the statement in the error)."""
    return new_node(RowCount, (int(row_count("limit()", n, scope)), "rowcount"))  # int(): an int subclass may print otherwise


def assignments(meta: ModelMeta, mapping: object, values: list[object], where: str,
                allow_excluded: bool = False) -> tuple[tuple[ColumnMeta, Value], ...]:
    """`{column: value | sql.*}` as (column, value node) pairs, each value checked."""
    if type(mapping) is not dict and not is_mapping(mapping):
        raise ValidationError(
            f"{meta.name}: {where} takes a dict of column -> value, got "
            f"{type(mapping).__name__} {mapping!r}"
        )
    if not mapping:
        raise ValidationError(f"{meta.name}: {where} needs at least one column to set")
    out: list[tuple[ColumnMeta, Value]] = []
    by_attr = meta.by_attr
    for attr, value in mapping.items():
        col = (by_attr.get(attr) if type(attr) is str else None) or meta.column(attr, where)
        if col.accepts(value):  # the common case, decided by the value's exact type
            i = len(values)
            values.append(value)
            row = find_params(col.kind, ())
            out.append((col, row[i] if i < len(row) else param(i, col.kind)))
            continue
        if not isinstance(value, Expression) and is_mapping(value) and col.kind != "json":
            raise ValidationError(
                f"{meta.name}.{col.attr} in {where}: the dict {value!r} is not a value of "
                f"{col.type_name()}. An object is never bound as a parameter: for an SQL "
                "expression use sql.raw(\"...\") or sql.expr(\"...\", value)"
            )
        out.append((col, assigned_node(col, meta, value, values, where, allow_excluded)))
    return tuple(out)


def returning_columns(meta: ModelMeta, columns: tuple[object, ...]) -> Returning:
    """`returning()` is every column ("*"); `returning("id", ...)` those columns."""
    if not columns:
        return ALL_COLUMNS
    return named_once(meta, tuple(meta.column(c, "returning()") for c in columns),
                      "returning()")


def named_once(meta: ModelMeta, cols: tuple[ColumnMeta, ...],
               where: str) -> tuple[ColumnMeta, ...]:
    """The columns, refused when one is named twice (a row has one field of a name)."""
    if len(set(cols)) != len(cols):
        twice = next(c for i, c in enumerate(cols) if c in cols[:i])
        raise ValidationError(
            f"{meta.name}: {where} names the column {twice.attr!r} twice; {NAMED_TWICE}")
    return cols


def column_list(meta: ModelMeta, columns: object, where: str) -> tuple[ColumnMeta, ...]:
    """A non-empty list of column names as ColumnMeta."""
    if isinstance(columns, str) or not isinstance(columns, list | tuple):
        raise ValidationError(
            f"{meta.name}: {where} takes a list of column names, got {columns!r}"
            + (f"; write [{columns!r}]" if isinstance(columns, str) else "")
        )
    if not columns:
        raise ValidationError(f"{meta.name}: {where} needs at least one column")
    return tuple(meta.column(c, where) for c in columns)
