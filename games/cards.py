"""Playing cards as small ints, for any card game.

A card is an int 0..51: ``rank = card % 13`` (0 = ace, 1..8 = two..nine, 9 = ten,
10..12 = jack, queen, king) and ``suit = card // 13`` (spades, hearts, diamonds, clubs).
A multi-deck shoe holds each int ``decks`` times; its position in the shoe, not the int,
tells two equal cards apart. Ints keep a simulator's hot path cheap. What a card is worth
is each game's own rule (``blackjack.hands``).

>>> card_name(parse_card("10h")), rank(parse_card("KD")), is_red(parse_card("AD"))
('10H', 12, True)
"""

from __future__ import annotations

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
# Hearts and diamonds are red (Lugano's side bets look at colours).
RED_SUITS = frozenset((1, 2))


def is_red(card: int) -> bool:
    return card // 13 in RED_SUITS


def rank(card: int) -> int:
    return card % 13


def suit(card: int) -> int:
    return card // 13


def card_name(card: int) -> str:
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> int:
    """``"AS"``, ``"10h"``, ``"kd"`` -> card int. Raises ValueError if it is not a card."""
    t = text.strip().upper()
    r, s = t[:-1], t[-1:]
    if r == "T":
        r = "10"
    if r not in RANKS or s not in SUITS:
        raise ValueError(f"{text!r} is not a card")
    return SUITS.index(s) * 13 + RANKS.index(r)


def full_shoe(decks: int) -> list[int]:
    """Every card of ``decks`` packs, in factory order."""
    return [c for _d in range(decks) for c in range(52)]
