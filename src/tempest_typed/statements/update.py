"""UPDATE: assignments (values or sql.* expressions), where, returning, and the guard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Never, TypeVar, overload

from ..errors import ValidationError
from ..model import ColumnMeta, Model, meta_of
from ..row import Row
from .base import R_co, Statement, assignments, returning_columns
from .nodes import Condition, PickedRows, Returning, UpdateStatement, Value, new_node
from .where import WhereInput, with_conditions

if TYPE_CHECKING:
    from .select import Select

__all__ = ["Update", "update"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)


class Update(Statement[R_co], Generic[M_co, R_co]):
    """UPDATE model SET ... [WHERE ...] [RETURNING ...]."""

    __slots__ = ("_picked", "_returning", "_set", "_unguarded", "_where")

    _set: tuple[tuple[ColumnMeta, Value], ...]
    _where: Condition | None
    _returning: Returning
    _unguarded: bool
    _picked: PickedRows | None

    def _clone(self) -> Update[M_co, R_co]:
        new: Update[M_co, R_co] = object.__new__(Update)
        new._meta = self._meta
        new._values = self._values
        new._set = self._set
        new._where = self._where
        new._returning = self._returning
        new._unguarded = self._unguarded
        new._picked = self._picked
        return new

    def _rebound(self, values: tuple[object, ...]) -> Update[M_co, R_co]:
        """This update with other values in the same places, each already checked by the
        caller as its column takes it (internal: a template built once, bound per call)."""
        if len(values) != len(self._values):
            raise ValidationError(f"update({self._meta.name}): {len(values)} values for "
                                  f"{len(self._values)} places")
        new = self._clone()
        new._values = values
        return new

    def _key(self) -> UpdateStatement:
        if not self._set:
            raise ValidationError(f"update({self._meta.name}) has no set(): say what to change")
        return new_node(UpdateStatement,
                        (self._meta, self._set, self._where, self._returning, self._picked,
                         "update"))

    @property
    def guarded(self) -> bool:
        """True when the update has a where() or was declared unguarded()."""
        return self._where is not None or self._unguarded or self._picked is not None

    def _from_picked(self, picked: Select[Any, Any], key: str,
                     carried: Sequence[str]) -> Update[M_co, Row]:
        """UPDATE ... FROM (picked) WHERE key = picked.key RETURNING the `returning()`
        columns and picked's `carried` columns (as they were before the update), in one
        statement where the dialect supports UPDATE ... FROM (`supports_update_from`).

        Internal (the queue's ordered batch claim): the carried columns come after the
        returned ones, each under its own name prefixed with "picked_".
        """
        from .query import Query

        meta = self._meta
        if self._where is not None or self._picked is not None:
            raise ValidationError(f"update({meta.name}): the picked rows replace where()")
        if not isinstance(picked, Query) or picked._meta is not meta:
            raise ValidationError(f"update({meta.name}): pick rows with select({meta.name})")
        if picked._ctx.correlated:
            raise ValidationError(f"update({meta.name}): the picking select names another one")
        key_col = meta.column(key, "_from_picked()")
        carried_cols = tuple((f"picked_{c}", meta.column(c, "_from_picked()"))
                             for c in carried)
        query = picked._key()
        query = query._replace(items=(key_col, *(c for _, c in carried_cols)))
        new = self._clone()
        new._picked = PickedRows(query, len(self._values), "picked", key_col, carried_cols)
        new._values = self._values + tuple(picked._values)
        if not isinstance(new._returning, tuple):  # rows are Row: name every column
            new._returning = meta.columns
        return new  # type: ignore[return-value]  # the row type changes to Row

    def _settling_first(self, first: Update[Any, Never]) -> Update[M_co, Row]:
        """This update from picked rows, after `first` (an update of the same table with a
        where() and no returning()) in one statement: its rows are how many rows `first`
        changed, then this one's returned columns (NULLs in one row when none was picked).

        Internal (the queue's acks and its next claim in one statement): `first` is not
        seen by the picking select, which must leave out the rows `first` may change.
        """
        meta = self._meta
        if self._picked is None or self._picked.settled is not None:
            raise ValidationError(f"update({meta.name}): settle first only before picked rows")
        if first._meta is not meta or first._where is None or first._returning is not None:
            raise ValidationError(f"update({meta.name}): settle rows of {meta.name} by a "
                                  "where(), with no returning()")
        new = self._clone()
        new._picked = self._picked._replace(settled=first._key(),
                                            settled_offset=len(self._values))
        new._values = self._values + first._values
        return new  # type: ignore[return-value]  # the rows gain the count: still Row

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
    stmt._picked = None
    if len(_EMPTY) >= 4096:
        _EMPTY.clear()
    _EMPTY[model] = stmt
    return stmt
