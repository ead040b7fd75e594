"""`Queue.run(handler)` / `Queue.process(handler)` with a handler whose call would not run its
work: an `async def` function (its call only makes a coroutine, which the blocking queue would
never await) or a generator function (its call runs none of its body), as the run time
refuses them before anything is claimed."""

from __future__ import annotations

from mypy.nodes import Expression, FuncDef, RefExpr
from mypy.plugin import MethodContext
from mypy.types import CallableType, Instance, Overloaded, Type, get_proper_type

from tempest_typed._wording import ASYNC_HANDLER, GENERATOR_HANDLER

from .lib.messages import VALUE

__all__ = ["check_async_handler", "check_handler"]

_AWAITABLE = "typing.Awaitable"
_GENERATORS = ("typing.Generator", "typing.AsyncGenerator")


def _returns(typ: Type) -> Instance | None:
    """What a callable (or a callable object) returns, when that is a class instance."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance):
        call = proper.type.get_method("__call__")
        if call is None or call.type is None:
            return None
        proper = get_proper_type(call.type)
    if isinstance(proper, Overloaded):
        return None
    if isinstance(proper, CallableType):
        returned = get_proper_type(proper.ret_type)
        return returned if isinstance(returned, Instance) else None
    return None


def _is_generator_function(expr: Expression) -> bool:
    """Whether the handler is named by a function whose body yields (however annotated)."""
    node = expr.node if isinstance(expr, RefExpr) else None
    return isinstance(node, FuncDef) and (node.is_generator or node.is_async_generator)


def check_handler(ctx: MethodContext) -> Type:
    """Report a blocking queue's handler that returns an awaitable, or is a generator."""
    return _check(ctx, blocking=True)


def check_async_handler(ctx: MethodContext) -> Type:
    """Report an asyncio queue's handler that is a generator function."""
    return _check(ctx, blocking=False)


def _check(ctx: MethodContext, *, blocking: bool) -> Type:
    for names, types, args in zip(ctx.callee_arg_names, ctx.arg_types, ctx.args, strict=False):
        if names != "handler" or not types:
            continue
        returned = _returns(types[0])
        what = returned.type if returned is not None else None
        if blocking and what is not None and what.has_base(_AWAITABLE):
            ctx.api.fail(f"Queue handler: {ASYNC_HANDLER}", args[0], code=VALUE)
        elif _is_generator_function(args[0]) or (
                what is not None and any(what.has_base(name) for name in _GENERATORS)):
            ctx.api.fail(f"{'Queue' if blocking else 'AsyncQueue'} handler is a generator "
                         f"function: {GENERATOR_HANDLER}", args[0], code=VALUE)
    return ctx.default_return_type
