"""Side bets through the engine: rounds dealt from rigged shoes, settled to the amount
worked out by hand, and every kind of bad input refused with nothing changed."""

import msgspec

from blackjack import commands as C
from blackjack import events as E
from blackjack.jackpot import Hit, JackpotRoundReport, JackpotRoundStarted, MetersChanged
from blackjack.jackpot_pool import Enter, JackpotPaid, JackpotPool, JackpotWon, Open, Report
from blackjack.profiles import builtin
from games.commands import Actor
from helpers.blackjack import CROUPIER, decode_command

SERVER = Actor("system", "system")  # the server feeds the jackpot pool


def test_perfect_pairs_and_21_plus_3_settle_after_the_deal(table):
    # Box 1: 7H 7H (a perfect pair), up card 7H: a suited three of a kind pays as trips.
    h = table("lugano", "7H 5S 7H 7H 9S 10S")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.side("p1", 1, "perfect_pairs", 500)
    h.side("p1", 1, "21+3", 1000)
    h.side("p2", 2, "perfect_pairs", 500)
    h.close()
    pp = h.settled_kind("perfect pairs")
    assert [(e.player, e.stake, e.returned, e.won) for e in pp] == [("p2", 500, 0, 0), ("p1", 500, 500, 13000)]
    (t3,) = h.settled_kind("21+3")
    assert (t3.returned, t3.won, t3.reason) == (1000, 20000, "21+3: three of a kind")
    assert h.s.phase == "play"  # decided at once; the main game goes on


def test_21_plus_3_straight_flush(table):
    h = table("lugano", "5H 7H 6H")
    h.bet("p1", 1)
    h.side("p1", 1, "21+3", 500)
    h.close()
    (t3,) = h.settled_kind("21+3")
    assert t3.won == 30 * 500 and t3.reason == "21+3: straight flush"


def test_push_22_pays_eleven_to_one(table):
    # 19 stands; the dealer's 6 draws 6 then K: 22.
    h = table("lugano", "10S 6D 9C 6H KC")
    h.bet("p1", 1)
    h.side("p1", 1, "push_22", 500)
    h.close()
    h.act("p1", C.Stand, 1)
    (p22,) = h.settled_kind("push 22")
    assert (p22.returned, p22.won) == (500, 5500)
    assert h.net("p1") == 1000 + 5500  # without Free Bet the dealer's bust wins the hand


def test_push_22_makes_the_dealer_draw_even_when_every_box_is_bust(table):
    h = table("lugano", "10S 6D 6C KS 6H 10H")
    h.bet("p1", 1)
    h.side("p1", 1, "push_22", 500)
    h.close()
    h.act("p1", C.Hit, 1)  # 26
    (done,) = h.of(E.DealerDone)
    assert done.drew and done.total == 22
    assert h.net("p1") == -1000 + 5500


def test_push_22_loses_on_another_total(table):
    h = table("lugano", "10S 6D 9C 10H 5H")
    h.bet("p1", 1)
    h.side("p1", 1, "push_22", 500)
    h.close()
    h.act("p1", C.Stand, 1)
    (p22,) = h.settled_kind("push 22")
    assert (p22.returned, p22.won, p22.reason) == (0, 0, "push 22: no win")


# -- bad input --------------------------------------------------------------------------------


def test_bad_side_bets_are_refused_and_change_nothing(table):
    h = table("lugano", "")
    h.do(C.Sit(box=1), by="p1")
    h.bet("p1", 1)
    h.bet("p2", 1)  # behind p1's box
    h.bet("p3", 2, 2000)  # a free box: p3 holds it with the highest bet
    h.bet("p4", 2, 1000)
    S = C.PlaceSideBet
    h.refused(S(box=1, bet="perfect_pairs", amount=500), "no_main_bet", by="p5")
    h.refused(S(box=2, bet="perfect_pairs", amount=500), "no_main_bet", by="p1")
    h.refused(S(box=1, bet="perfect_pairs", amount=499), "below_minimum", by="p1")
    h.refused(S(box=1, bet="21+3", amount=10001), "above_maximum", by="p1")
    h.refused(S(box=1, bet="push_22", amount=100), "below_minimum", by="p1")
    h.refused(S(box=1, bet="blazing_7s", amount=1000), "blazing_fixed_stake", by="p1")
    h.refused(S(box=1, bet="blazing_7s", amount=500), "not_box_holder", by="p2")
    h.refused(S(box=2, bet="blazing_7s", amount=500), "not_box_holder", by="p4")
    h.refused(S(box=1, bet="perfect_pairs", amount=500, currency="EUR"), "wrong_currency", by="p1")
    h.refused(S(box=1, bet="perfect_pairs", amount=500), "players_only", by=Actor("c1", "croupier"))
    h.side("p1", 1, "blazing_7s", 500)
    h.side("p2", 1, "perfect_pairs", 500)  # a player behind may play the other side bets
    h.side("p3", 2, "blazing_7s", 500)
    h.refused(S(box=1, bet="blazing_7s", amount=500), "already_bet", by="p1")
    h.close()
    h.refused(S(box=1, bet="21+3", amount=500), "betting_closed", by="p1")  # after the first card


