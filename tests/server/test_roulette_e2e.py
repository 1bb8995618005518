"""A live roulette spin end to end: three players (one announced bet), a zero, prison,
the next spin freeing and losing prisoners; balances by hand; the ledger check passes."""

from __future__ import annotations

import pytest

from server.client import Rejected

pytestmark = pytest.mark.slow

T = "roul-live"


async def test_three_players_zero_and_prison(floor):
    croupier = await floor.account("croupier1", "croupier")
    alice = await floor.account("alice", chips=100_000)
    bob = await floor.account("bob", chips=100_000)
    carol = await floor.account("carol", chips=100_000)
    await floor.table("roulette", "campione", T, staff=("croupier1",))
    clients = [croupier, alice, bob, carol]
    try:
        for c in clients:
            await c.connect()
            await c.subscribe(T)
        assert alice.snapshots[T]["view"]["phase"] == "closed"
        # What each may send now (the engine's phase table and role rules), in the view.
        assert alice.snapshots[T]["view"]["legal"] == ["set_partage_preference"]
        assert croupier.snapshots[T]["view"]["legal"] == ["open_spin", "set_partage_preference"]

        await croupier.play(T, {"type": "open_spin"})
        await alice.bet(T, "plein 17", 1_000)
        await alice.bet(T, "rouge", 2_000)
        await bob.announce(T, "voisins du zéro", 500)  # 9 units: CHF 45
        await carol.bet(T, "pair", 5_000)
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 0, "source": "croupier"}):
            await croupier.play(T, step)

        result = await carol.next_event(T, "spin_result")
        assert result["event"]["number"] == 0
        settled = await carol.next_event(T, "spin_settled")
        # Decided: plein 17 (1,000) and voisins (4,500); the simple chances went to prison.
        # Only transversale 0-2-3 (2 units, 1,000) wins: 11 to 1.
        assert settled["event"]["staked"] == 5_500
        assert settled["event"]["won"] == 11_000

        assert (await alice.balance())["available"] == 100_000 - 1_000 - 2_000
        assert (await alice.balance())["pending"] == 2_000  # rouge en prison
        assert (await bob.balance())["available"] == 100_000 - 3_500 + 11_000
        assert (await carol.balance())["pending"] == 5_000

        # Spin 2: 2 is black and even: alice's rouge is lost, carol's pair is freed (no win).
        await croupier.play(T, {"type": "open_spin"})
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 2, "source": "croupier"}):
            await croupier.play(T, step)
        await carol.next_event(T, "spin_settled")
        a, c = await alice.balance(), await carol.balance()
        assert (a["posted"], a["pending"]) == (97_000, 0)
        assert (c["posted"], c["pending"]) == (100_000, 0)

        # Everyone saw the same events in the same order, each seq once.
        seqs = [f["seq"] for f in carol.frames if f.get("type") == "event" and f["table"] == T]
        assert seqs == sorted(set(seqs))
        assert [f["seq"] for f in alice.frames if f.get("type") == "event" and f["table"] == T][-1] == seqs[-1]

        # The round's full recall, step by step, for a player who played it.
        steps = await carol.request("GET", f"/tables/{T}/rounds/spin-1")
        kinds = [s["kind"] for s in steps]
        assert "spin_result" in kinds and "wager_imprisoned" in kinds
        rounds = await bob.request("GET", "/rounds")
        assert {"table": T, "round": "spin-1"} in [{"table": r["table"], "round": r["round"]} for r in rounds]
    finally:
        for c in clients:
            await c.close()
    assert await floor.ledger_problems() == []


async def test_late_bets_wait_for_the_chef_de_table(floor):
    # Same table, after the first test's two spins: the croupier runs it, the chef decides late bets.
    croupier = await floor.account("croupier-2", "croupier")
    chef = await floor.account("chef-1", "chef")
    paula = await floor.account("paula", chips=10_000)
    admin = await floor.admin()
    try:
        for user in ("croupier-2", "chef-1"):
            await admin.request("POST", f"/tables/{T}/staff", json={"user": user})
    finally:
        await admin.close()
    clients = [croupier, chef, paula]
    try:
        for c in clients:
            await c.connect()
            await c.subscribe(T)
        await croupier.play(T, {"type": "open_spin"})
        await croupier.play(T, {"type": "launch_ball"})
        ack = await paula.bet(T, "plein 36", 500)  # after the launch: it waits (Art. 9)
        await paula.wait_seq(T, ack["seq"])
        pending = next(f["event"] for f in paula.frames if f.get("seq") == ack["seq"] and f["type"] == "event")
        assert pending["type"] == "late_bet_pending"
        assert (await paula.balance())["pending"] == 0  # nothing held until the chef accepts
        with pytest.raises(Rejected) as r:
            await croupier.play(T, {"type": "accept_late", "late": pending["late"]})
        assert r.value.code == "not_allowed"
        await chef.play(T, {"type": "accept_late", "late": pending["late"]})
        assert (await paula.balance())["pending"] == 500
        await croupier.play(T, {"type": "no_more_bets"})
        await croupier.play(T, {"type": "result", "number": 36, "source": "croupier"})
        await paula.next_event(T, "spin_settled")
        assert (await paula.balance())["available"] == 10_000 + 35 * 500
    finally:
        for c in clients:
            await c.close()
    assert await floor.ledger_problems() == []
