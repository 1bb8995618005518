"""Game recall (issue 17): a player's last rounds step by step with his balance before and
after each (a split hand, balances worked out by hand), who may recall whose rounds, the
recall page, and a dispute's replay of a round through a fresh engine (the split hand at a
live table; an RNG round, its cards then checked against the revealed shoe)."""

from __future__ import annotations

import pytest

from server.client import HTTPError

from .conftest import PASSWORD, Floor, ServerProcess

pytestmark = pytest.mark.slow

T, RNG = "rc-live", "rc-rng"
# Cards are ints: suit * 13 + rank (rank 0 = ace ... 9 = ten, 12 = king; suits S H D C).
EIGHT_S, EIGHT_D, KING_S, TEN_C, NINE_C = 7, 33, 12, 48, 47
THREE_H, NINE_S, TEN_H, SEVEN_C = 15, 8, 22, 45


@pytest.fixture(scope="module")
def rc_floor(db_url, tmp_path_factory):
    # An RNG table that closes its bets fast; decisions time out in a few seconds (the live
    # round's players answer long before).
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("recall"), CASINO_BETTING_SECONDS="2",
                        CASINO_PAUSE_SECONDS="0.5", CASINO_DECISION_SECONDS="6")
    srv.start()
    yield Floor(srv)
    srv.stop()


async def _split_round(floor: Floor):
    croupier = await floor.account("rc-croupier", "croupier")
    dave = await floor.account("rc-dave", chips=100_000)
    frank = await floor.account("rc-frank", chips=100_000)
    await floor.table("blackjack", "lugano", T, staff=("rc-croupier",), min_bet=1_000, max_bet=10_000)
    clients = [croupier, dave, frank]
    for c in clients:
        await c.connect()
        await c.subscribe(T)
    await croupier.play(T, {"type": "shuffle"})
    await croupier.play(T, {"type": "cut", "at": 100})
    await dave.sit(T, 1)
    await dave.stake(T, 1, 2_000)
    await frank.sit(T, 2)
    await frank.stake(T, 2, 1_000)
    await croupier.play(T, {"type": "close_bets"})
    for box, card in [(1, EIGHT_S), (2, TEN_C), (0, KING_S), (1, EIGHT_D), (2, NINE_C)]:
        await croupier.play(T, {"type": "card", "box": box, "card": card})
    await dave.act(T, "split", 1)
    await croupier.play(T, {"type": "card", "box": 1, "hand": 0, "card": THREE_H})  # 8 3 = 11
    await dave.act(T, "hit", 1, 0)
    await croupier.play(T, {"type": "card", "box": 1, "hand": 0, "card": NINE_S})  # 20
    await dave.act(T, "stand", 1, 0)
    await croupier.play(T, {"type": "card", "box": 1, "hand": 1, "card": TEN_H})  # 8 10 = 18
    await dave.act(T, "stand", 1, 1)
    await frank.act(T, "stand", 2)  # 19
    await croupier.play(T, {"type": "card", "box": 0, "card": SEVEN_C})  # dealer 17
    await frank.next_event(T, "round_settled")
    return clients


