"""What blackjack cards are worth: a card's value and a hand's best total (cards are the
ints of ``games.cards``)."""

from __future__ import annotations

# Blackjack value of each card int: ace counts 1 here, hand_value adds the 10.
VALUE: tuple[int, ...] = tuple(min(r + 1, 10) for _s in range(4) for r in range(13))


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
