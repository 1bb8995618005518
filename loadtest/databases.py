"""A bench's own database on a PostgreSQL server: made new for a run, dropped after it."""

from __future__ import annotations

import asyncpg

from games.db.embedded import with_database


async def recreate(url: str, name: str) -> str:
    """Database ``name`` on ``url``'s server, dropped first if it was there: its URL."""
    await drop(url, name)
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return with_database(url, name)


async def drop(url: str, name: str) -> None:
    """Database ``name`` on ``url``'s server gone (its connections closed)."""
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
