"""Statements a builder refuses while they are built, checked against the databases: what
is refused never reaches one (the rows stay as they were), and the way out the message
names runs on every database."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    DialectError,
    Model,
    ValidationError,
    and_,
    column,
    delete,
    insert,
    join,
    not_,
    or_,
    select,
    sql,
    update,
)


class Gadget(Model, table="eng_gadgets"):
    id: int = column(primary_key=True)
    name: str
    kind: str = "plain"
    doc: dict[str, object] | None = None


class Part(Model, table="eng_parts"):
    id: int = column(primary_key=True)
    kind: str
    size: int
    note: str | None = None


MODELS = (Gadget, Part)


async def _three(db: Any) -> None:
    await db.execute(insert(Gadget).values([
        {"id": 1, "name": "a", "kind": "x"}, {"id": 2, "name": "b", "kind": "y"},
        {"id": 3, "name": "c", "kind": "x", "doc": {"k": 1}}]))


@pytest.mark.asyncio
async def test_an_empty_and_never_reaches_the_database(db: Any) -> None:
    await _three(db)
    for build in (lambda: delete(Gadget).where(and_()),
                  lambda: update(Gadget).set({"kind": "z"}).where(and_()),
                  lambda: delete(Gadget).where(or_({"id": 1}, and_())),
                  lambda: delete(Gadget).where(not_(and_()))):
        with pytest.raises(ValidationError, match=r"and_\(\) needs at least one condition"):
            await db.execute(build())
    rows = (await db.execute(select(Gadget, ["id", "kind"]).order_by("id"))).all()
    assert [(r.id, r.kind) for r in rows] == [(1, "x"), (2, "y"), (3, "x")]


@pytest.mark.asyncio
async def test_a_json_column_is_refused_where_it_would_be_compared(db: Any) -> None:
    await _three(db)
    refused = (lambda: select(Gadget).where(
                   {"doc": {"in": select(Gadget, ["doc"]).as_subquery("doc")}}),
               lambda: select(Gadget, ["doc"]).distinct(),
               lambda: select(Gadget).order_by("doc"))
    for build in refused:
        with pytest.raises(ValidationError, match="is a JSON column"):
            await db.execute(build())
    # the ways out the messages name
    kinds = (await db.execute(select(Gadget, ["kind"]).distinct().order_by("kind"))).all()
    assert [r.kind for r in kinds] == ["x", "y"]
    with_doc = (await db.execute(select(Gadget, ["id"]).where(
        {"doc": {"is_null": False}}).order_by("id"))).all()
    assert [r.id for r in with_doc] == [3]


@pytest.mark.asyncio
async def test_distinct_orders_only_by_what_it_fetches(db: Any) -> None:
    await db.execute(insert(Part).values([
        {"id": 1, "kind": "a", "size": 3, "note": None}, {"id": 2, "kind": "a", "size": 1},
        {"id": 3, "kind": "b", "size": 2, "note": "n"}]))
    for build in (lambda: select(Part, ["kind"]).distinct().order_by("size"),
                  lambda: select(Part, ["kind"]).order_by("size").distinct(),
                  lambda: join(Part, "p").distinct().order_by("p.size").project({"k": "p.kind"}),
                  lambda: select(Part).where({"id": {"in": select(Part, ["id", "kind"])
                                                     .distinct().order_by("kind").limit(2)
                                                     .as_subquery("id")}})):
        with pytest.raises(ValidationError, match=r"distinct\(\) with order_by\('(p\.)?(size|kind)'"
                                                  r"\), which the (select|subquery) does not "
                                                  r"fetch.*or drop distinct\(\)"):
            await db.execute(build())
    # what is fetched orders a distinct select on every database (PostgreSQL included)
    rows = (await db.execute(select(Part, ["kind", "note"]).distinct()
                             .order_by("note", "desc").order_by("kind"))).all()
    assert [(r.kind, r.note) for r in rows] == [("b", "n"), ("a", None)]
    counted = (await db.execute(select(Part).aggregate(["kind"], {"n": sql.count()})
                                .distinct().order_by("n", "desc").order_by("kind"))).all()
    assert [(r.kind, r.n) for r in counted] == [("a", 2), ("b", 1)]
    projected = (await db.execute(join(Part, "p").order_by("p.size", "desc")
                                  .project({"k": "p.kind", "s": "p.size"}).distinct())).all()
    assert [(r.k, r.s) for r in projected] == [("a", 3), ("b", 2), ("a", 1)]
    doubled = (await db.execute(select(Part, ["kind"]).add_columns(
        {"twice": sql.col("size") * 2}).distinct().order_by("twice"))).all()
    assert [r.twice for r in doubled] == [2, 4, 6]


@pytest.mark.asyncio
async def test_limit_in_an_in_subquery_names_the_column_it_feeds(db: Any) -> None:
    await _three(db)
    await db.execute(insert(Part).values([{"id": 1, "kind": "x", "size": 1},
                                          {"id": 2, "kind": "y", "size": 2}]))
    kinds = select(Part, ["kind"]).order_by("size").limit(1)
    stmt = update(Gadget).set({"name": "first"}).where({"kind": {"in": kinds.as_subquery("kind")}})
    if db.dialect.supports_limit_in_subquery:
        assert (await db.execute(stmt)).rows_affected() == 2
    else:  # MySQL/MariaDB: the advice names `kind`, and it works
        with pytest.raises(DialectError, match=r"select the kinds with for_update\(skip_locked="
                                               r"True\), then update\(Gadget\)\.where\("
                                               r"\{\"kind\": \{\"in\": kinds\}\}\)$"):
            await db.execute(stmt)
        async with db.transaction() as tx:
            fetched = [r.kind for r in (await tx.execute(kinds.for_update(skip_locked=True))).all()]
            assert (await tx.execute(update(Gadget).set({"name": "first"}).where(
                {"kind": {"in": fetched}}))).rows_affected() == 2
    rows = (await db.execute(select(Gadget, ["id", "name"]).order_by("id"))).all()
    assert [(r.id, r.name) for r in rows] == [(1, "first"), (2, "b"), (3, "first")]


@pytest.mark.asyncio
async def test_count_distinct_is_named_in_its_errors(db: Any) -> None:
    await _three(db)
    with pytest.raises(ValidationError, match=r"sql\.count_distinct\('doc'\) for 'n': a JSON "
                                              r"column cannot be aggregated"):
        await db.execute(select(Gadget).aggregate([], {"n": sql.count_distinct("doc")}))
    counted = select(Gadget).aggregate([], {"n": sql.count_distinct("kind")})
    assert (await db.execute(counted)).scalar() == 2


@pytest.mark.asyncio
async def test_having_reads_only_what_a_group_has(db: Any) -> None:
    await _three(db)
    await db.execute(insert(Part).values([{"id": 1, "kind": "x", "size": 1},
                                          {"id": 2, "kind": "z", "size": 2}]))
    with pytest.raises(ValidationError, match=r"having\(\) filters groups"):
        await db.execute(select(Gadget).having({"kind": "x"}))
    grouped = select(Gadget).aggregate(["kind"], {"n": sql.count()})
    with pytest.raises(ValidationError, match=r"reads sql\.col\('eng_gadgets\.id'\), which is "
                                              r"not a group column"):
        await db.execute(grouped.having({"n": {"gt": sql.col("eng_gadgets.id")}}))
    # a group column, read by a correlated subquery, runs everywhere (PostgreSQL included)
    rows = (await db.execute(grouped.having(sql.exists(select(Part).where(
        {"kind": sql.col("eng_gadgets.kind")}))).order_by("kind"))).all()
    assert [(r.kind, r.n) for r in rows] == [("x", 2)]
