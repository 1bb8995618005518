"""Tournament tables (Titano Art. 22-27): a phase of a tournament played in points.

The coordinator (``blackjack.tournament``) seats a phase here and gives its orders (seat,
pause, expel, end: ``round.tournament_orders``), which the server relays as ``system``; each
is numbered per table and applied once. The points a player holds off the felt are ``TournamentPlay.stacks``, moved
in one place, ``book``, from the money events the table emits: once a command's handler
has run, and first at a hand's end, which reads them. In the round's layering this sits
just above ``common``: ``dealer`` calls it as rounds open and end, the commands for checks.
"""

from __future__ import annotations

from blackjack import commands as C
from blackjack import events as E
from blackjack.phases import Phase
from blackjack.round.common import Out, bet_id, check, owner_refusal
from blackjack.state import Bet, PendingExpulsion, TableState, TournamentPlay, Wager
from games.commands import Actor
from games.errors import GameError
from games.wagers import StackReturned, WagerPlaced, WagerRefunded, WagerSettled, WagerVoided

NOBODY_LEFT = "nobody left"
ENDED = "the tournament ended the phase"  # a TournamentEnd that gave no reason


def phase_over() -> GameError:
    return GameError("phase_over", "No tournament phase is being played at this table.")


class Ledger(list[E.Event]):
    """The events of one command at a tournament table; ``booked``: how many of them
    ``book`` has moved into the stacks already."""

    def __init__(self) -> None:
        super().__init__()
        self.booked = 0


def in_play(s: TableState) -> TournamentPlay | None:
    """The phase being played at this table, if any."""
    t = s.tournament
    return t if t is not None and not t.done else None


def book(s: TableState, out: Out) -> None:
    """Move the points of the money events in ``out`` not booked yet: a stake leaves the
    stack, what a settlement returns and pays comes back, a voided or refunded stake too.
    (``StackIssued`` / ``StackReturned`` are the orders' own: they set the stacks.)"""
    assert isinstance(out, Ledger), "a tournament table's events are a Ledger"
    t = in_play(s)
    if t is not None:
        for ev in out[out.booked:]:
            if isinstance(ev, WagerPlaced):
                delta = -ev.amount
            elif isinstance(ev, WagerSettled):
                delta = ev.returned + ev.won
            elif isinstance(ev, (WagerVoided, WagerRefunded)):
                delta = ev.amount
            else:
                continue
            stack = t.stacks[ev.player] + delta
            assert stack >= 0, f"{ev.player} staked points he did not have"  # an engine bug
            t.stacks[ev.player] = stack
    out.booked = len(out)


# -- the players' points ----------------------------------------------------------------------


def points_refusal(s: TableState, player: str, amount: int) -> GameError | None:
    """Art. 10: no play on credit, only with the tournament's chips: a stake (a bet,
    insurance, a double, a split) must be in the player's points."""
    t = in_play(s)
    if t is not None and amount > t.stacks.get(player, 0):
        return GameError("insufficient_points", f"You have {t.stacks.get(player, 0)} points.")
    return None


def bettor_refusal(s: TableState, actor: Actor, player: str, box: int) -> GameError | None:
    """Why ``actor`` may not bet (naming ``player``) on ``box`` now, the amount aside:
    each player bets his own points on his drawn box, once a hand, while not paused."""
    if actor.role != "player":
        return GameError("tournament_table", "At a tournament table each player bets his own points.")
    error = owner_refusal(s, player, actor)
    if error is not None:
        return error
    t = in_play(s)
    if t is None or t.paused:
        return close_refusal(s)
    if actor.id not in t.stacks or s.seats[box] != actor.id:
        return GameError("not_your_seat", f"Box {box} is not your drawn seat.")
    if any(b.player == actor.id for b in s.bets):
        return GameError("already_bet", "You have already bet this hand.")
    return None


def amount_refusal(s: TableState, player: str, amount: int) -> GameError | None:
    """Art. 27: a bet between the table's minimum and maximum, in the player's points; a
    player with less than the minimum left bets it all."""
    t = in_play(s)
    assert t is not None
    stack = t.stacks[player]
    if amount > stack:
        return points_refusal(s, player, amount)
    if amount > s.max_bet:
        return GameError("above_maximum", f"The maximum bet is {s.max_bet}.")
    if amount < s.min_bet and not (amount == stack < s.min_bet):
        return GameError("below_minimum", f"The minimum bet is {s.min_bet} (or all your points, if fewer).")
    return None


def can_bet(s: TableState, actor: Actor) -> bool:
    """For ``legal``: may ``actor`` bet now, some amount on his box?"""
    t = in_play(s)
    if t is None or actor.id not in s.seats[1:] or bettor_refusal(s, actor, "", s.seats.index(actor.id, 1)):
        return False
    return amount_refusal(s, actor.id, max(1, min(t.stacks[actor.id], s.min_bet))) is None


def place_bet(s: TableState, cmd: C.PlaceBet, actor: Actor, out: Out) -> None:
    check(bettor_refusal(s, actor, cmd.player, cmd.box))
    check(amount_refusal(s, actor.id, cmd.amount))
    wid = bet_id(s)
    s.bets.append(Bet(cmd.box, actor.id, cmd.amount, wid))
    out.append(WagerPlaced(wid, actor.id, cmd.amount, f"box {cmd.box}"))


