"""Rows of a partial select or a returning(): a tuple with attribute and item access by name.

A row class is made per set of field names, one property per field. A property whose name is
a special method (`__getitem__`, `__iter__`, `__slots__`...) would take that method's place:
reading any field through `__getitem__` then recursed in C until the interpreter crashed. So
the row keeps its own state under dunder names, and a dunder is never a field name; the
names a user chooses (labels, aliases) are plain identifiers (`plain_name_problem`).
"""

from __future__ import annotations

import keyword
import operator
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Generic, SupportsIndex, overload

from typing_extensions import TypeVar

from .errors import ValidationError

__all__ = ["PLAIN_NAME", "Row", "plain_name_problem", "row_class"]

#: The fetched columns as a TypedDict, filled in by the mypy plugin (`Row[TypedDict({...})]`)
#: so that `row.id` has the column's type; without the plugin it stays Any.
F_co = TypeVar("F_co", covariant=True, default=Any)


class Row(tuple[Any, ...], Generic[F_co]):
    """One fetched row: `row.id`, `row["id"]` and `row[0]` all read the same column."""

    __slots__ = ()

    #: the field names in order, and each one's position: dunder names, which no field has
    __row_fields__: ClassVar[tuple[str, ...]] = ()
    __row_index__: ClassVar[dict[str, int]] = {}

    @overload
    def __getitem__(self, key: str) -> Any: ...

    @overload
    def __getitem__(self, key: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, key: slice) -> tuple[Any, ...]: ...

    def __getitem__(self, key: str | SupportsIndex | slice) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self.__row_index__[key])
            except KeyError:
                raise KeyError(
                    f"this row has no column {key!r}; it fetched {', '.join(self.__row_fields__)}"
                ) from None
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"this row has no column {name!r}; it fetched {', '.join(self.__row_fields__)} "
            "(add the column to select(...) or returning(...))"
        )

    if TYPE_CHECKING:
        # A column may be named like a method of the row (a tuple's count() and index(), its
        # own keys() and asdict()): the row class's property for it then holds the column's
        # value. Declared as properties, these reach the mypy plugin's attribute hook, which
        # gives a fetched column of that name its type (a method is never passed to it).
        @property
        def count(self) -> Callable[[Any], int]:
            """The number of values equal to the argument (tuple.count)."""

        @property
        def index(self) -> Callable[..., int]:
            """The position of the first value equal to the argument (tuple.index)."""

        @property
        def keys(self) -> Callable[[], tuple[str, ...]]:
            """The fetched column names, in order."""

        @property
        def asdict(self) -> Callable[[], dict[str, Any]]:
            """The row as a dict of column name to value."""
    else:
        def keys(self) -> tuple[str, ...]:
            """The fetched column names, in order."""
            return self.__row_fields__

        def asdict(self) -> dict[str, Any]:
            """The row as a dict of column name to value."""
            return dict(zip(self.__row_fields__, self, strict=True))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(self.__row_fields__, self, strict=False))
        return f"Row({inner})"


def plain_name_problem(name: object) -> str | None:
    """What keeps `name` from being a name the user gives a row field (an aggregate label, a
    join alias), or None: it must be a Python identifier, not a keyword, without a leading
    underscore (`row.name` reads it, and it never hides the row's own attributes)."""
    if not isinstance(name, str) or not name.isidentifier():
        return "is not a Python identifier"
    if keyword.iskeyword(name):
        return f"is a Python keyword (row.{name} cannot be written)"
    if name.startswith("_"):
        return "starts with '_', as the row's own attributes do"
    if len(name.encode()) > _MAX_NAME_BYTES:
        # a label, alias or named select's name is an SQL name too: PostgreSQL cuts it, and
        # two alike up to there were one ("specified more than once", "is ambiguous");
        # MySQL refuses a named select's name of more than 64 characters
        return (f"is longer than the {_MAX_NAME_BYTES} bytes of a name PostgreSQL keeps "
                "(it cuts the rest, so two names alike up to there would be one): write a "
                "shorter one")
    return None


#: model.MAX_IDENTIFIER_BYTES (this module sits below the models)
_MAX_NAME_BYTES = 63


#: how a message asks for a plain name
PLAIN_NAME = "a Python identifier, not a keyword, without a leading '_'"


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


@lru_cache(maxsize=1024)
def row_class(fields: tuple[str, ...]) -> type[Row]:
    """The Row subclass for one set of fetched columns, with a fast property per column."""
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__row_fields__": fields,
        "__row_index__": {name: i for i, name in enumerate(fields)},
    }
    for i, name in enumerate(fields):
        if not isinstance(name, str) or _is_dunder(name):
            raise ValidationError(
                f"a row cannot have a field named {name!r}: a property of that name would "
                "replace the row's own special method; rename the column's attribute (or "
                "fetch the whole model)"
            )
        namespace[name] = property(operator.itemgetter(i), doc=f"column {name}")
    return type("Row", (Row,), namespace)
