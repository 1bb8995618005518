"""Croupier actions, refused input, persistence and what a viewer sees."""

import msgspec
import pytest

from blackjack import commands as C
from blackjack import events as E
from blackjack.state import Offer, TableState
from blackjack.table import BlackjackTable
from games.cards import parse_card
from games.commands import Actor
from games.errors import GameError
from helpers.blackjack import CROUPIER, decode_command, decode_state, encode_state


def two_boxes(h):
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()


def test_void_the_whole_round_returns_every_stake(table):
    h = table("campione", "6 10 7 5 7")
    h.refused(C.VoidRound(), "no_round", by=CROUPIER)
    two_boxes(h)
    h.act("p1", C.Double, 1)
    h.refused(C.VoidRound(), "staff_only", by="p1")
    h.do(C.VoidRound(reason="misdeal"), by=Actor("chef", "chef"))
    assert sorted(e.amount for e in h.voided().values()) == [1000, 1000, 1000]
    assert h.of(E.RoundVoided) == [E.RoundVoided(round=1, by="chef", reason="misdeal", boxes=[])]
    assert h.s.phase == "betting" and h.s.round == 2 and not h.settled()


def test_void_one_box_only_art_19(table):
    h = table("campione", "10 10 7 9 8 10")
    two_boxes(h)
    h.do(C.VoidRound(reason="box 1 had three cards", boxes=[1]), by=CROUPIER)
    assert [v.player for v in h.voided().values()] == ["p1"]
    h.act("p2", C.Stand, 2)
    # Dealer 7 10 = 17 against p2's 18.
    assert h.net("p2") == 1000 and h.net("p1") == 0


def test_burn_a_card_turned_during_the_drawing(table):
    h = table("campione", "10 10 7 5 8 2 9 10")
    two_boxes(h)
    h.refused(C.BurnCard(card=0), "not_live", by=CROUPIER)
    h.do(C.BurnCard(), by=CROUPIER)  # the 2 is burned
    h.act("p1", C.Hit, 1)  # 15 + 9
    assert h.of(E.CardBurned) == [E.CardBurned(by="c1", card=parse_card("2S"))]
    assert [e.card for e in h.of(E.CardDealt)][-1] == parse_card("9S")


def test_a_misdrawn_card_goes_to_the_next_who_asks_art_24(table):
    h = table("campione", "10 10 7 9 5 3 K")
    two_boxes(h)
    h.do(C.ExposeCard(), by=CROUPIER)
    assert h.t.view("p1").exposed == parse_card("3S")
    h.refused(C.ExposeCard(), "card_already_exposed", by=CROUPIER)
    h.act("p1", C.Stand, 1)  # p1 (19) declines it
    h.act("p2", C.Hit, 2)  # p2 (15) takes it: 18
    assert h.s.boxes[1].hands[0].cards[-1] == parse_card("3S") and h.s.exposed == -1


def test_reshuffle_ends_the_shoe_now_or_after_the_round(table):
    h = table("lugano", "")
    h.do(C.Reshuffle(), by=CROUPIER)
    assert h.s.phase == "shuffle"
    h2 = table("lugano", "10 7 K 10")
    h2.bet("p1", 1)
    h2.close()
    h2.do(C.Reshuffle(), by=CROUPIER)
    h2.act("p1", C.Stand, 1)
    assert h2.s.phase == "shuffle" and h2.of(E.RoundSettled)[-1].last_of_shoe


def test_refused_decisions_leave_the_table_unchanged(table):
    h = table("campione", "10 9 5 2 3")
    two_boxes(h)  # p1 10 2 (12), p2 9 3 (12) against a 5
    h.refused(C.Hit(box=2), "not_your_turn", by="p2")
    h.refused(C.Hit(box=1), "not_your_box", by="p2")
    h.refused(C.Hit(box=1, hand=1), "not_your_turn", by="p1")
    h.refused(C.Double(box=1), "double_not_allowed", by="p1")  # 12: Campione doubles on 9-11
    h.refused(C.Split(box=1), "split_not_allowed", by="p1")
    h.refused(C.Hit(box=5), "no_such_box", by="p1")
    h.refused(C.Insure(box=1, amount=100), "no_offer", by="p1")
    h.refused(C.PlaceBet(box=3, amount=1000), "betting_closed", by="p1")
    h.refused(C.Hit(box=1), "not_for_staff", by=Actor("c1", "croupier"))
    h.refused(C.Hit(box=1), "system_may_only_stand", by=Actor("system:timeout", "system"))
    h.refused(C.CloseBets(), "betting_closed", by=CROUPIER)


