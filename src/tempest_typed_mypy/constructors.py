"""A model's constructor: which keyword arguments it requires.

`column` is not a field specifier of `Model` (see tempest_typed/model.py), so mypy's
dataclasses transform gives every field declared with `column(...)` a default. This hook
requires again, in each `Model(...)` call, the fields whose `column(...)` gives no default and
that the database cannot fill: everything but an int primary key and a server default.
"""

from __future__ import annotations

from mypy.nodes import ARG_NAMED, ARG_NAMED_OPT
from mypy.plugin import FunctionSigContext
from mypy.types import FunctionLike, get_proper_type

from .lib.metadata import model_facts

__all__ = ["constructor_signature"]


def constructor_signature(ctx: FunctionSigContext) -> FunctionLike:
    """The model's `__init__` with the columns the runtime requires made required."""
    sig = ctx.default_signature
    facts = model_facts(get_proper_type(sig.ret_type))
    if facts is None:
        return sig
    required = {name for name, col in facts.columns.items() if col.init_required}
    if not required:
        return sig
    kinds = [ARG_NAMED if kind == ARG_NAMED_OPT and name in required else kind
             for name, kind in zip(sig.arg_names, sig.arg_kinds, strict=True)]
    return sig.copy_modified(arg_kinds=kinds)


