"""What an actor may send now: the command tags a croupier console or a player's page
offers, so no client re-derives the rules.

A command is legal when ``phases`` lets the actor send it in this phase at this table
(``phases.refusal``) and the round gives it something to act on: his seat, his bet, his
offer, his turn, a card due. A legal command may still be refused for what it says (an
amount over the maximum, a box already taken); an illegal one is always refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

from blackjack import commands as C
from blackjack.hands import VALUE
from blackjack.phases import Phase, refusal
from blackjack.profiles import BOXES
from blackjack.round.decisions import can_double, can_split
from blackjack.state import Box, Hand, TableState
from games.commands import Actor
from games.players import is_floor

_Possible = Callable[[TableState, Actor], bool]


def _acts_for(s: TableState, actor: Actor, player: str) -> bool:
    """May ``actor`` move ``player``'s chips or decide for him (``round.common.owner``)?"""
    if actor.role == "player":
        return player == actor.id
    return actor.is_staff and s.live and is_floor(player)


def _for_anyone(s: TableState, actor: Actor, players: list[str]) -> bool:
    return any(_acts_for(s, actor, p) for p in players)


def _cut_offered(s: TableState, actor: Actor) -> bool:
    """The entitled player's cut or pass (``round.shoe_commands._cut_for``)."""
    who = s.cut_entitled
    return bool(who) and (actor.role == "system" or _acts_for(s, actor, who))


def _cut(s: TableState, actor: Actor) -> bool:
    if not s.cut_entitled:
        return actor.role != "player"  # the house cuts
    # A time-out may cut only where nobody is left to pass the cut to.
    return _cut_offered(s, actor) and not (actor.role == "system" and s.cut_chain)


def _sit(s: TableState, actor: Actor) -> bool:
    return actor.id not in s.seats and any(
        not s.seats[n] and not any(b.box == n and b.player != actor.id for b in s.bets) for n in range(1, BOXES + 1)
    )


def _offers(s: TableState, actor: Actor, what: Callable[[Box], bool]) -> bool:
    boxes = {b.number: b for b in s.boxes}
    return any(_acts_for(s, actor, o.player) and what(boxes[o.box]) for o in s.offers)


def _insurable(s: TableState, box: Box) -> bool:
    return VALUE[s.dealer[0]] == 1 and (not box.hands[0].blackjack or s.profile.blackjack_insurable)


def _even_money(s: TableState, box: Box) -> bool:
    return box.hands[0].blackjack and VALUE[s.dealer[0]] in s.profile.even_money_against


def _turn(s: TableState, actor: Actor, may: Callable[[Box, Hand], bool], timeout: bool = False) -> bool:
    """A decision is awaited from this actor on the hand whose turn it is (``timeout``:
    what a time-out does, the only decision the server takes)."""
    if s.deal_queue or s.behind or s.turn_box >= len(s.boxes):
        return False
    if actor.role == "system":
        return timeout
    box = s.boxes[s.turn_box]
    return _acts_for(s, actor, box.holder) and may(box, box.hands[s.turn_hand])


def _behind(s: TableState, actor: Actor, action: str) -> bool:
    return s.behind_action == action and bool(s.behind) and (
        actor.role == "system" or _for_anyone(s, actor, s.behind))


def _side_bets_offered(s: TableState) -> bool:
    p = s.profile
    return any(t is not None for t in (p.perfect_pairs, p.twenty_one_plus_three, p.push_22, p.blazing_7s))


def _shoe_left(s: TableState) -> bool:
    return s.live or s.pos < len(s.order)


POSSIBLE: dict[type[C.Command], _Possible] = {
    C.Shuffle: lambda s, a: not (s.live and s.phase == Phase.RESHUFFLE),
    C.Cut: _cut,
    C.PassCut: _cut_offered,
    C.CutCardOut: lambda s, a: not s.last_round,
    C.Sit: _sit,
    C.Leave: lambda s, a: a.id in s.seats,
    C.ReleaseSeat: lambda s, a: any(s.seats[1:]),
    C.CloseTable: lambda s, a: a.role == "director",  # a chef needs the director's recorded leave
    C.PlaceBet: lambda s, a: a.role == "player" or (a.is_staff and s.live),
    C.WithdrawBet: lambda s, a: _for_anyone(s, a, [b.player for b in s.bets]),
    C.PlaceSideBet: lambda s, a: _side_bets_offered(s) and _for_anyone(s, a, [b.player for b in s.bets]),
    C.WithdrawSideBet: lambda s, a: _for_anyone(s, a, [b.player for b in s.side_bets]),
    C.CloseBets: lambda s, a: bool(s.bets),
    C.Card: lambda s, a: bool(s.deal_queue),
    C.Insure: lambda s, a: _offers(s, a, lambda b: _insurable(s, b)),
    C.EvenMoney: lambda s, a: _offers(s, a, lambda b: _even_money(s, b)),
    C.DeclineOffer: lambda s, a: a.role == "system" or _offers(s, a, lambda b: True),
    C.Hit: lambda s, a: _turn(s, a, lambda b, h: not h.split_aces),
    C.Stand: lambda s, a: _turn(s, a, lambda b, h: True, timeout=True),
    C.Double: lambda s, a: _turn(s, a, lambda b, h: can_double(s.profile, h)),
    C.Split: lambda s, a: _turn(s, a, lambda b, h: can_split(s.profile, b, h)),
    C.BehindDouble: lambda s, a: _behind(s, a, "double"),
    C.BehindSplit: lambda s, a: _behind(s, a, "split"),
    C.BurnCard: lambda s, a: _shoe_left(s) and (s.profile.misdrawn_card != "offer" or s.phase == Phase.PLAY),
    C.ExposeCard: lambda s, a: _shoe_left(s) and s.exposed < 0,
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
