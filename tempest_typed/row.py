"""Rows of a partial select or a returning(): a tuple with attribute and item access by name."""

from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any, ClassVar, Generic, SupportsIndex, overload

from typing_extensions import TypeVar

__all__ = ["Row", "row_class"]

#: The fetched columns as a TypedDict, filled in by the mypy plugin (`Row[TypedDict({...})]`)
#: so that `row.id` has the column's type; without the plugin it stays Any.
F_co = TypeVar("F_co", covariant=True, default=Any)


class Row(tuple[Any, ...], Generic[F_co]):
    """One fetched row: `row.id`, `row["id"]` and `row[0]` all read the same column."""

    __slots__ = ()

    _fields: ClassVar[tuple[str, ...]] = ()
    _index: ClassVar[dict[str, int]] = {}

    @overload
    def __getitem__(self, key: str) -> Any: ...

    @overload
    def __getitem__(self, key: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, key: slice) -> tuple[Any, ...]: ...

    def __getitem__(self, key: str | SupportsIndex | slice) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise KeyError(
                    f"this row has no column {key!r}; it fetched {', '.join(self._fields)}"
                ) from None
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"this row has no column {name!r}; it fetched {', '.join(self._fields)} "
            "(add the column to select(...) or returning(...))"
        )

    def keys(self) -> tuple[str, ...]:
        """The fetched column names, in order."""
        return self._fields

    def asdict(self) -> dict[str, Any]:
        """The row as a dict of column name to value."""
        return dict(zip(self._fields, self, strict=True))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=False))
        return f"Row({inner})"


@lru_cache(maxsize=1024)
def row_class(fields: tuple[str, ...]) -> type[Row]:
    """The Row subclass for one set of fetched columns, with a fast property per column."""
    namespace: dict[str, Any] = {
        "__slots__": (),
        "_fields": fields,
        "_index": {name: i for i, name in enumerate(fields)},
    }
    for i, name in enumerate(fields):
        namespace[name] = property(operator.itemgetter(i), doc=f"column {name}")
    return type("Row", (Row,), namespace)
