"""Versioned schema: ``migrations/NNNN_name.sql`` applied once each, in order, at start.

Numbering: 0001-0099 ledger and shared game data, 0100-0199 server (users, audit,
tables, rounds), 0200+ later features. A migration never changes after it lands;
fixes are new migrations. Concurrent starters serialise on an advisory lock.
"""

from __future__ import annotations

from importlib import resources

import asyncpg

_LOCK_KEY = 0x6361_7369_6E6F  # "casino"


def available() -> list[tuple[int, str, str]]:
    out = []
    for entry in resources.files("games.db").joinpath("migrations").iterdir():
        name = entry.name
        if name.endswith(".sql"):
            out.append((int(name.split("_", 1)[0]), name, entry.read_text()))
    return sorted(out)


async def migrate(conn: asyncpg.Connection) -> list[str]:
    """Apply what is missing; return the names applied now."""
    applied_now: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version int PRIMARY KEY,
                   name text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for version, name, sql in available():
            if version in done:
                continue
            async with conn.transaction():
                await conn.execute(sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", version, name
                )
            applied_now.append(name)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    return applied_now
