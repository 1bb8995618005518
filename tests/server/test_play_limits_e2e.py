"""A player's own stake and loss limits (``server.play_limits``), through the server: checked
where a bet's money leaves his wallet, inside the table's commit; a refused bet changes
nothing and costs nobody else his bet; lowering at once, raising after the cooling period.

Ana's limits: stake CHF 30.00 a day, loss CHF 20.00 a day. By hand:
- spin 1: plein 17 for 10.00 (staked 10, lost 10: a bet in play counts as lost), rouge for
  15.00 would make lost 25 > 20: refused loss_limit, allowed 10.00; rouge for 10.00 makes
  20: accepted; 5.00 more: refused, allowed 0. Bob (no limits) bets meanwhile, untouched.
- 17 (black): plein 17 wins 350.00 (35 x 10, the stake back), rouge loses 10.00: lost =
  10 (rouge kept) + 0 (plein returned) - 350 (won) = -340; staked 20.
- spin 2: 10.00 on noir: staked 30 = the stake limit: accepted; 5.00 more: refused
  stake_limit, allowed 0 (the loss limit does not bind: she is up).
- a raise to 100.00 waits for the cooling period: still refused; once due, accepted."""

from __future__ import annotations

import asyncpg
import pytest

from server.client import Rejected

from .conftest import Floor

pytestmark = pytest.mark.slow


async def _refused(client, table: str, spot: str, amount: int) -> Rejected:
    with pytest.raises(Rejected) as refused:
        await client.bet(table, spot, amount)
    return refused.value


async def _spin(croupier, table: str, number: int) -> None:
    for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                 {"type": "result", "number": number, "source": "croupier"}):
        await croupier.play(table, step)


async def test_stake_and_loss_limits_refuse_the_bet_that_passes_them(server, floor: Floor):
    t = "pl-roul"
    croupier = await floor.account("pl-croupier", "croupier")
    await floor.table("roulette", "campione", t, staff=("pl-croupier",))
    ana = await floor.account("pl-ana", chips=100_000)
    bob = await floor.account("pl-bob", chips=100_000)
    try:
        limits = await ana.request("PUT", "/me/limits", json={"stake": {"daily": 3_000}, "loss": {"daily": 2_000}})
        assert [w["amount"] for w in limits["stake"]] == [3_000, None, None]
        assert [w["amount"] for w in limits["loss"]] == [2_000, None, None]  # new limits: at once
        for c in (croupier, ana, bob):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})

        await ana.bet(t, "plein 17", 1_000)
        refused = await _refused(ana, t, "rouge", 1_500)
        assert refused.code == "loss_limit" and "at most 1000" in refused.message
        await bob.bet(t, "rouge", 50_000)  # another player: untouched
        await ana.bet(t, "rouge", 1_000)
        refused = await _refused(ana, t, "pair", 500)
        assert refused.code == "loss_limit" and "at most 0" in refused.message
        assert (await ana.balance())["pending"] == 2_000  # only what was accepted is held

        await _spin(croupier, t, 17)
        await ana.next_event(t, "spin_settled", timeout=10)
        assert (await ana.balance())["posted"] == 100_000 + 35_000 - 1_000

        await croupier.play(t, {"type": "open_spin"})
        await ana.bet(t, "noir", 1_000)  # staked 30.00: at the stake limit
        refused = await _refused(ana, t, "noir", 500)
        assert refused.code == "stake_limit" and "at most 0" in refused.message

        # A raise waits for the cooling period (CASINO_LIMIT_RAISE_HOURS): still refused ...
        raised = await ana.request("PUT", "/me/limits", json={"stake": {"daily": 10_000},
                                                             "loss": {"daily": 2_000}})
        assert raised["stake"][0]["amount"] == 3_000 and raised["stake"][0]["pending"] == 10_000
        assert (await _refused(ana, t, "noir", 500)).code == "stake_limit"
        # ... and applies once due (the test moves its date).
        conn = await asyncpg.connect(server.db_url)
        try:
            await conn.execute("UPDATE play_limits SET pending_from = now() - interval '1 second' "
                               "WHERE user_id = 'pl-ana' AND kind = 'stake' AND period = 'daily'")
        finally:
            await conn.close()
        await ana.bet(t, "noir", 500)
        assert (await ana.balance())["pending"] == 1_500
    finally:
        for c in (croupier, ana, bob):
            await c.close()
    assert await floor.ledger_problems() == []


async def test_a_late_bet_the_chef_accepts_counts_against_the_players_limit(server, floor: Floor):
    """The chef's accept stakes the player's money (his command, her wager): her limit holds
    there too. Eva: stake limit 10.00 a day; 6.00 on rouge, then a late 5.00 on plein 36 would
    make 11.00: the accept is refused ``stake_limit`` (at most 4.00), and nothing more is held."""
    t = "pl-late"
    croupier = await floor.account("pl-late-croupier", "croupier")
    chef = await floor.account("pl-late-chef", "chef")
    await floor.table("roulette", "campione", t, staff=("pl-late-croupier", "pl-late-chef"))
    eva = await floor.account("pl-eva", chips=100_000)
    try:
        await eva.request("PUT", "/me/limits", json={"stake": {"daily": 1_000}})
        for c in (croupier, chef, eva):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})
        await eva.bet(t, "rouge", 600)
        await croupier.play(t, {"type": "launch_ball"})
        ack = await eva.bet(t, "plein 36", 500)  # late: pending, nothing held yet
        await chef.wait_seq(t, ack["seq"])
        late = next(f["event"]["late"] for f in chef.frames if f.get("type") == "event"
                    and f.get("seq") == ack["seq"] and f["event"]["type"] == "late_bet_pending")
        refused = await _refused_play(chef, t, {"type": "accept_late", "late": late})
        assert refused.code == "stake_limit" and "at most 400" in refused.message
        assert (await eva.balance())["pending"] == 600
        await chef.play(t, {"type": "refuse_late", "late": late})
    finally:
        for c in (croupier, chef, eva):
            await c.close()
    assert await floor.ledger_problems() == []


async def _refused_play(client, table: str, command: dict) -> Rejected:
    with pytest.raises(Rejected) as refused:
        await client.play(table, command)
    return refused.value
