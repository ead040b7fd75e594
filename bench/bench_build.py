"""What the compiled-shape cache saves: build + compile the seed's single-statement claim,
with the cache warm and with it cleared before every compile. Prints a table of medians.

    .venv/bin/python bench/bench_build.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import datetime
from uuid import UUID, uuid4

from tempest_typed import Model, column, select, sql, update
from tempest_typed.dialects import get_dialect


class Outbound(Model, table="outbound_messages"):
    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    status: str = "queued"
    attempts: int = 0
    next_attempt_at: datetime
    updated_at: datetime | None = None


def build() -> object:
    return update(Outbound).set({
        "status": "sending",
        "attempts": sql.raw("attempts + 1"),
        "updated_at": sql.now(),
    }).where({
        "id": {"in": select(Outbound).where({"status": "queued"}).order_by("next_attempt_at")
               .limit(10).for_update(skip_locked=True).as_subquery("id")},
    }).returning()


def median_us(step: Callable[[], object], runs: int = 30, loops: int = 500) -> float:
    """The median over `runs` of the mean time of one step, in microseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(loops):
            step()
        samples.append((time.perf_counter() - start) / loops * 1e6)
    return statistics.median(samples)


def main() -> None:
    dialect = get_dialect("postgresql")
    stmt = build()

    def build_only() -> object:
        return build()

    def warm() -> object:
        return build().compile(dialect)  # type: ignore[attr-defined]

    def cold() -> object:
        dialect._shapes.clear()
        return build().compile(dialect)  # type: ignore[attr-defined]

    def compile_warm() -> object:
        return stmt.compile(dialect)  # type: ignore[attr-defined]

    def compile_cold() -> object:
        dialect._shapes.clear()
        return stmt.compile(dialect)  # type: ignore[attr-defined]

    rows = [
        ("build only", median_us(build_only)),
        ("build + compile, cache warm", median_us(warm)),
        ("build + compile, cache cleared", median_us(cold)),
        ("compile only, cache warm", median_us(compile_warm)),
        ("compile only, cache cleared", median_us(compile_cold)),
    ]
    print("seed single-statement claim, postgresql (median of 30 runs x 500)")
    print(f"{'case':<34}{'us/op':>8}")
    for name, us in rows:
        print(f"{name:<34}{us:>8.1f}")
    saved = rows[2][1] - rows[1][1]
    print(f"{'saved by the cache':<34}{saved:>8.1f}  ({rows[2][1] / rows[1][1]:.1f}x)")


if __name__ == "__main__":
    main()
