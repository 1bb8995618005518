"""Rounds dealt from rigged shoes, settled to the exact amount worked out by hand.

Dealing order with two boxes and no hole card: box 1, box 2, dealer, box 1, box 2, then
every card asked for, then the dealer's. Titano adds the hole card after the deal.
Stakes are 1000 (CHF 10.00) unless said otherwise.
"""

import msgspec

from blackjack import commands as C
from blackjack import events as E
from blackjack.profiles import builtin
from blackjack.state import Offer
from games.commands import Actor
from helpers.blackjack import CROUPIER


def two_boxes(h):
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()


# -- European no hole card: a dealer blackjack takes everything -------------------------


def test_enhc_dealer_blackjack_takes_the_double(table):
    h = table("campione", "6 10 10 5 7 9 A")
    two_boxes(h)
    h.act("p1", C.Double, 1)  # 11 doubles, draws 9: 20
    h.act("p2", C.Stand, 2)
    assert h.s.phase == "betting"  # the dealer drew the ace: blackjack, round settled
    assert h.net("p1") == -2000 and h.net("p2") == -1000


def test_original_bets_only_profile_returns_the_double(table):
    p = msgspec.structs.replace(builtin("campione"), name="obo", dealer_blackjack_takes="original")
    h = table(p, "6 10 10 5 7 9 A")
    two_boxes(h)
    h.act("p1", C.Double, 1)
    h.act("p2", C.Stand, 2)
    assert h.net("p1") == -1000
    double = [e for e in h.settled().values() if e.reason == "returned"]
    assert len(double) == 1 and double[0].returned == 1000


def test_split_hands_all_lose_to_a_dealer_blackjack_shown_late(table):
    # Titano: the hole card (an ace) is dealt face down and only shown at the dealer's turn.
    h = table("titano", "8 10 8 A 3 10")
    h.bet("p1", 1)
    h.close()
    assert h.t.view("p1").dealer[1] == -1
    h.act("p1", C.Split, 1)
    assert h.t.view("p1").dealer == [h.s.dealer[0], -1]
    h.act("p1", C.Stand, 1, 0)  # 8 3
    h.act("p1", C.Stand, 1, 1)  # 8 10
    assert h.of(E.HoleCardShown)
    assert h.net("p1") == -2000


# -- insurance and even money --------------------------------------------------------------


def test_insurance_pays_two_to_one_and_is_capped_at_half(table):
    h = table("campione", "10 10 A 9 7 K")
    two_boxes(h)
    assert h.s.phase == "offers"
    h.refused(C.Insure(box=1, amount=501), "insurance_too_large", by="p1")
    h.refused(C.Insure(box=1, amount=100), "no_offer", by="p2")
    h.do(C.Insure(box=1, amount=500), by="p1")
    h.refused(C.Insure(box=1, amount=100), "already_insured", by="p1")
    h.do(C.DeclineOffer(box=2), by="p2")
    assert h.s.phase == "play"
    h.act("p1", C.Stand, 1)
    h.act("p2", C.Stand, 2)
    ins = [e for e in h.settled().values() if e.reason == "insurance wins"]
    assert [(e.stake, e.returned, e.won) for e in ins] == [(500, 500, 1000)]
    assert h.net("p1") == 0 and h.net("p2") == -1000


def test_insurance_settles_first_and_loses_without_dealer_blackjack(table):
    h = table("campione", "10 10 A 9 7 5 2")
    two_boxes(h)
    h.do(C.Insure(box=1, amount=200), by="p1")
    h.do(C.CloseOffers(), by=CROUPIER)
    h.act("p1", C.Stand, 1)
    h.act("p2", C.Stand, 2)
    settled = list(h.settled().values())
    assert settled[0].reason == "insurance loses"
    # Dealer A 5 2: soft 18. p1 19 wins, p2 17 loses.
    assert h.net("p1") == 1000 - 200 and h.net("p2") == -1000


def test_even_money_against_a_ten_at_campione(table):
    h = table("campione", "A 10 10 K 8 A")
    two_boxes(h)
    assert h.s.phase == "offers" and h.s.offers == [Offer("p1", 1)]
    h.do(C.EvenMoney(box=1), by="p1")
    assert h.net("p1") == 1000
    h.act("p2", C.Stand, 2)
    assert h.net("p1") == 1000 and h.net("p2") == -1000  # dealer drew the ace


