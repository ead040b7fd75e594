"""create_all stays idempotent: on MySQL 8, which has no CREATE INDEX IF NOT EXISTS, and on
PostgreSQL when another session creates the same table at the same moment."""

from __future__ import annotations

import pymysql

from tempest_typed.engine.drivers.mysql_rules import MySQLRules


def test_an_existing_index_is_what_create_all_asked_for() -> None:
    driver = object.__new__(MySQLRules)  # the answer needs no connection
    assert driver.ddl_already_done(pymysql.err.OperationalError(1061, "Duplicate key name 'x'"))
    assert not driver.ddl_already_done(pymysql.err.OperationalError(1050, "Table exists"))
    assert not driver.ddl_already_done(pymysql.err.ProgrammingError())


def test_a_create_another_session_won_on_postgresql_is_what_create_all_asked_for() -> None:
    import psycopg.errors

    from tempest_typed.engine.drivers.psycopg_rules import PsycopgRules

    rules = object.__new__(PsycopgRules)  # the answer needs no connection
    # two sessions past IF NOT EXISTS at once: the second is told the table or index exists
    assert rules.ddl_already_done(psycopg.errors.DuplicateTable("relation already exists"))
    assert rules.ddl_already_done(psycopg.errors.DuplicateObject("already exists"))
    # a catalog unique violation of the same race is the queue's to retry whole
    assert not rules.ddl_already_done(psycopg.errors.UniqueViolation("pg_type"))
    assert not rules.ddl_already_done(psycopg.errors.UndefinedTable("no such table"))
