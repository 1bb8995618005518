"""The asyncpg pool, set up the same way everywhere."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def _no_session_reset(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN, RESET ALL):
    nothing here leaves session state behind (advisory locks are per transaction or released
    in a ``finally``), asyncpg still rolls back an open transaction, and the round trip saved
    is one of six per table batch (issue 7's profile)."""


async def create_pool(url: str, *, min_size: int = 2, max_size: int = 20) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, reset=_no_session_reset)
    assert pool is not None
    return pool


async def open_migrated_pool(url: str, packages: Sequence[str] = ("games.ledger",), *,
                             min_size: int = 1, max_size: int = 2) -> asyncpg.Pool:
    """A pool on ``url`` after bringing the schema of ``packages`` up to date (for the
    command-line tools; the ledger's by default, which need no server table)."""
    from games.db.migrate import migrate

    conn = await asyncpg.connect(url)
    try:
        await migrate(conn, packages)
    finally:
        await conn.close()
    return await create_pool(url, min_size=min_size, max_size=max_size)
