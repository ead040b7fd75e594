"""The fast paths the benchmarks called for keep the behaviour of the plain paths."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Literal
from uuid import UUID, uuid4

import pytest

from tempest_typed import Model, ValidationError, column, create_engine, insert, select
from tempest_typed.engine import Engine


class FastPerson(Model, table="fast_people"):
    id: int = column(primary_key=True)
    name: str
    age: int
    active: bool
    nickname: str | None = None


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{tmp_path}/fast.db")
    engine.create_all(FastPerson)
    yield engine
    engine.close()


def people(n: int) -> list[dict[str, object]]:
    return [{"name": f"p{i}", "age": i % 90, "active": i % 2 == 0, "nickname": None}
            for i in range(n)]


def test_a_large_result_comes_back_whole_and_typed(lite: Engine) -> None:
    lite.execute(insert(FastPerson).values(people(2500)))
    rows = lite.execute(select(FastPerson).order_by("id")).all()
    assert len(rows) == 2500
    assert rows[1] == FastPerson(id=2, name="p1", age=1, active=False, nickname=None)
    assert all(type(r.active) is bool for r in rows)


def test_fetching_a_large_result_leaves_the_garbage_collector_as_it_was(lite: Engine) -> None:
    lite.execute(insert(FastPerson).values(people(2500)))
    assert gc.isenabled()
    lite.execute(select(FastPerson)).all()
    assert gc.isenabled()
    gc.disable()
    try:
        lite.execute(select(FastPerson, ["id", "active"])).all()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_bad_cell_in_a_later_row_of_a_batch_is_reported_as_for_one_row() -> None:
    rows = people(3)
    rows[2]["age"] = "old"
    with pytest.raises(ValidationError) as batch:
        insert(FastPerson).values(rows)
    with pytest.raises(ValidationError) as single:
        insert(FastPerson).values(rows[2])
    assert str(batch.value) == str(single.value)


def test_a_row_of_a_batch_that_leaves_out_a_defaulted_column_gets_the_default(
        lite: Engine) -> None:
    rows = people(3)
    rows[0]["nickname"] = "first"
    del rows[1]["nickname"]
    lite.execute(insert(FastPerson).values(rows))
    got = lite.execute(select(FastPerson, ["nickname"]).order_by("id")).scalars()
    assert got == ["first", None, None]


def test_a_batch_row_missing_a_required_column_is_named() -> None:
    rows = people(3)
    del rows[2]["age"]
    with pytest.raises(ValidationError, match="missing required column"):
        insert(FastPerson).values(rows)


def test_a_bool_is_not_taken_for_an_int_in_a_batch() -> None:
    rows = people(2)
    rows[1]["age"] = True
    with pytest.raises(ValidationError, match=r"FastPerson\.age expects int"):
        insert(FastPerson).values(rows)


class Mixed(Model, table="fast_mixed"):
    id: int = column(primary_key=True)
    name: str = column(max_length=5)
    state: Literal["on", "off"]
    at: datetime
    ref: UUID | None = None
    score: float | None = None


def mixed(n: int) -> list[dict[str, object]]:
    return [{"name": f"n{i % 100}", "state": "on" if i % 2 else "off",
             "at": datetime(2026, 1, 1, tzinfo=UTC if i % 2 else timezone(timedelta(hours=2))),
             "ref": None if i % 3 else uuid4(), "score": None if i % 5 else i / 7}
            for i in range(n)]


def general_form(rows: list[dict[str, object]]) -> tuple[object, tuple[object, ...]]:
    """The key and values of the general path, which model instances take."""
    stmt = insert(Mixed).values([Mixed(**row) for row in rows])  # type: ignore[arg-type]
    return stmt._key(), stmt._values


def test_the_column_wise_batch_check_builds_what_the_row_by_row_path_builds() -> None:
    rows = mixed(40)
    stmt = insert(Mixed).values(rows)
    assert (stmt._key(), stmt._values) == general_form(rows)
    assert stmt.compile("postgresql").params == insert(Mixed).values(rows).compile().params


@pytest.mark.parametrize(("column", "bad", "message"), [
    ("name", "toolong", "at most 5 characters"),
    ("name", "n\x00", "NUL character"),
    ("name", None, "not nullable"),
    ("state", "maybe", "expects Literal"),
    ("at", datetime(2026, 1, 1), "naive datetime"),
    ("score", float("nan"), "not a finite number"),
    ("ref", "not-a-uuid", "expects UUID"),
])
def test_a_bad_cell_found_by_the_column_wise_check_is_named_as_for_one_row(
        column: str, bad: object, message: str) -> None:
    rows = mixed(60)
    rows[41][column] = bad
    with pytest.raises(ValidationError, match=message) as batch:
        insert(Mixed).values(rows)
    with pytest.raises(ValidationError) as single:
        insert(Mixed).values(rows[41])
    assert str(batch.value) == str(single.value)
