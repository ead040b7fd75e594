"""Hostile input fails loudly, the same on both engines and the three databases.

A built statement never changes when the caller's objects do; SQL text given by the caller
never reaches past itself, never runs as a second statement and never holds a NUL; a value no
driver stores faithfully is a ValidationError, never bound as its str(); and whatever a
driver raises reaches the caller as a TempestError.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any

import pytest

from tempest_typed import (
    QueryExecutionError,
    TempestError,
    ValidationError,
    create_async_engine,
    create_engine,
    insert,
    select,
    sql,
    update,
)

from .both_engines import SyncEngine
from .conftest import Item, Typed

MODELS = (Item, Typed)

pytestmark = pytest.mark.asyncio


async def _items(db: Any, *rows: tuple[int, str, int]) -> None:
    await db.execute(insert(Item).values([{"id": i, "name": n, "qty": q} for i, n, q in rows]))


async def _qtys(db: Any) -> list[int]:
    return list((await db.execute(select(Item, ["qty"]).order_by("id"))).scalars())


def _placeholder(db: Any) -> str:
    return "?" if db.dialect.name == "sqlite" else "%s"


# -- 1. a built statement keeps what it was given ------------------------------------------


async def test_a_json_value_changed_after_building_is_stored_as_it_was(db: Any) -> None:
    doc: dict[str, object] = {"tags": ["a"], "n": 1}
    items: list[object] = [{"k": "v"}]
    blob = bytearray(b"xy")
    stmt = insert(Typed).values({"id": 1, "doc": doc, "items": items, "blob": blob})
    doc["n"] = 2
    doc["tags"].append("b")  # type: ignore[attr-defined]  # a list, as built above
    items[0]["k"] = "changed"  # type: ignore[index]  # a dict, as built above
    blob[0:2] = b"zz"
    await db.execute(stmt)
    row = (await db.execute(select(Typed).where({"id": 1}))).one()
    assert row.doc == {"tags": ["a"], "n": 1}
    assert row.items == [{"k": "v"}]
    assert row.blob == b"xy"


async def test_a_model_instance_changed_after_building_is_stored_as_it_was(db: Any) -> None:
    made = Typed(id=1, doc={"n": 1})
    stmt = insert(Typed).values(made)
    assert made.doc is not None
    made.doc["n"] = 2
    await db.execute(stmt)
    assert (await db.execute(select(Typed, ["doc"]).where({"id": 1}))).scalar() == {"n": 1}


async def test_update_and_upsert_sets_keep_their_own_copy(db: Any) -> None:
    await db.execute(insert(Typed).values({"id": 1, "doc": {"n": 0}}))
    doc: dict[str, object] = {"n": 1}
    change = update(Typed).set({"doc": doc}).where({"id": 1})
    upsert_doc: dict[str, object] = {"n": 10}
    upsert = insert(Typed).values({"id": 2, "doc": {"n": 0}})
    upsert = (upsert.on_conflict_do_update(["id"], {"doc": upsert_doc})
              if db.dialect.name == "postgresql" else
              upsert.on_conflict_do_update(None, {"doc": upsert_doc}))
    doc["n"] = 99
    upsert_doc["n"] = 99
    await db.execute(change)
    await db.execute(upsert)  # inserts row 2
    await db.execute(upsert)  # conflicts: sets doc
    docs = (await db.execute(select(Typed, ["doc"]).order_by("id"))).scalars()
    assert docs == [{"n": 1}, {"n": 10}]


async def test_a_str_enum_member_is_stored_as_its_value(db: Any) -> None:
    class State(str, Enum):  # noqa: UP042  # not StrEnum: this str() is "State.ON"
        ON = "on"

    await db.execute(insert(Typed).values({"id": 1, "state": State.ON, "text": State.ON}))
    row = (await db.execute(select(Typed, ["state", "text"]).where({"id": 1}))).one()
    assert (row.state, row.text) == ("on", "on")
    found = await db.execute(select(Typed, ["id"]).where({"text": State.ON}))
    assert found.scalars() == [1]


# -- 2. a NUL in SQL text -------------------------------------------------------------------


async def test_a_nul_in_sql_text_is_refused_before_anything_runs(db: Any) -> None:
    await _items(db, (1, "a", 1), (2, "b", 2))
    with pytest.raises(ValidationError, match="NUL"):
        await db.execute_sql("UPDATE eng_items SET qty = 9 \x00WHERE id = 1")
    with pytest.raises(ValidationError, match="NUL"):
        update(Item).set({"qty": sql.raw("9 \x00")}).where({"id": 1})
    with pytest.raises(ValidationError, match="NUL"):
        update(Item).set({"qty": sql.expr("{} \x00", 9)}).where({"id": 1})
    assert await _qtys(db) == [1, 2]


# -- 3. an expression does not reach past itself -------------------------------------------


async def test_a_comment_in_an_expression_cannot_hide_the_where(db: Any) -> None:
    await _items(db, (1, "a", 1), (2, "b", 2))
    for fragment in ("{} --", "{} #", "{} /*"):
        with pytest.raises(ValidationError, match="comment"):
            update(Item).set({"qty": sql.expr(fragment, 9)}).where({"id": 1})
    with pytest.raises(ValidationError, match="not closed"):
        update(Item).set({"qty": sql.raw("9 + '")}).where({"id": 1})
    with pytest.raises(ValidationError, match="parenthes"):
        update(Item).set({"qty": sql.raw("(9")}).where({"id": 1})
    assert await _qtys(db) == [1, 2]


# -- 4. one statement per execute ----------------------------------------------------------


async def test_execute_sql_runs_one_statement_on_every_driver(db: Any) -> None:
    await _items(db, (1, "a", 1), (2, "b", 2))
    with pytest.raises(QueryExecutionError):
        await db.execute_sql("UPDATE eng_items SET qty = 7; UPDATE eng_items SET qty = 8")
    mark = _placeholder(db)
    with pytest.raises(QueryExecutionError):
        await db.execute_sql(f"UPDATE eng_items SET qty = {mark}; UPDATE eng_items SET qty = 8",
                             (7,))
    assert 8 not in await _qtys(db)
    # one statement with a trailing ; runs
    assert (await db.execute_sql("SELECT 1;")).scalar() == 1


# -- 5. values no driver stores faithfully -------------------------------------------------


@pytest.mark.parametrize("value", [Fraction(1, 3), object(), {1, 2}, 1j])
async def test_a_value_of_an_unknown_type_is_refused(db: Any, value: object) -> None:
    with pytest.raises(ValidationError, match="cannot be bound"):
        sql.expr("{}", value)
    with pytest.raises(ValidationError, match="cannot be bound"):
        await db.execute_sql(f"SELECT {_placeholder(db)}", (value,))


async def test_bytes_like_values_are_stored_as_bytes(db: Any) -> None:
    await db.execute(insert(Typed).values({"id": 1, "blob": memoryview(b"ab")}))
    await db.execute(insert(Typed).values({"id": 2, "blob": bytearray(b"cd")}))
    await db.execute(update(Typed).set({"blob": sql.expr("{}", memoryview(b"ef"))})
                     .where({"id": 1}))
    mark = _placeholder(db)
    blob = db.dialect.quote_identifier("blob")
    await db.execute_sql(f"UPDATE eng_typed SET {blob} = {mark} WHERE id = 2",
                         (bytearray(b"gh"),))
    blobs = (await db.execute(select(Typed, ["blob"]).order_by("id"))).scalars()
    assert blobs == [b"ef", b"gh"]


async def test_execute_sql_parameters_are_bound_as_columns_store_them(db: Any) -> None:
    at = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    mark = _placeholder(db)
    await db.execute_sql(
        f"INSERT INTO eng_typed (id, at, price, doc) VALUES ({mark}, {mark}, {mark}, {mark})",
        (1, at, Decimal("1.50"), {"k": [1, "two"]}))
    row = (await db.execute(select(Typed).where({"id": 1}))).one()
    assert (row.at, row.price, row.doc) == (at, Decimal("1.5"), {"k": [1, "two"]})
    with pytest.raises(ValidationError, match="naive"):
        await db.execute_sql(f"SELECT {mark}", (datetime(2024, 1, 1),))


# -- 6. every error is a TempestError ------------------------------------------------------


@pytest.mark.parametrize("value", ["\ud800", 2**70, float("nan"), float("inf"),
                                   Decimal("NaN"), "a\x00b"])
async def test_a_value_no_database_takes_is_refused(db: Any, value: object) -> None:
    with pytest.raises(ValidationError):
        sql.expr("{}", value)
    with pytest.raises(ValidationError):
        await db.execute_sql(f"SELECT {_placeholder(db)}", (value,))


async def test_the_edges_of_what_is_taken_are_stored_as_they_are(db: Any) -> None:
    biggest, smallest = 2**63 - 1, -(2**63)
    await db.execute(insert(Typed).values([{"id": 1, "count": sql.expr("{}", biggest)},
                                           {"id": 2, "text": sql.expr("{}", "ü\U0001F600")}]))
    mark = _placeholder(db)
    await db.execute_sql(f"UPDATE eng_typed SET count = {mark} WHERE id = 2", (smallest,))
    rows = (await db.execute(select(Typed, ["count", "text"]).order_by("id"))).all()
    assert [(r.count, r.text) for r in rows] == [(biggest, None), (smallest, "ü\U0001F600")]


async def test_execute_sql_of_what_is_no_text_is_a_validation_error(db: Any) -> None:
    with pytest.raises(ValidationError, match="str"):
        await db.execute_sql(None)
    with pytest.raises(ValidationError, match="Unicode"):
        await db.execute_sql("SELECT '\ud800'")


async def test_a_placeholder_count_mismatch_is_a_tempest_error(db: Any) -> None:
    mark = _placeholder(db)
    for text, params in ((f"SELECT {mark}", (1, 2)), (f"SELECT {mark}, {mark}", (1,))):
        with pytest.raises(TempestError) as caught:
            await db.execute_sql(text, params)
        assert caught.value.__cause__ is not None


async def test_an_exception_a_driver_call_raises_is_a_tempest_error(
        db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> object:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    async def refuse_async(*args: object) -> object:
        return refuse()

    if isinstance(db, SyncEngine):
        monkeypatch.setattr(db.engine._io, "run", refuse)
    else:
        monkeypatch.setattr(db._io, "run", refuse_async)
    with pytest.raises(QueryExecutionError, match="OverflowError") as caught:
        await db.execute_sql("SELECT 1")
    assert isinstance(caught.value.__cause__, OverflowError)
    with pytest.raises(QueryExecutionError, match="OverflowError"):
        await db.execute(select(Item))


# -- 7. sql.now(plus=...) ------------------------------------------------------------------


async def test_a_plus_of_many_years_still_gives_a_timestamp(db: Any) -> None:
    years = 100 * 365 * 24 * 3600
    await db.execute(insert(Typed).values({"id": 1, "at": sql.now(plus=years)}))
    at = (await db.execute(select(Typed, ["at"]).where({"id": 1}))).scalar()
    assert at is not None and at.year >= datetime.now(UTC).year + 99


async def test_the_async_engine_refuses_before_connecting() -> None:
    engine = create_async_engine("postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(ValidationError, match="NUL"):
        await engine.execute_sql("SELECT 1\x00")
    with pytest.raises(ValidationError, match="cannot be bound"):
        await engine.execute_sql("SELECT %s", (object(),))
    await engine.dispose()


async def test_mysql_runs_one_statement_even_when_the_options_ask_for_more(
        mysql_url: str) -> None:
    import pymysql.constants.CLIENT as CLIENT

    options = {"client_flag": CLIENT.MULTI_STATEMENTS | CLIENT.FOUND_ROWS}
    blocking = create_engine(mysql_url, connect_args=options)
    try:
        with pytest.raises(QueryExecutionError):
            blocking.execute_sql("SELECT 1; SELECT 2")
    finally:
        blocking.dispose()
    awaiting = create_async_engine(mysql_url, connect_args=options)
    try:
        with pytest.raises(QueryExecutionError):
            await awaiting.execute_sql("SELECT 1; SELECT 2")
    finally:
        await awaiting.dispose()


async def test_execute_sql_takes_a_list_where_the_database_binds_one(db: Any) -> None:
    await db.execute(insert(Typed).values([{"id": i, "count": i} for i in (1, 2, 3)]))
    name = db.dialect.name
    if name == "postgresql":
        rows = await db.execute_sql("SELECT id FROM eng_typed WHERE id = ANY(%s) ORDER BY id",
                                    ([1, 3],))
        assert rows.scalars() == [1, 3]
    elif name in ("mysql", "mariadb"):
        rows = await db.execute_sql("SELECT id FROM eng_typed WHERE id IN %s ORDER BY id",
                                    ((1, 3),))
        assert rows.scalars() == [1, 3]
    else:
        with pytest.raises(ValidationError, match="one placeholder per item"):
            await db.execute_sql("SELECT id FROM eng_typed WHERE id IN (?)", ([1, 3],))
    with pytest.raises(ValidationError, match="item 2"):
        await db.execute_sql(f"SELECT {_placeholder(db)}", ([1, object()],))
