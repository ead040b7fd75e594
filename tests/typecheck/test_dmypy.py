"""The mypy daemon gives after each model edit the errors a cold mypy run gives.

dmypy keeps its TypeInfo objects across updates and refreshes them in place, so a fact the
plugin remembers about a model must be forgotten when the model's class body changes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_cache_and_workers import APP, MODELS, run_mypy

#: Each edit of the model, and a line of the app's errors that shows it was seen.
EDITS = [
    (lambda m: m.replace("consumer: str", "consumer_name: str"),
     'has no column "consumer"'),
    (lambda m: m.replace("attempts: int = 0", "attempts: int | None = 0"), None),
    (lambda m: m.replace("next_attempt_at: datetime",
                         "next_attempt_at: datetime = column(default=datetime(2000, 1, 1))"),
     None),
    (lambda m: m.replace('status: Literal["queued", "sent"] = "queued"',
                         'status: Literal["new", "sent"] = "new"'),
     'Outbound.status expects'),
]


def dmypy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run one dmypy command in `root`, with the status file of this test's daemon."""
    return subprocess.run(
        [sys.executable, "-m", "mypy.dmypy", "--status-file", str(root / ".dmypy.json"), *args],
        cwd=root, capture_output=True, text=True, timeout=300,
    )


def errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The sorted error lines of a check."""
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return sorted(line for line in proc.stdout.splitlines() if ": error:" in line)


def test_daemon_after_each_model_edit_matches_a_cold_run(tmp_path: Path,
                                                         plugin_config: str) -> None:
    (tmp_path / "mypy.ini").write_text(plugin_config)
    models = MODELS
    (tmp_path / "models.py").write_text(models)
    (tmp_path / "app.py").write_text(APP + 'select(Outbound).where({"status": "queued"})\n')
    started = dmypy(tmp_path, "start", "--", "--config-file", "mypy.ini",
                    "--cache-dir", str(tmp_path / "daemon-cache"))
    assert started.returncode == 0, started.stderr + started.stdout
    try:
        first = errors(dmypy(tmp_path, "check", "app.py", "models.py"))
        assert first == run_mypy(tmp_path, str(tmp_path / "cold-0")), first
        for step, (edit, seen) in enumerate(EDITS, start=1):
            models = edit(models)
            (tmp_path / "models.py").write_text(models)
            warm = errors(dmypy(tmp_path, "check", "app.py", "models.py"))
            cold = run_mypy(tmp_path, str(tmp_path / f"cold-{step}"))
            assert warm == cold, f"after edit {step}"
            if seen is not None:
                assert any(seen in line for line in warm), warm
    finally:
        dmypy(tmp_path, "stop")


def test_daemon_sees_a_column_type_edited_in_another_module(tmp_path: Path,
                                                             plugin_config: str) -> None:
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "kinds.py").write_text('from typing import Literal\n'
                                       'Status = Literal["queued", "sent"]\n')
    (tmp_path / "models.py").write_text(
        "from tempest_typed import Model, column\nfrom kinds import Status\n"
        "class Outbound(Model):\n    id: int = column(primary_key=True)\n"
        "    status: Status = \"sent\"\n")
    (tmp_path / "app.py").write_text('from tempest_typed import select\nfrom models import Outbound\n'
                                     'select(Outbound).where({"status": "queued"})\n')
    files = ("app.py", "kinds.py", "models.py")
    started = dmypy(tmp_path, "start", "--", "--config-file", "mypy.ini",
                    "--cache-dir", str(tmp_path / "daemon-cache"))
    assert started.returncode == 0, started.stderr + started.stdout
    try:
        assert errors(dmypy(tmp_path, "check", *files)) == []
        (tmp_path / "kinds.py").write_text('from typing import Literal\n'
                                           'Status = Literal["new", "sent"]\n')
        assert errors(dmypy(tmp_path, "check", *files)) == [
            "app.py:3:35: error: Outbound.status expects \"Literal['new', 'sent']\", got "
            "\"Literal['queued']\" in where()  [tempest-value]",
        ]
    finally:
        dmypy(tmp_path, "stop")


def test_daemon_sees_a_column_of_a_base_model_edited_in_another_module(
        tmp_path: Path, plugin_config: str) -> None:
    """Facts of a model are derived from its base models' class bodies too: an edit of only
    the base's module is seen by the checks of the derived model."""
    (tmp_path / "mypy.ini").write_text(plugin_config)
    (tmp_path / "base.py").write_text(
        "from tempest_typed import Model, column\n"
        "class Stamped(Model):\n    id: int = column(primary_key=True)\n    created: int = 0\n")
    (tmp_path / "models.py").write_text(
        "from base import Stamped\nclass Outbound(Stamped):\n    consumer: str = ''\n")
    (tmp_path / "app.py").write_text('from tempest_typed import select\nfrom models import Outbound\n'
                                     'select(Outbound).where({"created": 1, "consumer": "a"})\n')
    files = ("app.py", "base.py", "models.py")
    started = dmypy(tmp_path, "start", "--", "--config-file", "mypy.ini",
                    "--cache-dir", str(tmp_path / "daemon-cache"))
    assert started.returncode == 0, started.stderr + started.stdout
    try:
        assert errors(dmypy(tmp_path, "check", *files)) == []
        (tmp_path / "base.py").write_text(
            "from tempest_typed import Model, column\n"
            "class Stamped(Model):\n    id: int = column(primary_key=True)\n"
            "    created_at: int = 0\n")
        warm = errors(dmypy(tmp_path, "check", *files))
        assert warm == run_mypy(tmp_path, str(tmp_path / "cold")), warm
        assert any('Outbound has no column "created"' in line for line in warm), warm
    finally:
        dmypy(tmp_path, "stop")
