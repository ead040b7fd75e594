"""`Index(name, [columns], where={...})` in a model's `__indexes__`: checked against the model
whose class body holds it."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.plugin import FunctionContext
from mypy.types import Type

from .lib.conditions import check_condition
from .lib.messages import index_label
from .lib.metadata import model_facts
from .lib.scopes import Scope

__all__ = ["check_index"]


def check_index(ctx: FunctionContext) -> Type:
    """Check an Index's columns and where= against the enclosing model."""
    assert isinstance(ctx.api, TypeChecker)
    info = ctx.api.scope.active_class()
    facts = model_facts(info) if info is not None else None
    if facts is None:
        return ctx.default_return_type
    by_name = dict(zip(ctx.callee_arg_names, ctx.args, strict=False))
    label = index_label(by_name.get("name") or [])
    scope = Scope(ctx.api, facts, label)
    for columns in by_name.get("columns") or []:
        scope.columns(columns)
    inner = Scope(ctx.api, facts, f"{label} where=")
    for condition in by_name.get("where") or []:
        check_condition(inner, condition)
    return ctx.default_return_type
