"""SQL expressions: the only values that are not bound as parameters.

A value in where/set/values is either a scalar of the column's type, bound as a parameter,
or one of these branded objects. Nothing else is accepted, so a stray dict can never be
bound by mistake. These are plain immutable data; the dialects decide how to spell them.
The computed values (`Call`, `CaseValue`, `TypedValue`, `Over`) are resolved against a
statement's columns by statements/compute.py; the values inside them stay bound parameters.
"""

from __future__ import annotations

from typing import Final

from typing_extensions import override

__all__ = ["Backoff", "Call", "CaseValue", "ColumnReference", "Computed", "Excluded", "Expr",
           "Expression", "Now", "Over", "Raw", "ScalarValue", "TypedValue"]


class Expression:
    """Base class of the SQL expressions accepted wherever a value is."""

    __slots__ = ()

    def shape(self) -> tuple[object, ...]:
        """The expression's structure without its bound values (a cache key part)."""
        raise NotImplementedError

    def args(self) -> tuple[object, ...]:
        """The values this expression binds, in textual order."""
        return ()


class Raw(Expression):
    """Verbatim SQL, written by the programmer as a literal string."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    @override
    def shape(self) -> tuple[object, ...]:
        return ("raw", self.text)

    def __repr__(self) -> str:
        return f"sql.raw({self.text!r})"


class Expr(Expression):
    """SQL text with bound parameters: `parts[0] arg0 parts[1] arg1 ... parts[n]`."""

    __slots__ = ("parts", "values")

    def __init__(self, parts: tuple[str, ...], values: tuple[object, ...]) -> None:
        if len(parts) != len(values) + 1:
            raise ValueError("an Expr has one more text part than values")
        self.parts = parts
        self.values = values

    @override
    def shape(self) -> tuple[object, ...]:
        inner = tuple(v.shape() if isinstance(v, Expression) else None for v in self.values)
        return ("expr", self.parts, inner)

    @override
    def args(self) -> tuple[object, ...]:
        out: list[object] = []
        for value in self.values:
            if isinstance(value, Expression):
                out.extend(value.args())
            else:
                out.append(value)
        return tuple(out)

    def __repr__(self) -> str:
        text = "".join(
            part + ("" if i == len(self.values) else "{}") for i, part in enumerate(self.parts)
        )
        return f"sql.expr({text!r}, {', '.join(repr(v) for v in self.values)})"


class Now(Expression):
    """The current timestamp (UTC), optionally plus a number of seconds."""

    __slots__ = ("plus",)

    def __init__(self, plus: object = None) -> None:
        self.plus = plus

    @override
    def shape(self) -> tuple[object, ...]:
        if self.plus is None:
            return ("now",)
        if isinstance(self.plus, Expression):
            return ("now", self.plus.shape())
        return ("now", None)

    @override
    def args(self) -> tuple[object, ...]:
        if self.plus is None:
            return ()
        if isinstance(self.plus, Expression):
            return self.plus.args()
        return (self.plus,)

    def __repr__(self) -> str:
        return "sql.now()" if self.plus is None else f"sql.now(plus={self.plus!r})"


NOW: Final = Now()


class Computed(Expression):
    """An expression that takes arithmetic: `sql.col("likes") * 2 + sql.col("shares")`.

    `/` is true division: a float on every database (and NULL where the divisor is 0).
    """

    __slots__ = ()

    def _arith(self, op: str, other: object, reflected: bool = False) -> Call:
        return Call(op, (other, self) if reflected else (self, other))

    def __add__(self, other: object) -> Call:
        return self._arith("+", other)

    def __radd__(self, other: object) -> Call:
        return self._arith("+", other, True)

    def __sub__(self, other: object) -> Call:
        return self._arith("-", other)

    def __rsub__(self, other: object) -> Call:
        return self._arith("-", other, True)

    def __mul__(self, other: object) -> Call:
        return self._arith("*", other)

    def __rmul__(self, other: object) -> Call:
        return self._arith("*", other, True)

    def __truediv__(self, other: object) -> Call:
        return self._arith("/", other)

    def __rtruediv__(self, other: object) -> Call:
        return self._arith("/", other, True)


class Excluded(Computed):
    """The value an upsert tried to insert into `column`; it takes arithmetic
    (`sql.col("n") + sql.excluded("n")`) in on_conflict_do_update()'s set."""

    __slots__ = ("column",)

    def __init__(self, column: str) -> None:
        self.column = column

    @override
    def shape(self) -> tuple[object, ...]:
        return ("excluded", self.column)

    def __repr__(self) -> str:
        return f"sql.excluded({self.column!r})"


