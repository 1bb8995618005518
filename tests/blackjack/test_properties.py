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
from blackjack.cards import full_shoe
from blackjack.profiles import builtin
from blackjack.table import BlackjackTable, decode_state, encode_state
from games.errors import GameError
from games.rng import SeededRng, shuffled
from games.wagers import WagerPlaced, WagerSettled, WagerVoided

PLAYERS = ["p1", "p2", "p3", "p4"]
STATS: dict[str, int] = {}
from bj_harness import CROUPIER


def candidates(t, draw):
    s = t.state
    p = s.profile
    ph = s.phase
    pl = draw(st.sampled_from(PLAYERS))
    box = draw(st.integers(1, 7))
    amt = draw(st.sampled_from([999, 1000, 2000, 5000, 10000, 10001]))
    if ph == "shuffle":
        return [C.Shuffle(**CROUPIER, order=shuffled(full_shoe(p.decks), SeededRng(draw(st.integers(0, 99)))))]
    if ph == "cut":
        who = s.cut_entitled
        at = draw(st.integers(0, p.cards))
        cmd = C.Cut(by=who, at=at) if who else C.Cut(**CROUPIER, at=at)
        return [cmd, C.Cut(by="system:timeout", role="system", random_at=p.cut_margin)]
    if ph == "reshuffle":
        on_table = list(s.dealer) + [c for b in s.boxes for h in b.hands for c in h.cards]
        rest = full_shoe(p.decks)
        for c in on_table:
            rest.remove(c)
        return [C.Shuffle(**CROUPIER, order=shuffled(rest, SeededRng(1)))]
    if ph == "betting":
        return [
            C.PlaceBet(by=pl, box=box, amount=amt),
            C.PlaceBet(by=pl, box=box, amount=amt),
            C.CloseBets(**CROUPIER),
            C.WithdrawBet(by=pl, box=box),
            C.Sit(by=pl, box=box),
            C.Reshuffle(**CROUPIER),
        ]
    out = [C.VoidRound(**CROUPIER, boxes=[box])]
    if ph == "offers":
        half = draw(st.integers(0, 6000))
        return out + [
            C.Insure(by=pl, box=box, amount=half),
            C.EvenMoney(by=pl, box=box),
            C.DeclineOffer(by=pl, box=box),
            C.CloseOffers(**CROUPIER),
        ] * 4 + [C.BurnCard(**CROUPIER)]  # Titano and Lugano burn a misdrawn card in any phase
    if ph == "play":
        if s.behind:
            return out + [
                C.BehindDouble(by=draw(st.sampled_from(s.behind)), box=s.boxes[s.turn_box].number, accept=draw(st.booleans())),
                C.BehindSplit(by=draw(st.sampled_from(s.behind)), box=s.boxes[s.turn_box].number,
                              choice=draw(st.sampled_from(["first", "second", "both"]))),
                C.BehindSplit(by="system:timeout", role="system", box=s.boxes[s.turn_box].number),
            ] * 4
        b = s.boxes[s.turn_box]
        who = draw(st.sampled_from([b.holder, b.holder, b.holder, pl]))
        hand = s.turn_hand
        return out + [
            C.Hit(by=who, box=b.number, hand=hand),
            C.Stand(by=who, box=b.number, hand=hand),
            C.Double(by=who, box=b.number, hand=hand),
            C.Split(by=who, box=b.number, hand=hand),
        ] * 4 + [C.BurnCard(**CROUPIER), C.ExposeCard(**CROUPIER), C.Hit(by=pl, box=box)]
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
        cmd = data.draw(st.sampled_from(cmds))
        before = encode_state(t.state)
        try:
            events = t.handle(cmd)
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
    t.handle(C.Shuffle(**CROUPIER))
    t.handle(C.Cut(**CROUPIER, at=50))
    seen = [0] * 52
    for _ in range(data.draw(st.integers(10, 200))):
        s = t.state
        if s.phase == "betting":
            cmds = [C.PlaceBet(by="p1", box=1, amount=1000), C.PlaceBet(by="p2", box=2, amount=1000),
                    C.CloseBets(**CROUPIER)]
        elif s.phase == "offers":
            cmds = [C.CloseOffers(**CROUPIER)]
        elif s.phase == "play" and not s.need:
            b = s.boxes[s.turn_box]
            cmds = [C.Hit(by=b.holder, box=b.number, hand=s.turn_hand), C.Stand(by=b.holder, box=b.number, hand=s.turn_hand)]
        elif s.phase == "shuffle":
            cmds = [C.Shuffle(**CROUPIER)]
        elif s.phase == "cut":
            cmds = [C.Cut(by=s.cut_entitled, at=60) if s.cut_entitled else C.Cut(**CROUPIER, at=60)]
        else:
            cmds = [C.Card(**CROUPIER, card=data.draw(st.sampled_from([0, 1, 13, 26, 39, 9, 22])),
                           box=data.draw(st.integers(0, 2)), hand=0)]
        before = encode_state(t.state)
        try:
            events = t.handle(data.draw(st.sampled_from(cmds)))
        except GameError:
            assert encode_state(t.state) == before
            continue
        for e in events:
            if type(e) is E.ShoeShuffled:
                seen = [0] * 52
            elif type(e) in (E.CardDealt, E.HoleCardShown):
                seen[e.card] += 1
                assert seen[e.card] <= 4
