"""Staking: a request for bets as it meets the table's minimum and maxima.

``plan`` checks every stake of a request against the layout, the minimum and the maxima
(Art. 5-8) and works out what each puts where; it changes nothing, so a refused request
leaves the table as it was. ``apply`` then places the plans: the wagers and their events,
and the stakes kept for "same again" (Art. 18). ``request`` does one or the other by the
phase: once the ball runs, the request waits for the chef de table as a late bet (Art. 9).

A maximum counts a player's chips on the spot and his società's, prisoners included
(Art. 3, 6-7). They are read from the table's derived index, which the table keeps and
passes in: ``totals`` (chips per (player, spot)), which ``apply`` keeps up to date, and
``group`` (each member's società). ``check_move`` and ``check_societa`` hold a moved
prisoner and a new società to the same maxima. These are plain functions over the state:
the table (``engine.RouletteTable``) calls them and they never call back into it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

import msgspec

from games.commands import Actor
from games.errors import GameError
from games.money import currency
from games.validation import ENTERED_MAX_FACTOR
from games.wagers import WagerPlaced

from . import commands as C
from . import events as E
from .announced import parse_announced
from .layout import KIND_BY_NAME, parse_spot
from .phases import Phase
from .state import Bet, LateBet, RouletteState, Stake

Events = list[E.Event]
Totals = defaultdict[tuple[str, str], int]  # chips per (player, spot)
Group = dict[str, list[str]]  # each member of a società: its members


class _Piece(NamedTuple):
    spot: str
    units: int  # 0 for a direct bet
    amount: int
    excess: int
    maximum: int


class _Plan(NamedTuple):
    stake: Stake
    pieces: list[_Piece]


def fmt(state: RouletteState, amount: int) -> str:
    """``amount`` in the table's currency."""
    return currency(state.settings.currency).format(amount)


def next_id(state: RouletteState, prefix: str) -> str:
    state.seq += 1
    return f"s{state.spin}-{prefix}{state.seq}"


def members_of(group: Group, player: str) -> list[str]:
    return group.get(player, [player])


def held(totals: Totals, group: Group, player: str, spot: str) -> int:
    """Chips on ``spot`` that count toward ``player``'s maximum: theirs and their
    società's, prisoners included (Art. 3, 6-7)."""
    return sum(totals.get((m, spot), 0) for m in members_of(group, player))


def plan(
    state: RouletteState, totals: Totals, group: Group, by: Actor, player: str, stakes: list[Stake]
) -> list[_Plan]:
    """Validate stakes against the layout, the minimum and the maxima (Art. 5-8)."""
    st = state.settings
    staff = by.role != "player"
    members = members_of(group, player)
    added: defaultdict[str, int] = defaultdict(int)
    plans: list[_Plan] = []
    for stake in stakes:
        C.check_amount(stake.amount)
        if stake.announced:
            ann = parse_announced(stake.spot)
            if stake.amount < st.minimum:
                raise GameError(
                    "below_minimum",
                    f"Each piece of {ann.name} must be at least the table minimum of "
                    f"{fmt(state, st.minimum)}: announce a unit of at least that.",
                    minimum=st.minimum,
                )
            raw = [(p.spot, p.units, p.units * stake.amount) for p in ann.pieces]
            canonical = Stake(ann.name, stake.amount, True)
        else:
            combo = parse_spot(stake.spot)
            if stake.amount < st.minimum:
                raise GameError(
                    "below_minimum",
                    f"The table minimum is {fmt(state, st.minimum)}.",
                    minimum=st.minimum,
                )
            raw = [(combo.name, 0, stake.amount)]
            canonical = Stake(combo.name, stake.amount, False)
        pieces: list[_Piece] = []
        for spot, units, amount in raw:
            maximum = st.maximum(KIND_BY_NAME[spot])
            have = added[spot] + held(totals, group, player, spot)
            room = max(0, maximum - have)
            excess = 0
            limit = ENTERED_MAX_FACTOR * maximum
            if staff and amount > limit:
                raise GameError(
                    "above_entry_limit",
                    f"{fmt(state, amount)} on {spot} is more than {ENTERED_MAX_FACTOR} times its maximum "
                    f"of {fmt(state, maximum)}: enter at most {fmt(state, limit)} (a pile above the maximum "
                    "plays on the maximum and the excess is returned, Art. 8).",
                    spot=spot, maximum=maximum, limit=limit,
                )  # fmt: skip
            if amount > room:
                if not staff:
                    raise _over_max(state, canonical, spot, units, amount, room, maximum, members)
                excess = amount - room  # Art. 8: plays on the maximum, excess returned
            added[spot] += amount
            pieces.append(_Piece(spot, units, amount, excess, maximum))
        plans.append(_Plan(canonical, pieces))
    return plans


