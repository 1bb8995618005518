"""A casino server for a load run: its own fresh database, a subprocess on 127.0.0.1.

Without a database URL the embedded PostgreSQL is started with its data in
``.casino/loadtest-pg/`` (apart from ``./dev serve``'s floor and the tests' server); either
way the run gets a database of its own, dropped again when the server stops.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx

from games.db.embedded import PROJECT_DIR, start_embedded, with_database

ADMIN_PASSWORD = "loadtest-admin-pass"
JWT_SECRET = "loadtest-secret-" + "l" * 40
LOADTEST_PGDATA = PROJECT_DIR / ".casino" / "loadtest-pg"
PLACEMENT_SECONDS = 2  # per worker of a `--workers N` server, for its tables to spread over them
# Short clocks so RNG tables turn over within a short run (seconds).
FAST_CLOCKS = {
    "CASINO_BETTING_SECONDS": "3",
    "CASINO_PAUSE_SECONDS": "1",
    "CASINO_DECISION_SECONDS": "3",
    "CASINO_HEARTBEAT_SECONDS": "5",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def spawn_server(port: int, env: dict[str, str], log_path: Path, *, append: bool = False,
                 workers: int = 1) -> subprocess.Popen:
    """Start ``casino serve`` on 127.0.0.1:``port`` with ``env`` (``workers`` processes) and
    wait until ``/health`` answers (60 s at most); its output goes to ``log_path``."""
    with open(log_path, "ab" if append else "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--no-demo", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", os.environ.get("CASINO_TEST_LOG_LEVEL", "warning"),
             *(["--workers", str(workers)] if workers > 1 else [])],
            cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    return wait_healthy(proc, f"http://127.0.0.1:{port}", lambda: log_path.read_text(errors="replace"), 60)


def wait_healthy(proc: subprocess.Popen, url: str, log: Callable[[], str], seconds: float) -> subprocess.Popen:
    """Until the server at ``url`` answers ``/health`` (killed, and an error with the end of
    its ``log``, if it exits or takes longer than ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {log()[-3000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the server did not start within {seconds:.0f} s")


class LoadServer:
    """``with LoadServer() as srv:`` -> ``srv.url`` serves until the block ends."""

    def __init__(self, database_url: str | None = None, *, port: int | None = None,
                 env: dict[str, str] | None = None, log_path: Path | None = None, workers: int = 1) -> None:
        self.base_url = database_url
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra_env = env or {}
        self.workers = workers  # > 1: ``casino serve --workers N`` (processes sharing the port, Redis)
        self.log_path = log_path or PROJECT_DIR / ".casino" / f"loadtest-server-{self.port}.log"
        self.db_name = f"load_{uuid.uuid4().hex[:10]}"
        self.db_url = ""
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> LoadServer:
        base = self.base_url or os.environ.get("DATABASE_URL") or start_embedded(LOADTEST_PGDATA)
        self.base_url = base
        asyncio.run(self._admin(f'CREATE DATABASE "{self.db_name}"'))
        self.db_url = with_database(base, self.db_name)
        try:
            self.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        if self.workers > 1:  # the tables spread over the workers (placement) before any clock starts
            time.sleep(PLACEMENT_SECONDS * self.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        asyncio.run(self._admin(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)'))

    async def _admin(self, sql: str) -> None:
        conn = await asyncpg.connect(self.base_url)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    def start(self) -> None:
        env = {**os.environ, **FAST_CLOCKS, "DATABASE_URL": self.db_url, "CASINO_JWT_SECRET": JWT_SECRET,
               "CASINO_ADMIN_PASSWORD": ADMIN_PASSWORD, "CASINO_ECHO_ENDPOINT": "1", **self.extra_env}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.proc = spawn_server(self.port, env, self.log_path, workers=self.workers)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


async def ledger_problems(db_url: str) -> list:
    """The ledger check of a load-test database (empty: all is well)."""
    from games.db import create_pool
    from games.ledger import Ledger

    pool = await create_pool(db_url, min_size=1, max_size=2)
    try:
        return await Ledger(pool).check()
    finally:
        await pool.close()


async def analyze(db_url: str) -> None:
    """``ANALYZE`` the load-test database: what autovacuum does on a floor that has run a
    while. A fresh database's plans (the server's statements and its foreign-key checks)
    are made while its tables are nearly empty and kept as they grow, until the next
    ANALYZE; a bench of seconds on one measures those plans, not the floor's."""
    import asyncpg

    conn = await asyncpg.connect(db_url)
    try:
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


def mint_token(user: str, role: str = "player") -> str:
    """The token the server's /auth/login would give (same secret, same claims)."""
    from litestar.security.jwt import Token

    exp = datetime.now(UTC) + timedelta(hours=2)
    return Token(sub=user, exp=exp, extras={"role": role}).encode(JWT_SECRET, "HS256")