def test_lugano_offers_no_even_money_against_a_ten_and_holds_the_blackjack(table):
    h = table("lugano", "A 10 K 7")
    h.bet("p1", 1)
    h.close()
    assert h.s.phase == "betting"  # no offer, nothing to decide: dealer 17
    bj = list(h.settled().values())
    assert [(e.won, e.reason) for e in bj] == [(1500, "blackjack")]


def test_even_money_against_an_ace_at_lugano(table):
    h = table("lugano", "A A K 9")
    h.bet("p1", 1)
    h.close()
    h.refused(C.Insure(box=1, amount=500), "blackjack_not_insurable", by="p1")
    h.do(C.EvenMoney(box=1), by="p1")
    assert h.net("p1") == 1000


def test_blackjack_paid_at_once_when_the_dealer_cannot_tie(table):
    h = table("lugano", "A 6 K")
    h.bet("p1", 1)
    ev = h.close()
    paid = [e for e in ev if type(e).__name__ == "WagerSettled"]
    assert [(e.won, e.reason) for e in paid] == [(1500, "blackjack")]
    done = h.of(E.DealerDone)[0]
    assert done.drew is False and len(h.of(E.CardDealt)) == 3  # the dealer took no card


# -- splits ---------------------------------------------------------------------------------


def test_four_split_hands_at_titano(table):
    h = table("titano", "8 6 8 10 8 8 8 3 10 2 K 10")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    h.act("p1", C.Split, 1)  # hand 0 drew another 8
    h.act("p1", C.Split, 1)  # four hands now
    assert len(h.s.boxes[0].hands) == 4
    h.refused(C.Split(box=1, hand=0), "split_not_allowed", by="p1")
    h.act("p1", C.Stand, 1, 0)  # 8 8
    h.act("p1", C.Double, 1, 1)  # 8 3, doubles, 10: 21
    h.act("p1", C.Stand, 1, 2)  # 8 2
    h.act("p1", C.Stand, 1, 3)  # 8 K
    # Dealer 6 + hole 10 = 16, draws 10: bust. Every hand wins, the double twice.
    assert h.net("p1") == 5000


def test_campione_allows_one_split_only(table):
    h = table("campione", "8 10 6 8 10 8")
    two_boxes(h)
    h.act("p1", C.Split, 1)
    h.refused(C.Split(box=1, hand=0), "split_not_allowed", by="p1")


def test_split_aces_take_one_card_and_21_is_not_blackjack(table):
    h = table("campione", "A 10 6 A 9 A K 5 10")
    two_boxes(h)
    h.act("p1", C.Split, 1)  # A A: hand 0 draws an ace (no resplit at Campione), hand 1 a king
    assert all(hd.done for hd in h.s.boxes[0].hands)
    h.act("p2", C.Stand, 2)
    # Dealer 6 5 10 = 21: A A (12) loses, A K (21, not blackjack) pushes, p2's 19 loses.
    assert h.net("p1") == -1000 and h.net("p2") == -1000


def test_lugano_resplits_aces(table):
    h = table("lugano", "A 6 A A K Q 9 10 10")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    h.refused(C.Hit(box=1, hand=0), "split_aces_one_card", by="p1")
    h.act("p1", C.Split, 1)  # A A again: three hands, each done with its one card
    assert max(e.hand for e in h.of(E.CardDealt)) == 2
    # Hands A K, A Q (21 each, paid even) and A 9; dealer 6 10 10 busts.
    wins = [e.won for e in h.settled().values()]
    assert wins == [1000, 1000, 1000] and h.net("p1") == 3000


def test_campione_split_tens_then_ace_may_double_as_eleven(table):
    h = table("campione", "10 10 6 K 9 A 9 7 10 10")
    two_boxes(h)
    h.act("p1", C.Split, 1)
    hand = h.s.boxes[0].hands[0]
    assert not hand.done  # 10 A: 21, yet the hand goes on
    h.act("p1", C.Double, 1, 0)  # as 11: draws 9, 20
    h.act("p1", C.Stand, 1, 1)  # K 7
    h.act("p2", C.Stand, 2)
    assert h.net("p1") == 2000 + 1000 and h.net("p2") == 1000


def test_titano_split_tens_then_ace_is_a_plain_21(table):
    h = table("titano", "10 6 K 10 A 7 10")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    assert h.s.boxes[0].hands[0].done  # 10 A stands on 21
    h.act("p1", C.Stand, 1, 1)
    assert [e.won for e in h.settled().values()] == [1000, 1000]


# -- betting behind -------------------------------------------------------------------------


