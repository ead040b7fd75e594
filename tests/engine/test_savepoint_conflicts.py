"""MySQL and MariaDB roll a deadlock victim back whole, savepoints included: a deadlock in a
nested transaction() is a TransactionConflict (never the "SAVEPOINT does not exist" of the
rollback to a savepoint the server dropped), and run_transaction() runs the whole outer
transaction again."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tempest_typed import (
    Model,
    TransactionAborted,
    TransactionConflict,
    column,
    create_engine,
    select,
    update,
)


class Cell(Model, table="eng_conflict_cells"):
    id: int = column(primary_key=True)
    n: int = 0


MODELS = (Cell,)

pytestmark = [pytest.mark.asyncio,
              pytest.mark.parametrize("url", ["mysql"], indirect=True)]


class Rival:
    """Another connection's transaction: it writes many rows (so that InnoDB picks the test's
    lighter transaction as the deadlock victim), locks row 2, then waits for row 1."""

    def __init__(self, url: str) -> None:
        self._engine = create_engine(url)
        self.holds_row_2 = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run)

    def start(self) -> None:
        self._thread.start()
        assert self.holds_row_2.wait(10)
        time.sleep(0.3)  # it now waits for row 1

    def _run(self) -> None:
        try:
            with self._engine.transaction() as tx:
                tx.execute_sql("UPDATE eng_conflict_cells SET n = n + 100 WHERE id > 2")
                tx.execute(update(Cell).set({"n": 20}).where({"id": 2}))
                self.holds_row_2.set()
                tx.execute(update(Cell).set({"n": 10}).where({"id": 1}))
        except BaseException as exc:
            self.error = exc

    def join(self) -> None:
        self._thread.join(30)
        self._engine.close()
        assert self.error is None, self.error


async def _fill(db: Any) -> None:
    await db.execute_sql("INSERT INTO eng_conflict_cells (id, n) VALUES "
                         + ", ".join(f"({i}, 0)" for i in range(1, 200)))


async def _n(db: Any, row: int) -> int:
    return int((await db.execute(select(Cell, ["n"]).where({"id": row}))).scalar())


async def test_a_deadlock_in_a_savepoint_is_a_conflict_and_runs_again(db: Any, url: str) -> None:
    await _fill(db)
    rival = Rival(url)
    tries: list[int] = []

    async def work(tx: Any) -> str:
        tries.append(1)
        await tx.execute(update(Cell).set({"n": 1}).where({"id": 1}))
        if len(tries) == 1:
            rival.start()
        async with tx.transaction():
            await tx.execute(update(Cell).set({"n": 2}).where({"id": 2}))
        return "done"

    try:
        assert await db.run_transaction(work) == "done"
    finally:
        rival.join()
    assert len(tries) == 2
    # the rival committed after the first try was rolled back; the second try came last
    assert (await _n(db, 1), await _n(db, 2), await _n(db, 3)) == (1, 2, 100)


async def test_the_conflict_aborts_the_outer_transaction(db: Any, url: str) -> None:
    await _fill(db)
    rival = Rival(url)
    try:
        with pytest.raises(TransactionAborted) as aborted:
            async with db.transaction() as tx:
                await tx.execute(update(Cell).set({"n": 1}).where({"id": 1}))
                rival.start()
                with pytest.raises(TransactionConflict, match=r"\(1213\)"):
                    async with tx.transaction():
                        await tx.execute(update(Cell).set({"n": 2}).where({"id": 2}))
                # the server rolled back everything: nothing more runs in this transaction
                await tx.execute(update(Cell).set({"n": 3}).where({"id": 3}))
        assert isinstance(aborted.value.__cause__, TransactionConflict)
    finally:
        rival.join()
    assert (await _n(db, 1), await _n(db, 2), await _n(db, 3)) == (10, 20, 100)


async def test_a_conflict_caught_inside_the_savepoint_aborts_it_too(db: Any, url: str) -> None:
    await _fill(db)
    rival = Rival(url)
    try:
        with pytest.raises(TransactionAborted):
            async with db.transaction() as tx:
                await tx.execute(update(Cell).set({"n": 1}).where({"id": 1}))
                rival.start()
                with pytest.raises(TransactionAborted) as aborted:
                    async with tx.transaction():
                        with pytest.raises(TransactionConflict):
                            await tx.execute(update(Cell).set({"n": 2}).where({"id": 2}))
                assert isinstance(aborted.value.__cause__, TransactionConflict)
                assert tx.in_transaction
    finally:
        rival.join()
    assert (await _n(db, 1), await _n(db, 2)) == (10, 20)
    # the connection is fine for the next user
    async with db.session() as session, session.transaction() as tx, tx.transaction():
        await tx.execute(update(Cell).set({"n": 5}).where({"id": 5}))
    assert await _n(db, 5) == 5
