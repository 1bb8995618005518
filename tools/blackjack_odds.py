"""Exact returns of Lugano's side bets for a profile's shoe, from the engine's own pay
tables and classification functions (``sidebets``, ``jackpot``), never typed in.

* Perfect Pairs, 21+3 and Blazing 7s: every ordered draw of the box's two cards and the
  dealer's up card from the full shoe (``decks`` of each of the 52 cards), weighted by
  how many ways the shoe deals it, classified by the functions the table settles with.
* Push 22: the dealer's final total drawn card by card from the shoe's composition
  (without replacement), standing or hitting soft 17 as the profile says.
* Blazing 7s: the return is linear in the two meters: ``base + minor_coef * minor +
  major_coef * major`` per unit staked, for a bet alone at its table (each other
  Blazing 7s bet at the table adds its expected envy bonus, reported apart).

Returns are "per unit staked": what comes back (stake returned plus winnings) divided by
the stake; 1 - return is the house edge. All values are ``Fraction``s.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import Any

import msgspec

from blackjack.jackpot import LEVELS, Blazing7s, blazing_line
from blackjack.sidebets import (
    PP_LINES,
    T3_LINES,
    PerfectPairs,
    Push22,
    TwentyOnePlusThree,
    pays,
    perfect_pairs_line,
    twenty_one_plus_three_line,
)
from games.cards import full_shoe


class LineOdds(msgspec.Struct):
    line: str
    pays: int  # to one (Blazing 7s: the amount paid, minor units; jackpots 0)
    probability: Fraction


class BetOdds(msgspec.Struct):
    bet: str
    lines: list[LineOdds]
    rtp: Fraction  # per unit staked


def shoe_counts(decks: int) -> list[int]:
    """How many of each card int the shoe holds: ``decks`` of every one."""
    return [decks] * 52


def _pairs(counts: list[int]) -> dict[tuple[int, int], int]:
    """Ordered two-card draws by card int and the number of ways each is dealt."""
    out = {}
    for a in range(52):
        na = counts[a]
        if not na:
            continue
        for b in range(52):
            nb = counts[b] - (a == b)
            if nb > 0:
                out[(a, b)] = na * nb
    return out


def perfect_pairs_odds(decks: int, table: PerfectPairs) -> BetOdds:
    counts = shoe_counts(decks)
    n = sum(counts)
    ways = dict.fromkeys(PP_LINES, 0)
    for (a, b), w in _pairs(counts).items():
        line = perfect_pairs_line(a, b)
        if line:
            ways[line] += w
    total = n * (n - 1)
    lines = [LineOdds(ln, pays(table, ln), Fraction(ways[ln], total)) for ln in PP_LINES]
    return BetOdds("perfect pairs", lines, sum((ln.probability * (1 + ln.pays) for ln in lines), Fraction(0)))


def _triples(counts: list[int], classify: Any) -> tuple[dict[str, int], int]:
    """Ways each class of (box card, box card, up card) is dealt, over every ordered draw."""
    n = sum(counts)
    ways: dict[str, int] = {}
    pairs = _pairs(counts)
    for (a, b), w in pairs.items():
        for u in range(52):
            nu = counts[u] - (u == a) - (u == b)
            if nu > 0:
                k = classify(a, b, u)
                if k:
                    ways[k] = ways.get(k, 0) + w * nu
    return ways, n * (n - 1) * (n - 2)


def twenty_one_plus_three_odds(decks: int, table: TwentyOnePlusThree) -> BetOdds:
    ways, total = _triples(shoe_counts(decks), twenty_one_plus_three_line)
    lines = [LineOdds(ln, pays(table, ln), Fraction(ways.get(ln, 0), total)) for ln in T3_LINES]
    return BetOdds("21+3", lines, sum((ln.probability * (1 + ln.pays) for ln in lines), Fraction(0)))


# -- the dealer -----------------------------------------------------------------------------


def dealer_finals(decks: int, hits_soft_17: bool) -> dict[str, Fraction]:
    """Exact distribution of the dealer's final hand drawn from a full shoe: "blackjack",
    17..21, 22 and "23+" (other busts)."""
    # Cards by blackjack value 1..10 (tens, jacks, queens and kings are one value).
    start = [0] * 11
    for c in full_shoe(decks):
        start[min(c % 13 + 1, 10)] += 1
    n0 = sum(start)

    @cache
    def walk(drawn: tuple[int, ...]) -> tuple[tuple[str, Fraction], ...]:
        cards = [v for v in range(1, 11) for _ in range(drawn[v])]
        ncards = len(cards)
        hard = sum(cards)
        total = hard + 10 if 1 in cards and hard <= 11 else hard
        soft = total != hard
        if ncards >= 2:
            if ncards == 2 and total == 21:
                return (("blackjack", Fraction(1)),)
            if total > 21:
                return (("22" if total == 22 else "23+", Fraction(1)),)
            if total >= 17 and not (hits_soft_17 and soft and total == 17):
                return ((str(total), Fraction(1)),)
        left = n0 - ncards
        out: dict[str, Fraction] = {}
        for v in range(1, 11):
            k = start[v] - drawn[v]
            if k <= 0:
                continue
            nxt = list(drawn)
            nxt[v] += 1
            for key, q in walk(tuple(nxt)):
                out[key] = out.get(key, Fraction(0)) + Fraction(k, left) * q
        return tuple(out.items())

    dist = dict(walk((0,) * 11))
    order = ["blackjack", "17", "18", "19", "20", "21", "22", "23+"]
    return {k: dist.get(k, Fraction(0)) for k in order}


def push_22_odds(decks: int, hits_soft_17: bool, table: Push22) -> BetOdds:
    p22 = dealer_finals(decks, hits_soft_17)["22"]
    return BetOdds("push 22", [LineOdds("dealer 22", table.pays, p22)], p22 * (1 + table.pays))


# -- Blazing 7s -----------------------------------------------------------------------------


class BlazingOdds(msgspec.Struct):
    lines: list[LineOdds]  # pays: minor units (0 for the jackpots)
    base: Fraction  # return per unit staked from the fixed pays
    minor_coef: Fraction  # return per unit staked per minor unit on the minor meter
    major_coef: Fraction
    envy_per_other_bet: Fraction  # expected envy bonus (per unit staked) from each other bet
    stake: int

    def rtp(self, minor: int, major: int, others: int = 0) -> Fraction:
        """Return per unit staked with the meters at ``minor`` and ``major`` (minor units)
        and ``others`` other Blazing 7s bets at the table."""
        return self.base + self.minor_coef * minor + self.major_coef * major + others * self.envy_per_other_bet


def blazing_odds(decks: int, table: Blazing7s) -> BlazingOdds:
    ways, total = _triples(shoe_counts(decks), blazing_line)
    lines_in_order = ("major", "minor", "three_sevens", "two_sevens", "one_seven")
    probs = {ln: Fraction(ways.get(ln, 0), total) for ln in lines_in_order}
    lines = [LineOdds(ln, table.fixed(ln), probs[ln]) for ln in probs]
    stake = table.stake
    base = sum((ln.probability * ln.pays for ln in lines), Fraction(0)) / stake
    return BlazingOdds(
        lines=lines,
        base=base,
        minor_coef=probs["minor"] / stake,
        major_coef=probs["major"] / stake,
        envy_per_other_bet=_envy(decks, table) / stake,
        stake=stake,
    )


def _envy(decks: int, table: Blazing7s) -> Fraction:
    """Expected envy bonus a bet receives from one other Blazing 7s bet at its table:
    five cards (mine, the other box's, the up card) drawn from the shoe, exactly. Only
    sevens matter, so the shoe is the four sevens (``decks`` each, by suit) and the rest."""
    sevens = [6, 19, 32, 45]  # 7 of spades, hearts, diamonds, clubs
    other = 0  # any card that is not a seven (the ace of spades stands for all of them)
    kinds = sevens + [other]
    n = decks * 52
    start = {c: decks for c in sevens}
    start[other] = n - 4 * decks
    total = Fraction(0)

    def deal(i: int, hand: list[int], left: dict[int, int], p: Fraction) -> None:
        nonlocal total
        if i == 5:
            mine = blazing_line(hand[0], hand[1], hand[4])
            theirs = blazing_line(hand[2], hand[3], hand[4])
            if theirs in LEVELS and theirs != mine:
                total += p * table.envy(theirs)
            return
        rest = sum(left.values())
        for k in kinds:
            if left[k]:
                q = Fraction(left[k], rest)
                left[k] -= 1
                hand.append(k)
                deal(i + 1, hand, left, p * q)
                hand.pop()
                left[k] += 1

    deal(0, [], dict(start), Fraction(1))
    return total


# -- all of a profile -----------------------------------------------------------------------


class SideBetReport(msgspec.Struct):
    profile: str
    decks: int
    perfect_pairs: BetOdds | None
    twenty_one_plus_three: BetOdds | None
    push_22: BetOdds | None
    blazing_7s: BlazingOdds | None
    dealer: dict[str, Fraction]


def side_bet_report(profile: Any) -> SideBetReport:
    """Every side bet the profile offers (a bet whose pay table is ``None`` is not offered)."""
    d = profile.decks
    pp = getattr(profile, "perfect_pairs", None)
    t3 = getattr(profile, "twenty_one_plus_three", None)
    p22 = getattr(profile, "push_22", None)
    b7 = getattr(profile, "blazing_7s", None)
    return SideBetReport(
        profile=profile.name,
        decks=d,
        perfect_pairs=perfect_pairs_odds(d, pp) if pp else None,
        twenty_one_plus_three=twenty_one_plus_three_odds(d, t3) if t3 else None,
        push_22=push_22_odds(d, profile.dealer_hits_soft_17, p22) if p22 else None,
        blazing_7s=blazing_odds(d, b7) if b7 else None,
        dealer=dealer_finals(d, profile.dealer_hits_soft_17),
    )
