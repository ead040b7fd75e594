"""A where value longer than its column's max_length is a lookup with a known answer.

No row holds a longer string (PostgreSQL's and MySQL's varchar refuse one; insert() and
update() refuse one for SQLite, which has no limit), so `eq`/`in`/`like` of such a value match
no row and `ne`/`not_in` every row whose column is not NULL: the same rows on every database,
where the value was a ValidationError. Writing one stays an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempest_typed import (
    Engine,
    Model,
    ValidationError,
    column,
    create_engine,
    delete,
    insert,
    join,
    not_,
    or_,
    select,
    sql,
    update,
)

from .conftest import Fresh


class Code(Model, table="eng_long_codes"):
    id: int = column(primary_key=True)
    code: str | None = column(default=None, max_length=3)
    tag: str = column(default="t", max_length=3)


LONG = "abcd"  # one more character than either column holds


@pytest.fixture
def codes(fresh: Fresh) -> Engine:
    engine = fresh(Code)
    engine.execute(insert(Code).values([
        {"id": 1, "code": "abc"}, {"id": 2, "code": "ab"}, {"id": 3, "code": None},
    ]))
    return engine


def ids(engine: Engine, *conditions: Any) -> list[int]:
    return sorted(engine.execute(select(Code, ["id"]).where(*conditions)).scalars())


@pytest.mark.parametrize(("condition", "expected"), [
    ({"code": LONG}, []),
    ({"code": {"eq": LONG}}, []),
    ({"code": {"ne": LONG}}, [1, 2]),
    ({"code": {"in": [LONG]}}, []),
    ({"code": {"in": [LONG, "ab"]}}, [2]),
    ({"code": {"not_in": [LONG]}}, [1, 2]),
    ({"code": {"not_in": ["ab", LONG]}}, [1]),
    ({"code": {"like": LONG + "%"}}, []),
    ({"code": {"like": "\\_\\_\\_\\_"}}, []),  # four literal underscores
    ({"code": {"like": "____"}}, []),          # any four characters
    ({"code": {"like": "ab%%"}}, [1, 2]),      # longer than 3, but matches "ab" and "abc"
    ({"code": {"ilike": "ABCD"}}, []),
    ({"code": {"contains": LONG}}, []),
    ({"code": {"icontains": "ABCD"}}, []),
    ({"code": {"startswith": LONG}}, []),
    ({"code": {"endswith": LONG}}, []),
    ({"tag": {"ne": LONG}}, [1, 2, 3]),        # not nullable: every row
])
def test_a_lookup_by_a_value_no_row_can_hold(codes: Engine, condition: Any,
                                             expected: list[int]) -> None:
    assert ids(codes, condition) == expected


def test_negated_it_keeps_sql_logic_for_null(codes: Engine) -> None:
    # NOT (code = 'abcd') is unknown where code is NULL, so row 3 is not among them.
    assert ids(codes, not_({"code": LONG})) == [1, 2]
    assert ids(codes, not_({"code": {"ne": LONG}})) == []
    assert ids(codes, not_({"code": {"in": [LONG]}})) == [1, 2]
    assert ids(codes, or_({"code": LONG}, {"code": None})) == [3]
    assert ids(codes, {"code": {"ne": LONG}}, {"id": {"gt": 1}}) == [2]


def test_update_delete_having_and_joins_look_up_the_same_way(codes: Engine) -> None:
    assert codes.execute(update(Code).set({"tag": "x"}).where({"code": LONG})).rows_affected() == 0
    assert codes.execute(delete(Code).where({"code": {"in": [LONG]}})).rows_affected() == 0
    grouped = (select(Code).aggregate(["code"], {"n": sql.count()})
               .having({"code": {"ne": LONG}}).order_by("code"))
    assert [(r.code, r.n) for r in codes.execute(grouped).all()] == [("ab", 1), ("abc", 1)]
    pairs = join(Code, "a").inner_join(Code, "b", {"a.id": "b.id"}).where({"b.code": LONG})
    assert codes.execute(pairs).all() == []
    assert ids(codes, {"tag": "t"}) == [1, 2, 3]


def test_the_answer_does_not_depend_on_what_sqlite_holds(tmp_path: Path) -> None:
    # Only SQLite keeps a longer string, written past the builder in a table made without
    # the length CHECK (as it was before create_all wrote one); the lookup still says what
    # the other databases say.
    with create_engine(f"sqlite:///{tmp_path / 'long.db'}") as engine:
        engine.execute_sql("CREATE TABLE eng_long_codes (id INTEGER PRIMARY KEY, code TEXT, "
                           "tag TEXT NOT NULL)")
        engine.execute_sql("INSERT INTO eng_long_codes (id, code, tag) VALUES (1, 'abcd', 't')")
        assert ids(engine, {"code": LONG}) == []
        assert ids(engine, {"code": {"ne": LONG}}) == [1]


def test_writing_a_value_longer_than_the_column_is_still_an_error() -> None:
    with pytest.raises(ValidationError, match=r"Code\.code holds at most 3 characters, got 4"):
        insert(Code).values({"code": LONG})
    with pytest.raises(ValidationError, match=r"Code\.code holds at most 3 characters, got 4"):
        update(Code).set({"code": LONG}).where({"id": 1})
    with pytest.raises(ValidationError, match="NUL character"):
        select(Code).where({"code": "ab\x00cd"})


class Blob(Model, table="eng_long_blobs"):
    id: int = column(primary_key=True)
    data: bytes = column(max_length=4)


def test_bytes_longer_than_the_column_are_refused_on_write_and_match_nothing(
    fresh: Fresh,
) -> None:
    # PostgreSQL's bytea and SQLite's BLOB have no limit of their own: without the check a
    # max_length of 4 would store 6 bytes there and refuse them on MySQL's VARBINARY(4).
    for build in (lambda: insert(Blob).values({"data": b"123456"}),
                  lambda: insert(Blob).values([{"data": b"12"}, {"data": memoryview(b"12345")}]),
                  lambda: update(Blob).set({"data": bytearray(b"12345")}).where({"id": 1})):
        with pytest.raises(ValidationError, match=r"Blob\.data holds at most 4 bytes, got [56]"):
            build()
    engine = fresh(Blob)
    engine.execute(insert(Blob).values([{"id": 1, "data": b"1234"}, {"id": 2, "data": b"12"}]))
    found = engine.execute(select(Blob, ["id"]).where({"data": b"123456"})).scalars()
    assert list(found) == []
    found = engine.execute(select(Blob, ["id"]).where({"data": {"ne": b"123456"}})).scalars()
    assert sorted(found) == [1, 2]
    found = engine.execute(select(Blob, ["id"]).where({"data": {"in": [b"123456", b"12"]}}))
    assert list(found.scalars()) == [2]
