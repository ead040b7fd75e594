"""docs/queries.md runs as written: its Python blocks, in order, on each of the three databases."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

from tempest_typed import Engine

DOC = Path(__file__).parents[2] / "docs" / "queries.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_guide_has_examples() -> None:
    assert len(BLOCKS) >= 10


def test_every_example_runs(engine: Engine) -> None:
    module = types.ModuleType("docs_queries")  # dataclasses look their module up by name
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    namespace["engine"] = engine
    try:
        for i, block in enumerate(BLOCKS):
            code = compile(block, f"{DOC.name} block {i + 1}", "exec")
            exec(code, namespace)
    finally:
        user, order = namespace.get("User"), namespace.get("Order")
        if user is not None and order is not None:
            engine.drop_all(user, order)  # type: ignore[arg-type]  # classes the doc defined
        del sys.modules[module.__name__]
