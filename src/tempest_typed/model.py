"""Models: annotated dataclasses, and the column metadata every later layer reads.

This layer knows Python types and SQL names; it knows nothing of statements, dialects or
databases. `meta_of(Model)` is the one door through which the other layers see a model.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime as _dt
import math
import re
import sys
import types
import typing
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeVar, overload

from typing_extensions import TypeIs, dataclass_transform

from ._wording import NOT_A_DATE as NOT_A_DATE
from ._wording import NOT_A_NUMBER as NOT_A_NUMBER
from .errors import ValidationError

if TYPE_CHECKING:
    from .expressions import Now

__all__ = [
    "UNSET",
    "ColumnMeta",
    "DerivedColumn",
    "ForeignKey",
    "Index",
    "Model",
    "ModelMeta",
    "Naming",
    "column",
    "meta_of",
]

T = TypeVar("T")

Naming = Literal["preserve", "snake_case", "camelCase"] | Callable[[str], str]

#: The column kinds a model can declare, each the name of one Python type family.
KINDS = ("str", "int", "float", "bool", "decimal", "bytes", "datetime", "date", "uuid",
         "literal", "json")


class _Unset:
    """The value of a column left for the database to fill (server default, identity)."""

    _instance: ClassVar[_Unset | None] = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()


@dataclasses.dataclass(frozen=True, slots=True)
class _ColumnOptions:
    primary_key: bool = False
    server_default: object = None
    unique: bool = False
    name: str | None = None
    max_length: int | None = None
    references: str | None = None
    precision: int | None = None
    scale: int | None = None


#: The largest Decimal size every dialect stores: MySQL's DECIMAL holds at most 65 digits,
#: 30 of them after the point (PostgreSQL's numeric holds far more; SQLite keeps text).
MAX_PRECISION: Final = 65
MAX_SCALE: Final = 30

#: The longest table, column or index name every dialect keeps whole: PostgreSQL cuts names
#: at 63 bytes (NAMEDATALEN - 1), so two names that differ after byte 63 would be one object;
#: MySQL's limit of 64 characters is never the tighter one.
MAX_IDENTIFIER_BYTES: Final = 63


def check_identifier(name: object, what: str) -> str:
    """Raise ValidationError unless `name` is an SQL name every dialect keeps as written."""
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{what}: an SQL name is a non-empty string, got {_short(name)}")
    if "\x00" in name:
        raise ValidationError(
            f"{what}: the SQL name {_short(name)} holds a NUL character, which no database "
            "keeps in a name (PostgreSQL would cut the statement there)"
        )
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(f"{what}: the SQL name {_short(name)} is not valid Unicode") from None
    if size > MAX_IDENTIFIER_BYTES:
        raise ValidationError(
            f"{what}: the SQL name {name!r} is {size} bytes of UTF-8, longer than the "
            f"{MAX_IDENTIFIER_BYTES} bytes PostgreSQL keeps (it would cut the rest, and two "
            "names alike up to there would name one object); shorten it"
        )
    return name


@overload
def column(
    *,
    default: T,
    primary_key: bool = ...,
    server_default: object = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> T: ...


# A JSON column's `default_factory=dict` / `list`: the bare class would solve T as
# `dict[Unknown, Unknown]`, which pyright --strict reports in the user's model ("partially
# unknown"); typed `Any` inside, the declared annotation is the column's type.
@overload
def column(
    *,
    default_factory: type[dict[Any, Any]],
    primary_key: bool = ...,
    server_default: object = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> dict[Any, Any]: ...


@overload
def column(
    *,
    default_factory: type[list[Any]],
    primary_key: bool = ...,
    server_default: object = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> list[Any]: ...


@overload
def column(
    *,
    default_factory: Callable[[], T],
    primary_key: bool = ...,
    server_default: object = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> T: ...


# sql.now() is a datetime column's server default only: the current timestamp, typed so that
# a checker refuses it for a column of another type (a date column, datetime being a date's
# subtype, is the run time's to refuse)
@overload
def column(
    *,
    server_default: Now,
    primary_key: bool = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> _dt.datetime: ...


@overload
def column(
    *,
    primary_key: bool = ...,
    server_default: object = ...,
    unique: bool = ...,
    name: str | None = ...,
    max_length: int | None = ...,
    references: str | None = ...,
    precision: int | None = ...,
    scale: int | None = ...,
) -> Any: ...


def column(
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
    primary_key: bool = False,
    server_default: object = None,
    unique: bool = False,
    name: str | None = None,
    max_length: int | None = None,
    references: str | None = None,
    precision: int | None = None,
    scale: int | None = None,
) -> Any:
    """Declare what an annotation cannot say about a column: keys, defaults, SQL name, size."""
    if default is not dataclasses.MISSING and default_factory is not dataclasses.MISSING:
        raise ValidationError("column() takes default or default_factory, not both")
    if max_length is not None and (not isinstance(max_length, int) or max_length <= 0):
        raise ValidationError(f"column(max_length={max_length!r}) must be a positive int")
    _check_size(precision, scale)
    options = _ColumnOptions(primary_key, server_default, unique, name, max_length, references,
                             precision, scale if scale is not None or precision is None else 0)
    metadata = {"tempest": options}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    if default is dataclasses.MISSING and (server_default is not None or primary_key):
        # The database fills it (a server default, an identity key): the constructor may leave
        # it out. A key the database cannot fill stays required on insert (see required).
        default = UNSET
    return dataclasses.field(default=default, metadata=metadata)


def _check_size(precision: object, scale: object) -> None:
    """Raise ValidationError unless (precision, scale) is a Decimal size every dialect has."""
    def whole(value: object) -> TypeIs[int]:
        return isinstance(value, int) and not isinstance(value, bool)

    if precision is None:
        if scale is not None:
            raise ValidationError(
                f"column(scale={scale!r}) needs precision= too: the total number of digits, "
                "e.g. column(precision=12, scale=2)"
            )
        return
    if not whole(precision) or not 1 <= precision <= MAX_PRECISION:
        raise ValidationError(
            f"column(precision={precision!r}) must be an int from 1 to {MAX_PRECISION} (the "
            "most digits MySQL's DECIMAL holds)"
        )
    if scale is None:
        return
    if not whole(scale) or not 0 <= scale <= MAX_SCALE:
        raise ValidationError(
            f"column(scale={scale!r}) must be an int from 0 to {MAX_SCALE} (the most digits "
            "after the point MySQL's DECIMAL holds)"
        )
    if scale > precision:
        raise ValidationError(
            f"column(precision={precision}, scale={scale}): the scale (digits after the point) "
            "cannot exceed the precision (all digits)"
        )


class Index:
    """An index on a model's columns, unique or not, optionally partial (`where`)."""

    __slots__ = ("columns", "name", "unique", "where")

    def __init__(
        self,
        name: str,
        columns: list[str] | tuple[str, ...],
        *,
        unique: bool = False,
        where: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(columns, str):
            raise ValidationError(
                f"Index {name!r}: columns must be a list of column names, not the string "
                f"{columns!r}; write [{columns!r}]"
            )
        if not columns:
            raise ValidationError(f"Index {name!r} needs at least one column")
        check_identifier(name, "Index()")
        self.name = name
        self.columns = tuple(columns)
        self.unique = unique
        self.where = where

    def __repr__(self) -> str:
        return f"Index({self.name!r}, {list(self.columns)!r}, unique={self.unique})"


class ForeignKey:
    """A foreign key over several columns: the model's `columns` (attribute names) hold a key
    of `table`, its `table_columns` (SQL names) in the same order."""

    __slots__ = ("columns", "table", "table_columns")

    def __init__(self, columns: list[str] | tuple[str, ...], table: str,
                 table_columns: list[str] | tuple[str, ...]) -> None:
        where = f"ForeignKey({columns!r}, {table!r})"
        for name, given in (("columns", columns), ("table_columns", table_columns)):
            if (not isinstance(given, list | tuple) or not given
                    or not all(isinstance(c, str) for c in given)):
                hint = f"; write [{given!r}]" if isinstance(given, str) else ""
                raise ValidationError(
                    f"{where}: {name} must be a non-empty list of column names, got "
                    f"{given!r}{hint}")
        if len(columns) != len(table_columns):
            raise ValidationError(
                f"{where}: {len(columns)} column(s) cannot hold a key of {len(table_columns)} "
                f"column(s) ({list(table_columns)!r}); name one column of this model per "
                "column of the key, in the key's order")
        self.columns = tuple(columns)
        self.table = check_identifier(table, where)
        self.table_columns = tuple(check_identifier(c, where) for c in table_columns)

    def __repr__(self) -> str:
        return (f"ForeignKey({list(self.columns)!r}, {self.table!r}, "
                f"{list(self.table_columns)!r})")


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class ColumnMeta:
    """What every layer knows about one column."""

    model_name: str
    attr: str
    name: str
    kind: str
    nullable: bool
    primary_key: bool
    has_default: bool
    server_default: object
    autoincrement: bool
    unique: bool
    max_length: int | None
    literal_values: tuple[str, ...]
    references: str | None
    position: int
    indexed: bool
    #: a Decimal column's size, column(precision=, scale=); None: the dialect's widest
    precision: int | None = None
    scale: int | None = None
    #: True when a value is certainly valid here, decided by its exact type in a call or two;
    #: False sends the value to check_value(), which gives the verdict and the message.
    accepts: Callable[[object], bool] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "accepts", _acceptor(self))

    @property
    def required(self) -> bool:
        """True when an insert must give this column a value."""
        return not (self.nullable or self.has_default or self.server_default is not None
                    or self.autoincrement)

    def type_name(self) -> str:
        """The column's Python type, as a user would write it."""
        base = {
            "str": "str", "int": "int", "float": "float", "bool": "bool",
            "decimal": "Decimal", "bytes": "bytes", "datetime": "datetime", "date": "date",
            "uuid": "UUID", "json": "dict | list",
        }.get(self.kind)
        if base is None:
            base = "Literal[" + ", ".join(repr(v) for v in self.literal_values) + "]"
        return f"{base} | None" if self.nullable else base

    def check_value(self, value: object, where: str) -> None:
        """Raise ValidationError unless `value` is a scalar this column can hold."""
        if value is None:
            if not self.nullable:
                raise ValidationError(
                    f"{self.model_name}.{self.attr} is not nullable: None is not a value of "
                    f"{self.type_name()} in {where}"
                )
            return
        check = _CHECKS[self.kind]
        if check(self, value):
            if self.precision is not None and (where in _WRITES or where.endswith(" set")):
                _check_decimal_size(self, value, where)  # type: ignore[arg-type]  # check() accepted it: a Decimal or an int
        else:
            hint = ""
            value_type = type(value).__name__
            refused = _narrower_refused(self.kind, value)
            if refused is not None:
                # the same words as the mypy plugin's, which sees these as the column's type
                raise ValidationError(
                    f"{self.model_name}.{self.attr} expects {self.type_name()}, got "
                    f"{value_type} {_short(value)} in {where}: {refused}"
                )
            from .statements.aggregate import AggregateFunction  # builds the message only

            if isinstance(value, AggregateFunction):
                raise ValidationError(
                    f"{value!r} for {self.model_name}.{self.attr} in {where}: an aggregate is "
                    "computed per group, not where a value goes; give it a label in "
                    "aggregate() and compare the label in having(), or use the whole table's "
                    f"value, sql.scalar(select(...).aggregate([], {{'m': {value!r}}})"
                    ".as_subquery('m'))")
            if isinstance(value, dict | list) and self.kind != "json":
                hint = (" An object here is never bound as a parameter: for an SQL expression "
                        "use sql.raw(\"...\") or sql.expr(\"...\", value).")
            elif self.kind == "datetime" and isinstance(value, _dt.datetime):
                hint = " Pass an aware datetime, e.g. datetime.now(UTC)."
                value_type = "naive datetime"
            raise ValidationError(
                f"{self.model_name}.{self.attr} expects {self.type_name()}, got "
                f"{value_type} {_short(value)} in {where}.{hint}"
            )


