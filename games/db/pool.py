"""The asyncpg pool, set up the same way everywhere."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def _no_session_reset(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN, RESET ALL):
    nothing here leaves session state behind (advisory locks are per transaction or released
    in a ``finally``), asyncpg still rolls back an open transaction, and the round trip saved
    is one of six per table batch (issue 7's profile)."""


POOL_MAX = 20  # connections one server process's pool may hold, at most
POOL_MIN = 2  # a table batch beside the chores (nothing takes a second connection while holding one)
HEADROOM = 10  # connections left for everything else: `casino ledger check`, psql, backups
OUTSIDE_POOL = 1  # a server process's own connection besides its pool: the table notices (LISTEN)


def pool_share(max_connections: int, reserved: int, processes: int) -> int:
    """Each of ``processes`` servers' pool size on a PostgreSQL that takes ``max_connections``
    (``reserved`` of them for superusers): with each process's connection outside its pool
    they leave ``HEADROOM`` free, and no pool is over ``POOL_MAX`` or under ``POOL_MIN`` (the
    caller warns where the processes then do not fit: that server needs more max_connections)."""
    share = (max_connections - reserved - HEADROOM) // max(1, processes) - OUTSIDE_POOL
    return max(POOL_MIN, min(POOL_MAX, share))


async def connection_limits(conn: asyncpg.Connection) -> tuple[int, int]:
    """The server's ``max_connections`` and how many of them are reserved (for superusers, and
    on PostgreSQL 16+ for roles granted ``pg_use_reserved_connections``)."""
    limit = int(await conn.fetchval("SHOW max_connections"))
    reserved = int(await conn.fetchval("SHOW superuser_reserved_connections"))
    reserved += int(await conn.fetchval("SELECT current_setting('reserved_connections', true)") or 0)
    return limit, reserved


def connections_fit(max_connections: int, reserved: int, processes: int, pool: int) -> bool:
    """Whether ``processes`` pools of ``pool`` (and their connections outside it) leave the headroom."""
    return processes * (pool + OUTSIDE_POOL) + HEADROOM <= max_connections - reserved


def parse_pool_size(text: str) -> int:
    """``CASINO_DB_POOL``: a whole number of connections, at least ``POOL_MIN``."""
    try:
        size = int(text)
    except ValueError:
        raise ValueError(f"CASINO_DB_POOL must be a whole number of connections, not {text!r}") from None
    if size < POOL_MIN:
        raise ValueError(f"CASINO_DB_POOL must be at least {POOL_MIN} (a table batch beside the chores), not {size}")
    return size


def application_name(owner: str) -> str:
    """``casino <owner>`` for pg_stat_activity, in ASCII (PostgreSQL writes other characters as
    ``\\xNN``, which would lengthen it) and within its 63 bytes: a long name keeps its end (a
    worker's slot, ``/3``), which tells the workers apart."""
    name = "casino " + "".join(c if " " <= c <= "~" else "?" for c in owner)
    return name if len(name) <= 63 else "casino ..." + name[-(63 - len("casino ...")):]


async def create_pool(url: str, *, min_size: int = 2, max_size: int = POOL_MAX,
                      owner: str | None = None) -> asyncpg.Pool:
    # owner: pg_stat_activity tells whose connections these are (which worker: application_name)
    settings = {"application_name": application_name(owner)} if owner else None
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