@pytest.mark.parametrize(
    "data",
    [
        b'{"type": "hit"}',  # no box
        b'{"type": "hit", "box": "one"}',
        b'{"type": "fly"}',
        b'{"type": "hit", "box": 1, "role": "king"}',  # a command never says who sends it
        b'{"type": "hit", "box": 1, "by": "p1"}',
        b'{"type": "hit", "box": 1, "extra": 1}',
        b"not json",
    ],
)
def test_malformed_commands_are_refused(data):
    with pytest.raises(GameError) as exc:
        decode_command(data)
    assert exc.value.code == "malformed_command"


def test_unknown_command_object_is_refused(table):
    h = table("lugano", "")
    h.refused(object(), "malformed_command", by="p1")


def test_decoded_commands_drive_the_table(table):
    h = table("lugano", "10 7 K 10")
    h.do(decode_command(b'{"type": "place_bet", "box": 1, "amount": 1000}'), by="p1")
    h.do(decode_command(b'{"type": "close_bets"}'), by=CROUPIER)
    h.do(decode_command(b'{"type": "stand", "box": 1}'), by="p1")
    assert h.net("p1") == 1000


def test_state_round_trips_mid_round(table):
    h = table("titano", "8 6 8 10 8 8 8 3 10 2 K 10")
    h.bet("p1", 1)
    h.close()
    h.act("p1", C.Split, 1)
    data = encode_state(h.s)
    twin = BlackjackTable.from_state(decode_state(data))
    assert msgspec.json.encode(twin.state) == msgspec.json.encode(h.s)
    assert msgspec.json.decode(msgspec.json.encode(h.s), type=TableState) == h.s
    a = h.do(C.Split(box=1), by="p1")
    b = twin.handle(C.Split(box=1), Actor("p1"))
    assert a == b


def test_view_hides_the_shoe_and_the_hole_card(table):
    h = table("titano", "9 10 7 A")
    h.bet("p1", 1)
    h.close()
    v = h.t.view("p1")
    assert v.dealer == [parse_card("10S"), -1] and v.turn == [1, 0]
    assert (v.dealer_total, v.dealer_soft) == (10, False)  # the ace in the hole counts for nobody yet
    encoded = msgspec.json.encode(v)
    assert b"order" not in encoded and v.cards_left == 312 - 5 - 4
    h.act("p1", C.Stand, 1)
    assert h.of(E.HoleCardShown) == [E.HoleCardShown(card=parse_card("AS"))]
    assert h.net("p1") == -1000
    up = table("campione", "A 9 A K 8 7")  # the dealer's ace up (Campione: no hole card)
    two_boxes(up)
    assert (up.t.view(None).dealer_total, up.t.view(None).dealer_soft) == (11, True)


def test_the_view_names_the_side_bets_the_table_offers(table):
    assert table("lugano", "").t.view(None).side_bets_offered == ["perfect_pairs", "21+3", "push_22", "blazing_7s"]
    assert table("campione", "").t.view(None).side_bets_offered == []
    assert table("titano", "").t.view(None).side_bets_offered == []


def test_seats(table):
    h = table("lugano", "")
    h.do(C.Sit(box=3), by="p1")
    h.refused(C.Sit(box=3), "seat_taken", by="p2")
    h.refused(C.Sit(box=4), "already_seated", by="p1")
    h.refused(C.Sit(box=8), "no_such_box", by="p2")
    h.do(C.Leave(), by="p1")
    h.refused(C.Leave(), "not_seated", by="p1")
    h.bet("p1", 1)
    h.do(C.WithdrawBet(box=1), by="p1")
    assert list(h.voided().values())[0].reason == "withdrawn"
    h.refused(C.CloseBets(), "no_bets", by=CROUPIER)


# -- audit fixes (2026-11-21) ----------------------------------------------------------------


