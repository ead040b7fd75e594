"""INSERT: rows from model instances or dicts, conflict handling (upsert), returning."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Generic, Never, TypeVar, overload
from uuid import UUID

from .._wording import NO_ROWS
from ..errors import ValidationError
from ..expressions import Expression
from ..model import (
    DDL_LITERALS,
    INT_MAX,
    INT_MIN,
    UNSET,
    ColumnMeta,
    Model,
    ModelMeta,
    ddl_literal_problem,
    meta_of,
)
from ..row import Row
from ..values import KEPT, freeze_from
from .base import R_co, Statement, assignments, column_list, named_once, returning_columns
from .nodes import (
    CommonTable,
    Compound,
    Condition,
    ConflictNothing,
    ConflictUpdate,
    Function,
    InsertStatement,
    Labeled,
    Operand,
    Param,
    Returning,
    RowParams,
    SelectQuery,
    Source,
    Value,
    param,
)
from .where import WhereInput, assigned_value_node, check_assigned_number, condition_node

__all__ = ["Insert", "insert"]

M = TypeVar("M", bound=Model)
M_co = TypeVar("M_co", bound=Model, covariant=True)


def _row_mapping(meta: ModelMeta, row: object) -> dict[str, object]:
    """One row as {attr: value}, with Python-side defaults filled in."""
    if isinstance(row, meta.model):
        out: dict[str, object] = {}
        for col in meta.columns:
            value = getattr(row, col.attr)
            if value is not UNSET:
                out[col.attr] = value
            elif col.required:
                raise ValidationError(
                    f"insert({meta.name}).values(): {meta.name}.{col.attr} was left out of the "
                    f"constructor, and it is not nullable and has no default; pass "
                    f"{col.attr}=... or give it column(default_factory=...)"
                )
        return out
    if isinstance(row, Model):
        raise ValidationError(
            f"insert({meta.name}).values() got a {type(row).__name__} instance; "
            f"pass {meta.name} instances or dicts"
        )
    if not isinstance(row, Mapping):
        raise ValidationError(
            f"insert({meta.name}).values() takes a {meta.name}, a dict, or a list of either; "
            f"got {type(row).__name__} {row!r}"
        )
    out = {}
    for attr, value in row.items():
        meta.column(attr, "values()")
        out[attr] = value
    missing = [c.attr for c in meta.columns if c.attr not in out and c.required]
    if missing:
        raise ValidationError(
            f"insert({meta.name}).values() is missing required column(s) "
            f"{', '.join(repr(m) for m in missing)}: they are not nullable and have no default"
        )
    for attr, make in meta.defaults.items():
        if attr not in out:
            out[attr] = make()
    return out


#: the default factories that make the same value on every call (an empty list for a JSON
#: column): bound once, every row gets it; any other (uuid4, a clock) makes one per row
_SAME_EVERY_CALL: frozenset[object] = frozenset(
    {list, dict, tuple, str, int, float, bool, bytes, Decimal})


def _python_defaults(meta: ModelMeta, call: str, given: list[ColumnMeta]
                     ) -> list[tuple[ColumnMeta, object]]:
    """The model's Python-side defaults of the columns a select does not give, as values
    (the database knows none of them: its rows would get NULL, or fail NOT NULL). A
    default_factory that makes a value per row (uuid4) is a ValidationError: a select cannot
    call it."""
    fields = {f.name: f for f in dataclasses.fields(meta.model)}  # type: ignore[arg-type]  # a model class is a dataclass
    out: list[tuple[ColumnMeta, object]] = []
    made: list[str] = []
    for col in meta.columns:
        if col in given or col.attr not in meta.defaults:
            continue
        field = fields.get(col.attr)
        if field is None:  # pragma: no cover - every default is a field's
            made.append(col.attr)
            continue
        factory = field.default_factory
        if factory is not dataclasses.MISSING:
            if factory not in _SAME_EVERY_CALL:
                made.append(col.attr)
                continue
            value = factory()
        else:
            value = field.default
        if value is None and col.server_default is None:
            continue  # the database's NULL is the default
        out.append((col, value))
    if made:
        raise ValidationError(
            f"{call}: the select gives no {', '.join(made)}, whose default_factory makes a value "
            "per row in Python, which a select cannot call: select a value for "
            f"{'them' if len(made) > 1 else 'it'} (add_columns({{{made[0]!r}: sql.value(...)}})), "
            "or insert the rows with values()"
        )
    return out


def _select_defaults(key: SelectQuery | Compound, values: tuple[object, ...],
                     filled: list[tuple[ColumnMeta, object]]
                     ) -> tuple[SelectQuery, tuple[object, ...]]:
    """The select with the defaults added to its columns as bound values (a set operation
    named first, so that each of its members gets them)."""
    if isinstance(key, Compound):
        from .cte import table_of

        # a name no table of its members has: the name would hide that table in its body
        tables = {s.meta.table.casefold() for part in key.parts
                  for s in (part.source, *(j.source for j in part.joins))}
        name = "tempest_selected"
        while name in tables:
            name += "_"
        shape = table_of(name, key.parts[0])
        definition = CommonTable(name, tuple(c.name for c in shape.columns), key, 0, None, 0)
        key = SelectQuery(Source(shape, None, definition), (), shape.columns, None, None, None,
                          (), None, None, None, False)
    items: list[Operand | Labeled] = list(
        key.items if key.items is not None else key.source.meta.columns)
    out = list(values)
    for col, value in filled:
        out.append(value)
        items.append(Labeled(col.attr, Function(
            "value", (param(len(out) - 1, col.kind),), None, col.kind, col.kind, col.nullable,
            col.scale, (), ())))
    return key._replace(items=tuple(items)), tuple(out)


_TZINFO = attrgetter("tzinfo")
#: the id of the one zone a datetime column's value is taken in as it is (ColumnMeta.accepts)
_UTC_ID = id(_dt.UTC)

#: column kinds whose values are valid whenever their type is exactly this one
_EXACT: dict[str, type] = {"str": str, "int": int, "bool": bool, "float": float, "uuid": UUID}


def _check_exact_cells(col: ColumnMeta, cells: list[Any]) -> None:
    """Check the cells that skipped check_value() for what their type alone does not say
    (an int's range, a float's finiteness, a string's NUL or lone surrogate), in one pass
    over the batch; check_value() then finds the culprit and says what is wrong with it."""
    if cells and not _exact_cells_fine(col.kind, cells):
        for value in cells:
            col.check_value(value, "values()")


def _exact_cells_fine(kind: str, cells: list[Any]) -> bool:
    """For cells of exactly str, int or float: no NUL or lone surrogate, in range, finite."""
    if not cells:
        return True
    if kind == "str":
        text = "".join(cells)
        return "\x00" not in text and (text.isascii() or _encodes(text))
    if kind == "int":
        return bool(min(cells) >= INT_MIN and max(cells) <= INT_MAX)
    return all(map(math.isfinite, cells))


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _same_dicts(meta: ModelMeta, items: list[Any]) -> list[Any] | None:
    """The rows themselves when all are plain dicts with the first one's keys and need no
    default filled in (the common batch); None to take the general path.

    Checking the first row checks them all, since they name the same columns
    (measured: BENCHMARKS.md, "Fast paths").
    """
    first = items[0]
    if type(first) is not dict:
        return None
    keys = first.keys()
    for item in items:
        if type(item) is not dict or item.keys() != keys:
            return None
    if len(_row_mapping(meta, first)) != len(first):
        return None  # defaults fill in columns: every row gets its own
    return items


class RowCells:
    """A batch of plain rows held a column at a time: no tuple per row is made while the
    statement is built (nor kept alive for the collector to walk); iterating it makes the
    rows as they are written (measured: BENCHMARKS.md, "Fast paths")."""

    __slots__ = ("columns", "n_rows")

    def __init__(self, columns: list[Sequence[Any]], n_rows: int) -> None:
        self.columns = columns
        self.n_rows = n_rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self.columns, strict=True)

    def __len__(self) -> int:
        return self.n_rows

    def rows(self) -> list[tuple[Any, ...]]:
        """The rows as a list of tuples."""
        return list(zip(*self.columns, strict=True))


def _plain_rows(meta: ModelMeta, items: list[Any],
                columns: tuple[ColumnMeta, ...]) -> tuple[tuple[ColumnMeta, ...],
                                                          RowCells | tuple[Any, ...]] | None:
    """The columns and the rows' cells a column at a time (one row: its values), when every
    row is a dict with the same keys, needs no default filled in, and every cell is a plain
    value its column certainly holds; None to take the general path (which also finds and
    names what is wrong).

    A batch is tested a whole column at a time at C speed (map, set)
    (measured: BENCHMARKS.md, "Fast paths").
    """
    first = items[0]
    if type(first) is meta.model:
        return _plain_instances(meta, items, columns)
    if type(first) is not dict:
        return None
    plan = _plan(meta, tuple(first))
    if plan is None or (columns and plan[0] != columns):
        return None
    cols, getter, cell_getters = plan
    if len(items) == 1:
        row = getter(first)
        for col, value in zip(cols, row, strict=True):
            if not col.accepts(value) and (value is not None or not col.nullable):
                return None
        return cols, row
    if set(map(type, items)) != {dict} or set(map(len, items)) != {len(first)}:
        return None
    cells: list[Sequence[Any]] = []
    try:
        for col, cell in zip(cols, cell_getters, strict=True):
            column = list(map(cell, items))
            if not _plain_cells(col, column):
                return None
            cells.append(column)
    except KeyError:
        return None
    return cols, RowCells(cells, len(items))


def _plain_instances(meta: ModelMeta, items: list[Any],
                     columns: tuple[ColumnMeta, ...]) -> tuple[tuple[ColumnMeta, ...],
                                                               RowCells] | None:
    """_plain_rows() of instances of the model itself: every column read a whole column at
    a time; one left UNSET in every row (an identity, a server default) is left out."""
    if set(map(type, items)) != {meta.model}:
        return None
    unset_type = type(UNSET)
    kept: list[ColumnMeta] = []
    cells: list[Sequence[Any]] = []
    for col in meta.columns:
        column = list(map(attrgetter(col.attr), items))
        if unset_type in set(map(type, column)):  # by type: no __eq__ of each cell
            if col.required or any(c is not UNSET for c in column):
                return None  # the general path names what is missing, or mixes rows
            continue
        if not _plain_cells(col, column):
            return None
        kept.append(col)
        cells.append(column)
    if not kept:
        return None
    cols = tuple(kept)
    if columns and cols != columns:
        return None
    return cols, RowCells(cells, len(items))


_Plan = tuple[tuple[ColumnMeta, ...], Callable[[Any], tuple[Any, ...]],
              tuple[Callable[[Any], Any], ...]]
_PLANS: dict[tuple[ModelMeta, tuple[object, ...]], _Plan | None] = {}


def _plan(meta: ModelMeta, keys: tuple[object, ...]) -> _Plan | None:
    """For rows with these keys: their columns in table order and a getter of their cells;
    None when such rows need the general path (an unknown or missing column, a default)."""
    try:
        return _PLANS[meta, keys]
    except KeyError:
        pass
    plan: _Plan | None = None
    names = set(keys)
    if (names and len(names) == len(keys) and names <= meta.by_attr.keys()
            and not any(c.required and c.attr not in names for c in meta.columns)
            and names >= meta.defaults.keys()):
        cols = tuple(c for c in meta.columns if c.attr in names)
        attrs = [c.attr for c in cols]
        cell_getters = tuple(itemgetter(attr) for attr in attrs)
        if len(attrs) == 1:
            only = attrs[0]
            plan = (cols, lambda row: (row[only],), cell_getters)
        else:
            plan = (cols, itemgetter(*attrs), cell_getters)
    if len(_PLANS) >= 4096:
        _PLANS.clear()
    _PLANS[meta, keys] = plan
    return plan


def _plain_cells(col: ColumnMeta, cells: Sequence[Any]) -> bool:
    """True when every cell is a value the column certainly holds (no expression either)."""
    types = set(map(type, cells))
    if type(None) in types:
        if not col.nullable:
            return False
        types.discard(type(None))
        if not types:
            return True  # NULL in every row
        cells = [c for c in cells if c is not None]
    exact = _EXACT.get(col.kind)
    if types == {exact} and exact in (int, float, str):
        if col.max_length is not None and max(map(len, cells)) > col.max_length:
            return False
        return _exact_cells_fine(col.kind, list(cells))
    if types == {exact}:
        return True
    if col.kind == "datetime" and types == {_dt.datetime}:
        # accepts() of each, a column at a time: every zone is datetime.UTC itself (by id:
        # another zone of offset 0 compares equal, and goes through check_value())
        return set(map(id, map(_TZINFO, cells))) == {_UTC_ID}
    if col.kind == "literal" and types == {str}:
        return set(cells) <= set(col.literal_values)
    return all(map(col.accepts, cells))


_TARGETS: dict[tuple[ModelMeta, tuple[object, ...], str, bool], tuple[ColumnMeta, ...]] = {}


class Insert(Statement[R_co], Generic[M_co, R_co]):
    """INSERT INTO model (...) VALUES (...) [ON CONFLICT ...] [RETURNING ...]."""

    __slots__ = ("_cells", "_columns", "_conflict", "_flat", "_returning", "_rows")

    _columns: tuple[ColumnMeta, ...]
    _rows: RowParams | tuple[tuple[Value, ...], ...] | SelectQuery | Compound
    _conflict: ConflictNothing | ConflictUpdate | None
    _returning: Returning
    _cells: RowCells | None
    _flat: tuple[object, ...] | None

    @property
    def _values(self) -> tuple[object, ...]:
        """The statement's values in order: for rows held a column at a time, made on first
        use (a batch written by COPY or run row by row never needs them in one tuple;
        measured: BENCHMARKS.md, "Fast paths")."""
        flat = self._flat
        if flat is None:
            flat = self._flat = tuple(chain.from_iterable(self._cells or ()))
        return flat

    @_values.setter
    def _values(self, values: tuple[object, ...]) -> None:
        self._flat = values

    def _clone(self) -> Insert[M_co, R_co]:
        new: Insert[M_co, R_co] = object.__new__(Insert)
        new._meta = self._meta
        new._flat = self._flat
        new._columns = self._columns
        new._rows = self._rows
        new._conflict = self._conflict
        new._returning = self._returning
        new._cells = self._cells
        return new

    def _key(self) -> InsertStatement:
        if self._rows == ():
            raise ValidationError(f"insert({self._meta.name}) has no values(): give it a row")
        return InsertStatement(self._meta, self._columns, self._rows, self._conflict,
                               self._returning)

    @property
    def row_count(self) -> int:
        """How many rows this statement inserts (given by values(); a from_select() finds
        its rows when it runs)."""
        rows = self._rows
        if type(rows) is RowParams:
            return rows.n_rows
        if isinstance(rows, SelectQuery | Compound):
            raise ValidationError(
                f"insert({self._meta.name}).from_select(): the rows are those the select finds "
                "when the statement runs; read rows_affected() of its result")
        return len(rows)

    def _row_nodes(self) -> tuple[tuple[Value, ...], ...]:
        """The rows given so far as value-node rows, whatever their layout."""
        rows = self._rows
        if isinstance(rows, RowParams):
            width = len(self._columns)
            return tuple(
                tuple(param(rows.start + r * width + i, col.kind)
                      for i, col in enumerate(self._columns))
                for r in range(rows.n_rows)
            )
        if isinstance(rows, SelectQuery | Compound):
            raise ValidationError(
                f"insert({self._meta.name}): from_select() and values() do not combine")
        return rows

    def from_select(self, statement: Any) -> Insert[M_co, R_co]:
        """INSERT ... SELECT: the rows a select (or a set operation) finds, its columns mapped
        to this model's by name (the select's row field names are attributes of this model)."""
        from .compound import SetQuery, result_fields
        from .query import Query
        from .where import moves_to

        meta = self._meta
        call = f"insert({meta.name}).from_select()"
        if self._rows != ():
            raise ValidationError(f"{call}: the statement has values() already; use one of them")
        if isinstance(statement, SetQuery):
            key: SelectQuery | Compound = statement._key()
            fields = statement._fields
        elif isinstance(statement, Query):
            key = statement._key()
            fields = result_fields(key)
            if statement._ctx.correlated:
                raise ValidationError(f"{call}: the select names an enclosing statement")
        else:
            raise ValidationError(f"{call} takes a select, got {type(statement).__name__}")
        columns: list[ColumnMeta] = []
        items = _output_items(key)
        for field in fields:
            col = meta.column(field.name, call)
            probe = ColumnMeta(
                model_name="select", attr=field.name, name=field.name, kind=field.kind,
                nullable=True, primary_key=False, has_default=False, server_default=None,
                autoincrement=False, unique=False, max_length=None, literal_values=(),
                references=None, position=0, indexed=False)
            if not moves_to(col, probe):
                raise ValidationError(
                    f"{call}: {meta.name}.{col.attr} is {col.type_name()} but the select's "
                    f"{field.name!r} is {field.kind}; the columns must be of one family")
            check_assigned_number(col, field.kind, field.scale, items.get(field.name),
                                  f"the select's {field.name!r}", call)
            columns.append(col)
        missing = [c.attr for c in meta.columns if c.required and c not in columns]
        if missing:
            raise ValidationError(
                f"{call}: the select gives no {', '.join(missing)}, which {meta.name} requires")
        values: tuple[object, ...] = statement._values
        filled = _python_defaults(meta, call, columns)
        if filled:
            key, values = _select_defaults(key, values, filled)
            columns.extend(col for col, _ in filled)
        new = self._clone()
        new._columns = tuple(columns)
        new._rows = key
        new._values = values
        new._cells = None
        return new

    def values(self, rows: M_co | Mapping[str, object] | Sequence[M_co | Mapping[str, object]]
               ) -> Insert[M_co, R_co]:
        """The rows to insert: a model instance, a dict, or a list of either.

        A second call appends rows, which must set the same columns as the first ones.
        """
        meta = self._meta
        items: list[Any]
        if type(rows) is dict:
            items = [rows]
        elif type(rows) is list or (isinstance(rows, Sequence)
                                    and not isinstance(rows, str | bytes)):
            items = list(rows)
            if not items:
                raise ValidationError(f"insert({meta.name}).values([]) {NO_ROWS}")
        else:
            items = [rows]
        old = self._rows
        given = old != ()
        start = len(self._values)
        # the rows so far are one block of bound values that ends where new values start
        block = (old if isinstance(old, RowParams)
                 and old.start + old.n_rows * len(self._columns) == start else None)
        if not given or block is not None:
            plain_rows = _plain_rows(meta, items, self._columns)
            if plain_rows is not None:
                columns, cells = plain_rows
                new = self._clone()
                new._columns = columns
                first_row = block.start if block is not None else start
                added = block.n_rows if block is not None else 0
                # One row is its values. A batch's cells are kept a column at a time, for a
                # driver that takes one parameter set per row or a bulk copy: only while they
                # are the statement's only values, in one block from 0; the values in one
                # tuple are then made from them when first asked for.
                n_rows = len(cells) if isinstance(cells, RowCells) else 1
                new._rows = RowParams(added + n_rows, first_row)
                if isinstance(cells, RowCells) and not self._values:
                    new._flat = None
                    new._cells = cells
                else:
                    row_values = cells if isinstance(cells, tuple) else tuple(
                        chain.from_iterable(cells))
                    new._values = (*self._values, *row_values) if self._values else row_values
                    new._cells = None
                if self._conflict is not None:
                    new._check_repeated_keys()
                return new
        same = _same_dicts(meta, items)
        mappings = same if same is not None else [_row_mapping(meta, item) for item in items]
        keyset = {c.attr for c in self._columns} if given else set(mappings[0])
        # Rows with the same keys are all checked by checking the first.
        for i, mapping in enumerate(mappings[:1] if same is not None else mappings):
            if set(mapping) != keyset:
                first = "the rows already given set" if given else "row 0 sets"
                raise ValidationError(
                    f"insert({meta.name}).values(): row {i} sets columns "
                    f"{sorted(mapping)} but {first} {sorted(keyset)}; give every row the same "
                    "columns"
                )
        columns = self._columns if given else tuple(c for c in meta.columns if c.attr in keyset)
        if not columns:
            # Every column takes its default (an identity, a server default, NULL): rows of
            # no value, which the dialect writes as DEFAULT VALUES or its own spelling.
            new = self._clone()
            new._rows = self._row_nodes() + ((),) * len(mappings)
            new._cells = None
            return new
        values = list(self._values)
        plain = True
        # A cell whose type is exactly the column's plain Python type is valid as it is; any
        # other goes through check_value(), in the same row-major order.
        checks = [(col.attr, _EXACT.get(col.kind) if col.max_length is None else None, col)
                  for col in columns]
        for mapping in mappings:
            for attr, exact, col in checks:
                value = mapping[attr]
                if type(value) is exact:
                    continue
                if isinstance(value, Expression):
                    plain = False
                else:
                    col.check_value(value, "values()")
        for attr, exact, col in checks:
            if exact is int or exact is float or exact is str:
                _check_exact_cells(col, [v for m in mappings if type(v := m[attr]) is exact])
        new = self._clone()
        new._columns = columns
        new._cells = None
        if plain and not given:
            values.extend(mapping[col.attr] for mapping in mappings for col in columns)
            new._rows = RowParams(len(mappings), start)
        elif plain and block is not None:
            # The new cells follow the old ones in the value list: one block still.
            values.extend(mapping[col.attr] for mapping in mappings for col in columns)
            new._rows = RowParams(block.n_rows + len(mappings), block.start)
        else:
            new._rows = self._row_nodes() + tuple(
                tuple(assigned_value_node(col, meta, mapping[col.attr], values, "values()")
                      for col in columns)
                for mapping in mappings
            )
        if not KEPT.issuperset(map(type, values[start:])):
            # A JSON dict, a bytearray, an enum member: the statement keeps its own copy (or
            # the plain value), so changing the caller's object later changes nothing stored.
            # The test is one pass at C speed.
            freeze_from(values, start)
        new._values = tuple(values)
        if self._conflict is not None:
            new._check_repeated_keys()
        return new

    def _target(self, target: Sequence[str] | None, where: str,
                predicate: bool) -> tuple[ColumnMeta, ...] | None:
        """The conflict target's columns, which must be a unique key the model declares (a
        database rejects any other target); a partial unique index needs its predicate."""
        if target is None:
            return None
        meta = self._meta
        # A target found good once is good again (measured: BENCHMARKS.md, "Fast paths").
        known_key = (meta, tuple(target), where, predicate) if type(target) is list else None
        if known_key is not None:
            try:
                found = _TARGETS.get(known_key)
            except TypeError:  # an unhashable column name: the checks below name it
                known_key = found = None
            if found is not None:
                return found
        cols = self._checked_target(target, where, predicate)
        if known_key is not None:
            if len(_TARGETS) >= 1024:
                _TARGETS.clear()
            _TARGETS[known_key] = cols
        return cols

    def _checked_target(self, target: Sequence[str], where: str,
                        predicate: bool) -> tuple[ColumnMeta, ...]:
        meta = self._meta
        cols = named_once(meta, column_list(meta, target, where), where)
        wanted = {c.attr for c in cols}
        keys: list[tuple[set[str], bool]] = [({c.attr for c in meta.primary_key}, False)]
        keys += [({c.attr}, False) for c in meta.columns if c.unique]
        keys += [(set(i.columns), i.where is not None) for i in meta.indexes if i.unique]
        partial = [is_partial for key, is_partial in keys if key == wanted]
        if not partial:
            known = "; ".join(sorted({", ".join(sorted(k)) for k, _ in keys if k}))
            raise ValidationError(
                f"{meta.name}: {where} target {list(target)} is not a unique key of the model, "
                f"and a conflict can only be detected on one (unique keys: {known or 'none'})"
            )
        if all(partial) and not predicate:
            raise ValidationError(
                f"{meta.name}: {where} target {list(target)} is a partial unique index: repeat "
                "its predicate (where= / index_where=), or PostgreSQL finds no index to use"
            )
        return cols

    def on_conflict_do_nothing(self, target: Sequence[str] | None = None, *,
                               where: WhereInput | None = None) -> Insert[M_co, R_co]:
        """Skip rows that conflict on `target` (a unique index; `where` repeats its predicate)."""
        label = "on_conflict_do_nothing()"
        cols = self._target(target, label, where is not None)
        if where is not None and cols is None:
            raise ValidationError(
                f"insert({self._meta.name}).{label}: where= repeats the predicate of the "
                "target's partial index, so it needs a target"
            )
        cond, literals = _index_predicate(self._meta, where, f"{label} where=")
        new = self._clone()
        new._conflict = ConflictNothing(cols, cond, literals)
        return new

    def on_conflict_do_update(self, target: Sequence[str] | None, set: Mapping[str, object], *,
                              index_where: WhereInput | None = None,
                              update_where: WhereInput | None = None) -> Insert[M_co, R_co]:
        """Update the existing row on a conflict on `target` (an upsert).

        `target=None` means any unique key: what MySQL's ON DUPLICATE KEY UPDATE does, and
        what SQLite accepts too; PostgreSQL needs a target.
        """
        label = "on_conflict_do_update()"
        cols = self._target(target, label, index_where is not None)
        if cols is None and index_where is not None:
            raise ValidationError(
                f"insert({self._meta.name}).{label}: index_where= repeats the predicate of the "
                "target's partial index, so it needs a target"
            )
        values = list(self._values)
        items = assignments(self._meta, set, values, f"{label} set", allow_excluded=True)
        index_cond, literals = _index_predicate(self._meta, index_where,
                                                f"{label} index_where=")
        update_cond = (None if update_where is None else
                       condition_node(self._meta, update_where, values, f"{label} update_where="))
        new = self._clone()
        new._conflict = ConflictUpdate(cols, items, index_cond, update_cond, literals)
        new._values = tuple(values)
        new._check_repeated_keys()
        return new

    def _check_repeated_keys(self) -> None:
        """Refuse an upsert whose rows repeat a conflict key: PostgreSQL refuses to update
        one row twice in a statement, MySQL and SQLite updated it with the last row."""
        conflict, rows, meta = self._conflict, self._rows, self._meta
        if not isinstance(conflict, ConflictUpdate) or isinstance(rows, SelectQuery | Compound):
            return
        n_rows = rows.n_rows if isinstance(rows, RowParams) else len(rows)
        if n_rows < 2:
            return
        keys = [conflict.target] if conflict.target is not None else (
            [meta.primary_key] + [(c,) for c in meta.columns if c.unique]
            + [tuple(meta.by_attr[a] for a in i.columns) for i in meta.indexes
               if i.unique and i.where is None])
        width, values = len(self._columns), self._values
        position = {col: i for i, col in enumerate(self._columns)}
        for key in keys:
            if not key or any(col not in position for col in key):
                continue  # a column the rows do not give takes its default (an identity)
            at = [position[col] for col in key]
            seen: dict[object, int] = {}
            for r in range(n_rows):
                if isinstance(rows, RowParams):
                    cells: list[object] = [values[rows.start + r * width + i] for i in at]
                else:
                    nodes = [rows[r][i] for i in at]
                    if not all(type(n) is Param for n in nodes):
                        continue  # an expression: its value is the database's
                    cells = [values[n.value_index] for n in nodes if type(n) is Param]
                if any(cell is None for cell in cells):
                    continue  # NULL never conflicts
                try:
                    first = seen.setdefault(tuple(cells), r)
                except TypeError:  # an unhashable value: not a key a batch can check
                    break
                if first != r:
                    shown = {col.attr: cell for col, cell in zip(key, cells, strict=True)}
                    raise ValidationError(
                        f"insert({meta.name}).on_conflict_do_update(): rows {first} and {r} "
                        f"both have {shown}, one conflict key: PostgreSQL refuses to update one "
                        "row twice in a statement, MySQL and SQLite keep the last; give each "
                        "key once (merge the rows before the upsert)")

    @overload
    def returning(self) -> Insert[M_co, M_co]: ...

    @overload
    def returning(self, column: str, /, *columns: str) -> Insert[M_co, Row]: ...

    def returning(self, *columns: str) -> Insert[M_co, Any]:
        """Return the inserted rows: whole models, or the named columns as Row."""
        new = self._clone()
        new._returning = returning_columns(self._meta, columns)
        return new


def _output_items(key: SelectQuery | Compound) -> dict[str, object]:
    """A select's computed columns by label, which tell sql.round(x), a whole number, from
    another float (of a set operation, those every member computes alike)."""
    parts = key.parts if isinstance(key, Compound) else (key,)
    found = [{item.label: item.value for item in part.items or () if isinstance(item, Labeled)}
             for part in parts]
    return {label: value for label, value in found[0].items()
            if all(type(other.get(label)) is type(value)
                   and getattr(other.get(label), "name", None) == getattr(value, "name", None)
                   and getattr(other.get(label), "option", None) == getattr(value, "option", None)
                   for other in found[1:])}


def _index_predicate(meta: ModelMeta, where: WhereInput | None, label: str
                     ) -> tuple[Condition | None, tuple[object, ...]]:
    """A conflict target's predicate and the values it holds, which the SQL writes inline as
    the partial index's CREATE INDEX writes its own (nodes.ConflictUpdate says why)."""
    if where is None:
        return None, ()
    literals: list[object] = []
    cond = condition_node(meta, where, literals, label)
    for value in literals:
        problem = ddl_literal_problem(value)
        if problem is not None:
            raise ValidationError(
                f"insert({meta.name}).{label}: {problem}; it repeats the predicate of the "
                "target's partial index, which is written with its values inline (a bound "
                f"value cannot match the index's), so it compares with {DDL_LITERALS} only")
    return cond, tuple(literals)


def insert(model: type[M], /) -> Insert[M, Never]:
    """INSERT INTO a model's table; give the rows with values()."""
    stmt: Insert[M, Never] = object.__new__(Insert)
    stmt._meta = meta_of(model)
    stmt._values = ()
    stmt._columns = ()
    stmt._rows = ()
    stmt._conflict = None
    stmt._returning = None
    stmt._cells = None
    return stmt