class Call(Computed):
    """A function of columns and values (sql.lower("email"), sql.date_trunc("month", c), ...)
    or arithmetic (`name` + - * /); a str argument is a column name."""

    __slots__ = ("arguments", "name", "option")

    def __init__(self, name: str, arguments: tuple[object, ...],
                 option: str | None = None) -> None:
        self.name = name
        self.arguments = arguments
        self.option = option

    @override
    def shape(self) -> tuple[object, ...]:
        return ("call", self.name, self.option, len(self.arguments))

    def over(self, *, partition_by: object = (), order_by: object = ()) -> Over:
        """This ranking function (row_number, rank, dense_rank, lag, lead) over a window."""
        return Over(self, partition_by, order_by)

    def __repr__(self) -> str:
        if self.name in ("+", "-", "*", "/"):
            return f"({self.arguments[0]!r} {self.name} {self.arguments[1]!r})"
        keyword = _KEYWORD_OPTIONS.get(self.name)
        if keyword is not None:  # a number given by keyword after the column: round, lag, lead
            shown = [repr(a) for a in self.arguments] + [f"{keyword}={self.option}"]
        else:
            shown = [repr(self.option)] if self.option is not None else []
            shown += [repr(a) for a in self.arguments]
        return f"sql.{self.name}({', '.join(shown)})"


#: the functions whose option is a keyword argument after the column, by its name
_KEYWORD_OPTIONS = {"round": "digits", "lag": "n", "lead": "n"}


class TypedValue(Computed):
    """sql.value(x): a bound value where a column name would be read (a function argument, a
    CASE branch, a computed column)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    @override
    def shape(self) -> tuple[object, ...]:
        return ("value",)

    @override
    def args(self) -> tuple[object, ...]:
        return (self.value,)

    def __repr__(self) -> str:
        return f"sql.value({self.value!r})"


class CaseValue(Computed):
    """sql.case((condition, value), ..., else_=value): the value of the first condition that
    holds (conditions in the where language)."""

    __slots__ = ("otherwise", "whens")

    def __init__(self, whens: tuple[tuple[object, object], ...], otherwise: object) -> None:
        self.whens = whens
        self.otherwise = otherwise

    @override
    def shape(self) -> tuple[object, ...]:
        return ("case", len(self.whens))

    def __repr__(self) -> str:
        return f"sql.case({', '.join(map(repr, self.whens))}, else_={self.otherwise!r})"


class Over(Computed):
    """A window function: a ranking function or an aggregate over the rows of its partition,
    in its order (`sql.sum("amount").over(order_by=["created_at"])` is a running total); it
    takes arithmetic (`sql.row_number().over(...) - 1`) in add_columns()."""

    __slots__ = ("function", "order_by", "partition_by")

    def __init__(self, function: object, partition_by: object, order_by: object) -> None:
        self.function = function
        self.partition_by = partition_by
        self.order_by = order_by

    @override
    def shape(self) -> tuple[object, ...]:
        return ("over",)

    def __repr__(self) -> str:
        return (f"{self.function!r}.over(partition_by={self.partition_by!r}, "
                f"order_by={self.order_by!r})")


class ColumnReference(Computed):
    """sql.col(name): a column where a value goes, `"column"` or `"alias.column"`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @override
    def shape(self) -> tuple[object, ...]:
        return ("col", self.name)

    def __repr__(self) -> str:
        return f"sql.col({self.name!r})"


class ScalarValue(Computed):
    """sql.scalar(subquery): the value a one-column subquery yields; it takes arithmetic
    (`sql.scalar(biggest) * 2`) as a column's value does."""

    __slots__ = ("subquery",)

    def __init__(self, subquery: object) -> None:
        self.subquery = subquery

    @override
    def shape(self) -> tuple[object, ...]:
        return ("scalar",)

    def __repr__(self) -> str:
        return f"sql.scalar({self.subquery!r})"


class Backoff(Expression):
    """An exponential retry delay in seconds: `first` doubled for each count of the `column`
    past 1 (the doubling stops at 2 ** 30), at most `cap`. Each dialect spells it."""

    __slots__ = ("cap", "column", "first")

    def __init__(self, column: str, first: float, cap: float) -> None:
        self.column = column
        self.first = first
        self.cap = cap

    @override
    def shape(self) -> tuple[object, ...]:
        return ("backoff", self.column)

    @override
    def args(self) -> tuple[object, ...]:
        return (self.first, self.cap)

    def __repr__(self) -> str:
        return f"Backoff({self.column!r}, {self.first!r}, {self.cap!r})"
