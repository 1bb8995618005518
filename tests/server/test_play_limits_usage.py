"""What a player has staked and lost (``server.play_limits``), read from his wallet in the
ledger on a real PostgreSQL: his bets, and his tournament entries paid from the wallet.

Worked by hand, ana's EUR wallet (minor units):
- cup1: buy-in 10,000 + fee 2,000; she wins its 30,000 prize;
- cup2: buy-in 5,000 + fee 2,000, refunded whole (the tournament was cancelled);
- cup3: buy-in 5,000 + fee 2,000, still being played;
- rouge for 1,000, still in play; noir for 500, lost (posted); pair for 400, won 400 (the
  stake back and 400).
Staked: 12,000 + 0 + 7,000 + 1,000 + 500 + 400 = 20,900.
Lost: (12,000 - 30,000) + 0 + 7,000 + 1,000 (in play counts whole) + 500 + (0 - 400) = -9,900."""

from __future__ import annotations

from games.ledger import Hold, Ledger, Post, Transfer, Void, accounts
from server import play_limits

EUR = "EUR"


async def test_bets_and_tournament_entries_count_in_every_window(pool):
    ledger = Ledger(pool)
    wallet, fees, bank = accounts.wallet("lu-ana", EUR), accounts.fees(EUR), accounts.bank("lu-r1", EUR)
    await ledger.deposit("lu-ana", EUR, 100_000, "lu-dep")
    for account in (fees, bank, *(accounts.prize_pool(t, EUR) for t in ("cup1", "cup2", "cup3"))):
        await ledger.open_account(account)
    ops = []
    for cup, buy_in in (("cup1", 10_000), ("cup2", 5_000), ("cup3", 5_000)):
        prize_pool = accounts.prize_pool(cup, EUR)
        ops += [Transfer(f"{cup}/entry/lu-ana/buy-in", wallet, prize_pool, buy_in, "tournament_buy_in", "wallet"),
                Transfer(f"{cup}/entry/lu-ana/fee", wallet, fees, 2_000, "tournament_fee", "wallet")]
    await ledger.deposit("lu-house", EUR, 30_000, "lu-dep-house")  # (the pool's prize, from other entries)
    ops += [Transfer("lu-seed", accounts.wallet("lu-house", EUR), accounts.prize_pool("cup1", EUR), 30_000, "transfer"),
            Transfer("cup1/prize/1", accounts.prize_pool("cup1", EUR), wallet, 30_000, "tournament_prize", "lu-ana"),
            Transfer("cup2/refund/lu-ana/buy-in", accounts.prize_pool("cup2", EUR), wallet, 5_000,
                     "tournament_refund", "cancelled"),
            Transfer("cup2/refund/lu-ana/fee", fees, wallet, 2_000, "tournament_refund")]
    ops += [Hold("lu-r1/w1/hold", wallet, bank, 1_000, "bet", "lu-r1/w1"),
            Hold("lu-r1/w2/hold", wallet, bank, 500, "bet", "lu-r1/w2"),
            Post("lu-r1/w2/post", "lu-r1/w2/hold", 500, "lost"),
            Hold("lu-r1/w3/hold", wallet, bank, 400, "bet", "lu-r1/w3"),
            Void("lu-r1/w3/void", "lu-r1/w3/hold", "returned"),
            Transfer("lu-r1/w3/win", bank, wallet, 400, "win", "lu-r1/w3")]
    await ledger.apply(ops)

    used = {r["period"]: (r["staked"], r["lost"]) for r in await pool.fetch(play_limits._USED, wallet)}
    assert used == dict.fromkeys(("daily", "weekly", "monthly"), (20_900, -9_900))
    # Nothing of anyone else's.
    other = {r["period"]: (r["staked"], r["lost"])
             for r in await pool.fetch(play_limits._USED, accounts.wallet("lu-house", EUR))}
    assert other == dict.fromkeys(("daily", "weekly", "monthly"), (0, 0))


async def test_an_entry_counts_in_the_windows_of_the_day_it_was_paid(pool):
    """Each entry is judged by when it was paid, its refund and prize with it, whenever they
    came (the rows back-dated here, as days of play would leave them; the ledger forbids it
    otherwise). cup1: 10,000 + 2,000 paid two days ago, its 30,000 prize today; cup2: 10,000 +
    2,000 paid ten days ago, the buy-in refunded today, the fee kept; cup3: paid 35 days ago,
    its prize today: outside every window. Daily: nothing. Weekly: cup1, staked 12,000, lost
    12,000 - 30,000 = -18,000. Monthly: and cup2's kept fee, staked 14,000, lost -16,000."""
    ledger = Ledger(pool)
    wallet, fees = accounts.wallet("lw-ana", EUR), accounts.fees(EUR)
    await ledger.deposit("lw-ana", EUR, 100_000, "lw-dep")
    await ledger.open_account(fees)
    ops = []
    for cup in ("lw-cup1", "lw-cup2", "lw-cup3"):
        await ledger.open_account(accounts.prize_pool(cup, EUR))
        ops += [Transfer(f"{cup}/entry/lw-ana/buy-in", wallet, accounts.prize_pool(cup, EUR), 10_000,
                         "tournament_buy_in", "wallet"),
                Transfer(f"{cup}/entry/lw-ana/fee", wallet, fees, 2_000, "tournament_fee", "wallet")]
    await ledger.deposit("lw-house", EUR, 60_000, "lw-dep-house")
    for cup in ("lw-cup1", "lw-cup3"):
        ops += [Transfer(f"{cup}-seed", accounts.wallet("lw-house", EUR), accounts.prize_pool(cup, EUR), 20_000,
                         "transfer"),
                Transfer(f"{cup}/prize/1", accounts.prize_pool(cup, EUR), wallet, 30_000, "tournament_prize", "lw-ana")]
    ops.append(Transfer("lw-cup2/refund/lw-ana/buy-in", accounts.prize_pool("lw-cup2", EUR), wallet, 10_000,
                        "tournament_refund", "cancelled"))
    await ledger.apply(ops)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")  # (past the immutability trigger)
        for cup, days in (("lw-cup1", 2), ("lw-cup2", 10), ("lw-cup3", 35)):
            await conn.execute("UPDATE ledger_transfers SET at = now() - make_interval(days => $2) "
                               "WHERE id LIKE $1 || '/entry/%'", cup, days)

    used = {r["period"]: (r["staked"], r["lost"]) for r in await pool.fetch(play_limits._USED, wallet)}
    assert used == {"daily": (0, 0), "weekly": (12_000, -18_000), "monthly": (14_000, -16_000)}
