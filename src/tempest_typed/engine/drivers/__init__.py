"""Driver adapters: the only modules that import a database library.

Each database has rules (what its library decides without a connection: base.py's DriverRules)
and connections, written once for asyncio (driver_async.py, psycopg_async.py, mysql_async.py)
with the blocking modules (driver.py, psycopg.py, mysql.py) generated from them by
tools/async_to_sync.py. SQLite's driver (sqlite.py) is blocking, and runs on worker threads
under the asyncio engine.
"""
