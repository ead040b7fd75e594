"""Set operations: `union`, `union_all`, `intersect`, `except_` of selects, then order/limit.

The statements need the same number of columns, pairwise of one family; rows are typed by the
first statement. The members take no order, limit or lock of their own (SQLite cannot write a
member in parentheses): the combined result takes them. A chain is read left to right on
every database, so an `intersect` after a `union` or `except_` (which PostgreSQL and MySQL
would read first) is refused: name the first part with sql.cte() instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ..errors import ValidationError
from ..model import ColumnMeta, ModelMeta
from .base import R_co, Statement, limit_node, row_count
from .nodes import (
    Compound,
    Function,
    Labeled,
    Operand,
    OrderItem,
    SelectQuery,
    Value,
    order_item,
    param,
)
from .where import FAMILIES

if TYPE_CHECKING:
    from ..dialects.base import ResultField
    from .where import Subquery

__all__ = ["SetQuery", "combined", "result_fields"]

_SQL = {"union": "UNION", "union_all": "UNION ALL", "intersect": "INTERSECT",
        "except_": "EXCEPT"}


def result_fields(query: SelectQuery) -> tuple[ResultField, ...]:
    """The fields of a select's rows (a whole-model select's columns by attribute)."""
    from ..dialects.base import ComputedModels, Dialect, JoinedModels, ResultField

    shape = Dialect.result_of(query)
    if isinstance(shape, ModelMeta):
        return tuple(ResultField(c.attr, c.kind, False, c.scale) for c in shape.columns)
    if not isinstance(shape, tuple) or isinstance(shape, JoinedModels | ComputedModels):
        raise ValidationError(
            "a join's rows are models by alias: combine selects of columns, or aggregate()s")
    return shape


def _output_names(query: SelectQuery) -> list[tuple[str, Value | Labeled]]:
    """The output column names of a select, by row field name, with the item of each."""
    items: tuple[Any, ...] = query.items if query.items is not None else query.source.meta.columns
    out: list[tuple[str, Value | Labeled]] = []
    for item in items:
        if isinstance(item, Labeled):
            out.append((item.label, item))
        elif isinstance(item, ColumnMeta):
            out.append((item.name, item))
        else:
            out.append((item.column.name, item))
    return out


def _widened(op: str, parts: tuple[SelectQuery, ...]) -> tuple[SelectQuery, ...]:
    """The members with each column of numbers cast to the widest kind (and Decimal scale)
    of it in any member, as coalesce and CASE widen: SQLite kept each row's own type (an int
    beside a float), and every database's rows were read at the first member's type (a
    Decimal rounded to its scale, a float refused as a Decimal)."""
    from .compute import described, widest

    shapes = [result_fields(part) for part in parts]
    targets: list[tuple[str, int | None] | None] = []
    for column in zip(*shapes, strict=True):
        if not {f.kind for f in column} <= _NUMBERS:
            targets.append(None)
            continue
        targets.append(widest([described(f.name, f.kind, False, None, f.scale)
                               for f in column]))
    if all(t is None or all((f.kind, f.scale) == t for f in column)
           for t, column in zip(targets, zip(*shapes, strict=True), strict=True)):
        return parts
    out: list[SelectQuery] = []
    for n, (part, shape) in enumerate(zip(parts, shapes, strict=True)):
        if all(t is None or (f.kind, f.scale) == t for t, f in zip(targets, shape, strict=True)):
            out.append(part)
            continue
        if part.items is None and n == 0:
            wide = next(f for t, f in zip(targets, shape, strict=True)
                        if t is not None and (f.kind, f.scale) != t)
            raise ValidationError(
                f"{op}(): the first statement's rows are {part.source.meta.name} models, whose "
                f"{wide.name} ({wide.kind}) cannot hold another statement's wider numbers; "
                f"select its columns (select({part.source.meta.name}, [...])) so that the rows "
                "take the wider type"
            )
        items: tuple[Operand | Labeled, ...] = (
            part.items if part.items is not None else part.source.meta.columns)
        cast: list[Operand | Labeled] = []
        for item, field, target in zip(items, shape, targets, strict=True):
            if target is None or (field.kind, field.scale) == target:
                cast.append(item)
                continue
            value = item.value if isinstance(item, Labeled) else item
            cast.append(Labeled(field.name, Function(
                "cast", (value,), None, field.kind, target[0], True, target[1], (), ())))
        out.append(part._replace(items=tuple(cast)))
    return tuple(out)


#: the kinds a set operation widens to the widest of them
_NUMBERS = frozenset({"int", "float", "decimal"})


def _statement_key(statement: object, call: str) -> tuple[SelectQuery, tuple[object, ...]]:
    from .query import Query

    if not isinstance(statement, Query):
        raise ValidationError(f"{call} takes a select, got {type(statement).__name__}")
    key = statement._key()
    if key.order or key.limit is not None or key.offset is not None or key.lock is not None:
        raise ValidationError(
            f"{call}: a combined select takes no order_by(), limit(), offset() or lock of its "
            "own; call order_by()/limit() on the combined result"
        )
    return key, statement._values


class SetQuery(Statement[R_co]):
    """Selects combined by UNION [ALL] / INTERSECT / EXCEPT, with ORDER BY and LIMIT."""

    __slots__ = ("_fields", "_node")

    _node: Compound
    #: the first statement's row fields, which type the rows and name the columns
    _fields: tuple[ResultField, ...]

    def _key(self) -> Compound:
        return self._node

    def _then(self, op: str, other: object) -> SetQuery[R_co]:
        node = self._node
        if node.order or node.limit is not None or node.offset is not None:
            raise ValidationError(
                f"{op}() after order_by()/limit(): combine every select first, then order")
        if op == "intersect" and any(o != _SQL["intersect"] for o in node.ops):
            raise ValidationError(
                "intersect() after union()/except_(): PostgreSQL and MySQL would intersect "
                "first, SQLite left to right; name the combined part with sql.cte() first, "
                "or intersect first"
            )
        key, values = _statement_key(other, f"{op}()")
        fields = result_fields(key)
        first = self._fields
        if len(fields) != len(first):
            raise ValidationError(
                f"{op}(): the statements have {len(first)} and {len(fields)} columns; combined "
                "selects need the same number of columns"
            )
        for a, b in zip(first, fields, strict=True):
            if a.kind == b.kind == "json":
                if op == "union_all":
                    continue  # moved beside each other, never compared
                raise ValidationError(
                    f"{op}(): {a.name!r} and {b.name!r} are JSON columns, which are not "
                    f"compared, so {op}() cannot tell rows with them apart the same way on "
                    "every database; use union_all(), or combine the selects without them")
            family = FAMILIES.get(a.kind)
            if family is None or family != FAMILIES.get(b.kind):
                raise ValidationError(
                    f"{op}(): column {a.name!r} is {a.kind} but {b.name!r} is {b.kind}; combined "
                    "columns must be pairwise of one family (numbers, text, bool, datetime, "
                    "date, UUID, bytes)"
                )
        from .cte import check_one_select_per_name

        offsets = (*node.offsets, len(self._values))
        check_one_select_per_name(
            [(s, at) for part, at in zip((*node.parts, key), offsets, strict=True)
             for s in (part.source, *(j.source for j in part.joins))],
            (*self._values, *values), f"{op}()")
        parts = _widened(op, (*node.parts, key))
        new: SetQuery[R_co] = object.__new__(SetQuery)
        new._meta = self._meta
        new._fields = result_fields(parts[0]) if parts[0] is not node.parts[0] else first
        new._values = (*self._values, *values)
        new._node = node._replace(parts=parts,
                                  offsets=offsets,
                                  ops=(*node.ops, _SQL[op]))
        return new

    def union(self, other: object) -> SetQuery[R_co]:
        """The rows of either, each different row once (UNION)."""
        return self._then("union", other)

    def union_all(self, other: object) -> SetQuery[R_co]:
        """The rows of both, duplicates kept (UNION ALL)."""
        return self._then("union_all", other)

    def intersect(self, other: object) -> SetQuery[R_co]:
        """The rows found in both (INTERSECT)."""
        return self._then("intersect", other)

    def except_(self, other: object) -> SetQuery[R_co]:
        """The rows of this one not found in the other (EXCEPT)."""
        return self._then("except_", other)

    def order_by(self, column: str, direction: Literal["asc", "desc"] = "asc"
                 ) -> SetQuery[R_co]:
        """Sort the combined rows by a column of the first statement (its row field name)."""
        names = dict(zip([f.name for f in self._fields], _output_names(self._node.parts[0]),
                         strict=True))
        found = names.get(column) if type(column) is str else None
        if found is None:
            raise ValidationError(
                f"order_by({column!r}) of a combined select names a column of the first "
                f"statement: {', '.join(names)}"
            )
        if direction not in ("asc", "desc"):
            raise ValidationError(f"order_by({column!r}, {direction!r}): 'asc' or 'desc'")
        if any(f.name == column and f.kind == "json" for f in self._fields):
            raise ValidationError(
                f"order_by({column!r}) of a combined select: {column!r} is a JSON column, "
                "which is not compared; order by another column")
        name, item = found
        labeled = item if isinstance(item, Labeled) else Labeled(name, item)
        ordered: OrderItem = order_item(labeled, direction == "desc", True)
        new = self._copy()
        new._node = self._node._replace(order=(*self._node.order, ordered))
        return new

    def as_subquery(self, column: str) -> Subquery[Any, Any]:
        """The combined rows projected on one column (a row field of the first statement):
        an `in` operand or, with sql.scalar(), a value. It reads them as a named select of
        its own (`IN (WITH ... SELECT column FROM ...)`)."""
        from ..model import model_of_table
        from .cte import correlated_member, named
        from .select import select

        if correlated_member(self._node):
            raise ValidationError(
                f"as_subquery({column!r}) of a combined select: a select of it names a column "
                "of an enclosing statement, which MySQL does not read there; correlate a "
                "select (sql.exists() of each, or an `in` of each, or_()-ed) instead")

        if type(column) is not str or column not in {f.name for f in self._fields}:
            raise ValidationError(
                f"as_subquery({column!r}) of a combined select names a column of the first "
                f"statement: {', '.join(f.name for f in self._fields)}")
        tables = {s.meta.table.casefold() for part in self._node.parts
                  for s in (part.source, *(j.source for j in part.joins))}
        name = "tempest_combined"  # a name no table of its members, nor a model's, has
        while name in tables or model_of_table(name) is not None:
            name += "_"
        return select(named(name, self), [column]).as_subquery(column)

    def _copy(self) -> SetQuery[R_co]:
        new: SetQuery[R_co] = object.__new__(SetQuery)
        new._meta, new._fields, new._values = self._meta, self._fields, self._values
        new._node = self._node
        return new

    def limit(self, n: int) -> SetQuery[R_co]:
        """Return at most n of the combined rows."""
        new = self._copy()
        new._node = self._node._replace(limit=limit_node(n))
        return new

    def offset(self, n: int) -> SetQuery[R_co]:
        """Skip the first n of the combined rows."""
        new = self._copy()
        new._values = (*self._values, row_count("offset()", n))
        new._node = self._node._replace(offset=param(len(self._values), "int"))
        return new


def combined(first: object, op: str, other: object) -> SetQuery[Any]:
    """`first op other`: the start of a set operation."""
    key, values = _statement_key(first, f"{op}()")
    start: SetQuery[Any] = object.__new__(SetQuery)
    start._meta = first._meta  # type: ignore[attr-defined]  # _statement_key() found a Query
    start._fields = result_fields(key)
    start._values = values
    start._node = Compound((key,), (0,), (), (), None, None)
    return start._then(op, other)