def _narrower_refused(kind: str, value: object) -> str | None:
    # A bool is an int and a datetime a date to type checkers, but neither would read back as
    # what was written; the mypy plugin reports these with the same words (see _wording.py).
    if isinstance(value, bool) and kind in ("int", "float", "decimal"):
        return NOT_A_NUMBER
    if isinstance(value, _dt.datetime) and kind == "date":
        return NOT_A_DATE
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: BIGINT, the integer column of every dialect (SQLite's INTEGER is 64-bit too)
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1


def check_text(col_name: str, v: str,
               nul_fix: str = "strings hold no NUL on any dialect (use a bytes column)") -> None:
    """Raise ValidationError for text no database can store as given (`nul_fix` says what to
    do instead of a NUL)."""
    if "\x00" in v:
        raise ValidationError(
            f"{col_name}: the text {_short(v)} holds a NUL character, which PostgreSQL text "
            f"cannot store; {nul_fix}"
        )
    if not v.isascii():
        try:
            v.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValidationError(
                f"{col_name}: the text {_short(v)} is not valid Unicode ({exc.reason}); "
                "a database stores UTF-8 text"
            ) from None


def _check_str(col: ColumnMeta, v: object) -> bool:
    if type(v) is not str and not isinstance(v, str):
        return False
    if col.max_length is not None and len(v) > col.max_length:
        raise ValidationError(
            f"{col.model_name}.{col.attr} holds at most {col.max_length} characters, "
            f"got {len(v)}; raise column(max_length=...) or shorten the value"
        )
    check_text(f"{col.model_name}.{col.attr}", v)
    return True


def _check_bytes(col: ColumnMeta, v: object) -> bool:
    if not isinstance(v, bytes | bytearray | memoryview):
        return False
    size = v.nbytes if isinstance(v, memoryview) else len(v)
    if col.max_length is not None and size > col.max_length:
        raise ValidationError(
            f"{col.model_name}.{col.attr} holds at most {col.max_length} bytes, "
            f"got {size}; raise column(max_length=...) or shorten the value"
        )
    return True


def _check_int(col: ColumnMeta, v: object) -> bool:
    if not isinstance(v, int) or isinstance(v, bool):
        return False
    if not INT_MIN <= v <= INT_MAX:
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {v} is outside the 64-bit range of an int column "
            f"[{INT_MIN}, {INT_MAX}]; use a Decimal column for larger numbers"
        )
    return True


