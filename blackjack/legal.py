"""What an actor may send now: the command tags a croupier console or a player's page
offers, so no client re-derives the rules.

A command is legal when ``phases`` lets the actor send it in this phase at this table
(``phases.refusal``) and the round gives it something to act on: his seat, his bet, his
offer, his turn, a card due. A legal command may still be refused for what it says (an
amount over the maximum, a box already taken); an illegal one is always refused.

The round's part is asked of the handlers' own checks (the ``*_refusal`` functions of
``blackjack.round``), for some content the actor could send: a free box to sit at, an open
offer of a player he acts for, the hand whose turn it is. Nothing here restates a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from blackjack import commands as C
from blackjack.phases import refusal
from blackjack.profiles import BOXES
from blackjack.round.betting import close_bets_refusal, leave_refusal, release_refusal, sit_refusal
from blackjack.round.common import owner_refusal
from blackjack.round.decisions import Decision, behind_player_refusal, behind_refusal, decision_refusal, turn_refusal
from blackjack.round.shoe_commands import (
    burn_refusal,
    card_left,
    card_refusal,
    cut_card_refusal,
    cut_refusal,
    entitled_refusal,
    expose_refusal,
    shuffle_refusal,
)
from blackjack.round.sidebets import offers_side_bets
from blackjack.round.steps import even_money_refusal, insurance_refusal
from blackjack.round.tournament import can_bet, in_play, points_refusal
from blackjack.round.tournament_orders import seat_refusal
from blackjack.state import Box, TableState
from games.commands import Actor
from games.errors import GameError
from games.players import FLOOR_PREFIX

_Possible = Callable[[TableState, Actor], bool]

# Which player a command names is its content: someone the actor may act for will do (a
# player himself; for staff, any floor player, who comes to a live table with his chips).
_SOMEONE = ("", FLOOR_PREFIX + "someone")


def _for_someone(s: TableState, actor: Actor) -> bool:
    return any(owner_refusal(s, p, actor) is None for p in _SOMEONE)


def _for_any(s: TableState, actor: Actor, players: list[str]) -> bool:
    return any(owner_refusal(s, p, actor) is None for p in players)


def _cut(s: TableState, actor: Actor) -> bool:
    # Where he cuts is the command's content: the point drawn by the server (None), or his own.
    return any(cut_refusal(s, actor, at) is None for at in (None, s.profile.cut_margin))


def _offers(s: TableState, actor: Actor, answer: Callable[[TableState, Box, str], GameError | None]) -> bool:
    """An open offer the actor answers for its player, which his box (and he) may take so."""
    boxes = {b.number: b for b in s.boxes}
    return any(
        owner_refusal(s, o.player, actor) is None and answer(s, boxes[o.box], o.player) is None for o in s.offers
    )


def _insurable(s: TableState, box: Box, player: str) -> GameError | None:
    # At a tournament table he insures from his points (at least 1 of them).
    return insurance_refusal(s, box) or points_refusal(s, player, 1)


def _turn(s: TableState, actor: Actor, cmd_type: type[Decision]) -> bool:
    """The decision on the hand whose turn it is."""
    if decision_refusal(s) is not None or s.turn_box >= len(s.boxes):
        return False
    return turn_refusal(s, cmd_type, actor, s.boxes[s.turn_box], s.turn_hand) is None


def _behind(s: TableState, actor: Actor, action: Literal["double", "split"]) -> bool:
    return behind_refusal(s, action) is None and any(behind_player_refusal(s, actor, p) is None for p in s.behind)


POSSIBLE: dict[type[C.Command], _Possible] = {
    C.Shuffle: lambda s, a: shuffle_refusal(s, []) is None,  # the order is its content (none at a live table)
    C.Cut: _cut,
    C.PassCut: lambda s, a: entitled_refusal(s, a) is None,
    C.CutCardOut: lambda s, a: cut_card_refusal(s) is None,
    C.Sit: lambda s, a: any(sit_refusal(s, a, n) is None for n in range(1, BOXES + 1)),
    C.Leave: lambda s, a: leave_refusal(s, a) is None,
    C.ReleaseSeat: lambda s, a: any(release_refusal(s, n) is None for n in range(1, BOXES + 1)),
    C.PlaceBet: lambda s, a: can_bet(s, a) if s.tournament_table else _for_someone(s, a),
    C.WithdrawBet: lambda s, a: _for_any(s, a, [b.player for b in s.bets]),
    C.PlaceSideBet: lambda s, a: offers_side_bets(s.profile) and _for_any(s, a, [b.player for b in s.bets]),
    C.WithdrawSideBet: lambda s, a: _for_any(s, a, [b.player for b in s.side_bets]),
    C.CloseBets: lambda s, a: close_bets_refusal(s) is None,
    C.Card: lambda s, a: card_refusal(s) is None,
    C.Insure: lambda s, a: _offers(s, a, _insurable),
    C.EvenMoney: lambda s, a: _offers(s, a, lambda s, b, _p: even_money_refusal(s, b)),
    # A time-out declines every offer still open (``round.offers.decline``).
    C.DeclineOffer: lambda s, a: a.role == "system" or _offers(s, a, lambda _s, _b, _p: None),
    C.Hit: lambda s, a: _turn(s, a, C.Hit),
    C.Stand: lambda s, a: _turn(s, a, C.Stand),
    C.Double: lambda s, a: _turn(s, a, C.Double),
    C.Split: lambda s, a: _turn(s, a, C.Split),
    C.BehindDouble: lambda s, a: _behind(s, a, "double"),
    C.BehindSplit: lambda s, a: _behind(s, a, "split"),
    C.BurnCard: lambda s, a: card_left(s) and burn_refusal(s) is None,
    C.ExposeCard: lambda s, a: card_left(s) and expose_refusal(s) is None,
    # A tournament's orders: what they say is their content; an expulsion needs someone in.
    C.TournamentSeat: lambda s, a: seat_refusal(s, None) is None,
    C.TournamentPause: lambda s, a: in_play(s) is not None,
    C.TournamentExpel: lambda s, a: bool((t := in_play(s)) and t.stacks),
    C.TournamentEnd: lambda s, a: in_play(s) is not None,
}


def legal_commands(s: TableState, actor: Actor) -> list[str]:
    """The ``type`` tags of the commands ``actor`` may send now, in the union's order."""
    out = []
    for cmd_type in get_args(C.Command):
        if refusal(s, cmd_type, actor) is not None:
            continue
        possible = POSSIBLE.get(cmd_type)
        if possible is None or possible(s, actor):
            out.append(str(cmd_type.__struct_config__.tag))
    return out
