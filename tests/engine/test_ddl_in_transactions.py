"""MySQL and MariaDB commit the open transaction before DDL and run the rest outside it: DDL
through execute_sql() inside transaction() is refused there, before anything runs, with a
DialectError naming the fix; elsewhere (PostgreSQL and SQLite roll DDL back) it runs."""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import DialectError, Model, column, insert, select


class Kept(Model, table="eng_ddl_kept"):
    id: int = column(primary_key=True)


MODELS = (Kept,)

pytestmark = pytest.mark.asyncio

DDL = [
    "CREATE TABLE eng_ddl_other (id int)",
    "  -- a comment first\n alter TABLE eng_ddl_kept ADD COLUMN n int",
    "/* a comment */ DROP TABLE eng_ddl_kept",
    "TRUNCATE TABLE eng_ddl_kept",
    "RENAME TABLE eng_ddl_kept TO eng_ddl_renamed",
    "# a comment\nCREATE INDEX eng_ddl_ix ON eng_ddl_kept (id)",
]


async def _ids(db: Any) -> list[int]:
    return [r.id for r in (await db.execute(select(Kept).order_by("id"))).all()]


@pytest.mark.parametrize("url", ["mysql"], indirect=True)
async def test_mysql_refuses_ddl_inside_a_transaction(db: Any) -> None:
    for ddl in DDL:
        keyword = ddl.split("\n")[-1].split("*/")[-1].split()[0].upper()
        with pytest.raises(RuntimeError, match="roll back"):
            async with db.transaction() as tx:
                await tx.execute(insert(Kept).values({"id": 1}))
                with pytest.raises(DialectError, match=(
                        rf"inside transaction\(\): MySQL and MariaDB commit the open "
                        rf"transaction before a {keyword} statement.*run the {keyword} outside "
                        r"the transaction: with engine.execute_sql\(\)")):
                    await tx.execute_sql(ddl)
                # refused before it ran: nothing was committed, the transaction goes on
                await tx.execute(insert(Kept).values({"id": 2}))
                raise RuntimeError("roll back")
        assert await _ids(db) == []


@pytest.mark.parametrize("url", ["mysql"], indirect=True)
async def test_mysql_runs_what_does_not_commit(db: Any) -> None:
    async with db.transaction() as tx:
        # a temporary table's CREATE and DROP do not commit; nor do DML and SELECT
        await tx.execute_sql("CREATE TEMPORARY TABLE eng_ddl_scratch (id int)")
        await tx.execute_sql("INSERT INTO eng_ddl_scratch (id) VALUES (1)")
        await tx.execute_sql("DROP TEMPORARY TABLE eng_ddl_scratch")
        await tx.execute_sql("INSERT INTO eng_ddl_kept (id) VALUES (3)")
        assert (await tx.execute_sql("SELECT 'CREATE TABLE x'")).scalar() == "CREATE TABLE x"
    await db.execute_sql("CREATE TABLE eng_ddl_other (id int)")  # outside: runs
    await db.execute_sql("DROP TABLE eng_ddl_other")
    async with db.session() as session:
        await session.execute_sql("CREATE TABLE eng_ddl_other (id int)")
        await session.execute_sql("DROP TABLE eng_ddl_other")
    assert await _ids(db) == [3]


@pytest.mark.parametrize("url", ["postgresql", "sqlite"], indirect=True)
async def test_ddl_inside_a_transaction_rolls_back_elsewhere(db: Any) -> None:
    with pytest.raises(RuntimeError, match="roll back"):
        async with db.transaction() as tx:
            await tx.execute(insert(Kept).values({"id": 1}))
            await tx.execute_sql("CREATE TABLE eng_ddl_other (id int)")
            raise RuntimeError("roll back")
    assert await _ids(db) == []
    await db.execute_sql("CREATE TABLE eng_ddl_other (id int)")  # it was rolled back
    await db.execute_sql("DROP TABLE eng_ddl_other")


CONTROL = ["COMMIT", "rollback", "  BEGIN", "START TRANSACTION", "END", "SAVEPOINT mine",
           "RELEASE SAVEPOINT mine", "/* the end */ ROLLBACK TO SAVEPOINT mine"]


async def test_transaction_control_inside_a_transaction_is_refused(db: Any) -> None:
    for text in CONTROL:
        keyword = text.split("*/")[-1].split()[0].upper()
        with pytest.raises(RuntimeError, match="roll back"):
            async with db.transaction() as tx:
                await tx.execute(insert(Kept).values({"id": 1}))
                with pytest.raises(DialectError, match=(
                        rf"execute_sql\('{keyword} \.\.\.'\) inside transaction\(\): the "
                        r"transaction is transaction\(\)'s.*leave the block to commit, raise "
                        r"out of it to roll back, and open a nested transaction\(\) for a "
                        r"savepoint")):
                    await tx.execute_sql(text)
                await tx.execute(insert(Kept).values({"id": 2}))
                raise RuntimeError("roll back")
        assert await _ids(db) == []
    # outside transaction() the text is the caller's own
    async with db.session() as session:
        assert (await session.execute_sql("SELECT 'COMMIT'")).scalar() == "COMMIT"
