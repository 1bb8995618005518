"""Shared fixtures. Database tests run against a real PostgreSQL: the one in
``DATABASE_URL`` if set (it must be a throwaway database), else an embedded one
under ``.casino/test-pg`` that is wiped at the start of each run."""

from __future__ import annotations

import os
import shutil

import asyncpg
import pytest

from games.db.embedded import PROJECT_DIR, start_embedded
from games.db.migrate import migrate


@pytest.fixture(scope="session")
def pg_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    pgdata = PROJECT_DIR / ".casino" / "test-pg"
    if pgdata.exists():
        shutil.rmtree(pgdata, ignore_errors=True)
    return start_embedded(pgdata)


@pytest.fixture
async def fresh_db(pg_url: str):
    """A new, migrated database per test: an URL to it. Dropped afterwards."""
    admin = await asyncpg.connect(pg_url)
    name = f"t_{os.getpid()}_{id(admin)}"
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = _with_database(pg_url, name)
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    try:
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def _with_database(url: str, name: str) -> str:
    # postgresql://user:pw@host/db?query  ->  replace db
    head, sep, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}{sep}{query}"
