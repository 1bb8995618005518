"""RNG tables run themselves: the server shuffles, cuts, opens and closes betting, spins,
deals and, when a player lets the time run out, sends the default action (stand)."""

from __future__ import annotations

import hashlib

import pytest

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rng_floor(db_url, tmp_path_factory):
    # A betting window wide enough to bet in on a busy machine; decisions time out fast.
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("rng"), CASINO_BETTING_SECONDS="3",
                        CASINO_PAUSE_SECONDS="0.5", CASINO_DECISION_SECONDS="1")
    srv.start()
    yield Floor(srv)
    srv.stop()


def _event(client, table: str, seq: int) -> dict:
    return next(f["event"] for f in client.frames
                if f.get("type") == "event" and f["table"] == table and f["seq"] == seq)


async def test_rng_roulette_spins_by_itself(rng_floor):
    floor, t = rng_floor, "rng-roul"
    await floor.table("roulette", "campione", t, mode="rng")
    ivan = await floor.account("ivan", chips=20_000)
    try:
        await ivan.connect()
        await ivan.subscribe(t)
        for _ in range(3):  # bet as a fresh spin opens (a bet after the launch would be a late bet)
            await ivan.next_event(t, "spin_opened")
            ack = await ivan.bet(t, "rouge", 1_000)
            await ivan.wait_seq(t, ack["seq"])
            if _event(ivan, t, ack["seq"])["type"] == "wager_placed":
                break
        else:
            pytest.fail("never bet in time")
        settled = await ivan.next_event(t, "spin_settled")
        result = next(f["event"] for f in ivan.frames if f.get("type") == "event"
                      and f["round"] == settled["round"] and f["event"]["type"] == "spin_result")
        assert result["source"] == "rng" and [b["player"] for b in result["bets"]] == ["ivan"]
        bal = await ivan.balance()
        if result["number"] == 0:
            assert (bal["posted"], bal["pending"]) == (20_000, 1_000)  # en prison
        else:
            red = result["colour"] == "red"
            assert (bal["posted"], bal["pending"]) == (21_000 if red else 19_000, 0)
    finally:
        await ivan.close()
    assert await floor.ledger_problems() == []


async def test_rng_blackjack_deals_and_times_out_to_stand(rng_floor):
    floor, t = rng_floor, "rng-bj"
    await floor.table("blackjack", "campione", t, mode="rng", min_bet=1_000, max_bet=10_000)
    jane = await floor.account("jane", chips=20_000)
    try:
        await jane.connect()
        await jane.subscribe(t)
        if jane.snapshots[t]["view"]["phase"] != "betting":
            await jane.next_event(t, "round_opened")
        await jane.sit(t, 3)
        # Campione: a player alone at the table plays at least two boxes.
        await jane.stake(t, 3, 1_000)
        await jane.stake(t, 4, 1_000)
        closed = await jane.next_event(t, "bets_closed")
        # Jane never decides: each of her turns times out to a stand (or the round ends first).
        settled = await jane.next_event(t, "round_settled", timeout=60)
        assert settled["round"] == closed["round"]
        turns = [f["event"] for f in jane.frames if f.get("type") == "event" and f["event"]["type"] == "acted"]
        assert all(a["action"] == "stand" and a["by"] == f"system-{t}" for a in turns)
        paid = [f["event"] for f in jane.frames if f.get("type") == "event"
                and f["event"]["type"] == "wager_settled" and f["event"]["player"] == "jane"]
        assert len(paid) == 2
        net = sum(p["returned"] + p["won"] - p["stake"] for p in paid)
        assert (await jane.balance())["available"] == 20_000 + net
    finally:
        await jane.close()
    assert await floor.ledger_problems() == []


async def test_rng_shoe_commitment_is_revealed_when_the_shoe_ends(rng_floor):
    """Each RNG shoe is salted afresh; when it ends, the order as committed and the salt are
    published and hash to the commitment announced at the shuffle."""
    floor, t = rng_floor, "rng-bj-shoe"
    croupier = await floor.account("shoe-croupier", "croupier")
    xena = await floor.account("xena")
    await floor.table("blackjack", "lugano", t, mode="rng", staff=("shoe-croupier",))
    try:
        for c in (croupier, xena):
            await c.connect()
            await c.subscribe(t)
        if xena.snapshots[t]["view"]["phase"] != "betting":
            # The table's start shuffles and cuts by itself, a batch each and no wait between:
            # a subscription may land between them (seen once on a busy CI machine).
            await xena.next_event(t, "shoe_cut")
        assert "order" not in xena.snapshots[t]["view"] and "shoe" not in xena.snapshots[t]["view"]
        commitments = []
        for _ in range(2):
            await croupier.play(t, {"type": "reshuffle"})  # no bets: the shoe ends now
            revealed = (await xena.next_event(t, "shoe_revealed"))["event"]
            assert hashlib.sha256(revealed["salt"].encode() + bytes(revealed["order"])).hexdigest() \
                == revealed["commitment"]
            assert sorted(revealed["order"]) == sorted(list(range(52)) * 6) and len(revealed["salt"]) == 32
            if commitments:  # the shoe whose shuffle we saw: the commitment published then
                assert revealed["commitment"] == commitments[-1]
            # The next shoe: a new salt and order, a new commitment.
            commitments.append((await xena.next_event(t, "shoe_shuffled"))["event"]["commitment"])
            await xena.next_event(t, "round_opened")
        assert len(set(commitments)) == 2
    finally:
        for c in (croupier, xena):
            await c.close()
