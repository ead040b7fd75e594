"""The engine contract, written once and run on both engines on the three databases.

Each test is an async function taking `db`: the blocking Engine behind a thin adapter whose
methods are awaitable (each runs the blocking call as it is), or the AsyncEngine itself. So
every line below is a statement of what both engines do.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tempest_typed import (
    AsyncEngine,
    ConfigurationError,
    Engine,
    IntegrityError,
    QueryExecutionError,
    Row,
    SchemaError,
    TempestError,
    TransactionAborted,
    ValidationError,
    create_async_engine,
    create_engine,
    delete,
    insert,
    join,
    select,
    update,
)

from .both_engines import SyncEngine
from .conftest import Child, Item, Parent

pytestmark = pytest.mark.asyncio



async def _fill(db: Any, n: int) -> None:
    await db.execute(insert(Item).values([{"name": f"item {i:06}", "qty": i} for i in range(n)]))


# -- execute and results -------------------------------------------------------------------


async def test_execute_returns_models_rows_and_counts(db: Any) -> None:
    made = (await db.execute(insert(Item).values({"name": "a", "qty": 2}).returning())).one()
    assert isinstance(made, Item) and made.name == "a" and made.qty == 2
    await db.execute(insert(Item).values([{"name": "b"}, {"name": "c", "note": "x"}]))
    items = (await db.execute(select(Item).order_by("name"))).all()
    assert [i.name for i in items] == ["a", "b", "c"]
    row = (await db.execute(select(Item, ["name", "qty"]).where({"name": "a"}))).one()
    assert isinstance(row, Row) and row.name == "a" and row["qty"] == 2
    assert (await db.execute(select(Item, ["qty"]).where({"name": "a"}))).scalar() == 2
    changed = await db.execute(update(Item).set({"qty": 5}).where({"name": {"in": ["b", "c"]}}))
    assert changed.rows_affected() == 2
    assert (await db.execute_sql("SELECT 1")).scalar() == 1


async def test_join_rows_are_keyed_by_alias(db: Any) -> None:
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    await db.execute(insert(Child).values([{"id": 1, "parent_id": 1}, {"id": 2, "parent_id": 1}]))
    rows = (await db.execute(
        join(Parent, "p").inner_join(Child, "c", {"p.id": "c.parent_id"}).order_by("c.id")
    )).all()
    assert [(r.p.name, r.c.id) for r in rows] == [("p", 1), ("p", 2)]
    assert isinstance(rows[0]["c"], Child)


# -- transactions and savepoints -----------------------------------------------------------


async def test_a_transaction_commits_or_rolls_back_as_a_whole(db: Any) -> None:
    async with db.transaction() as tx:
        await tx.execute(insert(Item).values({"name": "kept"}))
        assert tx.in_transaction
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "undone"}))
            raise RuntimeError("boom")
    names = (await db.execute(select(Item, ["name"]))).scalars()
    assert names == ["kept"]


async def test_a_nested_transaction_is_a_savepoint(db: Any) -> None:
    async with db.session() as s:
        async with s.transaction():
            await s.execute(insert(Item).values({"name": "outer"}))
            with pytest.raises(RuntimeError):
                async with s.transaction():
                    await s.execute(insert(Item).values({"name": "inner"}))
                    raise RuntimeError("undo the savepoint only")
            async with s.transaction():
                await s.execute(insert(Item).values({"name": "second"}))
            with pytest.raises(ConfigurationError, match="savepoint"):
                async with s.transaction(read_only=True):
                    pass
        assert not s.in_transaction
        names = (await s.execute(select(Item, ["name"]).order_by("name"))).scalars()
    assert names == ["outer", "second"]


async def test_isolation_and_read_only(db: Any) -> None:
    async with db.transaction(isolation="serializable") as tx:
        await tx.execute(insert(Item).values({"name": "a"}))
    with pytest.raises(TransactionAborted) as aborted:
        async with db.transaction(read_only=True) as tx:
            assert len((await tx.execute(select(Item))).all()) == 1
            with pytest.raises(QueryExecutionError) as refused:
                await tx.execute(insert(Item).values({"name": "b"}))
            assert refused.value.__cause__ is not None
    assert aborted.value.__cause__ is refused.value  # the refused write ended the transaction
    with pytest.raises(ConfigurationError, match="isolation level"):
        async with db.transaction(isolation="sometimes"):
            pass
    # the read-only transaction set nothing that outlives it
    async with db.session() as s:
        await s.execute(insert(Item).values({"name": "c"}))
    assert len((await db.execute(select(Item))).all()) == 2


@pytest.mark.parametrize("options, says", [
    ({"isolation": 5}, "isolation must be None or one of 'read uncommitted'"),
    ({"isolation": ""}, "isolation must be None or one of"),
    ({"read_only": "no"}, "read_only must be True or False, got 'no'"),
    ({"read_only": None}, "read_only must be True or False"),
])
async def test_a_bad_transaction_option_is_refused_before_begin(
    db: Any, options: dict[str, Any], says: str
) -> None:
    """isolation=5 was a bare AttributeError, isolation="" the default taken silently, and
    read_only="no" opened a READ ONLY transaction."""
    with pytest.raises(ConfigurationError, match=says):
        async with db.transaction(**options):
            pass
    async with db.session() as s:  # the session's transaction is refused the same way
        with pytest.raises(ConfigurationError, match=says):
            async with s.transaction(**options):
                pass
        async with s.transaction():  # and nothing was begun
            with pytest.raises(ConfigurationError, match=says):
                async with s.transaction(**options):  # nested: the option's own error
                    pass
    with pytest.raises(ConfigurationError, match=says):
        await db.run_transaction(lambda tx: tx.execute(select(Item)), **options)


async def test_run_transaction_refuses_what_it_cannot_call(db: Any) -> None:
    """run_transaction(None) was a bare TypeError."""
    engine = db.engine if isinstance(db, SyncEngine) else db
    for work in (None, "work"):
        with pytest.raises(ConfigurationError, match=r"run_transaction\(work\) takes a function"):
            result = engine.run_transaction(work)
            if not isinstance(db, SyncEngine):
                await result


def _generator_work(tx: Any) -> Any:
    yield tx.execute(insert(Item).values({"name": "never"}))


async def _async_work(tx: Any) -> None:
    await tx.execute(insert(Item).values({"name": "never"}))


async def test_run_transaction_refuses_work_whose_call_would_not_run_it(db: Any) -> None:
    """A generator function, an async function on the blocking engine, or a lambda returning
    a coroutine there: the transaction committed with the work never done (the coroutine or
    generator returned as the result). On the async engine a plain function's result was a
    bare TypeError from `await`."""
    engine = db.engine if isinstance(db, SyncEngine) else db
    blocking = isinstance(db, SyncEngine)
    ran: list[str] = []

    def plain(tx: Any) -> int:
        ran.append("plain")
        return 1

    refused: list[tuple[Any, str]] = [(_generator_work, "generator function")]
    if blocking:
        refused += [(_async_work, "is an async function"),
                    (lambda tx: _async_work(tx), "an awaitable"),
                    (lambda tx: _generator_work(tx), "a generator")]
    else:
        refused += [(plain, "not an awaitable"), (lambda tx: _generator_work(tx), "a generator")]
    for work, says in refused:
        with pytest.raises(ConfigurationError, match=says):
            result = engine.run_transaction(work)
            if not blocking:
                await result
    assert (await db.execute(select(Item).where({"name": "never"}))).all() == []
    assert ran == ([] if blocking else ["plain"])


# -- errors, the guard, the log ------------------------------------------------------------


async def test_a_unique_violation_is_an_integrity_error_with_the_driver_error_as_cause(
        db: Any) -> None:
    await db.execute(insert(Item).values({"name": "same"}))
    async with db.session() as s:
        with pytest.raises(IntegrityError) as caught:
            await s.execute(insert(Item).values({"name": "same"}))
        error = caught.value
        assert error.kind == "unique"
        assert "INSERT" in error.sql.upper() and "same" in list(error.params)
        assert error.__cause__ is not None and type(error.__cause__).__module__.split(".")[0] in (
            "psycopg", "asyncmy", "pymysql", "sqlite3")
        if db.dialect.name == "postgresql":
            assert error.constraint == "eng_items_name_key"
        elif db.dialect.name in ("mysql", "mariadb"):
            assert error.constraint == "name"
        # the session goes on after the error
        assert (await s.execute(select(Item, ["name"]))).scalars() == ["same"]


async def test_a_foreign_key_violation_names_its_kind(db: Any) -> None:
    with pytest.raises(IntegrityError) as caught:
        await db.execute(insert(Child).values({"id": 1, "parent_id": 99}))
    assert caught.value.kind == "foreign_key"


async def test_an_update_or_delete_without_where_is_refused_before_it_runs(db: Any) -> None:
    await db.execute(insert(Item).values({"name": "a"}))
    with pytest.raises(ValidationError, match="unguarded"):
        await db.execute(update(Item).set({"qty": 1}))
    with pytest.raises(ValidationError, match="unguarded"):
        await db.execute(delete(Item))
    assert (await db.execute(select(Item, ["qty"]))).scalars() == [0]
    assert (await db.execute(delete(Item).unguarded())).rows_affected() == 1


async def test_every_statement_is_logged(db: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="tempest_typed.sql"):
        async with db.transaction() as tx:
            await tx.execute(insert(Item).values({"name": "logged"}))
    lines = [r.getMessage() for r in caplog.records if r.name == "tempest_typed.sql"]
    assert lines[0].startswith("BEGIN")
    assert any("INSERT" in line.upper() and "'logged'" in line for line in lines)
    assert lines[-1].startswith("COMMIT")


# -- DDL and dispose -----------------------------------------------------------------------


async def test_create_all_again_is_harmless_and_a_different_table_is_a_schema_error(
        db: Any) -> None:
    await db.create_all(Item, Parent, Child)
    await db.check_schema(Item, Parent, Child)
    from tempest_typed import Model, column

    class Other(Model, table="eng_items"):
        id: int = column(primary_key=True)
        label: str

    with pytest.raises(SchemaError, match="label"):
        await db.check_schema(Other)
    with pytest.raises(SchemaError):
        await db.create_all(Other)


async def test_an_engine_used_after_dispose_raises_tempest_error(url: str) -> None:
    for engine in (SyncEngine(create_engine(url)), create_async_engine(url)):
        assert (await engine.execute_sql("SELECT 1")).scalar() == 1
        await engine.dispose()
        with pytest.raises(TempestError):
            await engine.execute_sql("SELECT 1")


# -- streaming -----------------------------------------------------------------------------


async def test_stream_yields_what_all_returns_in_chunks(db: Any) -> None:
    await _fill(db, 2_345)
    query = select(Item).order_by("name")
    everything = (await db.execute(query)).all()
    async with db.session() as s:
        streamed = [item async for item in s.stream(query, chunk_size=100)]
        rows = [r async for r in s.stream(select(Item, ["name", "qty"]).order_by("name"))]
    assert streamed == everything
    assert [(r.name, r.qty) for r in rows] == [(i.name, i.qty) for i in everything]


async def test_a_long_in_list_reads_the_same_through_every_path(db: Any) -> None:
    """An `in` list past 50 parameters (one array on PostgreSQL) in all(), stream(), an
    update, a delete and a transaction, on both engines."""
    await _fill(db, 300)
    names = [f"item {i:06}" for i in range(0, 300, 3)]
    query = select(Item, ["name"]).where({"name": {"in": names}}).order_by("name")
    assert (await db.execute(query)).scalars() == names
    async with db.session() as s:
        assert [r.name async for r in s.stream(query, chunk_size=7)] == names
    async with db.transaction() as tx:
        changed = await tx.execute(update(Item).set({"qty": -1}).where(
            {"name": {"in": names}, "qty": {"not_in": list(range(1000, 1060))}}))
        assert changed.rows_affected() == len(names)
    gone = await db.execute(delete(Item).where({"qty": {"not_in": [-1] * 60}}))
    assert gone.rows_affected() == 300 - len(names)
    assert (await db.execute(select(Item, ["name"]).order_by("name"))).scalars() == names


async def test_an_in_list_past_the_parameter_limit_runs_on_postgresql_only(db: Any) -> None:
    """PostgreSQL binds it as one array; the other databases bind each value and say to
    split the list."""
    await _fill(db, 3)
    ids = [*range(-70_000, 0), 1, 2]
    query = select(Item, ["name"]).where({"id": {"in": ids}}).order_by("name")
    if db.dialect.name == "postgresql":
        assert (await db.execute(query)).scalars() == ["item 000000", "item 000001"]
    else:
        with pytest.raises(ValidationError, match="split it"):
            await db.execute(query)


async def test_stream_of_a_join_yields_rows_keyed_by_alias(db: Any) -> None:
    await db.execute(insert(Parent).values({"id": 1, "name": "p"}))
    await db.execute(insert(Child).values([{"id": i, "parent_id": 1} for i in range(1, 6)]))
    query = join(Parent, "p").inner_join(Child, "c", {"p.id": "c.parent_id"}).order_by("c.id")
    async with db.session() as s:
        rows = [r async for r in s.stream(query, chunk_size=2)]
    assert [(r.p.name, r.c.id) for r in rows] == [("p", i) for i in range(1, 6)]


async def _open_cursors(s: Any, dialect: str) -> int:
    if dialect != "postgresql":
        return 0
    return int((await s.execute_sql("SELECT count(*) FROM pg_cursors")).scalar())


async def test_leaving_a_stream_early_closes_the_cursor_and_the_session_goes_on(db: Any) -> None:
    await _fill(db, 3_000)
    dialect = db.dialect.name
    async with db.session() as s:
        seen = 0
        async for _item in s.stream(select(Item).order_by("id"), chunk_size=50):
            seen += 1
            if seen == 10:
                break
        assert (await s.execute(select(Item, ["name"]).where({"qty": 7}))).scalar() == "item 000007"
        assert await _open_cursors(s, dialect) == 0
        assert not s.in_transaction
        with pytest.raises(RuntimeError):
            async for _item in s.stream(select(Item), chunk_size=50):
                raise RuntimeError("the handler failed")
        assert len((await s.execute(select(Item))).all()) == 3_000
        assert await _open_cursors(s, dialect) == 0
        async with s.stream(select(Item), chunk_size=10) as rows:
            async for _item in rows:
                break
        assert await _open_cursors(s, dialect) == 0
        # the same session streams again, inside a transaction too
        async with s.transaction():
            await s.execute(insert(Item).values({"name": "uncommitted"}))
            names = [i.name async for i in s.stream(select(Item).where({"name": "uncommitted"}))]
            assert names == ["uncommitted"]
            assert s.in_transaction


async def test_stream_refuses_a_statement_without_rows_and_a_bad_chunk_size(db: Any) -> None:
    async with db.session() as s:
        with pytest.raises(ValidationError, match="chunk_size"):
            async for _ in s.stream(select(Item), chunk_size=0):
                pass
        with pytest.raises(ValidationError, match="returns rows"):
            async for _ in s.stream(update(Item).set({"qty": 1}).where({"id": 1})):
                pass
        assert (await s.execute_sql("SELECT 1")).scalar() == 1


async def test_an_engine_is_async_or_not_by_its_class(url: str) -> None:
    sync, aio = create_engine(url), create_async_engine(url)
    try:
        assert isinstance(sync, Engine) and isinstance(aio, AsyncEngine)
        assert repr(aio).startswith("<AsyncEngine ")
    finally:
        sync.close()
        await aio.dispose()
