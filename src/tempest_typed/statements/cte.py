"""Named selects: `sql.cte(name, select)` is a source selectable and joinable like a model.

`WITH name (columns) AS (SELECT ...)`: its columns are the statement's row fields (the
fetched columns by attribute, then the labels), typed as the statement's rows are, so
`select(cte).where({"pos": 1})` filters on a window function's label. The definition travels
in the `Source` node of every statement that reads it; its bound values join that
statement's values where the source is added.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

from .._wording import (
    CTE_HIDES_TABLE,
    STEP_AGGREGATES,
    STEP_COLUMN_NAMES,
    STEP_COLUMNS,
    STEP_LEFT_JOINS,
    STEP_ORDERS,
    STEP_READS_ITSELF,
    STEP_READS_TWICE,
)
from ..errors import ValidationError
from ..model import ColumnMeta, DerivedColumn, Model, ModelMeta, model_of_table
from ..row import PLAIN_NAME, plain_name_problem, row_class
from .nodes import (
    Aggregate,
    CommonTable,
    Compound,
    Function,
    Labeled,
    Operand,
    Param,
    QualifiedColumn,
    ScalarSubquery,
    SelectQuery,
    Source,
    Value,
    operand_column,
)
from .query import Query

__all__ = ["NamedSelect", "check_one_select_per_name", "cte_source", "named", "recursive"]

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
    return _table(name, tuple(_derived(name, item, i) for i, item in enumerate(items)))


def _table(name: str, columns: tuple[ColumnMeta, ...]) -> ModelMeta:
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
    shadowed = model_of_table(name)
    if shadowed is not None:
        raise ValidationError(
            f"sql.cte({name!r}, ...): {name!r} is the table of the model {shadowed}; "
            f"{CTE_HIDES_TABLE}, e.g. {name + '_rows'!r}"
        )
    from .compound import SetQuery

    if isinstance(statement, SetQuery):
        compound = statement._key()
        if correlated_member(compound):
            raise ValidationError(
                f"sql.cte({name!r}, ...): a select of the set operation names a column of an "
                "enclosing statement; a named select stands on its own")
        meta = table_of(name, compound.parts[0])
        definition = CommonTable(name, tuple(c.name for c in meta.columns), compound, 0, None, 0,
                                 len(statement._values))
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
    definition = CommonTable(name, tuple(c.name for c in meta.columns), node, 0, None, 0,
                             len(statement._values))
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
    shown = f"sql.recursive_cte({name!r}, ...)"
    reference: NamedSelect[Any] = NamedSelect(name, head.meta, None, ())
    made = step(reference)
    if not isinstance(made, Query):
        raise ValidationError(
            f"{shown}: the step returns a select or a join of the table being defined, got "
            f"{type(made).__name__}"
        )
    key = made._key()
    _check_reads(shown, key, head.meta)
    fields = result_fields(key)
    if len(fields) != len(head.meta.columns):
        raise ValidationError(
            f"{shown}: the base has {len(head.meta.columns)} columns "
            f"({', '.join(head.columns)}), the step {len(fields)}; {STEP_COLUMNS}"
        )
    names = [f.name for f in fields]
    if sorted(names) != sorted(head.columns):
        raise ValidationError(
            f"{shown}: the step's columns are matched to the base's by name; the base has "
            f"{', '.join(head.columns)}, the step {', '.join(names)}: {STEP_COLUMN_NAMES}"
        )
    if names != list(head.columns):
        key = _reordered(key, names, head.columns)
        fields = result_fields(key)
    targets: list[tuple[str, int | None] | None] = []
    for col, field in zip(head.meta.columns, fields, strict=True):
        # UNION ALL: a JSON column beside JSON is moved, not compared
        if not (col.kind == field.kind == "json") and (
                FAMILIES.get(col.kind) is None or FAMILIES.get(col.kind) != FAMILIES.get(field.kind)):
            raise ValidationError(
                f"{shown}: column {col.attr!r} is {col.kind} in the base but {field.kind} in "
                "the step"
            )
        targets.append(_target(shown, col, field.kind, field.scale))
    query = definition.query
    if any(t is not None for t in targets):
        if isinstance(query, Compound):
            query = query._replace(parts=tuple(_cast_items(p, targets) for p in query.parts))
        else:
            query = _cast_items(query, targets)
    meta = _widened(head.meta, targets)
    whole = definition._replace(query=query, step=key, step_offset=len(head.values),
                                length=len(head.values) + len(made._values))
    check_one_select_per_name([(Source(meta, None, whole), 0)], (*head.values, *made._values),
                              shown)
    return NamedSelect(name, meta, whole, (*head.values, *made._values))


def _check_reads(shown: str, key: SelectQuery, meta: ModelMeta) -> None:
    """Refuse a step that does not join the table being defined once, on the inner side, or
    that the databases do not run alike."""
    if key.order or key.limit is not None or key.offset is not None:
        raise ValidationError(f"{shown}: {STEP_ORDERS}")
    if key.group_by is not None:
        raise ValidationError(f"{shown}: {STEP_AGGREGATES}")
    reads = [key.source] if key.source.meta is meta else []
    for clause in key.joins:
        if clause.source.meta is meta:
            if clause.kind == "left":
                raise ValidationError(f"{shown}: {STEP_LEFT_JOINS}")
            reads.append(clause.source)
    if not reads:
        raise ValidationError(f"{shown}: {STEP_READS_ITSELF}")
    if len(reads) > 1:
        raise ValidationError(f"{shown}: {STEP_READS_TWICE.format(times=len(reads))}")


def _items(query: SelectQuery) -> tuple[Operand | Labeled, ...]:
    if query.items is not None:
        return query.items
    return query.source.meta.columns


def _reordered(key: SelectQuery, names: list[str], wanted: tuple[str, ...]) -> SelectQuery:
    """The step with its select items in the base's order (matched by name)."""
    items = _items(key)
    by_name = dict(zip(names, items, strict=True))
    return key._replace(items=tuple(by_name[n] for n in wanted))


