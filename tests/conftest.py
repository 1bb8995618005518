"""Shared fixtures. Database tests run against a real PostgreSQL: the one in
``DATABASE_URL`` if set (it must be a throwaway database), else an embedded one
under ``.casino/test-runs/<pid>``: its own per run (so two runs never share one), removed
at the end, and left-overs of runs that died are removed at the next start."""

from __future__ import annotations

import os
import shutil
import signal
import time

import asyncpg
import pytest

from games.db.embedded import PROJECT_DIR, start_embedded, stop_embedded
from games.db.migrate import migrate
from games.db.pool import create_pool
from helpers.databases import new_database
from server.store import SCHEMA


@pytest.fixture(scope="session")
def pg_url():
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    root = PROJECT_DIR / ".casino" / "test-runs"
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        if old.name.isdigit() and not _alive(int(old.name)):
            _stop_and_remove(old)
    pgdata = root / str(os.getpid())
    url = start_embedded(pgdata)
    yield url
    stop_embedded(pgdata)
    _stop_and_remove(pgdata)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_and_remove(pgdata) -> None:
    # A postmaster may still run on it (a killed run): stop it before removing its files.
    pid_file = pgdata / "postmaster.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGQUIT)
            time.sleep(0.5)
        except (ValueError, ProcessLookupError, PermissionError):
            pass
    shutil.rmtree(pgdata, ignore_errors=True)


@pytest.fixture
def schema_packages() -> tuple[str, ...]:
    """The packages whose migrations ``fresh_db`` applies: all of them, unless a folder's
    conftest narrows it (the ledger's tests need no server table)."""
    return SCHEMA


@pytest.fixture
async def fresh_db(pg_url: str, schema_packages: tuple[str, ...]):
    """A new database per test, migrated for ``schema_packages``: an URL to it. Dropped afterwards."""
    async with new_database(pg_url, "t") as url:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn, schema_packages)
        finally:
            await conn.close()
        yield url


@pytest.fixture
async def pool(fresh_db: str):
    """A pool on ``fresh_db`` (room for the ledger's concurrency tests)."""
    p = await create_pool(fresh_db, min_size=1, max_size=20)
    try:
        yield p
    finally:
        await p.close()

