"""How long mypy takes on 500 queries: tempest_typed with and without its plugin, and the same
queries written with SQLAlchemy 2.x Core.

The queries cycle through seven shapes: a partial select, an update, an upsert, a delete, an
`in` subquery, a left join with qualified where/order_by, and an aggregate with having.
The script writes a models module and three query modules into a temporary directory, warms a
mypy cache with the libraries (stdlib, tempest_typed, SQLAlchemy) by checking the models, then
times, round by round and interleaving the sides, `mypy` on each query module starting from a
copy of that cache: what is measured is checking the 500 queries, not the libraries.

With `--callgrind`, each tempest_typed side runs once, set up the same way, under
`valgrind --tool=callgrind` with PYTHONHASHSEED=0, and the instructions it executes are
printed instead: a count that other processes on the machine do not move.

mypy imports the plugin in every run. Without bytecode for the checkout's modules (none
written yet, and PYTHONDONTWRITEBYTECODE=1 keeps it so), each run compiles the plugin's source
first; an installed package has its bytecode. The header says which case was measured;
`--bytecode` compiles the checkout's packages first (what `pip install` does).

    python bench/bench_mypy.py [--rounds N] [--queries N] [--callgrind] [--bytecode]
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the models both checkers read (bench_pyright.py takes them without SQLAlchemy's tables)
MODELS_HEAD = '''
from datetime import datetime
from decimal import Decimal
from typing import Literal
from uuid import UUID, uuid4

'''
TEMPEST_MODELS = '''from tempest_typed import Model, column

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
SA_TABLES = '''

metadata = MetaData()
outbound = Table(
    "outbound_messages", metadata,
    Column("id", Uuid, primary_key=True),
    Column("consumer", String, nullable=False),
    Column("idempotency_key", String),
    Column("status", String, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True)),
)
users = Table(
    "users", metadata,
    Column("id", Integer, primary_key=True),
    Column("email", String, nullable=False),
    Column("country", String, nullable=False),
)
orders = Table(
    "orders", metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("total", Numeric, nullable=False),
    Column("status", String, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
'''
SA_IMPORT = ("from sqlalchemy import Column, DateTime, ForeignKey, Integer, MetaData, Numeric, "
             "String, Table, Uuid\n")
MODELS = MODELS_HEAD + SA_IMPORT + TEMPEST_MODELS + SA_TABLES

TEMPEST_HEAD = '''
from datetime import UTC, datetime
from uuid import UUID

from tempest_typed import and_, delete, insert, join, or_, select, sql, update
from models import Order, Outbound, User

now = datetime.now(UTC)
ids: list[UUID] = []
'''

TEMPEST = [
    'q{i} = select(Outbound, ["id", "status"]).where({{"status": "queued", "attempts": {{"lt": {i}}}}}).order_by("next_attempt_at").limit(10)',
    'q{i} = update(Outbound).set({{"status": "sending", "attempts": sql.raw("attempts + 1"), "updated_at": sql.now()}}).where({{"id": {{"in": ids}}}}).returning("id", "attempts")',
    'q{i} = insert(Outbound).values({{"consumer": "c{i}", "next_attempt_at": now, "status": "queued"}}).on_conflict_do_nothing(["consumer", "idempotency_key"]).returning()',
    'q{i} = delete(Outbound).where(and_({{"status": "sent"}}, or_({{"attempts": {{"gte": {i}}}}}, {{"updated_at": {{"is_null": True}}}}))).returning("id")',
    'q{i} = select(Outbound).where({{"id": {{"in": select(Outbound).where({{"consumer": {{"like": "c%"}}}}).as_subquery("id")}}}})',
    'q{i} = join(User, "user").left_join(Order, "order", {{"user.id": "order.user_id"}}).where({{"order.status": "paid", "user.country": "PT", "order.total": {{"gte": {i}}}}}).order_by("order.created_at", "desc").limit(20)',
    'q{i} = select(Order).where({{"status": "paid"}}).aggregate(["user_id"], {{"orders": sql.count(), "spent": sql.sum("total")}}).having({{"orders": {{"gt": {i}}}}}).order_by("spent", "desc")',
]

SQLALCHEMY_HEAD = '''
from datetime import UTC, datetime
from uuid import UUID

from sqlalchemy import and_, delete, func, insert, literal_column, or_, select, update
from models import orders, outbound, users

now = datetime.now(UTC)
ids: list[UUID] = []
'''

SQLALCHEMY = [
    'q{i} = select(outbound.c.id, outbound.c.status).where(outbound.c.status == "queued", outbound.c.attempts < {i}).order_by(outbound.c.next_attempt_at).limit(10)',
    'q{i} = update(outbound).values(status="sending", attempts=literal_column("attempts + 1"), updated_at=func.now()).where(outbound.c.id.in_(ids)).returning(outbound.c.id, outbound.c.attempts)',
    'q{i} = insert(outbound).values(consumer="c{i}", next_attempt_at=now, status="queued").returning(outbound)',
    'q{i} = delete(outbound).where(and_(outbound.c.status == "sent", or_(outbound.c.attempts >= {i}, outbound.c.updated_at.is_(None)))).returning(outbound.c.id)',
    'q{i} = select(outbound).where(outbound.c.id.in_(select(outbound.c.id).where(outbound.c.consumer.like("c%")).scalar_subquery()))',
    'q{i} = select(users, orders).select_from(users.outerjoin(orders, users.c.id == orders.c.user_id)).where(orders.c.status == "paid", users.c.country == "PT", orders.c.total >= {i}).order_by(orders.c.created_at.desc()).limit(20)',
    'q{i} = select(orders.c.user_id, func.count().label("orders"), func.sum(orders.c.total).label("spent")).where(orders.c.status == "paid").group_by(orders.c.user_id).having(func.count() > {i}).order_by(literal_column("spent").desc())',
]


def module(head: str, templates: list[str], n: int) -> str:
    """`head` followed by n queries cycling through the templates."""
    lines = [templates[i % len(templates)].format(i=i) for i in range(n)]
    return head + "\n".join(lines) + "\n"


def config(plugin: bool) -> str:
    """A mypy configuration that finds this checkout, with or without the plugin."""
    paths = f"{ROOT / 'src'}"
    lines = ["[mypy]", f"mypy_path = {paths}", "[mypy-tempest_typed.*]", "ignore_errors = True"]
    if plugin:
        lines.insert(1, "plugins = tempest_typed.mypy")
    return "\n".join(lines) + "\n"


def mypy(work: Path, ini: str, cache: Path, target: str) -> float:
    """Seconds that one mypy run on `target` takes."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", ini, "--cache-dir", str(cache), target],
        cwd=work, capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"mypy failed on {target} with {ini}:\n{proc.stdout}{proc.stderr}")
    return elapsed


