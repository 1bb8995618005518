"""The shoe: shuffle checks, cut, cut card and last round, short shoes, live cards."""

import msgspec
import pytest

from blackjack import commands as C
from blackjack import events as E
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable
from games.cards import parse_card
from games.commands import Actor
from games.errors import GameError
from games.rng import SeededRng
from games.shoe import commitment, shuffle_order
from helpers.blackjack import CROUPIER, stand_all


def test_shuffle_must_be_the_whole_shoe_and_is_committed():
    p = builtin("lugano")
    t = BlackjackTable("t", p, min_bet=1000, max_bet=10000)
    order = shuffle_order(p, SeededRng(3))
    with pytest.raises(GameError) as exc:
        t.handle(C.Shuffle(order=order[:-1] + [order[0]]), CROUPIER)
    assert exc.value.code == "bad_shuffle"
    with pytest.raises(GameError) as exc:
        t.handle(C.Shuffle(order=order), Actor("p1"))
    assert exc.value.code == "staff_only"
    ev = t.handle(C.Shuffle(order=order), CROUPIER)
    assert ev[0].commitment == commitment(order) and len(order) == 312


def test_cut_bounds_burn_and_random_cut_on_a_pass():
    p = builtin("titano")
    t = BlackjackTable("t", p, min_bet=1000, max_bet=10000)
    order = shuffle_order(p, SeededRng(3))
    t.handle(C.Shuffle(order=order), CROUPIER)
    for bad in (p.cut_margin - 1, 312 - p.cut_margin + 1):
        with pytest.raises(GameError) as exc:
            t.handle(C.Cut(at=bad), CROUPIER)
        assert exc.value.code == "cut_out_of_bounds"
    with pytest.raises(GameError) as exc:
        t.handle(C.Cut(at=None), Actor("system:timeout", "system"))
    assert exc.value.code == "cut_point_missing"
    ev = t.handle(C.Cut(at=None, random_at=100), Actor("system:timeout", "system"))
    assert ev[0] == E.ShoeCut(by="system:timeout", at=100, chosen=False)
    s = t.state
    assert s.order == order[100:] + order[:100]
    assert s.pos == 5 and s.cut_index == 312 - p.cut_card_from_end


def test_cut_card_ends_the_shoe_after_the_round_even_as_its_first_card(table):
    # Six decks, the cut card 52 cards after the burn: 13 rounds of exactly 4 cards
    # (player 10 K stands, dealer J 7), then the 14th round starts on the cut card.
    p = msgspec.structs.replace(builtin("lugano"), name="short", cut_card_from_end=312 - 57)
    h = table(p, "10 J K 7 " * 14)
    for rnd in range(1, 15):
        h.bet("p1", 1)
        h.close()
        stand_all(h)
        out = h.of(E.CutCardOut)
        if rnd < 14:
            assert not out and h.s.phase == "betting"
    assert h.of(E.CutCardOut) == [E.CutCardOut(round=14)]
    settled = h.of(E.RoundSettled)
    assert len(settled) == 14 and settled[-1].last_of_shoe and not settled[-2].last_of_shoe
    assert h.s.phase == "shuffle"
    # Campione Art. 30: the player who "received" the cut card is offered the next cut.
    assert h.s.cut_entitled == "p1"
    h.refused(C.Shuffle(order=[]), "staff_only", by="p1")
    h.do(C.Shuffle(order=shuffle_order(p, SeededRng(1))), by=CROUPIER)
    h.refused(C.Cut(at=50), "not_entitled_to_cut", by=CROUPIER)
    h.refused(C.Cut(at=50), "not_entitled_to_cut", by="p2")
    h.do(C.Cut(at=50), by="p1")
    assert h.s.phase == "betting"


def short_profile(name, void):
    base = builtin(name)
    return msgspec.structs.replace(
        base, name=f"{name}-1deck", decks=1, min_decks=1, cut_card_from_end=0, cut_margin=5,
        void_round_on_short_shoe=void,
    )