def test_voiding_a_box_during_the_offers_withdraws_its_offers(table):
    # Campione, dealer's ace up: p1 has a blackjack (A K, even money on offer), p2 17 (9 8).
    h = table("campione", "A 9 A K 8 7")
    two_boxes(h)
    assert sorted(h.s.offers) == [Offer("p1", 1), Offer("p2", 2)]
    h.do(C.VoidRound(reason="box 1 dealt in error", boxes=[1]), by=CROUPIER)
    assert h.s.offers == [Offer("p2", 2)]
    # The void stake can be neither paid even money nor insured (it was settled twice before).
    h.refused(C.EvenMoney(box=1), "no_even_money", by="p1")
    h.refused(C.Insure(box=1, amount=500), "no_offer", by="p1")
    h.do(C.DeclineOffer(box=2), by="p2")
    h.act("p2", C.Stand, 2)  # 17 against A 7 = soft 18
    assert [v.amount for v in h.voided().values()] == [1000]
    assert h.net("p2") == -1000 and h.net("p1") == 0
    assert len(h.settled()) == 1


def test_voiding_the_last_box_with_an_offer_starts_the_play(table):
    h = table("campione", "A 9 A K 8 7")
    two_boxes(h)
    h.do(C.DeclineOffer(box=2), by="p2")
    h.do(C.VoidRound(boxes=[1]), by=CROUPIER)
    assert h.s.phase == "play" and h.of(E.OffersClosed) and h.of(E.Turn)[-1].box == 2


def test_a_misdrawn_card_nobody_took_leaves_the_shoe(table):
    # The 3 drawn by mistake was seen; the round is then voided: the next round starts
    # with the card after it (the K), never with the 3.
    h = table("campione", "10 10 7 9 5 3 K 2")
    two_boxes(h)
    h.do(C.ExposeCard(), by=CROUPIER)
    h.do(C.VoidRound(), by=CROUPIER)
    n = len(h.of(E.CardDealt))
    two_boxes(h)
    assert h.of(E.CardDealt)[n].card == parse_card("KS")


def test_titano_and_lugano_burn_a_misdrawn_card_in_any_phase(table):
    # Titano Art. 17: a card drawn by mistake and seen is burned, never offered (Campione
    # Art. 24 offers it). Here it is burned during the insurance offer, before the drawing.
    h = table("titano", "9 A 7 5 2 10")
    h.bet("p1", 1)
    h.close()
    assert h.s.phase == "offers"
    h.refused(C.ExposeCard(), "misdrawn_card_burned", by=CROUPIER)
    h.do(C.BurnCard(), by=CROUPIER)
    h.do(C.DeclineOffer(box=1), by="p1")
    h.act("p1", C.Hit, 1)  # 16 + 10: bust
    assert h.of(E.CardBurned) == [E.CardBurned(by="c1", card=parse_card("2S"))]
    assert h.net("p1") == -1000
    lugano = table("lugano", "9 A 7")
    lugano.bet("p1", 1)
    lugano.close()
    lugano.refused(C.ExposeCard(), "misdrawn_card_burned", by=CROUPIER)


def test_campione_burns_a_turned_card_only_during_the_drawing(table):
    # Campione Art. 17: during the deal and the offers a turned card keeps its validity.
    h = table("campione", "9 8 A 7 5 2")
    two_boxes(h)
    assert h.s.phase == "offers"
    h.refused(C.BurnCard(), "burn_not_allowed_now", by=CROUPIER)


def _legacy(state: TableState) -> dict:
    """``state`` as builds before ``CardTarget`` and ``Offer`` saved it: ``need`` held box
    index * 8 + hand (-1 the dealer, -2 the hole card), ``offers`` held "player@box"."""
    raw = msgspec.to_builtins(state)
    index = {b.number: i for i, b in enumerate(state.boxes)}
    raw["need"] = [(-2 if t.hole else -1) if not t.box else index[t.box] * 8 + t.hand for t in state.deal_queue]
    del raw["deal_queue"]
    raw["offers"] = [o.label() for o in state.offers]
    return raw


@pytest.mark.parametrize("wrapped", [False, True])
def test_states_saved_before_card_targets_and_offers_had_types_still_load(table, wrapped):
    from server.kinds import KINDS

    kind = KINDS["blackjack"]
    live = table("titano", live=True)  # the hole card is dealt face down
    live.bet("p1", 1)
    live.bet("p2", 2)
    live.close()
    offers = table("campione", "A 9 A K 8 7")
    offers.bet("p1", 1)
    offers.bet("p2", 2)
    offers.close()
    assert len(live.s.deal_queue) == 6 and offers.s.offers
    for h in (live, offers):
        raw = _legacy(h.s)
        saved = kind.load(msgspec.json.encode({"engine": raw, "shoe": None} if wrapped else raw))
        assert msgspec.json.encode(saved.state) == msgspec.json.encode(h.s)
