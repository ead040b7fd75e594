"""Run one statement on every database and put the outcomes in a comparable form.

Only the documented differences between databases are normalized here; each normalization
names the README entry it stands for.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from hypothesis import event

from tempest_typed import DialectError, Engine, Model, QueryExecutionError, select
from tempest_typed.model import meta_of

from .strategies import Case, ModelSpec

#: The DialectErrors each database is documented to raise, by message.
DOCUMENTED_DIALECT_ERRORS: dict[str, tuple[str, ...]] = {
    "postgresql": (r"needs a conflict target",),
    "sqlite": (r"SQLite stores Decimal as text",),
    "mysql": (r"has no RETURNING", r"RETURNING on INSERT and DELETE only",
              r"rejects LIMIT in IN \(SELECT", r"cannot read the table being updated",
              r"ON DUPLICATE KEY UPDATE has no conflict target",
              r"three or more different windows \(partition_by, order_by\) in one select: "
              r"MariaDB"),
}


def normalize(value: Any) -> Any:
    """A value in a form that compares equal across databases when the data is equal."""
    if isinstance(value, Decimal):
        # SQLite keeps Decimal as text; PostgreSQL and MariaDB keep the scale: compare values.
        return ("decimal", "0" if value == 0 else format(value.normalize(), "f"))
    if isinstance(value, float):
        return 0.0 if value == 0 else value
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)
    if isinstance(value, dict | list):
        # JSON key order is not kept by PostgreSQL's jsonb: compare the documents.
        return ("json", json.dumps(value, sort_keys=True))
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, Model):
        # A side of a join row: the model's class and its normalized columns.
        return (type(value).__name__, row_values(value))
    return value


def row_values(row: Any) -> tuple[Any, ...]:
    """A fetched row (model instance or Row) as a tuple of normalized values."""
    if isinstance(row, tuple):
        return tuple(normalize(v) for v in row)
    return tuple(normalize(getattr(row, c.attr)) for c in meta_of(type(row)).columns)


def _sort_key(values: tuple[Any, ...]) -> str:
    return repr(values)


class Outcome:
    """What one database did with one statement."""

    def __init__(self, rows: list[tuple[Any, ...]] | None = None, affected: int | None = None,
                 error: str | None = None, dialect_error: str | None = None) -> None:
        self.rows = rows
        self.affected = affected
        self.error = error
        self.dialect_error = dialect_error

    def comparable(self) -> tuple[Any, ...]:
        return (self.rows, self.affected, self.error)

    def __repr__(self) -> str:
        if self.dialect_error:
            return f"DialectError({self.dialect_error!r})"
        if self.error:
            return f"error {self.error}"
        return f"rows={self.rows!r} affected={self.affected}"


class _Rollback(Exception):
    pass


def run(engine: Engine, statement: Any, ordered: bool, keep: bool) -> Outcome:
    """Run a statement in a transaction, committed only when `keep`."""
    try:
        statement.compile(engine.dialect)
    except DialectError as exc:
        return Outcome(dialect_error=str(exc))
    outcome = Outcome()
    try:
        with engine.transaction() as tx:
            result = tx.execute(statement)
            outcome.affected = result.rows_affected()
            if result._rows is not None:
                rows = [row_values(r) for r in result.all()]
                outcome.rows = rows if ordered else sorted(rows, key=_sort_key)
            if not keep:
                raise _Rollback
    except _Rollback:
        pass
    except QueryExecutionError as exc:
        outcome.error = type(exc).__name__
        outcome.affected = None
        outcome.rows = None
        outcome.message = str(exc)  # type: ignore[attr-defined]
    return outcome


def contents(engine: Engine, spec: ModelSpec) -> list[tuple[Any, ...]]:
    """Every row of the model's table, in id order."""
    return [row_values(r) for r in engine.execute(select(spec.model).order_by("id")).all()]


def check_dialect_error(name: str, message: str) -> None:
    """Fail unless `message` is one of the DialectErrors documented for the database."""
    patterns = DOCUMENTED_DIALECT_ERRORS[name]
    assert any(re.search(p, message) for p in patterns), (
        f"undocumented DialectError on {name}: {message}"
    )


@contextmanager
def tables(engines: dict[str, Engine], spec: ModelSpec) -> Iterator[None]:
    """The model's table on every database for the duration of the block."""
    for engine in engines.values():
        engine.drop_all(spec.model)
        engine.create_all(spec.model)
    try:
        yield
    finally:
        for engine in engines.values():
            engine.drop_all(spec.model)


