"""Calls that would not run their body: a generator function's (its call only makes a
generator) and an async function's (its call only makes a coroutine), and the results they
leave. One reading for what takes a function to run (run_transaction()'s work, a queue's
handler), each of which raises its own error.

A leaf module: it imports nothing of the package.
"""

from __future__ import annotations

import inspect
from typing import Literal

__all__ = ["discard_unrun", "unrun_call"]


def unrun_call(function: object) -> Literal["generator", "async"] | None:
    """What calling `function` (or its `__call__`) makes without running its body: a
    generator, a coroutine ("async"), or None when the call runs it."""
    candidates = (function, getattr(function, "__call__", None))  # noqa: B004  # a callable object
    if any(inspect.isgeneratorfunction(f) or inspect.isasyncgenfunction(f) for f in candidates):
        return "generator"
    if any(inspect.iscoroutinefunction(f) for f in candidates):
        return "async"
    return None


def discard_unrun(made: object, *, awaitable: bool) -> Literal["generator", "awaitable"] | None:
    """What a call's result is when its body has not run: a generator, or (`awaitable`) an
    awaitable; a generator or coroutine is closed, so that nothing warns of it later."""
    if inspect.isgenerator(made) or inspect.isasyncgen(made):
        if inspect.isgenerator(made):
            made.close()
        return "generator"
    if awaitable and inspect.isawaitable(made):
        if inspect.iscoroutine(made):
            made.close()
        return "awaitable"
    return None
