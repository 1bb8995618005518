"""Throwaway databases on the test run's PostgreSQL: created empty, dropped at the end
(with any connection still open to them), whatever the test did."""

from __future__ import annotations

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
