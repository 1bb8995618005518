"""A tournament table (Titano Art. 22-27): phases seated by the coordinator's orders, played
in points, worked out by hand from rigged shoes.

The shoe has one deck and its cut card 27 cards from the end: after the five burned cards,
21 cards are dealt before the cut card comes out, so a shoe lasts a few hands. The deal
follows the button (Titano Art. 2): it starts at box 7, so the first hand is dealt box 1
first; each hand moves it to the next seated box. The hole card comes last in the deal.
Limits are 10 and 100 points unless said otherwise.
"""

import msgspec
import pytest

from blackjack import commands as C
from blackjack import events as E
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable
from games.commands import Actor
from games.shoe import rigged_shoe
from games.wagers import StackIssued, StackReturned, WagerPlaced, WagerSettled, WagerVoided
from helpers.blackjack import CROUPIER, actor, stand_all
from helpers.refusals import assert_refused

ONE_DECK = msgspec.structs.replace(builtin("titano"), name="titano-1", decks=1, min_decks=1, cut_card_from_end=27)
SERVER = Actor("system:t", "system")
DIRECTOR = Actor("d1", "director")
ANN, BOB, CAT = Actor("ann"), Actor("bob"), Actor("cat")


def seating(order=1, stacks=(("ann", 1, 200), ("bob", 2, 200)), shoes=6, min_bet=10, max_bet=100, phase=1):
    entries = [C.TournamentEntry(box=b, player=p, stack=n) for p, b, n in stacks]
    return C.TournamentSeat(order=order, tournament="spring", phase=phase, shoes=shoes, min_bet=min_bet,
                            max_bet=max_bet, seats=entries)


class Tour:
    """A tournament table, seated, with a rigged shoe shuffled and cut by the house."""

    def __init__(self, cards="", seat=None, profile=ONE_DECK):
        self.t = BlackjackTable("tt", profile, min_bet=10, max_bet=100, tournament=True)
        self.events: list = []
        self.seated = self.do(seat or seating(), SERVER)
        self.shoe(cards)

    @property
    def s(self):
        return self.t.state

    @property
    def stacks(self):
        return dict(self.s.tournament.stacks)

    def shoe(self, cards=""):
        order, at = rigged_shoe(self.s.profile, cards)
        self.do(C.Shuffle(order=order), SERVER)
        if self.s.cut_entitled:
            self.do(C.Cut(at=at), Actor(self.s.cut_entitled))
        else:
            self.do(C.Cut(random_at=at), SERVER)

    def do(self, cmd, by):
        ev = self.t.handle(cmd, actor(by))
        self.events += ev
        return ev

    def bet(self, who, amount=10):
        return self.do(C.PlaceBet(box=self.s.seats.index(who.id), amount=amount), who)

    def close(self):
        return self.do(C.CloseBets(), SERVER)

    def act(self, who, cls, hand=0):
        return self.do(cls(box=self.s.seats.index(who.id), hand=hand), who)

    def refused(self, cmd, code, by):
        assert_refused(self.t, cmd, by, code)

    def of(self, cls):
        return [e for e in self.events if isinstance(e, cls)]


def after(events, cls):
    """The events after the last ``cls``."""
    i = max(i for i, e in enumerate(events) if isinstance(e, cls))
    return events[i + 1:]


# -- seating ----------------------------------------------------------------------------------


def test_seating_issues_the_stacks_and_starts_a_shoe_the_house_cuts():
    t = BlackjackTable("tt", ONE_DECK, min_bet=5, max_bet=50, tournament=True)
    ev = t.handle(seating(stacks=(("bob", 4, 200), ("ann", 2, 150))), SERVER)
    assert ev == [
        E.TournamentSeated(order=1, tournament="spring", phase=1, shoes=6, min_bet=10, max_bet=100,
                           seats={"ann": 2, "bob": 4}, stacks={"ann": 150, "bob": 200}),
        StackIssued("ann", 150, key="p1", reason="tournament points"),
        StackIssued("bob", 200, key="p1", reason="tournament points"),
    ]
    s = t.state
    assert s.seats == ["", "", "ann", "", "bob", "", "", ""]
    assert (s.min_bet, s.max_bet, s.phase, s.tournament_order, s.cut_entitled) == (10, 100, "shuffle", 1, "")
    assert s.tournament.stacks == {"ann": 150, "bob": 200} and s.tournament.hand == 0
    view = t.view("cat").tournament  # everyone sees the points (Art. 27)
    assert (view.tournament, view.phase, view.shoes, view.stacks, view.done) == ("spring", 1, 6,
                                                                                {"ann": 150, "bob": 200}, False)


