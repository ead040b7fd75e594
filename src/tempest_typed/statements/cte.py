"""Named selects: `sql.cte(name, select)` is a source selectable and joinable like a model.

`WITH name (columns) AS (SELECT ...)`: its columns are the statement's row fields (the
fetched columns by attribute, then the labels), typed as the statement's rows are, so
`select(cte).where({"pos": 1})` filters on a window function's label. The definition travels
in the `Source` node of every statement that reads it; its bound values join that
statement's values where the source is added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from ..errors import ValidationError
from ..model import ColumnMeta, DerivedColumn, Model, ModelMeta
from ..row import PLAIN_NAME, plain_name_problem, row_class
from .nodes import (
    Aggregate,
    CommonTable,
    Function,
    Labeled,
    Param,
    QualifiedColumn,
    ScalarSubquery,
    SelectQuery,
    Source,
    Value,
)
from .query import Query

__all__ = ["NamedSelect", "cte_source", "named", "recursive"]

#: the type of its rows (the named statement's), as the type checker knows them
R_co = TypeVar("R_co", covariant=True)


class NamedSelect(Generic[R_co]):
    """A select under a name (sql.cte): pass it to select() and join() as a model."""

    __slots__ = ("meta", "name", "node", "values")

    def __init__(self, name: str, meta: ModelMeta, node: CommonTable | None,
                 values: tuple[object, ...]) -> None:
        self.name = name
        #: its columns as a table's: what where(), order_by() and joins check names against
        self.meta = meta
        #: the definition (None: the recursive step's reference to the table being defined)
        self.node = node
        self.values = values

    @property
    def columns(self) -> tuple[str, ...]:
        """The names of its columns."""
        return tuple(c.attr for c in self.meta.columns)

    def __repr__(self) -> str:
        return f"sql.cte({self.name!r}, columns={list(self.columns)!r})"


def _derived(table: str, item: Value | Labeled, position: int) -> DerivedColumn:
    """The column a select item becomes in the named select."""
    name: str
    like: ColumnMeta | None = None
    if isinstance(item, Labeled):
        name, value = item.label, item.value
        if isinstance(value, Aggregate | Function):
            kind, nullable, scale = value.kind, value.nullable, value.scale
        elif isinstance(value, Param):
            kind, nullable, scale = value.kind or "str", False, None
        elif isinstance(value, ColumnMeta | QualifiedColumn):
            like = value if isinstance(value, ColumnMeta) else value.column
            kind, nullable, scale = like.kind, like.nullable, like.scale
        else:
            from ..dialects.base import Dialect

            inner = Dialect.result_of(value.query) if isinstance(value, ScalarSubquery) else None
            if not isinstance(inner, tuple) or len(inner) != 1:
                raise ValidationError(f"sql.cte({table!r}): {name!r} cannot be named here")
            kind, nullable, scale = inner[0].kind, True, inner[0].scale
    elif isinstance(item, ColumnMeta | QualifiedColumn):
        like = item if isinstance(item, ColumnMeta) else item.column
        name, kind, nullable, scale = like.attr, like.kind, like.nullable, like.scale
    else:  # pragma: no cover - a select list holds no other item
        raise ValidationError(f"sql.cte({table!r}): cannot name {item!r}")
    return DerivedColumn(
        model_name=table, attr=name, name=name, kind=kind, nullable=nullable,
        primary_key=False, has_default=False, server_default=None, autoincrement=False,
        unique=False, max_length=None,
        literal_values=like.literal_values if like is not None else (),
        references=None, position=position, indexed=False, scale=scale,
    )


def table_of(name: str, node: SelectQuery) -> ModelMeta:
    """The columns a named select has, as a table's metadata."""
    items: tuple[Value | Labeled, ...]
    if node.items is None:
        if node.source.alias is not None:
            raise ValidationError(
                f"sql.cte({name!r}): a join's rows are models by alias, not one row of "
                "columns: project({...}) its columns, or aggregate() it"
            )
        items = node.source.meta.columns
    else:
        items = node.items
        # a join's models (add_columns() after them) are not one row of columns; its
        # project(), labels only, is
        projected = all(isinstance(item, Labeled) for item in items)
        if node.source.alias is not None and node.group_by is None and not projected:
            raise ValidationError(
                f"sql.cte({name!r}): a join's rows are models by alias, not one row of "
                "columns: project({...}) its columns, or aggregate() it"
            )
    columns = tuple(_derived(name, item, i) for i, item in enumerate(items))
    by_attr = {c.attr: c for c in columns}
    if len(by_attr) != len(columns):
        raise ValidationError(f"sql.cte({name!r}): two columns share a name")
    return ModelMeta(
        model=cast("type[Model]", row_class(tuple(by_attr))), name=name, table=name,
        columns=columns, by_attr=by_attr, primary_key=(), indexes=(), defaults={},
    )


