"""A deadlock or a serialization failure is a TransactionConflict: rolled back, safe to rerun."""

from __future__ import annotations

import threading

import pytest

from tempest_typed import Engine, Model, TransactionConflict, column, create_engine, select, update


class ConflictRow(Model, table="engine_conflict_rows"):
    id: int = column(primary_key=True, default=0)
    n: int = 0


def _two_engines(url: str) -> tuple[Engine, Engine]:
    first = create_engine(url)
    first.drop_all(ConflictRow)
    first.create_all(ConflictRow)
    first.execute_sql("INSERT INTO engine_conflict_rows (id, n) VALUES (1, 0), (2, 0)")
    return first, create_engine(url)


def _deadlock(a: Engine, b: Engine) -> list[BaseException]:
    """Each transaction locks one row, then wants the other's."""
    both_locked = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def worker(engine: Engine, first: int, second: int) -> None:
        try:
            with engine.transaction() as tx:
                tx.execute(update(ConflictRow).set({"n": 1}).where({"id": first}))
                both_locked.wait()
                tx.execute(update(ConflictRow).set({"n": 2}).where({"id": second}))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(a, 1, 2)),
               threading.Thread(target=worker, args=(b, 2, 1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return errors


@pytest.mark.parametrize("url", ["postgresql", "mysql"], indirect=True)
def test_a_deadlock_victim_gets_transaction_conflict(url: str) -> None:
    a, b = _two_engines(url)
    try:
        errors = _deadlock(a, b)
        assert len(errors) == 1, errors
        assert isinstance(errors[0], TransactionConflict)
        assert errors[0].__cause__ is not None
        # The victim was rolled back whole: the survivor's two writes are all that is left.
        rows = a.execute(select(ConflictRow).order_by("id")).all()
        assert sorted(r.n for r in rows) == [1, 2]
    finally:
        a.drop_all(ConflictRow)
        a.close()
        b.close()


def test_a_serialization_failure_gets_transaction_conflict(pg_url: str) -> None:
    a, b = _two_engines(pg_url)
    try:
        with pytest.raises(TransactionConflict), a.transaction(isolation="serializable") as tx:
            tx.execute(select(ConflictRow).where({"id": 1})).one()
            b.execute(update(ConflictRow).set({"n": 5}).where({"id": 1}))
            tx.execute(update(ConflictRow).set({"n": 6}).where({"id": 1}))
        assert a.execute(select(ConflictRow, ["n"]).where({"id": 1})).scalar() == 5
    finally:
        a.drop_all(ConflictRow)
        a.close()
        b.close()
