"""The tempest_typed mypy plugin: column names, value types and row types checked statically.

`main` routes mypy's hooks to the checks, one module each; `lib/` is the foundation they share
(model facts, wording, scopes, the expression language), which imports no check.
"""
