"""What every SELECT builder shares: a plain select, a join, and an aggregate.

The builder's state is its node (`SelectQuery`), kept apart: the fields the common calls change
in slots of their own, the others in a `Context` those calls hand on. Every method returns a
new builder, and `_key()` makes the node once, so a prebuilt statement runs again without
rebuilding it.
Names are resolved by the builder's scope: bare attributes on one table, `alias.column` in a
join, group columns and labels after `aggregate()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Self, TypeVar

from .._wording import (
    DISTINCT_NOT_OVER_JSON,
    DISTINCT_ROW_STANDS_FOR,
    JSON_NOT_COMPARED,
    LOCK_NOT_IN_SELECT,
    LOCK_OF_ONE_TABLE,
    NOT_ORDERED_BY_JSON,
)
from ..errors import ValidationError
from ..model import ColumnMeta, Model, ModelMeta, meta_of
from ..row import PLAIN_NAME, plain_name_problem
from .base import R_co, Statement, limit_node, row_count
from .compound import SetQuery, combined
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

__all__ = ["Query", "with_columns"]

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


class Context:
    """What where() / order_by() / limit() / offset() / for_update() hand on unchanged: the
    other fields of the select's node, the names the builder understands, and whether a
    condition names an enclosing statement. Builders share it: it is never changed once made."""

    __slots__ = ("correlated", "distinct", "group_by", "group_scope", "having", "items",
                 "joins", "scope", "source")

    def __init__(self, node: SelectQuery, scope: Scope, group_scope: Scope | None = None,
                 correlated: bool = False) -> None:
        self.source = node.source
        self.joins = node.joins
        self.items = node.items
        self.group_by = node.group_by
        self.having = node.having
        self.distinct = node.distinct
        #: the names where() understands
        self.scope = scope
        #: after aggregate(): the names having() and order_by() understand (group columns,
        #: labels)
        self.group_scope = group_scope
        #: a condition may name an enclosing statement's columns (sql.col("users.id"))
        self.correlated = correlated

    def marked_correlated(self) -> Context:
        """This context, for a builder one of whose conditions names an enclosing statement."""
        new = object.__new__(Context)
        for name in Context.__slots__:
            setattr(new, name, getattr(self, name))
        new.correlated = True
        return new


class Query(Statement[R_co]):
    """A SELECT builder: where, order_by, limit/offset, distinct, row locks, subqueries."""

    __slots__ = ("_ctx", "_key_cache", "_limit", "_lock", "_offset", "_order", "_where")

    #: The statement's node is kept apart: the fields where() / order_by() / limit() /
    #: offset() / for_update() change in slots of their own, the others in one `Context`
    #: that those calls hand on: copying a slot costs less than making a new 12-field node on
    #: every call, and copying one context less than copying its fields one by one
    #: (measured: BENCHMARKS.md, "Fast paths").
    _ctx: Context
    _where: Condition | None
    _order: tuple[OrderItem, ...]
    _limit: Value | None
    _offset: Value | None
    _lock: Lock | None
    #: the node made from the above, once asked for
    _key_cache: SelectQuery | None

    def _key(self) -> SelectQuery:
        key = self._key_cache
        if key is None:
            key = self._key_cache = self._assembled(self._ctx.items)
        return key

    def _assembled(self, items: tuple[Operand | Labeled, ...] | None) -> SelectQuery:
        """The node of this builder's state, selecting `items`."""
        c = self._ctx
        return new_node(SelectQuery, (
            c.source, c.joins, items, self._where, c.group_by, c.having, self._order,
            self._limit, self._offset, self._lock, c.distinct, "select"))

    def _set_node(self, node: SelectQuery, context: Context) -> None:
        """Make `node` (with `context`, made from it) this new builder's whole state."""
        self._ctx = context
        self._key_cache = node
        self._where, self._order = node.where, node.order
        self._limit, self._offset, self._lock = node.limit, node.offset, node.lock

    def _clone(self, values: tuple[object, ...] | None = None) -> Self:
        new = object.__new__(type(self))
        new._meta = self._meta
        new._values = self._values if values is None else values
        new._ctx = self._ctx
        new._where = self._where
        new._order = self._order
        new._limit = self._limit
        new._offset = self._offset
        new._lock = self._lock
        new._key_cache = None
        return new

    def _with(self, field: str, value: object, values: tuple[object, ...] | None = None,
              scope: Scope | None = None) -> Self:
        """A new builder whose node has one field changed (and, given one, a new scope)."""
        c = self._ctx
        node = replaced(self._key(), field, value)
        new = self._clone(values)
        new._set_node(node, Context(node, scope or c.scope, c.group_scope, c.correlated))
        return new

    def where(self, *conditions: WhereInput) -> Self:
        """Keep the rows matching every condition; repeated calls AND together."""
        made = CORRELATIONS[0]
        where, values = with_conditions(self._ctx.scope, self._where, self._values, conditions)
        new = self._clone(values)
        new._where = where
        if CORRELATIONS[0] != made:
            new._ctx = new._ctx.marked_correlated()
        return new

    def order_by(self, column: str, direction: Literal["asc", "desc"] = "asc") -> Self:
        """Sort by a column, ascending or descending; repeated calls add tie-breakers."""
        c = self._ctx
        scope = c.group_scope or c.scope
        try:
            item = scope.order_items.get((column, direction))
        except TypeError:  # an unhashable name or direction: the checks below name it
            item = None
        if item is None:
            labeled = scope.labels.get(column) if type(column) is str else None
            operand, col = labeled or scope.lookup(column, "order_by()")
            if col.kind == "json":
                # each database orders JSON its own way (jsonb by size first, the others
                # as text): the same rows would come back in different orders
                raise ValidationError(
                    f"{scope.label}.order_by({column!r}): {col.model_name}.{col.attr} "
                    f"{JSON_NOT_COMPARED}; {NOT_ORDERED_BY_JSON}")
            if direction not in ("asc", "desc"):
                raise ValidationError(
                    f"{scope.label}.order_by({column!r}, {direction!r}): direction is 'asc' "
                    "or 'desc'"
                )
            item = scope.order_items[column, direction] = order_item(
                operand, direction == "desc", col.nullable)
        if c.distinct:
            distinct_order(c, c.items, (item,))
        new = self._clone()
        new._order = (*self._order, item)
        return new

    def limit(self, n: int) -> Self:
        """Return at most n rows."""
        new = self._clone(self._values)
        new._limit = limit_node(n, self._ctx.scope.label)
        return new

    def offset(self, n: int) -> Self:
        """Skip the first n rows."""
        row_count("offset()", n, self._ctx.scope.label)
        i = len(self._values)
        new = self._clone((*self._values, n))
        new._offset = INT_PARAMS[i] if i < len(INT_PARAMS) else param(i, "int")
        return new

    if not TYPE_CHECKING:  # a type checker reports the missing method itself
        def having(self, *conditions: object) -> NoReturn:
            """having() before aggregate(): a ValidationError naming the order of calls."""
            raise ValidationError(
                f"{self._ctx.scope.label}: having() filters groups, and this select has none: "
                "call aggregate([group columns], {label: sql.count(), ...}) first, then "
                "having() on its labels and group columns; to keep some rows, use where()")

    def distinct(self) -> Self:
        """SELECT DISTINCT: each different row once."""
        distinct_json(self._ctx, self._ctx.items)
        distinct_order(self._ctx, self._ctx.items, self._order)
        return self._with("distinct", True)

    def _lock_targets(self, mode: str, of: object) -> tuple[str, ...]:
        """The qualifiers `of=` names (models of a plain select; aliases of a join)."""
        c = self._ctx
        if c.joins or c.source.alias is not None:
            aliases = c.scope.aliases
            names = [of] if isinstance(of, str) else of
            if not isinstance(names, list | tuple) or not all(isinstance(a, str) for a in names):
                raise ValidationError(
                    f"{c.scope.label}: for_{mode}(of=...) takes a list of aliases of this "
                    f"join ({', '.join(aliases)}), got {of!r}"
                )
            for alias in names:
                if alias not in aliases:
                    raise ValidationError(
                        f"{c.scope.label}: for_{mode}(of=[{alias!r}]) names no alias of "
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
            if isinstance(model, str):
                raise ValidationError(
                    f"{self._meta.name}: for_{mode}(of=[{model!r}]) {LOCK_OF_ONE_TABLE}"
                    f"{self._meta.name}]")
            meta = meta_of(model)
            if meta is not self._meta:
                raise ValidationError(
                    f"{self._meta.name}: for_{mode}(of=[{meta.name}]) {LOCK_NOT_IN_SELECT} "
                    f"(FROM {self._meta.table})"
                )
            tables += (meta.table,)
        return tables

    def _locked(self, mode: Literal["update", "share"], skip_locked: bool, no_wait: bool,
                of: object) -> Self:
        if skip_locked and no_wait:
            raise ValidationError(
                f"{self._ctx.scope.label}: for_{mode}() takes skip_locked=True or no_wait=True, "
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

    def union(self, other: Query[Any]) -> SetQuery[R_co]:
        """The rows of either select, each different row once (UNION)."""
        return combined(self, "union", other)

    def union_all(self, other: Query[Any]) -> SetQuery[R_co]:
        """The rows of both selects, duplicates kept (UNION ALL)."""
        return combined(self, "union_all", other)

    def intersect(self, other: Query[Any]) -> SetQuery[R_co]:
        """The rows found by both selects (INTERSECT)."""
        return combined(self, "intersect", other)

    def except_(self, other: Query[Any]) -> SetQuery[R_co]:
        """The rows of this select that the other does not find (EXCEPT)."""
        return combined(self, "except_", other)

    if TYPE_CHECKING:  # a type checker reports a call without the column itself
        def as_subquery(self, column: str) -> Subquery[Any, Any]:
            """This select projected on one column: an `in` operand or, with sql.scalar(), a
            value."""
    else:
        def as_subquery(self, *column: str, **named: str) -> Subquery[Any, Any]:
            """This select projected on one column: an `in` operand or, with sql.scalar(), a
            value."""
            given = (*column, *named.values())
            if len(given) != 1 or set(named) - {"column"}:
                raise ValidationError(
                    f"{self._ctx.scope.label}.as_subquery() takes the name of the one column "
                    f"the subquery yields, got {len(given)} arguments; e.g. as_subquery(\"id\") "
                    "for an `in` operand or sql.scalar()")
            return self._as_subquery(given[0])

    def _as_subquery(self, column: str) -> Subquery[Any, Any]:
        c = self._ctx
        scope = c.group_scope or c.scope
        labeled = scope.labels.get(column) if scope.labels and type(column) is str else None
        found = scope.names.get(column) if type(column) is str else None
        item: Operand | Labeled
        if labeled is not None:
            item, col = labeled  # a computed column or group, under its label
        else:
            operand, col = found if found is not None else scope.lookup(column, "as_subquery()")
            item = Labeled(column, operand) if type(operand) is Aggregate else operand
        if c.distinct:
            distinct_order(c, (item,), self._order, subquery=column)
        # Subquery(...) without the class call, as Dialect.compile() makes its Compiled.
        sub: Subquery[Any, Any] = object.__new__(Subquery)
        sub.key = self._assembled((item,))
        sub.values = self._values
        sub.column = col
        sub.correlated = c.correlated
        return sub


def distinct_json(c: Context, items: tuple[Operand | Labeled, ...] | None) -> None:
    """Refuse DISTINCT over a JSON column: JSON is not compared, and the databases tell two
    documents apart differently (jsonb by value, the others by text: {"b": 1} and
    {"b": 1.0} are one row on PostgreSQL, two elsewhere)."""
    scope = c.group_scope or c.scope
    if items is None:
        sources = [c.source, *(j.source for j in c.joins)]
        cols = [(s.alias, col) for s in sources for col in s.meta.columns]
    else:
        cols = []
        for item in items:
            if isinstance(item, Labeled):
                found = scope.labels.get(item.label)
                if found is not None:
                    cols.append((None, found[1]))
            elif isinstance(item, QualifiedColumn):
                cols.append((item.qualifier, item.column))
            elif isinstance(item, ColumnMeta):
                cols.append((None, item))
    for alias, col in cols:
        if col.kind == "json":
            name = f"{alias}.{col.attr}" if alias else col.attr
            raise ValidationError(
                f"{c.scope.label}.distinct(): {name!r} {JSON_NOT_COMPARED}, "
                f"{DISTINCT_NOT_OVER_JSON}")


def distinct_order(c: Context, items: tuple[Operand | Labeled, ...] | None,
                   order: tuple[OrderItem, ...], subquery: str | None = None) -> None:
    """Refuse ORDER BY a value a DISTINCT select does not fetch: one distinct row may stand
    for rows with different values of it. PostgreSQL refuses the statement when it runs;
    MySQL and SQLite order by the value of whichever of those rows they meet."""
    if items is None:  # every column is fetched
        return
    # a value under a label is fetched too (the databases match ORDER BY COUNT(*) or a
    # column with the select list's `COUNT(*) AS n`, `a.x AS b`)
    fetched = {*items, *(i.value for i in items if isinstance(i, Labeled))}
    for item in order:
        operand = item.operand
        if operand in fetched:
            continue
        if isinstance(operand, Labeled):
            name = operand.label
        elif isinstance(operand, QualifiedColumn):
            name = f"{operand.qualifier}.{operand.column.attr}"
        elif isinstance(operand, ColumnMeta):
            name = operand.attr
        else:
            name = repr(operand)
        fix = (f"select {name!r} too" if subquery is None
               else f"order the subquery by {subquery!r} only")
        raise ValidationError(
            f"{c.scope.label}: distinct() with order_by({name!r}), which the "
            f"{'select' if subquery is None else 'subquery'} does not fetch: "
            f"{DISTINCT_ROW_STANDS_FOR}; {fix}, or drop distinct()")


def with_columns(query: Query[Any], columns: Mapping[str, Any], fetched: Sequence[str],
                 items: tuple[Operand | Labeled, ...]) -> tuple[SelectQuery, Context,
                                                            tuple[object, ...]]:
    """The node, context and values of `query` selecting `items` (the fetched columns, whose
    row fields are `fetched`), then the computed `columns` under their labels."""
    from .aggregate import label_column
    from .compute import computed, typed

    c = query._ctx
    scope = c.scope
    if c.group_scope is not None:
        raise ValidationError(
            f"{scope.label}: add_columns() is called once per statement: pass every computed "
            "column in one dict"
        )
    if not isinstance(columns, Mapping) or not columns:
        raise ValidationError(
            f"{scope.label}: add_columns() takes a dict of label -> sql.* expression, got "
            f"{columns!r}"
        )
    values = list(query._values)
    labels: dict[str, tuple[Labeled, ColumnMeta]] = {}
    added: list[Labeled] = []
    made = CORRELATIONS[0]
    for key, expression in columns.items():
        problem = plain_name_problem(key)
        if problem is not None:
            raise ValidationError(
                f"{scope.label}: add_columns() label {key!r} {problem}; a label becomes a row "
                f"field (row.label): write {PLAIN_NAME}"
            )
        if key in fetched:
            raise ValidationError(
                f"{scope.label}: add_columns() label {key!r} is also the name of a fetched "
                "column (or alias); choose another label"
            )
        value, col = typed(*computed(scope, expression, values, f"add_columns() {key!r}",
                                     windows=True), expression, f"add_columns() {key!r}")
        item = Labeled(key, value)
        labels[key] = (item, label_column(key, col.kind, col.nullable, col, col.scale))
        added.append(item)
    order_scope = Scope(scope.label, scope.meta, scope.names, scope.qualifiers, scope.aliases,
                        labels=labels)
    node = replaced(query._key(), "items", (*items, *added))
    context = Context(node, scope, order_scope, c.correlated or CORRELATIONS[0] != made)
    if c.distinct:
        distinct_json(context, node.items)
        distinct_order(context, node.items, query._order)
    return node, context, tuple(values)


def qualified(meta: ModelMeta, alias: str | None, col: ColumnMeta) -> Operand:
    """A column as a statement on `meta` (under `alias`) names it."""
    return col if alias is None else QualifiedColumn(alias, col)