def test_seating_refusals():
    t = BlackjackTable("tt", ONE_DECK, min_bet=10, max_bet=100, tournament=True)
    twice = (("ann", 1, 200), ("ann", 2, 200))
    assert_refused(t, seating(stacks=twice), SERVER, "invalid_seating")
    assert_refused(t, seating(stacks=(("ann", 1, 200), ("bob", 1, 200))), SERVER, "invalid_seating")
    assert_refused(t, seating(stacks=(("floor:ann", 1, 200),)), SERVER, "invalid_seating")
    assert_refused(t, seating(min_bet=100, max_bet=10), SERVER, "bad_limits")
    assert_refused(t, C.Shuffle(), SERVER, "no_tournament_phase")
    h = Tour()
    h.refused(seating(order=2), "phase_in_play", SERVER)
    h.refused(seating(order=1), "order_applied", SERVER)  # sent again: applied once
    h.bet(ANN)
    h.bet(BOB)
    h.close()
    h.refused(seating(order=2), "round_in_play", SERVER)


def test_the_orders_are_the_servers_and_a_tournament_tables_only():
    h = Tour()
    orders = [seating(order=5), C.TournamentPause(order=5, paused=True), C.TournamentExpel(order=5, player="ann"),
              C.TournamentEnd(order=5)]
    for cmd in orders:
        for by in (ANN, CROUPIER, DIRECTOR):
            h.refused(cmd, "server_only", by)
    cash = BlackjackTable("c", ONE_DECK, min_bet=10, max_bet=100)
    for cmd in orders:
        assert_refused(cash, cmd, SERVER, "not_a_tournament_table")
    assert cash.legal_commands(SERVER) == ["shuffle"]
    h.refused(C.TournamentPause(order=1, paused=True), "order_applied", SERVER)


def test_seats_are_drawn_and_kept():
    h = Tour()
    h.refused(C.Sit(box=3), "tournament_table", CAT)
    h.refused(C.Leave(), "tournament_table", ANN)
    h.refused(C.ReleaseSeat(box=1, reason="gone"), "tournament_table", SERVER)
    h.refused(C.PlaceSideBet(box=1, bet="perfect_pairs", amount=10), "tournament_table", ANN)
    h.refused(C.CloseTable(reason="closing"), "phase_in_play", DIRECTOR)
    h.refused(C.PlaceBet(box=1, amount=10, player="ann"), "tournament_table", CROUPIER)
    h.refused(C.PlaceBet(box=1, amount=10), "not_your_seat", BOB)
    h.refused(C.PlaceBet(box=3, amount=10), "not_your_seat", CAT)
    h.refused(C.PlaceBet(box=1, amount=10, player="bob"), "players_only", ANN)
    h.refused(C.PlaceBet(box=1, amount=101), "above_maximum", ANN)
    h.refused(C.PlaceBet(box=1, amount=9), "below_minimum", ANN)
    assert h.t.legal_commands(ANN) == ["place_bet"]
    assert h.t.legal_commands(CAT) == []
    h.bet(ANN)
    h.refused(C.PlaceBet(box=1, amount=10), "already_bet", ANN)
    assert h.t.legal_commands(ANN) == ["withdraw_bet"]
    assert h.t.legal_commands(SERVER) == ["close_bets", "tournament_pause", "tournament_expel", "tournament_end"]


