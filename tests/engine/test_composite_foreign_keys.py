"""A composite foreign key (`__foreign_keys__ = (ForeignKey([...], table, [...]),)`) and an
upsert on a composite key, on every database and both engines; the key checked against the
models it names when a model is defined, against the database at create_all()."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    ForeignKey,
    Index,
    IntegrityError,
    Model,
    SchemaError,
    ValidationError,
    column,
    insert,
    join,
    select,
    sql,
)
from tempest_typed.dialects.ddl import create_table_sql
from tempest_typed.dialects.postgresql import PostgreSQLDialect
from tempest_typed.model import meta_of


class Line(Model, table="eng_cfk_lines"):
    """An order line: its key is the order and the line number."""

    order_id: int = column(primary_key=True)
    line_no: int = column(primary_key=True)
    sku: str = column(max_length=20)
    qty: int = 1


class Shipment(Model, table="eng_cfk_shipments"):
    """What was sent of one order line."""

    id: int = column(primary_key=True)
    order_id: int
    line_no: int
    sent: int

    __foreign_keys__ = (ForeignKey(["order_id", "line_no"], "eng_cfk_lines",
                                   ["order_id", "line_no"]),)


#: 63 characters: InnoDB's own name of its keys, `<table>_ibfk_<n>`, would be 69
LONG_TABLE = "eng_cfk_" + "r" * 55


class Return(Model, table=LONG_TABLE):
    """What came back of one shipment's line: a table name too long for InnoDB's key names."""

    id: int = column(primary_key=True)
    shipment_id: int = column(references="eng_cfk_shipments.id")
    order_id: int
    line_no: int

    __foreign_keys__ = (ForeignKey(["order_id", "line_no"], "eng_cfk_lines",
                                   ["order_id", "line_no"]),)


MODELS = (Return, Shipment, Line)


def test_the_key_is_a_table_constraint() -> None:
    ddl = create_table_sql(meta_of(Shipment), PostgreSQLDialect())
    assert ('FOREIGN KEY ("order_id", "line_no") REFERENCES "eng_cfk_lines" '
            '("order_id", "line_no")') in ddl


@pytest.mark.asyncio
async def test_the_key_holds_and_refuses_a_line_that_does_not_exist(db: Any) -> None:
    await db.execute(insert(Line).values([
        {"order_id": 1, "line_no": 1, "sku": "a"}, {"order_id": 1, "line_no": 2, "sku": "b"}]))
    await db.execute(insert(Shipment).values({"id": 1, "order_id": 1, "line_no": 2, "sent": 3}))
    with pytest.raises(IntegrityError):
        await db.execute(insert(Shipment).values(
            {"id": 2, "order_id": 2, "line_no": 1, "sent": 1}))  # no such line
    rows = (await db.execute(
        join(Shipment, "s").inner_join(Line, "l", {"s.order_id": "l.order_id",
                                                   "s.line_no": "l.line_no"}))).all()
    assert [(r.s.id, r.l.sku) for r in rows] == [(1, "b")]
    await db.check_schema(*MODELS)


@pytest.mark.asyncio
async def test_a_long_tables_keys_hold(db: Any) -> None:
    # MariaDB refused the CREATE TABLE (error 1059: `<table>_ibfk_1` is too long), and MySQL 8
    # ignored the column's inline REFERENCES: the keys are table constraints there, named to
    # fit 64 characters. Each holds on every database.
    await db.execute(insert(Line).values({"order_id": 1, "line_no": 1, "sku": "a"}))
    await db.execute(insert(Shipment).values({"id": 1, "order_id": 1, "line_no": 1, "sent": 1}))
    await db.execute(insert(Return).values(
        {"id": 1, "shipment_id": 1, "order_id": 1, "line_no": 1}))
    for bad in ({"shipment_id": 2, "order_id": 1, "line_no": 1},
                {"shipment_id": 1, "order_id": 1, "line_no": 2}):
        with pytest.raises(IntegrityError):
            await db.execute(insert(Return).values({"id": 2, **bad}))
    if db.dialect.name == "mariadb":
        rows = await db.execute_sql(
            "SELECT CONSTRAINT_NAME FROM information_schema.TABLE_CONSTRAINTS "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s "
            "AND CONSTRAINT_TYPE = 'FOREIGN KEY' ORDER BY CONSTRAINT_NAME", [LONG_TABLE])
        names = [str(row[0]) for row in rows.all()]
        assert [name[:len(LONG_TABLE[:51]) + 4] for name in names] == [
            LONG_TABLE[:51] + "_fk1", LONG_TABLE[:51] + "_fk2"]
        assert all(len(name) == 64 for name in names)
    await db.check_schema(*MODELS)


@pytest.mark.asyncio
async def test_an_upsert_on_the_composite_key(db: Any) -> None:
    await db.execute(insert(Line).values({"order_id": 1, "line_no": 1, "sku": "a", "qty": 1}))
    stmt = insert(Line).values({"order_id": 1, "line_no": 1, "sku": "a", "qty": 5})
    if db.dialect.supports_conflict_target:
        stmt = stmt.on_conflict_do_update(["order_id", "line_no"],
                                          set={"qty": sql.excluded("qty")})
    else:  # MySQL: ON DUPLICATE KEY UPDATE, the key being the table's own
        stmt = stmt.on_conflict_do_update(None, set={"qty": sql.excluded("qty")})
    await db.execute(stmt)
    await db.execute(insert(Line).values({"order_id": 1, "line_no": 2, "sku": "b"}))
    rows = (await db.execute(select(Line).order_by("line_no"))).all()
    assert [(r.line_no, r.qty) for r in rows] == [(1, 5), (2, 1)]


@pytest.mark.asyncio
async def test_a_key_of_a_table_no_model_names_is_looked_up_at_create_all(db: Any) -> None:
    class Stray(Model, table="eng_cfk_strays"):
        id: int = column(primary_key=True)
        a: int
        b: int

        __foreign_keys__ = (ForeignKey(["a", "b"], "eng_cfk_nowhere", ["x", "y"]),)

    class Partial(Model, table="eng_cfk_partials"):
        id: int = column(primary_key=True)
        a: int
        b: int

        __foreign_keys__ = (ForeignKey(["a", "b"], "eng_cfk_plain", ["x", "nope"]),)

    await db.execute_sql("CREATE TABLE eng_cfk_plain (x INT PRIMARY KEY, y INT)")
    try:
        for model, said in ((Stray, "no table eng_cfk_nowhere"),
                            (Partial, "eng_cfk_plain has no column nope")):
            with pytest.raises(SchemaError) as info:
                await db.create_all(model)
            (difference,) = info.value.differences
            assert difference.problem == "unknown reference"
            assert said in str(info.value)
            await db.drop_all(model)
    finally:
        await db.execute_sql("DROP TABLE eng_cfk_plain")


@pytest.mark.parametrize(("keys", "message"), [
    (lambda: (ForeignKey(["order_id", "line"], "eng_cfk_lines", ["order_id", "line_no"]),),
     "has no column 'line'"),
    (lambda: (ForeignKey(["order_id", "line_no"], "eng_cfk_lines", ["order_id", "line"]),),
     "Line (table 'eng_cfk_lines') has no column 'line'"),
    (lambda: (ForeignKey(["order_id", "note"], "eng_cfk_lines", ["order_id", "line_no"]),),
     "Line.line_no is int and Bad.note is str: a foreign key joins values of one type"),
    (lambda: (ForeignKey(["order_id", "line_no"], "eng_cfk_lines", ["order_id", "qty"]),),
     "(order_id, qty) of Line is neither its primary key nor a unique index"),
    (lambda: ("order_id",), "__foreign_keys__ holds 'order_id', not a ForeignKey"),
])
def test_a_key_that_does_not_fit_its_model_is_refused_where_the_model_is_defined(
    keys: Any, message: str,
) -> None:
    with pytest.raises(ValidationError) as info:
        class Bad(Model, table="eng_cfk_bad"):
            id: int = column(primary_key=True)
            order_id: int
            line_no: int
            note: str

            __foreign_keys__ = keys()
    assert message in str(info.value)


def test_a_unique_index_over_the_columns_is_a_key_too() -> None:
    class Sku(Model, table="eng_cfk_skus"):
        id: int = column(primary_key=True)
        vendor: str = column(max_length=10)
        code: str = column(max_length=10)

        __indexes__ = (Index("eng_cfk_skus_vendor_code", ["vendor", "code"], unique=True),)

    class Stock(Model, table="eng_cfk_stock"):
        id: int = column(primary_key=True)
        vendor: str = column(max_length=10)
        code: str = column(max_length=10)

        __foreign_keys__ = (ForeignKey(["vendor", "code"], "eng_cfk_skus", ["code", "vendor"]),)

    assert meta_of(Stock).foreign_keys[0].table_columns == ("code", "vendor")


@pytest.mark.parametrize(("build", "message"), [
    (lambda: ForeignKey("a", "t", ["x"]), "columns must be a non-empty list of column names, "
                                          "got 'a'; write ['a']"),
    (lambda: ForeignKey(["a", "b"], "t", ["x"]), "2 column(s) cannot hold a key of 1 column(s)"),
    (lambda: ForeignKey([], "t", []), "non-empty list"),
])
def test_a_foreign_key_is_checked_when_written(build: Any, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        build()
    assert message in str(info.value)