def double_excess(s: TableState, stake: Wager, amount: int) -> int:
    """Art. 27: a win beyond the maximum is not paid and the excess stake is returned: the
    part of a double that takes the hand's stake above the maximum (``Wager.excess``)."""
    if in_play(s) is None:
        return 0
    return min(amount, max(stake.amount - stake.excess + amount - s.max_bet, 0))


# -- the hands ----------------------------------------------------------------------------------


def close_refusal(s: TableState) -> GameError | None:
    """Bets close with no bet at all (the absent are charged), but not while paused."""
    t = in_play(s)
    if t is None:
        return phase_over()
    return GameError("tournament_paused", "The tournament is paused.") if t.paused else None


def charge_absent(s: TableState, out: Out) -> None:
    """Art. 27: "prelevare dai gettoni del giocatore assente un importo pari al minimo di
    puntata per ogni mano non giocata" (all he has, if less)."""
    t = in_play(s)
    assert t is not None
    betting = {b.player for b in s.bets}
    for player, stack in t.stacks.items():
        amount = min(s.min_bet, stack)
        if player in betting or amount <= 0:
            continue
        wid = bet_id(s)
        out.append(WagerPlaced(wid, player, amount, "absent charge"))
        out.append(WagerSettled(wid, player, amount, 0, 0, "absent: the minimum for a hand not played (Art. 27)"))
        out.append(E.AbsentCharged(player=player, hand=t.hand, amount=amount))


def hand_opened(s: TableState) -> None:
    t = in_play(s)
    if t is not None:
        t.hand += 1
        t.before = dict(t.stacks)  # Art. 25: the eliminated of one hand rank by these


def hand_over(s: TableState, out: Out, shoe_over: bool) -> bool:
    """After each hand (the round's clean-up done): the eliminated (Art. 24), the pending
    expulsions, the standings, and the phase's end at this table. True if it ended."""
    t = in_play(s)
    if t is None:
        return False
    book(s, out)
    t.shoes_done += shoe_over
    for player, stack in list(t.stacks.items()):
        if stack == 0:
            out.append(E.PlayerEliminated(player=player, phase=t.phase, hand=t.hand,
                                          stack_before=t.before.get(player, 0)))
            _unseat(s, t, player)
    for x in t.expelled:
        expel_now(s, out, t, x)
    t.expelled = []
    out.append(E.HandStandings(phase=t.phase, hand=t.hand, stacks=dict(t.stacks), shoes_done=t.shoes_done))
    if t.ending_order:
        reason = t.ending or ENDED
    elif not t.stacks:
        reason = NOBODY_LEFT
    elif t.shoes_done >= t.shoes:
        reason = ""
    else:
        return False  # a lone player plays on to the last shoe (Art. 27)
    end_phase(s, out, reason)
    return True


def _unseat(s: TableState, t: TournamentPlay, player: str) -> None:
    del t.stacks[player]
    s.seats = ["" if p == player else p for p in s.seats]
    s.cut_chain = [p for p in s.cut_chain if p != player]
    if s.cut_entitled == player:  # one who has left cuts nothing: the next, or the house
        s.cut_entitled, s.cut_chain = (s.cut_chain[0], s.cut_chain[1:]) if s.cut_chain else ("", [])


def expel_now(s: TableState, out: Out, t: TournamentPlay, x: PendingExpulsion) -> None:
    """Art. 27: his chips go back to the house. One eliminated in the same hand has none
    left, but the order is still reported carried out."""
    stack = t.stacks.get(x.player, 0)
    if x.player in t.stacks:
        _unseat(s, t, x.player)
    if stack:
        reason = f"expelled: {x.reason}" if x.reason else "expelled"
        out.append(StackReturned(x.player, stack, f"p{t.phase}-expelled", reason))
    out.append(E.PlayerExpelled(order=x.order, player=x.player, phase=t.phase, hand=t.hand, stack=stack,
                                reason=x.reason))


def end_phase(s: TableState, out: Out, reason: str) -> None:
    """The phase is over at this table: every stack goes back ("alla fine di ogni fase i
    gettoni dovranno essere riconsegnati al tavolo", Art. 27) and the table closes."""
    t = in_play(s)
    assert t is not None
    book(s, out)
    if s.phase not in (Phase.SHUFFLE, Phase.CLOSED):
        out.append(E.ShoeEnded(cut_entitled=""))  # the server reveals an RNG shoe on it
    final = dict(t.stacks)
    for player, stack in final.items():
        if stack:
            out.append(StackReturned(player, stack, f"p{t.phase}", "the phase is over"))
    out.append(E.TournamentTableDone(phase=t.phase, hand=t.hand, stacks=final, reason=reason,
                                     order=t.ending_order))
    t.stacks, t.expelled, t.done = {}, [], True
    s.seats = [""] * len(s.seats)
    s.phase = Phase.CLOSED
    fresh_shoe(s)


def fresh_shoe(s: TableState) -> None:
    s.order, s.pos, s.cut_index, s.left, s.exposed = [], 0, -1, [], -1
    s.last_round = s.reshuffle_after = False
    s.cut_entitled, s.cut_chain = "", []  # the house cuts a phase's first shoe
