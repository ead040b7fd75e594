"""Set operations: `union`, `union_all`, `intersect` and `except_` of selects.

The statements give the same number of columns, pairwise of one family (numbers, text,
bool, datetime, date, UUID, bytes); rows are named by the first statement (the signature
says so already), a column of numbers typed by the widest of the two (an int beside a float
is a float, beside a Decimal a Decimal), as the builder casts it; a union's column also holds
the other statement's NULL and its values beside a Literal column.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Context, Expression, ListExpr, MemberExpr, RefExpr, TupleExpr
from mypy.plugin import MethodContext
from mypy.types import AnyType, Instance, NoneType, Type, TypeOfAny, UnionType, get_proper_type

from .lib.definitions import chain, resolved
from .lib.families import RULE, same_family
from .lib.messages import COLUMN, COMPARE, describe, listed, near
from .lib.metadata import column_kind, model_facts
from .lib.names import SELECT
from .lib.row_types import JOINED_MODELS, fields_row, joined_models, statement_fields
from .lib.syntax import literal_str

__all__ = ["as_subquery", "combined", "order_by"]


def combined(ctx: MethodContext) -> Type:
    """`first.union(other)` and the other set operations."""
    assert isinstance(ctx.api, TypeChecker)
    api = ctx.api
    if not ctx.args or not ctx.args[0] or not ctx.arg_types[0]:
        return ctx.default_return_type
    first = statement_fields(ctx.type)
    other = statement_fields(ctx.arg_types[0][0])
    op = getattr(ctx.context, "callee", None)
    name = getattr(op, "name", "union")
    where = ctx.args[0][0]
    _check_members(api, ctx.context, name, where)
    if joined_models(ctx.arg_types[0][0]):
        api.fail(f"{name}(): {JOINED_MODELS}", where, code=COMPARE)
    if first is None or other is None:
        return ctx.default_return_type
    pairs = _member_fields(api, where, other)
    if len(first) != len(pairs):
        api.fail(f"{name}(): the statements have {len(first)} columns ({listed(first)}) and "
                 f"{len(pairs)} ({listed(n for n, _ in pairs)}); combined selects need the "
                 "same number of columns", where, code=COMPARE)
        return ctx.default_return_type
    widened = dict(first)
    for (a, a_type), (b, b_type) in zip(first.items(), pairs, strict=True):
        a_kind, b_kind = column_kind(a_type)[0], column_kind(b_type)[0]
        if a_kind == b_kind == "json":
            if name != "union_all":  # union_all moves them beside each other, never compares
                api.fail(f'{name}(): "{a}" and "{b}" are JSON columns, which are not compared, '
                         f"so {name}() cannot tell rows with them apart the same way on every "
                         "database; use union_all(), or combine the selects without them",
                         where, code=COMPARE)
        elif not same_family(a_kind, b_kind):
            api.fail(f'{name}(): column "{a}" is {describe(a_type, api.options)} but "{b}" is '
                     f"{describe(b_type, api.options)}; combined columns must be pairwise of "
                     f"one family ({RULE.partition('(')[2]}", where, code=COMPARE)
        elif _RANK.get(b_kind, 0) > _RANK.get(a_kind, 3):
            wide = api.named_type(_WIDER[b_kind])
            widened[a] = UnionType.make_union([wide, NoneType()]) if column_kind(a_type)[1] \
                else wide
        elif a_kind == "literal" and b_kind in ("literal", "str") and name.startswith("union"):
            # the rows hold the other statement's values too: its literals, or any text
            widened[a] = UnionType.make_union([a_type, b_type]) if b_kind == "literal" \
                else b_type
    texts = _texts(first, pairs)
    numbers = {k for k in first if widened[k] is not first[k] and k not in texts}
    for a, (_, b_type) in zip(first, pairs, strict=True):
        # (intersect's and except_'s rows are rows of the first statement)
        if name.startswith("union") and column_kind(b_type)[1] and not column_kind(widened[a])[1]:
            widened[a] = UnionType.make_union([widened[a], NoneType()])  # a NULL of the other's
    if widened == first:
        return ctx.default_return_type
    default = get_proper_type(ctx.default_return_type)
    if model_facts(_rows(ctx.type)) is not None or not isinstance(default, Instance):
        if not numbers:  # a model's rows are the library's: left as they are
            return ctx.default_return_type
        api.fail(f"{name}(): the first statement's rows are models, whose "
                 f"{', '.join(k for k in first if k in numbers)} cannot hold "
                 "another statement's wider numbers; select its columns so that the rows take "
                 "the wider type", where, code=COMPARE)
        return ctx.default_return_type
    return default.copy_modified(args=[fields_row(api, widened)])


_SET_OPERATIONS = frozenset({"union", "union_all", "intersect", "except_"})
_OWN = frozenset({"order_by", "limit", "offset", "for_update", "for_share"})


def _check_members(api: TypeChecker, context: Context, name: str, other: Expression) -> None:
    """What the builder refuses of the statements combined, read from their chains of calls
    as written: a member ordered, limited or locked; a set operation after the combined
    result's order_by()/limit(); intersect() after union()/except_()."""
    receiver = context.callee.expr if isinstance(context, CallExpr) and isinstance(
        context.callee, MemberExpr) else None
    calls = chain(api, receiver) if receiver is not None else []
    names = [c.callee.name for c in calls if isinstance(c.callee, MemberExpr)]
    combined = [n for n in names[:next((i for i, n in enumerate(names)
                                        if n not in _SET_OPERATIONS | {"order_by", "limit",
                                                                       "offset"}), len(names))]]
    while combined and combined[-1] not in _SET_OPERATIONS:  # the first member's own calls
        combined.pop()
    if combined:  # the receiver is a combined select
        if combined[0] not in _SET_OPERATIONS:
            api.fail(f"{name}() after order_by()/limit(): combine every select first, then "
                     "order", context, code=COMPARE)
        if name == "intersect" and any(n in _SET_OPERATIONS and n != "intersect"
                                       for n in combined):
            api.fail("intersect() after union()/except_(): PostgreSQL and MySQL would "
                     "intersect first, SQLite left to right; name the combined part with "
                     "sql.cte() first, or intersect first", context, code=COMPARE)
        members = [other]
    else:
        members = [*([receiver] if receiver is not None else []), other]
    for member in members:
        own = chain(api, member)
        for call in own:
            called = call.callee.name if isinstance(call.callee, MemberExpr) else ""
            if called == "aggregate":
                break  # what came before it is the grouped statement's
            if called in _OWN:
                api.fail(f"{name}(): a combined select takes no order_by(), limit(), "
                         "offset() or lock of its own; call order_by()/limit() on the "
                         "combined result", call.callee, code=COMPARE)
                break


