"""The retry backoff node: each dialect's spelling of first * 2 ** (attempts - 1), capped."""

from __future__ import annotations

import math

import pytest

from tempest_typed import ValidationError, sql, update
from tempest_typed.expressions import Backoff
from tempest_typed.queue import QueueMessage

DELAY = {
    "postgresql": 'LEAST(%s * power(2, LEAST("attempts" - 1, 30)), %s)',
    "mysql": "LEAST(%s * POW(2, LEAST(`attempts` - 1, 30)), %s)",
    "mariadb": "LEAST(%s * POW(2, LEAST(`attempts` - 1, 30)), %s)",
    "sqlite": 'MIN(? * (1 << MIN("attempts" - 1, 30)), ?)',
}


@pytest.mark.parametrize("dialect", sorted(DELAY))
def test_each_dialect_spells_the_backoff(dialect: str) -> None:
    stmt = update(QueueMessage).set(
        {"next_attempt_at": sql.now(plus=Backoff("attempts", 1.5, 300))}).where({"attempts": 2})
    compiled = stmt.compile(dialect)
    assert DELAY[dialect] in compiled.sql
    assert compiled.params == (1.5, 300, 2)


@pytest.mark.parametrize("dialect", sorted(DELAY))
def test_backoffs_of_one_shape_share_their_sql(dialect: str) -> None:
    def nack(first: float, cap: float) -> update:  # type: ignore[type-arg]  # any update
        return update(QueueMessage).set(
            {"next_attempt_at": sql.now(plus=Backoff("attempts", first, cap))})

    one, other = nack(1, 10).compile(dialect), nack(2, 20).compile(dialect)
    assert one.sql == other.sql
    assert (one.params, other.params) == ((1, 10), (2, 20))


@pytest.mark.parametrize("bound", [math.nan, math.inf, True, "1"])
def test_the_bounds_are_finite_numbers(bound: object) -> None:
    with pytest.raises(ValidationError, match="finite numbers of seconds"):
        update(QueueMessage).set(
            {"next_attempt_at": sql.now(plus=Backoff("attempts", bound, 10))})  # type: ignore[arg-type]  # the wrong type is the test


def test_the_column_is_checked() -> None:
    with pytest.raises(ValidationError, match="tries"):
        update(QueueMessage).set({"next_attempt_at": sql.now(plus=Backoff("tries", 1, 10))})
