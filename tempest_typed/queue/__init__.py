"""A durable, at-least-once message queue on PostgreSQL, MySQL/MariaDB or SQLite.

`Queue(engine, "consumer")` enqueues idempotently (also inside the caller's transaction),
claims batches under a lease, and acks or nacks with the lease's fencing token; failures back
off exponentially (computed in SQL) and dead-letter after `max_attempts`. `queue.run(handler)`
is the worker loop (heartbeats, clean stop, reconnects, a Summary); `tempest-queue work
module:handler` runs it from the shell, `tempest-queue demo` shows it all. See docs/queue.md.
"""

from .model import QueueMessage, Status, message_model
from .queue import Lease, Message, Queue
from .worker import Summary

__all__ = ["Lease", "Message", "Queue", "QueueMessage", "Status", "Summary", "message_model"]