def _texts(first: dict[str, Type], other: list[tuple[str, Type]]) -> set[str]:
    """The first statement's Literal columns beside text: widened by value, not by number."""
    return {a for (a, a_type), (_, b_type) in zip(first.items(), other, strict=True)
            if column_kind(a_type)[0] == "literal" and column_kind(b_type)[0] in ("literal", "str")}


def _member_fields(api: TypeChecker, where: Expression,
                   other: dict[str, Type]) -> list[tuple[str, Type]]:
    """The other statement's columns in order. Its row type holds a name once, so a
    `select(M, [...])` written in place that names a column twice (filling the first
    statement's columns with it) is read from its list: the column counts twice."""
    calls = chain(api, where)
    base = resolved(api, calls[-1].callee.expr) if calls and isinstance(
        calls[-1].callee, MemberExpr) else resolved(api, where)
    if not (isinstance(base, CallExpr) and isinstance(base.callee, RefExpr)
            and base.callee.fullname.rpartition(".")[2] == "select" and len(base.args) == 2
            and isinstance(base.args[1], ListExpr | TupleExpr)):
        return list(other.items())
    names = [literal_str(api, item) for item in base.args[1].items]
    listed_names = [n for n in names if n is not None]
    if (len(listed_names) != len(names) or len(set(listed_names)) == len(listed_names)
            or not all(n in other for n in listed_names)):
        return list(other.items())
    rest = [(k, t) for k, t in other.items() if k not in set(listed_names)]  # the labels
    return [(n, other[n]) for n in listed_names] + rest


#: how wide each kind of number is: a set operation's column is the widest of its members'
_RANK = {"int": 1, "decimal": 2, "float": 3}
_WIDER = {"decimal": "decimal.Decimal", "float": "builtins.float"}


def _rows(typ: Type) -> Type:
    """The row type of a statement type (a select's second argument)."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance) or not proper.args:
        return proper
    return proper.args[-1] if proper.type.fullname == SELECT else proper.args[0]


def order_by(ctx: MethodContext) -> Type:
    """`.order_by("column")` of a combined select: a row field of the first statement."""
    assert isinstance(ctx.api, TypeChecker)
    fields = statement_fields(ctx.type)
    columns = ctx.args[0] if ctx.args else []
    if fields is None or not columns:
        return ctx.default_return_type
    name = literal_str(ctx.api, columns[0])
    if name is not None and name not in fields:
        guess = near(name, fields)
        hint = f'; did you mean "{guess}"?' if guess else ""
        ctx.api.fail(f'order_by("{name}") of a combined select names a column of the first '
                     f"statement{hint} (columns: {listed(fields)})", columns[0], code=COLUMN)
    elif name is not None and column_kind(fields[name])[0] == "json":
        ctx.api.fail(f'order_by("{name}") of a combined select: "{name}" is a JSON column, '
                     "which is not compared; order by another column", columns[0], code=COMPARE)
    return ctx.default_return_type


def as_subquery(ctx: MethodContext) -> Type:
    """`.as_subquery("column")` of a combined select: a row field of the first statement, the
    subquery typed by it (as the combined rows type it)."""
    assert isinstance(ctx.api, TypeChecker)
    fields = statement_fields(ctx.type)
    columns = ctx.args[0] if ctx.args else []
    proper = get_proper_type(ctx.default_return_type)
    if fields is None or not columns or not isinstance(proper, Instance) or len(proper.args) != 2:
        return ctx.default_return_type
    name = literal_str(ctx.api, columns[0])
    if name is None:
        return ctx.default_return_type
    if name not in fields:
        guess = near(name, fields)
        hint = f'; did you mean "{guess}"?' if guess else ""
        ctx.api.fail(f'as_subquery("{name}") of a combined select names a column of the first '
                     f"statement{hint} (columns: {listed(fields)})", columns[0], code=COLUMN)
        return ctx.default_return_type
    return proper.copy_modified(args=[AnyType(TypeOfAny.special_form), fields[name]])