def named(name: str, statement: object) -> NamedSelect[Any]:
    """sql.cte(name, statement)."""
    problem = plain_name_problem(name)
    if problem is not None:
        raise ValidationError(
            f"sql.cte({name!r}, ...): the name {problem}; it names the select as a table and "
            f"qualifies its columns: write {PLAIN_NAME}"
        )
    from .compound import SetQuery

    if isinstance(statement, SetQuery):
        compound = statement._key()
        meta = table_of(name, compound.parts[0])
        definition = CommonTable(name, tuple(c.name for c in meta.columns), compound, 0, None, 0)
        return NamedSelect(name, meta, definition, statement._values)
    if not isinstance(statement, Query):
        raise ValidationError(
            f"sql.cte({name!r}, ...) names a select (a select(), join() or aggregate(), or a "
            f"set operation of them), got {type(statement).__name__}"
        )
    if statement._ctx.correlated:
        raise ValidationError(
            f"sql.cte({name!r}, ...): the select names a column of an enclosing statement; a "
            "named select stands on its own"
        )
    node = statement._key()
    meta = table_of(name, node)
    definition = CommonTable(name, tuple(c.name for c in meta.columns), node, 0, None, 0)
    return NamedSelect(name, meta, definition, statement._values)


def recursive(name: str, base: object, step: Callable[[NamedSelect[Any]], object]
              ) -> NamedSelect[Any]:
    """sql.recursive_cte(name, base, step): base UNION ALL step, where `step` is given the
    named select being defined and reads it once (in a join), giving rows of its columns."""
    from .compound import result_fields
    from .where import FAMILIES

    head = named(name, base)
    definition = head.node
    assert definition is not None  # named() defines it
    reference: NamedSelect[Any] = NamedSelect(name, head.meta, None, ())
    made = step(reference)
    if not isinstance(made, Query):
        raise ValidationError(
            f"sql.recursive_cte({name!r}, ...): the step returns a select or a join of the "
            f"table being defined, got {type(made).__name__}"
        )
    key = made._key()
    fields = result_fields(key)
    if len(fields) != len(head.meta.columns):
        raise ValidationError(
            f"sql.recursive_cte({name!r}, ...): the base has {len(head.meta.columns)} columns "
            f"({', '.join(head.columns)}), the step {len(fields)}; give them the same columns "
            "(a join's project({...}))"
        )
    for col, field in zip(head.meta.columns, fields, strict=True):
        if FAMILIES.get(col.kind) is None or FAMILIES.get(col.kind) != FAMILIES.get(field.kind):
            raise ValidationError(
                f"sql.recursive_cte({name!r}, ...): column {col.attr!r} is {col.kind} in the "
                f"base but {field.kind} in the step"
            )
    whole = definition._replace(step=key, step_offset=len(head.values))
    return NamedSelect(name, head.meta, whole, (*head.values, *made._values))


def cte_source(source: object, alias: str | None,
               values: tuple[object, ...]) -> tuple[Source, tuple[object, ...]] | None:
    """The Source of a named select read by a statement holding `values` so far, and the
    values after its own join them; None when `source` is no named select."""
    if not isinstance(source, NamedSelect):
        return None
    definition = source.node
    if definition is not None:
        definition = definition._replace(offset=len(values),
                                         step_offset=definition.step_offset + len(values))
    return Source(source.meta, alias, definition), (*values, *source.values)