def _check_float(col: ColumnMeta, v: object) -> bool:
    if isinstance(v, int) and not isinstance(v, bool):
        if not INT_MIN <= v <= INT_MAX:  # the drivers bind an int as an integer
            raise ValidationError(
                f"{col.model_name}.{col.attr}: the int {v} is outside the 64-bit integers "
                f"every database binds [{INT_MIN}, {INT_MAX}]; pass it as a float "
                f"(float({v})) for this float column"
            )
        return True
    if not isinstance(v, float):
        return False
    if not math.isfinite(v):
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {v} is not a finite number; MySQL rejects NaN and "
            "infinities and SQLite stores NaN as NULL, so a float column holds finite values only"
        )
    return True


def _check_decimal(col: ColumnMeta, v: object) -> bool:
    if isinstance(v, int) and not isinstance(v, bool):
        return True
    if not isinstance(v, Decimal):
        return False
    if not v.is_finite():
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {v} is not a finite number; MySQL's DECIMAL holds "
            "no NaN or infinity, so a Decimal column holds finite values only"
        )
    return True


def _json_problem(value: object, depth: int = 0) -> str | None:
    """What makes `value` not a portable JSON document, or None."""
    if depth > 100:
        return "it nests deeper than 100 levels"
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str) and ("\x00" in value or not _utf8(value)):
            return f"the string {_short(value)} holds a NUL or is not valid Unicode"
        return None
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a JSON number"
    if isinstance(value, list | tuple):
        for item in value:
            problem = _json_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"the key {_short(key)} is not a string"
            problem = _json_problem(key, depth + 1) or _json_problem(item, depth + 1)
            if problem:
                return problem
        return None
    return f"{type(value).__name__} {_short(value)} is not a JSON value"


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: The labels of check_value() calls that store a value, where a Decimal column's size is
#: checked (a comparison with a value the column cannot hold is still a valid comparison).
_WRITES = frozenset({"values()", "set()"})


def _check_decimal_size(col: ColumnMeta, v: Decimal | int, where: str) -> None:
    """Refuse a value a column(precision=, scale=) cannot hold, on every dialect alike:
    PostgreSQL and MySQL would round extra places away (MySQL with only a warning) and SQLite
    would keep them, so a value with more places than the scale is never rounded silently."""
    assert col.precision is not None and col.scale is not None
    _, digits, exp = Decimal(v).as_tuple()
    assert isinstance(exp, int)  # finite: checked before
    while exp < 0 and len(digits) > 1 and digits[-1] == 0:  # 1.500 has 1 place, not 3
        digits, exp = digits[:-1], exp + 1
    places = -exp if exp < 0 and any(digits) else 0  # zero (0.000) has no places to lose
    size = f"column(precision={col.precision}, scale={col.scale})"
    if places > col.scale:
        step = Decimal(1).scaleb(-col.scale)
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {_short(v)} has {places} digits after the point, and "
            f"the column keeps {col.scale} ({size}) in {where}; round it first, e.g. "
            f"value.quantize(Decimal(\"{step}\"))"
        )
    whole = len(digits) + exp if any(digits) else 0
    if whole > col.precision - col.scale:
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {_short(v)} has {whole} digits before the point, and "
            f"the column holds {col.precision - col.scale} ({size}) in {where}"
        )


def _check_json(col: ColumnMeta, v: object) -> bool:
    if not isinstance(v, dict | list):
        return False
    problem = _json_problem(v)
    if problem:
        raise ValidationError(
            f"{col.model_name}.{col.attr}: not a JSON document: {problem} (JSON holds dicts "
            "with string keys, lists, strings, finite numbers, booleans and None)"
        )
    return True


def _check_datetime(col: ColumnMeta, v: object) -> bool:
    if not isinstance(v, _dt.datetime) or v.utcoffset() is None:
        return False
    try:
        v.astimezone(_dt.UTC)
    except OverflowError:
        raise ValidationError(
            f"{col.model_name}.{col.attr}: {v.isoformat()} is outside the datetimes that "
            "exist in UTC (years 1 to 9999), and datetimes are stored in UTC"
        ) from None
    return True


def _acceptor(col: ColumnMeta) -> Callable[[object], bool]:
    """The fast predicate of ColumnMeta.accepts: exact types whose values need no more thought
    (measured against check_value() alone: BENCHMARKS.md, "Fast paths")."""
    kind, limit = col.kind, col.max_length
    if kind == "str":
        if limit is None:
            return lambda v: type(v) is str and v.isascii() and "\x00" not in v
        return lambda v: (type(v) is str and len(v) <= limit and v.isascii()
                          and "\x00" not in v)
    if kind == "literal":
        allowed = frozenset(col.literal_values)
        return lambda v: type(v) is str and v in allowed
    if kind == "int":
        return lambda v: type(v) is int and INT_MIN <= v <= INT_MAX
    if kind == "float":
        return lambda v: type(v) is float and math.isfinite(v)
    if kind == "datetime":
        utc = _dt.UTC
        return lambda v: type(v) is _dt.datetime and v.tzinfo is utc
    exact = {"bool": bool, "uuid": uuid.UUID, "date": _dt.date}.get(kind)
    if exact is not None:
        return lambda v: type(v) is exact
    return lambda v: False


