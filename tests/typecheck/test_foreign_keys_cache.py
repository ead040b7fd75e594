"""A foreign key naming a model of another module is checked again when that model changes:
in a warm run, with parallel workers and in the daemon, as in a cold run.

The referencing class body does not mention the referenced model, and here its module reaches
it only through a module that imports it, so nothing but the plugin's own dependencies (an
indirect dependency for the cache, a plugin dependency for the daemon) makes mypy check it
again.
"""

from __future__ import annotations

from pathlib import Path

from test_cache_and_workers import run_mypy
from test_dmypy import dmypy, errors

USERS = '''
from tempest_typed import Model, column

class Customer(Model, table="customers"):
    id: int = column(primary_key=True)
    email: str
'''

ORDERS = '''
from tempest_typed import Model, column
from users import Customer

class Purchase(Model, table="purchases"):
    id: int = column(primary_key=True)
    customer_id: int = column(references="customers.id")

def buyer(customer: Customer) -> int:
    return customer.id
'''

INVOICES = '''
from tempest_typed import Model, column
import orders

class Invoice(Model):
    id: int = column(primary_key=True)
    purchase_id: int = column(references="purchases.id")
    customer_email: str = column(references="customers.email")
'''

RENAMED = USERS.replace("email: str", "mail: str")
SEEN = 'Customer (table "customers") has no column "email"; did you mean "mail"?'


def write(root: Path, config: str, users: str = USERS) -> None:
    """The three modules and the configuration."""
    (root / "mypy.ini").write_text(config)
    (root / "users.py").write_text(users)
    (root / "orders.py").write_text(ORDERS)
    (root / "invoices.py").write_text(INVOICES)


def test_warm_cache_after_the_referenced_model_changes(tmp_path: Path,
                                                       plugin_config: str) -> None:
    write(tmp_path, plugin_config)
    assert run_mypy(tmp_path, "warm") == []
    (tmp_path / "users.py").write_text(RENAMED)
    warm = run_mypy(tmp_path, "warm")
    assert warm == run_mypy(tmp_path, "cold")
    assert len(warm) == 1 and SEEN in warm[0] and warm[0].startswith("invoices.py:8:"), warm


def test_parallel_workers_match_one_process(tmp_path: Path, plugin_config: str) -> None:
    write(tmp_path, plugin_config, RENAMED)
    single = run_mypy(tmp_path, "single")
    assert len(single) == 1 and SEEN in single[0], single
    assert run_mypy(tmp_path, "parallel", "-n", "2") == single


def test_daemon_after_the_referenced_model_changes(tmp_path: Path, plugin_config: str) -> None:
    write(tmp_path, plugin_config)
    files = ("invoices.py", "orders.py", "users.py")
    started = dmypy(tmp_path, "start", "--", "--config-file", "mypy.ini",
                    "--cache-dir", str(tmp_path / "daemon-cache"))
    assert started.returncode == 0, started.stderr + started.stdout
    try:
        assert errors(dmypy(tmp_path, "check", *files)) == []
        (tmp_path / "users.py").write_text(RENAMED)
        warm = errors(dmypy(tmp_path, "check", *files))
        assert warm == run_mypy(tmp_path, str(tmp_path / "cold")), warm
        assert len(warm) == 1 and SEEN in warm[0], warm
        (tmp_path / "users.py").write_text(USERS)
        assert errors(dmypy(tmp_path, "check", *files)) == []
    finally:
        dmypy(tmp_path, "stop")
