"""Random play at a tournament table (legal and illegal commands mixed), phase after phase:

* the points are conserved: for every player, his stack plus his stakes still on the felt
  is what he was issued plus what his money events gave or took (settlements, refunds,
  stacks handed back); a player out of the phase holds nothing;
* no stack is ever negative;
* a refused command changes nothing, and ``legal_commands`` lists a double or a split
  exactly when the engine takes it (a player who cannot afford one is not offered it).
"""

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackjack import commands as C
from blackjack import events as E
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable
from blackjack.wager_kinds import FREE_KINDS
from games.cards import full_shoe
from games.commands import Actor
from games.errors import GameError
from games.rng import SeededRng, shuffled
from games.wagers import StackIssued, StackReturned, WagerRefunded, WagerSettled
from helpers.blackjack import CROUPIER, decode_state, encode_state

PROFILE = msgspec.structs.replace(builtin("titano"), name="titano-1", decks=1, min_decks=1, cut_card_from_end=27)
PLAYERS = ["ann", "bob", "cat", "dan"]
SERVER = Actor("system:t", "system")
STATS: dict[str, int] = {}


class Orders:
    def __init__(self) -> None:
        self.n = 0

    def next(self, draw) -> int:
        if self.n and draw(st.integers(0, 9)) == 0:
            return self.n  # sent again: refused order_applied
        self.n += 1
        return self.n


def seat_order(order: int, draw, phase: int) -> C.TournamentSeat:
    players = draw(st.lists(st.sampled_from(PLAYERS), min_size=1, max_size=4, unique=True))
    boxes = draw(st.lists(st.integers(1, 7), min_size=len(players), max_size=len(players), unique=True))
    stacks = [draw(st.sampled_from([5, 10, 30, 60])) for _ in players]
    entries = [C.TournamentEntry(box=b, player=p, stack=n) for p, b, n in zip(players, boxes, stacks, strict=True)]
    return C.TournamentSeat(order=order, tournament="t", phase=phase, shoes=draw(st.integers(1, 2)), min_bet=10,
                            max_bet=40, seats=entries)


def candidates(t: BlackjackTable, draw, orders: Orders, phase: int):
    s = t.state
    tp = s.tournament
    if tp is None or tp.done:
        return [(seat_order(orders.next(draw), draw, phase), SERVER)]
    pl = draw(st.sampled_from(PLAYERS))
    out = []
    if draw(st.integers(0, 9)) == 0:
        out.append((C.TournamentPause(order=orders.next(draw), paused=not tp.paused), SERVER))
    if draw(st.integers(0, 9)) == 0:
        out.append((C.TournamentExpel(order=orders.next(draw), player=pl), SERVER))
    if draw(st.integers(0, 29)) == 0:
        out.append((C.TournamentEnd(order=orders.next(draw)), SERVER))
    ph = s.phase
    if ph == "shuffle":
        return out + [(C.Shuffle(order=shuffled(full_shoe(s.profile.decks), SeededRng(draw(st.integers(0, 99))))),
                       SERVER)] * 6
    if ph == "cut":
        at = draw(st.integers(10, 42))
        return out + [(C.Cut(at=at), Actor(s.cut_entitled)) if s.cut_entitled else (C.Cut(random_at=at), SERVER)] * 6
    if ph == "betting":
        box = s.seats.index(pl) if pl in s.seats else draw(st.integers(1, 7))
        amt = draw(st.sampled_from([1, 5, 9, 10, 20, 40, 41, tp.stacks.get(pl, 1)]))
        out += [(C.PlaceBet(box=box, amount=amt), Actor(pl))] * 8 + [
            (C.WithdrawBet(box=box), Actor(pl)),
            (C.CloseBets(), SERVER),
            (C.CloseBets(), SERVER),
        ]
        if tp.paused:
            out.append((C.TournamentPause(order=orders.next(draw), paused=False), SERVER))
        return out + [(C.Reshuffle(), CROUPIER)] * (draw(st.integers(0, 9)) == 0)
    out.append((C.VoidRound(), CROUPIER))  # (a misdeal, Art. 18)
    if ph == "offers":
        o = draw(st.sampled_from(s.offers))
        amt = draw(st.integers(1, 25))
        return out + [
            (C.Insure(box=o.box, amount=amt), Actor(o.player)),
            (C.EvenMoney(box=o.box), Actor(o.player)),
            (C.DeclineOffer(box=o.box), Actor(o.player)),
            (C.CloseOffers(), CROUPIER),
        ] * 4
    if ph == "play":
        b, hand = s.boxes[s.turn_box], s.turn_hand
        decisions = (C.Hit, C.Stand, C.Double, C.Split)
        return out + [(cls(box=b.number, hand=hand), Actor(b.holder)) for cls in decisions] * 5
    return out