def test_behind_players_choose_whether_to_double(table):
    h = table("lugano", "6 6 5 10 10 10", min_bet=500)
    h.bet("p1", 1, 1000)
    h.bet("p2", 1, 500)
    h.bet("p3", 1, 500)
    h.close()
    h.act("p1", C.Double, 1)
    h.refused(C.Stand(box=1), "not_decision_time", by="p1")
    assert h.s.behind == ["p2", "p3"]
    h.do(C.BehindDouble(box=1, accept=True), by="p2")
    h.do(C.BehindDouble(box=1, accept=False), by="p3")
    # 6 5 10 = 21; dealer 6 10 10 busts.
    assert (h.net("p1"), h.net("p2"), h.net("p3")) == (2000, 1000, 500)


def test_behind_players_choose_a_split_hand(table):
    h = table("lugano", "8 6 8 10 3 9 10 3", min_bet=500)
    h.bet("p1", 1, 1000)
    h.bet("p2", 1, 500)
    h.bet("p3", 1, 500)
    h.close()
    h.refused(C.Hit(box=1), "not_your_box", by="p2")
    h.act("p1", C.Split, 1)
    h.do(C.BehindSplit(box=1, choice="second"), by="p2")
    h.do(C.BehindSplit(box=1, choice="both"), by="p3")
    h.act("p1", C.Stand, 1, 0)  # 8 10
    h.act("p1", C.Hit, 1, 1)  # 8 3 9
    h.act("p1", C.Stand, 1, 1)
    # Dealer 6 10 3 = 19: hand 0 (18) loses, hand 1 (20) wins.
    assert (h.net("p1"), h.net("p2"), h.net("p3")) == (0, 500, 0)


def test_a_time_out_leaves_players_behind_on_the_first_hand(table):
    h = table("lugano", "8 6 8 10 3 9 10 3", min_bet=500)
    h.bet("p1", 1, 1000)
    h.bet("p2", 1, 500)
    h.close()
    h.act("p1", C.Split, 1)
    h.refused(C.BehindSplit(box=1, choice="both"), "system_may_only_follow_first", by=Actor("system:timeout", "system"))
    h.do(C.BehindSplit(box=1), by=Actor("system:timeout", "system"))
    h.act("p1", C.Stand, 1, 0)
    h.do(C.Stand(box=1, hand=1), by=Actor("system:timeout", "system"))  # 8 3 stands on 11
    # Dealer 6 9 10 busts: p2 rode the first hand (8 10) and wins; the holder wins both.
    assert h.net("p2") == 500 and h.net("p1") == 2000


# -- table rules: boxes, holders, limits ---------------------------------------------------


def test_lone_player_plays_two_boxes_at_campione(table):
    h = table("campione", "")
    h.bet("p1", 1)
    h.refused(C.CloseBets(), "lone_player_min_boxes", by=CROUPIER)
    h.bet("p1", 4)
    h.close()
    assert [b.number for b in h.s.boxes] == [1, 4]


def test_crowded_table_one_box_each(table):
    h = table("campione", "")
    for i in range(1, 7):
        h.bet(f"p{i}", i)
    h.bet("p1", 7)  # six players: p1 may still take a second box
    h.bet("p7", 2)  # a seventh arrives (behind box 2): now the table is crowded
    h.refused(C.CloseBets(), "one_box_each", by=CROUPIER)
    h2 = table("campione", "")
    for i in range(1, 8):
        h2.bet(f"p{i}", i if i < 7 else 1)
    h2.refused(C.PlaceBet(box=7, amount=1000), "one_box_each", by="p1")


def test_highest_bet_holds_a_free_box_tie_nearest_the_shoe(table):
    h = table("lugano", "")
    h.do(C.Sit(box=6), by="far")
    h.do(C.Sit(box=1), by="near")
    h.bet("far", 3, 2000)
    h.bet("near", 3, 2000)
    h.bet("low", 4, 1000)
    h.bet("high", 4, 3000)
    h.close()
    holders = {b.number: b.holder for b in h.s.boxes}
    assert holders == {3: "near", 4: "high"}
    kinds = {w.player: w.kind for b in h.s.boxes for w in b.wagers}
    assert kinds == {"near": "box", "far": "behind", "high": "box", "low": "behind"}


