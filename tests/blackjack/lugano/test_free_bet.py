"""Free Bet blackjack (a profile switch): free splits and doubles on the house's chip,
and a dealer 22 pushing every hand but a blackjack. Stakes are 1000."""

from blackjack import commands as C
from blackjack import events as E
from blackjack.wager_kinds import WagerKind
from games.commands import Actor
from games.wagers import WagerPlaced

from .conftest import free_bet_profile


def placed(h):
    return [(e.amount, e.spot) for e in h.of(WagerPlaced)]


def test_a_free_split_wins_like_a_real_chip(table):
    # 8 8 against a 6: split for free; 18 and 18; the dealer 6 10 10 busts with 26.
    h = table(free_bet_profile(), "8S 6D 8H 10S 10H 10C 10D")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    assert h.of(E.Acted)[-1].action == "free split"
    assert placed(h)[-1] == (0, "box 1 free split (the house's chip of 1000)")
    h.act("p1", C.Stand, 1, 0)
    h.act("p1", C.Stand, 1, 1)
    free = [e for e in h.settled() if e.stake == 0]
    assert [(e.returned, e.won, e.reason) for e in free] == [(0, 1000, "free split: win")]
    assert h.net("p1") == 2000
    assert h.s.phase == "betting"  # the round is over


def test_free_double_after_a_free_split_and_a_free_chip_that_loses(table):
    # 8 8 v 6: split; hand 0 takes a 3 (11): free double, a 10: 21. Hand 1 takes a 10: 18.
    # The dealer: 6 4 10 = 20. Hand 0 wins stake and free double; hand 1's free chip is lost,
    # which costs the player nothing.
    h = table(free_bet_profile(), "8S 6D 8H 3C 10S 10H 4C 10C")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    h.act("p1", C.Double, 1, 0)
    assert h.of(E.Acted)[-1].action == "free double"
    view = h.t.view("p1").boxes[0]
    assert [w.kind for w in view.wagers] == ["box", WagerKind.FREE_SPLIT, WagerKind.FREE_DOUBLE]  # which part is free
    h.act("p1", C.Stand, 1, 1)
    by_reason = sorted((e.reason, e.stake, e.won) for e in h.settled())
    assert by_reason == [
        ("free double: win", 0, 1000), ("free split: lose (the house's chip)", 0, 0), ("win", 1000, 1000)]
    assert h.net("p1") == 2000


def test_free_double_only_on_hard_9_to_11(table):
    # Hard 10 (6 4) doubles free and loses: the player loses only the stake.
    h = table(free_bet_profile(), "6S 9D 4H 2C 10S")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Double, 1)
    assert h.of(E.Acted)[-1].action == "free double"
    assert h.net("p1") == -1000  # 12 against the dealer's 19
    # Soft 19 (A 8) doubles too at Lugano, but with real chips.
    h = table(free_bet_profile(), "AS 6D 8H 2C 10S")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Double, 1)
    assert h.of(E.Acted)[-1].action == "double" and placed(h)[-1] == (1000, "box 1 double")


def test_tens_and_fours_split_only_with_real_chips(table):
    for pair in ("10S 6D 10H", "4S 6D 4H"):
        h = table(free_bet_profile(), pair)
        h.bet("p1", 1)
        h.close()
        h.act("p1", C.Split, 1)
        assert h.of(E.Acted)[-1].action == "split" and placed(h)[-1] == (1000, "box 1 split")


def test_free_splits_up_to_four_hands(table):
    h = table(free_bet_profile(), "8S 6D 8H 8C 8D 10S 10H 10C 10D")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1, 0)  # hand 0: 8 + 8 again
    h.act("p1", C.Split, 1, 0)  # hand 0: 8 + 8 again
    h.act("p1", C.Split, 1, 0)
    assert [a.action for a in h.of(E.Acted)] == ["free split"] * 3
    assert len(h.s.boxes[0].hands) == 4
    h.refused(C.Split(box=1, hand=0), "split_not_allowed", by="p1")


def test_dealer_22_pushes_every_hand_but_a_blackjack(table):
    # Box 1: 19 stands; box 2: a blackjack against a ten is held; the dealer makes 22.
    h = table(free_bet_profile(), "10S AS 10D 9C KC 2S 10H")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()
    h.act("p1", C.Stand, 1)
    assert h.of(E.DealerDone)[0].total == 22
    assert h.net("p1") == 0  # pushed
    assert h.net("p2") == 1500  # the blackjack is paid


def test_a_bust_free_split_hand_costs_nothing(table):
    # 8 8 v 6: split; hand 0: 8 10 stands; hand 1: 8 5, hits a 10: 23.
    h = table(free_bet_profile(), "8S 6D 8H 10S 5H 10C 10D 7C")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    h.act("p1", C.Stand, 1, 0)
    h.act("p1", C.Hit, 1, 1)
    (bust,) = [e for e in h.settled() if e.reason.startswith("bust")]
    assert (bust.stake, bust.won) == (0, 0)
    # The dealer: 6 10 7 = 23, so hand 0 wins.
    assert h.net("p1") == 1000


def test_a_voided_free_chip_returns_nothing(table):
    h = table(free_bet_profile(), "8S 6D 8H 10S")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    h.do(C.VoidRound(reason="misdeal"), by=Actor("c1", "croupier"))
    assert sorted(v.amount for v in h.voided()) == [0, 1000]


# -- the computed Free Bet strategy (not typed in) ------------------------------------------


def _act(hand, up, can_double=True, can_split=True):
    from blackjack.strategy import strategy_for
    from games.cards import parse_card

    cards = [parse_card(c) for c in hand.split()]
    return strategy_for(free_bet_profile()).action(cards, parse_card(up), can_double, can_split)


def test_free_bet_strategy_takes_the_free_chips_where_they_pay():
    assert _act("5S 5H", "6D") == "D"  # 5s: the free double on 10 beats two free-split 5s
    assert _act("9S 9H", "7D") == "P"  # 18 would stand; the free chip on a second hand is worth more
    assert _act("8S 8H", "10D") == "P"  # ENHC chart hits 16 v 10; the free split costs nothing extra
    assert _act("6S 3H", "AD") == "D"  # free double on hard 9 even against an ace
    assert _act("4S 4H", "6D") == "P" and _act("4S 4H", "7D") == "H"  # 4s split with real chips
    assert _act("10S QH", "6D") == "S"  # tens are never split


def test_free_bet_strategy_plays_for_the_push_on_22():
    # A dealer 22 pushes: standing on a stiff gains less, so 12 hits even against a 4-6
    # (the ordinary chart stands there), and soft doubles shrink.
    from blackjack.profiles import builtin
    from blackjack.strategy import strategy_for

    assert _act("10S 2H", "4D") == "H"
    assert strategy_for(builtin("lugano")).chart()["hard 12"][2] == "S"
    assert _act("AS 6H", "3D") == "H"  # soft 17 v 3: the ordinary chart doubles
