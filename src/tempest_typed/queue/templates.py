"""Statements the worker loop runs on every batch, built once and bound per call.

Building a statement checks every value and makes its where nodes; the claim and the grouped
ack are built the same way on every batch but for a few values (the lease token, the ids).
A `Template` is the statement built once with marker values; `bind()` puts each call's values
in the markers' places (measured: BENCHMARKS.md, "Fast paths"). The values bound are the
same kinds the markers were (a UUID for a UUID), which the caller guarantees: they come from
the leases the claim read back.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar
from uuid import UUID, uuid4

from ..model import Model
from ..statements import Update

__all__ = ["Template", "Templates", "markers"]

M = TypeVar("M", bound=Model)
R = TypeVar("R")
K = TypeVar("K", bound=Hashable)

#: the most templates a cache keeps (a worker loop uses one or two shapes; claim() any limit)
CACHED = 64


def markers(n: int) -> list[UUID]:
    """`n` distinct UUIDs to build a template with (none can equal another value)."""
    return [uuid4() for _ in range(n)]


class Template(Generic[M, R]):
    """A statement built with marker values, bound again with each call's values."""

    __slots__ = ("_places", "_statement", "_values")

    def __init__(self, statement: Update[M, R], marked: Sequence[object]) -> None:
        values = statement._values
        places = []
        for marker in marked:
            found = [i for i, v in enumerate(values) if v is marker]
            if len(found) != 1:
                raise AssertionError(f"a template's marker is bound {len(found)} times")
            places.append(found[0])
        self._statement = statement
        self._values = list(values)
        self._places = places

    def bind(self, values: Sequence[object]) -> Update[M, R]:
        """The statement with `values` in the markers' places, in the markers' order."""
        bound = self._values.copy()
        for place, value in zip(self._places, values, strict=True):
            bound[place] = value
        return self._statement._rebound(tuple(bound))


class Templates(Generic[K, M, R]):
    """Templates by key (a size, a limit...), each built on its first use; at most CACHED
    kept (all are dropped when one more is needed)."""

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: dict[K, Template[M, R]] = {}

    def get(self, key: K, build: Callable[[], Template[M, R]]) -> Template[M, R]:
        """The template for `key`, built by `build()` the first time."""
        template = self._made.get(key)
        if template is None:
            if len(self._made) >= CACHED:
                self._made.clear()
            template = self._made[key] = build()
        return template
