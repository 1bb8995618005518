"""A live Lugano blackjack round end to end: a bet behind, a split the player behind
follows, insurance, and a dealer blackjack that takes every stake (splits included);
balances by hand; the hole-card-free view; the ledger check passes."""

from __future__ import annotations

import pytest

from server.client import Rejected

pytestmark = pytest.mark.slow

T = "bj-live"
# Cards are ints: suit * 13 + rank (rank 0 = ace ... 9 = ten, 12 = king; suits S H D C).
EIGHT_S, TEN_H, ACE_S, EIGHT_D, FIVE_C, THREE_H, NINE_S, KING_H = 7, 22, 0, 33, 43, 15, 8, 25


async def test_behind_split_insurance_dealer_blackjack(floor):
    croupier = await floor.account("bj-croupier", "croupier")
    dave = await floor.account("dave", chips=100_000)
    erin = await floor.account("erin", chips=100_000)
    frank = await floor.account("frank", chips=100_000)
    await floor.table("blackjack", "lugano", T, staff=("bj-croupier",), min_bet=1_000, max_bet=10_000)
    clients = [croupier, dave, erin, frank]
    try:
        for c in clients:
            await c.connect()
            await c.subscribe(T)
        assert dave.snapshots[T]["view"]["phase"] == "shuffle"

        await croupier.play(T, {"type": "shuffle"})
        await croupier.play(T, {"type": "cut", "at": 100})
        await dave.sit(T, 1)
        await dave.stake(T, 1, 2_000)
        await erin.stake(T, 1, 1_000)  # behind dave's box
        await frank.sit(T, 2)
        await frank.stake(T, 2, 2_000)
        await croupier.play(T, {"type": "close_bets"})
        for box, card in [(1, EIGHT_S), (2, TEN_H), (0, ACE_S), (1, EIGHT_D), (2, FIVE_C)]:
            await croupier.play(T, {"type": "card", "box": box, "card": card})

        offers = await erin.next_event(T, "offers_opened")
        assert offers["event"]["waiting"] == ["dave@1", "erin@1", "frank@2"]
        await dave.act(T, "insure", 1, amount=1_000)  # half of 2,000
        await erin.act(T, "decline_offer", 1)
        await frank.act(T, "decline_offer", 2)

        # Out of turn, another's box, a croupier's card from a player: refused, nothing changes.
        for who, action, box, code in [(frank, "stand", 2, "not_your_turn"), (erin, "hit", 1, "not_your_box")]:
            with pytest.raises(Rejected) as r:
                await who.act(T, action, box)
            assert r.value.code == code
        with pytest.raises(Rejected) as r:
            await dave.play(T, {"type": "card", "box": 0, "card": 12})
        assert r.value.code == "forbidden"

        await dave.act(T, "split", 1)
        await erin.play(T, {"type": "behind_split", "box": 1, "choice": "first"})
        await croupier.play(T, {"type": "card", "box": 1, "hand": 0, "card": THREE_H})
        await dave.act(T, "stand", 1, 0)
        await croupier.play(T, {"type": "card", "box": 1, "hand": 1, "card": NINE_S})
        await dave.act(T, "stand", 1, 1)
        await frank.act(T, "stand", 2)
        await croupier.play(T, {"type": "card", "box": 0, "card": KING_H})

        done = await frank.next_event(T, "dealer_done")
        assert done["event"]["blackjack"] is True
        await frank.next_event(T, "round_settled")
        # Dealer blackjack takes all (Lugano): box, split and behind; insurance pays 2 to 1.
        assert (await dave.balance())["available"] == 100_000 - 2_000 - 2_000 - 1_000 + 1_000 + 2_000
        assert (await erin.balance())["available"] == 99_000
        assert (await frank.balance())["available"] == 98_000

        steps = await erin.request("GET", f"/tables/{T}/rounds/round-1")
        kinds = [s["kind"] for s in steps]
        assert kinds[-1] == "round_settled" and kinds.count("round_opened") == 1
        assert kinds.count("wager_settled") == 5
    finally:
        for c in clients:
            await c.close()
    assert await floor.ledger_problems() == []


async def test_limits_change_from_the_next_round(floor):
    chef = await floor.account("bj-chef", "chef")
    await floor.table("blackjack", "titano", "bj-limits", staff=("bj-chef",), min_bet=1_000, max_bet=20_000)
    try:
        await chef.connect()
        await chef.subscribe("bj-limits")
        out = await chef.request("PUT", "/tables/bj-limits/limits",
                                 json={"minimum": 2_000, "maximum": 40_000, "reason": "evening"})
        assert (out["limits"]["limits"]["minimum"], out["limits"]["limits"]["maximum"]) == (2_000, 40_000)
        changed = await chef.next_event("bj-limits", "limits_changed")
        assert changed["event"]["from_round"] == 1  # no round under way: the coming one
        history = await chef.request("GET", "/tables/bj-limits/limits")
        assert [(v["version"], v["changed_by"]) for v in history] == [(1, "table.create"), (2, "bj-chef")]
        admin = await floor.admin()
        try:
            log = await admin.request("GET", "/audit", params={"target": "bj-limits"})
        finally:
            await admin.close()
        assert "table.set_limits" in [e["action"] for e in log]
    finally:
        await chef.close()