def test_cash_tables_still_need_a_bet_to_close():
    cash = BlackjackTable("c", ONE_DECK, min_bet=10, max_bet=100)
    order, at = rigged_shoe(ONE_DECK, "")
    cash.handle(C.Shuffle(order=order), SERVER)
    cash.handle(C.Cut(random_at=at), SERVER)
    assert_refused(cash, C.CloseBets(), SERVER, "no_bets")
    assert cash.view("x").tournament is None


# -- absent players, all in, points ------------------------------------------------------------


def test_an_absent_player_is_charged_the_minimum_each_hand():
    # Hand 1: ann 10 K (20) against 7 + 10 (17): she wins 10; bob is charged 10.
    h = Tour("10 7 K 10")
    h.bet(ANN)
    ev = h.close()
    wid = ev[0].wager
    assert ev[:3] == [
        WagerPlaced(wid, "bob", 10, "absent charge"),
        WagerSettled(wid, "bob", 10, 0, 0, "absent: the minimum for a hand not played (Art. 27)"),
        E.AbsentCharged(player="bob", hand=1, amount=10),
    ]
    assert isinstance(ev[3], E.BetsClosed)
    h.act(ANN, C.Stand)
    assert h.stacks == {"ann": 210, "bob": 190}
    assert h.of(E.HandStandings)[-1] == E.HandStandings(phase=1, hand=1, stacks={"ann": 210, "bob": 190},
                                                         shoes_done=0)
    # Hand 2: nobody bets: both are charged and no card is dealt.
    pos = h.s.pos
    ev = h.close()
    assert [type(e) for e in ev] == [WagerPlaced, WagerSettled, E.AbsentCharged] * 2 + [
        E.RoundSettled, E.ButtonMoved, E.HandStandings, E.RoundOpened]
    assert h.stacks == {"ann": 200, "bob": 180} and h.s.pos == pos
    assert ev[-2] == E.HandStandings(phase=1, hand=2, stacks={"ann": 200, "bob": 180}, shoes_done=0)
    assert h.s.tournament.hand == 3


def test_all_in_below_the_minimum_and_elimination():
    # ann has 5 points, less than the minimum: she bets them all. 10 6 against 10 + 8: lost.
    h = Tour("10 10 6 8", seating(stacks=(("ann", 1, 5), ("bob", 2, 200))))
    h.refused(C.PlaceBet(box=1, amount=4), "below_minimum", ANN)
    h.refused(C.PlaceBet(box=1, amount=6), "insufficient_points", ANN)
    h.bet(ANN, 5)
    assert h.stacks["ann"] == 0
    h.close()  # bob is charged 10
    h.act(ANN, C.Stand)
    tail = after(h.events, E.ButtonMoved)
    assert tail[:2] == [
        E.PlayerEliminated(player="ann", phase=1, hand=1, stack_before=5),
        E.HandStandings(phase=1, hand=1, stacks={"bob": 190}, shoes_done=0),
    ]
    assert isinstance(tail[2], E.RoundOpened)
    assert h.s.seats[1] == "" and h.stacks == {"bob": 190}


def test_two_eliminated_in_one_hand_and_a_lone_player_plays_on():
    # ann and bob bet their last 10 each and lose (10 6 and 10 7 against 10 + 9); cat, absent, pays 10.
    seat = seating(stacks=(("ann", 1, 10), ("bob", 2, 10), ("cat", 3, 50)))
    h = Tour("10 10 10 6 7 9", seat)
    h.bet(ANN)
    h.bet(BOB)
    h.close()
    h.act(ANN, C.Stand)
    h.act(BOB, C.Stand)
    elim = h.of(E.PlayerEliminated)
    assert elim == [E.PlayerEliminated(player="ann", phase=1, hand=1, stack_before=10),
                    E.PlayerEliminated(player="bob", phase=1, hand=1, stack_before=10)]
    assert h.stacks == {"cat": 40} and h.s.seats[1:4] == ["", "", "cat"]
    assert h.s.phase == "betting" and not h.of(E.TournamentTableDone)  # Art. 27: cat plays on alone