_CHECKS: dict[str, Callable[[ColumnMeta, object], bool]] = {
    "str": _check_str,
    "int": _check_int,
    "float": _check_float,
    "decimal": _check_decimal,
    "bool": lambda c, v: isinstance(v, bool),
    "bytes": _check_bytes,
    "datetime": _check_datetime,
    "date": lambda c, v: isinstance(v, _dt.date) and not isinstance(v, _dt.datetime),
    "uuid": lambda c, v: isinstance(v, uuid.UUID),
    "literal": lambda c, v: isinstance(v, str) and v in c.literal_values,
    "json": _check_json,
}


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class ModelMeta:
    """A model's table: its columns in declaration order and its indexes."""

    model: type[Model]
    name: str
    table: str
    columns: tuple[ColumnMeta, ...]
    by_attr: Mapping[str, ColumnMeta]
    primary_key: tuple[ColumnMeta, ...]
    indexes: tuple[Index, ...]
    defaults: Mapping[str, Callable[[], object]]
    #: the keys of `__foreign_keys__` (a column's own `references=` stays on the column)
    foreign_keys: tuple[ForeignKey, ...] = ()

    def column(self, attr: object, where: str) -> ColumnMeta:
        """The column named `attr`, or a ValidationError that names the near misses."""
        col = self.by_attr.get(attr) if isinstance(attr, str) else None
        if col is None:
            raise ValidationError(unknown_column_message(self, attr, where))
        return col


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class DerivedColumn(ColumnMeta):
    """A column of a named select (sql.cte): computed by the database, so read back as its
    kind whatever type the driver returns (a SUM is a numeric on PostgreSQL)."""


def unknown_column_message(meta: ModelMeta, attr: object, where: str) -> str:
    """The message for a column name the model does not have."""
    if not isinstance(attr, str):
        return (f"{meta.name}: a column name must be a string, got "
                f"{type(attr).__name__} {_short(attr)} in {where}")
    import difflib

    near = difflib.get_close_matches(attr, list(meta.by_attr), n=1, cutoff=0.6)
    by_sql = [c.attr for c in meta.columns if c.name == attr]
    hint = ""
    if by_sql:
        hint = f"; {attr!r} is the SQL name, write the attribute {by_sql[0]!r}"
    elif near:
        hint = f"; did you mean {near[0]!r}?"
    columns = ", ".join(meta.by_attr)
    return f"{meta.name} has no column {attr!r} in {where}{hint} (columns: {columns})"


