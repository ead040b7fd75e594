"""UPDATE: assignments (values or sql.* expressions), where, returning, and the guard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Never, TypeVar, overload

from ..errors import ValidationError
from ..model import ColumnMeta, Model, meta_of
from ..row import Row
from .base import R_co, Statement, assignments, returning_columns
from .nodes import Condition, Returning, UpdateStatement, Value, new_node
from .where import WhereInput, with_conditions

__all__ = ["Update", "update"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)


class Update(Statement[R_co], Generic[M_co, R_co]):
    """UPDATE model SET ... [WHERE ...] [RETURNING ...]."""

    __slots__ = ("_returning", "_set", "_unguarded", "_where")

    _set: tuple[tuple[ColumnMeta, Value], ...]
    _where: Condition | None
    _returning: Returning
    _unguarded: bool

    def _clone(self) -> Update[M_co, R_co]:
        new: Update[M_co, R_co] = object.__new__(Update)
        new._meta = self._meta
        new._values = self._values
        new._set = self._set
        new._where = self._where
        new._returning = self._returning
        new._unguarded = self._unguarded
        return new

    def _key(self) -> UpdateStatement:
        if not self._set:
            raise ValidationError(f"update({self._meta.name}) has no set(): say what to change")
        return new_node(UpdateStatement,
                        (self._meta, self._set, self._where, self._returning, "update"))

    @property
    def guarded(self) -> bool:
        """True when the update has a where() or was declared unguarded()."""
        return self._where is not None or self._unguarded

    def set(self, values: Mapping[str, object]) -> Update[M_co, R_co]:
        """The new values: scalars of each column's type or sql.* expressions."""
        bound = list(self._values)
        items = assignments(self._meta, values, bound, "set()")
        if self._set:
            already = {c.attr for c, _ in self._set}
            for col, _ in items:
                if col.attr in already:
                    raise ValidationError(f"{self._meta.name}.{col.attr} is set twice")
        new = self._clone()
        new._set = self._set + items
        new._values = tuple(bound)
        return new

    def where(self, *conditions: WhereInput) -> Update[M_co, R_co]:
        """Change only the rows matching every condition; repeated calls AND together."""
        where, values = with_conditions(self._meta, self._where, self._values, conditions)
        new = self._clone()
        new._where = where
        new._values = values
        return new

    def unguarded(self) -> Update[M_co, R_co]:
        """Declare that this update is meant for every row (no where)."""
        new = self._clone()
        new._unguarded = True
        return new

    @overload
    def returning(self) -> Update[M_co, M_co]: ...

    @overload
    def returning(self, column: str, /, *columns: str) -> Update[M_co, Row]: ...

    def returning(self, *columns: str) -> Update[M_co, Any]:
        """Return the updated rows: whole models, or the named columns as Row."""
        new = self._clone()
        new._returning = returning_columns(self._meta, columns)
        return new


#: update(model) by model class: a builder is immutable, so one serves every call
_EMPTY: dict[type, Update[Any, Never]] = {}


def update(model: type[M], /) -> Update[M, Never]:
    """UPDATE a model's table; give the changes with set() and the rows with where()."""
    found = _EMPTY.get(model) if isinstance(model, type) else None
    if found is not None:
        return found
    stmt: Update[M, Never] = object.__new__(Update)
    stmt._meta = meta_of(model)
    stmt._values = ()
    stmt._set = ()
    stmt._where = None
    stmt._returning = None
    stmt._unguarded = False
    if len(_EMPTY) >= 4096:
        _EMPTY.clear()
    _EMPTY[model] = stmt
    return stmt
