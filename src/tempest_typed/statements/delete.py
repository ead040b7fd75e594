"""DELETE: where, returning, and the guard against deleting every row by accident."""

from __future__ import annotations

from typing import Any, Generic, Never, TypeVar, overload

from ..model import Model, meta_of
from ..row import Row
from .base import R_co, Statement, returning_columns
from .nodes import Condition, DeleteStatement, Returning
from .where import WhereInput, with_conditions

__all__ = ["Delete", "delete"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)


class Delete(Statement[R_co], Generic[M_co, R_co]):
    """DELETE FROM model [WHERE ...] [RETURNING ...]."""

    __slots__ = ("_returning", "_unguarded", "_where")

    _where: Condition | None
    _returning: Returning
    _unguarded: bool

    def _clone(self) -> Delete[M_co, R_co]:
        new: Delete[M_co, R_co] = object.__new__(Delete)
        new._meta = self._meta
        new._values = self._values
        new._where = self._where
        new._returning = self._returning
        new._unguarded = self._unguarded
        return new

    def _key(self) -> DeleteStatement:
        return DeleteStatement(self._meta, self._where, self._returning)

    @property
    def guarded(self) -> bool:
        """True when the delete has a where() or was declared unguarded()."""
        return self._where is not None or self._unguarded

    def where(self, *conditions: WhereInput) -> Delete[M_co, R_co]:
        """Delete only the rows matching every condition; repeated calls AND together."""
        where, values = with_conditions(self._meta, self._where, self._values, conditions)
        new = self._clone()
        new._where = where
        new._values = values
        return new

    def unguarded(self) -> Delete[M_co, R_co]:
        """Declare that this delete is meant for every row (no where)."""
        new = self._clone()
        new._unguarded = True
        return new

    @overload
    def returning(self) -> Delete[M_co, M_co]: ...

    @overload
    def returning(self, column: str, /, *columns: str) -> Delete[M_co, Row]: ...

    def returning(self, *columns: str) -> Delete[M_co, Any]:
        """Return the deleted rows: whole models, or the named columns as Row."""
        new = self._clone()
        new._returning = returning_columns(self._meta, columns)
        return new


def delete(model: type[M], /) -> Delete[M, Never]:
    """DELETE FROM a model's table; say which rows with where() or unguarded()."""
    stmt: Delete[M, Never] = object.__new__(Delete)
    stmt._meta = meta_of(model)
    stmt._values = ()
    stmt._where = None
    stmt._returning = None
    stmt._unguarded = False
    return stmt
