"""Value adapters: Python values to what a driver stores, and stored values back.

Each driver module picks the adapters its database needs, by column kind. Values come back as
the annotated Python types on every dialect: UUID, aware UTC datetime, date, Decimal, bool,
bytes, dict/list for JSON.
"""

from __future__ import annotations

import datetime as _dt
import json
import uuid
from collections.abc import Callable, Sequence
from decimal import Context, Decimal
from json.scanner import make_scanner
from typing import Any, TypeAlias

from ..errors import ValidationError
from ..model import MAX_PRECISION, MAX_SCALE

__all__ = ["Adapter", "Adapters", "adapt_column", "adapt_rows"]

Adapter: TypeAlias = Callable[[Any], Any]
Adapters: TypeAlias = dict[str, Adapter]

UTC = _dt.UTC


def adapt_column(bind: Adapter, cells: Sequence[Any]) -> Sequence[Any]:
    """A whole column of a batch through its adapter, NULLs kept as they are: one map() per
    column where the row-by-row path asked, for each value, which adapter and whether NULL."""
    if None not in cells:
        return list(map(bind, cells))
    return [None if v is None else bind(v) for v in cells]


def adapt_rows(binders: Sequence[Adapter | None],
               cells: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """The rows of a batch given a column at a time, column i adapted by binders[i] (None:
    as it is) (SQLite batch of 100,000 seven-column rows: BENCHMARKS.md, "Bulk writes")."""
    columns = list(cells)
    for i, bind in enumerate(binders):
        if bind is not None:
            columns[i] = adapt_column(bind, columns[i])
    return list(zip(*columns, strict=True))
#: the text form of a timestamp on SQLite: UTC, fixed width, so text order is time order
SQLITE_DATETIME = "%Y-%m-%d %H:%M:%S.%f"


def uuid_to_str(value: uuid.UUID) -> str:
    """UUID as its canonical 36-character text."""
    return str(value)


def str_to_uuid(value: Any) -> uuid.UUID:
    """UUID from text (or bytes) as stored."""
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, bytes | bytearray):
        value = value.decode()
    return uuid.UUID(value)


def datetime_to_utc_text(value: _dt.datetime) -> str:
    """An aware datetime as fixed-width UTC text."""
    # isoformat, not strftime: strftime writes years before 1000 without leading zeros
    # ('1-01-01'), which is neither fixed-width (text order is time order) nor readable back.
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def utc_text_to_datetime(value: Any) -> _dt.datetime:
    """Fixed-width UTC text back to an aware datetime."""
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = _dt.datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def datetime_to_naive_utc(value: _dt.datetime) -> _dt.datetime:
    """An aware datetime as naive UTC, for DATETIME columns that hold no zone."""
    return value.astimezone(UTC).replace(tzinfo=None)


def naive_utc_to_datetime(value: Any) -> _dt.datetime:
    """A naive UTC DATETIME back to an aware datetime."""
    if isinstance(value, str):
        value = _dt.datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)  # type: ignore[no-any-return]  # a datetime by now


def date_to_text(value: _dt.date) -> str:
    """A date as ISO text."""
    return value.isoformat()


def text_to_date(value: Any) -> _dt.date:
    """ISO text back to a date."""
    if isinstance(value, _dt.date):
        return value
    return _dt.date.fromisoformat(value)


def decimal_to_text(value: Decimal | int) -> str:
    """A Decimal as canonical text, so equal values are equal text."""
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"
    # Not value.normalize(): it rounds to the context's 28 digits and would lose the rest.
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


#: what MySQL's and MariaDB's DECIMAL(65, 30), a Decimal column without a size there, holds
_UNSIZED_MYSQL_WHOLE = MAX_PRECISION - MAX_SCALE