def test_insufficient_points_refuses_insurance_double_and_split():
    # ann (25 points) bets 20 on 8 8, bob bets his last 10 on 9 2; the dealer shows an ace.
    seat = seating(stacks=(("ann", 1, 25), ("bob", 2, 10)))
    h = Tour("8 9 A 8 2 7 3", seat)
    h.refused(C.PlaceBet(box=1, amount=26), "insufficient_points", ANN)
    h.bet(ANN, 20)
    h.bet(BOB, 10)
    h.close()
    assert h.s.phase == "offers"
    assert "insure" not in h.t.legal_commands(BOB)  # no point left to insure with
    h.refused(C.Insure(box=2, amount=1), "insufficient_points", BOB)
    assert "insure" in h.t.legal_commands(ANN)
    h.refused(C.Insure(box=1, amount=10), "insufficient_points", ANN)
    h.do(C.Insure(box=1, amount=5), ANN)
    h.do(C.DeclineOffer(box=2), BOB)
    assert h.stacks == {"ann": 0, "bob": 0}
    assert h.t.legal_commands(ANN) == ["hit", "stand"]  # 8 8: no points to split or double
    h.refused(C.Split(box=1), "insufficient_points", ANN)
    h.refused(C.Double(box=1), "insufficient_points", ANN)
    h.act(ANN, C.Stand)
    assert h.t.legal_commands(BOB) == ["hit", "stand"]
    h.refused(C.Double(box=2), "insufficient_points", BOB)
    h.act(BOB, C.Hit)  # 9 2 3: 14
    h.act(BOB, C.Stand)
    # The hole card 7: dealer A 7, soft 18; insurance lost; 16 and 14 lose: both are out.
    assert [e.player for e in h.of(E.PlayerEliminated)] == ["ann", "bob"]
    assert h.of(E.TournamentTableDone)[-1].reason == "nobody left"


# -- Art. 27: the excess over the maximum --------------------------------------------------------


@pytest.mark.parametrize(("third", "won", "returned", "stack"), [("10", 20, 80, 400), ("2", 0, 60, 200)])
def test_a_double_over_the_maximum_is_not_paid_beyond_it(third, won, returned, stack):
    # ann bets 80 on 5 6 and doubles: 160 on the hand, 60 of it above the maximum of 100.
    # Dealer 10 + 7. Drawing a 10 (21) she wins: the box pays 80, the double only 20 and its
    # 80 come back. Drawing a 2 (13) she loses: the box's 80, and 20 of the double (60 back).
    h = Tour(f"5 10 6 7 {third}", seating(stacks=(("ann", 1, 300),)))
    h.bet(ANN, 80)
    h.close()
    h.act(ANN, C.Double)
    double = [w for w in h.events if isinstance(w, WagerPlaced)][-1]
    dbl, box = [e for e in h.events if isinstance(e, WagerSettled)]  # the outer pile first
    assert double.amount == 80
    assert (dbl.wager, dbl.stake, dbl.returned, dbl.won) == (double.wager, 80, returned, won)
    assert (box.stake, box.won) == (80, 80 if won else 0)
    assert h.stacks == {"ann": stack}


# -- the phase -------------------------------------------------------------------------------------


def test_the_phase_ends_after_its_shoes():
    # One shoe. Hand 1 (box 1 first): ann 10 Q and bob 9 9 against J + 7: both win 10.
    # Hand 2 (box 2 first): bob K J wins, ann 8 8 loses, against 9 + 8.
    # Hand 3 (box 1 first): ann 10 Q (20), bob 7 K (17); the dealer's 2 + 3 draws 2, 3 and
    # 7 (17): ann wins, bob pushes. The 7 is the 21st card: the cut card comes out, the last hand.
    cards = "10 9 J Q 9 7  K 8 9 J 8 8  10 7 2 Q K 3 2 3 7"
    h = Tour(cards, seating(shoes=1))
    for _ in range(3):
        h.bet(ANN)
        h.bet(BOB)
        h.close()
        stand_all(h)
    tail = after(h.events, E.ButtonMoved)
    stacks = {"ann": 210, "bob": 220}
    assert tail == [
        E.HandStandings(phase=1, hand=3, stacks=stacks, shoes_done=1),
        E.ShoeEnded(cut_entitled=""),
        StackReturned("ann", 210, "p1", "the phase is over"),
        StackReturned("bob", 220, "p1", "the phase is over"),
        E.TournamentTableDone(phase=1, hand=3, stacks=stacks, reason=""),
    ]
    s = h.s
    assert s.phase == "closed" and s.seats == [""] * 8 and s.order == [] and s.tournament.done
    assert s.tournament.stacks == {}
    assert h.t.legal_commands(SERVER) == ["tournament_seat"]
    h.refused(C.TournamentEnd(order=2), "phase_over", SERVER)
    h.refused(C.Shuffle(), "no_tournament_phase", SERVER)
    # The final table: a new phase, seated anew with fresh stacks.
    h.do(seating(order=2, phase=2, stacks=(("bob", 3, 200),)), SERVER)
    assert s.phase == "shuffle" and s.seats[3] == "bob" and s.tournament.stacks == {"bob": 200}


