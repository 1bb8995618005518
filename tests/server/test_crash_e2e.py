"""kill -9 in the middle of a spin and of a hand, then a restart: every table resumes from
its persisted state, the cut-off round is voided by the rules (roulette: the bets stay on
the layout; blackjack: every stake is returned), no acknowledged bet is lost, nothing is
paid twice, players see the interruption, and the ledger check passes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from games.db.embedded import PROJECT_DIR
from roulette import fair

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crashy(db_url, tmp_path_factory):
    # A betting window long enough to bet in, a spin slow enough to be killed in.
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("crash"), CASINO_BETTING_SECONDS="3",
                        CASINO_PAUSE_SECONDS="1.5", CASINO_DECISION_SECONDS="120")
    srv.start()
    yield srv
    srv.stop()


async def test_kill_mid_spin_then_restart(crashy):
    floor = Floor(crashy)
    await floor.table("roulette", "campione", "crash-roul", mode="rng")
    kim = await floor.account("kim", chips=50_000)
    try:
        await kim.connect()
        await kim.subscribe("crash-roul")
        await kim.next_event("crash-roul", "spin_opened")
        await kim.bet("crash-roul", "plein 17", 1_000)
        await kim.announce("crash-roul", "tiers du cylindre", 500)  # 6 units
        await kim.next_event("crash-roul", "ball_launched")
        crashy.kill()
        assert await kim.closed is not None
        crashy.start()
        await kim.login("kim", "secret-pass-1")
        await kim.reconnect()
        interrupted = await kim.next_event("crash-roul", "table_interrupted")
        assert "settled on its committed number" in interrupted["event"]["outcome"]
        # The ball ran: the spin is settled, exactly once, on the number its seed fixed
        # before any bet (provably fair: the revealed seed gives it and hashes to the commitment).
        result = await kim.next_event("crash-roul", "spin_result")
        assert result["round"] == interrupted["round"]
        revealed = (await kim.next_event("crash-roul", "spin_revealed"))["event"]
        opened = next(f["event"] for f in kim.frames if f.get("type") == "event"
                      and f["event"]["type"] == "spin_opened" and f["round"] == result["round"])
        assert fair.verify(opened["commitment"], revealed["seed"], "crash-roul", revealed["spin"],
                           result["event"]["number"])
        await kim.next_event("crash-roul", "spin_settled", timeout=60)
        settled = [f["event"] for f in kim.frames if f.get("type") == "event"
                   and f["event"]["type"] == "wager_settled"]
        assert len(settled) == 7 and len({s["wager"] for s in settled}) == 7
        net = sum(s["returned"] + s["won"] - s["stake"] for s in settled)
        bal = await kim.balance()
        assert bal["posted"] == 50_000 + net and bal["pending"] == 0
    finally:
        await kim.close()
    assert await floor.ledger_problems() == []


async def test_kill_while_a_spin_takes_bets_refunds_it(crashy):
    """Killed while the spin was open for bets: after the restart its bets come back (their
    players may be gone), the seed it committed to is revealed, and the next spin opens with
    a new commitment."""
    floor = Floor(crashy)
    await floor.table("roulette", "campione", "crash-open", mode="rng")
    una = await floor.account("una", chips=50_000)
    try:
        await una.connect()
        await una.subscribe("crash-open")
        opened = await una.next_event("crash-open", "spin_opened", timeout=30)
        await una.bet("crash-open", "plein 17", 1_000)
        assert (await una.balance())["pending"] == 1_000
        crashy.kill()
        assert await una.closed is not None
        crashy.start()
        await una.login("una", "secret-pass-1")
        await una.reconnect()
        interrupted = await una.next_event("crash-open", "table_interrupted")
        assert "refunded" in interrupted["event"]["outcome"]
        voided = (await una.next_event("crash-open", "wager_voided"))["event"]
        assert (voided["player"], voided["amount"], voided["reason"]) == ("una", 1_000, "refunded")
        refunded = (await una.next_event("crash-open", "spin_refunded"))["event"]
        assert refunded["commitment"] == opened["event"]["commitment"]
        assert fair.commitment(refunded["seed"]) == refunded["commitment"]
        bal = await una.balance()
        assert (bal["posted"], bal["pending"]) == (50_000, 0)  # nothing lost, nothing paid
        nxt = (await una.next_event("crash-open", "spin_opened", timeout=30))["event"]
        assert nxt["spin"] == refunded["spin"] + 1 and nxt["commitment"] != refunded["commitment"]
    finally:
        await una.close()
    assert await floor.ledger_problems() == []


async def test_kill_mid_hand_then_restart(crashy):
    floor = Floor(crashy)
    croupier = await floor.account("crash-croupier", "croupier")
    lea = await floor.account("lea", chips=50_000)
    max_ = await floor.account("max", chips=50_000)
    await floor.table("blackjack", "lugano", "crash-bj", staff=("crash-croupier",))
    try:
        for c in (croupier, lea, max_):
            await c.connect()
            await c.subscribe("crash-bj")
        await croupier.play("crash-bj", {"type": "shuffle"})
        await croupier.play("crash-bj", {"type": "cut", "at": 150})
        await lea.sit("crash-bj", 1)
        await lea.stake("crash-bj", 1, 3_000)
        await max_.stake("crash-bj", 1, 2_000)  # behind lea
        await croupier.play("crash-bj", {"type": "close_bets"})
        for box, card in [(1, 9), (0, 5), (1, 4)]:  # 10S to box 1, 6S to the dealer, 5S to box 1
            await croupier.play("crash-bj", {"type": "card", "box": box, "card": card})
        await lea.act("crash-bj", "double", 1)
        crashy.kill()
        crashy.start()
        for c, user in ((lea, "lea"), (max_, "max")):
            await c.login(user, "secret-pass-1")
            await c.reconnect()
        voided = await max_.next_event("crash-bj", "round_voided")
        assert voided["event"]["boxes"] == []
        for c in (lea, max_):
            bal = await c.balance()
            assert (bal["posted"], bal["pending"]) == (50_000, 0)
        returned = sorted(f["event"]["amount"] for f in lea.frames if f.get("type") == "event"
                          and f["event"]["type"] == "wager_voided")
        assert returned == [2_000, 3_000, 3_000]  # lea's box and double, max's stake behind
        admin = await floor.admin()
        try:  # the operator's view of the same check
            report = await admin.request("GET", "/ledger/check")
        finally:
            await admin.close()
        assert report["problems"] == [] and report["rounds_checked"] is True
    finally:
        for c in (croupier, lea, max_):
            await c.close()
    assert await floor.ledger_problems() == []
    # What an operator types: the plain CLI on the server's database checks the open rounds too.
    out = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "server.cli", "ledger", "check"],
                                  cwd=PROJECT_DIR, env={**os.environ, "DATABASE_URL": crashy.db_url},
                                  capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "pending holds; their rounds are open" in out.stdout