def _over_max(
    state: RouletteState,
    stake: Stake,
    spot: str,
    units: int,
    amount: int,
    room: int,
    maximum: int,
    members: list[str],
) -> GameError:
    who = "you and your società have" if len(members) > 1 else "you have"
    if stake.announced:
        msg = (
            f"{stake.spot} puts {fmt(state, amount)} on {spot}, where {who} "
            f"{fmt(state, room)} left under the maximum of {fmt(state, maximum)}."
        )
    else:
        msg = (
            f"The maximum on {spot} is {fmt(state, maximum)} per player per spin; {who} {fmt(state, room)} left on it."
        )
    return GameError("over_maximum", msg, spot=spot, room=room, maximum=maximum, units=units)


def apply(state: RouletteState, totals: Totals, by: Actor, player: str, plans: list[_Plan]) -> Events:
    """Place planned stakes: nothing here refuses, ``plan`` has checked them."""
    s = state
    out: Events = []
    mine = s.placed.setdefault(player, [])
    for plan in plans:
        announce = next_id(s, "a") if plan.stake.announced else ""
        pieces: list[E.Piece] = []
        evs: Events = []
        for p in plan.pieces:
            wager = next_id(s, "w")
            s.bets.append(Bet(wager, player, p.spot, p.amount, s.spin, p.excess, by.id, announce))
            totals[(player, p.spot)] += p.amount
            pieces.append(E.Piece(p.spot, p.units, p.amount, wager))
            evs.append(WagerPlaced(wager, player, p.amount, p.spot))
            if p.excess:
                evs.append(E.OverMaximumEntered(wager, player, p.spot, p.maximum, p.excess, by.id))
        if announce:
            total = sum(p.amount for p in plan.pieces)
            out.append(E.AnnouncedBetPlaced(announce, player, plan.stake.spot, plan.stake.amount, total, pieces))
        out += evs
        mine.append(msgspec.structs.replace(plan.stake, ref=announce or pieces[0].wager))
    return out


def request(
    state: RouletteState, totals: Totals, group: Group, by: Actor, player: str, stakes: list[Stake], lead: Events
) -> Events:
    """Place now while bets are open; once the ball runs (at a live table: the phase
    table), the request waits for the chef de table (Art. 9)."""
    plans = plan(state, totals, group, by, player, stakes)
    if state.phase == Phase.LAUNCHED:
        late = LateBet(next_id(state, "l"), player, by, [p.stake for p in plans])
        state.late.append(late)
        return lead + [E.LateBetPending(late.late, player, late.stakes, by.id)]
    return lead + apply(state, totals, by, player, plans)


def check_move(state: RouletteState, totals: Totals, group: Group, bet: Bet, spot: str) -> None:
    """A prisoner moved to the simple chance ``spot`` counts toward its maximum there,
    with the chips the player and his società already have on it (Art. 3, 6-7); its
    excess is never in play (Art. 8)."""
    maximum = state.settings.maximum("simple")
    have = held(totals, group, bet.player, spot)
    if have + bet.amount - bet.excess > maximum:
        room = max(0, maximum - have)
        raise GameError(
            "over_maximum",
            f"Moving it would put you over the maximum of {fmt(state, maximum)} on "
            f"{spot}; {fmt(state, room)} is left there.",
            spot=spot, room=room, maximum=maximum,
        )  # fmt: skip


def check_societa(state: RouletteState, members: list[str]) -> None:
    """A società plays to one maximum per spot (Art. 7): players whose chips together
    are already over it cannot register as one."""
    together: defaultdict[str, int] = defaultdict(int)
    for b in state.bets:
        if b.player in members:
            together[b.spot] += b.amount - b.excess
    for spot, amount in together.items():
        maximum = state.settings.maximum(KIND_BY_NAME[spot])
        if amount > maximum:
            raise GameError(
                "societa_over_maximum",
                f"Together these players already have {fmt(state, amount)} on {spot}, over the "
                f"maximum of {fmt(state, maximum)} (Art. 7).",
                spot=spot,
            )
