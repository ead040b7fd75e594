"""`tempest-queue`: the work command stops cleanly on SIGTERM, bad input is one line and exit
status 2, and --help gives every option its help text and default."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tempest_typed import create_engine, select
from tempest_typed.queue import Message, Queue, message_model
from tempest_typed.queue.__main__ import _parser, main

from ..conftest import database_url
from .conftest import table_name

ROOT = Path(__file__).resolve().parents[2]


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", ["work", "demo"])
def test_help_gives_every_option_its_help_text_and_default(command: str) -> None:
    parser = subcommands()[command]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.dest} has no help text"
        if action.option_strings and not action.required:
            assert "default" in action.help, f"{command} {action.dest} does not say its default"
    text = parser.format_help()
    assert "--grace" in text or command == "demo"


@pytest.mark.parametrize("argv", [
    ["demo", "--url", "nonsense://x"],
    ["work", "tests.queue.handlers:slow", "--url", "nonsense://x", "--consumer", "c"],
    ["work", "tests.queue.handlers:missing", "--url", "sqlite:///x.db", "--consumer", "c"],
    ["work", "no_such_module_anywhere:run", "--url", "sqlite:///x.db", "--consumer", "c"],
    ["work", "not-a-spec", "--url", "sqlite:///x.db", "--consumer", "c"],
])
def test_bad_input_is_one_line_and_exit_status_2(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tempest-queue: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


# -- SIGTERM, for real: a worker process --------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def worker_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Queue]:
    """A queue table on an SQLite file or on PostgreSQL, dropped afterwards."""
    engine = create_engine(database_url(request, request.param, tmp_path), pool_size=2)
    model = message_model(table_name("cli"))
    try:
        engine.drop_all(model)
        queue = Queue(engine, "cli", model=model)
        queue.create_table()
        yield queue
    finally:
        try:
            Queue(engine, "cli", model=model).drop_table()
        finally:
            engine.close()


#: the sync handler runs on Queue.run's threads, the async one on AsyncQueue.run's tasks
HANDLERS = pytest.mark.parametrize("handler", ["slow", "aslow"])


def start_worker(queue: Queue, events: Path, handler: str,
                 *options: str) -> subprocess.Popen[str]:
    url = str(queue.engine.url)
    env = {**os.environ, "TEMPEST_TEST_EVENTS": str(events)}
    return subprocess.Popen(
        [sys.executable, "-m", "tempest_typed.queue", "work", f"tests.queue.handlers:{handler}",
         "--url", url, "--consumer", "cli", "--table", table_name("cli"), "--batch", "10", "--poll-interval", "0.05", *options],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_start(events: Path, worker: subprocess.Popen[str]) -> None:
    for _ in range(600):  # bounded: 30 s at most (a cold start of the interpreter included)
        if events.exists() and "start" in events.read_text():
            return
        assert worker.poll() is None, worker.communicate()
        time.sleep(0.05)
    raise AssertionError("the worker never started a handler")


@HANDLERS
def test_sigterm_finishes_the_message_in_hand_and_hands_back_the_rest_uncharged(
    worker_db: Queue, tmp_path: Path, handler: str
) -> None:
    queue = worker_db
    queue.enqueue_many([Message({"seconds": 0.5}) for _ in range(10)])
    events = tmp_path / "events"
    worker = start_worker(queue, events, handler, "--grace", "30")
    try:
        wait_for_start(events, worker)
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert worker.returncode == 0, err
    lines = events.read_text().splitlines()
    started = {line.split("\t")[1] for line in lines if line.startswith("start")}
    ended = {line.split("\t")[1] for line in lines if line.startswith("end")}
    assert started == ended  # the message in hand was finished, not cut off
    stored = queue.engine.execute(select(queue.model)).all()
    sent = {str(r.id) for r in stored if r.status == "sent"}
    assert sent == ended
    rest = [r for r in stored if r.status != "sent"]
    assert rest and all((r.status, r.attempts, r.lease_token) == ("queued", 0, None)
                        for r in rest)
    assert any(line.split() == ["released", str(len(rest))] for line in out.splitlines()), out
    assert "stopping" in err  # the worker logs what it does


@HANDLERS
def test_past_the_grace_period_sigterm_hands_back_the_message_in_hand(
    worker_db: Queue, tmp_path: Path, handler: str
) -> None:
    queue = worker_db
    queue.enqueue({"seconds": 60})
    events = tmp_path / "events"
    worker = start_worker(queue, events, handler, "--grace", "0.3")
    try:
        wait_for_start(events, worker)
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=30)  # far less than the handler's 60 s
    finally:
        worker.kill()
    assert worker.returncode == 0, err
    (stored,) = queue.engine.execute(select(queue.model)).all()
    assert (stored.status, stored.attempts, stored.lease_token) == ("queued", 0, None)
    assert any(line.split() == ["released", "1"] for line in out.splitlines())
