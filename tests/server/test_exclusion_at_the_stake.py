"""An exclusion in force refuses a stake where its money leaves the wallet (migration 0122,
``server.play_limits``), not only at the login, the requests and the sockets.

The hole it closes: an exclusion closes the player's sockets on every process through the
broker. A process that never hears it (the broker away from the process that set it for
longer than a frame's patience) kept his open socket there, and his bets were taken. Here
the exclusion is written to PostgreSQL with nothing published, as that process sees it.

By hand: ana holds 100.00, stakes 10.00 on rouge before the exclusion (accepted: 90.00
left); excluded, her 5.00 on noir is refused ``self_excluded`` and holds nothing, while bob's
bet in the same moment is taken; her late bet (5.00 on plein 36), which the chef's accept
would stake, is refused there too; 17 (black) comes: her rouge loses, 90.00 posted. A cool-off
that has ended no longer refuses: her 5.00 on noir is then taken (85.00 available)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from games.errors import GameError
from games.wagers import WagerPlaced
from server import play_limits
from server.client import Rejected

from .conftest import Floor


async def _users(pool, *ids: str) -> None:
    for user in ids:
        await pool.execute("INSERT INTO users (id, password_hash, role, currency) VALUES ($1, 'x', 'player', 'CHF')",
                           user)


async def _exclude(conn, user: str, kind: str = "self_exclusion", until: str = "6 months") -> None:
    await conn.execute(
        "INSERT INTO player_exclusions (user_id, kind, period, until, set_by) "
        "VALUES ($1, $2, '6m', now() + $3::text::interval, $1) "
        "ON CONFLICT (user_id) DO UPDATE SET kind = EXCLUDED.kind, until = EXCLUDED.until", user, kind, until)


async def test_the_stake_check_refuses_real_money_from_an_excluded_player_only(pool):
    await _users(pool, "xa-ana", "xa-bob", "xa-cy")
    await _exclude(pool, "xa-ana")
    await _exclude(pool, "xa-cy", "cool_off", "-1 minute")  # a cool-off that has ended
    # The batch statement's question: whose stakes must be checked first.
    checked = await pool.fetch("SELECT user_id FROM players_with_limits($1::text[], 'CHF')",
                               ["xa-ana", "xa-bob", "xa-cy"])
    assert {r["user_id"] for r in checked} == {"xa-ana"}

    bets = [WagerPlaced("w1", "xa-bob", 500, "rouge"), WagerPlaced("w2", "xa-ana", 500, "noir")]
    async with pool.acquire() as conn:
        with pytest.raises(GameError) as refused:
            await play_limits.check(conn, "CHF", bets, {"xa-ana"})
        assert refused.value.code == "self_excluded" and "may be lifted" in refused.value.message
        await play_limits.check(conn, "CHF", bets[:1], {"xa-ana"})  # bob's alone: nothing to refuse
        # Tournament points are not money (an absent player's charge is the table's own).
        await play_limits.check(conn, "PTS", bets, {"xa-ana"})
        await _exclude(conn, "xa-ana", "cool_off", "1 day")
        with pytest.raises(GameError) as refused:
            await play_limits.check(conn, "CHF", bets, {"xa-ana"})
        assert refused.value.code == "cooling_off"


@pytest.mark.slow
async def test_an_open_socket_the_exclusion_never_reached_stakes_nothing(server, floor: Floor):
    t = "xs-roul"
    croupier = await floor.account("xs-croupier", "croupier")
    chef = await floor.account("xs-chef", "chef")
    await floor.table("roulette", "campione", t, staff=("xs-croupier", "xs-chef"))
    ana = await floor.account("xs-ana", chips=10_000)
    bob = await floor.account("xs-bob", chips=10_000)
    admin = await floor.admin()  # (her own requests are refused now: the desk reads her wallet)
    db = await asyncpg.connect(server.db_url)
    try:
        for c in (croupier, chef, ana, bob):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "open_spin"})
        await ana.bet(t, "rouge", 1_000)

        await _exclude(db, "xs-ana")  # set where this process never heard of it
        with pytest.raises(Rejected) as refused:
            await ana.bet(t, "noir", 500)
        assert refused.value.code == "self_excluded"
        # Sent at once (one batch when the table takes them together): her refusal costs bob nothing.
        mine, his = await asyncio.gather(ana.bet(t, "noir", 500), bob.bet(t, "noir", 2_000),
                                         return_exceptions=True)
        assert isinstance(mine, Rejected) and mine.code == "self_excluded"
        assert not isinstance(his, BaseException)
        # Held: the bet before the exclusion, no other.
        assert (await admin.request("GET", "/accounts/xs-ana/balance"))["pending"] == 1_000

        # A late bet: hers, entered after the ball was launched, staked by the chef's accept
        # (his command, her money): refused as hers would be; the chef then refuses it.
        await croupier.play(t, {"type": "launch_ball"})
        ack = await ana.bet(t, "plein 36", 500)  # (pending: no money moves yet)
        await chef.wait_seq(t, ack["seq"])
        late = next(f["event"]["late"] for f in chef.frames if f.get("type") == "event"
                    and f.get("seq") == ack["seq"] and f["event"]["type"] == "late_bet_pending")
        with pytest.raises(Rejected) as refused:
            await chef.play(t, {"type": "accept_late", "late": late})
        assert refused.value.code == "self_excluded"
        await chef.play(t, {"type": "refuse_late", "late": late})
        assert (await admin.request("GET", "/accounts/xs-ana/balance"))["pending"] == 1_000

        for step in ({"type": "no_more_bets"}, {"type": "result", "number": 17, "source": "croupier"}):
            await croupier.play(t, step)
        await bob.next_event(t, "spin_settled", timeout=10)
        # Her bet placed before is settled as any other: rouge loses on 17.
        assert (await admin.request("GET", "/accounts/xs-ana/balance"))["posted"] == 9_000

        # A cool-off that has ended refuses nothing.
        await _exclude(db, "xs-ana", "cool_off", "-1 second")
        await croupier.play(t, {"type": "open_spin"})
        await ana.bet(t, "noir", 500)
        assert (await ana.balance())["available"] == 8_500
    finally:
        await db.close()
        for c in (croupier, chef, ana, bob, admin):
            await c.close()
    assert await floor.ledger_problems() == []
