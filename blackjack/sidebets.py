"""Lugano's side bets on a box: Perfect Pairs, 21+3 and Push 22.

The pay tables are profile data (``Profile.perfect_pairs``, ``twenty_one_plus_three``,
``push_22``; ``None`` = not offered) so an operator can change them; pays are "to one"
and the stake comes back with a win. Classification works on the card ints of
``games.cards`` and is shared by the table's settlement and the exact odds report, so the
report can never disagree with what the table pays. (Placing them at the table:
``blackjack.round.sidebets``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from blackjack.hands import hand_value
from games.cards import is_red, rank, suit
from games.wagers import WagerSettled

if TYPE_CHECKING:  # the state holds the profile, which holds these pay tables
    from blackjack.state import Box, TableState, Wager


class PerfectPairs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The box's first two cards: a pair of one rank."""

    mixed: int = 6  # different colours
    coloured: int = 12  # same colour, different suits
    perfect: int = 26  # same suit
    min_bet: int = 500
    max_bet: int = 10000


class TwentyOnePlusThree(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The box's two cards and the dealer's up card as a three-card poker hand."""

    straight_flush: int = 30
    three_of_a_kind: int = 20
    straight: int = 10
    flush: int = 5
    min_bet: int = 500
    max_bet: int = 10000


class Push22(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The dealer's final hand is exactly 22."""

    pays: int = 11
    min_bet: int = 500
    max_bet: int = 10000


# -- classification -------------------------------------------------------------------------

PP_LINES = ("perfect", "coloured", "mixed")
T3_LINES = ("straight_flush", "three_of_a_kind", "straight", "flush")


def perfect_pairs_line(c1: int, c2: int) -> str:
    """"perfect", "coloured", "mixed" or "" (no pair). A pair is two cards of one rank
    (a king and a queen are both worth ten but are no pair)."""
    if rank(c1) != rank(c2):
        return ""
    if suit(c1) == suit(c2):
        return "perfect"
    if is_red(c1) == is_red(c2):
        return "coloured"
    return "mixed"


def _is_straight(ranks: list[int]) -> bool:
    """Three consecutive ranks; the ace is low (A-2-3) or high (Q-K-A), never both (K-A-2)."""
    r = sorted(ranks)
    if r[0] + 1 == r[1] and r[1] + 1 == r[2]:
        return True
    return r == [0, 11, 12]  # A, Q, K


def twenty_one_plus_three_line(c1: int, c2: int, up: int) -> str:
    """The best line of the three cards, or "". Only the best pays: a suited three of a
    kind (possible in a multi-deck shoe) is a three of a kind, not a straight flush."""
    ranks = [rank(c1), rank(c2), rank(up)]
    flush = suit(c1) == suit(c2) == suit(up)
    if ranks[0] == ranks[1] == ranks[2]:
        return "three_of_a_kind"
    straight = _is_straight(ranks)
    if straight and flush:
        return "straight_flush"
    if straight:
        return "straight"
    if flush:
        return "flush"
    return ""


def pays(table: PerfectPairs | TwentyOnePlusThree | None, line: str) -> int:
    """What ``line`` pays to one under ``table`` (0 for no line or no table)."""
    if not line or table is None:
        return 0
    to_one: int = getattr(table, line)
    return to_one


# -- validation -----------------------------------------------------------------------------


def check_tables(pp: PerfectPairs | None, t3: TwentyOnePlusThree | None, p22: Push22 | None) -> str:
    """The reason a side-bet pay table is unusable, or "" if all are sound."""
    for name, t, lines in (
        ("perfect_pairs", pp, PP_LINES),
        ("twenty_one_plus_three", t3, T3_LINES),
        ("push_22", p22, ("pays",)),
    ):
        if t is None:
            continue
        if any(getattr(t, ln) <= 0 for ln in lines):
            return f"{name}: every line must pay a positive amount to one"
        if not 0 < t.min_bet <= t.max_bet:
            return f"{name}: the minimum must be positive and at most the maximum"
    return ""


# -- settlement (``settlement.AFTER_DEAL`` / ``ROUND_END``: f(wager, box, state)) ------------


def _settled(w: Wager, line: str, to_one: int, what: str) -> WagerSettled:
    if to_one:
        return WagerSettled(w.id, w.player, w.amount, w.amount, w.amount * to_one, f"{what}: {line.replace('_', ' ')}")
    return WagerSettled(w.id, w.player, w.amount, 0, 0, f"{what}: no win")


def settle_perfect_pairs(w: Wager, box: Box, s: TableState) -> WagerSettled:
    cards = box.hands[0].cards
    line = perfect_pairs_line(cards[0], cards[1])
    return _settled(w, line, pays(s.profile.perfect_pairs, line), "perfect pairs")


def settle_twenty_one_plus_three(w: Wager, box: Box, s: TableState) -> WagerSettled:
    cards = box.hands[0].cards
    line = twenty_one_plus_three_line(cards[0], cards[1], s.dealer[0])
    return _settled(w, line, pays(s.profile.twenty_one_plus_three, line), "21+3")


def settle_push_22(w: Wager, box: Box, s: TableState) -> WagerSettled:
    total, _soft = hand_value(s.dealer)
    line = "dealer 22" if total == 22 else ""
    p22 = s.profile.push_22
    return _settled(w, line, p22.pays if line and p22 is not None else 0, "push 22")
