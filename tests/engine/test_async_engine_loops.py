"""An AsyncEngine belongs to the event loop it first connected in: its connections and pool
are that loop's. Another loop's use was a bare RuntimeError on MariaDB ("attached to a
different loop"), worked by chance on PostgreSQL until dispose() there failed with "Event loop
is closed"; it is a ConfigurationError naming the rule on every database, and dispose() in
the loop that used the engine still closes it."""

from __future__ import annotations

import asyncio

import pytest

from tempest_typed import ConfigurationError, create_async_engine


def test_another_event_loop_is_refused_naming_the_rule(url: str) -> None:
    engine = create_async_engine(url)
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        async def one() -> object:
            return (await engine.execute_sql("SELECT 1")).scalar()

        assert first.run_until_complete(one()) == 1
        for work in (one, engine.dispose):
            with pytest.raises(ConfigurationError, match="one engine per event loop") as refused:
                second.run_until_complete(work())
            assert "dispose() it in the loop that used it" in str(refused.value)
        assert first.run_until_complete(one()) == 1  # its own loop goes on
    finally:
        first.run_until_complete(engine.dispose())  # in the loop that used it: closed
        first.close()
        second.close()
    with pytest.raises(ConfigurationError, match="disposed"):
        engine.session()


def test_an_engine_made_outside_any_loop_binds_to_its_first(url: str) -> None:
    engine = create_async_engine(url)  # made before any loop runs: the first use decides

    async def use_and_dispose() -> object:
        try:
            return (await engine.execute_sql("SELECT 2")).scalar()
        finally:
            await engine.dispose()

    assert asyncio.run(use_and_dispose()) == 2
