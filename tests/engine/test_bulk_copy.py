"""A plain insert of many rows (no conflict clause, no RETURNING) is written by the fastest
bulk path of its database: COPY ... FROM STDIN on PostgreSQL. What it stores, what it
refuses and what it leaves behind on failure are the one multi-row statement's, on every
database and both engines."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest

from tempest_typed import (
    IntegrityError,
    Model,
    TransactionAborted,
    ValidationError,
    column,
    insert,
    select,
    sql,
)

from .conftest import Item, Typed


class Narrow(Model, table="eng_copy_narrow"):
    """A model whose table the tests make by hand, with other stored types than its own."""

    id: int = column(primary_key=True)
    qty: int = 0
    at: datetime | None = None

pytestmark = pytest.mark.asyncio

MODELS = (Item, Typed, Narrow)
N = 300


def written(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The statements of the SQL log that wrote rows (not the catalog read, nor BEGIN)."""
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith(("COPY", "INSERT"))]


def typed_rows(n: int) -> list[Typed]:
    """Every column kind, hostile text, NULLs and the edges of each type, in turn."""
    texts = ["plain", "tab\tand\nnewline", "back\\slash", "ünïcödé ✓", "", "\\N", "quote ' \""]
    return [Typed(
        id=i + 1,
        ref=UUID(int=i) if i % 5 else None,
        at=datetime(2026, 1, 1, 12, 30, i % 60, 123456, tzinfo=UTC) if i % 4 else None,
        day=date(2026, 2, 28) if i % 3 else None,
        price=Decimal("1234.5678") * i if i % 6 else None,
        flag=(i % 2 == 0) if i % 7 else None,
        blob=bytes([i % 256, 0, 255, 10, 92]) if i % 8 else None,
        state=("on", "off", "ünï")[i % 3] if i % 9 else None,
        doc={"n": i, "s": texts[i % len(texts)], "nested": [1, None, True]} if i % 10 else None,
        items=[i, "x", {"k": None}] if i % 11 else None,
        text=texts[i % len(texts)] if i % 12 else None,
        count=(-(2**63) if i == 13 else 2**63 - 1 if i == 14 else i) if i % 13 else None,
        ratio=(i / 7) if i % 14 else None,
    ) for i in range(n)]


async def test_every_kind_of_value_reads_back_as_written(db: Any) -> None:
    written = typed_rows(N)
    result = await db.execute(insert(Typed).values(written))
    assert result.rows_affected() == N
    stored = (await db.execute(select(Typed).order_by("id"))).all()
    assert stored == written


async def test_the_copy_is_what_runs_on_postgresql(db: Any,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Item).values([{"name": f"i{i}", "qty": i} for i in range(N)]))
    ran = written(caplog)
    assert len(ran) == 1
    assert ran[0].startswith('COPY "eng_items"') == db.dialect.supports_copy_from
    # a conflict clause or RETURNING is not a plain insert: the statement runs as before
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Item).values([{"name": f"j{i}"} for i in range(N)])
                         .on_conflict_do_nothing(None))
    assert not any("COPY" in r.getMessage() for r in caplog.records)


async def test_a_failing_row_leaves_no_row_written(db: Any) -> None:
    rows = [{"name": f"i{i}", "qty": i} for i in range(N)] + [{"name": "i7"}]  # a duplicate
    with pytest.raises(IntegrityError):
        await db.execute(insert(Item).values(rows))
    assert (await db.execute(select(Item))).all() == []


async def test_in_the_callers_transaction_too(db: Any) -> None:
    rows = [{"name": f"i{i}", "qty": i} for i in range(N)] + [{"name": "i7"}]
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "before"}))
            with pytest.raises(IntegrityError):
                await tx.execute(insert(Item).values(rows))
            await tx.execute(select(Item))  # the transaction can only roll back now
    assert (await db.execute(select(Item))).all() == []
    async with db.transaction() as tx:  # and a good batch commits with what came before
        await tx.execute(insert(Item).values({"name": "before"}))
        await tx.execute(insert(Item).values([{"name": f"i{i}"} for i in range(N)]))
    assert len((await db.execute(select(Item))).all()) == N + 1


async def test_server_defaults_and_python_defaults_fill_what_rows_leave_out(db: Any) -> None:
    written = [Item(name=f"i{i}") for i in range(N)]  # qty's default, the identity's
    await db.execute(insert(Item).values(written))
    stored = (await db.execute(select(Item).order_by("id"))).all()
    assert [(r.name, r.qty, r.note) for r in stored] == [(f"i{i}", 0, None) for i in range(N)]
    assert len({r.id for r in stored}) == N
    # an expression among the values is not a plain row: one statement, as before
    await db.execute(insert(Item).values([{"name": f"e{i}", "qty": sql.raw("2 + 3")}
                                          for i in range(60)]))
    assert {r.qty for r in (await db.execute(select(Item).where(
        {"name": {"startswith": "e"}}))).all()} == {5}


# -- binary COPY where the catalog's types are the model's, text COPY where they are not --------


async def test_every_kind_goes_binary_where_the_table_is_the_models(
        db: Any, caplog: pytest.LogCaptureFixture) -> None:
    rows = typed_rows(N)
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Typed).values(rows))
    ran = written(caplog)
    assert len(ran) == 1
    assert ran[0].startswith('COPY "eng_typed"') == db.dialect.supports_copy_from
    # the log shows the statement that ran: the binary form where it did
    assert ("(FORMAT BINARY) x 300 " in ran[0]) == db.dialect.supports_copy_from
    stored = (await db.execute(select(Typed).order_by("id"))).all()
    assert stored == rows
    # NULL in every column but the key, and the edges that text would escape
    edge = [Typed(id=1000 + i) for i in range(60)] + [
        Typed(id=2000 + i, text="\\N\t\n\r\\ ünï ✓ 𝄞", blob=b"\x00\\N\n",
              doc={"a": "\u00e9\n", "b": [None, 1.5, "\\"]}, items=[],
              at=datetime(1, 1, 1, tzinfo=UTC) if i % 2 else datetime(9999, 12, 31, 23, 59, 59,
                                                                      999999, tzinfo=UTC))
        for i in range(60)]
    await db.execute(insert(Typed).values(edge))
    back = (await db.execute(select(Typed).where({"id": {"gte": 1000}}).order_by("id"))).all()
    assert back == edge