def instructions(work: Path, ini: str, warm: Path, target: str) -> int:
    """Instructions (callgrind's count) of one mypy run on `target` from a copy of `warm`."""
    cache = work / "cache-run"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(warm, cache)
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / 'callgrind.out'}",
         sys.executable, "-m", "mypy", "--config-file", ini, "--cache-dir", str(cache), target],
        cwd=work, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"callgrind mypy failed on {target} with {ini}:\n{proc.stdout}{proc.stderr}")
    return int(found.group(1))


def plugin_bytecode() -> str:
    """Whether the modules mypy imports for the plugin have bytecode, as the header says it."""
    runtime = [ROOT / "src" / "tempest_typed" / name for name in ("__init__.py", "mypy.py", "_wording.py")]
    sources = [*sorted((ROOT / "src" / "tempest_typed_mypy").rglob("*.py")),
               *(path for path in runtime if path.exists())]
    missing = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            missing += 1
    if not missing:
        return "plugin bytecode present"
    return f"plugin compiled from source in each run ({missing} modules without bytecode)"


def main() -> None:
    """Run the benchmark and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per side")
    parser.add_argument("--queries", type=int, default=500, help="queries per module")
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions of one run per tempest_typed side instead")
    parser.add_argument("--bytecode", action="store_true",
                        help="compile the checkout's packages to bytecode first")
    args = parser.parse_args()
    if args.bytecode:
        compileall.compile_dir(ROOT / "src", quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-mypy-") as tmp:
        work = Path(tmp)
        (work / "models.py").write_text(MODELS)
        (work / "tt_queries.py").write_text(module(TEMPEST_HEAD, TEMPEST, args.queries))
        (work / "sa_queries.py").write_text(module(SQLALCHEMY_HEAD, SQLALCHEMY, args.queries))
        (work / "plugin.ini").write_text(config(plugin=True))
        (work / "plain.ini").write_text(config(plugin=False))
        sides = {
            "tempest_typed + plugin": ("plugin.ini", "tt_queries.py"),
            "tempest_typed, no plugin": ("plain.ini", "tt_queries.py"),
            "SQLAlchemy 2.x Core": ("plain.ini", "sa_queries.py"),
        }
        warm: dict[str, Path] = {}
        for ini in ("plugin.ini", "plain.ini"):
            warm[ini] = work / f"cache-{ini}"
            mypy(work, ini, warm[ini], "models.py")
        if args.callgrind:
            counts = {side: instructions(work, ini, warm[ini], target)
                      for side, (ini, target) in sides.items() if target == "tt_queries.py"}
            plain = counts["tempest_typed, no plugin"]
            from mypy.version import __version__ as version

            print(f"mypy {version}, Python {sys.version.split()[0]}, {args.queries} queries, "
                  f"instructions of one run (callgrind, PYTHONHASHSEED=0), {plugin_bytecode()}")
            print(f"{'side':<28}{'instructions':>16}{'vs no plugin':>14}")
            for side, count in counts.items():
                print(f"{side:<28}{count:>16,}{count / plain:>13.3f}x")
            return
        times: dict[str, list[float]] = {side: [] for side in sides}
        for round_ in range(args.rounds + 1):  # round 0 is a warm-up
            for side, (ini, target) in sides.items():
                cache = work / "cache-run"
                shutil.rmtree(cache, ignore_errors=True)
                shutil.copytree(warm[ini], cache)
                elapsed = mypy(work, ini, cache, target)
                if round_:
                    times[side].append(elapsed)
    base = statistics.median(times["tempest_typed, no plugin"])
    from mypy.version import __version__ as mypy_version

    print(f"mypy {mypy_version}, Python {sys.version.split()[0]}, "
          f"{args.queries} queries, {args.rounds} rounds (cache of the libraries warm), "
          f"{plugin_bytecode()}")
    print(f"{'side':<28}{'median s':>10}{'min-max s':>16}{'vs no plugin':>14}")
    for side, values in times.items():
        median = statistics.median(values)
        spread = f"{min(values):.2f}-{max(values):.2f}"
        print(f"{side:<28}{median:>10.2f}{spread:>16}{median / base:>13.2f}x")


if __name__ == "__main__":
    main()
