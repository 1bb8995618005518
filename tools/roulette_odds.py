"""Exact return to player of every combination and announced bet.

Computed, never typed in: each bet goes through ``settlement.settle`` for all 37 equally
likely numbers. A bet the zero sends en prison is worth V of its stake, found by settling
the prisoner over the 37 numbers too: V = (returns when decided) / (37 - second zeros
where it stays), the closed form of the chain under ``prison_on_zero="stay"``.
RTP = expected amount back (stake included) / stake, over the bet's whole life.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from roulette.announced import Announced, every_announced
from roulette.layout import COMBINATIONS, KIND_LABELS, NUMBERS
from roulette.settlement import FINAL, PRISON, PRISON_STAYS, settle
from roulette.state import Bet

STAKE = 1000  # even, so partage halves exactly; the result does not depend on it
PLAYER = "p"
VARIANTS = {
    "lose": "en prison, 2nd zero loses",
    "stay": "en prison, 2nd zero stays",
    "partage": "partage on zero",
}


class Row(NamedTuple):
    group: str
    name: str
    pays: str
    rtp: Fraction


def _bet(spot: str, amount: int, prison: bool = False) -> Bet:
    return Bet(f"w-{spot}", PLAYER, spot, amount, 1, prison=prison)


def prisoner_value(spot: str, policy: str) -> Fraction:
    """Expected fraction of its stake an imprisoned bet on ``spot`` brings back."""
    prisoner = _bet(spot, STAKE, prison=True)
    back, stays = 0, 0
    for n in NUMBERS:
        ((_, result, returned, won),) = settle([prisoner], n, policy)
        if result == PRISON_STAYS:
            stays += 1
        else:
            back += returned + won
    return Fraction(back, (len(NUMBERS) - stays) * STAKE)


def expected_return(bets: Sequence[Bet], policy: str = "lose", partage: bool = False) -> Fraction:
    """Expected amount back (stakes included) from ``bets`` over one spin and, for any
    that go en prison, the rest of their life."""
    players = {PLAYER} if partage else ()
    total = Fraction(0)
    for n in NUMBERS:
        for bet, result, returned, won in settle(bets, n, policy, players):
            if result in FINAL:
                total += returned + won
            elif result == PRISON:
                total += bet.amount * prisoner_value(bet.spot, policy)
            else:  # a fresh bet never starts en prison
                raise AssertionError(result)
    return total / len(NUMBERS)


def rtp(bets: Sequence[Bet], policy: str = "lose", partage: bool = False) -> Fraction:
    return expected_return(bets, policy, partage) / sum(b.amount for b in bets)


def combination_rows() -> list[Row]:
    rows: list[Row] = []
    for c in COMBINATIONS:
        bet = [_bet(c.name, STAKE)]
        pays = f"{c.pays}:1"
        if c.simple:
            for variant, label in VARIANTS.items():
                policy = "lose" if variant == "partage" else variant
                value = rtp(bet, policy, partage=variant == "partage")
                rows.append(Row(f"simple chance, {label}", c.name, pays, value))
        else:
            rows.append(Row(KIND_LABELS[c.kind], c.name, pays, rtp(bet)))
    return rows


def _announced_group(a: Announced) -> str:
    if a.name.endswith(" voisins"):
        each_side = int(a.name.split()[2])
        return f"n et {each_side} voisins ({2 * each_side + 1} pleins)"
    return a.name


def announced_rows() -> list[Row]:
    rows = []
    for a in every_announced():
        bets = [_bet(p.spot, p.units * STAKE) for p in a.pieces]
        # Pieces of one announcement never share a spot, so each is its own wager.
        rows.append(Row(_announced_group(a), a.name, f"{a.units} units", rtp(bets)))
    return rows


def percent(value: Fraction, places: int = 4) -> str:
    scaled = round(value * 100 * 10**places)
    whole, frac = divmod(abs(scaled), 10**places)
    return f"{'-' if scaled < 0 else ''}{whole}.{frac:0{places}d}"
