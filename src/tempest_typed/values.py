"""Bound values: the copy a statement keeps, and what may be bound where no column says the type.

A built statement never changes: a value it binds is kept as an immutable object of its plain
type, or as a copy of its own (a JSON dict or list, a bytearray), so changing the caller's
object afterwards changes nothing that is stored. A subclass (an enum member of str or int,
say) is kept as the plain value, which every driver binds alike: PyMySQL would bind a
`(str, Enum)` member as its `str()`, "Color.RED".

A value bound where no column says its type (an `sql.expr` argument, an `execute_sql`
parameter, `sql.now(plus=...)`) must be one that every driver stores as it is; anything else
is a ValidationError, never bound as its `str()`.
"""

from __future__ import annotations

import datetime as _dt
import math
import uuid
from decimal import Decimal
from typing import Any, Final

from .errors import ValidationError
from .model import INT_MAX, INT_MIN, _json_problem, check_text

__all__ = ["KEPT", "UNTYPED_ACCEPTED", "freeze_from", "frozen", "frozen_tail", "untyped_value"]

#: the exact types a statement keeps as they are: immutable, and bound alike by every driver
KEPT: Final = frozenset({str, int, float, bool, type(None), bytes, Decimal, _dt.datetime,
                          _dt.date, uuid.UUID})

#: exact types untyped_value() takes whatever their value
_AS_THEY_ARE: Final = frozenset({bool, bytes, uuid.UUID, _dt.date})

#: what untyped_value() takes, in the words of its messages
UNTYPED_ACCEPTED: Final = (
    "None, bool, int (64-bit), finite float, str, bytes (bytearray and memoryview are taken "
    "as bytes), finite Decimal, aware datetime, date or UUID"
)


def frozen(value: object) -> object:
    """`value` as a statement keeps it: an immutable value of its plain type, or a copy."""
    if type(value) in KEPT:
        return value
    if isinstance(value, dict | list | tuple):
        return _json_copy(value)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return _plain(value)


def freeze_from(values: list[object], start: int) -> None:
    """Replace values[start:] by what a statement keeps of them (frozen())."""
    if len(values) - start == 1:
        if type(values[start]) not in KEPT:
            values[start] = frozen(values[start])
        return
    for i in range(start, len(values)):
        if type(values[i]) not in KEPT:
            values[i] = frozen(values[i])


def frozen_tail(values: tuple[object, ...], start: int) -> tuple[object, ...]:
    """`values`, with those from `start` on as a statement keeps them (frozen())."""
    # The common case, one value of a kept type: where({"id": ...}) and the like, settled
    # without a pass over values[start:].
    if len(values) - start == 1:
        if type(values[start]) in KEPT:
            return values
    elif KEPT.issuperset(map(type, values[start:])):
        return values
    return values[:start] + tuple(map(frozen, values[start:]))


def _json_copy(value: Any) -> Any:
    """A JSON document's own copy: its dicts and lists new, its scalars shared (immutable)."""
    if isinstance(value, dict):
        return {k: v if type(v) in KEPT else _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in KEPT else _json_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(v if type(v) in KEPT else _json_copy(v) for v in value)
    return value


def _plain(value: object) -> object:
    """A value of a subclass of a plain type as the plain type's value; others as they are."""
    # str.__str__, int.__int__ and float.__float__ give the exact type's copy of the value,
    # whatever str()/int() the subclass defines (an Enum's str() is its name).
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Decimal):
        return Decimal(value)
    if isinstance(value, _dt.datetime):
        return _dt.datetime(value.year, value.month, value.day, value.hour, value.minute,
                            value.second, value.microsecond, value.tzinfo, fold=value.fold)
    if isinstance(value, _dt.date):
        return _dt.date(value.year, value.month, value.day)
    if isinstance(value, uuid.UUID):
        return uuid.UUID(int=value.int)
    return value


def untyped_value(value: object, where: str, *, json: bool = False) -> object:
    """`value` as bound where no column says its type, or ValidationError naming what is taken.

    With `json`, a dict or a list is taken too, as a JSON document.
    """
    # the usual values first, each decided in a test or two
    if type(value) is int:
        if INT_MIN <= value <= INT_MAX:
            return value
    elif type(value) is str:
        if value.isascii() and "\x00" not in value:
            return value
    elif type(value) is float:
        if math.isfinite(value):
            return value
    elif value is None or type(value) in _AS_THEY_ARE:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if json and isinstance(value, dict | list):
        problem = _json_problem(value)
        if problem:
            raise ValidationError(
                f"{where}: not a JSON document: {problem} (JSON holds dicts with string keys, "
                "lists, strings, finite numbers, booleans and None)"
            )
        return _json_copy(value)
    plain = _plain(value)
    kind = type(plain)
    if kind not in KEPT:
        raise ValidationError(
            f"{where}: {_short(value)} of type {type(value).__name__} cannot be bound: a driver "
            f"would store its str() or refuse it. Pass {UNTYPED_ACCEPTED}"
            + (", or a dict or list as JSON" if json else "") + "; convert it first"
        )
    if kind is str:
        check_text(where, plain, "bind bytes instead")  # type: ignore[arg-type]  # a str
    elif kind is int:
        if not INT_MIN <= plain <= INT_MAX:  # type: ignore[operator]  # an int
            raise ValidationError(
                f"{where}: {plain} is outside the 64-bit integers that every database binds "
                f"[{INT_MIN}, {INT_MAX}] (SQLite cannot take it); pass it as a Decimal"
            )
    elif kind is float:
        if not math.isfinite(plain):  # type: ignore[arg-type]  # a float
            raise ValidationError(
                f"{where}: {plain} is not a finite number; MySQL refuses NaN and infinities "
                "and SQLite binds NaN as NULL, so a bound float is finite"
            )
    elif kind is Decimal:
        if not plain.is_finite():  # type: ignore[attr-defined]  # a Decimal
            raise ValidationError(
                f"{where}: Decimal {plain} is not a finite number, which MySQL cannot hold"
            )
    elif kind is _dt.datetime:
        _check_datetime(plain, where)  # type: ignore[arg-type]  # a datetime
    return plain


def _check_datetime(value: _dt.datetime, where: str) -> None:
    if value.utcoffset() is None:
        raise ValidationError(
            f"{where}: naive datetime {value!r}; pass an aware one, e.g. datetime.now(UTC) "
            "(a naive one reads as a different time on each database)"
        )
    try:
        value.astimezone(_dt.UTC)
    except OverflowError:
        raise ValidationError(
            f"{where}: {value.isoformat()} is outside the datetimes that exist in UTC (years "
            "1 to 9999)"
        ) from None


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:  # a repr that fails must not hide the real message
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."
