"""A multi-row insert that the driver runs as one-row statements (psycopg's pipelined
executemany from 50 rows, sqlite3's executemany without RETURNING) behaves like the one
multi-row VALUES statement it replaces: all rows or none, rows back in order, counts right,
duplicates skipped by DO NOTHING, DO UPDATE left as one statement. Run on every database,
so the dialects that keep one statement (MySQL/MariaDB, SQLite with RETURNING) answer the
same."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from tempest_typed import IntegrityError, ValidationError, insert, select, sql
from tempest_typed.engine import Engine

from .conftest import Fresh, Item, Outbound, Typed

N = 120  # above the 50 rows from which PostgreSQL batches


def items(n: int, first: int = 0) -> list[dict[str, object]]:
    return [{"name": f"item {i}", "qty": i, "note": None if i % 3 else f"note {i}"}
            for i in range(first, first + n)]


def messages(n: int, keys: list[str] | None = None) -> list[dict[str, object]]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    keys = keys or [f"key-{i}" for i in range(n)]
    return [{"consumer": "c", "idempotency_key": k, "next_attempt_at": now} for k in keys]


def test_every_row_goes_in_and_comes_back_in_order(fresh: Fresh) -> None:
    engine = fresh(Item)
    if engine.dialect.name == "mysql":  # MySQL 8 has no RETURNING; MariaDB does
        pytest.skip("MySQL 8 has no INSERT ... RETURNING")
    rows = engine.execute(insert(Item).values(items(N)).returning("name", "qty")).all()
    assert [(r.name, r.qty) for r in rows] == [(f"item {i}", i) for i in range(N)]
    stored = engine.execute(select(Item).order_by("qty")).all()
    assert [(s.name, s.qty, s.note) for s in stored] == [
        (d["name"], d["qty"], d["note"]) for d in items(N)]


def test_rows_affected_counts_every_row(fresh: Fresh) -> None:
    engine = fresh(Item)
    assert engine.execute(insert(Item).values(items(N))).rows_affected() == N


def test_a_failing_row_leaves_no_row_of_the_batch(fresh: Fresh) -> None:
    engine = fresh(Item)
    rows = [*items(N), {"name": "item 7", "qty": 0, "note": None}]  # a duplicate name, last
    with engine.session() as session:
        with pytest.raises(IntegrityError) as info:
            session.execute(insert(Item).values(rows))
        assert engine.execute(select(Item)).all() == []
        # The session is usable afterwards, and commits its next statement on its own.
        session.execute(insert(Item).values(items(N, first=1000)))
    assert len(engine.execute(select(Item)).all()) == N
    assert len(info.value.params) == (N + 1) * 3


def test_inside_a_transaction_the_batch_is_part_of_it(fresh: Fresh) -> None:
    engine = fresh(Item)
    with pytest.raises(RuntimeError), engine.transaction() as tx:
        tx.execute(insert(Item).values(items(N)))
        assert len(tx.execute(select(Item)).all()) == N
        raise RuntimeError("roll back")
    assert engine.execute(select(Item)).all() == []


def test_do_nothing_skips_duplicates_within_and_across_batches(fresh: Fresh) -> None:
    engine = fresh(Outbound)
    if engine.dialect.name == "mysql":
        pytest.skip("MySQL 8 has no INSERT ... RETURNING")

    def send(keys: list[str]) -> list[str | None]:
        stmt = insert(Outbound).values(messages(len(keys), keys))
        if engine.dialect.name == "mariadb":  # INSERT IGNORE: no target there
            stmt = stmt.on_conflict_do_nothing()
        else:
            stmt = stmt.on_conflict_do_nothing(["consumer", "idempotency_key"],
                                               where={"idempotency_key": {"is_null": False}})
        return [r.idempotency_key for r in engine.execute(stmt.returning("idempotency_key")).all()]

    first = [f"k{i}" for i in range(N)] + ["k3", "k5"]  # two repeats inside the batch
    assert send(first) == [f"k{i}" for i in range(N)]
    again = [f"k{i}" for i in range(N - 10, N + 60)]
    assert send(again) == [f"k{i}" for i in range(N, N + 60)]
    assert len(engine.execute(select(Outbound)).all()) == N + 60


def test_do_update_refuses_a_key_twice_at_build(fresh: Fresh) -> None:
    # PostgreSQL refused to update a row twice in one statement, MySQL and SQLite kept the
    # last row: a batch's rows are checked as it is built, on every database
    engine = fresh(Item)
    target = ["name"] if engine.dialect.supports_conflict_target else None
    rows = [*items(N), {"name": "item 3", "qty": 99, "note": None}]
    with pytest.raises(ValidationError, match=rf"rows 3 and {N} both have {{'name': 'item 3'}}"):
        engine.execute(insert(Item).values(rows)
                       .on_conflict_do_update(target, {"qty": sql.excluded("qty")}))
    assert engine.execute(select(Item)).all() == []


def test_an_upsert_of_many_rows_with_a_long_in_list_in_its_update_where(fresh: Fresh) -> None:
    """The rows' parameters and, after them, an `in` list (one array on PostgreSQL, past 50
    parameters): only the rows the list names are updated."""
    engine = fresh(Item)
    if not engine.dialect.supports_conflict_target:
        pytest.skip("MySQL's ON DUPLICATE KEY UPDATE takes no predicate")
    engine.execute(insert(Item).values(items(N)))
    named = [f"item {i}" for i in range(0, N, 2)]
    changed = engine.execute(insert(Item).values(items(N)).on_conflict_do_update(
        ["name"], {"qty": -1}, update_where={"name": {"in": named}}))
    assert changed.rows_affected() == len(named)
    got = {r.name: r.qty for r in engine.execute(select(Item)).all()}
    assert got == {f"item {i}": -1 if i % 2 == 0 else i for i in range(N)}


def test_the_log_says_how_many_rows_ran(fresh: Fresh, caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        engine.execute(insert(Item).values(items(N)))
    texts = [r.getMessage() for r in caplog.records
             if "INSERT" in r.getMessage() or "COPY" in r.getMessage()]
    assert len(texts) == 1
    if engine.dialect.supports_copy_from:
        assert texts[0].startswith('COPY "eng_items" ("name", "qty", "note") FROM STDIN')
    if engine.dialect.name in ("postgresql", "sqlite"):
        assert f"x {N} parameter sets" in texts[0]


def test_model_instances_and_defaults_take_the_same_path(fresh: Fresh) -> None:
    engine = fresh(Outbound)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    batch = [Outbound(consumer="c", idempotency_key=f"m{i}", next_attempt_at=now)
             for i in range(N)]
    assert engine.execute(insert(Outbound).values(batch)).rows_affected() == N
    stored = engine.execute(select(Outbound)).all()
    assert {m.id for m in stored} == {m.id for m in batch}
    assert {m.status for m in stored} == {"queued"}


def test_small_batches_and_other_shapes_still_work(engine: Engine, fresh: Fresh) -> None:
    fresh(Item)
    assert engine.execute(insert(Item).values(items(3))).rows_affected() == 3
    two_calls = insert(Item).values(items(30, first=10)).values(items(30, first=40))
    assert engine.execute(two_calls).rows_affected() == 60
    with_expression = insert(Item).values(
        [{"name": f"x{i}", "qty": sql.raw("2 + 3"), "note": None} for i in range(60)])
    assert engine.execute(with_expression).rows_affected() == 60
    assert {i.qty for i in engine.execute(select(Item).where({"name": {"like": "x%"}})).all()} \
        == {5}


def test_values_the_driver_adapts_go_through_the_batch_too(fresh: Fresh) -> None:
    # JSON on PostgreSQL, UUID and datetimes on SQLite are adapted per parameter: the batch
    # then builds each row's parameters instead of passing the row tuples as they are.
    engine = fresh(Typed)
    rows = [{"ref": uuid4(), "at": datetime(2026, 1, 1, i % 24, tzinfo=UTC),
             "doc": {"n": i, "tags": ["a", "b"]}, "items": [i, None], "count": i}
            for i in range(N)]
    assert engine.execute(insert(Typed).values(rows)).rows_affected() == N
    got = engine.execute(select(Typed).order_by("count")).all()
    assert [(t.ref, t.at, t.doc, t.items, t.count) for t in got] == [
        (r["ref"], r["at"], r["doc"], r["items"], r["count"]) for r in rows]
