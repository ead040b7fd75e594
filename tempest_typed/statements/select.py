"""SELECT: columns, where, order, limit/offset, row locks, and the one-column subquery."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar, overload

from ..errors import ValidationError
from ..model import INT_MAX, ColumnMeta, Model, meta_of
from ..row import Row
from .base import R_co, Statement, column_list
from .nodes import Node
from .where import Subquery, WhereInput, with_conditions

__all__ = ["Select", "select"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)


class Select(Statement[R_co], Generic[M_co, R_co]):
    """SELECT ... FROM model [WHERE] [ORDER BY] [LIMIT] [OFFSET] [FOR UPDATE/SHARE]."""

    __slots__ = ("_columns", "_limit", "_lock", "_offset", "_order", "_where")

    _columns: tuple[ColumnMeta, ...] | None
    _where: Node | None
    _order: tuple[tuple[ColumnMeta, bool], ...]
    _limit: Node | None
    _offset: Node | None
    _lock: tuple[object, ...] | None

    def _clone(self) -> Select[M_co, R_co]:
        new: Select[M_co, R_co] = object.__new__(Select)
        new._meta = self._meta
        new._values = self._values
        new._columns = self._columns
        new._where = self._where
        new._order = self._order
        new._limit = self._limit
        new._offset = self._offset
        new._lock = self._lock
        return new

    def _key(self, columns: tuple[ColumnMeta, ...] | None = None) -> Node:
        return ("select", self._meta, columns or self._columns, self._where, self._order,
                self._limit, self._offset, self._lock)

    def where(self, *conditions: WhereInput) -> Select[M_co, R_co]:
        """Keep the rows matching every condition; repeated calls AND together."""
        where, values = with_conditions(self._meta, self._where, self._values, conditions)
        new = self._clone()
        new._where = where
        new._values = values
        return new

    def order_by(self, column: str, direction: Literal["asc", "desc"] = "asc") -> Select[M_co, R_co]:
        """Sort by a column, ascending or descending; repeated calls add tie-breakers."""
        col = self._meta.column(column, "order_by()")
        if direction not in ("asc", "desc"):
            raise ValidationError(
                f"{self._meta.name}.order_by({column!r}, {direction!r}): direction is "
                "'asc' or 'desc'"
            )
        new = self._clone()
        new._order = (*self._order, (col, direction == "desc"))
        return new

    def _count(self, name: str, n: object) -> Node:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= INT_MAX:
            raise ValidationError(
                f"{self._meta.name}: {name}() takes an int >= 0 (and <= {INT_MAX}), got {n!r}"
            )
        self._values = (*self._values, n)
        return ("param", len(self._values) - 1, "int")

    def limit(self, n: int) -> Select[M_co, R_co]:
        """Return at most n rows."""
        new = self._clone()
        new._limit = new._count("limit", n)
        return new

    def offset(self, n: int) -> Select[M_co, R_co]:
        """Skip the first n rows."""
        new = self._clone()
        new._offset = new._count("offset", n)
        return new

    def _locked(self, mode: str, skip_locked: bool, no_wait: bool,
                of: type[Model] | Sequence[type[Model]] | None) -> Select[M_co, R_co]:
        if skip_locked and no_wait:
            raise ValidationError(
                f"{self._meta.name}: for_{mode}() takes skip_locked=True or no_wait=True, not "
                "both: skip rows another transaction holds, or fail at once on them"
            )
        tables: tuple[str, ...] = ()
        if of is not None:
            if not isinstance(of, type | list | tuple):
                raise ValidationError(
                    f"{self._meta.name}: for_{mode}(of=...) takes a model or a list of models, "
                    f"got {type(of).__name__} {of!r}"
                )
            models = [of] if isinstance(of, type) else of
            for model in models:
                meta = meta_of(model)
                if meta is not self._meta:
                    raise ValidationError(
                        f"{self._meta.name}: for_{mode}(of=[{meta.name}]) names a table that is "
                        f"not in this select (FROM {self._meta.table})"
                    )
                tables += (meta.table,)
        new = self._clone()
        new._lock = (mode, bool(skip_locked), bool(no_wait), tables)
        return new

    def for_update(self, *, skip_locked: bool = False, no_wait: bool = False,
                   of: type[Model] | Sequence[type[Model]] | None = None) -> Select[M_co, R_co]:
        """Lock the selected rows until the transaction ends (FOR UPDATE)."""
        return self._locked("update", skip_locked, no_wait, of)

    def for_share(self, *, skip_locked: bool = False, no_wait: bool = False,
                  of: type[Model] | Sequence[type[Model]] | None = None) -> Select[M_co, R_co]:
        """Take a read lock on the selected rows until the transaction ends (FOR SHARE)."""
        return self._locked("share", skip_locked, no_wait, of)

    def as_subquery(self, column: str) -> Subquery[M_co, Any]:
        """This select projected on one column, as an `in`/`not_in` operand."""
        col = self._meta.column(column, "as_subquery()")
        return Subquery(self._key((col,)), self._values, col)

    @property
    def columns(self) -> tuple[str, ...]:
        """The attribute names of the fetched columns."""
        cols = self._columns if self._columns is not None else self._meta.columns
        return tuple(c.attr for c in cols)


@overload
def select(model: type[M], /) -> Select[M, M]: ...


@overload
def select(model: type[M], columns: list[str] | tuple[str, ...], /) -> Select[M, Row]: ...


def select(model: type[Model], columns: Sequence[str] | None = None, /) -> Select[Any, Any]:
    """SELECT from a model: every column (rows are model instances) or some (rows are Row)."""
    stmt: Select[Any, Any] = object.__new__(Select)
    stmt._meta = meta_of(model)
    stmt._values = ()
    stmt._columns = None if columns is None else column_list(stmt._meta, columns, "select()")
    stmt._where = None
    stmt._order = ()
    stmt._limit = None
    stmt._offset = None
    stmt._lock = None
    return stmt