def test_titano_voids_a_round_the_shoe_cannot_finish(table):
    # One deck, no cut card: 47 cards after the burn. Play till a round runs short.
    h = table(short_profile("titano", True), "")
    for _ in range(40):
        if h.s.phase != "betting":
            break
        h.bet("p1", 1)
        h.close()
        stand_all(h)
    assert h.of(E.ShoeRanShort) == [E.ShoeRanShort(action="void")]
    assert h.s.phase == "shuffle"
    last_round = h.of(E.RoundVoided)[-1].round
    voided = h.voided()
    assert voided and all(f":r{last_round}:" in w for w in voided)
    assert h.of(E.RoundSettled)[-1].round == last_round - 1


def test_a_short_shoe_elsewhere_reshuffles_the_discards(table):
    h = table(short_profile("lugano", False), "")
    for _ in range(40):
        if h.s.phase == "reshuffle":
            break
        h.bet("p1", 1)
        h.close()
        stand_all(h)
    assert h.s.phase == "reshuffle"
    on_table = [c for b in h.s.boxes for hd in b.hands for c in hd.cards] + h.s.dealer
    with pytest.raises(GameError) as exc:
        h.t.handle(C.Shuffle(order=list(range(52))), CROUPIER)
    assert exc.value.code == "bad_shuffle"
    rest = [c for c in range(52) if c not in on_table]
    h.do(C.Shuffle(order=rest), by=CROUPIER)
    stand_all(h)
    assert h.of(E.RoundSettled)[-1].last_of_shoe and h.s.phase == "shuffle"


# -- live tables ---------------------------------------------------------------------------


def card(h, text, box, hand=0):
    return h.do(C.Card(card=parse_card(text), box=box, hand=hand), by=CROUPIER)


def test_live_cards_are_checked_against_the_shoe_and_the_dealing_order(table):
    h = table("campione", live=True)
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()
    h.refused(C.Card(card=parse_card("AS"), box=2), "wrong_recipient", by=CROUPIER)
    h.refused(C.Card(card=parse_card("AS"), box=0), "wrong_recipient", by=CROUPIER)
    h.refused(C.Card(card=52, box=1), "not_a_card", by=CROUPIER)
    h.refused(C.Card(card=0, box=1), "staff_only", by="p1")
    card(h, "AS", 1)
    card(h, "AS", 2)
    card(h, "AS", 0)
    card(h, "AS", 1)  # four decks: the fourth ace of spades
    h.refused(C.Card(card=parse_card("AS"), box=2), "card_not_in_shoe", by=CROUPIER)
    h.refused(C.PlaceBet(box=3, amount=1000), "betting_closed", by="p3")
    card(h, "9D", 2)
    assert h.s.phase == "offers"  # dealer's ace
    h.do(C.CloseOffers(), by=CROUPIER)
    # Box 1 holds A A (soft 12): it hits, and the card goes to box 1 only.
    h.do(C.Hit(box=1), by="p1")
    h.refused(C.Card(card=parse_card("5H"), box=2), "wrong_recipient", by=CROUPIER)
    card(h, "5H", 1)
    h.do(C.Stand(box=1), by="p1")
    h.do(C.Stand(box=2), by="p2")
    card(h, "7C", 0)  # dealer A 7: soft 18, stands
    assert h.s.phase == "betting"
    assert h.net("p1") == -1000 and h.net("p2") == 1000  # 17 loses, A 9 = 20 wins


def test_live_cut_card_reported_by_the_croupier(table):
    h = table("lugano", live=True)
    h.refused(C.CutCardOut(), "no_round", by=CROUPIER)
    h.bet("p1", 1)
    h.close()
    h.do(C.CutCardOut(), by=CROUPIER)
    h.refused(C.CutCardOut(), "cut_card_already_out", by=CROUPIER)
    for c, box in (("10S", 1), ("9S", 0), ("KH", 1)):
        card(h, c, box)
    h.do(C.Stand(box=1), by="p1")
    card(h, "8D", 0)  # dealer 17
    assert h.s.phase == "shuffle" and h.net("p1") == 1000


