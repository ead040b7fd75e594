"""execute_sql(sql, params): params is a sequence of values, one per placeholder."""

from __future__ import annotations

import pytest

from tempest_typed import Engine, ValidationError


def placeholder(engine: Engine) -> str:
    return "?" if engine.dialect.name == "sqlite" else "%s"


@pytest.mark.parametrize("params", ["1", "12", b"1", bytearray(b"1")])
def test_a_str_or_bytes_as_params_is_refused_naming_the_fix(engine: Engine,
                                                             params: object) -> None:
    sql = f"SELECT {placeholder(engine)}"
    with pytest.raises(ValidationError, match=r"pass a tuple or list of values") as info:
        engine.execute_sql(sql, params)  # type: ignore[arg-type]
    assert type(params).__name__ in str(info.value)
    with engine.session() as session, pytest.raises(ValidationError, match="tuple or list"):
        session.execute_sql(sql, params)  # type: ignore[arg-type]


@pytest.mark.parametrize("params", [{"a": 1}, {1, 2}, 7])
def test_params_that_are_not_a_sequence_are_refused(engine: Engine, params: object) -> None:
    with pytest.raises(ValidationError, match="tuple or list"):
        engine.execute_sql(f"SELECT {placeholder(engine)}", params)  # type: ignore[arg-type]


def test_a_tuple_or_a_list_binds_one_value_per_placeholder(engine: Engine) -> None:
    p = placeholder(engine)
    assert engine.execute_sql(f"SELECT {p}", ("12",)).scalar() == "12"
    assert engine.execute_sql(f"SELECT {p} || {p}" if engine.dialect.name != "mariadb"
                              and engine.dialect.name != "mysql"
                              else f"SELECT CONCAT({p}, {p})", ["a", "b"]).scalar() == "ab"
