"""The `sql` namespace: raw, expr, now and excluded, the expressions accepted as values."""

from __future__ import annotations

from numbers import Real
from typing import Any, LiteralString

from .errors import ValidationError
from .expressions import NOW, ColumnReference, Excluded, Expr, Expression, Now, Raw, ScalarValue
from .statements.aggregate import AggregateFunction
from .statements.base import Statement
from .statements.query import Query
from .statements.where import ExistsCondition, Subquery

__all__ = ["Expression", "avg", "col", "count", "count_distinct", "excluded", "exists", "expr",
           "max", "min", "not_exists", "now", "raw", "scalar", "sum"]


def raw(text: LiteralString) -> Expression:
    """Verbatim SQL; pass a literal string only (the mypy plugin enforces it)."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"sql.raw() takes a non-empty literal string, got {text!r}")
    return Raw(text)


def _split_format(template: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            if template.startswith("{{", i):
                current.append("{")
                i += 2
                continue
            if template.startswith("{}", i):
                parts.append("".join(current))
                current = []
                i += 2
                continue
            raise ValidationError(
                f"sql.expr: only empty placeholders {{}} are allowed, found {template[i:i + 10]!r}"
                " (write {{ for a literal brace)"
            )
        if ch == "}":
            if template.startswith("}}", i):
                current.append("}")
                i += 2
                continue
            raise ValidationError("sql.expr: a lone } must be written }}")
        current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def expr(template: object, *values: object) -> Expression:
    """SQL text whose `{}` placeholders are bound parameters (or a t-string on Python 3.14)."""
    if type(template).__name__ == "Template" and type(template).__module__ == "string.templatelib":
        if values:
            raise ValidationError("sql.expr(t\"...\") takes no further arguments")
        texts: list[str] = []
        bound: list[object] = []
        pending = ""
        for item in template:  # type: ignore[attr-defined]  # a string.templatelib.Template (Python 3.14)
            if isinstance(item, str):
                pending += item
            else:
                texts.append(pending)
                pending = ""
                bound.append(item.value)
        texts.append(pending)
        return Expr(tuple(texts), tuple(bound))
    if not isinstance(template, str):
        raise ValidationError(f"sql.expr() takes a format string, got {type(template).__name__}")
    parts = _split_format(template)
    if len(parts) != len(values) + 1:
        raise ValidationError(
            f"sql.expr: {len(parts) - 1} placeholder(s) {{}} but {len(values)} value(s) given"
        )
    for value in values:
        if isinstance(value, dict | list | set | tuple) and not isinstance(value, Expression):
            raise ValidationError(
                f"sql.expr: a {type(value).__name__} cannot be bound as one parameter"
            )
    return Expr(tuple(parts), tuple(values))


def now(plus: float | Expression | None = None) -> Expression:
    """The current UTC timestamp, optionally `plus` seconds (a number or an expression)."""
    if plus is None:
        return NOW
    if isinstance(plus, bool) or not isinstance(plus, Real | Expression):
        raise ValidationError(f"sql.now(plus=...) takes seconds as a number or sql.* expression, got {plus!r}")
    return Now(plus)


def excluded(column: str) -> Expression:
    """The value that an upsert tried to insert into `column` (EXCLUDED / VALUES())."""
    if not isinstance(column, str):
        raise ValidationError(f"sql.excluded() takes a column name, got {column!r}")
    return Excluded(column)


def col(name: str) -> Expression:
    """A column where a value goes: `"column"`, or `"alias.column"` (a join alias, or the table
    of an enclosing statement)."""
    if not isinstance(name, str) or not name:
        raise ValidationError(f"sql.col() takes a column name, got {name!r}")
    return ColumnReference(name)


def _exists(query: object, negated: bool) -> ExistsCondition:
    name = "not_exists" if negated else "exists"
    if isinstance(query, Subquery):
        return ExistsCondition(query.key, query.values, negated, query.correlated)
    if isinstance(query, Query):
        return ExistsCondition(query._key(), query._values, negated, query._ctx.correlated)
    what = "an insert, update or delete" if isinstance(query, Statement) else repr(query)
    raise ValidationError(
        f"sql.{name}() takes a select, a join or an as_subquery(...), got {what}"
    )


def exists(query: object) -> ExistsCondition:
    """The condition that the subquery finds at least one row (EXISTS)."""
    return _exists(query, False)


def not_exists(query: object) -> ExistsCondition:
    """The condition that the subquery finds no row (NOT EXISTS)."""
    return _exists(query, True)


def scalar(subquery: Subquery[Any, Any]) -> Expression:
    """The one value a one-column subquery yields, as a value (NULL when it finds no row)."""
    if not isinstance(subquery, Subquery):
        raise ValidationError(
            "sql.scalar() takes a one-column subquery, select(...).as_subquery(column), got "
            f"{type(subquery).__name__}"
        )
    return ScalarValue(subquery)


def count(column: str | None = None) -> AggregateFunction[int]:
    """COUNT(*) of the rows, or COUNT(column) of its non-NULL values."""
    return AggregateFunction("count", column)


def count_distinct(column: str) -> AggregateFunction[int]:
    """COUNT(DISTINCT column): how many different non-NULL values."""
    if column is None:
        raise ValidationError("sql.count_distinct() takes a column name")
    return AggregateFunction("count", column, distinct=True)


def sum(column: str) -> AggregateFunction[Any]:
    """SUM(column): an int, float or Decimal as the column is; None over no value."""
    return AggregateFunction("sum", _named(column, "sum"))


def avg(column: str) -> AggregateFunction[Any]:
    """AVG(column): a float (a Decimal for Decimal columns); None over no value."""
    return AggregateFunction("avg", _named(column, "avg"))


def min(column: str) -> AggregateFunction[Any]:
    """MIN(column): of the column's type; None over no value."""
    return AggregateFunction("min", _named(column, "min"))


def max(column: str) -> AggregateFunction[Any]:
    """MAX(column): of the column's type; None over no value."""
    return AggregateFunction("max", _named(column, "max"))


def _named(column: object, func: str) -> str:
    if not isinstance(column, str) or not column:
        raise ValidationError(f"sql.{func}() takes a column name, got {column!r}")
    return column
