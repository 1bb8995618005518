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
