"""docs/async.md's FastAPI service and its test run as written, on the three databases."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from tempest_typed import Model, create_engine

DOC = Path(__file__).parents[2] / "docs" / "async.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_fastapi_example_and_its_test_run(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(BLOCKS) == 2, "the guide's two Python blocks: the service and its test"
    monkeypatch.setenv("DATABASE_URL", url)
    module = types.ModuleType("docs_async")  # dataclasses look their module up by name
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    try:
        for i, block in enumerate(BLOCKS):
            exec(compile(block, f"{DOC.name} block {i + 1}", "exec"), namespace)
        namespace["test_notes"]()
    finally:
        del sys.modules[module.__name__]
        note = namespace.get("Note")
        if isinstance(note, type) and issubclass(note, Model):
            with create_engine(url) as engine:
                engine.drop_all(note)
