"""The `sql` namespace: the expressions accepted as values (raw, expr, now, excluded, col,
scalar), the aggregates, the functions and window functions of computed columns, and the
named selects (cte, recursive_cte)."""

from __future__ import annotations

import datetime as _dt
import inspect as _inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from .errors import ValidationError
from .expressions import (
    NOW,
    Call,
    CaseValue,
    ColumnReference,
    Computed,
    Excluded,
    Expr,
    Expression,
    Now,
    Raw,
    ScalarValue,
    TypedValue,
)
from .row import Row
from .sqltext import PLACEHOLDER, check_fragment, check_unicode
from .statements.aggregate import AggregateFunction
from .statements.base import Statement
from .statements.compound import SetQuery
from .statements.compute import DATE_PARTS, DATE_UNITS
from .statements.cte import NamedSelect, named, recursive
from .statements.query import Query
from .statements.where import ExistsCondition, Subquery
from .values import untyped_value

__all__ = ["Expression", "abs", "avg", "case", "coalesce", "col", "count", "count_distinct", "cte",
           "recursive_cte",
           "date_trunc", "dense_rank", "excluded", "exists", "expr", "extract", "lag", "lead",
           "length", "lower", "max", "min", "not_exists", "now", "rank", "raw", "round",
           "row_number", "scalar", "sum", "upper", "value"]


def raw(text: LiteralString) -> Expression:
    """Verbatim SQL; pass a literal string only (the mypy plugin enforces it)."""
    found = _RAWS.get(text) if type(text) is str else None
    if found is not None:
        return found
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"sql.raw() takes a non-empty literal string, got {text!r}")
    check_unicode(text, "sql.raw()")
    check_fragment(text, "sql.raw()")
    made = Raw(str.__str__(text))
    if len(_RAWS) >= 4096:
        _RAWS.clear()
    _RAWS[made.text] = made
    return made


#: sql.raw() by text: a Raw is immutable, so one serves every call with its text (the seed's
#: claim writes sql.raw("attempts + 1") each time it is built): its text is checked once.
_RAWS: dict[str, Raw] = {}


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
        return _checked_expr(_checked_parts(texts), tuple(bound))
    if not isinstance(template, str):
        raise ValidationError(f"sql.expr() takes a format string, got {type(template).__name__}")
    parts = _TEMPLATES.get(template)
    if parts is None:
        parts = _checked_parts(_split_format(template))
        if len(_TEMPLATES) >= 4096:
            _TEMPLATES.clear()
        _TEMPLATES[template] = parts
    if len(parts) != len(values) + 1:
        raise ValidationError(
            f"sql.expr: {len(parts) - 1} placeholder(s) {{}} but {len(values)} value(s) given"
        )
    return _checked_expr(parts, values)


#: sql.expr templates already split and checked, by template. Splitting and checking
#: "{} + 1" on every call took 1.4 of the 2.6 us of sql.expr("{} + 1", 5) (timeit).
_TEMPLATES: dict[str, tuple[str, ...]] = {}


def _checked_parts(parts: list[str]) -> tuple[str, ...]:
    """The text parts of an sql.expr, once their text is known to stay within itself."""
    for part in parts:
        check_unicode(part, "sql.expr()")
    checked = tuple(str.__str__(p) for p in parts)
    check_fragment(PLACEHOLDER.join(checked), "sql.expr()")
    return checked


def _checked_expr(parts: tuple[str, ...], values: tuple[object, ...]) -> Expr:
    """The Expr of checked text parts and values: each value is an expression, or one that
    every driver binds as it is (kept as a copy of its own)."""
    bound: list[object] = []
    nested = False
    for i, value in enumerate(values):
        if isinstance(value, Expression):
            bound.append(value)
            nested = True
            continue
        if isinstance(value, dict | list | set | frozenset | tuple):
            raise ValidationError(
                f"sql.expr: a {type(value).__name__} cannot be bound as one parameter"
            )
        bound.append(untyped_value(value, f"sql.expr() value {i + 1}"))
    made = Expr(parts, tuple(bound))
    if nested:
        # The text as the statement will hold it, the expressions inside written out: "a -{}"
        # of sql.raw("-1") is "a --1", a comment, though each text alone is fine.
        check_fragment(_written(made), "sql.expr()")
    return made