async def test_a_split_hand_recalled_step_by_step(rc_floor, open_page):
    floor = rc_floor
    clients = await _split_round(floor)
    dave, frank = clients[1], clients[2]
    inspector = await floor.account("rc-inspector", "inspector")
    cashier = await floor.cashier()
    try:
        [r] = await dave.request("GET", "/players/rc-dave/recall", params={"table": T, "limit": "5"})
        assert (r["table"], r["game"], r["round"], r["account"]) == (T, "blackjack", "round-1", "wallet:rc-dave:CHF")
        steps = [(s["kind"], s["event"]) for s in r["steps"]]
        kinds = [k for k, _ in steps]
        # Nothing of frank's: his wager, his box's cards and decisions are not dave's.
        assert all(e.get("player") in (None, "rc-dave") and e.get("box") in (None, 0, 1) for _, e in steps)
        cards = [(e["box"], e["hand"], e["card"]) for k, e in steps if k == "card_dealt"]
        assert cards == [(1, 0, EIGHT_S), (0, 0, KING_S), (1, 0, EIGHT_D), (1, 0, THREE_H), (1, 0, NINE_S),
                         (1, 1, TEN_H), (0, 0, SEVEN_C)]
        acted = [(e["hand"], e["action"], e["by"]) for k, e in steps if k == "acted"]
        assert acted == [(0, "split", "rc-dave"), (0, "hit", "rc-dave"), (0, "stand", "rc-dave"),
                         (1, "stand", "rc-dave")]
        placed = [e["amount"] for k, e in steps if k == "wager_placed"]
        settled = [(e["stake"], e["returned"], e["won"]) for k, e in steps if k == "wager_settled"]
        assert placed == [2_000, 2_000]  # the box, then the split hand's stake
        assert settled == [(2_000, 2_000, 2_000), (2_000, 2_000, 2_000)]  # 20 and 18 beat 17
        assert kinds.index("wager_placed") < kinds.index("acted") < kinds.index("dealer_done") \
            < kinds.index("wager_settled") and kinds[-1] in ("round_settled", "button_moved")
        # His wallet: 100,000 posted before (the holds reserve, they post nothing); each hand's
        # hold is voided (the whole stake comes back) and 2,000 won: 104,000 after.
        assert (r["balance_before"], r["pending_before"]) == (100_000, 0)
        assert (r["balance_after"], r["pending_after"]) == (104_000, 0)
        assert [(m["op"], m["change"]) for m in r["movements"]] == [
            ("hold", 0), ("hold", 0), ("void", 0), ("transfer", 2_000), ("void", 0), ("transfer", 2_000)]
        assert (await dave.balance())["available"] == 104_000

        # Another player may not recall dave's rounds; the cashier neither; an inspector may.
        for who in (frank, cashier):
            with pytest.raises(HTTPError) as e:
                await who.request("GET", "/players/rc-dave/recall")
            assert e.value.status == 403
        seen = await inspector.request("GET", "/players/rc-dave/recall")
        assert [x["round"] for x in seen] == ["round-1"] and seen[0]["steps"] == r["steps"]
        [fr] = await frank.request("GET", "/players/rc-frank/recall")
        assert (fr["balance_before"], fr["balance_after"]) == (100_000, 101_000)
        # A dispute: the split round runs again through a fresh engine, every command as the
        # croupier and the players gave it (a live table's cards are the croupier's: no shoe).
        out = await inspector.request("GET", f"/tables/{T}/rounds/round-1/replay")
        engine = out["engine"]
        assert out["matches"] is True and engine["matches"] is True and engine["first_difference"] is None
        assert (out["game"], out["mode"], out["cards"], out["cards_note"]) == ("blackjack", "live", None, "live_table")
        # shuffle, cut, two sits, two bets, close, five cards, split, three cards, four decisions,
        # the dealer's card (his hole card at a live table is the croupier's entry too)
        assert engine["commands"] >= 19 and engine["events"] >= 30 and engine["from_seq"] < engine["through_seq"]

        # The page: the round opens step by step, balances before and after.
        page = await open_page.as_user("rc-dave", PASSWORD, "/app/recall.html")
        await page.wait_for_function("() => document.querySelectorAll('details.round li.step').length > 10")
        text = await page.inner_text("details.round")
        assert "split" in text and "CHF 1'000.00" in text and "CHF 1'040.00" in text
        shown = await page.eval_on_selector_all("details.round li.step[data-kind=card_dealt] .card",
                                                "els => els.map(e => Number(e.dataset.card))")
        assert shown == [c for _, _, c in cards]
        assert page.problems == []
    finally:
        for c in (*clients, inspector, cashier):
            await c.close()
    assert await floor.ledger_problems() == []


async def test_rng_round_replayed_from_its_revealed_shoe(rc_floor):
    floor = rc_floor
    croupier = await floor.account("rc-rng-croupier", "croupier")
    gina = await floor.account("rc-gina", chips=50_000)
    inspector = await floor.account("rc-rng-inspector", "inspector")
    await floor.table("blackjack", "lugano", RNG, mode="rng", staff=("rc-rng-croupier",), min_bet=1_000,
                      max_bet=10_000)
    try:
        for c in (croupier, gina):
            await c.connect()
            await c.subscribe(RNG)
        if gina.snapshots[RNG]["view"]["phase"] != "betting":
            await gina.next_event(RNG, "round_opened")
        await gina.sit(RNG, 1)
        await gina.stake(RNG, 1, 1_000)
        settled = await gina.next_event(RNG, "round_settled", timeout=60)  # her turn times out to a stand
        rnd = settled["round"]
        # The shoe is still in play: the engine's run is checked, the cards wait for the reveal.
        out = await inspector.request("GET", f"/tables/{RNG}/rounds/{rnd}/replay")
        assert out["engine"]["matches"] is True and out["engine"]["events"] > 0
        assert (out["cards"], out["cards_note"], out["matches"]) == (None, "shoe_not_revealed", True)
        await croupier.play(RNG, {"type": "reshuffle"})  # no bets down: the shoe ends now
        await gina.next_event(RNG, "shoe_revealed")
        out = await inspector.request("GET", f"/tables/{RNG}/rounds/{rnd}/replay")
        cards = out["cards"]
        assert out["matches"] is True and out["engine"]["matches"] is True and out["cards_note"] == ""
        assert cards["commitment_ok"] is True and cards["matches"] is True and cards["first_difference"] is None
        assert len(cards["dealt"]) >= 3 and cards["dealt"] == cards["expected"]
        assert cards["first_position"] == cards["burned"]  # the shoe's first round
        with pytest.raises(HTTPError) as e:
            await gina.request("GET", f"/tables/{RNG}/rounds/{rnd}/replay")
        assert e.value.status == 403
    finally:
        for c in (croupier, gina, inspector):
            await c.close()
