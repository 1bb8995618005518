"""Campione Art. 37 ("le vincite, ritenute dal capo tavolo abbandonate, saranno ritirate"):
between rounds the chef records what the last round paid a floor player who left it on the
felt; it goes to the table's unclaimed register (``ChipsUnclaimed``, booked by the server
from the floor account to the table's unclaimed account). By hand: floor:ann's CHF 10.00 on
20 (and floor:bo's on 18: Campione, two boxes at least) against a dealer who busts (6, 10,
10) pay 10.00 back and 10.00 won each: 2,000 recorded for ann."""

from blackjack import commands as C
from games.cards import parse_card
from games.commands import Actor
from games.wagers import ChipsUnclaimed
from helpers.blackjack import CROUPIER

CHEF = Actor("chef1", "chef")


def card(h, text, box):
    return h.do(C.Card(card=parse_card(text), box=box), by=CROUPIER)


def test_the_chef_records_a_floor_players_wins_left_on_the_felt(table):
    h = table("campione", live=True)
    h.do(C.PlaceBet(box=1, amount=1000, player="floor:ann"), by=CROUPIER)
    h.do(C.PlaceBet(box=2, amount=1000, player="floor:bo"), by=CROUPIER)
    h.do(C.CloseBets(), by=CROUPIER)
    for text, box in (("10S", 1), ("9S", 2), ("6H", 0), ("10D", 1), ("9D", 2)):
        card(h, text, box)
    h.do(C.Stand(box=1), by=CROUPIER)
    h.do(C.Stand(box=2), by=CROUPIER)
    card(h, "10C", 0)
    card(h, "10H", 0)
    assert h.s.phase == "betting" and h.s.last_paid == {"floor:ann": 2000, "floor:bo": 2000}

    h.refused(C.MarkUnclaimed(player="floor:ann"), "not_allowed", by=CROUPIER)  # the capo tavolo's
    h.refused(C.MarkUnclaimed(player="bob"), "floor_only", by=CHEF)  # an online player's wins: his wallet
    h.refused(C.MarkUnclaimed(player="floor:cy"), "nothing_unclaimed", by=CHEF)
    events = h.do(C.MarkUnclaimed(player="floor:ann"), by=CHEF)
    assert events == [ChipsUnclaimed("floor:ann", 1, "wins", 2000, [], "chef1")]
    h.refused(C.MarkUnclaimed(player="floor:ann"), "nothing_unclaimed", by=CHEF)  # once


def test_only_a_live_table_has_chips_left_on_its_felt(table):
    h = table("campione", "")
    h.refused(C.MarkUnclaimed(player="floor:ann"), "not_live", by=CHEF)
