"""The bench's past (``loadtest.history``): the rows a floor's past bets leave, written in
bulk, pass the ledger's own constraints and check, with each wallet and bank where the bets
put them (worked by hand). On a real PostgreSQL."""

from __future__ import annotations

import pytest

from games.ledger import Ledger, accounts
from loadtest import history

SEATS = [("ann", "r1"), ("bob", "r2"), ("cy", "r1"), ("dee", "r2")]
BETS = 250  # chunks of 100, 100 and 50; seat k places bets k, k + 4, ...: 63, 63, 62, 62


@pytest.fixture
async def floor(pool):
    ledger = Ledger(pool)
    async with pool.acquire() as conn:
        for t in ("r1", "r2"):
            await conn.execute("INSERT INTO casino_tables (id, game, profile, mode, currency, name, created_by)"
                               " VALUES ($1, 'roulette', 'campione', 'live', 'CHF', $1, 'test')", t)
            await ledger.open_account(accounts.bank(t, "CHF"))
    for p, _ in SEATS:
        await ledger.deposit(p, "CHF", 10_000, f"dep-{p}")
    return ledger


async def test_a_past_that_the_ledger_accepts(floor, fresh_db, pool):
    out = await history.fill(fresh_db, SEATS, BETS, chunk=100)
    assert out["bets"] == BETS and out["database_bytes"] > 0

    assert await floor.check() == []
    # each brought what his bets lost: his chips are the floor's again, his deposit and losses apart
    for p, bets in (("ann", 63), ("bob", 63), ("cy", 62), ("dee", 62)):
        b = await floor.balance(accounts.wallet(p, "CHF"))
        assert (b.posted, b.pending) == (10_000, 0), p
        async with pool.acquire() as conn:
            deposit = await conn.fetchval("SELECT amount FROM ledger_transfers WHERE id = $1", f"hist-dep-{p}")
        assert deposit == bets * 500, p
    assert (await floor.balance(accounts.bank("r1", "CHF"))).posted == (63 + 62) * 500
    assert (await floor.balance(accounts.bank("r2", "CHF"))).posted == (63 + 62) * 500

    async with pool.acquire() as conn:
        ops = dict(await conn.fetch("SELECT op, count(*) FROM ledger_transfers GROUP BY op"))
        assert ops == {"hold": BETS, "post": BETS, "transfer": 4 + 4}  # the floor's deposits, the past's
        # before the live table's (from 1), counting up with the bets: the last (249, bob's at r2) ends at -1
        for t, last in (("r1", -3), ("r2", -1)):
            rows = await conn.fetch("SELECT seq FROM table_events WHERE table_id = $1 ORDER BY seq", t)
            seqs = [r["seq"] for r in rows]
            assert len(seqs) == 2 * 125 and seqs[-1] == last and len(set(seqs)) == len(seqs), t
        assert await conn.fetchval("SELECT min(n) FROM table_commands") == -BETS
        # a bet's ledger ref is its table and the wager its events name, as a live bet's
        assert await conn.fetchval(
            """SELECT count(*) FROM table_events e JOIN ledger_transfers h
                 ON h.id = e.table_id || '/' || (e.payload ->> 'wager') || '/hold'
               WHERE e.kind = 'wager_placed'""") == BETS
        assert await conn.fetchval("SELECT count(*) FROM table_commands WHERE n < 0") == BETS
        assert await conn.fetchval("SELECT count(*) FROM command_results") == BETS
        # rounds of 2,000 bets: one round, each player in it at his table
        assert sorted(map(tuple, await conn.fetch("SELECT table_id, round, user_id FROM round_players"))) == [
            ("r1", "hist-0", "ann"), ("r1", "hist-0", "cy"), ("r2", "hist-0", "bob"), ("r2", "hist-0", "dee")]
