"""A durable, at-least-once message queue on PostgreSQL, MySQL/MariaDB or SQLite.

`Queue(engine, "consumer")` enqueues idempotently (also inside the caller's transaction),
claims batches under a lease, and acks or nacks with the lease's fencing token; failures back
off exponentially (computed in SQL) and dead-letter after `max_attempts`. The demo command is
`python -m tempest_typed.queue demo`. See docs/queue.md.
"""

from .model import QueueMessage, Status, message_model
from .queue import Lease, Message, Queue

__all__ = ["Lease", "Message", "Queue", "QueueMessage", "Status", "message_model"]