_SNAKE_1 = re.compile(r"(.)([A-Z][a-z]+)")
_SNAKE_2 = re.compile(r"([a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """`nextAttemptAt` and `NextAttemptAt` become `next_attempt_at`."""
    return _SNAKE_2.sub(r"\1_\2", _SNAKE_1.sub(r"\1_\2", name)).lower()


def camel_case(name: str) -> str:
    """`next_attempt_at` becomes `nextAttemptAt`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_NAMINGS: dict[str, Callable[[str], str]] = {
    "preserve": lambda name: name,
    "snake_case": snake_case,
    "camelCase": camel_case,
}

_SCALARS: dict[object, str] = {
    str: "str", int: "int", float: "float", bool: "bool", Decimal: "decimal",
    bytes: "bytes", _dt.datetime: "datetime", _dt.date: "date", uuid.UUID: "uuid",
    dict: "json", list: "json",
}


def _kind_of(model_name: str, attr: str, annotation: object) -> tuple[str, bool, tuple[str, ...]]:
    """Map an annotation to (kind, nullable, literal values)."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise ValidationError(
                f"{model_name}.{attr}: a column has one type (optionally `| None`), "
                f"got {annotation!r}"
            )
        annotation = args[0]
        origin = typing.get_origin(annotation)
    if origin is Literal:
        values = typing.get_args(annotation)
        if not values or not all(isinstance(v, str) for v in values):
            raise ValidationError(
                f"{model_name}.{attr}: a Literal column is an enum of strings, got {annotation!r}"
            )
        return "literal", nullable, tuple(values)
    if origin in (dict, list):
        return "json", nullable, ()
    kind = _SCALARS.get(annotation)
    if kind is None:
        supported = "str, int, float, bool, Decimal, bytes, datetime, date, UUID, Literal[...], dict, list"
        raise ValidationError(
            f"{model_name}.{attr}: unsupported column type {annotation!r}; use one of {supported}"
            " (or mark the attribute ClassVar to keep it out of the table)"
        )
    return kind, nullable, ()


def _build_meta(model: type[Model]) -> ModelMeta:
    spec = model.__dict__["__tempest_spec__"]
    table: str = check_identifier(
        spec["table"] if spec["table"] is not None else snake_case(model.__name__),
        f"{model.__name__}: table=")
    naming = spec["naming"]
    to_sql: Callable[[str], str]
    if callable(naming):
        to_sql = naming
    elif naming in _NAMINGS:
        to_sql = _NAMINGS[naming]
    else:
        raise ValidationError(
            f"{model.__name__}: naming={naming!r} is not one of 'preserve', 'snake_case', "
            "'camelCase' or a callable"
        )
    localns = spec["localns"]
    try:
        hints = typing.get_type_hints(model, localns=localns)
    except NameError as exc:
        raise ValidationError(f"{model.__name__}: cannot resolve an annotation: {exc}") from exc
    indexes: tuple[Index, ...] = tuple(getattr(model, "__indexes__", ()) or ())
    indexed: set[str] = set()
    for index in indexes:
        if not isinstance(index, Index):
            raise ValidationError(f"{model.__name__}.__indexes__ holds {index!r}, not an Index")
        indexed.update(str(c) for c in index.columns)
    _check_names(model.__name__, table, indexes)
    columns: list[ColumnMeta] = []
    defaults: dict[str, Callable[[], object]] = {}
    #: the defaults that are one value, checked as a value of their column when defined
    static_defaults: dict[str, object] = {}
    seen_sql: dict[str, tuple[str, str]] = {}  # folded SQL name -> (attribute, SQL name)
    fields = dataclasses.fields(model)  # type: ignore[arg-type]  # __init_subclass__ made it a dataclass
    # Several primary-key columns are one composite key, which the database cannot fill:
    # no column of it is an identity.
    single_key = sum(1 for f in fields if _options_of(f).primary_key) == 1
    for field in fields:
        if field.name.startswith("__") and field.name.endswith("__"):
            # A row keeps its own state under dunder names (row.py): a column there would
            # replace it. Python's own protocols live there too.
            raise ValidationError(
                f"{model.__name__}.{field.name}: a column's attribute cannot be a dunder name; "
                f"rename the attribute and keep the SQL name with column(name={field.name!r})"
            )
        annotation = hints[field.name]
        kind, nullable, literals = _kind_of(model.__name__, field.name, annotation)
        options = _options_of(field)
        sql_name = check_identifier(
            options.name if options.name is not None else to_sql(field.name),
            f"{model.__name__}.{field.name}")
        # SQLite and MySQL compare column names without case: `Name` and `name` are one.
        same = seen_sql.get(sql_name.casefold())
        if same is not None:
            other_attr, other_sql = same
            how = ("is already used by" if other_sql == sql_name else
                   f"differs only in case from {other_sql!r}, the SQL name of")
            raise ValidationError(
                f"{model.__name__}.{field.name}: SQL name {sql_name!r} {how} {other_attr!r}"
                + ("" if other_sql == sql_name else
                   " (SQLite and MySQL compare column names without case: one column to them)")
                + "; give one of them column(name=...)"
            )
        seen_sql[sql_name.casefold()] = (field.name, sql_name)
        has_default = (field.default is not dataclasses.MISSING and field.default is not UNSET) or (
            field.default_factory is not dataclasses.MISSING
        )
        if field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = field.default_factory
        elif field.default is not dataclasses.MISSING and field.default is not UNSET:
            defaults[field.name] = (lambda value: lambda: value)(field.default)
            static_defaults[field.name] = field.default
        autoincrement = (single_key and options.primary_key and kind == "int"
                         and not has_default and options.server_default is None)
        for allowed in literals:
            check_text(f"{model.__name__}.{field.name}: Literal", allowed)
        if options.max_length is not None and kind not in ("str", "literal", "bytes"):
            raise ValidationError(
                f"{model.__name__}.{field.name}: max_length applies to str and bytes columns"
            )
        if options.precision is not None and kind != "decimal":
            raise ValidationError(
                f"{model.__name__}.{field.name}: precision= and scale= apply to Decimal columns "
                f"only; annotate it `Decimal` or drop them"
            )
        columns.append(ColumnMeta(
            model_name=model.__name__, attr=field.name, name=sql_name, kind=kind,
            nullable=nullable, primary_key=options.primary_key, has_default=has_default,
            server_default=options.server_default, autoincrement=autoincrement,
            unique=options.unique, max_length=options.max_length, literal_values=literals,
            references=options.references, position=len(columns),
            indexed=options.primary_key or options.unique or field.name in indexed,
            precision=options.precision, scale=options.scale,
        ))
    if not columns:
        raise ValidationError(f"{model.__name__} declares no column")
    by_attr = {c.attr: c for c in columns}
    meta = ModelMeta(
        model=model, name=model.__name__, table=table, columns=tuple(columns),
        by_attr=by_attr, primary_key=tuple(c for c in columns if c.primary_key),
        indexes=indexes, defaults=defaults, foreign_keys=_foreign_keys_of(model),
    )
    from .statements.where import condition_node  # the where language sits above models

    for index in indexes:
        for attr in index.columns:
            meta.column(attr, f"Index {index.name!r}")
        if index.where is not None:
            literals_of: list[object] = []
            condition_node(meta, index.where, literals_of, f"Index {index.name!r} where=")
            for literal in literals_of:
                _check_ddl_literal(literal, f"{meta.name} Index {index.name!r} where=",
                                   "CREATE INDEX ... WHERE takes no bound parameter, so an "
                                   "index predicate compares with")
    from .expressions import Expression

    for col in columns:
        if col.attr in static_defaults:
            default = static_defaults[col.attr]
            if not isinstance(default, Expression):
                # else every insert that takes it fails (a naive datetime, a value longer
                # than max_length, more places than the scale, a value outside the Literal)
                col.check_value(default, "default=")
                if col.precision is not None and isinstance(default, Decimal | int):
                    _check_decimal_size(col, default, "default=")
        if col.server_default is not None:
            _check_server_default(meta, col)
        if col.references is not None:
            _check_reference(meta, col)
    for key in meta.foreign_keys:
        _check_foreign_key(meta, key)
    return meta


def _foreign_keys_of(model: type) -> tuple[ForeignKey, ...]:
    keys = tuple(getattr(model, "__foreign_keys__", ()) or ())
    for key in keys:
        if not isinstance(key, ForeignKey):
            raise ValidationError(
                f"{model.__name__}.__foreign_keys__ holds {key!r}, not a ForeignKey")
    return keys


def _options_of(field: dataclasses.Field[Any]) -> _ColumnOptions:
    options: _ColumnOptions = field.metadata.get("tempest", _NO_OPTIONS)
    return options


_NO_OPTIONS: Final = _ColumnOptions()


def _check_names(model_name: str, table: str, indexes: Sequence[Index]) -> None:
    """Raise ValidationError for a table or index name a database would take for another
    object's: two indexes of the model, an index and its table, or a name another model
    holds (its table or one of its indexes: PostgreSQL and SQLite name tables and indexes
    in one namespace), or another model's table spelled in another case (SQLite, and MySQL
    on some systems, fold case; PostgreSQL folds unquoted names)."""
    seen: dict[str, str] = {table.casefold(): f"the table {table!r}"}
    for index in indexes:
        key = index.name.casefold()
        if key in seen:
            raise ValidationError(
                f"{model_name} Index {index.name!r}: the name is already {seen[key]}, and one "
                "name is one object of the database (PostgreSQL's CREATE INDEX IF NOT EXISTS "
                "would skip this index without a word); give it a name of its own"
            )
        seen[key] = f"the name of Index {index.name!r}"
    problem = _name_clash(model_name, table, indexes)
    if problem is not None:
        # A model defined in a function and gone since may still be in the registry until
        # the cycle collector frees it (a class refers to itself): only a live one counts.
        import gc

        gc.collect()
        problem = _name_clash(model_name, table, indexes)
    if problem is not None:
        raise ValidationError(problem)


#: a name as the databases that fold case compare it -> the models whose table or one of
#: whose indexes bears it (weakly: a model defined in a test function may go)
_models_by_name: dict[str, weakref.WeakSet[type[Model]]] = {}

_ONE_NAMESPACE: Final = ("PostgreSQL and SQLite name tables and indexes in one namespace, "
                         "where CREATE ... IF NOT EXISTS would skip one of the two without "
                         "a word")


def _name_clash(model_name: str, table: str, indexes: Sequence[Index]) -> str | None:
    """Why a name of the model's table or indexes is one another model already holds
    otherwise, or None. Several models of one table (releases of a model, the queue's
    message models) share its name and its indexes' names."""
    for other in _holders_of(table):
        if other.table == table:
            continue
        if other.table.casefold() == table.casefold():
            return (
                f"{model_name}: table={table!r} differs only in case from {other.name}'s table "
                f"{other.table!r}: SQLite (and MySQL where it folds table names) takes the two "
                "for one table, PostgreSQL for two, of which SQL written by hand reaches only "
                "the lower-case one unquoted; spell both alike, or give one of them a name of "
                "its own"
            )
        held = next((i for i in other.indexes if i.name.casefold() == table.casefold()), None)
        if held is None:
            continue
        return (
            f"{model_name}: table={table!r} is the name of {other.name} Index {held.name!r} "
            f"(table {other.table!r}), and {_ONE_NAMESPACE}; give the table or the index "
            "another name"
        )
    for index in indexes:
        for other in _holders_of(index.name):
            if other.table.casefold() == index.name.casefold():
                return (
                    f"{model_name} Index {index.name!r}: the name is the table of "
                    f"{other.name} ({other.table!r}), and {_ONE_NAMESPACE}; give the index "
                    "another name"
                )
    return None


