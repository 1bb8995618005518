"""Throwaway databases on the test run's PostgreSQL: created empty, dropped at the end
(with any connection still open to them), whatever the test did."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from games.db.embedded import with_database


@asynccontextmanager
async def new_database(pg_url: str, prefix: str) -> AsyncIterator[str]:
    """An empty database named ``<prefix>_<random>``: its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield with_database(pg_url, name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def activity(conn: asyncpg.Connection, query: str, *args: object) -> object:
    """``query``'s value over ``pg_stat_activity`` as it is now. Inside a transaction
    PostgreSQL answers from the snapshot it took at the transaction's first look, so a poll
    from a connection holding a lock would never see a backend that began to wait after
    that: the snapshot is dropped first."""
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    return await conn.fetchval(query, *args)


async def until_waiting(conn: asyncpg.Connection, pid: int) -> None:
    """Until backend ``pid`` waits for a lock (``activity``: polled from any connection)."""
    while not await activity(conn, "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1", pid):  # noqa: ASYNC110
        await asyncio.sleep(0.01)  # (it polls PostgreSQL's state)


async def rows_read(conn: asyncpg.Connection, table: str) -> int:
    """Rows of ``table`` this backend has read and not yet reported, by any scan: its
    sequential scans' rows and its indexes' entries (a difference of two readings in one
    transaction is what happened between them)."""
    return await conn.fetchval(
        """SELECT pg_stat_get_xact_tuples_returned($1::regclass)
                  + (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0)
                     FROM pg_index WHERE indrelid = $1::regclass)""", table)
