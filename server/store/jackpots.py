"""The linked jackpot pools' rows: one per pool, its engine state as JSON, locked by the
transaction of the table whose round feeds it (so two tables never update it at once)."""

from __future__ import annotations

import asyncpg


async def lock_pool(conn: asyncpg.Connection, name: str) -> bytes | None:
    """The pool's saved state, locked until the transaction ends; None if it has none yet."""
    row = await conn.fetchrow("SELECT state FROM jackpot_pools WHERE name = $1 FOR UPDATE", name)
    return None if row is None else bytes(row["state"])


async def insert_pool(conn: asyncpg.Connection, name: str, state: bytes) -> bool:
    """Save a new pool; False if another process saved it first (then lock theirs)."""
    mine = await conn.fetchval(
        "INSERT INTO jackpot_pools (name, state) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING name",
        name, state)
    return mine is not None


async def save_pool(conn: asyncpg.Connection, name: str, state: bytes) -> None:
    await conn.execute("UPDATE jackpot_pools SET state = $2, updated_at = now() WHERE name = $1", name, state)
