"""Differential execution: a statement means the same on PostgreSQL, MariaDB and SQLite.

Each example builds a model (any column kinds, tricky names), creates its table on the three
databases, loads the same rows, then runs a few generated statements on all three. Rows
returned, rows affected and the table's contents must be equal after normalizing only the
documented differences (harness.py). A statement a database cannot express must raise one of
its documented DialectErrors; it then runs, rolled back, on the others, which must agree.

The relational property does the same for joins, aggregates (grouped by columns and by
expressions), sql.col comparisons, exists/scalar subqueries, computed columns and window
functions over three fixed tables refilled per example (relational.py): the
rows must be equal as multisets (in order where the statement orders them totally), with the
same Python types, the types the API promises for each aggregate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempest_typed import Engine, delete, insert

from .harness import (
    Outcome,
    check_dialect_error,
    check_relational,
    contents,
    fetch,
    folds_beyond_ascii,
    run,
    tables,
)
from .relational import MODELS, relational_queries, table_rows
from .strategies import models, rows_for, statements


def _compare(engines: dict[str, Engine], case: Any, before: list[tuple[Any, ...]]) -> None:
    skip_mysql = folds_beyond_ascii(before, case)
    outcomes: dict[str, Outcome] = {}
    for name, engine in engines.items():
        stmt = case.mysql_statement if name == "mysql" and case.mysql_statement else case.statement
        outcomes[name] = run(engine, stmt, case.ordered, keep=False)
    for name, outcome in outcomes.items():
        if outcome.dialect_error:
            check_dialect_error(name, outcome.dialect_error)
    runnable = {n: o for n, o in outcomes.items() if not o.dialect_error}
    keep = len(runnable) == len(engines) and not skip_mysql
    compared = {n: o for n, o in runnable.items() if not (skip_mysql and n == "mysql")}
    if case.mysql_statement is not None and "mysql" in compared:
        # MySQL's ON DUPLICATE KEY UPDATE counts an updated row as 2 (README): rows and
        # contents are compared, the count is not.
        compared["mysql"].affected = None
        for other in compared.values():
            other.affected = None
    first = list(compared.values())
    for outcome in compared.values():
        assert outcome.comparable() == first[0].comparable(), (
            f"{case.kind} differs: " + "; ".join(f"{n}: {o!r}" for n, o in compared.items())
            + "\n" + "\n".join(f"{n}: {getattr(o, 'message', '')}" for n, o in compared.items())
        )
    if keep:
        for name, engine in engines.items():
            stmt = (case.mysql_statement if name == "mysql" and case.mysql_statement
                    else case.statement)
            run(engine, stmt, case.ordered, keep=True)


@given(data=st.data())
def test_statements_mean_the_same_on_every_database(engines: dict[str, Engine],
                                                     data: st.DataObject) -> None:
    spec = data.draw(models(), label="model")
    ids = data.draw(st.lists(st.integers(1, 60), max_size=8, unique=True), label="ids")
    rows = data.draw(rows_for(spec, ids), label="rows")
    with tables(engines, spec):
        if rows:
            for engine in engines.values():
                engine.execute(insert(spec.model).values(rows))
        state = {n: contents(e, spec) for n, e in engines.items()}
        assert state["postgresql"] == state["mysql"] == state["sqlite"]
        for _ in range(data.draw(st.integers(1, 4), label="statements")):
            case = data.draw(statements(spec, rows), label="statement")
            _compare(engines, case, state["postgresql"])
            state = {n: contents(e, spec) for n, e in engines.items()}
            assert state["postgresql"] == state["mysql"] == state["sqlite"], (
                f"table contents differ after {case.kind}: {state}"
            )


@pytest.fixture(scope="module")
def relational(engines: dict[str, Engine]) -> Iterator[dict[str, Engine]]:
    """The users, orders and items tables on every database, for the whole module."""
    for engine in engines.values():
        engine.drop_all(*MODELS)
        engine.create_all(*MODELS)
    try:
        yield engines
    finally:
        for engine in engines.values():
            engine.drop_all(*MODELS)


# Each example refills three tables and runs two to eight statements on three databases: a
# third of the profile's examples (100 under CI=true) keeps the properties suite within its
# CI budget; HYPOTHESIS_PROFILE=deep still runs 666.
@settings(max_examples=max(10, settings().max_examples // 3))
@given(data=st.data())
def test_joins_aggregates_and_subqueries_mean_the_same_on_every_database(
        relational: dict[str, Engine], data: st.DataObject) -> None:
    filled = {model: data.draw(table_rows(model), label=model.__name__) for model in MODELS}
    for engine in relational.values():
        with engine.transaction() as tx:
            for model, rows in filled.items():
                tx.execute(delete(model).unguarded())
                if rows:
                    tx.execute(insert(model).values(rows))
    for _ in range(data.draw(st.integers(2, 8), label="statements")):
        case = data.draw(relational_queries(filled), label="statement")
        check_relational(case, {name: fetch(engine, case.statement)
                                for name, engine in relational.items()})