def open_stakes(s, player: str) -> int:
    on_felt = sum(b.amount for b in s.bets if b.player == player)
    for box in s.boxes:
        mine = [w for w in box.wagers if w.player == player and not w.settled]
        on_felt += sum(w.amount for w in mine if w.kind not in FREE_KINDS)  # the house's free chip is not his
    return on_felt


def check_decisions_listed_iff_taken(t: BlackjackTable) -> None:
    s = t.state
    if s.phase != "play" or s.deal_queue or s.behind:
        return
    b = s.boxes[s.turn_box]
    legal = t.legal_commands(Actor(b.holder))
    for cls in (C.Double, C.Split):
        copy = BlackjackTable.from_state(decode_state(encode_state(s)))
        try:
            copy.handle(cls(box=b.number, hand=s.turn_hand), Actor(b.holder))
            taken = True
        except GameError:
            taken = False
        assert taken == (str(cls.__struct_config__.tag) in legal)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_play_keeps_the_points_straight(data):
    t = BlackjackTable("tt", PROFILE, min_bet=10, max_bet=40, tournament=True)
    orders = Orders()
    phase = 1
    issued: dict[str, int] = {}
    net: dict[str, int] = {}
    for _ in range(data.draw(st.integers(30, 250))):
        cmd, by = data.draw(st.sampled_from(candidates(t, data.draw, orders, phase)))
        before = encode_state(t.state)
        try:
            events = t.handle(cmd, by)
        except GameError:
            assert encode_state(t.state) == before
            continue
        for e in events:
            name = type(e).__name__
            STATS[name] = STATS.get(name, 0) + 1
            if isinstance(e, StackIssued):
                issued = {**issued, e.player: issued.get(e.player, 0) + e.amount}
            elif isinstance(e, WagerSettled):
                net[e.player] = net.get(e.player, 0) + e.returned + e.won - e.stake
            elif isinstance(e, WagerRefunded):
                net[e.player] = net.get(e.player, 0) + e.amount
            elif isinstance(e, StackReturned):
                net[e.player] = net.get(e.player, 0) - e.amount
            elif isinstance(e, E.TournamentTableDone):
                phase += 1
        s = t.state
        stacks = s.tournament.stacks if s.tournament else {}
        assert all(n >= 0 for n in stacks.values())
        for p in issued:
            held = stacks.get(p, 0) + open_stakes(s, p)
            assert held == issued[p] + net.get(p, 0), (p, held, issued[p], net.get(p, 0))
        check_decisions_listed_iff_taken(t)
        if data.draw(st.integers(0, 9)) == 0:
            t = BlackjackTable.from_state(decode_state(encode_state(t.state)))


def test_random_play_reached_every_end():
    # Guards the test above against vacuity: it runs first in this module.
    for name in ("AbsentCharged", "PlayerEliminated", "PlayerExpelled", "TournamentTableDone", "HandStandings",
                 "StackReturned", "WagerVoided", "TournamentPaused", "ShoeEnded"):
        assert STATS.get(name, 0) > 0, name