def _written(value: object) -> str:
    """An expression's text with its bound values as PLACEHOLDER and the expressions inside
    it written out (those the dialect writes, such as sql.now(), as a parenthesis)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Expr):
        out = [value.parts[0]]
        for inner, part in zip(value.values, value.parts[1:], strict=True):
            out.append(_written(inner))
            out.append(part)
        return "".join(out)
    if isinstance(value, Expression):
        return "(e)"
    return PLACEHOLDER


def now(plus: float | Expression | None = None) -> Now:
    """The current UTC timestamp, optionally `plus` seconds (a number or an expression)."""
    if plus is None:
        return NOW
    if isinstance(plus, Expression):
        return Now(plus)
    if isinstance(plus, bool) or not isinstance(plus, int | float):
        raise ValidationError(
            f"sql.now(plus=...) takes seconds as a number (int or float) or an sql.* expression, got "
            f"{type(plus).__name__} {plus!r}"
        )
    seconds = int.__int__(plus) if isinstance(plus, int) else float.__float__(plus)
    if not -_NEAR <= seconds <= _NEAR:
        _check_reachable(seconds)
    return Now(seconds)


#: a plus within this many seconds (about 31 years) keeps the result a datetime of every
#: database: no need to work it out
_NEAR = 1e9


def _check_reachable(seconds: float) -> None:
    """Refuse a plus whose result is no timestamp: SQLite and MySQL would give NULL for it."""
    problem = None
    if not math.isfinite(seconds):
        problem = "it is not a finite number"
    else:
        try:
            _dt.datetime.now(_dt.UTC) + _dt.timedelta(seconds=seconds)
        except OverflowError:
            problem = "now plus that is outside the years 1 to 9999"
    if problem is not None:
        raise ValidationError(
            f"sql.now(plus={seconds!r}): {problem}, where SQLite and MySQL would give NULL; "
            "pass a number of seconds that keeps the result a date"
        )


def excluded(column: str) -> Excluded:
    """The value that an upsert tried to insert into `column` (EXCLUDED / VALUES())."""
    if not isinstance(column, str):
        raise ValidationError(f"sql.excluded() takes a column name, got {column!r}")
    return Excluded(column)


def col(name: str) -> Computed:
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
    if isinstance(query, SetQuery):
        raise ValidationError(
            f"sql.{name}() takes a select, a join or an as_subquery(...), got a set operation "
            "(union, intersect, except_); name it with sql.cte() and pass a select of that")
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


def scalar(subquery: Subquery[Any, Any]) -> ScalarValue:
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


# -- computed values: a str argument is a column name, sql.value(x) a bound value ----------


def value(x: object) -> Computed:
    """A bound value where a column name would be read: sql.value("draft") in a CASE."""
    return TypedValue(x)


if TYPE_CHECKING:  # a type checker reports a call with one value itself
    def coalesce(first: object, second: object, /, *more: object) -> Computed:
        """The first of the values that is not NULL (COALESCE)."""
else:
    def coalesce(*values: object) -> Computed:
        """The first of the values that is not NULL (COALESCE)."""
        if len(values) < 2:
            raise ValidationError(
                f"sql.coalesce() takes two values or more, got {len(values)}: the first of "
                "them that is not NULL; give the fallback too, e.g. sql.coalesce(\"nickname\", "
                "\"name\"), or use the one value as it is")
        return Call("coalesce", values)

    # what inspect and the stubs show: the signature type checkers see
    coalesce.__signature__ = _inspect.Signature([
        _inspect.Parameter("first", _inspect.Parameter.POSITIONAL_ONLY),
        _inspect.Parameter("second", _inspect.Parameter.POSITIONAL_ONLY),
        _inspect.Parameter("more", _inspect.Parameter.VAR_POSITIONAL)])


def lower(column: object) -> Computed:
    """The text in lower case."""
    return Call("lower", (column,))


def upper(column: object) -> Computed:
    """The text in upper case."""
    return Call("upper", (column,))


def length(column: object) -> Computed:
    """How many characters the text has (characters, not bytes, on every database)."""
    return Call("length", (column,))


def abs(column: object) -> Computed:
    """The number without its sign."""
    return Call("abs", (column,))


def round(column: object, digits: int = 0) -> Computed:
    """The number rounded to `digits` places after the point, halves away from zero."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 30:
        raise ValidationError(f"sql.round(digits=...) takes an int from 0 to 30, got {digits!r}")
    return Call("round", (column,), str(digits))


def date_trunc(unit: str, column: object) -> Computed:
    """The datetime (in UTC) or date cut down to its year, month, day, hour or minute."""
    if unit not in DATE_UNITS:
        raise ValidationError(
            f"sql.date_trunc() takes a unit of {', '.join(map(repr, DATE_UNITS))}, got {unit!r}")
    return Call("date_trunc", (column,), unit)


def extract(part: str, column: object) -> Computed:
    """One part of a datetime (in UTC) or date as an int; `dow` is 0 for Sunday to 6."""
    if part not in DATE_PARTS:
        raise ValidationError(
            f"sql.extract() takes a part of {', '.join(map(repr, DATE_PARTS))}, got {part!r}")
    return Call("extract", (column,), part)


def case(*whens: tuple[object, object], else_: object = None) -> Computed:
    """The value of the first (condition, value) whose condition holds (the where language),
    else `else_` (NULL when not given)."""
    return CaseValue(tuple(whens), else_)


def row_number() -> Call:
    """The row's number in its window, from 1: add .over(partition_by=, order_by=)."""
    return Call("row_number", ())


def rank() -> Call:
    """The row's rank in its window, with gaps after ties: add .over(...)."""
    return Call("rank", ())


def dense_rank() -> Call:
    """The row's rank in its window, without gaps after ties: add .over(...)."""
    return Call("dense_rank", ())


def _offset(name: str, column: object, n: int) -> Call:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 2**31 - 1:
        raise ValidationError(f"sql.{name}(n=...) takes an int from 0 to {2**31 - 1}, got {n!r}")
    return Call(name, (column,), str(n))


def lag(column: object, n: int = 1) -> Call:
    """The value `n` rows before this one in its window (NULL before the first): .over(...)."""
    return _offset("lag", column, n)


def lead(column: object, n: int = 1) -> Call:
    """The value `n` rows after this one in its window (NULL after the last): .over(...)."""
    return _offset("lead", column, n)


def cte(name: str, statement: object) -> NamedSelect[Row]:
    """The select under a name (WITH name AS (...)): select() and join() take it as a model,
    its columns the statement's row fields."""
    return named(name, statement)


#: a recursive named select's rows: its base's, which its step is given
_R = TypeVar("_R")


def recursive_cte(name: str, base: Statement[_R], step: Callable[[NamedSelect[_R]], object]
                  ) -> NamedSelect[_R]:
    """A named select that reads itself (WITH RECURSIVE): the rows of `base`, then of
    `step(table)` over the rows found so far, until it finds none. `step` gets the named
    select being defined and joins it, e.g. `lambda t: join(Comment, "c").inner_join(t, "t",
    {"c.parent_id": "t.id"}).project({...})`, with the same columns as `base`."""
    return recursive(name, base, step)
