"""Waking idle workers on PostgreSQL: the LISTEN/NOTIFY channel of a queue table, the
triggers that send it when messages become due, and the lock their DDL takes.

Used only where the dialect says `supports_listen_notify`; the SQL here is PostgreSQL's.
"""

from __future__ import annotations

import hashlib
from typing import Final

__all__ = ["DDL_LOCK_KEY", "DDL_LOCK_SQL", "NOTIFY_FUNCTIONS", "notify_channel",
           "notify_trigger", "trigger_sql"]


def notify_channel(table: str) -> str:
    """The LISTEN/NOTIFY channel of a queue table on PostgreSQL: "tempest_queue:<table>", or
    with the md5 of a name too long for a channel (63 bytes at most)."""
    name = table if len(table.encode()) <= 49 else hashlib.md5(table.encode()).hexdigest()
    return f"tempest_queue:{name}"


def trigger_sql(name: str) -> list[str]:
    """The triggers that NOTIFY waiting workers of the queue table `name`, in the writing
    transaction, when messages become due now: inserted, or handed back / queued again by an
    update. The two functions serve every queue table of the database."""
    table = _quoted(name)
    insert_trigger = _quoted(notify_trigger(name, "insert"))
    update_trigger = _quoted(notify_trigger(name, "update"))
    return [
        f"CREATE OR REPLACE FUNCTION {_NOTIFY_INSERT}() RETURNS trigger LANGUAGE plpgsql "
        f"AS $$ BEGIN PERFORM pg_notify({_CHANNEL_SQL}, c.consumer) FROM (SELECT DISTINCT "
        "consumer FROM tempest_new WHERE status = 'queued' AND next_attempt_at <= now()) c; "
        "RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {_NOTIFY_UPDATE}() RETURNS trigger LANGUAGE plpgsql "
        f"AS $$ BEGIN PERFORM pg_notify({_CHANNEL_SQL}, NEW.consumer); RETURN NULL; END $$",
        f"CREATE OR REPLACE TRIGGER {insert_trigger} AFTER INSERT ON {table} "
        "REFERENCING NEW TABLE AS tempest_new FOR EACH STATEMENT "
        f"EXECUTE FUNCTION {_NOTIFY_INSERT}()",
        f"CREATE OR REPLACE TRIGGER {update_trigger} AFTER UPDATE ON {table} "
        "FOR EACH ROW WHEN (NEW.status = 'queued' AND OLD.status <> 'queued' AND "
        f"NEW.next_attempt_at <= now()) EXECUTE FUNCTION {_NOTIFY_UPDATE}()",
    ]


_NOTIFY_INSERT: Final = "tempest_queue_notify_insert"
_NOTIFY_UPDATE: Final = "tempest_queue_notify_update"
#: notify_channel() in SQL, for the trigger functions
_CHANNEL_SQL: Final = ("'tempest_queue:' || CASE WHEN octet_length(TG_TABLE_NAME) <= 49 "
                       "THEN TG_TABLE_NAME ELSE md5(TG_TABLE_NAME) END")
#: PostgreSQL: dropped with the last queue table that uses them (an error while another
#: table's triggers still do, which drop_table() ignores)
NOTIFY_FUNCTIONS: Final = (_NOTIFY_INSERT, _NOTIFY_UPDATE)
#: PostgreSQL: taken (for the transaction) by create_table() and drop_table() around the
#: trigger functions every queue table of the database shares: two processes replacing them
#: at once fail with "tuple concurrently updated"
DDL_LOCK_SQL: Final = "SELECT pg_advisory_xact_lock(%s)"
DDL_LOCK_KEY: Final = int.from_bytes(hashlib.md5(b"tempest_typed.queue ddl").digest()[:8],
                                     "big", signed=True)


def notify_trigger(table: str, event: str) -> str:
    """The name of a queue table's NOTIFY trigger on `event` (trigger names are per table)."""
    name = f"{table}_notify_{event}"
    return name if len(name.encode()) <= 63 else f"tempest_queue_notify_{event}"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
