"""Scopes: what a column name written in a statement means there.

A plain statement's names are its table's attributes (`"status"`); a join's are qualified by
alias (`"order.status"`); `having` and an aggregate's `order_by` see the group columns and the
labels. Each scope maps every name it knows to the operand the tree holds and the column whose
type checks the values given for it, so a lookup is one dict access.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence

from ..errors import ValidationError
from ..model import ColumnMeta, ModelMeta, unknown_column_message
from .nodes import Labeled, Operand, OrderItem, QualifiedColumn

__all__ = ["Scope", "find_table_scope", "join_scope", "nullable_column", "table_scope"]


class Scope:
    """The names one statement (or one clause of it) understands."""

    __slots__ = ("aliases", "grouped", "label", "labels", "meta", "names", "order_items",
                 "qualifiers")

    def __init__(self, label: str, meta: ModelMeta | None,
                 names: dict[str, tuple[Operand, ColumnMeta]],
                 qualifiers: dict[str, ModelMeta], aliases: tuple[str, ...] = (),
                 grouped: bool = False,
                 labels: dict[str, tuple[Labeled, ColumnMeta]] | None = None) -> None:
        #: how messages name the statement: the model, or `join(user, order)`
        self.label = label
        #: the one table of a plain statement (None in a join)
        self.meta = meta
        self.names = names
        #: the aliases (a join) or the table name (a plain statement) a qualified name may use
        self.qualifiers = qualifiers
        self.aliases = aliases
        #: the scope of having() and of order_by() after aggregate(): group columns and labels
        self.grouped = grouped
        #: the labels of computed select items, which ORDER BY names by label
        self.labels = labels or {}
        #: order_by(name, direction) -> its ORDER BY item, once made (a name and a direction
        #: order_by() has checked)
        self.order_items: dict[tuple[str, str], OrderItem] = {}

    def lookup(self, name: object, where: str) -> tuple[Operand, ColumnMeta]:
        """The operand a name means and the column that checks its values."""
        found = self.names.get(name) if type(name) is str else None
        if found is None:
            raise ValidationError(self.unknown(name, where))
        return found

    def unknown(self, name: object, where: str) -> str:
        """The message for a name this scope does not know, with the near miss."""
        if self.meta is not None:
            return unknown_column_message(self.meta, name, where)
        if self.grouped:
            near = difflib.get_close_matches(str(name), list(self.names), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            return (f"{self.label}: the aggregate has no column {name!r} in {where}{hint}; "
                    "after aggregate() it takes the group columns and the labels: "
                    f"{', '.join(self.names)}")
        if not isinstance(name, str):
            return (f"{self.label}: a column name must be a string, got "
                    f"{type(name).__name__} {name!r} in {where}")
        listed = ", ".join(self.aliases)
        alias, dot, attr = name.partition(".")
        if not dot:
            return (f"{self.label}: {name!r} in {where} is not qualified; in a join every "
                    f"column is written 'alias.column' (aliases: {listed})")
        meta = self.qualifiers.get(alias)
        if meta is None:
            near = difflib.get_close_matches(alias, self.aliases, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            return f"{self.label} has no alias {alias!r} in {where}{hint} (aliases: {listed})"
        return unknown_column_message(meta, attr, f"{where} (alias {alias!r})")


#: by model, made once each (the scope of every plain statement)
TABLE_SCOPES: dict[ModelMeta, Scope] = {}
#: `find_table_scope(meta)`: the table's scope, or None (TABLE_SCOPES.get bound once: see
#: "making nodes" in nodes.py)
find_table_scope = TABLE_SCOPES.get


def table_scope(meta: ModelMeta) -> Scope:
    """The scope of a plain statement on one table: bare attribute names."""
    scope = TABLE_SCOPES.get(meta)
    if scope is None:
        names: dict[str, tuple[Operand, ColumnMeta]] = {
            c.attr: (c, c) for c in meta.columns
        }
        scope = Scope(meta.name, meta, names, {meta.table: meta})
        if len(TABLE_SCOPES) >= 4096:
            TABLE_SCOPES.clear()
        TABLE_SCOPES[meta] = scope
    return scope


_NULLABLE: dict[ColumnMeta, ColumnMeta] = {}


def nullable_column(col: ColumnMeta) -> ColumnMeta:
    """The column as a left join sees it: NULL where the joined row did not match."""
    if col.nullable:
        return col
    found = _NULLABLE.get(col)
    if found is None:
        found = _NULLABLE[col] = dataclasses.replace(col, nullable=True)
    return found


def join_scope(sources: Sequence[tuple[str, ModelMeta, bool]]) -> Scope:
    """The scope of a join: `alias.attr` for every alias; `optional` aliases (left-joined)
    accept None for every column."""
    names: dict[str, tuple[Operand, ColumnMeta]] = {}
    qualifiers: dict[str, ModelMeta] = {}
    for alias, meta, optional in sources:
        qualifiers[alias] = meta
        for col in meta.columns:
            names[f"{alias}.{col.attr}"] = (QualifiedColumn(alias, col),
                                            nullable_column(col) if optional else col)
    aliases = tuple(alias for alias, _, _ in sources)
    return Scope(f"join({', '.join(aliases)})", None, names, qualifiers, aliases)