def folds_beyond_ascii(rows: Sequence[tuple[Any, ...]], case: Case) -> bool:
    """True when an ilike may meet a non-ASCII letter: it folds ASCII only on PostgreSQL
    (C collation) and SQLite, all of Unicode on MySQL/MariaDB (a documented difference)."""
    if not case.uses_ilike:
        return False
    texts = [v for row in rows for v in row if isinstance(v, str)]
    texts += [v for v in case.statement._values if isinstance(v, str)]
    return not all(t.isascii() for t in texts)


# -- relational statements ----------------------------------------------------------------------


class Fetched:
    """What one database returned for a query: its rows, or the error it raised."""

    def __init__(self, rows: list[Any] | None = None, error: str | None = None,
                 dialect_error: str | None = None) -> None:
        self.rows = rows
        self.error = error
        self.dialect_error = dialect_error

    def __repr__(self) -> str:
        if self.dialect_error:
            return f"DialectError({self.dialect_error!r})"
        if self.error:
            return f"error {self.error}"
        return f"rows={self.rows!r}"


def fetch(engine: Engine, statement: Any) -> Fetched:
    """The rows of a query on one database (or the error it raised)."""
    try:
        statement.compile(engine.dialect)
    except DialectError as exc:
        return Fetched(dialect_error=str(exc))
    try:
        return Fetched(rows=engine.execute(statement).all())
    except QueryExecutionError as exc:
        return Fetched(error=f"{type(exc).__name__}: {str(exc).splitlines()[0]}")


class _Approx:
    """A quotient (avg) that databases round differently in its last digits (README, "What
    each database does differently", `sql.avg()`): equal within a relative 1e-12, same type."""

    __slots__ = ("value",)

    def __init__(self, value: float | Decimal) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Approx) or type(self.value) is not type(other.value):
            return False
        a, b = float(self.value), float(other.value)
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b))

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"~{self.value!r}"


def _typed(value: Any) -> Any:
    """A value as (its Python type, normalized value): 1 and 1.0, naive and aware differ."""
    if isinstance(value, Model):
        return (type(value).__name__,
                tuple(_typed(getattr(value, c.attr)) for c in meta_of(type(value)).columns))
    kind = type(value).__name__
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        kind += " (naive)"
    return (kind, normalize(value))


def canonical(case: Any, row: Any) -> tuple[Any, ...]:
    """A fetched row of a relational case in a comparable form."""
    if isinstance(row, Model):
        return (_typed(row),)
    fields = row.keys()
    return tuple(
        ("avg", _Approx(v)) if name in case.approximate and v is not None else _typed(v)
        for name, v in zip(fields, row, strict=True)
    )


def _check_types(case: Any, rows: list[Any]) -> None:
    """The promised types: a join side is its model (None only when left-joined), each
    aggregate label its function's type (count never None)."""
    sides = case.sides
    for row in rows:
        if not sides and not case.label_types:
            assert isinstance(row, Model), row
        for side in sides:
            value = row[side.qualifier]
            assert (value is None and side.optional) or type(value) is side.model, (
                f"{side.qualifier}: {value!r} in {row!r}"
            )
        for label, expected in case.label_types.items():
            value = row[label]
            assert value is not None or label not in case.never_null, (label, row)
            assert value is None or type(value) is expected, (
                f"{label}: {type(value).__name__} {value!r}, expected {expected.__name__}"
            )


def check_relational(case: Any, fetched: dict[str, Fetched]) -> None:
    """Every database that can run the query returns the same rows with the same types."""
    for name, outcome in fetched.items():
        if outcome.dialect_error:
            check_dialect_error(name, outcome.dialect_error)
    runnable = {n: f for n, f in fetched.items() if not f.dialect_error}
    assert "postgresql" in runnable, fetched["postgresql"]
    compared: dict[str, Any] = {}
    for name, outcome in runnable.items():
        if outcome.rows is None:
            compared[name] = ("error", outcome.error)
            continue
        _check_types(case, outcome.rows)
        rows = [canonical(case, r) for r in outcome.rows]
        compared[name] = rows if case.ordered else sorted(rows, key=repr)
    first = next(iter(compared.values()))
    found = "an error" if isinstance(first, tuple) else (
        "no row" if not first else "one row" if len(first) == 1 else "several rows")
    event(f"{case.kind}: {found}" + ("" if len(runnable) == 3 else
                                     f" (DialectError on {', '.join(set(fetched) - set(runnable))})"))
    assert all(rows == first for rows in compared.values()), (
        f"{case.kind} differs:\n" + "\n".join(f"{n}: {r!r}" for n, r in compared.items())
        + "\nSQL: " + case.statement.compile("postgresql").sql
    )
