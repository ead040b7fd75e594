"""Driver adapters: the only modules that import a database library."""
