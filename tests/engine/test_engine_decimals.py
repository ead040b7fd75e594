"""Decimal columns: column(precision=, scale=) fixes their size, and values read back the same
on every database: at the column's scale, or, without one, as a plain number (never MariaDB's
`Decimal('0E-30')` of its DECIMAL(65, 30))."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tempest_typed import Engine, Model, ValidationError, column, insert, select, update
from tempest_typed.dialects.ddl import create_statements

from .conftest import Fresh


class Ledger(Model, table="eng_ledger"):
    """A sized Decimal, a whole-number Decimal, and one of the dialect's widest size."""

    id: int = column(primary_key=True)
    amount: Decimal = column(precision=8, scale=2)
    units: Decimal | None = column(default=None, precision=5)
    loose: Decimal = Decimal(0)


def test_the_size_is_in_the_ddl_of_each_dialect() -> None:
    sql = {name: create_statements(Ledger, name)[0] for name in ("postgresql", "mysql", "sqlite")}
    assert '"amount" numeric(8, 2) NOT NULL' in sql["postgresql"]
    assert '"units" numeric(5, 0)' in sql["postgresql"]
    assert '"loose" numeric NOT NULL' in sql["postgresql"]
    assert "`amount` DECIMAL(8, 2) NOT NULL" in sql["mysql"]
    assert "`units` DECIMAL(5, 0)" in sql["mysql"]
    assert "`loose` DECIMAL(65, 30) NOT NULL" in sql["mysql"]
    assert '"amount" TEXT NOT NULL' in sql["sqlite"]


def _read(engine: Engine) -> list[tuple[Decimal, Decimal | None, Decimal]]:
    rows = engine.execute(select(Ledger).order_by("id")).all()
    partial = engine.execute(select(Ledger, ["amount", "units", "loose"]).order_by("id")).all()
    assert [(r.amount, r.units, r.loose) for r in rows] == [tuple(r) for r in partial]
    return [(r.amount, r.units, r.loose) for r in rows]


def test_values_read_back_at_the_scale_or_plain(fresh: Fresh) -> None:
    engine = fresh(Ledger)
    engine.execute(insert(Ledger).values([
        {"id": 1, "amount": Decimal("0"), "units": 0, "loose": Decimal("0")},
        {"id": 2, "amount": Decimal("1.5"), "units": Decimal("12"), "loose": Decimal("1.500")},
        {"id": 3, "amount": 7, "units": None, "loose": Decimal("100")},
        {"id": 4, "amount": Decimal("-123456.78"), "units": Decimal("-99999"),
         "loose": Decimal("-0.000001")},
    ]))
    got = _read(engine)
    assert [tuple(str(v) for v in row) for row in got] == [
        ("0.00", "0", "0"),
        ("1.50", "12", "1.5"),
        ("7.00", "None", "100"),
        ("-123456.78", "-99999", "-0.000001"),
    ]
    engine.execute(update(Ledger).set({"amount": Decimal("2.1"), "loose": Decimal("2.10")})
                   .where({"id": 1}))
    assert [str(v) for v in _read(engine)[0]] == ["2.10", "0", "2.1"]


@pytest.mark.parametrize(("value", "message"), [
    (Decimal("1.005"), "Ledger.amount: Decimal('1.005') has 3 digits after the point, and the "
     "column keeps 2 (column(precision=8, scale=2)) in values(); round it first, e.g. "
     "value.quantize(Decimal(\"0.01\"))"),
    (Decimal("1234567"), "Ledger.amount: Decimal('1234567') has 7 digits before the point, and "
     "the column holds 6 (column(precision=8, scale=2)) in values()"),
])
def test_a_value_the_size_cannot_hold_is_refused_before_any_database(
        fresh: Fresh, value: Decimal, message: str) -> None:
    # PostgreSQL would round 1.005 to 1.01, MySQL too (with a warning), and SQLite keep it:
    # refused alike on all three instead.
    engine = fresh(Ledger)
    with pytest.raises(ValidationError) as info:
        engine.execute(insert(Ledger).values({"amount": value}))
    assert str(info.value) == message
    with pytest.raises(ValidationError, match=r"in set\(\)"):
        update(Ledger).set({"amount": value}).unguarded()
    assert engine.execute(select(Ledger)).all() == []


def test_a_comparison_may_use_any_decimal(fresh: Fresh) -> None:
    engine = fresh(Ledger)
    engine.execute(insert(Ledger).values({"amount": Decimal("1.01")}))
    found = engine.execute(select(Ledger, ["amount"]).where({"amount": Decimal("1.010")})).all()
    assert [r.amount for r in found] == [Decimal("1.01")]
    assert engine.execute(select(Ledger).where({"amount": Decimal("1.005")})).all() == []
