"""The engine tests' tables (all named eng_*), and a fixture that gives each test empty ones.

Several test runs may share one PostgreSQL and one MariaDB server, so each run works in a
schema (PostgreSQL) and a database (MariaDB) of its own, dropped at the end: two runs never
drop or lock each other's tables.
"""

from __future__ import annotations

import os
import uuid as _uuid
from collections.abc import Callable, Iterator
from datetime import date, datetime
from decimal import Decimal
from typing import Literal
from urllib.parse import quote, urlsplit, urlunsplit
from uuid import UUID

import pytest

from tempest_typed import Engine, Model, column, create_engine

from ..models import Outbound as Outbound  # the seed's queue table, one model for every test
from ..models import Status as Status


class Item(Model, table="eng_items"):
    """A small table with an identity key, a unique name and a nullable note."""

    id: int = column(primary_key=True)
    name: str = column(max_length=100, unique=True)
    qty: int = 0
    note: str | None = None


class Typed(Model, table="eng_typed"):
    """One column of every annotated type, each nullable so None round-trips too."""

    id: int = column(primary_key=True)
    ref: UUID | None = None
    at: datetime | None = None
    day: date | None = None
    price: Decimal | None = None
    flag: bool | None = None
    blob: bytes | None = None
    state: Literal["on", "off", "ünï"] | None = None
    doc: dict[str, object] | None = None
    items: list[object] | None = None
    text: str | None = None
    count: int | None = None
    ratio: float | None = None


class Parent(Model, table="eng_parents"):
    """The referenced side of a foreign key."""

    id: int = column(primary_key=True)
    name: str


class Child(Model, table="eng_children"):
    """A row that must point at a parent, and a checked enum."""

    id: int = column(primary_key=True)
    parent_id: int = column(references="eng_parents.id")
    state: Literal["new", "old"] = "new"


class Claim(Model, table="eng_claims"):
    """One row per (message, worker) claim: a row claimed twice shows up here twice."""

    id: int = column(primary_key=True)
    message_id: UUID
    worker: int


Fresh = Callable[..., Engine]

_RUN = f"eng_{os.getpid()}_{_uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="session")
def pg_url(pg_url: str) -> Iterator[str]:
    """The PostgreSQL URL, with search_path set to a schema of this run's own."""
    with create_engine(pg_url) as admin:
        admin.execute_sql(f'CREATE SCHEMA IF NOT EXISTS "{_RUN}"')
        joiner = "&" if "?" in pg_url else "?"
        yield f"{pg_url}{joiner}options={quote(f'-c search_path={_RUN}')}"
        admin.execute_sql(f'DROP SCHEMA IF EXISTS "{_RUN}" CASCADE')


@pytest.fixture(scope="session")
def mysql_url(mysql_url: str) -> Iterator[str]:
    """The MySQL/MariaDB URL of a database of this run's own."""
    with create_engine(mysql_url) as admin:
        admin.execute_sql(f"CREATE DATABASE IF NOT EXISTS `{_RUN}`")
        parts = urlsplit(mysql_url)
        yield urlunsplit(parts._replace(path="/" + _RUN))
        admin.execute_sql(f"DROP DATABASE IF EXISTS `{_RUN}`")


@pytest.fixture
def fresh(engine: Engine) -> Iterator[Fresh]:
    """`fresh(*models)`: the parametrized engine, with those tables dropped and created empty."""
    created: list[type] = []

    def make(*models: type) -> Engine:
        engine.drop_all(*models)
        engine.create_all(*models)
        created.extend(models)
        return engine

    yield make
    if created:
        engine.drop_all(*created)


from .both_engines import db  # noqa: E402, F401  # the fixture of both engines (after the models it uses)
