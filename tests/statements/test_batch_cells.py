"""A batch of plain rows is kept a column at a time; its values in one tuple, made when
first asked for, are the same as a row-by-row build gives, whatever comes after values()."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from tempest_typed import insert

from ..models import Outbound

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _dicts(n: int, start: int = 0) -> list[dict[str, object]]:
    return [{"id": UUID(int=i + 1), "consumer": "mail", "idempotency_key": f"k{i}",
             "status": "queued", "attempts": i, "next_attempt_at": WHEN, "updated_at": None}
            for i in range(start, start + n)]


def _flat(rows: list[dict[str, object]]) -> tuple[object, ...]:
    return tuple(v for row in rows for v in row.values())


def test_dict_batch_values_in_row_order() -> None:
    rows = _dicts(5)
    stmt = insert(Outbound).values(rows)
    assert stmt.compile("postgresql").params == _flat(rows)
    assert stmt.row_count == 5


def test_a_second_values_call_appends_after_the_cells() -> None:
    first, second = _dicts(3), _dicts(2, start=3)
    stmt = insert(Outbound).values(first).values(second)
    assert stmt.compile("sqlite").params == _flat(first) + _flat(second)
    assert stmt.row_count == 5


def test_the_cells_survive_later_builder_calls() -> None:
    rows = _dicts(4)
    base = insert(Outbound).values(rows)
    later = base.on_conflict_do_nothing(["id"])
    assert later.compile("postgresql").params == _flat(rows)
    assert base.compile("postgresql").params == _flat(rows)


def test_instance_batch_leaves_out_a_column_unset_in_every_row() -> None:
    rows = [Outbound(id=UUID(int=i + 1), consumer="mail", next_attempt_at=WHEN) for i in range(3)]
    compiled = insert(Outbound).values(rows).compile("postgresql")
    assert compiled.params == tuple(
        v for r in rows for v in (r.id, "mail", None, "queued", 0, WHEN, None))


def test_one_dict_and_a_null_column() -> None:
    row = _dicts(1)[0]
    assert insert(Outbound).values(row).compile("mysql").params == _flat([row])
