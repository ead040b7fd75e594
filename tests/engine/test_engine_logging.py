"""SQL logging through `logging` ("tempest_typed.sql"): statement, parameters and duration,
silent by default; echo=True turns it on with a handler."""

from __future__ import annotations

import logging
import re

import pytest

from tempest_typed import IntegrityError, create_engine, insert, select

from .conftest import Fresh, Item

LOGGER = "tempest_typed.sql"


def statements(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_nothing_is_logged_by_default(fresh: Fresh, caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    caplog.set_level(logging.WARNING)
    engine.execute(select(Item))
    assert statements(caplog) == []
    assert not logging.getLogger(LOGGER).isEnabledFor(logging.INFO)


def test_each_statement_is_logged_with_its_parameters_and_duration(
        fresh: Fresh, caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    caplog.set_level(logging.INFO, logger=LOGGER)
    stmt = select(Item).where({"name": "wanted"})
    engine.execute(stmt)
    [line] = statements(caplog)
    assert line.startswith(stmt.compile(engine.dialect).sql)
    assert "('wanted')" in line
    assert re.search(r"\d+\.\d{3} ms$", line)
    assert caplog.records[-1].levelno == logging.INFO


def test_transactions_are_logged_too(fresh: Fresh, caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    caplog.set_level(logging.INFO, logger=LOGGER)
    with engine.transaction() as tx:
        tx.execute(insert(Item).values({"name": "a"}))
    lines = statements(caplog)
    assert len(lines) == 3
    assert lines[0].upper().startswith(("BEGIN", "START TRANSACTION"))
    assert lines[1].startswith("INSERT")
    assert lines[2].startswith("COMMIT")


def test_a_failed_statement_is_logged_with_its_error(fresh: Fresh,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    engine = fresh(Item)
    engine.execute(insert(Item).values({"name": "a"}))
    caplog.set_level(logging.INFO, logger=LOGGER)
    with pytest.raises(IntegrityError):
        engine.execute(insert(Item).values({"name": "a", "note": "n" * 500}))
    [line] = statements(caplog)
    assert "failed after" in line
    assert "n" * 500 not in line and "nnn..." in line  # long values are cut


def test_echo_true_logs_to_a_stream_handler(caplog: pytest.LogCaptureFixture,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger(LOGGER)
    level, handlers = logger.level, list(logger.handlers)
    try:
        with create_engine("sqlite://:memory:", echo=True) as engine:
            engine.execute_sql("SELECT 42")
            with create_engine("sqlite://:memory:", echo=True):
                pass  # a second echo engine adds no second handler
        echo = [h for h in logger.handlers if getattr(h, "_tempest_echo", False)]
        assert len(echo) == 1
        assert "SELECT 42" in capsys.readouterr().err
    finally:
        logger.setLevel(level)
        logger.handlers[:] = handlers
