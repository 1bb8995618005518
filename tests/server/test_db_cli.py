"""The embedded PostgreSQL's life: ``casino serve`` stops it on SIGTERM as on SIGINT (no
postgres left, no stale pid in pgserver's handle list), and ``casino db start|status|stop``
manage it on their own; ``casino serve --no-migrate`` leaves the schema to ``casino db
migrate``. Real processes, a real PostgreSQL in a fresh data dir."""

from __future__ import annotations

import asyncio
import json
import signal

import asyncpg
import psutil
import pytest

from games.db import embedded
from helpers.databases import new_database
from helpers.servers import Serve, casino, embedded_env, fresh_pgdata, remove_pgdata

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pgdata():
    path = fresh_pgdata("db-cli")
    yield path
    remove_pgdata(path)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # exited, not yet reaped
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_server_stops_its_embedded_postgres(pgdata, tmp_path, sig):
    server = Serve(embedded_env(pgdata), tmp_path).start()
    running = embedded.status(pgdata)
    assert running.running and running.users == [server.proc.pid] and not running.kept
    assert server.stop(sig) == 0
    assert _gone(running.pid)
    after = embedded.status(pgdata)
    assert (after.running, after.users, after.stale) == (False, [], [])
    assert not (pgdata / "postmaster.pid").exists()
    assert json.loads((pgdata / embedded.HANDLES).read_text()) == []
    assert "stopped" in server.stderr().splitlines()[-1]


def test_db_start_status_stop(pgdata, tmp_path):
    env = embedded_env(pgdata)
    stopped = casino("db", "status", env=env)
    assert stopped.returncode == 3 and "not running" in stopped.stdout and str(pgdata) in stopped.stdout

    started = casino("db", "start", env=env)
    assert started.returncode == 0, started.stderr
    assert "started" in started.stdout and "initdb" not in started.stdout + started.stderr
    st = json.loads(casino("db", "status", "--json", env=env).stdout)
    assert (st["state"], st["running"], st["kept"], st["users"], st["data_dir"]) == \
        ("running", True, True, [], str(pgdata))
    assert st["url"].endswith(f"?host={pgdata}") and psutil.pid_exists(st["pid"])

    # A server joins it and, when it stops, leaves it running: `db start` keeps it.
    server = Serve(env, tmp_path).start()
    refused = casino("db", "stop", env=env)
    assert refused.returncode == 1 and f"in use by process {server.proc.pid}" in refused.stderr
    assert server.stop(signal.SIGTERM) == 0
    st = json.loads(casino("db", "status", "--json", env=env).stdout)
    assert (st["running"], st["kept"], st["users"], st["stale"]) == (True, True, [], [])

    again = casino("db", "start", env=env)
    assert again.returncode == 0 and "already running" in again.stdout

    done = casino("db", "stop", env=env)
    assert done.returncode == 0 and "stopped" in done.stdout
    assert _gone(st["pid"])
    assert casino("db", "status", env=env).returncode == 3
    assert json.loads((pgdata / embedded.HANDLES).read_text()) == []
    nothing = casino("db", "stop", env=env)
    assert nothing.returncode == 0 and "not running" in nothing.stdout


def test_with_database_url_the_embedded_server_is_left_alone(pgdata):
    env = {**embedded_env(pgdata), "DATABASE_URL": "postgresql://casino:s3cret@db.example:5432/casino"}
    st = casino("db", "status", env=env)
    assert st.returncode == 0
    assert "external PostgreSQL (DATABASE_URL): postgresql://casino:***@db.example:5432/casino" in st.stdout
    assert "s3cret" not in st.stdout
    for what in ("start", "stop"):
        out = casino("db", what, env=env)
        assert out.returncode == 1 and "DATABASE_URL is set" in out.stderr and "s3cret" not in out.stderr
    assert not embedded.status(pgdata).running


async def test_serve_no_migrate_waits_for_db_migrate(pgdata, pg_url, tmp_path):
    """With ``--no-migrate`` the server changes no schema: on a database that is behind it
    refuses to start and says what to run; once ``casino db migrate`` ran, it starts."""
    async with new_database(pg_url, "nomigrate") as url:
        env = embedded_env(pgdata, DATABASE_URL=url)
        refused = await asyncio.to_thread(casino, "serve", "--no-migrate", "--port", "0", env=env)
        assert refused.returncode == 1
        assert "schema is behind" in refused.stderr and "run `casino db migrate`" in refused.stderr
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0
        finally:
            await conn.close()

        migrated = await asyncio.to_thread(casino, "db", "migrate", env=env)
        assert migrated.returncode == 0, migrated.stderr
        assert "applied games.ledger/0001_ledger.sql" in migrated.stdout
        assert "applied server/0100_server.sql" in migrated.stdout

        server = await asyncio.to_thread(Serve(env, tmp_path, "--no-migrate").start)
        assert server.stop() == 0
        assert not embedded.status(pgdata).running  # DATABASE_URL: the embedded one was never used

