"""`transaction(isolation=...)` and `run_transaction(..., isolation=...)` with a level written
as a literal: one every database has, in any case, with `_` or `-` for the space.

The levels are a copy of the run time's (engine/drivers/base.py ISOLATION_LEVELS), held equal
by tests/typecheck/test_runtime_rules.py: the plugin loads no part of the runtime.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.plugin import MethodContext
from mypy.types import Type

from .lib.messages import VALUE
from .lib.syntax import arg, literal_str

__all__ = ["ISOLATION_LEVELS", "check_isolation"]

#: the isolation levels transaction() takes, as the run time spells them
ISOLATION_LEVELS = ("read uncommitted", "read committed", "repeatable read", "serializable")


def check_isolation(ctx: MethodContext) -> Type:
    """Report an isolation level written as a literal that is none of the levels."""
    assert isinstance(ctx.api, TypeChecker)
    for given in arg(ctx, "isolation"):
        level = literal_str(ctx.api, given)
        if level is not None and (level.lower().replace("_", " ").replace("-", " ")
                                  not in ISOLATION_LEVELS):
            ctx.api.fail(f"unknown isolation level {level!r}; use one of "
                         f"{', '.join(ISOLATION_LEVELS)}", given, code=VALUE)
    return ctx.default_return_type