#: the kinds whose base column is cast to the column's plain type: text takes the length,
#: collation (PostgreSQL) and width (MariaDB) of the base's expression otherwise, and a
#: Decimal its precision, so the step's longer values were refused or cut
_CAST_KINDS = frozenset({"str", "literal", "decimal"})


def _target(shown: str, col: ColumnMeta, kind: str,
            scale: int | None) -> tuple[str, int | None] | None:
    """The kind (and scale) the base's column is cast to so that it holds the step's values
    too; None where it stays as it is. The rows are typed by the base: a step's number wider
    than the base's (a float beside an int) is refused, not cut to the base's type (MySQL and
    SQLite read 0.5 back as 0) or refused by the database (PostgreSQL)."""
    from .compute import described, widest

    wide, wide_scale = widest([described(col.attr, col.kind, col.nullable, None, col.scale),
                               described(col.attr, kind, False, None, scale)])
    if wide == "literal" or col.kind == "literal":
        wide = col.kind
    if wide != col.kind:
        fix = "sql.col(...) * 1.0" if wide == "float" else "sql.col(...) + Decimal('0.00')"
        raise ValidationError(
            f"{shown}: column {col.attr!r} is {col.kind} in the base but {kind} in the step; "
            f"the rows are typed by the base, so make the base's column a {wide} ({fix}, or "
            f"sql.value() of a {wide})"
        )
    if wide in _CAST_KINDS:
        return wide, wide_scale
    return None


def _cast_items(query: SelectQuery, targets: list[tuple[str, int | None] | None]) -> SelectQuery:
    items: list[Operand | Labeled] = []
    for item, target in zip(_items(query), targets, strict=True):
        if target is None:
            items.append(item)
            continue
        if isinstance(item, Labeled):
            label, value = item.label, item.value
        else:
            found = operand_column(item)
            if found is None:  # pragma: no cover - table_of() named every item
                raise ValidationError(f"cannot name {item!r}")
            label, value = found.attr, item
        kind, scale = target
        items.append(Labeled(label, Function("cast", (value,), None, None, kind, True, scale,
                                             (), ())))
    return query._replace(items=tuple(items))


def _widened(meta: ModelMeta, targets: list[tuple[str, int | None] | None]) -> ModelMeta:
    """The named select's columns with the kinds the base was cast to."""
    if all(t is None or (t[0] == c.kind and t[1] == c.scale)
           for c, t in zip(meta.columns, targets, strict=True)):
        return meta
    columns = tuple(c if t is None else dataclasses.replace(c, kind=t[0], scale=t[1])
                    for c, t in zip(meta.columns, targets, strict=True))
    return _table(meta.table, columns)


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



def check_one_select_per_name(sources: Sequence[tuple[Source, int]],
                              values: tuple[object, ...], shown: str) -> None:
    """Refuse two different selects under one name where one WITH names them both (the
    tables of a join, of the members of a set operation): it is written once, so the second
    select's rows were silently the first's, even when the two differ in a value only.
    `sources` are the tables with where their statement's values start in `values`."""
    seen: dict[str, tuple[CommonTable, int]] = {}
    for definition, base in _with_entries(sources):
        start = base + definition.offset
        if definition.name not in seen:
            seen[definition.name] = (definition, start)
            continue
        first, at = seen[definition.name]
        a = values[at:at + first.length]
        b = values[start:start + definition.length]
        if (first.query != definition.query or first.step != definition.step
                or len(a) != len(b) or any(x is not y and x != y for x, y in zip(a, b, strict=True))):
            raise ValidationError(
                f"{shown}: two different selects are named {definition.name!r}; give each "
                "sql.cte() its own name")


def _with_entries(sources: Sequence[tuple[Source, int]]) -> list[tuple[CommonTable, int]]:
    """The named selects one WITH holds for these tables: theirs, and before a recursive
    one those its base and step read (written beside it, as its members take no WITH)."""
    out: list[tuple[CommonTable, int]] = []
    for source, base in sources:
        definition = source.definition
        if definition is None:
            continue
        if definition.step is not None:
            start = base + definition.offset
            body = definition.query
            parts = (tuple(zip(body.parts, body.offsets, strict=True))
                     if isinstance(body, Compound) else ((body, 0),))
            inner = [(s, start + at) for part, at in parts
                     for s in (part.source, *(j.source for j in part.joins))]
            step = definition.step
            inner += [(s, base + definition.step_offset)
                      for s in (step.source, *(j.source for j in step.joins))]
            out += _with_entries(inner)
        out.append((definition, base))
    return out


def correlated_member(compound: Compound) -> bool:
    """Whether a member of a set operation names a column of an enclosing statement."""
    from .where import free_references

    return any(free_references(part) for part in compound.parts)
