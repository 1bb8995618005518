"""``casino demo``: the demo floor plays by itself, a Sit&Go included: five bots enter each
demo Sit&Go, which starts itself, is played to its winner and is followed by the next."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from games.db.embedded import PROJECT_DIR
from helpers.databases import new_database
from loadtest.server_process import free_port, wait_healthy
from server.client import CasinoClient, HTTPError

from .conftest import until

pytestmark = pytest.mark.slow


@pytest.fixture
async def demo_db(pg_url: str):
    async with new_database(pg_url, "demo") as url:
        yield url


def _demo(db_url: str, port: int, log: Path) -> subprocess.Popen:
    """``casino demo`` on ``port``, its output in ``log``."""
    env = {**os.environ, "DATABASE_URL": db_url, "CASINO_JWT_SECRET": "demo-test-secret-" + "d" * 40,
           "CASINO_BETTING_SECONDS": "1", "CASINO_DECISION_SECONDS": "1"}
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "server.cli", "demo", "--host", "127.0.0.1", "--port",
                                 str(port), "--log-level", "warning"], cwd=PROJECT_DIR, env=env, stdout=out,
                                stderr=subprocess.STDOUT)


async def test_the_demo_plays_sit_and_gos_by_itself(demo_db, tmp_path):
    port = free_port()
    log = tmp_path / "demo.log"
    proc = _demo(demo_db, port, log)
    url = f"http://127.0.0.1:{port}"
    director = CasinoClient(url)
    try:
        wait_healthy(proc, url, lambda: log.read_text(errors="replace"), 90)
        await director.login("director", "director-pass")

        async def first_finished() -> dict | None:
            if "demo-sng-1" not in {t["id"] for t in await director.request("GET", "/tournaments")}:
                return None
            try:
                view = (await director.request("GET", "/tournaments/demo-sng-1"))["view"]
            except HTTPError:  # just created: its runtime is starting (503 table_unavailable)
                return None
            return view if view["status"] == "finished" else None

        view = await until(first_finished, 120)
        assert view, log.read_text(errors="replace")[-3000:]
        assert [e["player"] for e in view["entrants"]] and len(view["entrants"]) == 5
        assert sum(view["prizes"].values()) == 5 * 1_000  # the winner takes the pool (Appendix 1)

        async def next_one() -> bool:
            return "demo-sng-2" in {t["id"] for t in await director.request("GET", "/tournaments")}

        assert await until(next_one, 30)
    finally:
        await director.close()
        proc.terminate()
        proc.wait(30)