def unsized_mysql_decimal(value: Decimal | int) -> Decimal | int:
    """A value for MySQL's DECIMAL(65, 30), refused when it would not be stored as it is:
    MySQL rounds places past the 30th away with only a note (Decimal('1E-40') reads back 0),
    and a server not in strict mode clips a number too large to the largest one."""
    if isinstance(value, int):
        places = 0
        whole = len(str(abs(value))) if value else 0
    else:
        _, digits, exp = value.as_tuple()
        assert isinstance(exp, int)  # the model refused NaN and infinities
        significant = list(digits)
        while exp < 0 and len(significant) > 1 and significant[-1] == 0:
            significant.pop()
            exp += 1
        places = -exp if exp < 0 and any(significant) else 0
        whole = len(significant) + exp if any(significant) else 0
    if places > MAX_SCALE:
        raise ValidationError(
            f"{value!r} has {places} digits after the point: a Decimal column without "
            f"column(precision=, scale=) is DECIMAL({MAX_PRECISION}, {MAX_SCALE}) on MySQL "
            f"and MariaDB, which keeps {MAX_SCALE} and would round the rest away; round it "
            f"first (value.quantize(Decimal(\"1E-{MAX_SCALE}\"))), or keep such values in a "
            "str column"
        )
    if whole > _UNSIZED_MYSQL_WHOLE:
        raise ValidationError(
            f"{value!r} has {whole} digits before the point: a Decimal column without "
            f"column(precision=, scale=) is DECIMAL({MAX_PRECISION}, {MAX_SCALE}) on MySQL "
            f"and MariaDB, which holds {_UNSIZED_MYSQL_WHOLE}; declare the column "
            f"column(precision={MAX_PRECISION}, scale=0) for whole numbers this large"
        )
    return value


def to_decimal(value: Any) -> Decimal:
    """Decimal from what the database returned."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value if not isinstance(value, bytes) else value.decode())


#: wide enough for any Decimal a column(precision=, scale=) holds (65 digits at most)
_WIDE = Context(prec=MAX_PRECISION + MAX_SCALE)
_ZERO = Decimal(0)


def plain_decimal(value: Decimal) -> Decimal:
    """A Decimal column's value without a scale of its own, the same on every database: zero
    is Decimal('0'), never MariaDB's Decimal('0E-30') of DECIMAL(65, 30); no trailing zeros
    (Decimal('1.5')); an integral value has exponent 0 (Decimal('100'), not '1E+2')."""
    if not value:
        return _ZERO
    _, digits, exp = value.as_tuple()
    if exp == 0 or (isinstance(exp, int) and exp < 0 and digits[-1]):
        return value  # the common cases, already plain
    if isinstance(exp, int) and exp > 0:
        return Decimal(int(value))
    return Decimal(decimal_to_text(value))


def decimal_reader(read: Adapter | None, scale: int | None) -> Adapter:
    """How a Decimal column's value is read back: at the column's scale (SQLite keeps text,
    which has the places it was written with), or, without one, as plain_decimal()."""
    if scale is None:
        if read is None:
            return plain_decimal
        return lambda value: plain_decimal(read(value))
    step = Decimal(1).scaleb(-scale)

    def at_scale(value: Any) -> Decimal:
        number = read(value) if read is not None else value
        if number.as_tuple().exponent == -scale:
            return number  # type: ignore[no-any-return]  # the driver's Decimal
        return number.quantize(step, context=_WIDE)  # type: ignore[no-any-return]  # a Decimal

    return at_scale


def json_dumps(value: Any) -> str:
    """JSON text of a dict or list."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: the C scanner json.loads() runs once it has checked its input
_scan_json = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: its context is typed as itself; it takes the decoder


def json_from_text(text: str) -> Any:
    """The value of a JSON document, as json.loads(text) gives it."""
    # json.loads() first checks the input's type (on bytes, detects the encoding) and skips
    # whitespace around the document with a regular expression: for "{}", 0.74 us as text
    # and 1.19 as bytes against 0.19 for the scanner (BENCHMARKS.md, "Fast paths"). A
    # database writes no whitespace around a document; anything else the scanner does not
    # take whole goes to json.loads(), which gives the same value or error.
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def json_from_utf8(data: str | bytes) -> Any:
    """The value of a JSON document in UTF-8 (psycopg hands a JSON loader bytes)."""
    return json_from_text(data if isinstance(data, str) else data.decode())


def json_loads(value: Any) -> Any:
    """A dict or list from JSON text (or as the driver already decoded it)."""
    if type(value) is str:
        return json_from_text(value)
    if isinstance(value, str | bytes | bytearray):
        return json.loads(value)
    return value


def to_bool(value: Any) -> bool:
    """bool from 0/1 or a bool."""
    return bool(value)


def to_float(value: Any) -> float:
    """float from what the database returned."""
    return float(value)


def to_bytes(value: Any) -> bytes:
    """bytes from bytes, bytearray or memoryview."""
    return bytes(value)
