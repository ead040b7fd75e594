"""Handlers that `tempest-queue work` imports in the tests (tests.queue.handlers:NAME).

Each appends a line per event to the file named by TEMPEST_TEST_EVENTS, one write per line,
so that the test reads what the worker process did.
"""

from __future__ import annotations

import asyncio
import os
import time

from tempest_typed.queue import Lease


def _event(*fields: object) -> None:
    path = os.environ.get("TEMPEST_TEST_EVENTS")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, ("\t".join(str(f) for f in fields) + "\n").encode())
        finally:
            os.close(fd)


def slow(lease: Lease) -> None:
    """Takes the payload's "seconds" (default 0.5), then returns."""
    _event("start", lease.id)
    time.sleep(float(lease.payload.get("seconds", 0.5)))
    _event("end", lease.id)


async def aslow(lease: Lease) -> None:
    """The same as slow(), awaited: `tempest-queue work` runs it on AsyncQueue."""
    _event("start", lease.id)
    await asyncio.sleep(float(lease.payload.get("seconds", 0.5)))
    _event("end", lease.id)


def noop(lease: Lease) -> None:
    """Does nothing."""
