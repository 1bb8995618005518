"""Several processes on one database (issue 12): a change made through any process reaches
the table's owner at once, a graceful stop hands the tables to another process at once
(not a lease later), and after a kill -9 /health/ready names the tables nobody serves
until their lease runs out, while /health/live still answers."""

from __future__ import annotations

import socket

import httpx
import pytest

from server.client import Rejected

from .conftest import Floor, ServerProcess, until

pytestmark = pytest.mark.slow


async def _ready(server: ServerProcess) -> tuple[int, dict]:
    async with httpx.AsyncClient() as http:
        r = await http.get(f"{server.url}/health/ready")
    return r.status_code, r.json()


async def test_staff_changes_reach_the_owner_and_a_graceful_stop_hands_over_at_once(db_url, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("handover")
    # A lease far longer than the test: only the hand-over can explain a quick take-over.
    a = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="120")
    b = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="120")
    a.start()
    b.start()
    try:
        floor_a, floor_b = Floor(a), Floor(b)
        await floor_a.table("roulette", "campione", "ho-roul")  # a owns it: created there
        croupier = await floor_a.account("ho-croupier", "croupier")
        await croupier.connect()
        await croupier.subscribe("ho-roul")
        with pytest.raises(Rejected) as r:
            await croupier.play("ho-roul", {"type": "open_spin"})
        assert r.value.code == "not_your_table"
        # The director assigns him through b; a, the owner, hears of it at once.
        admin_b = await floor_b.admin()
        try:
            await admin_b.request("POST", "/tables/ho-roul/staff", json={"user": "ho-croupier"})
        finally:
            await admin_b.close()

        async def plays():
            try:
                return await croupier.play("ho-roul", {"type": "open_spin"})
            except Rejected as exc:
                assert exc.code == "not_your_table"
                return None

        assert await until(plays, 5)
        status, body = await _ready(b)
        assert status == 200 and body["elsewhere"] == {"ho-roul": f"{socket.gethostname()}:{a.port}"}
        await croupier.close()
        a.stop()  # SIGTERM: a graceful stop

        async def b_serves():
            status, body = await _ready(b)
            return status == 200 and "ho-roul" in body["serving"]

        assert await until(b_serves, 10)
    finally:
        a.stop()
        b.stop()


async def test_after_a_kill_ready_names_the_tables_nobody_serves(db_url, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ready")
    a = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="6")
    b = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="6")
    a.start()
    try:
        await Floor(a).table("roulette", "campione", "rd-roul")
        b.start()
        status, body = await _ready(b)
        assert status == 200 and "rd-roul" in body["elsewhere"]
        a.kill()

        async def waiting():
            status, body = await _ready(b)
            return body if status == 503 else None

        body = await until(waiting, 10)  # once a has missed its heartbeats
        assert body and [w["table"] for w in body["waiting"] if w["table"] == "rd-roul"] == ["rd-roul"]
        assert body["ready"] is False
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{b.url}/health/live")).status_code == 200

        async def served():
            status, body = await _ready(b)
            return status == 200 and "rd-roul" in body["serving"]

        assert await until(served, 15)  # the lease ran out: b took it over
    finally:
        a.stop()
        b.stop()
