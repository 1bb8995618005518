"""Invariants under random play (legal and illegal commands mixed):

* every card comes out of the shoe once, in the shoe's order (burned and face-down
  cards included): no card is dealt twice;
* money is conserved: every wager placed is closed exactly once, settled or voided,
  for its full stake; nothing is returned beyond the stake; nothing is left open
  when a round ends;
* a refused command changes nothing, and the state round-trips through encoding.
"""

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackjack import commands as C
from blackjack import events as E
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable
from games.cards import full_shoe
from games.commands import Actor
from games.errors import GameError
from games.rng import SeededRng, shuffled
from games.wagers import WagerPlaced, WagerSettled, WagerVoided
from helpers.blackjack import CROUPIER, decode_state, encode_state

PLAYERS = ["p1", "p2", "p3", "p4"]
STATS: dict[str, int] = {}
TIMEOUT = Actor("system:timeout", "system")


def candidates(t, draw):
    """(command, actor) pairs to draw from."""
    s = t.state
    p = s.profile
    ph = s.phase
    pl = draw(st.sampled_from(PLAYERS))
    box = draw(st.integers(1, 7))
    amt = draw(st.sampled_from([999, 1000, 2000, 5000, 10000, 10001]))
    if ph == "shuffle":
        return [(C.Shuffle(order=shuffled(full_shoe(p.decks), SeededRng(draw(st.integers(0, 99))))), CROUPIER)]
    if ph == "cut":
        who = s.cut_entitled
        at = draw(st.integers(0, p.cards))
        cmd = (C.Cut(at=at), Actor(who)) if who else (C.Cut(at=at), CROUPIER)
        return [cmd, (C.Cut(random_at=p.cut_margin), TIMEOUT)]
    if ph == "reshuffle":
        on_table = list(s.dealer) + [c for b in s.boxes for h in b.hands for c in h.cards]
        rest = full_shoe(p.decks)
        for c in on_table:
            rest.remove(c)
        return [(C.Shuffle(order=shuffled(rest, SeededRng(1))), CROUPIER)]
    if ph == "betting":
        return [
            (C.PlaceBet(box=box, amount=amt), Actor(pl)),
            (C.PlaceBet(box=box, amount=amt), Actor(pl)),
            (C.CloseBets(), CROUPIER),
            (C.WithdrawBet(box=box), Actor(pl)),
            (C.Sit(box=box), Actor(pl)),
            (C.Reshuffle(), CROUPIER),
        ]
    out = [(C.VoidRound(boxes=[box]), CROUPIER)]
    if ph == "offers":
        half = draw(st.integers(0, 6000))
        return out + [
            (C.Insure(box=box, amount=half), Actor(pl)),
            (C.EvenMoney(box=box), Actor(pl)),
            (C.DeclineOffer(box=box), Actor(pl)),
            (C.CloseOffers(), CROUPIER),
        ] * 4 + [(C.BurnCard(), CROUPIER)]  # Titano and Lugano burn a misdrawn card in any phase
    if ph == "play":
        if s.behind:
            n = s.boxes[s.turn_box].number
            doubling = Actor(draw(st.sampled_from(s.behind)))
            double = (C.BehindDouble(box=n, accept=draw(st.booleans())), doubling)
            splitting = Actor(draw(st.sampled_from(s.behind)))
            split = (C.BehindSplit(box=n, choice=draw(st.sampled_from(["first", "second", "both"]))), splitting)
            return out + [double, split, (C.BehindSplit(box=n), TIMEOUT)] * 4
        b = s.boxes[s.turn_box]
        who = draw(st.sampled_from([b.holder, b.holder, b.holder, pl]))
        hand = s.turn_hand
        return out + [
            (C.Hit(box=b.number, hand=hand), Actor(who)),
            (C.Stand(box=b.number, hand=hand), Actor(who)),
            (C.Double(box=b.number, hand=hand), Actor(who)),
            (C.Split(box=b.number, hand=hand), Actor(who)),
        ] * 4 + [(C.BurnCard(), CROUPIER), (C.ExposeCard(), CROUPIER), (C.Hit(box=box), Actor(pl))]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["campione", "titano", "lugano"]), st.data())
