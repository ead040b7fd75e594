"""SELECT from one model: columns, where, order, limit/offset, distinct, row locks, aggregates,
and the one-column subquery."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ..model import ColumnMeta, Model, meta_of
from ..row import Row
from .aggregate import AggregateFunction, Grouped, grouped
from .base import R_co, column_list
from .cte import NamedSelect, cte_source
from .nodes import select_all
from .query import Context, Query, replaced, with_columns
from .scope import table_scope

if TYPE_CHECKING:
    from .where import Subquery

__all__ = ["Select", "select"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)
R = TypeVar("R")


class Select(Query[R_co], Generic[M_co, R_co]):
    """SELECT ... FROM model [WHERE] [ORDER BY] [LIMIT] [OFFSET] [FOR UPDATE/SHARE]."""

    __slots__ = ()

    def aggregate(self, group_by: Sequence[str | Mapping[str, Any]],
                  aggregates: Mapping[str, AggregateFunction[Any]]) -> Grouped[Row]:
        """Group the rows by columns and compute aggregates per group: rows of the group
        columns, then the labels (`aggregate([], {...})` is one row over every row)."""
        return grouped(self, group_by, aggregates)

    def add_columns(self, columns: Mapping[str, Any]) -> Select[M_co, Row]:
        """Computed columns beside the fetched ones: rows are Rows of the fetched columns
        (every column of a whole-model select), then the labels."""
        items = self._ctx.items
        fetched = self._meta.columns if items is None else items
        names = [c.attr for c in fetched if isinstance(c, ColumnMeta)]
        node, context, values = with_columns(self, columns, names, tuple(fetched))
        new: Select[M_co, Row] = object.__new__(Select)
        new._meta = self._meta
        new._values = values
        new._set_node(node, context)
        return new

    if TYPE_CHECKING:
        # The same method as Query's, typed with this select's model.
        def as_subquery(self, column: str) -> Subquery[M_co, Any]:
            """This select projected on one column: an `in` operand or a value (sql.scalar)."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The attribute names of the fetched columns."""
        items = self._ctx.items
        cols = self._meta.columns if items is None else items
        return tuple(c.attr for c in cols if isinstance(c, ColumnMeta))


#: select(model) of every column, by model class: a builder is immutable, so one serves every
#: call (it made a scope lookup, the bare node and the builder's stores on each)
_PLAIN: dict[type, Select[Any, Any]] = {}


@overload
def select(model: type[M], /) -> Select[M, M]: ...


@overload
def select(model: type[M], columns: list[str] | tuple[str, ...], /) -> Select[M, Row]: ...


@overload
def select(model: NamedSelect[R], /) -> Select[Any, R]: ...


@overload
def select(model: NamedSelect[Any], columns: list[str] | tuple[str, ...], /
           ) -> Select[Any, Row]: ...


def select(model: type[Model] | NamedSelect[Any], columns: Sequence[str] | None = None, /
           ) -> Select[Any, Any]:
    """SELECT from a model: every column (rows are model instances) or some (rows are Row);
    from a named select (sql.cte), Rows of its columns (or of some of them)."""
    if columns is None:
        found = _PLAIN.get(model) if isinstance(model, type) else None
        if found is not None:
            return found
    if isinstance(model, NamedSelect):
        return _select_named(model, columns)
    stmt: Select[Any, Any] = object.__new__(Select)
    meta = stmt._meta = meta_of(model)
    stmt._values = ()
    node = select_all(meta)
    if columns is not None:
        node = replaced(node, "items", column_list(meta, columns, "select()"))
    stmt._set_node(node, Context(node, table_scope(meta)))
    if columns is None:
        if len(_PLAIN) >= 4096:
            _PLAIN.clear()
        _PLAIN[model] = stmt
    return stmt


def _select_named(named: NamedSelect[Any], columns: Sequence[str] | None) -> Select[Any, Row]:
    """SELECT from a named select (sql.cte): rows are Rows of its columns."""
    stmt: Select[Any, Row] = object.__new__(Select)
    meta = stmt._meta = named.meta
    made = cte_source(named, None, ())
    assert made is not None  # a NamedSelect
    source, stmt._values = made
    node = replaced(select_all(meta), "source", source)
    if columns is not None:
        node = replaced(node, "items", column_list(meta, columns, "select()"))
    stmt._set_node(node, Context(node, table_scope(meta)))
    return stmt
