"""The computed-column language: the type of an `sql.*` expression (functions, arithmetic,
CASE, windows, sql.scalar, sql.value) written in add_columns(), in an aggregate() group or as
a value (a where operand, set(), values()), and of an aggregate, with its arguments checked as
the run time checks them. Part of the foundation: imports no check.

The expression is read as written: `sql.length("title")` is typed `Computed` by its
signature, so its result type comes from the call and the column it names. A name is
followed to the one assignment that gave it its value in the same module (see
lib/definitions.py); anything else built elsewhere is not: its label is `Any`.

A CASE holds conditions of the where language, and a condition holds values, which may be
expressions again: the caller passes the condition checker (conditions.check_condition), so
that this module stays below the where language, which imports it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from mypy.nodes import (
    CallExpr,
    Expression,
    FloatExpr,
    IntExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    TupleExpr,
    Var,
)
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    NoneType,
    Type,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

from tempest_typed._wording import JSON_NOT_COMPARED, WINDOW_NOT_BY_JSON

from .definitions import assigned, resolved
from .families import moves_to
from .messages import AGGREGATE, OPERATOR, VALUE, column_name, describe, listed, near
from .metadata import Column, column_kind, instance, non_null
from .names import AGGREGATE_FUNCTION, COL, EXCLUDED, SCALAR, SUBQUERY
from .scopes import JoinScope, Scope
from .syntax import callee_name, literal_str

__all__ = [
    "AGGREGATES", "COMPUTED", "DATE_PARTS", "DATE_UNITS", "ConditionCheck", "Typer",
    "aggregate_result", "computed_type", "or_none",
]

#: checks one condition of the where language at the place of a scope
ConditionCheck = Callable[[Scope, Expression], None]

_SQL = "tempest_typed.sql."
#: full name -> the aggregate it computes (count_distinct counts)
AGGREGATES = {f"{_SQL}{name}": name for name in ("count", "sum", "avg", "min", "max")}
AGGREGATES[f"{_SQL}count_distinct"] = "count"
NUMBERS = frozenset({"int", "float", "decimal", "any"})
ORDERED = frozenset({"int", "float", "decimal", "datetime", "date", "str", "literal", "any"})
TEXT = frozenset({"str", "literal", "any"})
TIMES = frozenset({"datetime", "date", "any"})
#: the runtime's units and parts (tempest_typed.statements.compute)
DATE_UNITS = ("year", "month", "day", "hour", "minute")
DATE_PARTS = (*DATE_UNITS, "dow")
_RANKING = frozenset({"row_number", "rank", "dense_rank"})
_OFFSETS = frozenset({"lag", "lead"})
_ARITHMETIC = frozenset({"+", "-", "*", "/"})

#: id(type) -> (the type, `type | None`): one object per column type, so that rows holding
#: the same computed types can be shared (see row_types.fields_row)
_OR_NONE: dict[int, tuple[Type, Type]] = {}


def or_none(typ: Type) -> Type:
    """`typ | None`, made once per type object."""
    hit = _OR_NONE.get(id(typ))
    if hit is not None and hit[0] is typ:
        return hit[1]
    found = UnionType.make_union([non_null(typ), NoneType()])
    if len(_OR_NONE) >= 4096:
        _OR_NONE.clear()
    _OR_NONE[id(typ)] = (typ, found)
    return found


def _at(scope: Scope, where: str) -> Scope:
    """The same scope, naming another place in messages."""
    moved = copy.copy(scope)
    moved.where = where
    return moved


#: the values arithmetic takes beside expressions (a bool is refused as no number)
_NUMBER_TYPES = frozenset({"builtins.int", "builtins.float", "decimal.Decimal"})


def _value_column(typ: Type, what: str) -> Column:
    """A column describing a computed value of `typ`."""
    kind, nullable, literals = column_kind(typ)
    return Column("", what, typ, kind, nullable, False, False, None, literals)


def _named(col: Column) -> str:
    return column_name(col) if col.model else col.attr


def aggregate_result(scope: Scope, place: str, value: CallExpr, name: str) -> Type:
    """The type of an aggregate's values (`sql.sum("total")`), reporting a column it does not
    take; `name` is the function as written (sum, count_distinct, ...), `place` where it is
    (`for "label"`)."""
    api = scope.api
    func = AGGREGATES[f"{_SQL}{name}"]
    if not value.args:
        return instance(api.modules, "builtins.int")
    col = _at(scope, f"sql.{name}() {place}").column(value.args[0])
    if col is None:
        return AnyType(TypeOfAny.from_error)
    rule = ""
    if col.kind == "json":
        rule = "a JSON column cannot be aggregated"
    elif func in ("sum", "avg") and col.kind not in NUMBERS:
        rule = f"{func} takes numbers only (int, float, Decimal)"
    elif func in ("min", "max") and col.kind not in ORDERED:
        rule = f"{func} takes numbers, dates, times and strings"
    if rule:
        written = literal_str(api, value.args[0]) or col.attr
        scope.fail(f'sql.{name}("{written}") {place}: {column_name(col)} is '
                   f"{describe(col.type, api.options)}; {rule}", value, AGGREGATE)
        return AnyType(TypeOfAny.from_error)
    if func == "count":
        return instance(api.modules, "builtins.int")
    if func == "avg" and col.kind in ("int", "float"):
        return or_none(instance(api.modules, "builtins.float"))
    return or_none(col.type)


class Typer:
    """Types the expressions of one place (a label, a where operand, a set() value),
    reporting what the run time would refuse.

    `place` ends the messages' first words (`for "label"`, `in where()`), `top` names the
    place itself (`add_columns() for "label"`); `conditions` checks a CASE's conditions.
    `reads` tells, after value(), whether the expression read a column of the statement.
    """

    def __init__(self, scope: Scope, place: str, top: str, conditions: ConditionCheck) -> None:
        self.scope = scope
        self.api = scope.api
        self.place = place
        self.top = top
        self.conditions = conditions
        self.reads = False
        #: the variables being followed to their value (`c = sql.lower(c)` is no loop)
        self.following: set[Var] = set()

    def _type(self, fullname: str, nullable: bool = False) -> Type:
        typ: Type = instance(self.api.modules, fullname)
        return or_none(typ) if nullable else typ

    def _where(self, func: str | None) -> str:
        if func is None:
            return self.top
        if func == "over":
            return f'over() {self.place}'
        return f'sql.{func}() {self.place}'

    def column(self, expr: Expression, func: str) -> Column | None:
        """A function's argument: a column name, sql.col(), a value or another function."""
        return self.value(expr, func)

    def value(self, expr: Expression, func: str | None = None) -> Column | None:
        """The column describing an expression's values (a `str` is a column name); None
        when it cannot be told."""
        api = self.api
        if literal_str(api, expr) is not None:
            return self._read(_at(self.scope, self._where(func)).column(expr))
        if isinstance(expr, NameExpr) and isinstance(expr.node, Var):
            held = assigned(api, expr)
            if held is None or expr.node in self.following:
                return None
            self.following.add(expr.node)
            try:
                return self.value(held, func)
            finally:
                self.following.discard(expr.node)
        if isinstance(expr, IntExpr):
            return _value_column(self._type("builtins.int"), "an int")
        if isinstance(expr, FloatExpr):
            return _value_column(self._type("builtins.float"), "a float")
        if isinstance(expr, OpExpr) and expr.op in _ARITHMETIC:
            return self._arithmetic(expr)
        if not isinstance(expr, CallExpr):
            return None
        callee = callee_name(expr)
        if callee == COL and expr.args:
            return self._col(expr.args[0], func or "col")
        if callee == SCALAR and expr.args:
            return self._scalar(expr.args[0])
        if callee == f"{_SQL}value" and expr.args:
            typ = get_proper_type(api.lookup_type_or_none(expr.args[0]))
            if typ is None or isinstance(typ, AnyType):
                return None
            if isinstance(typ, Instance) and typ.last_known_value is not None:
                typ = typ.copy_modified(last_known_value=None)
            if isinstance(typ, LiteralType):
                typ = typ.fallback
            return _value_column(typ, "sql.value()")
        if callee == f"{_SQL}case":
            return self._case(expr)
        if callee == f"{_SQL}now":  # the current timestamp, a datetime everywhere
            return _value_column(self._type("datetime.datetime"), "sql.now()")
        if callee == EXCLUDED:
            return self._excluded(expr)
        if callee is not None and callee.startswith(_SQL):
            short = callee[len(_SQL):]
            if callee in AGGREGATES:
                self.scope.fail(f'sql.{short}() {self.place}: an aggregate beside each '
                                f"row is a window function, sql.{short}(...).over("
                                "partition_by=[...]); aggregate() computes one per group",
                                expr, AGGREGATE)
                return None
            if short in _RANKING or short in _OFFSETS:
                self.scope.fail(f'sql.{short}() {self.place} is a window function: add '
                                ".over(partition_by=[...], order_by=[...]) to say over which "
                                "rows", expr, AGGREGATE)
                return None
            return self._function(short, expr)
        if isinstance(expr.callee, MemberExpr) and expr.callee.name == "over":
            return self._over(expr.callee.expr, expr)
        return None

    def _read(self, col: Column | None) -> Column | None:
        """A column the expression reads (None: an unknown one, reported)."""
        if col is not None:
            self.reads = True
        return col

    def _col(self, arg: Expression, func: str) -> Column | None:
        name = literal_str(self.api, arg)
        if name is None:
            return None
        scope = _at(self.scope, self._where(func))
        if isinstance(scope, JoinScope):
            return self._read(scope.lookup(name, arg))
        if "." in name:  # `table.column` of the statement's own table: the run time checks
            self.reads = True
            return None
        return self._read(scope.column(arg))

    def _number(self, expr: Expression) -> Column | None:
        """A number given as a value beside arithmetic (`sql.col("cents") + Decimal("0.5")`,
        a variable holding an int): typed by its type; None for anything else."""
        callee = callee_name(expr)
        if callee is not None and callee.startswith(_SQL):
            return None
        typ = get_proper_type(self.api.lookup_type_or_none(expr))
        if isinstance(typ, Instance) and typ.type.fullname in _NUMBER_TYPES:
            return _value_column(self._type(typ.type.fullname), "a number")
        return None

    def _excluded(self, expr: CallExpr) -> Column | None:
        """sql.excluded("column") inside an expression: a column of the row an upsert tried
        to insert, so only in an upsert's set."""
        if not self.scope.allow_excluded:
            self.scope.fail(f"sql.excluded() {self.place}: it names the row an upsert tried to "
                            "insert, so it belongs in on_conflict_do_update(..., set)", expr,
                            VALUE)
            return None
        if not expr.args:
            return None
        inner = Scope(self.api, self.scope.facts, f"sql.excluded() {self.place}")
        return inner.column(expr.args[0])

    def _scalar(self, arg: Expression) -> Column | None:
        typ = get_proper_type(self.api.lookup_type_or_none(arg))
        if (isinstance(typ, Instance) and typ.type.fullname == SUBQUERY
                and len(typ.args) == 2
                and not isinstance(get_proper_type(typ.args[1]), AnyType)):
            return _value_column(or_none(typ.args[1]), "sql.scalar()")
        return None

    def _need(self, func: str, col: Column, kinds: frozenset[str], what: str,
              expr: Expression, option: str | None = None) -> bool:
        if col.kind in kinds:
            return True
        written = literal_str(self.api, expr)
        shown = f'"{written}"' if written is not None else "..."
        if option is not None:
            shown = f'"{option}", {shown}'
        self.scope.fail(f'sql.{func}({shown}) {self.place}: {_named(col)} is '
                        f"{describe(col.type, self.api.options)}; {func} takes {what}",
                        expr, VALUE)
        return False

    def _arithmetic(self, expr: OpExpr) -> Column | None:
        cols: list[Column] = []
        for side in (expr.left, expr.right):
            col = self.column(side, "col") or self._number(side)
            if col is None:
                return None
            if col.kind not in NUMBERS:
                self.scope.fail(f'"{expr.op}" {self.place}: {_named(col)} is '
                                f"{describe(col.type, self.api.options)}; arithmetic takes "
                                "numbers (int, float, Decimal)", side, VALUE)
                return None
            cols.append(col)
        kinds = {c.kind for c in cols}
        nullable = any(c.nullable for c in cols)
        if "any" in kinds:
            return None
        if expr.op == "/":  # true division; NULL where the divisor is 0
            return _value_column(self._type("builtins.float", True), "a quotient")
        name = ("builtins.float" if "float" in kinds
                else "decimal.Decimal" if "decimal" in kinds else "builtins.int")
        return _value_column(self._type(name, nullable), "arithmetic")

    def _function(self, func: str, expr: CallExpr) -> Column | None:
        api = self.api
        args = list(expr.args)
        if func in ("date_trunc", "extract"):
            if len(args) < 2:
                return None
            option = literal_str(api, args[0])
            allowed = DATE_UNITS if func == "date_trunc" else DATE_PARTS
            what = "unit" if func == "date_trunc" else "part"
            if option is not None and option not in allowed:
                guess = near(option, allowed)
                hint = f'; did you mean "{guess}"?' if guess else ""
                self.scope.fail(f'sql.{func}() {self.place}: the {what} "{option}" is '
                                f"not one of {listed(allowed)}{hint}", args[0], VALUE)
                option = None
            col = self.column(args[1], func)
            if col is None or not self._need(func, col, TIMES, "a datetime or date column",
                                             args[1], option or "..."):
                return None
            if col.kind == "date" and option in ("hour", "minute"):
                self.scope.fail(f'sql.{func}() {self.place}: {_named(col)} is a date, '
                                f"which has no {option}", args[0], VALUE)
                return None
            if func == "extract":
                return _value_column(self._type("builtins.int", col.nullable), "sql.extract()")
            return _value_column(col.type, "sql.date_trunc()")
        if func not in ("coalesce", "lower", "upper", "length", "abs", "round") or not args:
            return None
        if func != "coalesce":
            args = args[:1]
        cols: list[Column] = []
        for item in args:
            col = self.column(item, func)
            if col is None:
                return None
            cols.append(col)
        first = cols[0]
        if func in ("lower", "upper", "length"):
            if not self._need(func, first, TEXT, "text", args[0]):
                return None
            name = "builtins.int" if func == "length" else "builtins.str"
            return _value_column(self._type(name, first.nullable), f"sql.{func}()")
        if func in ("abs", "round"):
            if not self._need(func, first, NUMBERS, "numbers", args[0]):
                return None
            return _value_column(first.type, f"sql.{func}()")
        for col, item in zip(cols[1:], args[1:], strict=True):
            if not moves_to(first.kind, col.kind):
                self.scope.fail(f'sql.coalesce() {self.place}: {_named(first)} is '
                                f"{describe(first.type, api.options)} but {_named(col)} is "
                                f"{describe(col.type, api.options)}; coalesce takes values "
                                "of one family", item, VALUE)
                return None
        base = self._widest(cols)
        typ = or_none(base) if all(c.nullable for c in cols) else base
        return _value_column(typ, "sql.coalesce()")

    def _widest(self, cols: list[Column]) -> Type:
        """The type of a coalesce or CASE of columns of one family, as arithmetic widens (an
        int beside a float is a float, beside a Decimal a Decimal; a Literal beside other text
        is text), without None."""
        kinds = {c.kind for c in cols}
        if len(kinds) > 1 and kinds <= NUMBERS - {"any"}:
            if "float" in kinds:
                return self._type("builtins.float")
            if "decimal" in kinds:
                return self._type("decimal.Decimal")
        first = cols[0]
        if first.kind == "literal" and any(c.kind != "literal" for c in cols):
            return self._type("builtins.str")
        return non_null(first.type)

    def _case(self, expr: CallExpr) -> Column | None:
        scope = _at(self.scope, self._where("case"))
        results: list[Column | None] = []
        otherwise: Expression | None = None
        for name, item in zip(expr.arg_names, expr.args, strict=True):
            if name == "else_":
                otherwise = item
                continue
            if not isinstance(item, TupleExpr) or len(item.items) != 2:
                return None
            self.conditions(scope, item.items[0])
            self.reads = True  # a condition compares the statement's columns
            results.append(self.value(item.items[1], "case"))
        if otherwise is not None:
            results.append(self.value(otherwise, "case"))
        if not results or any(r is None for r in results):
            return None
        cols = [r for r in results if r is not None]
        first = cols[0]
        for col in cols[1:]:
            if not moves_to(first.kind, col.kind):
                self.scope.fail(f'sql.case() {self.place}: the branches are '
                                f"{describe(first.type, self.api.options)} and "
                                f"{describe(col.type, self.api.options)}; a CASE yields "
                                "values of one family", expr, VALUE)
                return None
        base = self._widest(cols)
        if first.kind == "literal":
            base = self._type("builtins.str")
        nullable = otherwise is None or any(c.nullable for c in cols)
        return _value_column(or_none(base) if nullable else base, "sql.case()")

    def _over(self, function: Expression, expr: CallExpr) -> Column | None:
        function = resolved(self.api, function)
        for name, item in zip(expr.arg_names, expr.args, strict=True):
            if name not in ("partition_by", "order_by") or not isinstance(item, TupleExpr | ListExpr):
                continue
            for entry in item.items:
                if name == "order_by" and isinstance(entry, TupleExpr) and entry.items:
                    direction = (literal_str(self.api, entry.items[1])
                                 if len(entry.items) == 2 else None)
                    if direction is not None and direction not in ("asc", "desc"):
                        self.scope.fail(f"{self._where('over')}: direction is 'asc' or 'desc', "
                                        f"got {direction!r}", entry.items[1], VALUE)
                    entry = entry.items[0]
                col = self.column(entry, "over")
                if col is not None and col.kind == "json" and col.model:
                    self.scope.fail(f"{self._where('over')}: {column_name(col)} "
                                    f"{JSON_NOT_COMPARED}; {WINDOW_NOT_BY_JSON}", entry,
                                    OPERATOR)
        callee = callee_name(function)
        if not isinstance(function, CallExpr) or callee is None:
            typ = get_proper_type(self.api.lookup_type_or_none(function))
            if isinstance(typ, Instance) and typ.type.fullname == AGGREGATE_FUNCTION and \
                    typ.args and not isinstance(get_proper_type(typ.args[0]), AnyType):
                return _value_column(typ.args[0], "a window")
            return None
        short = callee[len(_SQL):] if callee.startswith(_SQL) else ""
        if short == "count_distinct":
            self.scope.fail(f"sql.count_distinct().over() {self.place}: no database computes "
                            "a DISTINCT aggregate over a window; count the distinct values "
                            "per group with aggregate(), name that select with sql.cte() and "
                            "join it on the group columns", expr, AGGREGATE)
            return None
        if callee in AGGREGATES:
            result = aggregate_result(self.scope, self.place, function, short)
            if isinstance(get_proper_type(result), AnyType):
                return None
            return _value_column(result, "a window")
        if (short in _RANKING or short in _OFFSETS) and not any(
                name == "order_by" and not (isinstance(item, ListExpr | TupleExpr)
                                            and not item.items)
                for name, item in zip(expr.arg_names, expr.args, strict=True)):
            does = "numbers rows" if short in _RANKING else "reads another row"
            self.scope.fail(f'sql.{short}().over() {self.place}: {short} {does} in an '
                            "order: pass order_by=[...]", expr, AGGREGATE)
            return None
        if short in _RANKING:
            return _value_column(self._type("builtins.int"), f"sql.{short}()")
        if short in _OFFSETS and function.args:
            col = self.column(function.args[0], short)
            return None if col is None else _value_column(or_none(col.type), f"sql.{short}()")
        return None


#: the classes of the expressions this module types (sql.col's ColumnReference is one too,
#: but a value that is a reference is checked as one: references.py)
COMPUTED = ("tempest_typed.expressions.Computed", "tempest_typed.expressions.Over")


def computed_type(scope: Scope, label: str, expr: Expression,
                  conditions: ConditionCheck) -> Type:
    """The type of a computed column's values, reporting the arguments the run time refuses;
    `Any` when the expression does not say."""
    col = Typer(scope, f'for "{label}"', f'add_columns() for "{label}"', conditions).value(expr)
    return AnyType(TypeOfAny.special_form) if col is None else col.type
