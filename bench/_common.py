"""Timing shared by the benchmark scripts: repeated runs, medians, min-max, one table.

Every script measures each side (the raw driver with hand-written SQL, tempest_typed,
SQLAlchemy Core) in the same process and the same run, interleaving the sides round by round
so that a slow moment of the machine falls on all of them alike. The first round of each side
is a warm-up and is not counted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

#: the server every PostgreSQL workload runs on: TEMPEST_PG_URL (as the tests), or BENCH_PG_URL
PG_URL = (os.environ.get("TEMPEST_PG_URL") or os.environ.get("BENCH_PG_URL")
          or "postgresql://postgres@127.0.0.1:5432/test")


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with --quick and --rounds."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="a smaller run, for a quick look")
    p.add_argument("--rounds", type=int, default=None, help="measured rounds per side")
    return p


@dataclass
class Measure:
    """The samples of one side of one workload: seconds per round and units per round."""

    name: str
    units: int
    unit: str
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def rate(self, seconds: float) -> float:
        return self.units / seconds if seconds else float("inf")


def run_rounds(sides: Sequence[tuple[Measure, Callable[[], float | None]]], rounds: int,
               warmup: int = 1) -> None:
    """Run every side `warmup + rounds` times, interleaved; keep the timed rounds.

    A side's function returns the seconds it measured itself (to leave out set-up such as
    filling a table), or None to be timed whole.
    """
    for r in range(warmup + rounds):
        for measure, fn in sides:
            started = time.perf_counter()
            own = fn()
            elapsed = own if own is not None else time.perf_counter() - started
            if r >= warmup:
                measure.samples.append(elapsed)


def per_op_table(title: str, groups: Sequence[tuple[str, Sequence[Measure], str]]) -> str:
    """A table of time per operation: median, min-max, and each side's ratio to a baseline.

    `groups` holds (workload, measures, name of the baseline measure).
    """
    lines = [title, ""]
    head = f"{'workload':<34} {'side':<20} {'median':>10} {'min':>10} {'max':>10} {'ratio':>10}"
    lines += [head, "-" * len(head)]
    for workload, measures, baseline in groups:
        base = next(m for m in measures if m.name == baseline)
        base_op = base.median / base.units
        for i, m in enumerate(measures):
            per = [s / m.units for s in m.samples]
            ratio = (m.median / m.units) / base_op
            lines.append(
                f"{workload if i == 0 else '':<34} {m.name:<20} {_us(statistics.median(per)):>10} "
                f"{_us(min(per)):>10} {_us(max(per)):>10} {ratio:>9.3f}x"
            )
        lines.append("")
    lines.append(f"time per {groups[0][1][0].unit}; ratio = this side's median / "
                 f"the baseline's median (lower is faster)")
    return "\n".join(lines)


def throughput_table(title: str, groups: Sequence[tuple[str, Sequence[Measure], str]]) -> str:
    """A table of throughput: median, min-max, and each side's ratio to a baseline.

    `groups` holds (workload, measures, name of the baseline measure, usually the floor).
    """
    lines = [title, ""]
    head = (f"{'workload':<34} {'side':<20} {'median/s':>10} {'min/s':>10} {'max/s':>10} "
            f"{'ratio':>8}")
    lines += [head, "-" * len(head)]
    for workload, measures, baseline in groups:
        base = next(m for m in measures if m.name == baseline)
        base_rate = base.rate(base.median)
        for i, m in enumerate(measures):
            rates = [m.rate(s) for s in m.samples]
            lines.append(
                f"{workload if i == 0 else '':<34} {m.name:<20} {m.rate(m.median):>10,.0f} "
                f"{min(rates):>10,.0f} {max(rates):>10,.0f} {m.rate(m.median) / base_rate:>7.2f}x"
            )
        lines.append("")
    lines.append(f"{groups[0][1][0].unit} per second; ratio = this side's median throughput / "
                 "the baseline's (higher is faster)")
    return "\n".join(lines)


def _us(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} us"


def status_kib(field: str) -> int:
    """A field of /proc/self/status in KiB (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def machine() -> str:
    """One line naming the machine and the Python that ran the benchmark."""
    return (f"{os.cpu_count()} cores, Python {platform.python_version()} "
            f"({platform.python_implementation()}), {platform.system()} {platform.release()}")