def _holders_of(name: str) -> list[ModelMeta]:
    """The live models whose table or one of whose indexes bears `name` (without case)."""
    metas = (m.__dict__.get("__tempest_meta__")
             for m in list(_models_by_name.get(name.casefold(), ())))
    return [meta for meta in metas if meta is not None]


def _register_names(meta: ModelMeta) -> None:
    """Keep the model's table and index names for the checks of models defined later."""
    _models_by_table.setdefault(meta.table, weakref.WeakSet()).add(meta.model)
    for name in {meta.table.casefold(), *(i.name.casefold() for i in meta.indexes)}:
        _models_by_name.setdefault(name, weakref.WeakSet()).add(meta.model)


#: what a value written into DDL may be: the types whose text each dialect spells alike
DDL_LITERALS: Final = "str, int, float, bool or Decimal values"


def ddl_literal_problem(value: object) -> str | None:
    """Why `value` cannot be written inline into DDL, or None when it can."""
    if isinstance(value, str):
        if "\x00" in value or not _utf8(value):
            return f"the text {_short(value)} holds a NUL or is not valid Unicode"
        return None
    if isinstance(value, bool | int):
        return None
    if isinstance(value, float) and math.isfinite(value):
        return None
    if isinstance(value, Decimal) and value.is_finite():
        return None
    if isinstance(value, float | Decimal):
        return f"{value} is not a finite number"
    return f"{type(value).__name__} {_short(value)} has no literal in DDL"


def _check_ddl_literal(value: object, where: str, takes: str) -> None:
    problem = ddl_literal_problem(value)
    if problem is not None:
        raise ValidationError(f"{where}: {problem}; {takes} {DDL_LITERALS} only")


def _check_server_default(meta: ModelMeta, col: ColumnMeta) -> None:
    """Raise ValidationError unless the column's server_default is a value of its type."""
    from .expressions import Expr, Expression, Now, Raw

    default = col.server_default
    where = f"{meta.name}.{col.attr} server_default="
    accepted = (f"a server_default is a literal of the column's type ({DDL_LITERALS}), "
                "sql.now() for a datetime column, or sql.raw()/sql.expr() written as they are")
    if isinstance(default, Now):
        if col.kind != "datetime":
            raise ValidationError(
                f"{where}sql.now(): the current timestamp is a datetime, and "
                f"{meta.name}.{col.attr} is {col.type_name()}; {accepted}"
            )
        if default.plus is not None and not isinstance(default.plus, Expression):
            _check_ddl_literal(default.plus, where + "sql.now(plus)", "DDL takes")
        return
    if isinstance(default, Expr):
        for value in default.values:
            if not isinstance(value, Expression):
                _check_ddl_literal(value, where + "sql.expr()", "DDL takes")
        return
    if isinstance(default, Raw):
        return
    if isinstance(default, Expression):
        raise ValidationError(f"{where}{default!r} is not a value a table can default to; "
                              f"{accepted}")
    try:
        col.check_value(default, "server_default=")
        if col.kind == "decimal" and col.precision is not None:
            _check_decimal_size(col, default, "server_default=")  # type: ignore[arg-type]  # check_value() accepted it: a Decimal or an int
    except ValidationError as exc:
        raise ValidationError(f"{str(exc).rstrip('.')}; {accepted}") from None
    problem = ddl_literal_problem(default)
    if problem is not None:
        raise ValidationError(f"{where}{problem}; {accepted}")


#: table name -> the models defined on it (several models may share a table: releases of one
#: model, the queue's message models), for checking `references=` when a model is defined
_models_by_table: dict[str, weakref.WeakSet[type[Model]]] = {}

#: the column kinds a foreign key may join: one kind each, text and its enums together
_KEY_FAMILY: Final = {"literal": "str"}


def split_reference(meta: ModelMeta, col: ColumnMeta) -> tuple[str, str]:
    """(table, column) of a column's `references="table.column"`, checked as SQL names."""
    text = col.references
    where = f"{meta.name}.{col.attr} references={text!r}"
    table, dot, target = text.partition(".") if isinstance(text, str) else ("", "", "")
    if not dot or not table or not target:
        raise ValidationError(
            f"{where}: a reference is 'table.column', the SQL names of the referenced table "
            "and its key column, e.g. references=\"users.id\""
        )
    return check_identifier(table, where), check_identifier(target, where)


def model_of_table(name: str) -> str | None:
    """The name of a model defined on the table `name` (compared as the databases that fold
    a table name's case do), or None."""
    folded = name.casefold()
    for table, models in list(_models_by_table.items()):
        if table.casefold() == folded:
            found = next(iter(list(models)), None)
            if found is not None:
                return found.__name__
    return None


def _defined_models_of(meta: ModelMeta, table: str) -> list[ModelMeta]:
    """The models of `table` defined so far: `meta` itself for its own table."""
    if table == meta.table:
        return [meta]
    return [meta_of(m) for m in list(_models_by_table.get(table, ()))]


def _key_type_problem(col: ColumnMeta, other: ColumnMeta, target: ModelMeta) -> str | None:
    """Why the key column `other` of `target` cannot hold the values of `col`, or None."""
    if _KEY_FAMILY.get(other.kind, other.kind) == _KEY_FAMILY.get(col.kind, col.kind):
        return None
    return (f"{target.name}.{other.attr} is {other.type_name()} and "
            f"{col.model_name}.{col.attr} is {col.type_name()}: a foreign key joins "
            "values of one type")


def reference_problem(col: ColumnMeta, target: ModelMeta, column: str) -> str | None:
    """Why `target`'s column `column` (an SQL name) cannot be the key `col` references."""
    found = next((c for c in target.columns if c.name == column), None)
    if found is None:
        by_attr = target.by_attr.get(column)
        hint = (f"; {column!r} is the attribute of the SQL column {by_attr.name!r}"
                if by_attr is not None else "")
        names = ", ".join(c.name for c in target.columns)
        return f"{target.name} (table {target.table!r}) has no column {column!r}{hint} " \
               f"(its SQL names: {names})"
    problem = _key_type_problem(col, found, target)
    if problem is not None:
        return problem
    single_key = len(target.primary_key) == 1 and found.primary_key
    unique_index = any(i.unique and i.where is None and i.columns == (found.attr,)
                       for i in target.indexes)
    if not (single_key or found.unique or unique_index):
        return (f"{target.name}.{found.attr} is neither the primary key nor unique, and a "
                "foreign key references a key (PostgreSQL refuses the table, SQLite every "
                "write); reference the primary key, or declare the column unique=True")
    return None


