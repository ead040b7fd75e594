"""create_all on MySQL 8, which has no CREATE INDEX IF NOT EXISTS, stays idempotent."""

from __future__ import annotations

import pymysql

from tempest_typed.engine.drivers.mysql_rules import MySQLRules


def test_an_existing_index_is_what_create_all_asked_for() -> None:
    driver = object.__new__(MySQLRules)  # the answer needs no connection
    assert driver.ddl_already_done(pymysql.err.OperationalError(1061, "Duplicate key name 'x'"))
    assert not driver.ddl_already_done(pymysql.err.OperationalError(1050, "Table exists"))
    assert not driver.ddl_already_done(pymysql.err.ProgrammingError())
