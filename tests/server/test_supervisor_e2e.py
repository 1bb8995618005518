"""``casino serve --workers 2`` as a real process tree: a supervisor, two workers accepting on
one port, the embedded Redis it starts, the test's own PostgreSQL database. A worker killed
with -9 is started again in its slot; SIGTERM stops every worker gracefully, then the Redis."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from games.db.pids import alive
from games.db.pool import OUTSIDE_POOL, connection_limits, pool_share
from helpers.servers import Supervised
from server import redis_embedded

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed (apt-get install redis-server; ./dev does)"),
]

@pytest.fixture(scope="module")
def supervised(db_url: str, tmp_path_factory):
    # A short folder: a unix socket's path has at most 107 bytes.
    redis_dir = Path(tempfile.mkdtemp(prefix="casino-redis-")) / "r"
    sup = Supervised(db_url, tmp_path_factory.mktemp("supervisor"), redis_dir)
    try:
        sup.start()
        yield sup
    finally:
        sup.clean_up()


def _connections(db_url: str) -> tuple[int, int, dict[str, int]]:
    """max_connections, the connections reserved, and the casino's open connections by
    application_name."""
    async def fetch() -> tuple[int, int, dict[str, int]]:
        conn = await asyncpg.connect(db_url)
        try:
            limit, reserved = await connection_limits(conn)
            rows = await conn.fetch("SELECT application_name, count(*) AS n FROM pg_stat_activity "
                                    "WHERE datname = current_database() AND application_name LIKE 'casino %' "
                                    "GROUP BY 1")
            return limit, reserved, {r["application_name"]: r["n"] for r in rows}
        finally:
            await conn.close()

    return asyncio.run(fetch())


def _owners(db_url: str) -> set[str]:
    """The processes beating in casino_processes."""
    async def fetch() -> set[str]:
        conn = await asyncpg.connect(db_url)
        try:
            return {r["owner"] for r in await conn.fetch("SELECT owner FROM casino_processes")}
        finally:
            await conn.close()

    return asyncio.run(fetch())


def test_two_workers_on_one_port_a_crash_restarted_all_stopped(supervised: Supervised, db_url: str) -> None:
    sup = supervised
    host = socket.gethostname()
    owners = {f"{host}:{sup.port}/0", f"{host}:{sup.port}/1"}
    for owner in sorted(owners):
        sup.wait_for(f"worker {owner} ready")
    assert f"2 workers on http://127.0.0.1:{sup.port} (database: " in sup.log()
    assert f"broker: embedded Redis on unix://{sup.redis_dir}/redis.sock)" in sup.log()
    assert _owners(db_url) == owners  # both beat in casino_processes, each in its slot
    # Each worker's pool is its share of the database's connections, and its connections say
    # whose they are.
    limit, reserved, held = _connections(db_url)
    share = pool_share(limit, reserved, 2)
    assert f"database pool: {share} connections per worker (max_connections {limit})" in sup.log()
    assert set(held) == {f"casino {owner}" for owner in owners}
    assert all(1 <= n <= share + OUTSIDE_POOL for n in held.values()), held  # (its LISTEN connection too)
    pids = [pid for (pid,) in sup.workers().values()]
    with httpx.Client(base_url=sup.url) as http:
        for _ in range(6):  # the kernel spreads the connections; any worker answers for both
            assert http.get("/health", headers={"Connection": "close"}).status_code == 200
            scrape = http.get("/metrics", headers={"Connection": "close"}).text.splitlines()
            for pid in pids:
                assert f'casino_db_pool_max{{pid="{pid}"}} {share}.0' in scrape
        assert http.get("/health/ready").status_code == 200
    redis = redis_embedded.status(sup.redis_dir)
    assert redis.running and redis.pid and redis.users == [sup.proc.pid]

    # kill -9 one worker: the supervisor says so and starts it again in its slot (same owner).
    (first,) = sup.workers()[1]
    os.kill(first, signal.SIGKILL)
    sup.wait_for(f"worker 1 (pid {first}) was killed by SIGKILL; restarting it in")
    deadline = time.monotonic() + 30
    while len(sup.workers()[1]) < 2:
        assert time.monotonic() < deadline, sup.log()[-3000:]
        time.sleep(0.05)
    again = sup.workers()[1][1]
    sup.wait_for(f"worker {host}:{sup.port}/1 ready (pid {again})")
    assert httpx.get(f"{sup.url}/health").status_code == 200
    assert _owners(db_url) == owners

    # SIGTERM: every worker stops gracefully (each says so and leaves casino_processes), then
    # the embedded Redis it started stops.
    sup.proc.send_signal(signal.SIGTERM)
    assert sup.proc.wait(40) == 0, sup.log()[-3000:]
    log = sup.log()
    assert "killed:" not in log  # none had to be killed
    for owner in owners:
        assert f"worker {owner} stopped" in log
    assert log.rstrip().endswith("INFO casino: stopped")  # the supervisor, last
    for pids in sup.workers().values():
        for pid in pids:
            assert not alive(pid)
    assert not alive(redis.pid)
    assert not redis_embedded.status(sup.redis_dir).running
    assert not (sup.redis_dir / "redis.sock").exists()
    assert _owners(db_url) == set()


OWN = re.compile(r"worker (\d+) takes its players' websockets at ws://127\.0\.0\.1:(\d+)/ws")


def _ws_urls(db_url: str) -> dict[str, str | None]:
    """Where each process beating in casino_processes takes websockets."""
    async def fetch() -> dict[str, str | None]:
        conn = await asyncpg.connect(db_url)
        try:
            return {r["owner"]: r["ws_url"] for r in await conn.fetch("SELECT owner, ws_url FROM casino_processes")}
        finally:
            await conn.close()

    return asyncio.run(fetch())


def test_each_worker_has_a_port_of_its_own_kept_across_its_restarts(db_url: str, tmp_path_factory) -> None:
    """--worker-ports 0 (CASINO_WORKER_PORTS): each worker also serves a port of its own, which
    it names as its websocket URL (the lobby places a table's players there, at its owner);
    the supervisor binds it once, so a worker started again in its slot answers there again."""
    redis_dir = Path(tempfile.mkdtemp(prefix="casino-redis-")) / "r"
    sup = Supervised(db_url, tmp_path_factory.mktemp("own-ports"), redis_dir)
    sup.env["CASINO_WORKER_PORTS"] = "0"
    try:
        sup.start()
        host = socket.gethostname()
        for slot in (0, 1):
            sup.wait_for(f"worker {host}:{sup.port}/{slot} ready")
        own = {int(slot): int(port) for slot, port in OWN.findall(sup.log())}
        assert sorted(own) == [0, 1] and len(set(own.values()) | {sup.port}) == 3
        assert _ws_urls(db_url) == {f"{host}:{sup.port}/{slot}": f"ws://127.0.0.1:{port}/ws"
                                    for slot, port in own.items()}
        for port in own.values():  # each its own worker's: a scrape there is that worker's
            assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
            assert "casino_commands_forwarded_total 0.0" in httpx.get(f"http://127.0.0.1:{port}/metrics").text

        (first,) = sup.workers()[1]
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while len(sup.workers().get(1, [])) < 2:
            assert time.monotonic() < deadline, sup.log()[-3000:]
            time.sleep(0.05)
        sup.wait_for(f"worker {host}:{sup.port}/1 ready (pid {sup.workers()[1][1]})")
        assert httpx.get(f"http://127.0.0.1:{own[1]}/health").status_code == 200
        assert _ws_urls(db_url)[f"{host}:{sup.port}/1"] == f"ws://127.0.0.1:{own[1]}/ws"
        sup.proc.send_signal(signal.SIGTERM)
        assert sup.proc.wait(40) == 0, sup.log()[-3000:]
    finally:
        sup.clean_up()