def _check_reference(meta: ModelMeta, col: ColumnMeta) -> None:
    """Raise ValidationError for a reference to a model already defined that does not fit;
    a table no model defines yet is checked by create_all()."""
    table, column = split_reference(meta, col)
    targets = _defined_models_of(meta, table)
    problems = [reference_problem(col, target, column) for target in targets]
    if problems and all(problems):
        raise ValidationError(
            f"{meta.name}.{col.attr} references={col.references!r}: {problems[-1]}")


def foreign_key_problem(meta: ModelMeta, key: ForeignKey, target: ModelMeta) -> str | None:
    """Why `target` cannot hold the key `key` of `meta` names (its columns, their types, a
    primary key or unique index over exactly them)."""
    found: list[ColumnMeta] = []
    for own, name in zip(key.columns, key.table_columns, strict=True):
        col = meta.by_attr[own]
        other = next((c for c in target.columns if c.name == name), None)
        if other is None:
            names = ", ".join(c.name for c in target.columns)
            return (f"{target.name} (table {target.table!r}) has no column {name!r} "
                    f"(its SQL names: {names})")
        problem = _key_type_problem(col, other, target)
        if problem is not None:
            return problem
        found.append(other)
    wanted = {c.attr for c in found}
    is_key = (wanted == {c.attr for c in target.primary_key}
              or any(i.unique and i.where is None and set(i.columns) == wanted
                     for i in target.indexes)
              or (len(found) == 1 and found[0].unique))
    if not is_key:
        return (f"({', '.join(key.table_columns)}) of {target.name} is neither its primary key "
                "nor a unique index, and a foreign key references a key (PostgreSQL refuses "
                "the table, SQLite every write); reference the primary key, or declare an "
                "Index(..., unique=True) over exactly these columns")
    return None


def foreign_key_pairs(meta: ModelMeta, key: ForeignKey) -> list[tuple[str, str]]:
    """The key's (own SQL name, referenced SQL name) pairs, in the referenced key's order."""
    # InnoDB takes a foreign key only over an index's columns in that index's order ("Foreign
    # key constraint is incorrectly formed"), PostgreSQL and SQLite in any order: the order
    # of the primary key or unique index of a model of the table, or as given where none says
    pairs = [(meta.by_attr[own].name, theirs)
             for own, theirs in zip(key.columns, key.table_columns, strict=True)]
    wanted = {theirs for _, theirs in pairs}
    for target in _defined_models_of(meta, key.table):
        orders = [[c.name for c in target.primary_key]]
        orders += [[target.by_attr[a].name for a in i.columns if a in target.by_attr]
                   for i in target.indexes if i.unique and i.where is None]
        order = next((o for o in orders if len(o) == len(pairs) and set(o) == wanted), None)
        if order is not None:
            return sorted(pairs, key=lambda pair: order.index(pair[1]))
    return pairs


def _check_foreign_key(meta: ModelMeta, key: ForeignKey) -> None:
    """Raise ValidationError for a foreign key whose own columns are unknown, or that does
    not fit a model of its table already defined (create_all() checks the others)."""
    where = f"{meta.name} {key!r}"
    for attr in key.columns:
        meta.column(attr, where)
    targets = _defined_models_of(meta, key.table)
    problems = [foreign_key_problem(meta, key, target) for target in targets]
    if problems and all(problems):
        raise ValidationError(f"{where}: {problems[-1]}")


def meta_of(model: object) -> ModelMeta:
    """The metadata of a model class, computed once on first use."""
    meta = getattr(model, "__tempest_meta__", None)
    if meta is not None and meta.model is model:
        return meta  # type: ignore[no-any-return]  # getattr() is Any; .model is model makes it ours
    if not (isinstance(model, type) and issubclass(model, Model) and model is not Model):
        raise ValidationError(
            f"expected a Model subclass, got {_short(model)}; declare "
            "`class Thing(Model, table=\"things\"): ...`"
        )
    meta = _build_meta(model)
    model.__tempest_meta__ = meta
    _register_names(meta)
    return meta


#: where a `slots=True` model's class namespace keeps its columns' defaults between the
#: metaclass, which takes them out (a slot and a class attribute cannot share a name), and
#: `Model.__init_subclass__`, which shows them to `dataclasses.dataclass()`
_SLOT_DEFAULTS: Final = "__tempest_slot_defaults__"

#: an annotation's outermost name, with or without a module: `ClassVar`, `typing.ClassVar`
_ANNOTATION_HEAD = re.compile(r"^\s*(?:\w+\s*\.\s*)?(\w+)")


def _is_field_annotation(annotation: object) -> bool:
    """Whether an annotation in a class body makes a dataclass field (not a ClassVar, an
    InitVar or the KW_ONLY marker); a string is judged by its outermost name."""
    if isinstance(annotation, str):
        head = _ANNOTATION_HEAD.match(annotation)
        return head is None or head.group(1) not in ("ClassVar", "InitVar", "KW_ONLY")
    return not (annotation is ClassVar or typing.get_origin(annotation) is ClassVar
                or annotation is dataclasses.InitVar
                or isinstance(annotation, dataclasses.InitVar)
                or annotation is dataclasses.KW_ONLY)


def _annotation_names(namespace: Mapping[str, Any]) -> dict[str, object]:
    """The annotations written in a class body, without evaluating them."""
    if "__annotations__" in namespace:
        return dict(namespace["__annotations__"])
    if sys.version_info >= (3, 14):  # annotations are evaluated lazily from 3.14 on
        import annotationlib

        annotate = annotationlib.get_annotate_from_class_namespace(namespace)
        if annotate is not None:
            return dict(annotationlib.call_annotate_function(
                annotate, annotationlib.Format.STRING))
    return {}


def _slotted_namespace(name: str, bases: tuple[type, ...],
                       namespace: dict[str, Any]) -> dict[str, Any]:
    """The class namespace of a `slots=True` model: a slot for each column it declares, its
    defaults kept aside under _SLOT_DEFAULTS."""
    if "__slots__" in namespace:
        raise ValidationError(
            f"{name}: slots=True gives the model a slot for each of its columns; drop its "
            "own __slots__, or slots=True")
    inherited = {slot for base in bases for klass in base.__mro__
                 for slot in _slots_of(klass)}
    own = [attr for attr, annotation in _annotation_names(namespace).items()
           if _is_field_annotation(annotation) and attr not in inherited]
    slotted = dict(namespace)
    slotted[_SLOT_DEFAULTS] = {attr: slotted.pop(attr) for attr in own if attr in slotted}
    slotted["__slots__"] = tuple(own)
    return slotted