def test_side_bets_not_offered_and_blazing_in_chf_only(table):
    h = table("campione", "")
    h.bet("p1", 1)
    h.refused(C.PlaceSideBet(box=1, bet="perfect_pairs", amount=500), "side_bet_not_offered", by="p1")
    eur = msgspec.structs.replace(builtin("lugano"), name="lugano-eur", currency="EUR")
    h = table(eur, "")
    h.bet("p1", 1)
    h.refused(C.PlaceSideBet(box=1, bet="blazing_7s", amount=500), "wrong_currency", by="p1")
    h.side("p1", 1, "21+3", 500)  # the other side bets take the table's chips


def test_withdrawing_the_bet_takes_its_side_bets_back(table):
    h = table("lugano", "")
    h.bet("p1", 1)
    h.side("p1", 1, "perfect_pairs", 500)
    h.side("p1", 1, "21+3", 700)
    h.do(C.WithdrawSideBet(box=1, bet="21+3"), by="p1")
    assert [(v.amount, v.reason) for v in h.voided()] == [(700, "withdrawn")]
    h.do(C.WithdrawBet(box=1), by="p1")
    assert [(v.amount, v.reason) for v in h.voided()][1:] == [(1000, "withdrawn"), (500, "withdrawn with the bet")]
    assert h.s.side_bets == [] and h.t.view("p1").side_bets == []
    h.refused(C.WithdrawSideBet(box=1, bet="21+3"), "no_bet", by="p1")


# -- Blazing 7s through the round -------------------------------------------------------------


def test_blazing_7s_fixed_pays_envy_and_the_jackpot_report(table):
    # Box 1: 7H 7H with the up card 7H: the major. Box 2: 7D 2C: one 7, plus the envy bonus.
    h = table("lugano", "7H 7D 7H 7H 2C")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.side("p1", 1, "blazing_7s")
    h.side("p2", 2, "blazing_7s")
    h.close()
    (started,) = h.of(JackpotRoundStarted)
    assert (started.jackpot, started.table, started.round) == ("blazing7s-lugano", "t", 1)
    b7 = {e.player: e for e in h.settled_kind("blazing 7s")}
    assert (b7["p1"].stake, b7["p1"].returned, b7["p1"].won) == (500, 0, 0)  # the pool pays the major
    assert b7["p1"].reason == "blazing 7s: major jackpot, paid by the pool"
    assert (b7["p2"].returned, b7["p2"].won) == (0, 1000 + 50000)
    (rep,) = h.of(JackpotRoundReport)
    assert rep.stakes == 2 and rep.hits == [Hit("major", "p1", b7["p1"].wager, 1)]
    assert h.s.phase == "play" and not h.s.jackpot_entered


def test_blazing_7s_two_and_three_sevens(table):
    h = table("lugano", "7H 7S 7C 7D 7H 9D")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.side("p1", 1, "blazing_7s")
    h.side("p2", 2, "blazing_7s")
    h.close()
    # Up card 7C. Box 1: 7H 7D + 7C: three 7s of two colours. Box 2: 7S 7H + 7C: the same.
    b7 = {e.player: e.won for e in h.settled_kind("blazing 7s")}
    assert b7 == {"p1": 100000, "p2": 100000}
    h2 = table("lugano", "7H 7S 8C 7D 7H 9D")
    h2.bet("p1", 1)
    h2.side("p1", 1, "blazing_7s")
    h2.bet("p2", 2)
    h2.close()
    # Box 1: 7H 7D, up card 8C: two 7s, CHF 100 (the stake is not returned).
    (b,) = h2.settled_kind("blazing 7s")
    assert (b.returned, b.won, h2.of(JackpotRoundReport)[0].hits) == (0, 10000, [])


def test_blazing_7s_of_a_player_who_did_not_end_up_holding_the_box_goes_back(table):
    h = table("lugano", "")
    h.bet("p1", 3, 1000)
    h.side("p1", 3, "blazing_7s")  # p1 holds the free box for now
    h.bet("p2", 3, 2000)  # ... until p2 bets more
    h.close()
    (v,) = [v for v in h.voided() if v.amount == 500]
    assert v.player == "p1" and "box holder" in v.reason
    assert not h.of(JackpotRoundStarted) and not h.of(JackpotRoundReport)


