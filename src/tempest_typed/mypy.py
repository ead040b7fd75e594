"""The mypy plugin's entry point: `plugins = tempest_typed.mypy` in the mypy configuration."""

from tempest_typed_mypy.main import plugin

__all__ = ["plugin"]
