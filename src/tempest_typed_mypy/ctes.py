"""Named selects: `sql.cte(name, statement)` and `sql.recursive_cte(name, base, step)` are
typed `NamedSelect[Row[TypedDict(...)]]` of the statement's (the base's) row fields, so
`select(cte)` has those rows, and its where() and order_by() take those columns (see
lib/row_types.named_select_facts).

A recursive named select's step is checked as the run time builds it: its row fields (from
the type of what it returns) are the base's by name, of the base's families, no wider a
number than the base's; and, when it is a lambda written in place, the statement it returns
reads the table it is given once, on the inner side, without order_by(), limit(), offset()
or aggregate() (read from its chain of calls)."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Context, Expression, LambdaExpr, MemberExpr, NameExpr, RefExpr
from mypy.plugin import FunctionContext
from mypy.types import CallableType, Instance, Type, get_proper_type

from tempest_typed._wording import (
    CTE_HIDES_TABLE,
    STEP_AGGREGATES,
    STEP_COLUMN_NAMES,
    STEP_COLUMNS,
    STEP_LEFT_JOINS,
    STEP_ORDERS,
    STEP_READS_ITSELF,
    STEP_READS_TWICE,
)

from .lib.families import same_family
from .lib.messages import COMPARE, PLAIN_NAME, VALUE, plain_name_problem
from .lib.metadata import column_kind
from .lib.row_types import JOINED_MODELS, fields_row, joined_models, statement_fields
from .lib.syntax import literal_str
from .lib.tables import visible_models

__all__ = ["named_select"]


def named_select(ctx: FunctionContext) -> Type:
    """`sql.cte(name, statement)`: a NamedSelect of the statement's rows;
    `sql.recursive_cte(name, base, step)` of the base's, its step checked against them."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    default = get_proper_type(ctx.default_return_type)
    _check_name(ctx, api)
    if len(ctx.args) < 2 or not ctx.args[1] or not ctx.arg_types[1] \
            or not isinstance(default, Instance) or len(default.args) != 1:
        return ctx.default_return_type
    if joined_models(ctx.arg_types[1][0]):
        api.fail(f"sql.cte(): {JOINED_MODELS}", ctx.args[1][0], code=COMPARE)
        return ctx.default_return_type
    fields = statement_fields(ctx.arg_types[1][0])
    if fields is None:
        # a statement written in place was inferred in the parameter's context, which left
        # its model Any: inferred again without it (errors were reported)
        with api.msg.filter_errors(), api.local_type_map:
            again = api.expr_checker.accept(ctx.args[1][0], type_context=None)
        fields = statement_fields(again)
    if fields is None or not fields:
        return ctx.default_return_type
    if len(ctx.args) > 2 and ctx.args[2] and ctx.arg_types[2]:
        _check_step(ctx, api, fields)
    return default.copy_modified(args=[fields_row(api, fields)])


def _shown(api: TypeChecker, ctx: FunctionContext) -> str:
    name = literal_str(api, ctx.args[0][0]) if ctx.args and ctx.args[0] else None
    return f'sql.recursive_cte("{name}", ...)' if name is not None else "sql.recursive_cte()"


_NUMBERS = frozenset({"int", "float", "decimal"})