def test_places_behind_and_maxima_per_profile(table):
    t = table("titano", "")
    t.bet("p1", 1)
    t.refused(C.PlaceBet(box=1, amount=1000), "box_full", by="p2")  # no places behind
    t.refused(C.PlaceBet(box=2, amount=10001), "above_maximum", by="p2")
    t.refused(C.PlaceBet(box=2, amount=999), "below_minimum", by="p2")
    lu = table("lugano", "")
    lu.bet("p1", 1, 8000)
    lu.bet("p2", 1, 2000)
    lu.refused(C.PlaceBet(box=1, amount=1000), "above_maximum", by="p3")  # box with behind: 10000
    ca = table("campione", "")
    ca.bet("p1", 1, 10000)
    ca.bet("p2", 1, 10000)  # the maximum is per person in each box
    ca.refused(C.PlaceBet(box=1, amount=1000), "already_bet", by="p1")


def test_limits_change_from_the_next_round(table):
    h = table("campione", "")
    h.refused(C.SetLimits(min_bet=1000, max_bet=20000), "bad_limits", by=Actor("chef", "chef"))  # 1:10
    h.refused(C.SetLimits(min_bet=2000, max_bet=20000), "not_allowed", by=CROUPIER)  # the Direzione's
    h.refused(C.SetLimits(min_bet=2000, max_bet=20000), "staff_only", by="p1")
    two_boxes(h)
    h.do(C.SetLimits(min_bet=2000, max_bet=20000), by=Actor("chef", "chef"))
    assert h.s.min_bet == 1000
    while h.s.phase == "play":
        b = h.s.boxes[h.s.turn_box]
        h.act(b.holder, C.Stand, b.number, h.s.turn_hand)
    assert h.s.min_bet == 2000 and h.of(E.RoundOpened)[-1].min_bet == 2000


def test_dealing_starts_after_the_button_which_moves_each_round(table):
    h = table("titano", "")
    orders = []
    for _ in range(3):
        h.bet("p1", 2)
        h.bet("p2", 5)
        h.close()
        orders.append(h.of(E.BetsClosed)[-1].order)
        play_out(h)
    assert orders == [[2, 5], [5, 2], [2, 5]]
    assert [e.box for e in h.of(E.ButtonMoved)] == [2, 5, 2]


def test_payout_goes_from_the_dealers_right(table):
    h = table("campione", "10 10 7 9 8 5 5")
    two_boxes(h)
    h.act("p1", C.Stand, 1)
    h.act("p2", C.Stand, 2)
    # Dealer 7 5 5 = 17: both win; box 2 (on the dealer's right) is paid first.
    assert [(e.player, e.won) for e in h.settled().values()] == [("p2", 1000), ("p1", 1000)]


def test_dealer_draws_nothing_when_every_box_is_bust(table):
    h = table("campione", "10 10 6 6 6 10 10")
    two_boxes(h)
    h.act("p1", C.Hit, 1)
    h.act("p2", C.Hit, 2)
    done = h.of(E.DealerDone)[0]
    assert not done.drew and len(h.of(E.CardDealt)) == 7
    assert h.net("p1") == -1000 and h.net("p2") == -1000


def test_dealer_takes_one_card_for_standing_insurance_only(table):
    h = table("campione", "10 10 A 6 6 10 10 K")
    two_boxes(h)
    h.do(C.Insure(box=1, amount=500), by="p1")
    h.do(C.CloseOffers(), by=CROUPIER)
    h.act("p1", C.Hit, 1)
    h.act("p2", C.Hit, 2)
    assert h.s.phase == "betting"
    dealt = [e for e in h.of(E.CardDealt) if e.box == 0]
    assert len(dealt) == 2  # the ace and the king: blackjack, insurance paid
    assert h.net("p1") == -1000 + 1000


def play_out(h):
    """Stand on everything until the round is over."""
    while h.s.phase in ("play", "offers"):
        if h.s.phase == "offers":
            h.do(C.CloseOffers(), by=CROUPIER)
            continue
        b = h.s.boxes[h.s.turn_box]
        h.act(b.holder, C.Stand, b.number, h.s.turn_hand)


def test_a_limits_change_carries_its_reason_and_an_old_event_replays_unchanged(table):
    """The reason reaches the event (the limits' history and the audit read it there); an
    event without one encodes exactly as one stored before the field existed."""
    import msgspec

    h = table("campione", "")
    h.do(C.SetLimits(min_bet=2000, max_bet=20000, reason="evening"), by=Actor("chef", "chef"))
    assert h.of(E.LimitsChanged)[-1].reason == "evening"
    old = E.LimitsChanged(by="chef", min_bet=2000, max_bet=20000, from_round=2)
    assert msgspec.json.decode(msgspec.json.encode(old)) == {
        "type": "limits_changed", "by": "chef", "min_bet": 2000, "max_bet": 20000, "from_round": 2}
