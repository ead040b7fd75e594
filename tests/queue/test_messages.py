"""A lease made by the claim's fast path (messages.new_lease) is the Lease the class makes."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import threading
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from tempest_typed.queue import Lease
from tempest_typed.queue.messages import new_lease


def fields() -> tuple[object, ...]:
    return (uuid4(), uuid4(), {"to": "a@example.com"}, "order-42", 2, 5,
            datetime(2026, 12, 2, 12, tzinfo=UTC))


def test_new_lease_equals_the_lease_of_the_class_field_for_field() -> None:
    values = fields()
    made, fast = Lease(*values), new_lease(*values)  # type: ignore[arg-type]
    assert fast == made
    assert repr(fast) == repr(made)
    assert dataclasses.astuple(fast)[:7] == dataclasses.astuple(made)[:7]  # then the watch
    assert (fast.final, fast.lost) == (made.final, made.lost) == (False, False)
    assert fast._watch is not made._watch
    assert (fast._watch.deadline, fast._watch.gone.is_set()) == (math.inf, False)


def test_new_lease_is_frozen_and_copies_and_pickles_as_a_lease() -> None:
    lease = new_lease(*fields())  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lease.attempts = 3  # type: ignore[misc]
    assert copy.deepcopy(lease) == lease
    again = pickle.loads(pickle.dumps(lease))
    assert again == lease and not again.lost


def test_each_new_lease_has_its_own_watch_that_wakes_its_waiter() -> None:
    first, second = new_lease(*fields()), new_lease(*fields())  # type: ignore[arg-type]
    assert first._watch.gone is not second._watch.gone
    told: list[bool] = []
    waiter = threading.Thread(target=lambda: told.append(first.wait_lost(10)))
    waiter.start()
    first._watch.gone.set()
    waiter.join(10)
    assert told == [True] and first.lost and not second.lost


def test_a_lease_is_hashable_as_a_frozen_dataclass_promises() -> None:
    """hash(lease) raised TypeError (its payload is a dict): a set of leases in flight
    could not be kept."""
    fields = (uuid4(), uuid4(), {"to": ["a@example.com"]}, None, 1, 5, datetime.now(UTC))
    one, again = Lease(*fields), new_lease(*fields)
    assert one == again and hash(one) == hash(again)
    assert len({one, again, new_lease(fields[0], uuid4(), *fields[2:])}) == 2