def test_a_lone_player_plays_every_shoe():
    # bob bets his last 10 and loses (9 7 against 10 + 8); ann plays on alone through shoe 2.
    h = Tour("10 9 10 8 7 8", seating(shoes=2, stacks=(("ann", 1, 200), ("bob", 2, 10))))
    h.bet(ANN)
    h.bet(BOB)
    h.close()
    stand_all(h)
    assert h.stacks == {"ann": 200}
    while not h.of(E.TournamentTableDone):
        if h.s.phase == "shuffle":
            h.shoe()
        h.bet(ANN)
        h.close()
        stand_all(h)
    assert len(h.of(E.ShoeEnded)) == 2 and h.s.tournament.shoes_done == 2
    assert h.of(E.TournamentTableDone)[0].stacks == h.of(E.HandStandings)[-1].stacks


# -- the orders ------------------------------------------------------------------------------------


def test_a_paused_table_finishes_the_hand_then_rests():
    h = Tour("10 7 K 10")
    h.bet(ANN)
    h.close()
    h.do(C.TournamentPause(order=2, paused=True, reason="break"), SERVER)
    assert h.events[-1] == E.TournamentPaused(order=2, paused=True, reason="break")
    h.act(ANN, C.Stand)  # the hand in play finishes
    assert h.s.phase == "betting"
    h.refused(C.PlaceBet(box=1, amount=10), "tournament_paused", ANN)
    h.refused(C.CloseBets(), "tournament_paused", SERVER)
    assert h.t.legal_commands(ANN) == [] and "close_bets" not in h.t.legal_commands(SERVER)
    assert h.t.view("ann").tournament.paused
    h.do(C.TournamentPause(order=3, paused=False), SERVER)
    h.bet(ANN)
    h.close()


def test_expelled_between_hands_his_bet_and_stack_go_back():
    h = Tour()
    h.bet(ANN, 30)
    ev = h.do(C.TournamentExpel(order=2, player="ann", reason="passed chips"), SERVER)
    assert [type(e) for e in ev] == [WagerVoided, StackReturned, E.PlayerExpelled]
    assert ev[1:] == [
        StackReturned("ann", 200, "p1-expelled", "expelled: passed chips"),
        E.PlayerExpelled(order=2, player="ann", phase=1, hand=1, stack=200, reason="passed chips"),
    ]
    assert h.s.seats[1] == "" and h.stacks == {"bob": 200} and h.s.tournament_order == 2
    # Expelled again (an order racing his elimination or expulsion): carried out, nothing moves.
    assert h.do(C.TournamentExpel(order=3, player="ann"), SERVER) == [
        E.PlayerExpelled(order=3, player="ann", phase=1, hand=1, stack=0, reason="")]
    assert h.stacks == {"bob": 200} and h.s.tournament_order == 3
    ev = h.do(C.TournamentExpel(order=4, player="bob"), SERVER)  # nobody left: the phase ends at once
    assert ev == [
        StackReturned("bob", 200, "p1-expelled", "expelled"),
        E.PlayerExpelled(order=4, player="bob", phase=1, hand=1, stack=200, reason=""),
        E.ShoeEnded(cut_entitled=""),
        E.TournamentTableDone(phase=1, hand=1, stacks={}, reason="nobody left"),
    ]
    assert h.s.phase == "closed"


