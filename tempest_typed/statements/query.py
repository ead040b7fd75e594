"""What every SELECT builder shares: a plain select, a join, and an aggregate.

The builder's state is its node (`SelectQuery`), with the fields the common calls change kept
in slots of their own: every method returns a new builder, and `_key()` makes the node once,
so a prebuilt statement runs again without rebuilding it.
Names are resolved by the builder's scope: bare attributes on one table, `alias.column` in a
join, group columns and labels after `aggregate()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

from ..errors import ValidationError
from ..model import INT_MAX, ColumnMeta, Model, ModelMeta, meta_of
from .base import R_co, Statement
from .nodes import (
    INT_PARAMS,
    Aggregate,
    Condition,
    Labeled,
    Lock,
    Operand,
    OrderItem,
    QualifiedColumn,
    SelectQuery,
    Value,
    find_lock,
    lock,
    new_node,
    order_item,
    param,
)
from .scope import Scope
from .where import CORRELATIONS, Subquery, WhereInput, with_conditions

if TYPE_CHECKING:
    from .aggregate import AggregateFunction, Grouped

__all__ = ["Query"]

T = TypeVar("T")

#: where each field sits in SelectQuery, for `replaced()`
FIELD = {name: i for i, name in enumerate(SelectQuery._fields)}


def replaced(node: SelectQuery, field: str, value: object) -> SelectQuery:
    """The node with one field changed.

    NamedTuple._replace() costs twice as much (it goes through _make and a dict of the
    fields).
    """
    i = FIELD[field]
    return new_node(SelectQuery, (*node[:i], value, *node[i + 1:]))


class Query(Statement[R_co]):
    """A SELECT builder: where, order_by, limit/offset, distinct, row locks, subqueries."""

    __slots__ = ("_base", "_correlated", "_group_scope", "_key_cache", "_limit", "_lock",
                 "_offset", "_order", "_scope", "_where")

    #: the statement's node, except that the fields where() / order_by() / limit() / offset()
    #: / for_update() change are in their own slots (this node's may be older): copying a
    #: slot costs less than making a new 12-field node on every call (the seed's select made
    #: four; its build + compile took 123,000 instructions, and 104,000 this way, callgrind)
    _base: SelectQuery
    _where: Condition | None
    _order: tuple[OrderItem, ...]
    _limit: Value | None
    _offset: Value | None
    _lock: Lock | None
    #: the node made from the above, once asked for
    _key_cache: SelectQuery | None
    #: the names where() understands
    _scope: Scope
    #: after aggregate(): the names having() and order_by() understand (group columns, labels)
    _group_scope: Scope | None
    #: a condition may name an enclosing statement's columns (sql.col("users.id"))
    _correlated: bool

    def _key(self) -> SelectQuery:
        key = self._key_cache
        if key is None:
            key = self._key_cache = self._assembled(self._base.items)
        return key

    def _assembled(self, items: tuple[Operand | Labeled, ...] | None) -> SelectQuery:
        """The node of this builder's state, selecting `items`."""
        b = self._base
        return new_node(SelectQuery, (
            b.source, b.joins, items, self._where, b.group_by, b.having, self._order,
            self._limit, self._offset, self._lock, b.distinct, "select"))

    def _set_node(self, node: SelectQuery) -> None:
        """Make `node` this (new) builder's whole state."""
        self._base = self._key_cache = node
        self._where, self._order = node.where, node.order
        self._limit, self._offset, self._lock = node.limit, node.offset, node.lock

    def _clone(self, values: tuple[object, ...] | None = None) -> Self:
        new = object.__new__(type(self))
        new._meta = self._meta
        new._values = self._values if values is None else values
        new._base = self._base
        new._where = self._where
        new._order = self._order
        new._limit = self._limit
        new._offset = self._offset
        new._lock = self._lock
        new._key_cache = None
        new._scope = self._scope
        new._group_scope = self._group_scope
        new._correlated = self._correlated
        return new

    def _with(self, field: str, value: object, values: tuple[object, ...] | None = None) -> Self:
        """A new builder whose node has one field changed."""
        new = self._clone(values)
        new._set_node(replaced(self._key(), field, value))
        return new

    def where(self, *conditions: WhereInput) -> Self:
        """Keep the rows matching every condition; repeated calls AND together."""
        made = CORRELATIONS[0]
        where, values = with_conditions(self._scope, self._where, self._values, conditions)
        new = self._clone(values)
        new._where = where
        if CORRELATIONS[0] != made:
            new._correlated = True
        return new

    def order_by(self, column: str, direction: Literal["asc", "desc"] = "asc") -> Self:
        """Sort by a column, ascending or descending; repeated calls add tie-breakers."""
        scope = self._group_scope or self._scope
        try:
            item = scope.order_items.get((column, direction))
        except TypeError:  # an unhashable name or direction: the checks below name it
            item = None
        if item is None:
            operand, col = scope.lookup(column, "order_by()")
            if direction not in ("asc", "desc"):
                raise ValidationError(
                    f"{scope.label}.order_by({column!r}, {direction!r}): direction is 'asc' "
                    "or 'desc'"
                )
            item = scope.order_items[column, direction] = order_item(
                operand, direction == "desc", col.nullable)
        new = self._clone()
        new._order = (*self._order, item)
        return new

    def _count(self, name: str, n: object) -> tuple[Value, tuple[object, ...]]:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= INT_MAX:
            raise ValidationError(
                f"{self._scope.label}: {name}() takes an int >= 0 (and <= {INT_MAX}), got {n!r}"
            )
        i = len(self._values)
        node = INT_PARAMS[i] if i < len(INT_PARAMS) else param(i, "int")
        return node, (*self._values, n)

    def limit(self, n: int) -> Self:
        """Return at most n rows."""
        node, values = self._count("limit", n)
        new = self._clone(values)
        new._limit = node
        return new

    def offset(self, n: int) -> Self:
        """Skip the first n rows."""
        node, values = self._count("offset", n)
        new = self._clone(values)
        new._offset = node
        return new

    def distinct(self) -> Self:
        """SELECT DISTINCT: each different row once."""
        return self._with("distinct", True)

    def _lock_targets(self, mode: str, of: object) -> tuple[str, ...]:
        """The qualifiers `of=` names (models of a plain select; aliases of a join)."""
        base = self._base
        if base.joins or base.source.alias is not None:
            aliases = self._scope.aliases
            names = [of] if isinstance(of, str) else of
            if not isinstance(names, list | tuple) or not all(isinstance(a, str) for a in names):
                raise ValidationError(
                    f"{self._scope.label}: for_{mode}(of=...) takes a list of aliases of this "
                    f"join ({', '.join(aliases)}), got {of!r}"
                )
            for alias in names:
                if alias not in aliases:
                    raise ValidationError(
                        f"{self._scope.label}: for_{mode}(of=[{alias!r}]) names no alias of "
                        f"this join (aliases: {', '.join(aliases)})"
                    )
            return tuple(names)
        if not isinstance(of, type | list | tuple):
            raise ValidationError(
                f"{self._meta.name}: for_{mode}(of=...) takes a model or a list of models, "
                f"got {type(of).__name__} {of!r}"
            )
        tables: tuple[str, ...] = ()
        for model in [of] if isinstance(of, type) else of:
            meta = meta_of(model)
            if meta is not self._meta:
                raise ValidationError(
                    f"{self._meta.name}: for_{mode}(of=[{meta.name}]) names a table that is "
                    f"not in this select (FROM {self._meta.table})"
                )
            tables += (meta.table,)
        return tables

    def _locked(self, mode: Literal["update", "share"], skip_locked: bool, no_wait: bool,
                of: object) -> Self:
        if skip_locked and no_wait:
            raise ValidationError(
                f"{self._scope.label}: for_{mode}() takes skip_locked=True or no_wait=True, "
                "not both: skip rows another transaction holds, or fail at once on them"
            )
        key = (mode, bool(skip_locked), bool(no_wait),
               () if of is None else self._lock_targets(mode, of))
        new = self._clone()
        new._lock = find_lock(key) or lock(*key)
        return new

    def for_update(self, *, skip_locked: bool = False, no_wait: bool = False,
                   of: type[Model] | Sequence[type[Model]] | Sequence[str] | None = None
                   ) -> Self:
        """Lock the selected rows until the transaction ends (FOR UPDATE)."""
        return self._locked("update", skip_locked, no_wait, of)

    def for_share(self, *, skip_locked: bool = False, no_wait: bool = False,
                  of: type[Model] | Sequence[type[Model]] | Sequence[str] | None = None
                  ) -> Self:
        """Take a read lock on the selected rows until the transaction ends (FOR SHARE)."""
        return self._locked("share", skip_locked, no_wait, of)

    def as_subquery(self, column: str) -> Subquery[Any, Any]:
        """This select projected on one column: an `in` operand or, with sql.scalar(), a value."""
        scope = self._group_scope or self._scope
        found = scope.names.get(column) if type(column) is str else None
        operand, col = found if found is not None else scope.lookup(column, "as_subquery()")
        item: Operand | Labeled = operand
        if type(operand) is Aggregate:
            item = Labeled(column, operand)
        return Subquery(self._assembled((item,)), self._values, col, self._correlated)

    def _grouped(self, group_by: Sequence[str],
                 aggregates: Mapping[str, AggregateFunction[Any]]) -> Grouped[Any]:
        from .aggregate import grouped

        return grouped(self, group_by, aggregates)


def qualified(meta: ModelMeta, alias: str | None, col: ColumnMeta) -> Operand:
    """A column as a statement on `meta` (under `alias`) names it."""
    return col if alias is None else QualifiedColumn(alias, col)
