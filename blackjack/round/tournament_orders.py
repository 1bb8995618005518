"""A tournament table's orders from its coordinator (Titano Art. 22-27): seat a phase,
pause, expel, end. The server relays them as ``system``; each is numbered per table and
applied once (``order_applied`` for a repeat), so they may be delivered again until the
coordinator hears they were applied."""

from __future__ import annotations

from blackjack import commands as C
from blackjack import events as E
from blackjack.phases import ROUND_PHASES, Phase
from blackjack.round.common import Out, check, check_limits, return_bets
from blackjack.round.tournament import ENDED, NOBODY_LEFT, book, end_phase, expel_now, fresh_shoe, in_play, phase_over
from blackjack.state import PendingExpulsion, TableState, TournamentPlay
from games.commands import Actor
from games.errors import GameError
from games.players import FLOOR_PREFIX
from games.wagers import StackIssued

# -- the coordinator's orders -------------------------------------------------------------------


def order_refusal(s: TableState, order: int) -> GameError | None:
    if order <= s.tournament_order:
        return GameError("order_applied", f"Order {order} was applied already (last: {s.tournament_order}).")
    return None


def seat_refusal(s: TableState, cmd: C.TournamentSeat | None) -> GameError | None:
    """Why a phase cannot be seated now (``cmd`` None: for ``legal``, whatever it says)."""
    if in_play(s) is not None:
        return GameError("phase_in_play", "A phase is being played at this table.")
    if s.bets:
        return GameError("bets_down", "Bets are down.")
    if cmd is not None:
        players = [e.player for e in cmd.seats]
        boxes = [e.box for e in cmd.seats]
        if len(set(players)) != len(players) or len(set(boxes)) != len(boxes):
            return GameError("invalid_seating", "Each player has one seat and each box one player.")
        if any(p.startswith(FLOOR_PREFIX) for p in players):
            return GameError("invalid_seating", "floor: ids are cash players at a live felt, not tournament players.")
    return None


def seat(s: TableState, cmd: C.TournamentSeat, actor: Actor, out: Out) -> None:
    """Art. 23, 27: the drawn seats, each with his points; the phase's first shoe follows."""
    check(order_refusal(s, cmd.order))
    check(seat_refusal(s, cmd))
    check_limits(s.profile, cmd.min_bet, cmd.max_bet)
    entries = sorted(cmd.seats, key=lambda e: e.box)
    s.seats = [""] * len(s.seats)
    for e in entries:
        s.seats[e.box] = e.player
    s.min_bet, s.max_bet = cmd.min_bet, cmd.max_bet
    s.next_limits = []
    stacks = {e.player: e.stack for e in entries}
    s.tournament = TournamentPlay(cmd.tournament, cmd.phase, cmd.shoes, stacks=dict(stacks))
    s.tournament_order = cmd.order
    out.append(E.TournamentSeated(order=cmd.order, tournament=cmd.tournament, phase=cmd.phase, shoes=cmd.shoes,
                                  min_bet=cmd.min_bet, max_bet=cmd.max_bet,
                                  seats={e.player: e.box for e in entries}, stacks=stacks))
    for e in entries:
        out.append(StackIssued(e.player, e.stack, key=f"p{cmd.phase}", reason="tournament points"))
    s.phase = Phase.SHUFFLE
    fresh_shoe(s)


def playing(s: TableState) -> TournamentPlay:
    t = in_play(s)
    if t is None:
        raise phase_over()
    return t


def pause(s: TableState, cmd: C.TournamentPause, actor: Actor, out: Out) -> None:
    """The hand in play finishes; bets and their close wait for the resume."""
    check(order_refusal(s, cmd.order))
    t = playing(s)
    t.paused = cmd.paused
    s.tournament_order = cmd.order
    out.append(E.TournamentPaused(order=cmd.order, paused=cmd.paused, reason=cmd.reason))


def expel(s: TableState, cmd: C.TournamentExpel, actor: Actor, out: Out) -> None:
    """Art. 27 (passing chips): at once between hands, else once the hand in play ends."""
    check(order_refusal(s, cmd.order))
    t = s.tournament
    if t is None:
        raise GameError("not_in_tournament", f"{cmd.player} is not playing a phase at this table.")
    s.tournament_order = cmd.order
    if t.done or cmd.player not in t.stacks:
        # Already out here (eliminated, or the phase over) before the order came: nothing to
        # take back; the order is carried out all the same, so the next ones are not held up.
        out.append(E.PlayerExpelled(order=cmd.order, player=cmd.player, phase=t.phase, hand=t.hand, stack=0,
                                    reason=cmd.reason))
        return
    x = PendingExpulsion(cmd.player, cmd.order, cmd.reason)
    if s.phase in ROUND_PHASES:
        t.expelled.append(x)
        return
    return_bets(s, out, lambda b: b.player == cmd.player, "expelled")
    book(s, out)
    expel_now(s, out, t, x)
    if not t.stacks:
        end_phase(s, out, NOBODY_LEFT)


def end(s: TableState, cmd: C.TournamentEnd, actor: Actor, out: Out) -> None:
    """End the phase here: at once between hands (the bets down go back), else once the
    hand in play ends."""
    check(order_refusal(s, cmd.order))
    t = playing(s)
    s.tournament_order = cmd.order
    if s.phase in ROUND_PHASES:
        t.ending = cmd.reason
        t.ending_order = cmd.order
        return
    return_bets(s, out, lambda b: True, "the phase was ended")
    t.ending_order = cmd.order
    end_phase(s, out, cmd.reason or ENDED)
