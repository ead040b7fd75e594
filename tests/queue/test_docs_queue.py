"""docs/queue.md's AsyncQueue example runs as written, on the three databases."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tempest_typed import create_async_engine, select
from tempest_typed.queue import AsyncQueue

DOC = Path(__file__).parents[2] / "docs" / "queue.md"
SECTION = DOC.read_text().split("### On asyncio: `AsyncQueue`", 1)[1]
BLOCK = re.findall(r"```python\n(.*?)```", SECTION, re.S)[0]
DOC_URL = "postgresql://app@localhost/app"


class Mailer:
    """The example's mail service: records what it was asked to send."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, **payload: Any) -> None:
        self.sent.append(payload)


@pytest.mark.asyncio
async def test_the_async_queue_example_runs(url: str) -> None:
    assert DOC_URL in BLOCK
    source = "async def example():\n" + textwrap.indent(BLOCK.replace(DOC_URL, url), "    ")
    namespace: dict[str, Any] = {"mailer": Mailer()}
    exec(compile(source, f"{DOC.name} AsyncQueue example", "exec"), namespace)
    try:
        await namespace["example"]()
        engine = create_async_engine(url)
        try:
            queue = AsyncQueue(engine, "mailer")
            stored = (await engine.execute(select(queue.model))).all()
        finally:
            await engine.dispose()
        assert sorted(r.status for r in stored) == ["sent", "sent"]
        assert {"to": "a@example.com"} in namespace["mailer"].sent
    finally:
        engine = create_async_engine(url)
        try:
            await AsyncQueue(engine, "mailer").drop_table()
        finally:
            await engine.dispose()
        await asyncio.sleep(0)
