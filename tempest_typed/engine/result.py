"""Results: the fetched rows of one statement, already mapped to their Python types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ..errors import MultipleResultsError, NoResultError, TempestError
from ..model import ColumnMeta, ModelMeta
from ..row import row_class
from .types import Adapter

__all__ = ["Result", "row_builder"]

R_co = TypeVar("R_co", covariant=True)


class Result(Generic[R_co]):
    """The outcome of one execute(): its rows (if it returns any) and the rows it affected."""

    __slots__ = ("_rowcount", "_rows", "_sql")

    def __init__(self, rows: list[Any] | None, rowcount: int, sql: str) -> None:
        self._rows = rows
        self._rowcount = rowcount
        self._sql = sql

    def _fetched(self) -> list[Any]:
        if self._rows is None:
            raise TempestError(
                "this statement returns no rows; add .returning(...) to an insert, update or "
                "delete to fetch what it wrote, or use rows_affected()"
            )
        return self._rows

    def all(self) -> list[R_co]:
        """Every row."""
        return list(self._fetched())

    def first(self) -> R_co | None:
        """The first row, or None when there is none."""
        rows = self._fetched()
        return rows[0] if rows else None

    def one(self) -> R_co:
        """The only row; NoResultError or MultipleResultsError otherwise."""
        rows = self._fetched()
        if not rows:
            raise NoResultError(f"one() found no row for: {self._sql}")
        if len(rows) > 1:
            raise MultipleResultsError(f"one() found {len(rows)} rows for: {self._sql}")
        return rows[0]  # type: ignore[no-any-return]

    def one_or_none(self) -> R_co | None:
        """The only row or None; MultipleResultsError when there are several."""
        rows = self._fetched()
        if len(rows) > 1:
            raise MultipleResultsError(f"one_or_none() found {len(rows)} rows for: {self._sql}")
        return rows[0] if rows else None

    def scalar(self) -> Any:
        """The first column of the only row; NoResultError or MultipleResultsError otherwise."""
        row = self.one()
        return _first_column(row)

    def scalars(self) -> list[Any]:
        """The first column of every row."""
        return [_first_column(r) for r in self._fetched()]

    def rows_affected(self) -> int:
        """How many rows the statement inserted, updated, deleted or matched."""
        if self._rowcount < 0 and self._rows is not None:
            return len(self._rows)
        return max(self._rowcount, 0)

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Iterate over the rows."""
        return iter(self._fetched())

    def __len__(self) -> int:
        return len(self._fetched())


def _first_column(row: Any) -> Any:
    if isinstance(row, tuple):
        return row[0]
    meta = type(row).__tempest_meta__
    return getattr(row, meta.columns[0].attr)


def row_builder(result: ModelMeta | tuple[ColumnMeta, ...] | None,
                adapters: dict[str, Adapter]) -> Callable[[Sequence[Any]], list[Any]] | None:
    """The function turning fetched tuples into model instances or Rows, resolved once."""
    if result is None:
        return None
    cols = result.columns if isinstance(result, ModelMeta) else result
    converters = tuple(adapters.get(c.kind) for c in cols)
    convert: list[tuple[int, Adapter]] = [(i, f) for i, f in enumerate(converters) if f]
    nullable = {i for i, c in enumerate(cols) if c.nullable}

    def values(raw: Sequence[Any]) -> Sequence[Any]:
        if not convert:
            return raw
        out = list(raw)
        for i, f in convert:
            v = out[i]
            if v is not None or i not in nullable:
                out[i] = f(v) if v is not None else None
        return out

    if isinstance(result, ModelMeta):
        model = result.model
        attrs = tuple(c.attr for c in cols)
        new = object.__new__

        def build_models(rows: Sequence[Any]) -> list[Any]:
            out = []
            for raw in rows:
                obj = new(model)
                obj.__dict__.update(zip(attrs, values(raw), strict=True))
                out.append(obj)
            return out

        return build_models
    row_cls = row_class(tuple(c.attr for c in cols))
    make = tuple.__new__

    def build_rows(rows: Sequence[Any]) -> list[Any]:
        return [make(row_cls, values(raw)) for raw in rows]

    return build_rows