def test_a_round_voided_before_the_deal_reports_no_stakes_to_the_pool(table):
    h = table("lugano", "", live=True)
    h.bet("p1", 1)
    h.side("p1", 1, "blazing_7s")
    h.close()
    h.do(C.Card(card=6, box=1), by=CROUPIER)
    h.do(C.VoidRound(reason="misdeal"), by=CROUPIER)
    assert [v.amount for v in h.voided()] == [1000, 500]
    (rep,) = h.of(JackpotRoundReport)
    assert (rep.stakes, rep.hits) == (0, [])


def test_the_meters_are_table_state_every_client_sees(table):
    h = table("lugano", "")
    ev = h.do(C.JackpotMeters(minor=512345, major=10004567), by=Actor("server", "system"))
    assert ev == [MetersChanged(jackpot="blazing7s-lugano", minor=512345, major=10004567)]
    assert h.t.view(None).jackpot_meters == [512345, 10004567]
    h.refused(C.JackpotMeters(minor=1, major=1), "staff_only", by="p1")
    h.refused(C.JackpotMeters(minor=-1, major=1), "bad_meters", by=Actor("server", "system"))
    h = table("campione", "")
    h.refused(C.JackpotMeters(minor=1, major=1), "side_bet_not_offered", by=Actor("server", "system"))


def test_side_bet_commands_decode_from_json():
    cmd = decode_command(b'{"type":"place_side_bet","box":2,"bet":"21+3","amount":500}')
    assert cmd == C.PlaceSideBet(box=2, bet="21+3", amount=500)
    ev = msgspec.json.decode(msgspec.json.encode(MetersChanged(jackpot="j", minor=1, major=2)), type=E.Event)
    assert ev == MetersChanged(jackpot="j", minor=1, major=2)


def test_two_linked_tables_hit_the_major_in_the_same_moment(table):
    """Two tables' rounds overlap and both deal three 7s of hearts. The one whose cards
    started coming first wins the major; the other wins the reset amount."""
    first = table("lugano", "7H 7H 7H 10S", table_id="lt1")
    second = table("lugano", "7H 7H 7H 10S", table_id="lt2")
    pool = JackpotPool(builtin("lugano").blazing_7s)
    pool.handle(Open(table="lt1"), SERVER)
    for h in (first, second):
        h.bet("p1", 1)
        h.side("p1", 1, "blazing_7s")
    paid = []
    # lt1 closes its bets first, but lt2's deal reports to the pool first.
    for h in (first, second):
        h.close()
        (started,) = h.of(JackpotRoundStarted)
        pool.handle(Enter(table=started.table, round=started.round), SERVER)
    for h in (second, first):
        (rep,) = h.of(JackpotRoundReport)
        paid += pool.handle(Report(table=rep.table, round=rep.round, stakes=rep.stakes, hits=rep.hits), SERVER)
    wins = [(e.table, e.amount, e.reset_amount) for e in paid if isinstance(e, JackpotWon)]
    assert wins == [("lt1", 10000000 + 20, False), ("lt2", 10000000, True)]  # lt2 adds its 20 after
    assert [(e.table, e.amount) for e in paid if isinstance(e, JackpotPaid)] == [("lt1", 10000100), ("lt2", 10000000)]
    assert pool.meters == (500000 + 2 * 10, 10000000 + 20)


def test_the_jackpot_winner_gets_no_envy_on_his_own_other_box(table):
    # Issue 12. p1 plays boxes 1 and 2, p2 box 3, all with Blazing 7s. Box 1: 7H 7H with the
    # up card 7H, the major. p1's box 2 (9 2) gets nothing (before the fix: the CHF 500
    # envy); p2's box 3 (8 3) gets the envy bonus of 50000.
    h = table("lugano", "7H 9S 8S 7H 7H 2C 3C")
    for pl, box in (("p1", 1), ("p1", 2), ("p2", 3)):
        h.bet(pl, box)
        h.side(pl, box, "blazing_7s")
    h.close()
    b7 = [(e.player, e.stake, e.returned, e.won) for e in h.settled_kind("blazing 7s")]
    # The house pays from its right: box 3 first.
    assert b7 == [("p2", 500, 0, 50000), ("p1", 500, 0, 0), ("p1", 500, 0, 0)]
    (rep,) = h.of(JackpotRoundReport)
    assert [(x.level, x.player, x.box) for x in rep.hits] == [("major", "p1", 1)]
