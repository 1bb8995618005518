"""Who serves which table: one lease per table (``table_owners``), and each serving process's
heartbeat (``casino_processes``). A commit renews its table's lease too, in the same
statement, and fails once another process took it, or the same one took it again for a
new runtime: each take counts the lease's epoch up (``state.record_batches``)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import asyncpg


async def take_lease(db: asyncpg.Pool | asyncpg.Connection, table_id: str, owner: str, lease_seconds: float) -> bool:
    """Take the table for ``lease_seconds`` (again, if ``owner`` holds it already): only if
    nobody else holds a lease still running. Whether ``owner`` holds it now. Each take counts
    the lease's epoch up (migration 0119): a runtime started before it can write no more."""
    holder = await db.fetchval(
        """INSERT INTO table_owners (table_id, owner, lease_until, epoch)
           VALUES ($1, $2, now() + make_interval(secs => $3), 1)
           ON CONFLICT (table_id) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
                                                epoch = table_owners.epoch + 1
               WHERE table_owners.owner = EXCLUDED.owner OR table_owners.lease_until < now()
           RETURNING owner""",
        table_id, owner, lease_seconds,
    )
    return bool(holder == owner)


async def lease_epoch(db: asyncpg.Pool | asyncpg.Connection, table_id: str, owner: str) -> int | None:
    """The epoch of ``owner``'s lease on the table (None: not his): what its runtime writes
    under (``state.record_batches``)."""
    epoch: int | None = await db.fetchval(
        "SELECT epoch FROM table_owners WHERE table_id = $1 AND owner = $2", table_id, owner)
    return epoch


async def renew_leases(db: asyncpg.Pool | asyncpg.Connection, owner: str, lease_seconds: float,
                       table_ids: list[str]) -> None:
    """Renew ``owner``'s leases on ``table_ids`` (those it still holds). The rows are locked
    in the tables' order, as the batch statement locks its tables' (``state.record_batches``):
    neither waits for the other both ways."""
    await db.execute(
        """UPDATE table_owners o SET lease_until = now() + make_interval(secs => $2)
             FROM (SELECT table_id FROM table_owners WHERE owner = $1 AND table_id = ANY($3::text[])
                    ORDER BY table_id FOR UPDATE) mine
            WHERE o.table_id = mine.table_id""",
        owner, lease_seconds, table_ids,
    )


async def hand_back(db: asyncpg.Pool | asyncpg.Connection, owner: str, table_id: str) -> None:
    """End ``owner``'s lease on the table now: another process may take it at once."""
    await db.execute(
        "UPDATE table_owners SET lease_until = now() WHERE owner = $1 AND table_id = $2", owner, table_id,
    )


async def hand_back_all(conn: asyncpg.Connection, owner: str) -> list[str]:
    """End every lease ``owner`` holds, now; the tables it held."""
    rows = await conn.fetch(
        """UPDATE table_owners o SET lease_until = now()
             FROM (SELECT table_id FROM table_owners WHERE owner = $1 ORDER BY table_id FOR UPDATE) mine
            WHERE o.table_id = mine.table_id RETURNING o.table_id""", owner)  # (in order: renew_leases)
    return [r["table_id"] for r in rows]


async def beat(db: asyncpg.Pool | asyncpg.Connection, owner: str, ws_url: str | None = None) -> None:
    """``owner`` is alive (its first beat registers it), and takes websockets at ``ws_url``
    (None: it names no address of its own)."""
    await db.execute(
        """INSERT INTO casino_processes (owner, ws_url) VALUES ($1, $2)
           ON CONFLICT (owner) DO UPDATE SET heartbeat_at = now(), ws_url = $2""",
        owner, ws_url,
    )


async def stopped(conn: asyncpg.Connection, owner: str) -> None:
    """``owner`` stopped on purpose: it no longer beats."""
    await conn.execute("DELETE FROM casino_processes WHERE owner = $1", owner)


class TableLease(NamedTuple):
    table: str
    owner: str | None  # None: nobody ever held it
    lease_until: datetime | None
    served: bool  # its lease runs and its owner still beats


async def open_table_leases(db: asyncpg.Pool | asyncpg.Connection, beat_within_seconds: float) -> list[TableLease]:
    """Every open (not archived) table's lease, and whether it is served: the lease runs
    and its owner beat within ``beat_within_seconds``."""
    rows = await db.fetch(
        """SELECT t.id, o.owner, o.lease_until,
                  o.owner IS NOT NULL AND o.lease_until > now() AND p.heartbeat_at > now() - make_interval(secs => $1)
                      AS served
           FROM casino_tables t LEFT JOIN table_owners o ON o.table_id = t.id
                LEFT JOIN casino_processes p ON p.owner = o.owner
           WHERE t.archived_at IS NULL ORDER BY t.id""",
        beat_within_seconds,
    )
    return [TableLease(r["id"], r["owner"], r["lease_until"], bool(r["served"])) for r in rows]


async def live_processes(db: asyncpg.Pool | asyncpg.Connection,
                         beat_within_seconds: float) -> dict[str, str | None]:
    """The processes that beat within ``beat_within_seconds``, each with the websocket URL it
    takes players at (None: none of its own)."""
    rows = await db.fetch(
        "SELECT owner, ws_url FROM casino_processes WHERE heartbeat_at > now() - make_interval(secs => $1)",
        beat_within_seconds,
    )
    return {r["owner"]: r["ws_url"] for r in rows}


async def table_lease(db: asyncpg.Pool | asyncpg.Connection, table_id: str,
                      beat_within_seconds: float) -> TableLease | None:
    """One table's lease, as ``open_table_leases`` gives it."""
    row = await db.fetchrow(
        """SELECT o.table_id, o.owner, o.lease_until,
                  o.lease_until > now() AND p.heartbeat_at > now() - make_interval(secs => $2) AS served
           FROM table_owners o LEFT JOIN casino_processes p ON p.owner = o.owner
           WHERE o.table_id = $1""",
        table_id, beat_within_seconds,
    )
    return TableLease(row["table_id"], row["owner"], row["lease_until"], bool(row["served"])) if row else None
