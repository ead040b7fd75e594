"""The PostgreSQL pool pings a connection only after it sat idle; a dead one is replaced."""

from __future__ import annotations

import pytest

from tempest_typed import Engine, QueryExecutionError, create_engine
from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules


def _kill_pooled_connection(url: str) -> Engine:
    engine = create_engine(url, pool_size=1)
    pid = engine.execute_sql("SELECT pg_backend_pid()").scalar()
    killer = create_engine(url, pool_size=1)
    try:
        killer.execute_sql("SELECT pg_terminate_backend(%s)", (pid,))
    finally:
        killer.close()
    return engine


def test_an_idle_connection_killed_by_the_server_is_replaced_before_use(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PsycopgRules, "_PING_AFTER_IDLE", 0.0)  # as if idle for long
    engine = _kill_pooled_connection(pg_url)
    try:
        assert engine.execute_sql("SELECT 1").scalar() == 1
    finally:
        engine.close()


def test_a_connection_killed_just_after_use_fails_once_then_is_replaced(pg_url: str) -> None:
    engine = _kill_pooled_connection(pg_url)
    try:
        with pytest.raises(QueryExecutionError):
            engine.execute_sql("SELECT 1")
        assert engine.execute_sql("SELECT 1").scalar() == 1
    finally:
        engine.close()