def _check_step(ctx: FunctionContext, api: TypeChecker, base: dict[str, Type]) -> None:
    """The step's rows against the base's; what the step's statement does."""
    step = ctx.args[2][0]
    shown = _shown(api, ctx)
    if isinstance(step, LambdaExpr) and _check_statement(api, shown, step):
        return
    made = get_proper_type(ctx.arg_types[2][0])
    fields = statement_fields(made.ret_type) if isinstance(made, CallableType) else None
    if fields is None:
        return
    names = list(base)
    if len(fields) != len(base):
        api.fail(f"{shown}: the base has {len(base)} columns ({', '.join(names)}), the step "
                 f"{len(fields)}; {STEP_COLUMNS}", step, code=COMPARE)
        return
    if sorted(fields) != sorted(names):
        api.fail(f"{shown}: the step's columns are matched to the base's by name; the base has "
                 f"{', '.join(names)}, the step {', '.join(fields)}: {STEP_COLUMN_NAMES}",
                 step, code=COMPARE)
        return
    for name, typ in base.items():
        kind, kind_step = column_kind(typ)[0], column_kind(fields[name])[0]
        if "any" in (kind, kind_step) or kind == kind_step:
            continue
        if not same_family(kind, kind_step):
            api.fail(f'{shown}: column "{name}" is {kind} in the base but {kind_step} in the '
                     "step", step, code=COMPARE)
            return
        if {kind, kind_step} <= _NUMBERS:
            wide = "float" if "float" in (kind, kind_step) else "decimal"
            if wide != kind:
                fix = "sql.col(...) * 1.0" if wide == "float" else \
                    "sql.col(...) + Decimal('0.00')"
                api.fail(f'{shown}: column "{name}" is {kind} in the base but {kind_step} in '
                         "the step; the rows are typed by the base, so make the base's column "
                         f"a {wide} ({fix}, or sql.value() of a {wide})", step, code=COMPARE)
                return


def _check_statement(api: TypeChecker, shown: str, step: LambdaExpr) -> bool:
    """What the statement a lambda step returns does, read from its chain of calls; whether
    an error was reported."""
    table = step.arguments[0].variable if len(step.arguments) == 1 else None
    expr: Expression = step.expr()
    reads: list[str] = []
    problem: str | None = None
    context: Context = expr
    while isinstance(expr, CallExpr):
        callee = expr.callee
        if isinstance(callee, MemberExpr):
            if callee.name in ("order_by", "limit", "offset"):
                problem, context = STEP_ORDERS, expr
            elif callee.name == "aggregate" and problem is None:
                problem, context = STEP_AGGREGATES, expr
            elif callee.name in ("inner_join", "left_join") and expr.args \
                    and _is(expr.args[0], table):
                reads.append(callee.name)
            expr = callee.expr
            continue
        if isinstance(callee, RefExpr) and callee.fullname in _STARTS:
            if expr.args and _is(expr.args[0], table):
                reads.append("from")
            break
        return False  # not a statement built here: left to run time
    else:
        return False
    if problem is None and "left_join" in reads:
        problem = STEP_LEFT_JOINS
    if problem is None and not reads:
        problem = STEP_READS_ITSELF
    if problem is None and len(reads) > 1:
        problem = STEP_READS_TWICE.format(times=len(reads))
    if problem is None:
        return False
    api.fail(f"{shown}: {problem}", context, code=COMPARE)
    return True


#: the calls a statement starts from
_STARTS = ("tempest_typed.statements.select.select", "tempest_typed.statements.join.join")


def _is(expr: Expression, table: object) -> bool:
    return table is not None and isinstance(expr, NameExpr) and expr.node is table


def _check_name(ctx: FunctionContext, api: TypeChecker) -> None:
    """The name is a plain name (an identifier, no keyword, no leading '_'), and no table of
    a model the module sees (its own or imported), compared as the databases that fold a
    table name's case do: the named select would hide it."""
    if not ctx.args or not ctx.args[0]:
        return
    name = literal_str(api, ctx.args[0][0])
    if name is None:
        return
    problem = plain_name_problem(name)
    if problem is not None:
        api.fail(f"sql.cte({name!r}, ...): the name {problem}; it names the select as a table "
                 f"and qualifies its columns: write {PLAIN_NAME}", ctx.args[0][0], code=VALUE)
        return
    folded = name.casefold()
    for table, models in visible_models(api.modules, api.tree.fullname).items():
        if table.casefold() == folded and models:
            api.fail(f'sql.cte("{name}", ...): "{name}" is the table of the model '
                     f'{models[0].name}; {CTE_HIDES_TABLE}, e.g. "{name}_rows"', ctx.args[0][0],
                     code=VALUE)
            return
