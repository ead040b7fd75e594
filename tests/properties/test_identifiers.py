"""Identifiers round trip: a table and columns named with reserved words, quotes, backticks,
spaces, `%`, `?` and non-ASCII letters are created, written and read back by those names on
PostgreSQL, MariaDB and SQLite."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tempest_typed import Engine, insert, select
from tempest_typed.model import meta_of

from .harness import normalize, row_values, tables
from .strategies import models, rows_for


@given(data=st.data())
def test_generated_names_round_trip_through_every_database(engines: dict[str, Engine],
                                                          data: st.DataObject) -> None:
    spec = data.draw(models(prefix="prop_ident_"), label="model")
    row = data.draw(rows_for(spec, [1]), label="row")[0]
    meta = meta_of(spec.model)
    with tables(engines, spec):
        for name, engine in engines.items():
            engine.execute(insert(spec.model).values(row))
            # through the builder, by attribute
            fetched = engine.execute(select(spec.model).where({"id": 1})).one()
            assert row_values(fetched) == tuple(normalize(row[c.attr]) for c in meta.columns), name
            # by the SQL names themselves, quoted verbatim (execute_sql without parameters)
            dialect = engine.dialect
            names = ", ".join(dialect.quote_identifier(c.name) for c in meta.columns)
            raw = engine.execute_sql(f"SELECT {names} FROM {dialect.quote_identifier(spec.table)}").all()
            assert len(raw) == 1 and len(raw[0]) == len(meta.columns), name
            assert raw[0][0] == 1, name