def test_random_play_keeps_cards_and_money_straight(name, data):
    t = BlackjackTable("t", builtin(name), min_bet=1000, max_bet=10000)
    placed: dict[str, int] = {}
    closed: set[str] = set()
    shoe: list[int] = []
    drawn = 0  # positions consumed since the burn
    burn = t.state.profile.burn_cards
    exposed = False
    for _ in range(data.draw(st.integers(20, 250))):
        cmds = candidates(t, data.draw)
        cmd, by = data.draw(st.sampled_from(cmds))
        before = encode_state(t.state)
        try:
            events = t.handle(cmd, by)
        except GameError:
            assert encode_state(t.state) == before
            continue
        for e in events:
            ty = type(e)
            if ty is E.ShoeCut:
                shoe, drawn, exposed = list(t.state.order), 0, False
                burn = t.state.profile.burn_cards
            elif ty is E.ShoeShuffled and t.state.phase != "cut":
                shoe, drawn, burn = list(t.state.order), 0, 0  # discards reshuffled mid-round
            elif ty in (E.CardDealt, E.CardBurned):
                assert e.card == shoe[burn + drawn]
                drawn += 1
                exposed = False
            elif ty is E.HoleCardDealt:
                drawn += 1
            elif ty is E.CardExposed:
                assert e.card == shoe[burn + drawn] and not exposed
                exposed = True
            elif ty is WagerPlaced:
                assert e.wager not in placed
                placed[e.wager] = e.amount
            elif ty is WagerSettled:
                assert e.wager in placed and e.wager not in closed
                closed.add(e.wager)
                assert e.stake == placed[e.wager]
                assert 0 <= e.returned <= e.stake and e.won >= 0
                assert e.won <= 2 * e.stake
            elif ty is WagerVoided:
                assert e.wager in placed and e.wager not in closed
                closed.add(e.wager)
                assert e.amount == placed[e.wager]
            elif ty in (E.RoundSettled, E.RoundVoided) and not getattr(e, "boxes", []):
                assert set(placed) == closed  # nothing left open
                if exposed:  # a misdrawn card nobody took was seen: it left the shoe
                    drawn, exposed = drawn + 1, False
                STATS[ty.__name__] = STATS.get(ty.__name__, 0) + 1
        if data.draw(st.integers(0, 9)) == 0:
            t = BlackjackTable.from_state(decode_state(encode_state(t.state)))
    assert msgspec.structs.asdict(t.state)["round"] >= 1


def test_random_play_did_finish_rounds():
    # Guards the test above against vacuity: it runs first in this module.
    assert STATS.get("RoundSettled", 0) > 20


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_live_cards_never_exceed_the_shoe(data):
    # Campione live: the console enters random cards for random recipients; only the
    # right recipient and a card still in the shoe are accepted, anything else changes nothing.
    t = BlackjackTable("t", builtin("campione"), min_bet=1000, max_bet=10000, live=True)
    t.handle(C.Shuffle(), CROUPIER)
    t.handle(C.Cut(at=50), CROUPIER)
    seen = [0] * 52
    for _ in range(data.draw(st.integers(10, 200))):
        s = t.state
        if s.phase == "betting":
            cmds = [(C.PlaceBet(box=1, amount=1000), Actor("p1")), (C.PlaceBet(box=2, amount=1000), Actor("p2")),
                    (C.CloseBets(), CROUPIER)]
        elif s.phase == "offers":
            cmds = [(C.CloseOffers(), CROUPIER)]
        elif s.phase == "play" and not s.deal_queue:
            b = s.boxes[s.turn_box]
            cmds = [(C.Hit(box=b.number, hand=s.turn_hand), Actor(b.holder)),
                    (C.Stand(box=b.number, hand=s.turn_hand), Actor(b.holder))]
        elif s.phase == "shuffle":
            cmds = [(C.Shuffle(), CROUPIER)]
        elif s.phase == "cut":
            cmds = [(C.Cut(at=60), Actor(s.cut_entitled)) if s.cut_entitled else (C.Cut(at=60), CROUPIER)]
        else:
            cmds = [(C.Card(card=data.draw(st.sampled_from([0, 1, 13, 26, 39, 9, 22])),
                            box=data.draw(st.integers(0, 2)), hand=0), CROUPIER)]
        before = encode_state(t.state)
        try:
            events = t.handle(*data.draw(st.sampled_from(cmds)))
        except GameError:
            assert encode_state(t.state) == before
            continue
        for e in events:
            if type(e) is E.ShoeShuffled:
                seen = [0] * 52
            elif type(e) in (E.CardDealt, E.HoleCardShown):
                seen[e.card] += 1
                assert seen[e.card] <= 4
