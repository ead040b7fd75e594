"""Filling and checking the benchmark queue table, the same way for every side."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import psycopg
from _common import PG_URL
from _models import OUTBOUND_TABLE, Outbound

from tempest_typed import create_engine


def create_table() -> None:
    """Create the queue table and its indexes (dropping an old one)."""
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(Outbound)
    engine.create_all(Outbound)
    engine.close()


def drop_table() -> None:
    """Drop the queue table."""
    engine = create_engine(PG_URL, pool_size=1)
    engine.drop_all(Outbound)
    engine.close()


def fill(n: int, *, keyed: bool = False) -> None:
    """Empty the table, then add n queued messages by COPY (outside any side's timing)."""
    start = datetime.now(UTC) - timedelta(hours=1)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'TRUNCATE "{OUTBOUND_TABLE}"')
        with conn.cursor().copy(
            f'COPY "{OUTBOUND_TABLE}" ("id", "consumer", "idempotency_key", "status", '
            '"attempts", "next_attempt_at") FROM STDIN'
        ) as copy:
            for i in range(n):
                copy.write_row((uuid4(), "bench", f"k{i}" if keyed else None, "queued", 0,
                                start + timedelta(microseconds=i)))
        conn.execute(f'VACUUM ANALYZE "{OUTBOUND_TABLE}"')


def empty() -> None:
    """Empty the table."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'TRUNCATE "{OUTBOUND_TABLE}"')


def count(status: str | None = None) -> int:
    """How many messages have this status (or are in the table)."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        if status is None:
            row = conn.execute(f'SELECT count(*) FROM "{OUTBOUND_TABLE}"').fetchone()
        else:
            row = conn.execute(f'SELECT count(*) FROM "{OUTBOUND_TABLE}" WHERE "status" = %s',
                               (status,)).fetchone()
        assert row is not None
        return int(row[0])
