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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_mypy import MODELS_HEAD, TEMPEST, TEMPEST_HEAD, TEMPEST_MODELS

ROOT = Path(__file__).resolve().parents[1]

MODELS = MODELS_HEAD + TEMPEST_MODELS  # bench_mypy's models, without SQLAlchemy's tables


def _pyright() -> str:
    found = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    if not Path(found).exists() or shutil.which("node") is None:
        sys.exit("pyright (pip install pyright) and Node.js are needed")
    return found


def _run(pyright: str, directory: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds (user + system, pyright's processes) of one pyright run over
    queries.py, and its error count. CPU time moves less than wall time on a loaded machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([pyright, "--outputjson", "--pythonpath", sys.executable, "queries.py"],
                          cwd=directory, capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return elapsed, cpu, json.loads(proc.stdout)["summary"]["errorCount"]


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
                "extraPaths": [str(ROOT / "src")], "pythonVersion": "3.11",
                "stubPath": "stubs" if name == "pyright + stubs" else "no-stubs"}))
        env = {**os.environ, "PYTHONPATH": f"{sides['pyright + stubs']}:{ROOT / 'src'}"}
        subprocess.run([sys.executable, "-m", "tempest_typed.stubs", "models", "-o",
                        str(sides["pyright + stubs"] / "stubs")], check=True, env=env,
                       cwd=sides["pyright + stubs"])
        wall: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        errors: dict[str, int] = {}
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for name, directory in sides.items():
                seconds, used, errors[name] = _run(pyright, directory)
                wall[name].append(seconds)
                cpu[name].append(used)
    plain_wall = statistics.median(wall["pyright, no stubs"])
    plain_cpu = statistics.median(cpu["pyright, no stubs"])
    print(f"{version}, Python {sys.version.split()[0]}, {args.queries} queries, medians of "
          f"{args.rounds} runs, load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'side':20} {'wall s':>7} {'min':>6} {'vs no stubs':>12} {'CPU s':>7} "
          f"{'vs no stubs':>12} {'errors':>6}")
    for name in sides:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:20} {w:7.2f} {min(wall[name]):6.2f} {w / plain_wall:11.2f}x "
              f"{c:7.2f} {c / plain_cpu:11.2f}x {errors[name]:6}")


if __name__ == "__main__":
    main()
