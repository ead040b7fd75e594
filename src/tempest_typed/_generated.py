"""The per-model types of the generated stubs (`tempest-typed stubs`), seen without them.

The stubs' `_generated.pyi` declares per model its column names, where/set/values dicts and
rows (`OutboundWhere`, `OutboundColumn`, ...), which code imports for the checker only (`if
TYPE_CHECKING: from tempest_typed._generated import OutboundWhere`). pyright, and mypy with the
stubs on its path, read those declarations; mypy with the plugin (which needs no stubs), and
the run time, read this module, where every such name is `Any`: the plugin checks the dicts
where they are given, not by these names.
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    """Any per-model name of the generated stubs: `Any` here."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return Any
