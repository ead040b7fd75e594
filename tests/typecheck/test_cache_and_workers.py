"""The plugin gives the same errors cold, warm after a model changes, and with parallel workers.

Model facts live in `TypeInfo.metadata`, which mypy caches with the model's module; these tests
are what shows that a warm cache never serves facts of an older model, and that the workers of
`mypy -n 2`, each with its own share of the modules, agree with one process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODELS = '''
from datetime import datetime
from typing import Literal
from uuid import UUID, uuid4

from tempest_typed import Model, column

class Outbound(Model):
    id: UUID = column(primary_key=True, default_factory=uuid4)
    consumer: str
    status: Literal["queued", "sent"] = "queued"
    attempts: int = 0
    next_attempt_at: datetime
'''

APP = '''
from datetime import UTC, datetime
from tempest_typed import insert, select, update
from models import Outbound

select(Outbound, ["id", "consumer"]).where({"status": "queued", "attempts": {"lt": 5}})
update(Outbound).set({"attempts": None}).where({"consumer": "a"})
insert(Outbound).values({"consumer": "c", "next_attempt_at": datetime.now(UTC)})
'''


def run_mypy(root: Path, cache: str, *args: str) -> list[str]:
    """mypy's error lines for every module under `root`, sorted."""
    modules = sorted(p.name for p in root.glob("*.py"))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", cache,
         "--local-partial-types", *args, *modules],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return sorted(line for line in proc.stdout.splitlines() if ": error:" in line)


def test_warm_cache_after_a_model_edit_matches_a_cold_run(tmp_path: Path,
                                                          plugin_config: str) -> None:
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "app.py").write_text(APP)
    before = run_mypy(tmp_path, "warm")
    assert any('Outbound.attempts is not nullable' in line for line in before), before
    assert not any("consumer" in line for line in before), before
    # Rename a column, make another nullable and give the required one a default.
    edited = (MODELS.replace("consumer: str", "consumer_name: str")
              .replace("attempts: int = 0", "attempts: int | None = 0")
              .replace("next_attempt_at: datetime", "next_attempt_at: datetime = column(default=datetime(2000, 1, 1))"))
    (tmp_path / "models.py").write_text(edited)
    warm = run_mypy(tmp_path, "warm")
    cold = run_mypy(tmp_path, "cold")
    assert warm == cold
    assert any('has no column "consumer"' in line for line in warm), warm
    assert not any("not nullable" in line for line in warm), warm


def test_parallel_workers_match_one_process(tmp_path: Path, plugin_config: str) -> None:
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "models.py").write_text(MODELS)
    for i in range(4):
        (tmp_path / f"app{i}.py").write_text(APP + 'select(Outbound).where({"statu": "sent"})\n')
    single = run_mypy(tmp_path, "single")
    parallel = run_mypy(tmp_path, "parallel", "-n", "2")
    assert len(single) == 4 * 2, single
    assert parallel == single


JOINED = '''
from tempest_typed import join, select, sql
from models import Outbound

pairs = join(Outbound, "a").left_join(Outbound, "b", {"a.consumer": "b.consumer"})
per_consumer = select(Outbound).aggregate(["consumer"], {"n": sql.count()})
'''


def test_join_and_aggregate_types_read_back_from_the_cache(tmp_path: Path,
                                                           plugin_config: str) -> None:
    """A join's aliases and an aggregate's names travel in the cached type of a variable."""
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "joined.py").write_text(JOINED)
    use = ("from joined import pairs, per_consumer\n"
           'pairs.where({"b.statu": "sent"})\n'
           'per_consumer.having({"m": 1})\n')
    (tmp_path / "use.py").write_text(use)
    cold = run_mypy(tmp_path, "warm")
    # Only use.py changes: joined.py is read back from the cache, its types with it.
    (tmp_path / "use.py").write_text(use + 'pairs.order_by("c.id")\n')
    warm = run_mypy(tmp_path, "warm")
    assert len(cold) == 2, cold
    assert warm[:2] == cold
    assert len(warm) == 3 and 'has no alias "c"' in warm[2], warm