async def test_blazing_7s_major_jackpot_paid_from_the_linked_pool(floor):
    croupier = await floor.account("b7-croupier", "croupier")
    nina = await floor.account("nina", chips=100_000)
    t = "bj-blazing"
    await floor.table("blackjack", "lugano", t, staff=("b7-croupier",), min_bet=1_000, max_bet=10_000)
    try:
        for c in (croupier, nina):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "shuffle"})
        await croupier.play(t, {"type": "cut", "at": 100})
        await nina.sit(t, 1)
        await nina.stake(t, 1, 1_000)
        await nina.play(t, {"type": "place_side_bet", "box": 1, "bet": "blazing_7s", "amount": 500})
        with pytest.raises(Rejected) as r:  # the meters are the pool's, not a console's
            await croupier.play(t, {"type": "jackpot_meters", "minor": 1, "major": 2})
        assert r.value.code == "forbidden"
        await croupier.play(t, {"type": "close_bets"})
        SEVEN_S, TEN_H = 6, 22
        for box, card in [(1, SEVEN_S), (0, SEVEN_S), (1, SEVEN_S)]:  # three 7s of one suit: the major
            await croupier.play(t, {"type": "card", "box": box, "card": card})
        paid = await nina.next_event(t, "jackpot_paid")
        # The major meter: its seed (CHF 100,000) + this round's contribution (20), each winner's
        # share rounded up to CHF 1.
        assert (paid["event"]["player"], paid["event"]["amount"]) == ("nina", 10_000_100)
        await nina.act(t, "stand", 1)  # 14
        await croupier.play(t, {"type": "card", "box": 0, "card": TEN_H})  # dealer 17
        await nina.next_event(t, "round_settled")
        settled = [f["event"] for f in nina.frames if f.get("type") == "event"
                   and f["event"]["type"] == "wager_settled"]
        net = sum(s["returned"] + s["won"] - s["stake"] for s in settled)
        assert (await nina.balance())["available"] == 100_000 + net + 10_000_100
        meters = [f["event"] for f in nina.frames if f.get("type") == "event"
                  and f["event"]["type"] == "jackpot_meters"]
        assert meters[-1]["major"] == 10_000_000  # reset to the seed after the win
    finally:
        for c in (croupier, nina):
            await c.close()
    assert await floor.ledger_problems() == []


async def test_side_bets_placed_withdrawn_and_won_on_own_boxes(floor):
    """Lugano side bets over the websocket: only beside one's own bet, withdrawn before the
    deal, a Perfect Pair (26 to one) and a Push 22 (11 to one) paid through the ledger."""
    croupier = await floor.account("sb-croupier", "croupier")
    oli = await floor.account("oli", chips=100_000)
    pia = await floor.account("pia", chips=100_000)
    t = "bj-sidebets"
    await floor.table("blackjack", "lugano", t, staff=("sb-croupier",), min_bet=1_000, max_bet=10_000)
    clients = (croupier, oli, pia)
    try:
        for c in clients:
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "shuffle"})
        await croupier.play(t, {"type": "cut", "at": 100})
        await oli.sit(t, 1)
        await oli.stake(t, 1, 1_000)
        await pia.sit(t, 2)
        await pia.stake(t, 2, 1_000)
        await oli.play(t, {"type": "place_side_bet", "box": 1, "bet": "perfect_pairs", "amount": 500})
        await oli.play(t, {"type": "place_side_bet", "box": 1, "bet": "21+3", "amount": 500})
        await oli.play(t, {"type": "withdraw_side_bet", "box": 1, "bet": "21+3"})
        await pia.play(t, {"type": "place_side_bet", "box": 2, "bet": "push_22", "amount": 500})
        # Not on another's box, not another's side bet.
        with pytest.raises(Rejected) as r:
            await pia.play(t, {"type": "place_side_bet", "box": 1, "bet": "perfect_pairs", "amount": 500})
        assert r.value.code == "no_main_bet"
        with pytest.raises(Rejected) as r:
            await pia.play(t, {"type": "withdraw_side_bet", "box": 1, "bet": "perfect_pairs"})
        assert r.value.code == "no_bet"
        assert (await oli.balance())["pending"] == 1_500
        await croupier.play(t, {"type": "close_bets"})
        EIGHT_S, TEN_H, SIX_H, SEVEN_D, KING_H, SIX_S = 7, 22, 18, 32, 25, 5
        for box, card in [(1, EIGHT_S), (2, TEN_H), (0, SIX_H), (1, EIGHT_S), (2, SEVEN_D)]:
            await croupier.play(t, {"type": "card", "box": box, "card": card})
        await oli.act(t, "stand", 1)  # 16
        await pia.act(t, "stand", 2)  # 17
        for card in (KING_H, SIX_S):  # the dealer ends on 22
            await croupier.play(t, {"type": "card", "box": 0, "card": card})
        await oli.next_event(t, "round_settled")
        won = {f["event"]["reason"]: (f["event"]["player"], f["event"]["returned"], f["event"]["won"])
               for f in oli.frames if f.get("type") == "event" and f["event"]["type"] == "wager_settled"}
        assert won["perfect pairs: perfect"] == ("oli", 500, 13_000)
        assert won["push 22: dealer 22"] == ("pia", 500, 5_500)
        assert (await oli.balance())["available"] == 100_000 + 1_000 + 13_000
        assert (await pia.balance())["available"] == 100_000 + 1_000 + 5_500
    finally:
        for c in clients:
            await c.close()
    assert await floor.ledger_problems() == []
