"""Joins: `join(User, "user").inner_join(Order, "order", {"user.id": "order.user_id"})`.

Every column is written `alias.column`; the alias is the key of the row (`row.user`,
`row.order`). A left-joined side whose row did not match is None: the engine decides it by the
joined table's primary key being NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from ..errors import ValidationError
from ..model import Model, ModelMeta, meta_of
from ..row import PLAIN_NAME, Row, plain_name_problem
from .aggregate import AggregateFunction, Grouped, grouped
from .base import R_co
from .cte import NamedSelect, check_one_select_per_name, cte_source
from .nodes import And, Compare, Condition, JoinClause, QualifiedColumn, SelectQuery, Source
from .query import Context, Query, with_columns
from .scope import join_scope
from .where import _family_error, same_family

__all__ = ["Join", "join"]

M = TypeVar("M", bound=Model)


def _sources(first: Source, joins: tuple[JoinClause, ...]) -> list[tuple[str, ModelMeta, bool]]:
    """(alias, model, left-joined) for every table of the join, in order."""
    out = [(first.alias or first.meta.table, first.meta, False)]
    out += [(j.source.alias or j.source.meta.table, j.source.meta, j.kind == "left")
            for j in joins]
    return out


def _check_alias(alias: object, taken: Sequence[str], call: str) -> str:
    problem = plain_name_problem(alias)
    if problem is not None:
        raise ValidationError(
            f"{call}: the alias {alias!r} {problem}; an alias becomes a row field (row.alias) "
            f"and qualifies columns ('alias.column'): write {PLAIN_NAME}"
        )
    assert isinstance(alias, str)  # plain_name_problem() found it is one
    if alias in taken:
        raise ValidationError(
            f"{call}: the alias {alias!r} is already used (aliases: {', '.join(taken)}); "
            "aliases are unique within a statement (a self-join gives each side its own)"
        )
    return alias


class Join(Query[R_co]):
    """SELECT every column of several tables, joined; rows are models keyed by alias."""

    __slots__ = ()

    def _joined(self, kind: Literal["inner", "left"], model: type[Model] | NamedSelect[Any],
                alias: str,
                on: Mapping[str, str]) -> Join[R_co]:
        ctx = self._ctx
        call = f"{ctx.scope.label}.{kind}_join()"
        if ctx.items is not None or ctx.group_scope is not None:
            raise ValidationError(
                f"{call}: join every table first, then add_columns() or aggregate()")
        named = cte_source(model, alias, self._values)
        meta = named[0].meta if named is not None else meta_of(model)
        sources = _sources(ctx.source, ctx.joins)
        _check_alias(alias, [a for a, _, _ in sources], call)
        if not isinstance(on, Mapping) or not on:
            raise ValidationError(
                f"{call}: `on` maps columns of the tables joined so far to columns of "
                f"{alias!r}, e.g. {{'{sources[0][0]}.id': '{alias}.{sources[0][1].name.lower()}_id'}}"
            )
        before = ctx.scope
        scope = join_scope([*sources, (alias, meta, kind == "left")])
        pairs: list[Condition] = []
        for left_name, right_name in on.items():
            left, left_col = before.lookup(left_name, f"{call} on")
            if not isinstance(right_name, str) or not right_name.startswith(alias + "."):
                raise ValidationError(
                    f"{call}: in `on`, {left_name!r} maps to a column of the new table "
                    f"{alias!r}, written '{alias}.column', got {right_name!r}"
                )
            right, right_col = scope.lookup(right_name, f"{call} on")
            if not same_family(left_col, right_col):
                raise _family_error(left_col, right_col, right_name, f"{call} on")
            pairs.append(Compare(left, "=", right))
        condition = pairs[0] if len(pairs) == 1 else And(tuple(pairs))
        source = named[0] if named is not None else Source(meta, alias)
        clause = JoinClause(kind, source, condition)
        if named is not None:
            check_one_select_per_name(
                [(ctx.source, 0), *((j.source, 0) for j in ctx.joins), (source, 0)],
                named[1], call)
        return self._with("joins", (*ctx.joins, clause), named[1] if named is not None else None,
                          scope=scope)

    def inner_join(self, model: type[Model] | NamedSelect[Any], alias: str,
                   on: Mapping[str, str]) -> Join[R_co]:
        """Add a table: only rows with a match on both sides (INNER JOIN)."""
        return self._joined("inner", model, alias, on)

    def left_join(self, model: type[Model] | NamedSelect[Any], alias: str,
                  on: Mapping[str, str]) -> Join[R_co]:
        """Add a table whose side is None where no row matches (LEFT JOIN)."""
        return self._joined("left", model, alias, on)

    def add_columns(self, columns: Mapping[str, Any]) -> Join[Row]:
        """Computed columns beside the joined models: rows hold a model per alias (None for
        an unmatched left-joined side), then the labels."""
        ctx = self._ctx
        sources = _sources(ctx.source, ctx.joins)
        fetched = tuple(QualifiedColumn(alias, col) for alias, meta, _ in sources
                        for col in meta.columns)
        node, context, values = with_columns(self, columns, [a for a, _, _ in sources],
                                             fetched)
        new: Join[Row] = object.__new__(Join)
        new._meta = self._meta
        new._values = values
        new._set_node(node, context)
        return new

    def project(self, columns: Mapping[str, Any]) -> Join[Row]:
        """The joined rows as flat Rows of `columns` ({label: "alias.column" or an sql.*
        expression}), in place of the models: what a named select, a set operation or an
        insert's from_select() of a join takes."""
        node, context, values = with_columns(self, columns, [], ())
        new: Join[Row] = object.__new__(Join)
        new._meta = self._meta
        new._values = values
        new._set_node(node, context)
        return new

    def aggregate(self, group_by: Sequence[str | Mapping[str, Any]],
                  aggregates: Mapping[str, AggregateFunction[Any]]) -> Grouped[Row]:
        """Group the joined rows by qualified columns and compute aggregates per group."""
        return grouped(self, group_by, aggregates)

    @property
    def aliases(self) -> tuple[str, ...]:
        """The aliases of the joined tables, in order."""
        return self._ctx.scope.aliases


def join(model: type[M] | NamedSelect[Any], alias: str, /) -> Join[Row]:
    """Start a join with a model (or a named select) under an alias; add tables with
    inner_join()/left_join()."""
    named = cte_source(model, alias, ())
    meta = named[0].meta if named is not None else meta_of(model)
    _check_alias(alias, [], f"join({meta.name}, ...)")
    stmt: Join[Row] = object.__new__(Join)
    stmt._meta = meta
    stmt._values = named[1] if named is not None else ()
    source = named[0] if named is not None else Source(meta, alias)
    node = SelectQuery(source, (), None, None, None, None, (), None, None, None, False)
    stmt._set_node(node, Context(node, join_scope([(alias, meta, False)])))
    return stmt
