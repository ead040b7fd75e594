"""Row-lock waits while a workload 5 side runs: how often a worker's statement waits, and on whom.

Runs one side of bench/bench_queues.py (one warm-up round and one measured round) and, beside
it, samples pg_stat_activity every 20 ms: for each sample with at least two of the side's
backends active, each backend waiting on a lock is counted by its wait event and the start of
its statement, and by whether the backend it waits on is itself waiting (a chain) or
running. The sampler takes no lock and reads only the statistics views.

    .venv/bin/python bench/lock_waits.py "tempest_typed b=100"
    .venv/bin/python bench/lock_waits.py "raw psycopg b=100"
"""

from __future__ import annotations

import collections
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from _common import PG_URL, machine

SAMPLE = """
SELECT pid, wait_event_type, wait_event, left(query, 48), pg_blocking_pids(pid)
FROM pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
  AND backend_type = 'client backend'
"""


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    side = sys.argv[1]
    script = Path(__file__).with_name("bench_queues.py")
    bench = subprocess.Popen([sys.executable, str(script), "--rounds", "1", "--only", side],
                             stdout=subprocess.PIPE, text=True)
    waits: collections.Counter[tuple[str, str, str]] = collections.Counter()
    samples = active = 0
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        while bench.poll() is None:
            rows = conn.execute(SAMPLE).fetchall()
            if len(rows) >= 2:  # the side's workers at work (not its set-up)
                samples += 1
                active += len(rows)
                waiting = {row[0] for row in rows if row[1] == "Lock"}
                for pid, _, event, query, blockers in rows:
                    if pid in waiting:
                        chain = "behind a waiting backend" if set(blockers) & waiting else (
                            "behind a running backend")
                        waits[(event, query, chain)] += 1
            time.sleep(0.02)
    out = bench.stdout.read() if bench.stdout else ""
    print(f"Lock waits, workload 5 side {side!r} ({machine()})")
    print("\n".join(line for line in out.splitlines() if line.startswith("  round")))
    print(f"{samples} samples with 2+ active backends, {active / max(samples, 1):.2f} active "
          f"a sample, {sum(waits.values()) / max(samples, 1):.2f} waiting on a lock a sample")
    for (event, query, chain), n in waits.most_common(8):
        print(f"  {n:6,}  {event:<14} {chain:<26} {query}")


if __name__ == "__main__":
    main()
