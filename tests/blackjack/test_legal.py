"""What each actor may send now (``BlackjackTable.legal_commands``): the phase table plus
the turn, the seat and the offers, written out in full for a few moments of a round; and
every command it lists is one the engine then accepts."""

import msgspec
import pytest

from blackjack import commands as C
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable
from games.commands import Actor
from helpers.blackjack import CROUPIER
from server.auth import Principal
from server.kinds import KINDS
from server.kinds.base import TableInfo

P1, P2, P3 = Actor("p1"), Actor("p2"), Actor("p3")
CHEF, DIRECTOR, SYSTEM = Actor("h1", "chef"), Actor("d1", "director"), Actor("system:t", "system")


def legal(h, *actors):
    return [h.t.legal_commands(a) for a in actors]


def test_a_new_table_waits_for_the_house_to_shuffle():
    t = BlackjackTable("t", builtin("campione"), min_bet=1000, max_bet=10000)
    assert [t.legal_commands(a) for a in (P1, CROUPIER, CHEF, DIRECTOR, SYSTEM)] == [
        ["sit"],
        ["shuffle"],
        ["shuffle", "set_limits"],  # a chef closes a table only with the director's recorded leave
        ["shuffle", "set_limits", "close_table"],
        ["shuffle"],  # an RNG table's automatic croupier
    ]


def test_betting(table):
    h = table("campione", "10 9 5 2 3")
    assert legal(h, P1, CROUPIER) == [["sit", "place_bet"], ["reshuffle"]]
    h.do(C.Sit(box=1), by="p1")
    h.bet("p1", 1)
    assert legal(h, P1, P2, CROUPIER, DIRECTOR, SYSTEM) == [
        ["leave", "place_bet", "withdraw_bet"],
        ["sit", "place_bet"],
        ["reshuffle", "release_seat", "close_bets"],
        ["reshuffle", "release_seat", "close_bets", "set_limits", "close_table"],
        ["release_seat", "close_bets"],
    ]


def test_the_players_turn(table):
    # Campione: p1 holds 10 2 (12: no double, no split) against a 5; p2 (6 3) waits his turn.
    h = table("campione", "10 6 5 2 3")
    h.do(C.Sit(box=1), by="p1")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()
    assert legal(h, P1, P2, CROUPIER, SYSTEM) == [
        ["leave", "hit", "stand"],
        ["sit"],
        ["reshuffle", "void_round", "burn_card", "expose_card"],
        ["stand", "void_round"],  # a time-out stands
    ]
    h.act("p1", C.Stand, 1)
    assert legal(h, P1, P2) == [["leave"], ["sit", "hit", "stand", "double"]]  # Campione doubles 9 to 11


def test_the_offers(table):
    # The dealer's ace: p1's blackjack may take even money or be insured; p2 may insure.
    h = table("campione", "A 9 A K 8 7")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()
    assert legal(h, P1, P2, P3, CROUPIER, SYSTEM) == [
        ["sit", "insure", "even_money", "decline_offer"],
        ["sit", "insure", "decline_offer"],
        ["sit"],
        ["reshuffle", "close_offers", "void_round"],
        ["decline_offer", "void_round"],
    ]


def test_a_live_tables_cards_and_floor_players(table):
    h = table("campione", live=True)
    assert legal(h, CROUPIER) == [["reshuffle", "place_bet"]]  # chips on the felt, for a floor player
    h.do(C.PlaceBet(box=1, amount=1000, player="floor:ann"), by=CROUPIER)
    h.do(C.PlaceBet(box=2, amount=1000, player="floor:bo"), by=CROUPIER)
    h.close()
    assert legal(h, CROUPIER, P1) == [["reshuffle", "cut_card_out", "card", "void_round"], ["sit"]]


def test_the_cut_goes_to_the_entitled_player(table):
    h = table("campione", "10 9 5 2 3")
    h.do(C.Reshuffle(), by=CROUPIER)
    h.s.cut_entitled = "p1"  # as the end of a shoe would have offered it
    h.do(C.Shuffle(order=h.s.order or _full(h)), by=CROUPIER)
    assert legal(h, P1, P2, CROUPIER, SYSTEM) == [
        ["cut", "pass_cut", "sit"],
        ["sit"],
        [],  # the player cuts (a live table's croupier cuts for a floor player)
        ["cut", "pass_cut"],  # his time-out
    ]


def _full(h):
    from games.cards import full_shoe

    return full_shoe(h.profile.decks)


@pytest.mark.parametrize("profile", ["campione", "titano", "lugano"])
def test_what_is_listed_is_accepted(table, profile):
    """Every listed command with the obvious arguments goes through, on a copy of the table."""
    h = table(profile, "10 9 6 2 3 10 10 10 10")
    h.bet("p1", 1)
    h.bet("p2", 2)
    h.close()
    while h.s.phase in ("offers", "play"):
        for who in (P1, P2, CROUPIER, SYSTEM):
            for tag in h.t.legal_commands(who):
                if tag in ("hit", "stand", "double", "split"):
                    b = h.s.boxes[h.s.turn_box]
                    cmd = msgspec.convert({"type": tag, "box": b.number, "hand": h.s.turn_hand}, C.Command)
                    twin = BlackjackTable.from_state(msgspec.msgpack.decode(h.snapshot(), type=type(h.s)))
                    assert twin.handle(cmd, who) is not None
        b = h.s.boxes[h.s.turn_box] if h.s.phase == "play" else None
        if b is None:
            h.do(C.CloseOffers(), by=CROUPIER)
        else:
            h.do(C.Stand(box=b.number, hand=h.s.turn_hand), by=b.holder)


def test_the_server_view_lists_what_the_server_lets_each_one_send():
    """At an RNG table the console neither deals nor frees a connected player's seat; a
    player never sees the console's commands; nobody watching sees any."""
    kind = KINDS["blackjack"]
    info = TableInfo("v-bj", "blackjack", "campione", "rng", "CHF", "view", {}, ["c1"])
    engine = kind.new_engine(info)
    for cmd, who in ((C.Shuffle(), SYSTEM), (C.Cut(random_at=100), SYSTEM), (C.Sit(box=1), P1),
                     (C.PlaceBet(box=1, amount=1000), P1)):
        kind.engine_events(engine, cmd, who)
    assert kind.view(engine, Principal("p1", "player")).legal == ["leave", "place_bet", "withdraw_bet"]
    assert kind.view(engine, Principal("c1", "croupier")).legal == ["reshuffle", "close_bets"]
    assert kind.view(engine, None).legal == []
    assert kind.view(engine, Principal("i1", "inspector")).legal == []