def test_expelled_during_a_hand_when_it_ends():
    h = Tour("10 9 7 K 9 10")  # ann 20, bob 18, dealer 17: both win 10
    h.bet(ANN)
    h.bet(BOB)
    h.close()
    assert h.do(C.TournamentExpel(order=2, player="ann", reason="passed chips"), SERVER) == []
    assert h.s.tournament_order == 2 and h.stacks == {"ann": 190, "bob": 190}
    h.act(ANN, C.Stand)
    h.act(BOB, C.Stand)
    assert after(h.events, E.ButtonMoved)[:3] == [
        StackReturned("ann", 210, "p1-expelled", "expelled: passed chips"),
        E.PlayerExpelled(order=2, player="ann", phase=1, hand=1, stack=210, reason="passed chips"),
        E.HandStandings(phase=1, hand=1, stacks={"bob": 210}, shoes_done=0),
    ]
    assert h.s.seats[1] == "" and h.s.phase == "betting"


def test_the_end_between_hands_and_during_a_hand():
    h = Tour()
    h.bet(ANN, 30)
    ev = h.do(C.TournamentEnd(order=2, reason="cancelled"), SERVER)
    assert ev[1:] == [
        E.ShoeEnded(cut_entitled=""),
        StackReturned("ann", 200, "p1", "the phase is over"),
        StackReturned("bob", 200, "p1", "the phase is over"),
        E.TournamentTableDone(phase=1, hand=1, stacks={"ann": 200, "bob": 200}, reason="cancelled", order=2),
    ]
    assert isinstance(ev[0], WagerVoided) and h.s.phase == "closed"
    h = Tour("10 7 K 10")  # ann 20 against 17: she wins 10
    h.bet(ANN)
    h.close()  # bob is charged 10
    assert h.do(C.TournamentEnd(order=2), SERVER) == []
    h.act(ANN, C.Stand)
    done = h.of(E.TournamentTableDone)
    assert done == [E.TournamentTableDone(phase=1, hand=1, stacks={"ann": 210, "bob": 190},
                                          reason="the tournament ended the phase", order=2)]
    assert h.s.phase == "closed" and not h.of(E.RoundOpened)[1:]


def test_the_cut_is_not_offered_to_a_player_who_has_left():
    # The shoe of test_the_phase_ends_after_its_shoes, in a phase of two shoes: after hand 3
    # the button is at box 1, so ann is offered the next cut (Titano Art. 4); expelled, the
    # house cuts.
    cards = "10 9 J Q 9 7  K 8 9 J 8 8  10 7 2 Q K 3 2 3 7"
    h = Tour(cards, seating(shoes=2))
    for _ in range(3):
        h.bet(ANN)
        h.bet(BOB)
        h.close()
        stand_all(h)
    assert (h.s.phase, h.s.cut_entitled) == ("shuffle", "ann")
    h.do(C.TournamentExpel(order=2, player="ann"), SERVER)
    assert h.s.cut_entitled == "" and h.s.tournament.shoes_done == 1
    h.shoe()  # the house cuts
    assert h.s.phase == "betting" and h.s.tournament.hand == 4


def test_a_shoe_ended_by_the_staff_ends_with_the_hand_already_opened():
    # Every hand is played (Art. 27): the hand open for bets is played, then the shoe ends.
    h = Tour(seat=seating(shoes=2))
    assert h.do(C.Reshuffle(), CROUPIER) == [E.ReshuffleOrdered(by="c1", after_round=True)]
    ev = h.close()  # nobody bet: both are charged 10
    assert ev[-2:] == [E.HandStandings(phase=1, hand=1, stacks={"ann": 190, "bob": 190}, shoes_done=1),
                       E.ShoeEnded(cut_entitled="ann")]  # the button moved to her box (Art. 4)
    assert h.s.phase == "shuffle"
