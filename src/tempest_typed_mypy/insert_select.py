"""`insert(M).from_select(statement)`: the statement's row fields are columns of `M` (by
attribute name), each of the column's family, and together give every column `M`
requires."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.plugin import MethodContext
from mypy.types import Instance, Type, get_proper_type

from .lib.families import moves_to
from .lib.messages import COLUMN, COMPARE, INSERT, column_name, describe, unknown_column
from .lib.metadata import column_kind, model_facts
from .lib.row_types import statement_fields

__all__ = ["from_select"]


def from_select(ctx: MethodContext) -> Type:
    """`insert(M).from_select(stmt)`: each fetched field names a column of M."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    receiver = get_proper_type(ctx.type)
    if not ctx.args or not ctx.args[0] or not ctx.arg_types[0] \
            or not isinstance(receiver, Instance) or not receiver.args:
        return ctx.default_return_type
    facts = model_facts(receiver.args[0])
    fields = statement_fields(ctx.arg_types[0][0])
    if fields is None:
        # the parameter's `Any` was the context of a select written in place, which made
        # mypy infer its model as Any: inferred again without it (errors were reported)
        with api.msg.filter_errors(), api.local_type_map:
            again = api.expr_checker.accept(ctx.args[0][0], type_context=None)
        fields = statement_fields(again)
    if facts is None or fields is None:
        return ctx.default_return_type
    call = f"insert({facts.name}).from_select()"
    where = ctx.args[0][0]
    given: set[str] = set()
    for name, typ in fields.items():
        col = facts.columns.get(name)
        if col is None:
            api.fail(unknown_column(facts, name, f"{call} (a field of the select)"), where,
                     code=COLUMN)
            continue
        given.add(name)
        if not moves_to(col.kind, column_kind(typ)[0]):
            api.fail(f'{call}: {column_name(col)} is {describe(col.type, api.options)} but the '
                     f'select\'s "{name}" is {describe(typ, api.options)}; the columns must be '
                     "of one family", where, code=COMPARE)
    missing = [c.attr for c in facts.columns.values() if c.required and c.attr not in given]
    if missing and len(given) == len(fields):
        api.fail(f"{call}: the select gives no {', '.join(missing)}, which {facts.name} "
                 "requires", where, code=INSERT)
    return ctx.default_return_type