async def test_a_stored_type_other_than_the_models_takes_the_text_copy(
        db: Any, caplog: pytest.LogCaptureFixture) -> None:
    if not db.dialect.supports_copy_from:
        pytest.skip("a bulk copy is PostgreSQL's")
    await db.execute_sql('DROP TABLE "eng_copy_narrow"')
    await db.execute_sql('CREATE TABLE "eng_copy_narrow" (id bigint PRIMARY KEY, '
                         'qty integer NOT NULL, at timestamptz)')
    rows = [Narrow(id=i, qty=i, at=datetime(2026, 1, 1, tzinfo=UTC) if i % 2 else None)
            for i in range(N)]
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Narrow).values(rows))
    ran = written(caplog)
    assert ran[0].startswith('COPY "eng_copy_narrow" ("id", "qty", "at") FROM STDIN x 300')
    assert (await db.execute(select(Narrow).order_by("id"))).all() == rows


async def test_a_table_altered_between_two_batches_is_seen_by_the_next(
        db: Any, caplog: pytest.LogCaptureFixture) -> None:
    if not db.dialect.supports_copy_from:
        pytest.skip("a bulk copy is PostgreSQL's")
    await db.execute(insert(Narrow).values([Narrow(id=i) for i in range(N)]))  # binary
    # another program narrows a column: a binary bigint would be no int4 the server reads,
    # so the next batch must not trust what the first one read
    await db.execute_sql('ALTER TABLE "eng_copy_narrow" ALTER COLUMN qty TYPE integer')
    more = [Narrow(id=N + i, qty=i) for i in range(N)]
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Narrow).values(more))  # its types read again: text
    assert "FORMAT BINARY" not in written(caplog)[0]
    assert len((await db.execute(select(Narrow))).all()) == 2 * N


async def test_a_small_batch_takes_the_text_copy_without_reading_the_catalog(
        db: Any, caplog: pytest.LogCaptureFixture) -> None:
    if not db.dialect.supports_copy_from:
        pytest.skip("a bulk copy is PostgreSQL's")
    rows = typed_rows(60)  # a copy (from 50 rows), short of a binary one (from 100)
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        await db.execute(insert(Typed).values(rows))
    logged = [r.getMessage() for r in caplog.records]
    assert not [m for m in logged if "pg_attribute" in m]
    ran = written(caplog)
    assert len(ran) == 1 and ran[0].startswith('COPY "eng_typed"')
    assert "FORMAT BINARY" not in ran[0]
    assert (await db.execute(select(Typed).order_by("id"))).all() == rows


@pytest.mark.parametrize("where", [1, N // 2, N - 1])
async def test_a_row_failing_mid_copy_leaves_nothing(db: Any, where: int) -> None:
    rows = [Typed(id=i + 1, text=f"t{i}") for i in range(N)]
    rows[where] = Typed(id=1, text="the key of the first row again")
    with pytest.raises(IntegrityError):
        await db.execute(insert(Typed).values(rows))
    assert (await db.execute(select(Typed))).all() == []
    with pytest.raises(TransactionAborted):
        async with db.transaction() as tx:
            await tx.execute(insert(Typed).values(Typed(id=9999)))
            with pytest.raises(IntegrityError):
                await tx.execute(insert(Typed).values(rows))
    assert (await db.execute(select(Typed))).all() == []
    async with db.transaction() as tx:  # inside a savepoint the caller's rows stay
        await tx.execute(insert(Typed).values(Typed(id=9999)))
        with pytest.raises(IntegrityError):
            async with tx.transaction() as inner:
                await inner.execute(insert(Typed).values(rows))
    assert [r.id for r in (await db.execute(select(Typed))).all()] == [9999]


async def test_a_batch_of_more_values_than_one_statement_binds_reads_back_as_written(
        db: Any) -> None:
    # 5,100 rows of 13 columns: more than 65,535 parameters, so MySQL writes it in chunks
    # (each adapted a column at a time) and SQLite and PostgreSQL as one batch
    written = typed_rows(5100)
    result = await db.execute(insert(Typed).values(written))
    assert result.rows_affected() == len(written)
    assert (await db.execute(select(Typed).order_by("id"))).all() == written


async def test_a_datetime_column_of_other_zones_is_stored_as_the_same_instant(db: Any) -> None:
    # a column whose zones are all datetime.UTC is checked at once; any other zone (one of
    # offset 0 too) goes through the per-value check, which keeps the instant
    plus_two = timezone(timedelta(hours=2))
    zones = [UTC, timezone(timedelta(0)), plus_two]
    rows = [{"id": i + 1, "at": datetime(2026, 3, 1, 12, tzinfo=zones[i % 3])} for i in range(N)]
    await db.execute(insert(Typed).values(rows))
    stored = (await db.execute(select(Typed).order_by("id"))).all()
    assert [r.at for r in stored] == [r["at"] for r in rows]
    assert {r.at.tzinfo for r in stored} == {UTC}
    with pytest.raises(ValidationError):
        insert(Typed).values([{"id": 1, "at": datetime(2026, 3, 1)}] * 60)  # no zone