def _slots_of(klass: type) -> tuple[str, ...]:
    """The slot names a class itself declares."""
    slots = klass.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


class _ModelType(abc.ABCMeta):
    """The metaclass of Model: a model declared `slots=True` gets its slots before its class
    is made (they cannot be added after). It is ABCMeta's, so that a model may still take
    `abc.ABC` (or another abstract base) as a second base."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                /, **kwargs: Any) -> _ModelType:
        if kwargs.get("slots"):
            namespace = _slotted_namespace(name, bases, namespace)
        try:
            return super().__new__(mcs, name, bases, namespace, **kwargs)
        except TypeError as exc:
            if "lay-out conflict" not in str(exc):
                raise
            raise ValidationError(
                f"{name}: two of its bases hold columns in slots (slots=True), which one class "
                "cannot combine; declare one of them without slots=True, or derive one from "
                "the other") from exc


def _unslot(cls: type) -> dict[str, Any]:
    """Put a `slots=True` model's defaults back in its class for `dataclass()` to read (it
    would take a slot's descriptor for a default); return the descriptors taken out."""
    defaults: dict[str, Any] = cls.__dict__[_SLOT_DEFAULTS]
    delattr(cls, _SLOT_DEFAULTS)
    members = {attr: cls.__dict__[attr] for attr in _slots_of(cls)}
    for attr in members:
        if attr in defaults:
            setattr(cls, attr, defaults[attr])
        else:
            delattr(cls, attr)
    return members


def _reslot(cls: type, members: dict[str, Any]) -> None:
    """Give a `slots=True` model its slots' descriptors back after `dataclass()`, and check
    every column is held by a slot."""
    for attr, member in members.items():
        setattr(cls, attr, member)
    fields = {f.name for f in dataclasses.fields(cls)}
    for attr in members:
        if attr not in fields:
            raise ValidationError(
                f"{cls.__name__}.{attr}: slots=True took it for a column but it is not a "
                "dataclass field; write its ClassVar or InitVar annotation plainly")
    for attr in fields - members.keys():
        held = next((k.__dict__[attr] for k in cls.__mro__ if attr in k.__dict__), None)
        if isinstance(held, types.MemberDescriptorType):
            continue
        if any(isinstance(k.__dict__.get(attr), types.MemberDescriptorType)
               for k in cls.__mro__[1:]):
            delattr(cls, attr)  # a default given again here would hide the base's slot
        elif not has_instance_dict(cls):
            raise ValidationError(
                f"{cls.__name__}.{attr}: slots=True could not tell that it is a column; "
                "write its annotation plainly")


def has_instance_dict(cls: type) -> bool:
    """Whether instances of the class have a `__dict__` (not so when every class of its
    MRO declares `__slots__`)."""
    return any("__dict__" in k.__dict__ for k in cls.__mro__)


def _defining_frame(cls: type) -> types.FrameType:
    """The frame running the class statement of `cls`, seen from Model.__init_subclass__:
    past the metaclasses' __new__ (ours, ABCMeta's) and any __init_subclass__ of a model base
    calling up to Model's."""
    metaclass: type = type(cls)
    news = [getattr(k.__dict__.get("__new__"), "__func__", None) for k in metaclass.__mro__]
    between = {code for new in news if (code := getattr(new, "__code__", None)) is not None}
    frame = sys._getframe(2)
    while frame.f_back is not None and (
            frame.f_code in between or frame.f_code.co_name == "__init_subclass__"):
        frame = frame.f_back
    return frame


if TYPE_CHECKING:
    class _ModelBase:
        """What type checkers see above Model (the metaclass is a detail of run time)."""

        __slots__ = ()
else:
    _ModelBase = _ModelType("_ModelBase", (), {
        "__slots__": (), "__module__": __name__,
        "__doc__": "Model's base at run time: it carries the metaclass."})


# `column` is deliberately not a field specifier. mypy's dataclasses transform and pyright
# decide whether a field specifier call gives a default from the keywords written in the call
# alone (`default=`, `default_factory=`, `factory=`), never from an overload or a parameter's
# default, so `id: int = column(primary_key=True)` would be a required constructor argument
# for both, though the database fills it. Any other call on the right is a default value to
# both checkers, so every `column(...)` makes its field optional in the constructor they see.
# The mypy plugin gives back the precise rule (tempest_typed_mypy/constructors.py): a
# `column(...)` without a default is required unless it is an int primary key or has a
# server default, as at run time.
@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
class Model(_ModelBase):
    """Base class of tables: annotated attributes are columns, the constructor is keyword-only."""

    __slots__ = ()
    __tempest_meta__: ClassVar[ModelMeta | None] = None
    __tempest_spec__: ClassVar[dict[str, Any]]
    __indexes__: ClassVar[Sequence[Index]] = ()
    __foreign_keys__: ClassVar[Sequence[ForeignKey]] = ()

    def __init_subclass__(
        cls,
        *,
        table: str | None = None,
        naming: Naming = "preserve",
        slots: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        frame = _defining_frame(cls)
        localns = dict(frame.f_locals) if frame.f_code.co_name != "<module>" else None
        cls.__tempest_spec__ = {"table": table, "naming": naming, "localns": localns}
        cls.__tempest_meta__ = None
        members = _unslot(cls) if slots else None
        _require_composite_key(cls)
        try:
            dataclasses.dataclass(kw_only=True)(cls)
        except ValueError as exc:  # e.g. a mutable default: say it as our own error
            raise ValidationError(f"{cls.__name__}: {exc}") from exc
        if members is not None:
            _reslot(cls, members)
        try:
            # A mistake in the model (an unsupported type, an index on an unknown column)
            # surfaces where the class is defined, not at its first query.
            meta_of(cls)
        except ValidationError as exc:
            if not isinstance(exc.__cause__, NameError):
                raise
            # An annotation names a type defined later: the model is checked at first use.


def _require_composite_key(cls: type) -> None:
    """Make each column of a composite primary key a constructor argument: only a lone int
    key is an identity the database fills (column() cannot know it has company)."""
    own = {name: value for name, value in vars(cls).items()
           if isinstance(value, dataclasses.Field)}
    inherited = {name: f for base in reversed(cls.__mro__[1:])
                 for name, f in getattr(base, "__dataclass_fields__", {}).items()}
    keys = [name for name, f in {**inherited, **own}.items() if _options_of(f).primary_key]
    if len(keys) > 1:
        for name in keys:
            field = own.get(name)
            if field is not None and field.default is UNSET:
                field.default = dataclasses.MISSING
