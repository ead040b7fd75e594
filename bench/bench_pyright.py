"""How long pyright takes on 500 queries with and without the stubs of `tempest-typed stubs`.

The queries are bench_mypy.py's seven shapes (a partial select, an update, an upsert, a
delete, an `in` subquery, a left join, an aggregate). The script writes the models and the
query module into a temporary directory, generates the stubs from the models, and times, round
by round and alternating the sides, one `pyright` run over the query module: with `stubPath`
at the stubs, and without. pyright has no cache between runs, so each run also reads the
library; that is what a CI run or an editor's first check pays.

    python bench/bench_pyright.py [--rounds N] [--queries N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_mypy import TEMPEST, TEMPEST_HEAD

ROOT = Path(__file__).resolve().parents[1]

MODELS = '''
from datetime import datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID, uuid4

from tempest_typed import Model, column

Status = Literal["queued", "sending", "sent", "failed"]


class Outbound(Model, table="outbound_messages"):
    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    idempotency_key: str | None = None
    status: Status = "queued"
    attempts: int = 0
    next_attempt_at: datetime
    updated_at: datetime | None = None


class User(Model, table="users"):
    id: int = column(primary_key=True)
    email: str
    country: str


class Order(Model, table="orders"):
    id: int = column(primary_key=True)
    user_id: int = column(references="users.id")
    total: Decimal
    status: Literal["new", "paid", "refunded"]
    created_at: datetime
'''


def _pyright() -> str:
    found = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    if not Path(found).exists() or shutil.which("node") is None:
        sys.exit("pyright (pip install pyright) and Node.js are needed")
    return found


def _run(pyright: str, directory: Path) -> tuple[float, int]:
    """Seconds of one pyright run over queries.py, and its error count."""
    start = time.perf_counter()
    proc = subprocess.run([pyright, "--outputjson", "--pythonpath", sys.executable, "queries.py"],
                          cwd=directory, capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - start
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return elapsed, json.loads(proc.stdout)["summary"]["errorCount"]


def main() -> None:
    """Print the median wall time of pyright with and without the stubs, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    pyright = _pyright()
    version = subprocess.run([pyright, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        sides = {"pyright + stubs": base / "stubs", "pyright, no stubs": base / "plain"}
        body = TEMPEST_HEAD + "\n".join(TEMPEST[i % len(TEMPEST)].format(i=i)
                                        for i in range(args.queries)) + "\n"
        for name, directory in sides.items():
            directory.mkdir()
            (directory / "models.py").write_text(MODELS)
            (directory / "queries.py").write_text(body)
            (directory / "pyrightconfig.json").write_text(json.dumps({
                "extraPaths": [str(ROOT)], "pythonVersion": "3.11",
                "stubPath": "stubs" if name == "pyright + stubs" else "no-stubs"}))
        env = {**os.environ, "PYTHONPATH": f"{sides['pyright + stubs']}:{ROOT}"}
        subprocess.run([sys.executable, "-m", "tempest_typed.stubs", "models", "-o",
                        str(sides["pyright + stubs"] / "stubs")], check=True, env=env,
                       cwd=sides["pyright + stubs"])
        times: dict[str, list[float]] = {name: [] for name in sides}
        errors: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, directory in sides.items():
                seconds, errors[name] = _run(pyright, directory)
                times[name].append(seconds)
    plain = statistics.median(times["pyright, no stubs"])
    print(f"{version}, Python {sys.version.split()[0]}, {args.queries} queries, "
          f"median of {args.rounds} runs, load {os.getloadavg()[0]:.2f}")
    print(f"{'side':22} {'median s':>9} {'min s':>7} {'errors':>6} {'vs no stubs':>12}")
    for name in sides:
        median = statistics.median(times[name])
        print(f"{name:22} {median:9.2f} {min(times[name]):7.2f} {errors[name]:6} "
              f"{median / plain:11.2f}x")


if __name__ == "__main__":
    main()
