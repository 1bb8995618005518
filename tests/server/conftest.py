"""End-to-end fixtures: a real server process (``casino serve``) on a free port, on its own
fresh PostgreSQL database, driven over real HTTP and websockets with ``server.client``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess

import pytest

from helpers.browser import browser, open_page  # noqa: F401  (the page tests' fixtures: a real Chromium)
from helpers.databases import new_database
from loadtest.server_process import free_port, spawn_server

ADMIN_PASSWORD = "admin-pass-123"
PASSWORD = "secret-pass-1"
CASHIER = "t-cashier"
JWT_SECRET = "test-secret-" + "x" * 40



async def first_refusal(client, raw: str | bytes) -> dict:
    """Send a raw frame; the ``error`` or ``rejected`` that came back for it."""
    n = len(client.frames)
    await client.send_raw(raw)
    for _ in range(500):
        for f in client.frames[n:]:
            if f["type"] in ("error", "rejected"):
                return f
        await asyncio.sleep(0.02)
    raise AssertionError("no answer")


class ServerProcess:
    """``casino serve`` as a subprocess; ``kill()`` is a kill -9, ``start()`` again resumes."""

    def __init__(self, db_url: str, tmp_path, **env: str) -> None:
        self.db_url = db_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"server-{self.port}.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": db_url,
            "CASINO_JWT_SECRET": JWT_SECRET,
            "CASINO_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "CASINO_HEARTBEAT_SECONDS": "2",
            "CASINO_BETTING_SECONDS": "1",
            "CASINO_PAUSE_SECONDS": "0.5",
            "CASINO_DECISION_SECONDS": "1",
            **env,
        }
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = spawn_server(self.port, self.env, self.log_path, append=True)

    def __enter__(self) -> ServerProcess:  # a fixture's server: started, stopped at the end
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""


@pytest.fixture(scope="module")
async def db_url(pg_url: str):
    """A fresh database per test module (the server migrates it at start)."""
    async with new_database(pg_url, "srv") as url:
        yield url


@contextlib.contextmanager
def redis_of_its_own(folder):
    """A redis-server in ``folder``, stopped at the end: (folder, url)."""
    from server.redis_embedded import _shutdown, start_redis

    url = start_redis(folder)
    try:
        yield folder, url
    finally:
        _shutdown(folder)


@pytest.fixture
def own_redis(tmp_path_factory):
    """A redis-server of the test's own (the test may stop and start it): (folder, url)."""
    with redis_of_its_own(tmp_path_factory.mktemp("redis")) as it:
        yield it


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("server"))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


class Floor:
    """Admin-side set-up through the real HTTP API: accounts, chips, tables, staff."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self._cashier = False

    async def admin(self):
        from server.client import CasinoClient

        c = CasinoClient(self.server.url)
        await c.login("admin", ADMIN_PASSWORD)
        return c

    async def cashier(self):
        """A logged-in cashier (the only role that moves chips in or out of a wallet)."""
        from server.client import CasinoClient

        if not self._cashier:
            admin = await self.admin()
            try:
                await admin.request("POST", "/accounts", json={"user": CASHIER, "password": PASSWORD,
                                                               "role": "cashier"})
            except Exception as exc:  # created by an earlier Floor on the same server
                if getattr(exc, "code", "") != "user_exists":
                    raise
            finally:
                await admin.close()
            self._cashier = True
        c = CasinoClient(self.server.url)
        await c.login(CASHIER, PASSWORD)
        return c

    async def account(self, user: str, role: str = "player", chips: int = 0, currency: str = "CHF"):
        """A logged-in client for a new account (players get ``chips`` at the cashier)."""
        from server.client import CasinoClient

        admin = await self.admin()
        try:
            await admin.request("POST", "/accounts", json={"user": user, "password": PASSWORD, "role": role,
                                                           "currency": currency})
        finally:
            await admin.close()
        if chips:
            cashier = await self.cashier()
            try:
                await cashier.request("POST", "/cashier/deposit", json={"user": user, "amount": chips,
                                                                        "id": f"dep-{user}"})
            finally:
                await cashier.close()
        c = CasinoClient(self.server.url)
        await c.login(user, PASSWORD)
        return c

    async def table(self, game: str, profile: str, table_id: str, mode: str = "live",
                    staff: tuple[str, ...] = (), **settings):
        admin = await self.admin()
        try:
            out = await admin.request("POST", "/tables", json={"game": game, "profile": profile, "mode": mode,
                                                               "id": table_id, "settings": settings})
            for user in staff:
                await admin.request("POST", f"/tables/{table_id}/staff", json={"user": user})
        finally:
            await admin.close()
        return out

    async def ledger_problems(self) -> list:
        """The plain ledger check on the server's database: every pending hold must be a
        wager some table's committed state still has in play (view ledger_open_refs)."""
        from games.db import create_pool
        from games.ledger import Ledger

        pool = await create_pool(self.server.db_url, min_size=1, max_size=2)
        try:
            report = await Ledger(pool).check_report()
            assert report.rounds_checked
            return report.problems
        finally:
            await pool.close()


@pytest.fixture(scope="module")
def floor(server) -> Floor:
    return Floor(server)


async def until(check, seconds: float = 20.0):
    """Poll ``check()`` until it returns something truthy (or the deadline passes): what it
    returned last."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        got = await check()
        if got or asyncio.get_running_loop().time() > deadline:
            return got
        await asyncio.sleep(0.1)


def owner_id(server: ServerProcess) -> str:
    """The name ``server`` serves under (``casino serve``'s default: host and port)."""
    return f"{socket.gethostname()}:{server.port}"


async def table_owners(server: ServerProcess) -> dict[str, str]:
    """Which process serves each table, as ``server`` says (GET /tables)."""
    admin = await Floor(server).admin()
    try:
        return {t["id"]: t["owner"] for t in await admin.tables()}
    finally:
        await admin.close()
