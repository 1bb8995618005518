"""Two server processes on one database: each table has exactly one owner, chosen through
a lease row; when the owner dies (kill -9) the other process takes its tables over once the
lease has run out, resumes them from the committed state, and play goes on there."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow


async def test_failover_to_a_second_process(db_url, tmp_path_factory):
    """Two processes on one database: each table has one owner (a lease row); when the owner
    dies, the other takes the table over once the lease has run out and resumes it."""
    tmp = tmp_path_factory.mktemp("failover")
    a = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="2")
    b = ServerProcess(db_url, tmp, CASINO_LEASE_SECONDS="2")
    a.start()
    try:
        floor_a, floor_b = Floor(a), Floor(b)
        croupier = await floor_a.account("fo-croupier", "croupier")
        olga = await floor_a.account("olga", chips=10_000)
        await floor_a.table("roulette", "campione", "fo-roul", staff=("fo-croupier",))
        await croupier.connect()
        await croupier.subscribe("fo-roul")
        await croupier.play("fo-roul", {"type": "open_spin"})
        await olga.connect()
        await olga.subscribe("fo-roul")
        await olga.bet("fo-roul", "noir", 2_000)
        b.start()
        admin_b = await floor_b.admin()
        try:
            [table] = [t for t in await admin_b.tables() if t["id"] == "fo-roul"]
            assert table["running"] is False  # a owns it
            a.kill()
            for _ in range(300):  # b's lease loop takes it within a few seconds
                [table] = [t for t in await admin_b.tables() if t["id"] == "fo-roul"]
                if table["running"]:
                    break
                await asyncio.sleep(0.1)
            assert table["running"] is True
        finally:
            await admin_b.close()
        for c in (croupier, olga):
            await c.move_to(b.url)
        await olga.next_event("fo-roul", "table_resumed")
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 4, "source": "croupier"}):  # 4 is black
            await croupier.play("fo-roul", step)
        await olga.next_event("fo-roul", "spin_settled")
        assert (await olga.balance())["available"] == 12_000
        for c in (croupier, olga):
            await c.close()
        assert await floor_b.ledger_problems() == []
    finally:
        a.stop()
        b.stop()
