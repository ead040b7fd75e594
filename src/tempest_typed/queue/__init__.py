"""A durable, at-least-once message queue on PostgreSQL, MySQL/MariaDB or SQLite.

`Queue(engine, "consumer")` enqueues idempotently (also inside the caller's transaction),
claims batches under a lease, and acks or nacks with the lease's fencing token; failures back
off exponentially (computed in SQL) and dead-letter after `max_attempts`. `queue.run(handler)`
is the worker loop (heartbeats, clean stop, reconnects, a Summary); `AsyncQueue(async_engine,
"consumer")` is the same, awaited (an idle worker waits on LISTEN on PostgreSQL); `tempest-queue
work module:handler` runs either from the shell, `tempest-queue demo` shows it all. See docs/queue.md.
"""

from .aio import AsyncQueue
from .messages import Lease, Message
from .model import QueueMessage, Status, message_model
from .queue import Queue
from .worker import Summary

__all__ = ["AsyncQueue", "Lease", "Message", "Queue", "QueueMessage", "Status", "Summary",
           "message_model"]
