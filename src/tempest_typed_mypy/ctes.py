"""Named selects: `sql.cte(name, statement)` and `sql.recursive_cte(name, base, step)` are
typed `NamedSelect[Row[TypedDict(...)]]` of the statement's (the base's) row fields, so
`select(cte)` has those rows, and its where() and order_by() take those columns (see
lib/row_types.named_select_facts)."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.plugin import FunctionContext
from mypy.types import Instance, Type, get_proper_type

from tempest_typed._wording import CTE_HIDES_TABLE

from .lib.messages import COMPARE, VALUE
from .lib.row_types import JOINED_MODELS, fields_row, joined_models, statement_fields
from .lib.syntax import literal_str
from .lib.tables import visible_models

__all__ = ["named_select"]


def named_select(ctx: FunctionContext) -> Type:
    """`sql.cte(name, statement)`: a NamedSelect of the statement's rows."""
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
    return default.copy_modified(args=[fields_row(api, fields)])


def _check_name(ctx: FunctionContext, api: TypeChecker) -> None:
    """The name is no table of a model the module sees (its own or imported), compared as
    the databases that fold a table name's case do: the named select would hide it."""
    if not ctx.args or not ctx.args[0]:
        return
    name = literal_str(api, ctx.args[0][0])
    if name is None:
        return
    folded = name.casefold()
    for table, models in visible_models(api.modules, api.tree.fullname).items():
        if table.casefold() == folded and models:
            api.fail(f'sql.cte("{name}", ...): "{name}" is the table of the model '
                     f'{models[0].name}; {CTE_HIDES_TABLE}, e.g. "{name}_rows"', ctx.args[0][0],
                     code=VALUE)
            return
