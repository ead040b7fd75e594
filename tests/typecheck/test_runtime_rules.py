"""The rules the plugin keeps a copy of (it loads no part of the runtime) are the runtime's:
how a class name becomes a table name and an attribute a column name, the column kinds that
order and that are text, and the families of compared columns."""

from __future__ import annotations

import pytest
from tempest_typed_mypy.lib import families, metadata, tables

from tempest_typed import model
from tempest_typed.statements import nodes, where

NAMES = ["Outbound", "OrderItem", "HTTPRequest", "nextAttemptAt", "next_attempt_at", "id",
         "userID", "A", "already_snake", "Version2Name", "ABCdef"]


@pytest.mark.parametrize("name", NAMES)
def test_snake_case_is_the_runtime_one(name: str) -> None:
    assert tables.snake_case(name) == model.snake_case(name)


@pytest.mark.parametrize("name", NAMES)
def test_camel_case_is_the_runtime_one(name: str) -> None:
    assert tables._camel_case(name) == model.camel_case(name)


def test_column_kinds_are_the_runtime_ones() -> None:
    assert metadata.ORDERED_KINDS == nodes.ORDERED_KINDS
    assert metadata.TEXT_KINDS == nodes.TEXT_KINDS


def test_families_are_the_runtime_ones() -> None:
    def grouped(families: dict[str, str]) -> set[frozenset[str]]:
        return {frozenset(k for k, f in families.items() if f == family)
                for family in set(families.values())}

    assert grouped(families.FAMILIES) == grouped(where.FAMILIES)


def test_the_largest_count_is_the_runtime_one() -> None:
    from tempest_typed_mypy import statements

    assert statements.INT_MAX == model.INT_MAX


def test_isolation_levels_are_the_runtime_ones() -> None:
    from tempest_typed_mypy import transactions

    from tempest_typed.engine.drivers.base import ISOLATION_LEVELS
    assert transactions.ISOLATION_LEVELS == tuple(ISOLATION_LEVELS)
