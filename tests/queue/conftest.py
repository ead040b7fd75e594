"""Fixtures of the queue's tests: a fresh queue table per test, on each database."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tempest_typed import Engine, sql, update
from tempest_typed.queue import Queue, QueueMessage, message_model


def table_name(what: str) -> str:
    """A table of the queue's tests, unique to this test process."""
    return f"queue_{what}_{os.getpid()}"


@pytest.fixture
def model(engine: Engine) -> Iterator[type[QueueMessage]]:
    """The message model on a freshly created table, dropped afterwards."""
    model = message_model(table_name("unit"))
    engine.drop_all(model)
    engine.create_all(model)
    try:
        yield model
    finally:
        engine.drop_all(model)


@pytest.fixture
def queue(engine: Engine, model: type[QueueMessage]) -> Queue:
    """A queue of consumer "mail" whose backoff starts at 100 s and caps at 1000 s."""
    return Queue(engine, "mail", model=model, lease_seconds=60, max_attempts=3,
                 backoff_seconds=100, max_backoff_seconds=1000)


def make_due(queue: Queue) -> None:
    """Let time pass: every queued message and every lease is due now."""
    queue.engine.execute(
        update(queue.model).set({"next_attempt_at": sql.now(plus=-1)})
        .where({"status": {"in": ["queued", "sending"]}})
    )


class Outage:
    """A TCP proxy to a database server that the test can cut off: `cut()` closes every
    connection through it and turns new ones away (a lost network, a server down), and
    `restore()` lets them through again. Threads only; stopped by `close()`."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._up = True
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, url: str) -> str:
        """`url` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{self.port}"))

    def cut(self) -> None:
        """Close every connection through the proxy and turn new ones away."""
        with self._lock:
            self._up = False
            conns, self._open = self._open, set()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def restore(self) -> None:
        """Let connections through again."""
        with self._lock:
            self._up = True

    def close(self) -> None:
        """Stop the proxy and close what goes through it."""
        self._closed = True
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                up = self._up
            if not up:
                client.close()  # turned away: the client sees the connection closed
                continue
            try:
                server = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink, source is client),
                                 daemon=True).start()

    def _passing(self, client: socket.socket, upstream: bool) -> None:
        """Data is about to pass: from the client (`upstream`) or to it."""

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        client = source if upstream else sink
        try:
            while data := source.recv(65536):
                self._passing(client, upstream)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for conn in (source, sink):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)


class RoundTrips(Outage):
    """A TCP proxy that counts round trips: each time a client sends after the server last
    spoke to it (or first), the client waits for an answer once more. A pipeline (several
    statements, then one Sync) is one round trip; a prepare sent alone before its execute,
    two. `turns` counts them over every connection through the proxy."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.turns = 0
        self._client_spoke: dict[socket.socket, bool] = {}

    def _passing(self, client: socket.socket, upstream: bool) -> None:
        # counted before the data passes: the answer cannot reach the client, nor the
        # client's next request the proxy, before the direction is recorded
        with self._lock:
            if upstream and not self._client_spoke.get(client, False):
                self.turns += 1
            self._client_spoke[client] = upstream


class Locked:
    """SQLite's version of an outage: another connection holds the database's exclusive
    lock, so every statement waits the engine's busy_timeout and fails."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._holder: sqlite3.Connection | None = None

    def cut(self) -> None:
        """Take the exclusive lock."""
        self._holder = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        self._holder.execute("BEGIN EXCLUSIVE")

    def restore(self) -> None:
        """Let the lock go."""
        holder, self._holder = self._holder, None
        if holder is not None:
            holder.rollback()
            holder.close()

    def close(self) -> None:
        """Let the lock go."""
        self.restore()


@dataclasses.dataclass
class Faulty:
    """A database that the test can make unreachable: `url` goes through `fault`, whose
    cut() and restore() start and end the outage; `direct` does not; `options` make an
    engine notice an outage in a second rather than its defaults' 5 to 30."""

    url: str
    direct: str
    fault: Outage | Locked
    options: dict[str, float]


@pytest.fixture(params=["postgresql", "mysql", "sqlite"])
def faulty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Faulty]:
    """Each database in turn behind a fault: a TCP proxy (PostgreSQL, MariaDB), or a
    lock holder (SQLite)."""
    fault: Outage | Locked
    if request.param == "sqlite":
        path = str(tmp_path / "faulty.db")
        fault = Locked(path)
        made = Faulty(f"sqlite:///{path}", f"sqlite:///{path}", fault, {"busy_timeout": 0.2})
    else:
        server = request.param
        url = str(request.getfixturevalue("pg_url" if server == "postgresql" else "mysql_url"))
        parts = urlsplit(url)
        fault = Outage(parts.hostname or "127.0.0.1",
                       parts.port or (5432 if server == "postgresql" else 3306))
        made = Faulty(fault.url(url), url, fault,
                      {"connect_timeout": 1.0} if server == "postgresql" else {})
    try:
        yield made
    finally:
        fault.close()
