"""The tempest_typed mypy plugin: column names, value types and row types checked statically."""
