"""Cards as small ints and hand values.

A card is an int 0..51: ``rank = card % 13`` (0 = ace, 1..8 = two..nine, 9 = ten,
10..12 = jack, queen, king) and ``suit = card // 13`` (spades, hearts, diamonds, clubs).
A multi-deck shoe holds each int ``decks`` times; its position in the shoe, not the int,
tells two equal cards apart. Ints keep the simulator's hot path cheap.
"""

from __future__ import annotations

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
# Hearts and diamonds are red (Lugano's side bets look at colours).
RED_SUITS = frozenset((1, 2))

# Blackjack value of each card int: ace counts 1 here, hand_value adds the 10.
VALUE: tuple[int, ...] = tuple(min(r + 1, 10) for _s in range(4) for r in range(13))


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


def hand_value(cards: list[int]) -> tuple[int, bool]:
    """Best total and whether it is soft (an ace counted as 11)."""
    total = 0
    ace = False
    for c in cards:
        v = VALUE[c]
        total += v
        if v == 1:
            ace = True
    if ace and total <= 11:
        return total + 10, True
    return total, False


def is_blackjack(cards: list[int]) -> bool:
    """21 with two cards (the caller decides whether the hand may be a blackjack at all)."""
    return len(cards) == 2 and VALUE[cards[0]] + VALUE[cards[1]] == 11 and (
        VALUE[cards[0]] == 1 or VALUE[cards[1]] == 1
    )


def full_shoe(decks: int) -> list[int]:
    """Every card of ``decks`` packs, in factory order."""
    return [c for _d in range(decks) for c in range(52)]
