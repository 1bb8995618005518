"""The asyncpg pool, set up the same way everywhere."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def _no_session_reset(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN, RESET ALL):
    nothing here leaves session state behind (advisory locks are per transaction or released
    in a ``finally``), asyncpg still rolls back an open transaction, and the round trip saved
    is one of six per table batch (issue 7's profile)."""


POOL_MAX = 20  # connections one server process may hold, at most
HEADROOM = 10  # connections left for everything else: `casino ledger check`, psql, backups


def pool_share(max_connections: int, reserved: int, processes: int) -> int:
    """Each of ``processes`` servers' pool size on a PostgreSQL that takes ``max_connections``
    (``reserved`` of them for superusers): together they leave ``HEADROOM`` free, and none
    takes more than ``POOL_MAX``. Below 2 a process cannot run a table batch beside its
    chores, so 2 is the floor (the caller warns: that server needs more max_connections)."""
    return max(2, min(POOL_MAX, (max_connections - reserved - HEADROOM) // max(1, processes)))


async def create_pool(url: str, *, min_size: int = 2, max_size: int = POOL_MAX,
                      application_name: str | None = None) -> asyncpg.Pool:
    # application_name: pg_stat_activity tells whose connections these are (which worker)
    settings = {"application_name": application_name} if application_name else None
    pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, reset=_no_session_reset,
                                     server_settings=settings)
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