def test_rng_table_refuses_entered_cards(table):
    h = table("lugano", "")
    h.bet("p1", 1)
    h.close()
    h.refused(C.Card(card=0, box=1), "not_live", by=CROUPIER)
    h.refused(C.CutCardOut(), "not_live", by=CROUPIER)


@pytest.mark.parametrize(
    "second, hole, settled",
    [("9S", "9D", (15000, 15000, 10000)), ("7S", "QD", (15000, 5000, 0))],  # 19 v 17 wins, 17 v 18 loses
)
def test_chips_over_the_maximum_on_a_live_felt_art_9(table, second, hole, settled):
    # Titano, maximum 10000: the croupier enters the 15000 a floor player (cash chips on
    # the felt) put down. The excess 5000 is never paid on a win and comes back on a loss.
    h = table("titano", live=True)
    h.refused(C.PlaceBet(box=1, amount=15000), "above_maximum", by="p1")
    h.refused(C.PlaceBet(box=1, amount=15000), "players_only", by=CROUPIER)
    h.do(C.PlaceBet(box=1, amount=15000, player="floor:p1"), by=CROUPIER)
    h.close()
    for c, box in (("10S", 1), ("8D", 0), (second, 1), (hole, 0)):
        card(h, c, box)
    h.do(C.Stand(box=1), by=CROUPIER)  # the floor player's "no card", entered by the croupier
    assert h.s.phase == "betting"
    (w,) = h.settled().values()
    assert (w.stake, w.returned, w.won) == settled


def _titano_round(h):
    h.bet("p1", 2)
    h.bet("p2", 5)
    h.close()
    stand_all(h)


def test_titano_offers_the_cut_to_the_player_at_the_button_art_4(table):
    # p1 sits at box 2, p2 at box 5. The button starts at box 7 and moves after each round
    # to the next player clockwise: 2, then 5.
    h = table("titano", "10 10 9 9 8 8 " * 2)
    h.do(C.Sit(box=2), by="p1")
    h.do(C.Sit(box=5), by="p2")
    _titano_round(h)
    assert h.s.button == 2
    h.bet("p1", 2)
    h.bet("p2", 5)
    h.close()
    h.do(C.Reshuffle(), by=CROUPIER)  # the shoe ends after this round
    stand_all(h)
    assert h.s.button == 5 and h.s.phase == "shuffle" and h.s.cut_entitled == "p2"
    assert h.of(E.ShoeEnded)[-1] == E.ShoeEnded(cut_entitled="p2")
    # A shoe ended between rounds: the cut still goes to the button (before the fix, to
    # nobody: the staff cut).
    h2 = table("titano", "10 10 9 9 8 8")
    h2.do(C.Sit(box=2), by="p1")
    h2.do(C.Sit(box=5), by="p2")
    _titano_round(h2)
    h2.do(C.Reshuffle(), by=CROUPIER)
    assert h2.s.phase == "shuffle" and h2.s.cut_entitled == "p1"
    h2.do(C.Shuffle(order=shuffle_order(h2.profile, SeededRng(2))), by=CROUPIER)
    h2.refused(C.Cut(at=50), "not_entitled_to_cut", by=CROUPIER)
    h2.do(C.Cut(at=50), by="p1")


def test_the_commitment_hashes_a_salt_with_the_order():
    # sha256(salt || order bytes), worked out with hashlib directly.
    import hashlib

    p = builtin("campione")
    order = shuffle_order(p, SeededRng(4))
    t = BlackjackTable("t", p, min_bet=1000, max_bet=10000)
    ev = t.handle(C.Shuffle(order=order, salt="9f2c"), CROUPIER)
    assert ev[0].commitment == hashlib.sha256(b"9f2c" + bytes(order)).hexdigest()
    assert ev[0].commitment != commitment(order)
